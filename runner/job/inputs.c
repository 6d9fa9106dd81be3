/* inputs.c — a job's inputs: generated on the global tensor from the seed (data.h) or read
 * from .npy files (--inputs=DIR, extents of symbols from their shapes), uploaded to the
 * backend; and --vary-inputs, which switches them run to run. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "runner/data/npy.h"
#include "runner/job/job_internal.h"

void job_inputs_free(inputs *in, hir_backend *be)
{
    for (int i = 0; i < in->n; i++)
        if (in->dev && in->dev[i])
            be->ops->free(be, in->dev[i]);
    free(in->views);
    free(in->dev);
    free(in->scalars);
    memset(in, 0, sizeof *in);
}

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* An extent the user bound (--bind i0=5) that a file's shape gives another value (3): refused,
 * naming both; the binding never loses silently to the file, nor the file to the binding. */
static int refuse_bound(const hir_scalar *x, int64_t file_value, int axis,
                        const hir_run_options *o, const char *nm, const char *path, int rank,
                        hir_diag *e)
{
    char spell[64];
    snprintf(spell, sizeof spell, "%s%" PRId64, x->name, x->number);
    const hir_interp_terms *tm = hir_interp_terms_or_default(o->terms);
    for (int k = 0; k < o->nbinds; k++)
        if (!strcmp(o->binds[k].name, spell) && o->binds[k].value != file_value)
            return hir_fail(e, "rank %d: input %s: extent %s is bound to %" PRId64 " (%s"
                                 "%s%s=%" PRId64 "), but %s gives %" PRId64 " (axis %d of its "
                                 "shape)", rank, nm, spell, o->binds[k].value, tm->bind_open,
                                 spell, tm->bind_close, o->binds[k].value, path, file_value,
                                 axis);
    return 0;
}

/* In DIR mode, extents named by symbols come from the files' shapes. */
int job_bind_dir_extents(hir_interp *it, hir_program *p, const hir_run_options *o,
                         hir_program *names, int rank, hir_diag *e)
{
    for (int i = 0; i < p->inputs.n; i++) {
        hir_tensor *t = hir_value_tensor(p->inputs.items[i]);
        if (!t)
            continue;
        char nm[64], path[4096];
        job_value_name(names->inputs.items[i], nm, sizeof nm);
        snprintf(path, sizeof path, "%s/%s.rank%d.npy", o->inputs_dir, nm, rank);
        int local = file_exists(path);
        if (!local)
            snprintf(path, sizeof path, "%s/%s.npy", o->inputs_dir, nm);
        hir_npy_header h;
        if (!file_exists(path))
            continue;   /* reported when the data is read */
        if (hir_npy_read_header(path, &h, e)) {
            char lead[100];
            snprintf(lead, sizeof lead, "rank %d: input %s", rank, nm);
            hir_diag_prepend(e->last, lead);
            return -1;
        }
        /* the file has the logical shape: one dimension per runtime axis of the view */
        hir_shape_axis ax[HIR_MAX_DIMS];
        int n = hir_interp_rt_axes(t, ax);
        for (int d = 0; d < n && d < h.ndim; d++) {
            hir_scalar *x = ax[d].extent;   /* the logical extent (X of a ceilDiv) */
            if (x && x->kind == HIR_SC_SYMBOL && !x->def && !(local && ax[d].device)) {
                if (refuse_bound(x, h.shape[d], d, o, nm, path, rank, e) ||
                    hir_interp_bind_scalar(it, x, h.shape[d], e))
                    return -1;
            }
        }
    }
    return 0;
}

/* This rank's elements of the global array g (row-major, sh->global) into host (row-major,
 * sh->local, the view hv): each local index goes to its global one (hir_shard_global: one
 * block, or a block every period where a device part sits inside a split). */
static void copy_blocks(void *host, const char *g, const hir_shard *sh, const hir_view *hv,
                        size_t es)
{
    int64_t idx[HIR_MAX_DIMS] = {0}, n = hir_view_numel(hv);
    for (int64_t k = 0; k < n; k++) {
        int64_t lin = 0, rem = k;
        for (int d = sh->ndim - 1; d >= 0; d--) {
            idx[d] = rem % sh->local[d];
            rem /= sh->local[d];
        }
        for (int d = 0; d < sh->ndim; d++)
            lin = lin * sh->global[d] + hir_shard_global(sh, d, idx[d]);
        memcpy((char *)host + (size_t)k * es, g + (size_t)lin * es, es);
    }
}

/* Input nm's data on this rank into host (row-major, the shard's local shape): generated from
 * the seed, or read from --inputs=DIR (this rank's own file, or its block of the global one). */
static int input_data(void *host, hir_dtype dt, const hir_shard *sh, const hir_view *hv,
                      size_t gbytes, const hir_run_options *o, const char *nm, int rank,
                      hir_diag *e)
{
    int rc = 0;
    bool blocks = false;   /* a device part inside a split: one block every period */
    for (int d = 0; d < sh->ndim; d++)
        blocks |= sh->block[d] != 0;
    if (o->inputs == HIR_INPUTS_GENERATED && !blocks)
        return hir_data_fill(host, dt, sh->ndim, sh->local, sh->global, sh->offset, o->data,
                             o->seed, hir_data_key(nm), e);
    if (o->inputs == HIR_INPUTS_GENERATED) {
        /* the global tensor's data, then this rank's blocks of it */
        char *g = hir_alloc_large(gbytes + 1);
        if (!g)
            rc = hir_fail(e, "out of host memory making input %s", nm);
        else if (!(rc = hir_data_fill(g, dt, sh->ndim, sh->global, NULL, NULL, o->data,
                                      o->seed, hir_data_key(nm), e)))
            copy_blocks(host, g, sh, hv, hir_dtype_size(dt));
        free(g);
        return rc;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.rank%d.npy", o->inputs_dir, nm, rank);
    if (file_exists(path))
        return hir_npy_read(path, host, dt, sh->ndim, sh->local, e);
    snprintf(path, sizeof path, "%s/%s.npy", o->inputs_dir, nm);
    if (!file_exists(path))
        return hir_fail(e, "rank %d: input %s: neither %s/%s.rank%d.npy nor %s exists", rank,
                        nm, o->inputs_dir, nm, rank, path);
    /* the global array, then this rank's block of it */
    char *g = hir_alloc_large(gbytes + 1);
    if (!g)
        rc = hir_fail(e, "out of host memory reading %s", path);
    else if (!(rc = hir_npy_read(path, g, dt, sh->ndim, sh->global, e)))
        copy_blocks(host, g, sh, hv, hir_dtype_size(dt));
    free(g);
    return rc;
}

int job_make_inputs(hir_interp *it, hir_program *p, hir_backend *be, const hir_run_options *o,
                    hir_program *names, int rank, inputs *in, hir_diag *e)
{
    memset(in, 0, sizeof *in);
    in->n = p->inputs.n;
    in->views = calloc((size_t)in->n + 1, sizeof *in->views);
    in->dev = calloc((size_t)in->n + 1, sizeof *in->dev);
    in->scalars = calloc((size_t)in->n + 1, sizeof *in->scalars);
    if (!in->views || !in->dev || !in->scalars)
        return hir_fail(e, "out of host memory");
    /* the main program's extents are bound before the limits check too (hir_run_job);
     * binding again gives the same values */
    if (o->inputs == HIR_INPUTS_DIR && job_bind_dir_extents(it, p, o, names, rank, e))
        return -1;
    for (int i = 0; i < in->n; i++) {
        char nm[64];
        job_value_name(names->inputs.items[i], nm, sizeof nm);
        hir_value *v = p->inputs.items[i];
        if (hir_value_scalar(v)) {
            int found = 0;
            for (int k = 0; k < o->nbinds; k++)
                if (!strcmp(o->binds[k].name, nm)) {
                    in->scalars[i] = o->binds[k].value;
                    found = 1;
                }
            if (!found)
                return hir_fail(e, "rank %d: scalar input %s needs a value: give %s%s%s=VALUE",
                                rank, nm, hir_interp_terms_or_default(o->terms)->bind_open, nm,
                                hir_interp_terms_or_default(o->terms)->bind_close);
            hir_view_init(&in->views[i], &in->scalars[i], HIR_DT_INT64, 0, NULL);
            continue;
        }
        hir_tensor *t = hir_value_tensor(v);
        hir_shard sh;
        if (hir_interp_shard(it, t, &sh, e)) {
            hir_diag_append(e->last, " (input %s: give %sNAME%s=N for symbolic extents, "
                            "or --inputs=DIR)", nm, hir_interp_terms_or_default(o->terms)->bind_open,
                            hir_interp_terms_or_default(o->terms)->bind_close);
            return -1;
        }
        if (!sh.on_rank)
            continue;
        hir_view hv, gv;
        hir_view_init(&hv, NULL, t->dtype, sh.ndim, sh.local);
        hir_view_init(&gv, NULL, t->dtype, sh.ndim, sh.global);
        size_t bytes, gbytes;
        if (hir_view_size_checked(&hv, NULL, &bytes) ||
            hir_view_size_checked(&gv, NULL, &gbytes) || gbytes == SIZE_MAX)
            return hir_fail(e, "rank %d: input %s: its size does not fit in 64 bits", rank,
                                 nm);
        if (!hir_npy_descr(t->dtype, 0))
            return hir_fail(e, "rank %d: input %s has dtype %s, which the runner cannot "
                                 "make data for", rank, nm, hir_dtype_name(t->dtype));
        /* a backend whose buffers are host memory (the CPU reference) gets the data written
         * straight into its buffer: no second copy of a GiB-sized input to make and fill */
        bool direct = (be->ops->caps & HIR_CAP_HOST_MEMORY) != 0;
        if (direct && be->ops->alloc(be, bytes ? bytes : 1, &in->dev[i], e))
            return -1;
        void *host = direct ? in->dev[i] : hir_alloc_large(bytes ? bytes : 1);
        if (!host)
            return hir_fail(e, "out of host memory for input %s", nm);
        int rc = input_data(host, t->dtype, &sh, &hv, gbytes, o, nm, rank, e);
        if (!direct) {
            if (!rc && be->ops->alloc(be, bytes ? bytes : 1, &in->dev[i], e))
                rc = -1;
            if (!rc && bytes && be->ops->upload(be, in->dev[i], host, bytes, e))
                rc = -1;
            free(host);
        }
        if (rc)
            return -1;
        hv.data = in->dev[i];
        in->views[i] = hv;
    }
    return 0;
}

/* ---------------------------------------------------------------- --vary-inputs */

int job_scale_inputs(hir_backend *be, inputs *in, double f, hir_diag *e)
{
    hir_stream *s = be->ops->stream_main(be);
    for (int i = 0; i < in->n; i++) {
        if (!in->dev[i] || !hir_dtype_is_float(in->views[i].dtype))
            continue;
        hir_operand a = {0}, k = {0};
        a.view = in->views[i];
        k.is_scalar = 1;
        k.f = f;
        if (be->ops->binary(be, s, HIR_BIN_MUL, &in->views[i], &a, &k, e))
            return -1;
    }
    return be->ops->synchronize(be, e);
}

int job_vary_prepare(void *ctx, int iter, hir_diag *e)
{
    vary *v = ctx;
    hir_backend *be = v->be;
    hir_stream *s = be->ops->stream_main(be);
    int j = v->runs++ % 2;
    if (j != v->cur && job_scale_inputs(be, v->in, j ? 2.0 : 0.5, e))
        return -1;
    v->cur = j;
    for (int i = 0; i < v->p->outputs.n; i++) {
        hir_view out;
        if (hir_interp_output(v->it, i, &out, NULL) || !out.data ||
            !hir_dtype_is_float(out.dtype))
            continue;
        int is_input = 0;
        for (int k = 0; k < v->in->n; k++)
            is_input |= v->in->dev[k] == out.data;
        if (!is_input && be->ops->fill(be, s, &out, NAN, e))
            return -1;
    }
    return be->ops->synchronize(be, e);
}
