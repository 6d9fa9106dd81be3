/* run.c — the part of include/hir/hir.h that libhir_runtime implements: running a program
 * once on one rank (rank 0 of a world of one) with the CPU reference backend, on buffers the
 * caller owns. No MPI bootstrap is made: the CPU backend without one runs every
 * communication whose team is this rank alone, and hir_check_meshes refuses programs that
 * name other devices, so MPI is linked (through the runner) but never initialised. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_internal.h"
#include "dialect/hir.h"
#include "runner/backend/backend.h"
#include "runner/job/job.h"
#include "runner/cpu/cpu.h"
#include "runner/guard/guard.h"

#define MAX_AUTO 256

typedef struct run_ctx {
    hirc_program *h;
    hirc_diagnostics *diags;
    hir_backend *be;
    hir_interp *it;
    int n;                        /* inputs */
    hir_view *views;
    void **dev;
    int64_t *scalars;
    hir_run_binding *binds;       /* the caller's */
    int nbinds;
    /* extents spelled as a bare symbol, taken from the inputs' shapes */
    const hir_scalar *auto_s[MAX_AUTO];
    int64_t auto_v[MAX_AUTO];
    char auto_name[MAX_AUTO][64];
    int nauto;
} run_ctx;

static void ctx_free(run_ctx *c)
{
    for (int i = 0; i < c->n; i++)
        if (c->dev && c->dev[i])
            c->be->ops->free(c->be, c->dev[i]);
    if (c->it)
        hir_interp_destroy(c->it);
    if (c->be)
        c->be->ops->destroy(c->be);
    free(c->views);
    free(c->dev);
    free(c->scalars);
    free(c->binds);
}

static hirc_status fail(run_ctx *c, hirc_status st, const char *fmt, const char *a,
                        const char *b)
{
    return hirc__diags_error(c->diags, st, c->h->name, fmt, a, b);
}

/* The runner's error (the last one in e, which the caller then releases): one the interpreter
 * located at a statement becomes a located diagnostic (there is one rank, so its origin goes);
 * anything else one that names the program. */
static hirc_status fail_e(run_ctx *c, hirc_status st, hir_diag *e)
{
    const hir_diag_entry *x = e->last;
    const char *m = x ? x->msg : "failed without a message";
    if (!strncmp(m, "rank 0: ", 8))
        m += 8;
    hirc_status r;
    if (x && x->loc.src && x->loc.begin != HIR_LOC_WHOLE) {
        int line = 0, col = 0;
        hir_source_linecol((hir_source *)x->loc.src, x->loc.begin, &line, &col);
        r = hirc__diags_located(c->diags, st, c->h->name, line, col, m);
    } else {
        r = hirc__diags_error(c->diags, st, c->h->name, "%s", m);
    }
    hir_diag_fini(e);
    return r;
}

static void shape_str(char *buf, size_t n, int ndim, const int64_t *shape)
{
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int d = 0; d < ndim && k < n; d++)
        k += (size_t)snprintf(buf + k, n - k, "%s%lld", d ? ", " : "", (long long)shape[d]);
    if (k < n)
        snprintf(buf + k, n - k, "]");
}

/* Does a caller's buffer have this dtype and shape? Reports the first difference. */
static hirc_status check_buffer(run_ctx *c, const char *what, const char *name,
                                const hirc_tensor *b, hir_dtype want_dt, int ndim,
                                const int64_t *shape)
{
    hir_dtype dt;
    char msg[1024], ws[300], gs[300];
    int same_dt = !hirc__dtype_internal(b->dtype, &dt) &&
                  (dt == want_dt || (dt == HIR_DT_INT64 && want_dt == HIR_DT_INDEX) ||
                   (dt == HIR_DT_INDEX && want_dt == HIR_DT_INT64));
    if (!same_dt) {
        snprintf(msg, sizeof msg, "%s %s: the program needs dtype %s (%s), the buffer is %s",
                 what, name, hirc_dtype_name(hirc__dtype_public(want_dt)),
                 hir_dtype_name(want_dt), hirc_dtype_name(b->dtype));
        return fail(c, HIRC_ERR_MISMATCH, "%s%s", msg, "");
    }
    int same = b->ndim == ndim;
    for (int d = 0; same && d < ndim; d++)
        same = b->shape[d] == shape[d];
    if (!same) {
        shape_str(ws, sizeof ws, ndim, shape);
        if (b->ndim < 0 || b->ndim > HIRC_MAX_DIMS)
            snprintf(gs, sizeof gs, "of %d dimensions", b->ndim);
        else
            shape_str(gs, sizeof gs, b->ndim, b->shape);
        snprintf(msg, sizeof msg, "%s %s: the program needs shape %s, the buffer is %s", what,
                 name, ws, gs);
        return fail(c, HIRC_ERR_MISMATCH, "%s%s", msg, "");
    }
    /* the byte size must fit before any view is made of the shape: strides are products of
     * extents, so a zero extent does not make the others' product small */
    uint64_t bytes = hir_dtype_size(want_dt);
    for (int d = 0; d < ndim; d++)
        if (__builtin_mul_overflow(bytes, (uint64_t)(shape[d] ? shape[d] : 1), &bytes) ||
            bytes > (uint64_t)INT64_MAX)
            return fail(c, HIRC_ERR_MISMATCH, "%s %s: its size does not fit in 64 bits", what,
                        name);
    if (!b->data && what[0] == 'i')
        return fail(c, HIRC_ERR_INVALID_ARGUMENT, "input %s: NULL data%s", name, "");
    return HIRC_OK;
}

/* Bind the extents an input spells as a bare symbol to the caller's shape. A binding the
 * caller gave for the same symbol must say the same: neither wins silently (issue 31). */
static hirc_status auto_bind(run_ctx *c, const char *input, const hir_tensor *t,
                             const hirc_tensor *b)
{
    if (b->ndim != hirc__tensor_ndim(t))
        return HIRC_OK;   /* reported by check_buffer */
    int d = 0;
    for (int k = 0; k < t->shape.naxes; k++) {
        hir_shape_axis a;
        hir_shape_axis_get(t, k, &a);
        if (!a.dim)
            continue;
        const hir_scalar *s = a.extent;   /* the logical extent (X of a ceilDiv) */
        if (s && s->kind == HIR_SC_SYMBOL && !s->def && !a.device) {
            char sym[64];
            hirc__value_name(&s->head, sym, sizeof sym);
            for (int j = 0; j < c->nbinds; j++)
                if (!strcmp(c->binds[j].name, sym) && c->binds[j].value != b->shape[d]) {
                    char msg[400];
                    snprintf(msg, sizeof msg, "input %s: binding '%s' is %" PRId64 ", but the "
                             "buffer's shape gives %" PRId64 " (axis %d); give the same value "
                             "or leave the binding out", input, sym, c->binds[j].value,
                             b->shape[d], d);
                    return fail(c, HIRC_ERR_MISMATCH, "%s%s", msg, "");
                }
            int known = 0;
            for (int j = 0; j < c->nauto; j++)
                known |= c->auto_s[j] == s;
            if (!known && c->nauto < MAX_AUTO) {
                c->auto_s[c->nauto] = s;
                c->auto_v[c->nauto] = b->shape[d];
                hirc__value_name(&s->head, c->auto_name[c->nauto], sizeof c->auto_name[0]);
                c->nauto++;
            }
        }
        d++;
    }
    return HIRC_OK;
}

/* The counts of inputs and bindings checked, and the caller's bindings copied. */
static hirc_status take_bindings(run_ctx *c, const hirc_tensor *in, size_t nin,
                                 const hirc_run_options *opts)
{
    hir_program *p = c->h->p;
    if (nin != (size_t)p->inputs.n) {
        char a[32], b[32];
        snprintf(a, sizeof a, "%d", p->inputs.n);
        snprintf(b, sizeof b, "%zu", nin);
        return fail(c, HIRC_ERR_MISMATCH, "the program has %s input(s), %s buffer(s) given", a,
                    b);
    }
    if (nin && !in)
        return fail(c, HIRC_ERR_INVALID_ARGUMENT, "NULL inputs%s%s", "", "");
    size_t nb = opts ? opts->nbindings : 0;
    if (nb > 64)
        return fail(c, HIRC_ERR_INVALID_ARGUMENT, "more than 64 bindings%s%s", "", "");
    c->binds = calloc(nb + 1, sizeof *c->binds);
    if (!c->binds)
        return HIRC_ERR_NO_MEMORY;
    for (size_t i = 0; i < nb; i++) {
        if (!opts->bindings || !opts->bindings[i].name)
            return fail(c, HIRC_ERR_INVALID_ARGUMENT, "binding without a name%s%s", "", "");
        c->binds[i].name = opts->bindings[i].name;
        c->binds[i].value = opts->bindings[i].value;
    }
    c->nbinds = (int)nb;
    return HIRC_OK;
}

/* The inputs' dimensions and extents, checked first: they decide the automatic bindings. */
static hirc_status check_dims(run_ctx *c, const hirc_tensor *in, size_t nin)
{
    hir_program *p = c->h->p;
    for (size_t i = 0; i < nin; i++) {
        const hir_tensor *t = hir_value_tensor(p->inputs.items[i]);
        char nm[128], a[64], b[64];
        hirc__value_name(p->inputs.items[i], nm, sizeof nm);
        int want = t ? hirc__tensor_ndim(t) : 0;
        if (in[i].ndim != want) {
            snprintf(a, sizeof a, "%d", want);
            snprintf(b, sizeof b, "%d", in[i].ndim);
            char msg[400];
            snprintf(msg, sizeof msg, "input %s: the program needs %s dimension(s), the buffer "
                     "has %s", nm, a, b);
            return fail(c, HIRC_ERR_MISMATCH, "%s%s", msg, "");
        }
        for (int d = 0; d < want; d++)
            if (in[i].shape[d] < 0)
                return fail(c, HIRC_ERR_MISMATCH, "input %s: negative extent in its shape%s", nm,
                            "");
        hirc_status st = t ? auto_bind(c, nm, t, &in[i]) : HIRC_OK;
        if (st != HIRC_OK)
            return st;
    }
    return HIRC_OK;
}

/* Verify as hir-run does: an undefined scalar is an error unless bound. */
static hirc_status verify(run_ctx *c)
{
    const char *bound[64 + MAX_AUTO];
    int nbound = 0;
    for (int i = 0; i < c->nbinds; i++)
        bound[nbound++] = c->binds[i].name;
    for (int i = 0; i < c->nauto; i++)
        bound[nbound++] = c->auto_name[i];
    hir_diag d;
    hir_diag_init(&d, NULL);
    d.keep = true;
    hir_verify_opts vo = {true, bound, nbound};
    int rc = hir_program_verify(c->h->p, &vo, &d);
    int nerr = d.errors;
    hirc_status ts = hirc__diags_take(c->diags, &d);
    if (rc == HIR_ENOMEM)
        return fail(c, HIRC_ERR_NO_MEMORY, "out of memory (while verifying)%s%s", "", "");
    if (rc || nerr)
        return HIRC_ERR_VERIFY;
    return ts;
}

/* The world of one checked, the CPU backend and the interpreter made, the extents bound. */
static hirc_status make_runner(run_ctx *c, int num_streams, const char *gemm_tune,
                               int comm_priority)
{
    hir_program *p = c->h->p;
    hir_diag e;
    hir_diag_init(&e, NULL);
    if (hir_check_meshes(p, 1, &e))
        return fail_e(c, HIRC_ERR_RUN, &e);
    hir_backend_config bc;
    memset(&bc, 0, sizeof bc);
    bc.boot = NULL;                 /* one rank: no MPI */
    bc.rank = 0;
    bc.size = 1;
    bc.timeout = 300;
    bc.gemm_tune = gemm_tune;       /* the CPU backend ignores both */
    bc.comm_priority = comm_priority;
    if (hir_backend_cpu_create(&bc, &c->be, &e))
        return fail_e(c, HIRC_ERR_RUN, &e);
    hir_interp_config ic;
    memset(&ic, 0, sizeof ic);
    ic.rank = 0;
    ic.size = 1;
    ic.num_streams = num_streams;
    ic.binds = c->binds;
    ic.nbinds = c->nbinds;
    ic.label = NULL;                /* messages start "rank 0: FILE:LINE:COL: error: " */
    /* binding errors in this API's terms: its bindings and num_streams, not hir-run's flags */
    static const hir_interp_terms api_terms = {"binding '", "'", "bindings", "num_streams=N"};
    ic.terms = &api_terms;
    if (hir_interp_create(p, c->be, &ic, &c->it, &e))
        return fail_e(c, HIRC_ERR_RUN, &e);
    for (int i = 0; i < c->nauto; i++)
        hir_interp_bind_scalar(c->it, c->auto_s[i], c->auto_v[i], &e);
    hir_diag_fini(&e);
    return HIRC_OK;
}

/* Input i checked against the program and copied: a scalar into c->scalars, a tensor into
 * backend memory of its shard's shape. */
static hirc_status copy_input(run_ctx *c, size_t i, const hirc_tensor *in)
{
    hir_program *p = c->h->p;
    hir_diag e;
    hir_diag_init(&e, NULL);
    char nm[128];
    hirc__value_name(p->inputs.items[i], nm, sizeof nm);
    const hir_scalar *s = hir_value_scalar(p->inputs.items[i]);
    if (s) {
        hirc_status st = check_buffer(c, "input", nm, in, HIR_DT_INT64, 0, NULL);
        if (st != HIRC_OK)
            return st;
        memcpy(&c->scalars[i], in->data, sizeof(int64_t));
        hir_view_init(&c->views[i], &c->scalars[i], HIR_DT_INT64, 0, NULL);
        return HIRC_OK;
    }
    const hir_tensor *t = hir_value_tensor(p->inputs.items[i]);
    hir_shard sh;
    if (hir_interp_shard(c->it, t, &sh, &e))
        return fail_e(c, HIRC_ERR_RUN, &e);
    hirc_status st = check_buffer(c, "input", nm, in, t->dtype, sh.ndim, sh.local);
    if (st != HIRC_OK)
        return st;
    hir_view v;
    hir_view_init(&v, NULL, t->dtype, sh.ndim, sh.local);
    size_t bytes;
    if (hir_view_size_checked(&v, NULL, &bytes))
        return fail(c, HIRC_ERR_MISMATCH, "input %s: its size does not fit in 64 bits%s", nm,
                    "");
    if (c->be->ops->alloc(c->be, bytes ? bytes : 1, &c->dev[i], &e) ||
        (bytes && c->be->ops->upload(c->be, c->dev[i], in->data, bytes, &e)))
        return fail_e(c, HIRC_ERR_RUN, &e);
    v.data = c->dev[i];
    c->views[i] = v;
    return HIRC_OK;
}

/* Everything up to the inputs' backend copies: verify, check the world, make the backend and
 * the interpreter, bind the extents, check and copy the inputs. */
static hirc_status prepare(run_ctx *c, const hirc_tensor *in, size_t nin,
                           const hirc_run_options *opts)
{
    int num_streams = opts && opts->num_streams > 0 ? opts->num_streams
                                                  : HIR_INTERP_DEFAULT_STREAMS;
    const char *gemm_tune = opts ? opts->gemm_tune : NULL;
    if (hir_gemm_tune_check(gemm_tune, NULL))
        return fail(c, HIRC_ERR_INVALID_ARGUMENT, "gemm_tune is off, on or a cache file (a path "
                    "with a '/' or a '.'): '%s'%s", gemm_tune, "");
    int comm_priority = opts ? opts->comm_priority : 0;
    if (comm_priority != 0 && comm_priority != 1)
    {
        char v[24];
        snprintf(v, sizeof v, "%d", comm_priority);
        return fail(c, HIRC_ERR_INVALID_ARGUMENT, "comm_priority is 0 (default) or 1 (high): "
                    "%s%s", v, "");
    }
    hirc_status st;
    if ((st = take_bindings(c, in, nin, opts)) != HIRC_OK ||
        (st = check_dims(c, in, nin)) != HIRC_OK || (st = verify(c)) != HIRC_OK ||
        (st = make_runner(c, num_streams, gemm_tune, comm_priority)) != HIRC_OK)
        return st;
    c->n = (int)nin;
    c->views = calloc(nin + 1, sizeof *c->views);
    c->dev = calloc(nin + 1, sizeof *c->dev);
    c->scalars = calloc(nin + 1, sizeof *c->scalars);
    if (!c->views || !c->dev || !c->scalars)
        return HIRC_ERR_NO_MEMORY;
    for (size_t i = 0; i < nin; i++)
        if ((st = copy_input(c, i, &in[i])) != HIRC_OK)
            return st;
    return HIRC_OK;
}

/* The dtype and shape of output i under the bound extents. */
static hirc_status output_shape(run_ctx *c, size_t i, hir_dtype *dt, hir_shard *sh)
{
    char nm[128];
    const hir_value *v = c->h->p->outputs.items[i];
    const hir_tensor *t = hir_value_tensor((hir_value *)v);
    *dt = t ? t->dtype : HIR_DT_COUNT;  /* set on every path */
    if (!t)
        return fail(c, HIRC_ERR_RUN, "output %s is a scalar; only tensor outputs are supported%s",
                    hirc__value_name(v, nm, sizeof nm), "");
    hir_diag e;
    hir_diag_init(&e, NULL);
    if (hir_interp_shard(c->it, t, sh, &e))
        return fail_e(c, HIRC_ERR_RUN, &e);
    return HIRC_OK;
}

static hirc_status start(run_ctx *c, hirc_program *h, hirc_diagnostics *diags,
                         const hirc_tensor *in, size_t nin, hirc_tensor *out, size_t nout,
                         const hirc_run_options *opts)
{
    memset(c, 0, sizeof *c);
    c->h = h;
    c->diags = diags;
    if (nout != (size_t)h->p->outputs.n) {
        char a[32], b[32];
        snprintf(a, sizeof a, "%d", h->p->outputs.n);
        snprintf(b, sizeof b, "%zu", nout);
        return fail(c, HIRC_ERR_MISMATCH, "the program has %s output(s), %s buffer(s) given", a,
                    b);
    }
    if (nout && !out)
        return fail(c, HIRC_ERR_INVALID_ARGUMENT, "NULL outputs%s%s", "", "");
    hirc_status st = prepare(c, in, nin, opts);
    if (st != HIRC_OK)
        return st;
    /* HIR_FAULT=rank:line:kind fires here as in hir-run: a statement hook of the guard room */
    hir_diag e;
    hir_diag_init(&e, NULL);
    if (hir_interp_add_hook(c->it, &(hir_interp_hook){.before = hir_fault_before_stmt}, &e))
        return fail_e(c, HIRC_ERR_RUN, &e);
    return HIRC_OK;
}

hirc_status hirc_output_shapes(hirc_program *h, const hirc_tensor *in, size_t nin,
                               hirc_tensor *out, size_t nout, const hirc_run_options *opts,
                               hirc_diagnostics *diags)
{
    if (!h || !h->p)
        return HIRC_ERR_INVALID_ARGUMENT;
    run_ctx c;
    hirc_status st = start(&c, h, diags, in, nin, out, nout, opts);
    for (size_t i = 0; st == HIRC_OK && i < nout; i++) {
        hir_dtype dt;
        hir_shard sh;
        if ((st = output_shape(&c, i, &dt, &sh)) != HIRC_OK)
            break;
        memset(&out[i], 0, sizeof out[i]);
        out[i].dtype = hirc__dtype_public(dt);
        out[i].ndim = sh.ndim;
        memcpy(out[i].shape, sh.local, sizeof(int64_t) * (size_t)sh.ndim);
    }
    ctx_free(&c);
    return st;
}

hirc_status hirc_run(hirc_program *h, const hirc_tensor *in, size_t nin, hirc_tensor *out,
                     size_t nout, const hirc_run_options *opts, hirc_diagnostics *diags)
{
    if (!h || !h->p)
        return HIRC_ERR_INVALID_ARGUMENT;
    run_ctx c;
    hirc_status st = start(&c, h, diags, in, nin, out, nout, opts);
    hir_program *p = h->p;
    /* every output buffer is checked before anything runs */
    for (size_t i = 0; st == HIRC_OK && i < nout; i++) {
        hir_dtype dt;
        hir_shard sh;
        char nm[128];
        if ((st = output_shape(&c, i, &dt, &sh)) == HIRC_OK)
            st = check_buffer(&c, "output", hirc__value_name(p->outputs.items[i], nm, sizeof nm),
                              &out[i], dt, sh.ndim, sh.local);
        if (st == HIRC_OK && !out[i].data)
            st = fail(&c, HIRC_ERR_INVALID_ARGUMENT, "output %s: NULL data%s", nm, "");
    }
    hir_diag e;
    hir_diag_init(&e, NULL);
    if (st == HIRC_OK && (hir_interp_run(c.it, c.views, &e) || c.be->ops->synchronize(c.be, &e)))
        st = fail_e(&c, HIRC_ERR_RUN, &e);
    /* results: converted and made contiguous in a backend buffer, then copied out */
    void **host = NULL;
    if (st == HIRC_OK && !(host = calloc(nout + 1, sizeof *host)))
        st = HIRC_ERR_NO_MEMORY;
    for (size_t i = 0; st == HIRC_OK && i < nout; i++) {
        const hir_tensor *t = hir_value_tensor(p->outputs.items[i]);
        hir_view v, cv;
        if (hir_interp_output(c.it, (int)i, &v, &e)) {
            st = fail_e(&c, HIRC_ERR_RUN, &e);
            break;
        }
        hir_view_init(&cv, NULL, t->dtype, out[i].ndim, out[i].shape);
        size_t bytes;
        if (hir_view_size_checked(&cv, NULL, &bytes) || hir_view_numel(&v) != hir_view_numel(&cv)) {
            char nm[128];
            st = fail(&c, HIRC_ERR_RUN, "output %s does not hold the elements its shape needs%s",
                      hirc__value_name(p->outputs.items[i], nm, sizeof nm), "");
            break;
        }
        /* outputs are written only once every one of them is ready: staged on the host */
        if (!(host[i] = malloc(bytes ? bytes : 1))) {
            st = HIRC_ERR_NO_MEMORY;
            break;
        }
        if (!bytes)
            continue;
        if (c.be->ops->alloc(c.be, bytes, &cv.data, &e)) {
            st = fail_e(&c, HIRC_ERR_RUN, &e);
            break;
        }
        int bad = c.be->ops->copy(c.be, c.be->ops->stream_main(c.be), &cv, &v, &e) ||
                  c.be->ops->synchronize(c.be, &e) ||
                  c.be->ops->download(c.be, host[i], cv.data, bytes, &e);
        c.be->ops->free(c.be, cv.data);
        if (bad)
            st = fail_e(&c, HIRC_ERR_RUN, &e);
    }
    for (size_t i = 0; st == HIRC_OK && i < nout; i++) {
        hir_view cv;
        hir_view_init(&cv, NULL, HIR_DT_FLOAT, out[i].ndim, out[i].shape);
        hir_dtype dt;
        hirc__dtype_internal(out[i].dtype, &dt);
        cv.dtype = dt;
        size_t bytes = hir_view_bytes(&cv);
        if (bytes)
            memcpy(out[i].data, host[i], bytes);
    }
    for (size_t i = 0; host && i < nout; i++)
        free(host[i]);
    free(host);
    ctx_free(&c);
    return st;
}
