/* interp_env.c — the interpreter's environment, what every statement needs: messages (a
 * failure located at the statement, the --trace line), backend buffers with reference counts,
 * tensor bindings and the fresh results kept across runs, scalar bindings and evaluation, and
 * the runtime shape of a tensor on this rank. It calls no statement family and not the
 * executor (interp_internal.h). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "dialect/intops.h"
#include "runner/interp/interp_internal.h"
#include "support/diag.h"

/* ---------------------------------------------------------------- messages */

const char *interp_tname(const hir_tensor *t, char *buf, size_t n)
{
    snprintf(buf, n, "T%" PRId64, t ? t->number : -1);
    return buf;
}

static void stmt_label(const hir_stmt *s, char *buf, size_t n)
{
    if (!s) {
        snprintf(buf, n, "program");
        return;
    }
    const char *kw = hir_ops[s->op].keyword;
    switch (s->op) {
    case HIR_OP_COMMUNICATION:
        snprintf(buf, n, "Communication %" PRId64 " (%s)", s->u.comm->number,
                 hir_comm_type_name(s->u.comm->type));
        return;
    case HIR_OP_P2P:
        snprintf(buf, n, "P2PCommunication %" PRId64 " (%s)", s->u.comm->number,
                 s->u.comm->is_send ? "send" : "recv");
        return;
    case HIR_OP_END_COAL:
        snprintf(buf, n, "EndCoalescing %" PRId64, s->u.comm->number);
        return;
    case HIR_OP_CPERM:
        snprintf(buf, n, "CollectivePermute %" PRId64, s->u.comm->number);
        return;
    case HIR_OP_WAIT:
        snprintf(buf, n, "Wait Communication %" PRId64, s->u.wait.number);
        return;
    case HIR_OP_UNARY: case HIR_OP_BINARY: case HIR_OP_TERNARY:
        snprintf(buf, n, "%s", s->u.ew.fn ? s->u.ew.fn : "element-wise op");
        return;
    case HIR_OP_SCALAR_DEF:
        snprintf(buf, n, "scalar definition");
        return;
    default:
        break;
    }
    if (s->out && kw)
        snprintf(buf, n, "T%" PRId64 " = %s", s->out->number, kw);
    else
        snprintf(buf, n, "%s", kw ? kw : "statement");
}

static void loc_str(hir_interp *it, hir_loc loc, char *buf, size_t n)
{
    hir_source *src = it->p->src;
    if (src && loc.src == src && loc.end >= loc.begin) {
        int line = 0, col = 0;
        hir_source_linecol(src, loc.begin, &line, &col);
        snprintf(buf, n, "%s:%d:%d", src->name, line, col);
    } else if (src) {
        snprintf(buf, n, "%s", src->name);
    } else {
        snprintf(buf, n, "<generated>");
    }
}

/* Where an error of the statement being run is: the statement in the program's source, else
 * the whole source (a statement made by a pass, an error about the program), else nothing
 * ("<unknown>": a program without a source). */
static hir_loc fail_loc(hir_interp *it, const hir_stmt *stmt)
{
    hir_source *src = it->p->src;
    hir_loc loc = stmt ? stmt->loc : (hir_loc){0};
    if (src && loc.src == src && loc.end >= loc.begin)
        return loc;
    if (src)
        return (hir_loc){src, HIR_LOC_WHOLE, HIR_LOC_WHOLE};
    return (hir_loc){0};
}

/* Gives entry x the statement's location, the rank as its origin and the statement in front
 * of its message: printed "PREFIX: rank R: file:line:col: error: Stmt: msg", source line and
 * caret below. */
static int locate(hir_interp *it, hir_diag_entry *x)
{
    char what[160];
    if (!x)
        return -1;
    /* a backend's deferred work names its own statement (hir_collective.stmt_id) */
    const hir_stmt *stmt = x->at ? (const hir_stmt *)x->at : it->stmt;
    stmt_label(stmt, what, sizeof what);
    x->loc = fail_loc(it, stmt);
    hir_diag_prepend(x, what);
    hir_diag_set_origin(x, "rank %d%s%s", it->cfg.rank, it->cfg.label ? " " : "",
                        it->cfg.label ? it->cfg.label : "");
    return -1;
}

int interp_fail(hir_interp *it, hir_diag *e, const char *fmt, ...)
{
    if (!e)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    hir_vfail(e, fmt, ap);
    va_end(ap);
    return locate(it, e->last && e->last->sev == HIR_ERROR ? e->last : NULL);
}

/* a backend call failed: its message is the last error in e, still without a location; give
 * it the statement's (an error the interpreter located already stays as it is) */
int interp_backend_fail(hir_interp *it, hir_diag *e)
{
    hir_diag_entry *x = e ? e->last : NULL;
    if (e && e->fallback_last)
        return -1;                    /* kept without memory (hir_diag's fallback): as it is */
    if (x && x->sev == HIR_ERROR && !x->loc.src && !x->origin)
        return locate(it, x);
    if (!x || x->sev != HIR_ERROR)
        return interp_fail(it, e, "failed without a message");
    return -1;
}

/* The interpreter's own tables (bindings, scalar slots, caches, posted work) are plain malloc'd
 * maps: when one cannot grow, the statement fails with this error and the run ends cleanly
 * (issue 14 F18); nothing is left half-recorded. */
int interp_oom(hir_interp *it, hir_diag *e, const char *what, const char *name)
{
    return interp_fail(it, e, "out of memory (while %s%s%s)", what, name ? " " : "",
                       name ? name : "");
}

void interp_trace(hir_interp *it, const hir_stmt *s)
{
    char where[256];
    loc_str(it, s->loc, where, sizeof where);
    fprintf(it->cfg.trace, "[rank %d%s%s] %s: ", it->cfg.rank, it->cfg.label ? " " : "",
            it->cfg.label ? it->cfg.label : "", where);
    hir_source *src = it->p->src;
    if (src && s->loc.src == src && s->loc.begin < src->len) {
        const char *a = src->text + s->loc.begin, *z = a;
        while (z < src->text + src->len && *z != '\n')
            z++;
        fprintf(it->cfg.trace, "%.*s", (int)(z - a > 200 ? 200 : z - a), a);
    } else {
        char what[160];
        stmt_label(s, what, sizeof what);
        fputs(what, it->cfg.trace);
    }
    int64_t v;
    if (it->sc_stream_idx && interp_lookup(it, it->sc_stream_idx, &v) == 0)
        fprintf(it->cfg.trace, "   [streamIdx=%" PRId64 "]", v);
    fputc('\n', it->cfg.trace);
}

/* ---------------------------------------------------------------- buffers and bindings */

rt_buf *interp_buf_new(hir_interp *it, size_t bytes, hir_diag *e)
{
    rt_buf *b = calloc(1, sizeof *b);
    if (!b) {
        interp_fail(it, e, "out of host memory");
        return NULL;
    }
    if (it->be->ops->alloc(it->be, bytes ? bytes : 1, &b->ptr, e)) {
        free(b);
        interp_backend_fail(it, e);
        return NULL;
    }
    b->bytes = bytes;
    b->refs = 1;
    return b;
}

void interp_buf_unref(hir_interp *it, rt_buf *b)
{
    if (b && --b->refs == 0) {
        it->be->ops->free(it->be, b->ptr);
        free(b);
    }
}

rt_buf *interp_buf_of(hir_interp *it, const hir_tensor *t)
{
    rt_val *v = t ? hir_map_get(&it->tensors, (uintptr_t)t) : NULL;
    return v ? v->buf : NULL;
}

int interp_bind(hir_interp *it, const hir_tensor *t, const hir_view *v, rt_buf *buf,
                hir_diag *e)
{
    rt_val *val = hir_map_get(&it->tensors, (uintptr_t)t);
    if (!val) {
        val = calloc(1, sizeof *val);
        if (!val || hir_map_try_put(&it->tensors, (uintptr_t)t, val)) {
            free(val);
            char tn[32];
            return interp_oom(it, e, "binding", interp_tname(t, tn, sizeof tn));
        }
    }
    if (buf)
        buf->refs++;
    interp_buf_unref(it, val->buf);   /* after the ref: rebinding to the same buffer */
    val->v = *v;
    val->buf = buf;
    return 0;
}

void interp_unbind(hir_interp *it, const hir_tensor *t)
{
    rt_val *val = hir_map_get(&it->tensors, (uintptr_t)t);
    if (val) {
        interp_buf_unref(it, val->buf);
        free(val);
        hir_map_del(&it->tensors, (uintptr_t)t);
    }
}

void interp_unbind_all(hir_interp *it)
{
    for (size_t i = 0; i < it->tensors.cap; i++) {
        rt_val *val = it->tensors.vals[i];
        if (it->tensors.keys[i] != UINT64_MAX && val) {
            interp_buf_unref(it, val->buf);
            free(val);
        }
    }
    hir_map_fini(&it->tensors);
    hir_map_init(&it->tensors);
}

int interp_bound(hir_interp *it, const hir_tensor *t, hir_view *v)
{
    rt_val *val = hir_map_get(&it->tensors, (uintptr_t)t);
    if (!val)
        return 0;
    if (v)
        *v = val->v;
    return 1;
}

int interp_get(hir_interp *it, const hir_tensor *t, hir_view *v, hir_diag *e)
{
    if (interp_bound(it, t, v))
        return 0;
    char n[32];
    if (t->mesh && !t->mesh->ndevices)
        return interp_fail(it, e, "%s is not bound", interp_tname(t, n, sizeof n));
    return interp_fail(it, e, "%s is used before anything bound it on this rank",
                       interp_tname(t, n, sizeof n));
}

/* A statement whose output is not pre-bound gets a fresh result. Allocating it anew on every
 * run costs a device allocation and free per run (and cudaFree synchronizes the device), so
 * results are kept per (statement, tensor) and reused in later runs. Within one run a statement
 * can execute many times (a FOR body), each time possibly on another stream while the previous
 * result is still being read: the k-th execution in a run therefore gets slot k, its own buffer,
 * and slot k is reused only by the k-th execution of a later run (when the previous run's
 * device work is complete: callers synchronize between runs, see run.h). Past
 * RESULT_SLOTS executions in one run a result is allocated fresh and freed when dropped. */
#define RESULT_SLOTS 64

typedef struct rt_result {
    const hir_stmt *stmt;
    const hir_tensor *t;
    uint64_t run;            /* run_no of the run that last used the slots */
    int used;                /* executions so far in that run */
    int nslots;
    rt_buf *slot[RESULT_SLOTS];
} rt_result;

static uint64_t result_key(const hir_stmt *s, const hir_tensor *t)
{
    uint64_t k = ((uint64_t)(uintptr_t)s * 0x9e3779b97f4a7c15ULL) ^ (uint64_t)(uintptr_t)t;
    return k == UINT64_MAX ? 0 : k;
}

static void result_free(hir_interp *it, rt_result *r)
{
    for (int i = 0; i < r->nslots; i++)
        interp_buf_unref(it, r->slot[i]);
    free(r);
}

int interp_bind_new(hir_interp *it, const hir_tensor *t, int ndim, const int64_t *shape,
                    hir_view *v, hir_diag *e)
{
    hir_view nv;
    hir_view_init(&nv, NULL, t->dtype, ndim, shape);
    size_t bytes = hir_view_bytes(&nv);
    uint64_t key = result_key(it->stmt, t);
    rt_result *r = hir_map_get(&it->result_cache, key);
    int collision = r && (r->stmt != it->stmt || r->t != t);
    if (!r) {
        r = calloc(1, sizeof *r);
        if (!r || hir_map_try_put(&it->result_cache, key, r)) {
            free(r);
            char tn[32];
            return interp_oom(it, e, "keeping the result", interp_tname(t, tn, sizeof tn));
        }
        r->stmt = it->stmt;
        r->t = t;
    }
    rt_buf *b = NULL;
    int k = -1;
    if (!collision) {
        if (r->run != it->run_no) {
            r->run = it->run_no;
            r->used = 0;
        }
        if (r->used < RESULT_SLOTS)
            k = r->used++;
    }
    if (k >= 0 && k < r->nslots && r->slot[k]->refs == 1 && r->slot[k]->bytes == bytes) {
        b = r->slot[k];          /* only the cache holds it: reuse */
        b->refs++;
    } else {
        if (!(b = interp_buf_new(it, bytes, e)))
            return -1;
        if (k >= 0) {
            if (k < r->nslots) {
                interp_buf_unref(it, r->slot[k]);
            } else {
                k = r->nslots++;
            }
            r->slot[k] = b;
            b->refs++;
        }
    }
    nv.data = b->ptr;
    int rc = interp_bind(it, t, &nv, b, e);
    interp_buf_unref(it, b);
    if (!rc && v)
        *v = nv;
    return rc;
}

/* the results kept for t (the fresh results of every statement that made one) */
void interp_forget_results(hir_interp *it, const hir_tensor *t)
{
    for (size_t i = 0; i < it->result_cache.cap; i++) {
        rt_result *r = it->result_cache.vals[i];
        if (it->result_cache.keys[i] != UINT64_MAX && r && r->t == t) {
            result_free(it, r);
            hir_map_del(&it->result_cache, it->result_cache.keys[i]);
        }
    }
}

void interp_caches_free(hir_interp *it)
{
    for (size_t i = 0; i < it->alloc_cache.cap; i++)
        if (it->alloc_cache.keys[i] != UINT64_MAX && it->alloc_cache.vals[i])
            interp_buf_unref(it, it->alloc_cache.vals[i]);
    for (size_t i = 0; i < it->result_cache.cap; i++) {
        rt_result *r = it->result_cache.vals[i];
        if (it->result_cache.keys[i] != UINT64_MAX && r)
            result_free(it, r);
    }
    hir_map_fini(&it->result_cache);
}

/* ---------------------------------------------------------------- scalars */

/* Named scalars are bound by name (every `rank` object is the same value), symbols by object. */
static uint64_t scalar_key(const hir_scalar *s)
{
    return s->kind == HIR_SC_NAMED ? (uintptr_t)s->name : (uintptr_t)s;
}

/* s's slot in m, made on first use; NULL when it cannot be made (out of memory) */
rt_scalar *interp_scalar_slot(hir_map *m, const hir_scalar *s)
{
    rt_scalar *r = hir_map_get(m, scalar_key(s));
    if (!r) {
        r = calloc(1, sizeof *r);
        if (!r || hir_map_try_put(m, scalar_key(s), r)) {
            free(r);
            return NULL;
        }
    }
    return r;
}

const char *interp_scalar_name(const hir_scalar *s, char *buf, size_t n)
{
    if (s->kind == HIR_SC_SYMBOL && s->name)
        snprintf(buf, n, "%s%" PRId64, s->name, s->number);
    else
        snprintf(buf, n, "%s", s->name ? s->name : "a scalar");
    return buf;
}

void interp_scalars_clear(hir_map *m)
{
    for (size_t i = 0; i < m->cap; i++)
        if (m->keys[i] != UINT64_MAX)
            free(m->vals[i]);
    hir_map_fini(m);
    hir_map_init(m);
}

int interp_lookup(void *ctx, const hir_scalar *s, int64_t *v)
{
    hir_interp *it = ctx;
    rt_scalar *r = hir_map_get(&it->scalars, scalar_key(s));
    if (!r || !r->bound)
        r = hir_map_get(&it->user_scalars, scalar_key(s));
    if (r && r->bound) {
        *v = r->v;
        return 0;
    }
    return -1;
}

/* Always evaluated on demand: loop indices change under derived values, so nothing derived is
 * ever cached. */
int interp_eval(hir_interp *it, const hir_scalar *s, int64_t *v, hir_diag *e)
{
    hir_scalar_env env = {interp_lookup, it};
    char msg[256];
    int rc = hir_scalar_eval(s, &env, v, msg, sizeof msg);
    if (rc == 0)
        return 0;
    char sn[96];
    if (rc == HIR_ENOMEM)
        return interp_oom(it, e, "evaluating", interp_scalar_name(s, sn, sizeof sn));
    char *str = hir_scalar_str_inline(s);
    interp_fail(it, e, "cannot evaluate %s: %s", str ? str : "scalar", msg);
    free(str);
    return -1;
}

/* s = v in the table m (the user's bindings, or this run's) */
static int bind_scalar_in(hir_interp *it, hir_map *m, const hir_scalar *s, int64_t v, hir_diag *e)
{
    rt_scalar *r = interp_scalar_slot(m, s);
    char sn[96];
    if (!r)
        return interp_oom(it, e, "binding", interp_scalar_name(s, sn, sizeof sn));
    r->v = v;
    r->bound = 1;
    return 0;
}

int hir_interp_bind_scalar(hir_interp *it, const hir_scalar *s, int64_t v, hir_diag *e)
{
    return bind_scalar_in(it, &it->user_scalars, s, v, e);
}

int interp_bind_scalar(hir_interp *it, const hir_scalar *s, int64_t v, hir_diag *e)
{
    return bind_scalar_in(it, &it->scalars, s, v, e);
}

/* ---------------------------------------------------------------- shapes */

bool interp_axis_runtime(const hir_iterdomain *id)
{
    return id->itype != HIR_IT_REDUCTION && id->itype != HIR_IT_STRIDE;
}

const hir_iterdomain *const *hir_interp_axes(const hir_interp *it, const hir_tensor *t)
{
    (void)it;
    return (const hir_iterdomain *const *)t->shape.ids;
}

const hir_iterdomain *const *interp_axes(const hir_interp *it, const hir_tensor *t)
{
    return hir_interp_axes(it, t);
}

int hir_interp_rt_axes(const hir_tensor *t, hir_shape_axis *ax)
{
    int n = 0;
    for (int i = 0; i < t->shape.naxes; i++) {
        hir_shape_axis a;
        hir_shape_axis_get(t, i, &a);
        if (!a.dim)
            continue;
        if (n == HIR_MAX_DIMS)
            return -1;
        ax[n++] = a;
    }
    return n;
}

int interp_axis_pos(const hir_interp *it, const hir_tensor *t, const hir_iterdomain *id)
{
    (void)it;
    for (int i = 0; i < t->shape.naxes; i++) {
        hir_shape_axis a;
        hir_shape_axis_get(t, i, &a);
        for (int k = 0; k < a.nparts; k++)
            if (t->shape.ids[a.first + k] == id)
                return i;
    }
    return -1;
}

/* The runtime dimensions of t (hir_shape_axis.dim) leave out its device axes of their own
 * marked rf; a ShardByStream or HirAliasSelect output makes each of them an ordinary axis
 * (one per logical axis of the input but its reductions). interp_rf_expand gives v, a view of
 * t, a dimension of size 1 for each; interp_rf_squeeze takes those of t out again. */
int interp_rf_expand(const hir_tensor *t, hir_view *v)
{
    for (int i = 0, d = 0; i < t->shape.naxes; i++) {
        hir_shape_axis a;
        hir_shape_axis_get(t, i, &a);
        if (a.reduction)
            continue;
        if (!a.dim) {
            if (v->ndim == HIR_MAX_DIMS || d > v->ndim)
                return -1;
            for (int k = v->ndim; k > d; k--) {
                v->shape[k] = v->shape[k - 1];
                v->stride[k] = v->stride[k - 1];
            }
            v->shape[d] = 1;
            v->stride[d] = 0;
            v->ndim++;
        }
        d++;
    }
    return 0;
}

int interp_rf_squeeze(const hir_tensor *t, hir_view *v)
{
    for (int i = 0, d = 0; i < t->shape.naxes; i++) {
        hir_shape_axis a;
        hir_shape_axis_get(t, i, &a);
        if (a.reduction)
            continue;
        if (a.dim) {
            d++;
            continue;
        }
        if (d >= v->ndim || v->shape[d] != 1)
            return -1;
        for (int k = d; k + 1 < v->ndim; k++) {
            v->shape[k] = v->shape[k + 1];
            v->stride[k] = v->stride[k + 1];
        }
        v->ndim--;
    }
    return 0;
}

/* the index of t's view axis pos among its axes but the reductions (interp_rf_expand's) */
int interp_unreduced_pos(const hir_tensor *t, int pos)
{
    int k = 0;
    for (int i = 0; i < pos && i < t->shape.naxes; i++) {
        hir_shape_axis a;
        hir_shape_axis_get(t, i, &a);
        k += !a.reduction;
    }
    return k;
}

int interp_rt_pos(const hir_interp *it, const hir_tensor *t, int pos)
{
    (void)it;
    int k = 0;
    for (int i = 0; i < pos && i < t->shape.naxes; i++) {
        hir_shape_axis a;
        hir_shape_axis_get(t, i, &a);
        k += a.dim;
    }
    return k;
}

/* mesh dimension of a device parallel type: DIDx is the innermost */
static int mesh_dim_of(const hir_mesh *m, hir_ptype pt)
{
    int back = pt == HIR_PT_DIDX ? 1 : pt == HIR_PT_DIDY ? 2 : 3;
    return m->ndims - back;
}

int interp_extent(hir_interp *it, const hir_iterdomain *id, int64_t *v, hir_diag *e)
{
    const hir_scalar *x = hir_id_expanded(id) ? hir_id_expanded(id) : id->extent;
    if (!x)
        return interp_fail(it, e, "IterDomain %" PRId64 " has no extent", id->number);
    return interp_eval(it, x, v, e);
}

/* A device part of t: its extent must be the mesh's along its dimension; *n is that extent
 * and *coord this rank's coordinate along it (0 off the mesh). */
static int device_part(hir_interp *it, const hir_tensor *t, const hir_iterdomain *id,
                       int64_t idx, int64_t *n, int64_t *coord, hir_diag *e)
{
    char tn[32];
    if (!t->mesh)
        return interp_fail(it, e, "%s is sharded on %s but has no device mesh",
                           interp_tname(t, tn, sizeof tn), hir_ptype_name(id->ptype));
    int md = mesh_dim_of(t->mesh, id->ptype);
    if (md < 0)
        return interp_fail(it, e, "%s is sharded on %s but its mesh has %d dimension(s)",
                           interp_tname(t, tn, sizeof tn), hir_ptype_name(id->ptype),
                           t->mesh->ndims);
    int64_t ext = 0;
    *coord = 0;
    *n = t->mesh->dims[md];
    int cr = hir_scalar_eval(id->extent, NULL, &ext, NULL, 0);
    if (cr == HIR_ENOMEM)
        return interp_oom(it, e, "evaluating the extent of", interp_tname(t, tn, sizeof tn));
    if (cr)
        ext = *n;
    if (ext != *n)
        return interp_fail(it, e, "%s: %s axis of extent %" PRId64
                           " on a mesh of %" PRId64 " devices along it",
                           interp_tname(t, tn, sizeof tn), hir_ptype_name(id->ptype), ext, *n);
    *coord = 0;
    if (idx >= 0) {
        int64_t rem = idx;
        for (int k = t->mesh->ndims - 1; k >= 0; k--) {
            if (k == md)
                *coord = rem % t->mesh->dims[k];
            rem /= t->mesh->dims[k];
        }
    }
    return 0;
}

/* Inside a stream loop, the length of this iteration's chunk of an axis of X elements split
 * by the stream part `stream` (k chunks of ceilDiv(X, k), *len on entry): the last one is
 * shorter when k does not divide X, as ShardByStream's chunk is. The chunk's index is the
 * iteration of the innermost loop that runs k times (the loop over the chunks); where no loop
 * does, *len stays ceilDiv(X, k). nvFuser allocates ceilDiv(X, k) every iteration and its
 * ATen out= calls shrink the last one; allocating the chunk's own length gives the same
 * tensors, and a Set of the last chunk fits too. */
static int chunk_of_loop(hir_interp *it, const hir_iterdomain *stream, int64_t *len, int64_t x,
                         hir_diag *e)
{
    int64_t k;
    if (interp_extent(it, stream, &k, e))
        return -1;
    int top = it->loops < INTERP_LOOP_DEPTH ? it->loops : INTERP_LOOP_DEPTH;
    for (int l = top - 1; l >= 0; l--) {
        if (it->loop_trips[l] != k)
            continue;
        int64_t start, left;
        if (hir_iop_mul(it->loop_at[l], *len, &start))
            return interp_fail(it, e, "integer overflow in a stream chunk's offset");
        left = x > start ? x - start : 0;
        if (left < *len)
            *len = left;
        return 0;
    }
    return 0;
}

/* One runtime dimension d of s from the view's axis a: an unsplit axis as its IterDomain (a
 * device axis of size 1 locally), a split one as one dimension whose global extent is X of
 * its ( ceilDiv(X, k) ) or the product of its parts, and whose local extent leaves out the
 * device parts (and, with `chunk`, the stream parts: one chunk inside a stream loop). */
static int shard_axis(hir_interp *it, const hir_tensor *t, const hir_shape_axis *a, int64_t idx,
                      bool chunk, hir_shard *s, int d, hir_diag *e)
{
    char tn[32];
    int64_t global = 1, local = 1, after = 1, offset = 0, block = 0, period = 0;
    for (int k = a->nparts - 1; k >= 0; k--) {
        const hir_iterdomain *id = t->shape.ids[a->first + k];
        int64_t ext;
        if (hir_ptype_is_device(id->ptype)) {
            int64_t coord = 0;
            if (device_part(it, t, id, idx, &ext, &coord, e))
                return -1;
            offset += coord * after;
            if (k > 0 && !block) {   /* parts outside the device part: one block a period */
                block = after;
                if (hir_iop_mul(after, ext, &period))
                    return interp_fail(it, e, "%s: its extent overflows", interp_tname(t, tn, sizeof tn));
            }
        } else if (id->itype == HIR_IT_BROADCAST && !hir_id_expanded(id)) {
            ext = 1;
        } else if (interp_extent(it, id, &ext, e)) {
            return -1;
        }
        if (ext < 0)
            return interp_fail(it, e, "%s: negative extent %" PRId64,
                               interp_tname(t, tn, sizeof tn), ext);
        if (hir_iop_mul(global, ext, &global) || hir_iop_mul(after, ext, &after))
            return interp_fail(it, e, "%s: its extent overflows", interp_tname(t, tn, sizeof tn));
        if (!hir_ptype_is_device(id->ptype) && !(chunk && hir_ptype_is_stream(id->ptype)))
            local *= ext;
    }
    bool split_device = a->device && a->nparts > 1;
    int64_t prod = global;   /* the product of the parts */
    if (a->nparts > 1 && a->extent) {   /* X of ( ceilDiv(X, k) ): the exact extent */
        int64_t x;
        if (interp_eval(it, a->extent, &x, e))
            return -1;
        if (x < 0)
            return interp_fail(it, e, "%s: negative extent %" PRId64,
                               interp_tname(t, tn, sizeof tn), x);
        global = x;
        if (!split_device && !(chunk && hir_ptype_is_stream(a->outer->ptype)))
            local = x;
        else if (!split_device && a->nparts == 2 && chunk_of_loop(it, a->outer, &local, x, e))
            return -1;
    }
    if (block && !(chunk && hir_ptype_is_stream(a->outer->ptype))) {
        /* the blocks tile the axis only where every split of it is even (the axis is the
         * product of its parts): else the ranks would hold blocks cut short at different
         * places */
        if (!period || global != prod)
            return interp_fail(it, e, "%s: an axis of %" PRId64 " elements whose split parts "
                               "make %" PRId64 ", with the device part inside the split: only "
                               "splits that divide the axis evenly are supported there",
                               interp_tname(t, tn, sizeof tn), global, prod);
        local = global / period * block;
    } else {
        block = period = 0;   /* one block (inside a stream loop: this chunk's) */
    }
    s->global[d] = global;
    s->local[d] = local;
    s->block[d] = block;
    s->period[d] = period;
    /* a split device axis's block starts at coordinate x inner extent; an unsplit one is the
     * coordinate itself (local extent 1) */
    s->offset[d] = a->device ? offset : 0;
    return 0;
}

static int interp_shard(hir_interp *it, const hir_tensor *t, bool chunk, hir_shard *s,
                        hir_diag *e)
{
    memset(s, 0, sizeof *s);
    s->on_rank = 1;
    int64_t idx = -1;
    if (t->mesh) {
        for (int64_t i = 0; i < t->mesh->ndevices; i++)
            if (t->mesh->devices[i] == it->cfg.rank)
                idx = i;
        if (idx < 0)
            s->on_rank = 0;
    }
    char tn[32];
    hir_shape_axis ax[HIR_MAX_DIMS];
    int n = hir_interp_rt_axes(t, ax);
    if (n < 0)
        return interp_fail(it, e, "%s has more than %d dimensions",
                           interp_tname(t, tn, sizeof tn), HIR_MAX_DIMS);
    for (int d = 0; d < n; d++)
        if (shard_axis(it, t, &ax[d], idx, chunk, s, d, e))
            return -1;
    s->ndim = n;
    return 0;
}

int hir_interp_shard(hir_interp *it, const hir_tensor *t, hir_shard *s, hir_diag *e)
{
    return interp_shard(it, t, false, s, e);
}

int interp_shard_here(hir_interp *it, const hir_tensor *t, hir_shard *s, hir_diag *e)
{
    return interp_shard(it, t, it->loops > 0, s, e);
}

int interp_refuse_blocks(hir_interp *it, const hir_tensor *t, const char *what, hir_diag *e)
{
    bool inside = false;   /* cheap test first: a device part after a split's first part */
    for (int i = 0; t && i < t->shape.naxes && !inside; i++) {
        hir_shape_axis a;
        hir_shape_axis_get(t, i, &a);
        for (int k = 1; k < a.nparts; k++)
            inside |= hir_ptype_is_device(t->shape.ids[a.first + k]->ptype);
    }
    if (!inside)
        return 0;
    hir_shard s;
    if (interp_shard_here(it, t, &s, e))
        return -1;
    char tn[32];
    for (int d = 0; d < s.ndim; d++)
        if (s.block[d])
            return interp_fail(it, e, "dimension %d of %s holds a block of %" PRId64 " in every %"
                               PRId64 " on each rank (its device part is inside a split): %s of "
                               "such a layout is not supported", d, interp_tname(t, tn, sizeof tn),
                               s.block[d], s.period[d], what);
    return 0;
}

int interp_rt_shape(hir_interp *it, const hir_tensor *t, int *ndim, int64_t *shape,
                    hir_diag *e)
{
    hir_shard s;
    if (interp_shard_here(it, t, &s, e))
        return -1;
    *ndim = s.ndim;
    memcpy(shape, s.local, sizeof(int64_t) * (size_t)s.ndim);
    return 0;
}
