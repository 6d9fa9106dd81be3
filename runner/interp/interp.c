/* interp.c — the Host IR interpreter of one rank (hostir-format.md §2): environment of tensor
 * and scalar bindings, control flow, streams, communication and the allocation cache. Tensor
 * arithmetic and views live in interp_ops.c; every device action goes through the backend. */
#include <inttypes.h>
#include <setjmp.h>
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

int interp_fail(hir_interp *it, hir_error *e, const char *fmt, ...)
{
    char msg[768], where[256], what[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    loc_str(it, it->stmt ? it->stmt->loc : (hir_loc){0}, where, sizeof where);
    stmt_label(it->stmt, what, sizeof what);
    /* the diagnostic engine's one-line form: "rank R[ label]: file:line:col: error: Stmt: msg" */
    char prefix[300], text[sizeof msg + sizeof what + 2], line[sizeof e->msg + 256];
    snprintf(prefix, sizeof prefix, "rank %d%s%s: %s", it->cfg.rank, it->cfg.label ? " " : "",
             it->cfg.label ? it->cfg.label : "", where);
    snprintf(text, sizeof text, "%s: %s", what, msg);
    size_t k = hir_diag_format_fatal(line, sizeof line, prefix, &(hir_severity){HIR_ERROR}, text);
    if (k && line[k - 1] == '\n')
        line[k - 1] = 0;                    /* a hir_error holds one line without its newline */
    int peer = e->peer;
    hir_error_set(e, "%s", line);
    e->peer = peer;
    return -1;
}

/* a backend call failed: its message is in e; add rank and statement */
static int backend_fail(hir_interp *it, hir_error *e)
{
    char msg[sizeof e->msg];
    snprintf(msg, sizeof msg, "%s", e->msg);
    return interp_fail(it, e, "%s", msg);
}

/* ---------------------------------------------------------------- buffers and bindings */

rt_buf *interp_buf_new(hir_interp *it, size_t bytes, hir_error *e)
{
    rt_buf *b = calloc(1, sizeof *b);
    if (!b) {
        interp_fail(it, e, "out of host memory");
        return NULL;
    }
    if (it->be->ops->alloc(it->be, bytes ? bytes : 1, &b->ptr, e)) {
        free(b);
        backend_fail(it, e);
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

/* The interpreter's own tables (bindings, scalar slots, caches, posted work) are plain malloc'd
 * maps: when one cannot grow, the statement fails with this error and the run ends cleanly
 * (issue 14 F18); nothing is left half-recorded. */
static int interp_oom(hir_interp *it, hir_error *e, const char *what, const char *name)
{
    return interp_fail(it, e, "out of memory (while %s%s%s)", what, name ? " " : "",
                       name ? name : "");
}

int interp_bind(hir_interp *it, const hir_tensor *t, const hir_view *v, rt_buf *buf,
                hir_error *e)
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

static void unbind_all(hir_interp *it)
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

int interp_get(hir_interp *it, const hir_tensor *t, hir_view *v, hir_error *e)
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
                    hir_view *v, hir_error *e)
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

/* ---------------------------------------------------------------- scalars */

/* Named scalars are bound by name (every `rank` object is the same value), symbols by object. */
static uint64_t scalar_key(const hir_scalar *s)
{
    return s->kind == HIR_SC_NAMED ? (uintptr_t)s->name : (uintptr_t)s;
}

/* s's slot in m, made on first use; NULL when it cannot be made (out of memory) */
static rt_scalar *scalar_slot(hir_map *m, const hir_scalar *s)
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

static const char *scalar_name(const hir_scalar *s, char *buf, size_t n)
{
    if (s->kind == HIR_SC_SYMBOL && s->name)
        snprintf(buf, n, "%s%" PRId64, s->name, s->number);
    else
        snprintf(buf, n, "%s", s->name ? s->name : "a scalar");
    return buf;
}

static void scalars_clear(hir_map *m)
{
    for (size_t i = 0; i < m->cap; i++)
        if (m->keys[i] != UINT64_MAX)
            free(m->vals[i]);
    hir_map_fini(m);
    hir_map_init(m);
}

static int env_lookup(void *ctx, const hir_scalar *s, int64_t *v)
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
int interp_eval(hir_interp *it, const hir_scalar *s, int64_t *v, hir_error *e)
{
    hir_scalar_env env = {env_lookup, it};
    char msg[256];
    int rc = hir_scalar_eval(s, &env, v, msg, sizeof msg);
    if (rc == 0)
        return 0;
    char sn[96];
    if (rc == HIR_ENOMEM)
        return interp_oom(it, e, "evaluating", scalar_name(s, sn, sizeof sn));
    char *str = hir_scalar_str_inline(s);
    interp_fail(it, e, "cannot evaluate %s: %s", str ? str : "scalar", msg);
    free(str);
    return -1;
}

int hir_interp_bind_scalar(hir_interp *it, const hir_scalar *s, int64_t v, hir_error *e)
{
    rt_scalar *r = scalar_slot(&it->user_scalars, s);
    char sn[96];
    if (!r)
        return interp_oom(it, e, "binding", scalar_name(s, sn, sizeof sn));
    r->v = v;
    r->bound = 1;
    return 0;
}

static int bind_scalar(hir_interp *it, const hir_scalar *s, int64_t v, hir_error *e)
{
    rt_scalar *r = scalar_slot(&it->scalars, s);
    char sn[96];
    if (!r)
        return interp_oom(it, e, "binding", scalar_name(s, sn, sizeof sn));
    r->v = v;
    r->bound = 1;
    return 0;
}

/* ---------------------------------------------------------------- shapes */

static bool axis_is_runtime(const hir_iterdomain *id)
{
    return id->itype != HIR_IT_REDUCTION && id->itype != HIR_IT_STRIDE;
}

const hir_iterdomain *const *hir_interp_axes(const hir_interp *it, const hir_tensor *t)
{
    return (const hir_iterdomain *const *)(it->form2026 ? t->loop : t->shape.ids);
}

const hir_iterdomain *const *interp_axes(const hir_interp *it, const hir_tensor *t)
{
    return hir_interp_axes(it, t);
}

int interp_axis_pos(const hir_interp *it, const hir_tensor *t, const hir_iterdomain *id)
{
    const hir_iterdomain *const *ax = interp_axes(it, t);
    for (int i = 0; i < t->nloop; i++)
        if (ax[i] == id)
            return i;
    return -1;
}

int interp_rt_pos(const hir_interp *it, const hir_tensor *t, int pos)
{
    const hir_iterdomain *const *ax = interp_axes(it, t);
    int k = 0;
    for (int i = 0; i < pos && i < t->nloop; i++)
        k += axis_is_runtime(ax[i]);
    return k;
}

/* mesh dimension of a device parallel type: DIDx is the innermost */
static int mesh_dim_of(const hir_mesh *m, hir_ptype pt)
{
    int back = pt == HIR_PT_DIDX ? 1 : pt == HIR_PT_DIDY ? 2 : 3;
    return m->ndims - back;
}

static int extent_of(hir_interp *it, const hir_iterdomain *id, int64_t *v, hir_error *e)
{
    const hir_scalar *x = hir_id_expanded(id) ? hir_id_expanded(id) : id->extent;
    if (!x)
        return interp_fail(it, e, "IterDomain %" PRId64 " has no extent", id->number);
    return interp_eval(it, x, v, e);
}

int hir_interp_shard(hir_interp *it, const hir_tensor *t, hir_shard *s, hir_error *e)
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
    for (int i = 0; i < t->nloop; i++) {
        const hir_iterdomain *id = interp_axes(it, t)[i];
        if (!axis_is_runtime(id))
            continue;
        if (s->ndim == HIR_MAX_DIMS)
            return interp_fail(it, e, "%s has more than %d dimensions",
                               interp_tname(t, tn, sizeof tn), HIR_MAX_DIMS);
        int d = s->ndim++;
        if (hir_ptype_is_device(id->ptype)) {
            if (!t->mesh)
                return interp_fail(it, e, "%s is sharded on %s but has no device mesh",
                                   interp_tname(t, tn, sizeof tn), hir_ptype_name(id->ptype));
            int md = mesh_dim_of(t->mesh, id->ptype);
            if (md < 0)
                return interp_fail(it, e, "%s is sharded on %s but its mesh has %d dimension(s)",
                                   interp_tname(t, tn, sizeof tn), hir_ptype_name(id->ptype),
                                   t->mesh->ndims);
            int64_t n = t->mesh->dims[md], ext = 0;
            int cr = hir_scalar_eval(id->extent, NULL, &ext, NULL, 0);
            if (cr == HIR_ENOMEM)
                return interp_oom(it, e, "evaluating the extent of",
                                  interp_tname(t, tn, sizeof tn));
            if (cr)
                ext = n;
            if (ext != n)
                return interp_fail(it, e, "%s: %s axis of extent %" PRId64
                                   " on a mesh of %" PRId64 " devices along it",
                                   interp_tname(t, tn, sizeof tn), hir_ptype_name(id->ptype),
                                   ext, n);
            s->local[d] = 1;
            s->global[d] = n;
            int64_t coord = 0;
            if (idx >= 0) {
                int64_t rem = idx;
                for (int k = t->mesh->ndims - 1; k >= 0; k--) {
                    if (k == md)
                        coord = rem % t->mesh->dims[k];
                    rem /= t->mesh->dims[k];
                }
            }
            s->offset[d] = coord;
        } else {
            int64_t ext;
            if (id->itype == HIR_IT_BROADCAST && !hir_id_expanded(id))
                ext = 1;
            else if (extent_of(it, id, &ext, e))
                return -1;
            if (ext < 0)
                return interp_fail(it, e, "%s: negative extent %" PRId64,
                                   interp_tname(t, tn, sizeof tn), ext);
            s->local[d] = s->global[d] = ext;
        }
    }
    return 0;
}

int interp_rt_shape(hir_interp *it, const hir_tensor *t, int *ndim, int64_t *shape,
                    hir_error *e)
{
    hir_shard s;
    if (hir_interp_shard(it, t, &s, e))
        return -1;
    *ndim = s.ndim;
    memcpy(shape, s.local, sizeof(int64_t) * (size_t)s.ndim);
    return 0;
}

/* ---------------------------------------------------------------- streams */

static int stream_resolve(hir_interp *it, const hir_stream_ref *r, int create, hir_stream **out,
                          hir_error *e)
{
    if (r->number < 0) {
        int64_t k;
        if (interp_eval(it, r->index, &k, e))
            return -1;
        if (k < 0)
            return interp_fail(it, e, "stream index %" PRId64 " is negative", k);
        if (k >= HIR_STREAM_OBJECT_KEY_BASE)
            return interp_fail(it, e, "stream index %" PRId64 " is too large (at most %" PRId64 ")",
                               k, HIR_STREAM_OBJECT_KEY_BASE - 1);
        if (it->be->ops->stream_get(it->be, k, out, e))
            return backend_fail(it, e);
        return 0;
    }
    hir_stream *s = hir_map_get(&it->obj_streams, (uint64_t)r->number);
    if (!s) {
        if (!create)
            return interp_fail(it, e, "Stream %" PRId64 " was never captured or set", r->number);
        if (r->number >= HIR_STREAM_OBJECT_KEY_BASE)
            return interp_fail(it, e, "Stream %" PRId64 ": stream numbers above %" PRId64
                               " are not supported", r->number, HIR_STREAM_OBJECT_KEY_BASE - 1);
        if (it->be->ops->stream_get(it->be, HIR_STREAM_OBJECT_KEY_BASE + r->number, &s, e))
            return backend_fail(it, e);
        if (hir_map_try_put(&it->obj_streams, (uint64_t)r->number, s))
            return interp_oom(it, e, "recording a stream", NULL);
    }
    *out = s;
    return 0;
}

/* ---------------------------------------------------------------- communication */

static int team_index(const int64_t *team, int n, int64_t rank)
{
    for (int i = 0; i < n; i++)
        if (team[i] == rank)
            return i;
    return -1;
}

/* The buffers of a posted transfer stay alive until its Wait, whatever Deallocate does in
 * between (hostir-2026.md §3.8: the 2026 lowering deallocates communication buffers right
 * after the communication, before its Wait). */
typedef struct rt_held {
    rt_buf *b[2];
} rt_held;

static rt_buf *tensor_buf(hir_interp *it, const hir_tensor *t)
{
    rt_val *v = t ? hir_map_get(&it->tensors, (uintptr_t)t) : NULL;
    return v ? v->buf : NULL;
}

static void held_release(hir_interp *it, int64_t number)
{
    rt_held *h = hir_map_get(&it->held, (uint64_t)number);
    if (!h)
        return;
    hir_map_del(&it->held, (uint64_t)number);
    for (int i = 0; i < 2; i++)
        interp_buf_unref(it, h->b[i]);
    free(h);
}

/* -1 with e set when the buffers cannot be held (out of memory): the work posted under number
 * is ended first, so nothing in flight uses a buffer that a Deallocate may free */
static int held_keep(hir_interp *it, int64_t number, const hir_tensor *a, const hir_tensor *b,
                     hir_error *e)
{
    held_release(it, number);
    rt_held *h = calloc(1, sizeof *h);
    if (!h || hir_map_try_put(&it->held, (uint64_t)number, h)) {
        free(h);
        hir_work *w = hir_map_get(&it->works, (uint64_t)number);
        if (w && w != WORK_SKIPPED)
            it->be->ops->work_release(it->be, w);
        hir_map_del(&it->works, (uint64_t)number);
        return interp_oom(it, e, "holding the buffers of posted communication", NULL);
    }
    const hir_tensor *ts[2] = {a, b};
    for (int i = 0; i < 2; i++)
        if ((h->b[i] = tensor_buf(it, ts[i])))
            h->b[i]->refs++;
    return 0;
}

static void held_release_all(hir_interp *it)
{
    for (size_t i = 0; i < it->held.cap; i++) {
        rt_held *h = it->held.vals[i];
        if (it->held.keys[i] != UINT64_MAX && h) {
            for (int k = 0; k < 2; k++)
                interp_buf_unref(it, h->b[k]);
            free(h);
        }
    }
    hir_map_fini(&it->held);
    hir_map_init(&it->held);
}

/* Remembers w for Wait Communication <number>; when it cannot be remembered, w is ended now
 * (hir_interp_destroy could not find it) and the statement fails. */
static int record_work(hir_interp *it, int64_t number, hir_work *w, hir_error *e)
{
    hir_work *old = hir_map_get(&it->works, (uint64_t)number);
    if (old && old != WORK_SKIPPED)
        it->be->ops->work_release(it->be, old);
    if (hir_map_try_put(&it->works, (uint64_t)number, w)) {
        hir_map_del(&it->works, (uint64_t)number);   /* old is released: forget it */
        if (w && w != WORK_SKIPPED)
            it->be->ops->work_release(it->be, w);
        return interp_oom(it, e, "recording posted communication", NULL);
    }
    return 0;
}

/* The team as world ranks, each checked against the job's size. */
static int comm_team(hir_interp *it, const hir_comm *c, int *team, hir_error *e)
{
    if (c->nteam > 1024)
        return interp_fail(it, e, "team of %d ranks is too large", c->nteam);
    for (int i = 0; i < c->nteam; i++) {
        if (c->team[i] < 0 || c->team[i] >= it->cfg.size)
            return interp_fail(it, e, "team member %" PRId64 " is not a rank of this job (%d ranks)",
                               c->team[i], it->cfg.size);
        team[i] = (int)c->team[i];
    }
    return 0;
}

/* The team position of a rooted kind's root (-1 for the others). */
static int comm_root(hir_interp *it, const hir_comm *c, int *root_index, hir_error *e)
{
    *root_index = -1;
    if (!hir_comm_type_has_root(c->type))
        return 0;
    if (!c->root)
        return interp_fail(it, e, "%s needs a root", hir_comm_type_name(c->type));
    int64_t root;
    if (interp_eval(it, c->root, &root, e))
        return -1;
    if (it->form2026) {
        /* 2026 syntax: the evaluated root is a position in the team (hostir-2026.md §3.9) */
        if (root < 0 || root >= c->nteam)
            return interp_fail(it, e, "root %" PRId64 " is not a position in the team of %d "
                               "(in a 2026-syntax program a root is a team position)",
                               root, c->nteam);
        *root_index = (int)root;
        return 0;
    }
    *root_index = team_index(c->team, c->nteam, root);
    if (*root_index < 0)
        return interp_fail(it, e, "root %" PRId64 " is not in the team", root);
    return 0;
}

/* The buffers this rank must have for the kind (§2.5), and the sizes the kinds relate. */
static int comm_buffers(hir_interp *it, const hir_comm *c, bool is_root, hir_view *in,
                        hir_view *out, hir_collective *col, hir_error *e)
{
    int have_in = c->input && interp_bound(it, c->input, in);
    int have_out = c->output && interp_bound(it, c->output, out);
    bool need_in = true, need_out = true;
    switch (c->type) {
    case HIR_COMM_GATHER: need_out = is_root; break;
    case HIR_COMM_SCATTER: need_in = is_root; break;
    case HIR_COMM_REDUCE: need_out = is_root; break;
    case HIR_COMM_BROADCAST: need_in = is_root; need_out = !is_root; break;
    case HIR_COMM_SENDRECV: need_in = is_root; need_out = !is_root || c->nteam == 1; break;
    default: break;
    }
    char tn[32];
    if (need_in && !have_in)
        return interp_fail(it, e, "input %s is not bound",
                           c->input ? interp_tname(c->input, tn, sizeof tn) : "(none printed)");
    if (need_out && !have_out)
        return interp_fail(it, e, "output %s is not bound (no ALLOCATE before it?)",
                           c->output ? interp_tname(c->output, tn, sizeof tn) : "(none printed)");
    col->input = have_in ? in : NULL;
    col->output = have_out ? out : NULL;
    if (!have_in || !have_out)
        return 0;
    int64_t ni = hir_view_numel(in), no = hir_view_numel(out);
    if (c->type == HIR_COMM_ALLGATHER && no != ni * c->nteam)
        return interp_fail(it, e, "output has %" PRId64 " elements, not %d x %" PRId64,
                           no, c->nteam, ni);
    if (c->type == HIR_COMM_ALLTOALL && (no != ni || ni % c->nteam))
        return interp_fail(it, e, "input (%" PRId64 " elements) and output (%" PRId64 ") must have "
                           "equal sizes divisible by the team of %d", ni, no, c->nteam);
    if (c->type == HIR_COMM_REDUCESCATTER && ni != no * c->nteam)
        return interp_fail(it, e, "input has %" PRId64 " elements, not %d x %" PRId64,
                           ni, c->nteam, no);
    return 0;
}

static int exec_communication(hir_interp *it, const hir_stmt *s, hir_error *e)
{
    const hir_comm *c = s->u.comm;
    int my = team_index(c->team, c->nteam, it->cfg.rank);
    if (c->team_truncated)
        return interp_fail(it, e, "the team was printed truncated (\" ...\"): members unknown");
    if (my < 0)
        return record_work(it, c->number, WORK_SKIPPED, e);
    int team[1024];
    hir_collective col = {0};
    if (comm_team(it, c, team, e) || comm_root(it, c, &col.root_index, e))
        return -1;
    col.kind = c->type;
    col.transport = c->backend;
    col.team = team;
    col.team_size = c->nteam;
    col.my_index = my;
    col.op = c->red_op;
    col.stmt_id = (uintptr_t)s;
    hir_view in, out;
    if (comm_buffers(it, c, col.root_index == my, &in, &out, &col, e))
        return -1;
    hir_work *w = NULL;
    if (it->be->ops->collective(it->be, it->cur, &col, &w, e))
        return backend_fail(it, e);
    if (record_work(it, c->number, w ? w : WORK_SKIPPED, e))
        return -1;
    if (w)
        return held_keep(it, c->number, col.input ? c->input : NULL,
                         col.output ? c->output : NULL, e);
    return 0;
}

static int make_p2p(hir_interp *it, const hir_comm *c, hir_p2p *p, hir_error *e)
{
    memset(p, 0, sizeof *p);
    int64_t peer;
    if (interp_eval(it, c->peer, &peer, e))
        return -1;
    if (peer < 0 || peer >= it->cfg.size)
        return interp_fail(it, e, "peer %" PRId64 " is not a rank of this job (%d ranks)", peer,
                           it->cfg.size);
    p->is_send = c->is_send;
    p->peer = (int)peer;
    p->transport = c->backend;
    p->stmt_id = (uintptr_t)c;
    return interp_get(it, c->buffer, &p->buf, e);
}

static int exec_p2p(hir_interp *it, const hir_stmt *s, hir_error *e)
{
    hir_p2p p;
    if (make_p2p(it, s->u.comm, &p, e))
        return -1;
    hir_work *w = NULL;
    if (it->be->ops->p2p_post(it->be, it->cur, &p, &w, e))
        return backend_fail(it, e);
    (p.is_send ? it->p2p_sent : it->p2p_recvd)[p.peer]++;
    if (!it->in_group)
        return record_work(it, s->u.comm->number, w, e);
    if (w)
        it->be->ops->work_release(it->be, w);
    return 0;
}

static int exec_share(hir_interp *it, const hir_stmt *s, hir_error *e)
{
    int n = s->u.share.n;
    hir_p2p *list = calloc((size_t)(n ? n : 1), sizeof *list);
    if (!list)
        return interp_fail(it, e, "out of host memory");
    int rc = 0;
    for (int i = 0; i < n && !rc; i++)
        rc = make_p2p(it, s->u.share.comms[i], &list[i], e);
    if (!rc && it->be->ops->share_handles(it->be, list, n, e))
        rc = backend_fail(it, e);
    free(list);
    return rc;
}

static int exec_wait(hir_interp *it, const hir_stmt *s, hir_error *e)
{
    uint64_t k = (uint64_t)s->u.wait.number;
    hir_work *w = hir_map_get(&it->works, k);
    if (!w)
        return interp_fail(it, e, "nothing was posted for expression %" PRId64
                           " on this rank (or it was already waited for)", s->u.wait.number);
    hir_map_del(&it->works, k);
    if (w == WORK_SKIPPED)
        return 0;
    if (it->be->ops->wait(it->be, it->cur, w, e))
        return backend_fail(it, e);
    held_release(it, s->u.wait.number);
    return 0;
}

/* ---------------------------------------------------------------- CollectivePermute */

static const hir_sexpr *bin_def(const hir_scalar *s, int op)
{
    if (!s || !s->def || s->def->kind != HIR_SX_BINARY || s->def->op != op || s->def->nargs != 2)
        return NULL;
    return s->def;
}

static int int_lit(const hir_scalar *s, int64_t *v)
{
    if (!s || s->kind != HIR_SC_INT || s->def)
        return 0;
    *v = s->ival;
    return 1;
}

/* The two peer shapes of nvFuser's dispatchSwizzle1D (hostir-2026.md §3.10):
 * recv_peer = ( ( x + t ) % n ), send_peer = ( ( n + ( t - x ) ) % n ), with the same loop
 * variable x and the same integer constants t and n in both. */
static int ring_match(const hir_comm *c, const hir_scalar **x, int64_t *n)
{
    int cr;
    const hir_sexpr *m, *a, *m2, *a2, *d2;
    int64_t n1, t1, n2, n3, t2, k;
    if (!(m = bin_def(c->recv_peer, HIR_BIN_MOD)) || !int_lit(m->args[1], &n1) ||
        !(a = bin_def(m->args[0], HIR_BIN_ADD)) || !int_lit(a->args[1], &t1))
        return 0;
    if (!(m2 = bin_def(c->send_peer, HIR_BIN_MOD)) || !int_lit(m2->args[1], &n2) ||
        !(a2 = bin_def(m2->args[0], HIR_BIN_ADD)) || !int_lit(a2->args[0], &n3) ||
        !(d2 = bin_def(a2->args[1], HIR_BIN_SUB)) || !int_lit(d2->args[0], &t2))
        return 0;
    const hir_scalar *xr = a->args[0], *xs = d2->args[1];
    if (n1 != n2 || n2 != n3 || t1 != t2 || n1 <= 0 || !xr || !xs ||
        !(xr == xs || hir_scalar_equal(xr, xs)))
        return 0;
    if ((cr = hir_scalar_eval(xr, NULL, &k, NULL, 0)) != -1)
        return cr == HIR_ENOMEM ? -1 : 0;   /* a constant is no loop variable */
    *x = xr;
    *n = n1;
    return 1;
}

static bool same_scalar(const hir_scalar *a, const hir_scalar *b)
{
    return a == b || (a && b && hir_scalar_equal(a, b));
}

static rt_ring *find_ring(hir_interp *it, const hir_block *b, const hir_scalar *x)
{
    for (int i = 0; i < hir_block_size(b); i++) {
        const hir_stmt *s = hir_block_at(b, i);
        rt_ring *r = NULL;
        if (s->op == HIR_OP_CPERM && (r = hir_map_get(&it->rings, (uintptr_t)s)) &&
            same_scalar(r->x, x))
            return r;
        if ((r = find_ring(it, &s->body, x)) || (r = find_ring(it, &s->else_body, x)))
            return r;
    }
    return NULL;
}

/* -1: out of memory */
static int mark_shards(hir_interp *it, const hir_block *b, rt_ring *r)
{
    for (int i = 0; i < hir_block_size(b); i++) {
        const hir_stmt *s = hir_block_at(b, i);
        if (s->op == HIR_OP_SHARD_BY_STREAM && !hir_map_get(&it->swizzled, (uintptr_t)s) &&
            hir_map_try_put(&it->swizzled, (uintptr_t)s, r))
            return -1;
        if (mark_shards(it, &s->body, r) || mark_shards(it, &s->else_body, r))
            return -1;
    }
    return 0;
}

/* Once per interpreter: the program's generation, the ring steps and the swizzled
 * ShardByStreams of their loops. -1: out of memory. */
static int scan_2026(hir_interp *it, const hir_block *b, int depth)
{
    if (depth > HIR_MAX_NESTING)
        return 0;   /* exec_block refuses such a program before anything runs */
    for (int i = 0; i < hir_block_size(b); i++) {
        const hir_stmt *s = hir_block_at(b, i);
        if (s->form == HIR_FORM_2026 || s->op == HIR_OP_HIR_ALLOCATE || s->op == HIR_OP_CPERM ||
            s->op == HIR_OP_DISPATCH || s->op == HIR_OP_COMBINE ||
            (s->op == HIR_OP_COMMUNICATION && s->u.comm && s->u.comm->type == HIR_COMM_ALLTOALL))
            it->form2026 = 1;
        const hir_scalar *x;
        int64_t n;
        int m = s->op == HIR_OP_CPERM && s->u.comm ? ring_match(s->u.comm, &x, &n) : 0;
        if (m < 0)
            return -1;
        if (m && n == s->u.comm->nteam) {
            rt_ring *r = calloc(1, sizeof *r);
            if (!r || hir_map_try_put(&it->rings, (uintptr_t)s, r)) {
                free(r);
                return -1;
            }
            r->x = x;
            r->n = n;
            r->pos = team_index(s->u.comm->team, s->u.comm->nteam, it->cfg.rank);
        }
        if (scan_2026(it, &s->body, depth + 1) || scan_2026(it, &s->else_body, depth + 1))
            return -1;
        const hir_scalar *idx = s->op == HIR_OP_FOR ? s->u.kfor.index
                                : s->op == HIR_OP_HOST_FOR ? s->u.hfor.index : NULL;
        rt_ring *r;
        if (idx && (r = find_ring(it, &s->body, idx)) && mark_shards(it, &s->body, r))
            return -1;
    }
    return 0;
}

static int exec_cperm(hir_interp *it, const hir_stmt *s, hir_error *e)
{
    const hir_comm *c = s->u.comm;
    if (c->team_truncated)
        return interp_fail(it, e, "the team was printed truncated (\" ...\"): members unknown");
    int my = team_index(c->team, c->nteam, it->cfg.rank);
    if (my < 0)
        return record_work(it, c->number, WORK_SKIPPED, e);
    for (int i = 0; i < c->nteam; i++)
        if (c->team[i] < 0 || c->team[i] >= it->cfg.size)
            return interp_fail(it, e, "team member %" PRId64 " is not a rank of this job (%d ranks)",
                               c->team[i], it->cfg.size);
    int64_t sp, rp;
    rt_ring *ring = hir_map_get(&it->rings, (uintptr_t)s);
    if (ring) {
        /* a ring step printed on rank 0: this rank's position takes the place of t */
        int64_t x;
        if (interp_eval(it, ring->x, &x, e))
            return -1;
        if (hir_iop_add(x, my, &rp) || hir_iop_mod(rp, ring->n, &rp) ||
            hir_iop_sub(my, x, &sp) || hir_iop_add(ring->n, sp, &sp) ||
            hir_iop_mod(sp, ring->n, &sp))
            return interp_fail(it, e, "integer overflow in the ring peers (loop variable %" PRId64
                               ")", x);
    } else if (interp_eval(it, c->send_peer, &sp, e) || interp_eval(it, c->recv_peer, &rp, e)) {
        return -1;
    }
    if (sp < 0 || sp >= c->nteam)
        return interp_fail(it, e, "send_peer %" PRId64 " is not a position in the team of %d",
                           sp, c->nteam);
    if (rp < 0 || rp >= c->nteam)
        return interp_fail(it, e, "recv_peer %" PRId64 " is not a position in the team of %d",
                           rp, c->nteam);
    hir_view in, out;
    if (interp_get(it, c->input, &in, e) || interp_get(it, c->output, &out, e))
        return -1;
    if (hir_view_numel(&in) != hir_view_numel(&out))
        return interp_fail(it, e, "input has %" PRId64 " elements, output %" PRId64,
                           hir_view_numel(&in), hir_view_numel(&out));
    if (in.dtype != out.dtype)
        return interp_fail(it, e, "input is %s, output %s", hir_dtype_name(in.dtype),
                           hir_dtype_name(out.dtype));
    if (sp == my && rp == my) {
        /* both peers are this rank: a local copy, nothing posted (the Wait is a no-op) */
        hir_view src = in;
        if (in.ndim != out.ndim || memcmp(in.shape, out.shape, sizeof(int64_t) * (size_t)in.ndim)) {
            if (!hir_view_is_contiguous(&in))
                return interp_fail(it, e, "input and output shapes differ and the input is not "
                                   "contiguous");
            hir_view_init(&src, in.data, in.dtype, out.ndim, out.shape);
        }
        if (hir_view_numel(&out) && it->be->ops->copy(it->be, it->cur, &out, &src, e))
            return backend_fail(it, e);
        return record_work(it, c->number, WORK_SKIPPED, e);
    }
    if (it->in_group)
        return interp_fail(it, e, "CollectivePermute inside StartCoalescing is not supported");
    /* one grouped send/receive pair (NCCL: ncclSend/ncclRecv in a group; CPU: MPI) */
    hir_p2p snd = {1, (int)c->team[sp], c->backend, in, (uintptr_t)c};
    hir_p2p rcv = {0, (int)c->team[rp], c->backend, out, (uintptr_t)c};
    hir_work *w = NULL, *none = NULL;
    if (it->be->ops->group_begin(it->be, e))
        return backend_fail(it, e);
    int rc = it->be->ops->p2p_post(it->be, it->cur, &snd, &none, e);
    if (!rc)
        rc = it->be->ops->p2p_post(it->be, it->cur, &rcv, &none, e);
    hir_error e2 = {{0}, -1};
    int rc2 = it->be->ops->group_end(it->be, it->cur, &w, rc ? &e2 : e);
    if (rc || rc2) {
        if (w)
            it->be->ops->work_release(it->be, w);
        return backend_fail(it, e);
    }
    if (record_work(it, c->number, w ? w : WORK_SKIPPED, e))
        return -1;
    if (w)
        return held_keep(it, c->number, c->input, c->output, e);
    return 0;
}

/* ---------------------------------------------------------------- Dispatch / Combine */

/* What a Dispatch returned on this rank, the printed and the unprinted outputs
 * (hostir-2026.md §3.11): the Combine that follows needs the counts and the token number. */
typedef struct rt_moe {
    hir_view v[6];          /* x, topk_idx, topk_weights, src_idx, send_counts, recv_counts */
    rt_buf *buf[6];
    int64_t tokens;         /* T: rows of the Dispatch's in */
} rt_moe;

static void moe_free(hir_interp *it, rt_moe *m)
{
    for (int i = 0; i < 6; i++)
        interp_buf_unref(it, m->buf[i]);
    free(m);
}

/* backend memory handed over by the backend (hir_moe_routed); when no record can be made for
 * it (out of memory), the memory goes back to the backend and the result is NULL */
static rt_buf *buf_adopt(hir_interp *it, void *ptr, const hir_view *v)
{
    rt_buf *b = calloc(1, sizeof *b);
    if (!b) {
        if (ptr)
            it->be->ops->free(it->be, ptr);
        return NULL;
    }
    b->ptr = ptr;
    b->bytes = hir_view_bytes(v);
    b->refs = 1;
    return b;
}

/* Outputs with data-dependent sizes: free symbols among t's extents take the runtime sizes. */
static int bind_extents(hir_interp *it, const hir_tensor *t, const hir_view *v, hir_error *e)
{
    int d = 0;
    for (int k = 0; k < t->nloop && d < v->ndim; k++) {
        const hir_iterdomain *id = interp_axes(it, t)[k];
        if (!axis_is_runtime(id))
            continue;
        int64_t cur;
        if (id->extent && id->extent->kind == HIR_SC_SYMBOL && !id->extent->def &&
            env_lookup(it, id->extent, &cur) != 0 && bind_scalar(it, id->extent, v->shape[d], e))
            return -1;
        d++;
    }
    return 0;
}

static int bind_routed(hir_interp *it, const hir_tensor *t, const rt_moe *m, int k,
                       const char *what, hir_error *e)
{
    if (!t)
        return 0;
    int nd = 0;
    for (int i = 0; i < t->nloop; i++)
        nd += axis_is_runtime(interp_axes(it, t)[i]);
    char tn[32];
    if (nd != m->v[k].ndim)
        return interp_fail(it, e, "%s has %d axes; the Dispatch's %s have %d",
                           interp_tname(t, tn, sizeof tn), nd, what, m->v[k].ndim);
    if (interp_bind(it, t, &m->v[k], m->buf[k], e))
        return -1;
    return bind_extents(it, t, &m->v[k], e);
}

static int exec_dispatch(hir_interp *it, const hir_stmt *s, hir_error *e)
{
    if (!it->be->ops->moe_dispatch)
        return interp_fail(it, e, "the %s backend does not route MoE tokens (Dispatch and Combine "
                           "run on --device=cpu)", it->be->ops->name);
    hir_moe_dispatch d;
    memset(&d, 0, sizeof d);
    if (interp_get(it, hir_value_tensor(s->in[0]), &d.x, e) ||
        interp_get(it, hir_value_tensor(s->in[1]), &d.topk_idx, e) ||
        interp_get(it, hir_value_tensor(s->in[2]), &d.topk_weights, e))
        return -1;
    d.num_experts = s->u.moe->num_experts;
    d.transport = s->u.moe->backend;
    hir_moe_routed r;
    if (it->be->ops->moe_dispatch(it->be, it->cur, &d, &r, e))
        return backend_fail(it, e);
    const hir_view *vs[6] = {&r.x, &r.topk_idx, &r.topk_weights, &r.src_idx, &r.send_counts,
                             &r.recv_counts};
    rt_moe *m = calloc(1, sizeof *m);
    bool lost = !m;
    for (int i = 0; i < 6; i++) {
        if (lost) {   /* the routed memory goes back to the backend */
            if (vs[i]->data)
                it->be->ops->free(it->be, vs[i]->data);
            continue;
        }
        m->v[i] = *vs[i];
        lost = !(m->buf[i] = buf_adopt(it, vs[i]->data, vs[i]));
    }
    if (!lost) {
        m->tokens = d.x.shape[0];
        rt_moe *old = hir_map_get(&it->moe, (uintptr_t)s);
        if (hir_map_try_put(&it->moe, (uintptr_t)s, m)) {
            lost = true;
        } else if (old) {
            moe_free(it, old);
        }
    }
    if (lost) {
        if (m)
            moe_free(it, m);
        return interp_oom(it, e, "keeping the tokens a Dispatch routed", NULL);
    }
    if (bind_routed(it, s->out, m, 0, "received tokens", e) ||
        bind_routed(it, s->u.moe->hidden[0], m, 2, "received topk_weights", e) ||
        bind_routed(it, s->u.moe->hidden[1], m, 3, "src_idx", e))
        return -1;
    return 0;
}

static int exec_combine(hir_interp *it, const hir_stmt *s, hir_error *e)
{
    if (!it->be->ops->moe_combine)
        return interp_fail(it, e, "the %s backend does not route MoE tokens (Dispatch and Combine "
                           "run on --device=cpu)", it->be->ops->name);
    const hir_stmt *ds = s->u.moe->dispatch;
    rt_moe *m = ds ? hir_map_get(&it->moe, (uintptr_t)ds) : NULL;
    if (!m)
        return interp_fail(it, e, "no Dispatch whose out= is this in= ran before it (its token "
                           "counts are unknown)");
    hir_moe_combine c;
    memset(&c, 0, sizeof c);
    if (interp_get(it, hir_value_tensor(s->in[0]), &c.x, e) ||
        interp_get(it, hir_value_tensor(s->in[2]), &c.src_idx, e))
        return -1;
    c.send_counts = m->v[4];
    c.transport = s->u.moe->backend;
    c.recv_counts = m->v[5];
    if (c.x.ndim != 2)
        return interp_fail(it, e, "in has %d axes, tokens are [R, H]", c.x.ndim);
    int64_t shape[2] = {m->tokens, c.x.shape[1]};
    if (!interp_bound(it, s->out, &c.out) &&
        interp_bind_new(it, s->out, 2, shape, &c.out, e))
        return -1;
    if (it->be->ops->moe_combine(it->be, it->cur, &c, e))
        return backend_fail(it, e);
    return bind_extents(it, s->out, &c.out, e);
}

/* ---------------------------------------------------------------- fresh ALLOCATE */

/* ALLOCATE(mem_type=…, zero_init=…): a new buffer every time the statement executes
 * (hostir-2026.md §3.7); each execution in a run gets its own (interp_bind_new's slots). */
static int exec_hir_allocate(hir_interp *it, const hir_stmt *s, hir_error *e)
{
    hir_shard sh;
    if (hir_interp_shard(it, s->out, &sh, e))
        return -1;
    /* inside a loop the storage of a stream-parallel axis is this iteration's chunk: the
     * FEC lowering allocates there exactly the tensors whose storage is stream-parallel
     * (hostir-2026.md §4.2); at top level the axis counts whole */
    if (it->loops > 0) {
        int d = 0;
        for (int i = 0; i < s->out->nloop; i++) {
            const hir_iterdomain *id = interp_axes(it, s->out)[i];
            if (!axis_is_runtime(id))
                continue;
            if (hir_ptype_is_stream(id->ptype) && d < sh.ndim)
                sh.local[d] = 1;
            d++;
        }
    }
    hir_view v;
    if (interp_bind_new(it, s->out, sh.ndim, sh.local, &v, e))
        return -1;
    if (s->u.alloc.zero_init && hir_view_numel(&v) &&
        it->be->ops->fill(it->be, it->cur, &v, 0.0, e))
        return backend_fail(it, e);
    return 0;
}

/* ---------------------------------------------------------------- ALLOCATE, kernels */

static int exec_allocate(hir_interp *it, const hir_stmt *s, hir_error *e)
{
    if (interp_bound(it, s->out, NULL))
        return 0;
    hir_shard sh;
    if (hir_interp_shard(it, s->out, &sh, e))
        return -1;
    hir_view v;
    hir_view_init(&v, NULL, s->out->dtype, sh.ndim, sh.local);
    size_t bytes = hir_view_bytes(&v);
    rt_buf *b = hir_map_get(&it->alloc_cache, (uintptr_t)s);
    if (b && b->bytes != bytes) {
        char tn[32];
        return interp_fail(it, e, "%s: the allocation cache holds %zu bytes for this statement, "
                           "the shape now needs %zu", interp_tname(s->out, tn, sizeof tn),
                           b->bytes, bytes);
    }
    if (!b) {
        if (!(b = interp_buf_new(it, bytes, e)))
            return -1;
        if (hir_map_try_put(&it->alloc_cache, (uintptr_t)s, b)) {
            interp_buf_unref(it, b);
            char tn[32];
            return interp_oom(it, e, "caching the allocation of", interp_tname(s->out, tn, sizeof tn));
        }
        v.data = b->ptr;
        /* zero_init only on a fresh buffer, as nvFuser's cache does */
        if (s->u.alloc.zero_init && hir_view_numel(&v) &&
            it->be->ops->fill(it->be, it->cur, &v, 0.0, e))
            return backend_fail(it, e);
    }
    v.data = b->ptr;
    return interp_bind(it, s->out, &v, b, e);
}

static int exec_kernel(hir_interp *it, const hir_stmt *s, hir_error *e)
{
    if (s->op == HIR_OP_POST_ON_STREAM)
        return interp_fail(it, e, "needs a kernel: HostUnit%" PRId64
                           " is a fusion that only nvFuser can compile", s->u.kernel.number);
    if (s->u.kernel.number < 0)
        return interp_fail(it, e, "needs a kernel: this LaunchKernel prints no group index"
                           " (nvFuser's layout of early 2025), so no --kernel GROUP=FILE names it");
    if (it->be->ops->launch_kernel) {
        int ni = s->u.kernel.ninputs, no = s->nin - ni;
        const hir_view *ins[64], *outs[64];
        hir_view vals[128];
        if (ni > 64 || no > 64)
            return interp_fail(it, e, "too many kernel arguments");
        for (int i = 0; i < s->nin; i++) {
            hir_tensor *t = hir_value_tensor(s->in[i]);
            if (!t)
                return interp_fail(it, e, "scalar kernel arguments are not supported");
            if (interp_get(it, t, &vals[i], e))
                return -1;
            if (i < ni)
                ins[i] = &vals[i];
            else
                outs[i - ni] = &vals[i];
        }
        if (it->be->ops->launch_kernel(it->be, it->cur, (int)s->u.kernel.number, ins, ni, outs,
                                       no, e))
            return backend_fail(it, e);
        return 0;
    }
    return interp_fail(it, e, "needs a kernel: group %" PRId64
                       " has none (give --kernel %" PRId64 "=FILE on --device=cuda)",
                       s->u.kernel.number, s->u.kernel.number);
}

/* ---------------------------------------------------------------- statements */

static int exec_block(hir_interp *it, const hir_block *b, hir_error *e);

static void trace_stmt(hir_interp *it, const hir_stmt *s)
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
    if (it->sc_stream_idx && env_lookup(it, it->sc_stream_idx, &v) == 0)
        fprintf(it->cfg.trace, "   [streamIdx=%" PRId64 "]", v);
    fputc('\n', it->cfg.trace);
}

static int exec_loop(hir_interp *it, const hir_scalar *idx, int64_t start, int64_t stop,
                     const hir_block *body, hir_error *e)
{
    int64_t trips;
    if (stop > start && (hir_sub_overflow(stop, start, &trips) || trips > HIR_MAX_LOOP_TRIPS))
        return interp_fail(it, e, "the loop from %" PRId64 " to %" PRId64 " would run more than %" PRId64
                           " iterations (HIR_MAX_LOOP_TRIPS), refused before its first",
                           start, stop, (int64_t)HIR_MAX_LOOP_TRIPS);
    rt_scalar *slot = scalar_slot(&it->scalars, idx);
    char sn[96];
    if (!slot)
        return interp_oom(it, e, "binding", scalar_name(idx, sn, sizeof sn));
    rt_scalar saved = *slot;
    it->loops++;
    for (int64_t i = start; i < stop; i++) {
        slot = scalar_slot(&it->scalars, idx);   /* the body may have grown the table */
        slot->v = i;
        slot->bound = 1;
        if (exec_block(it, body, e)) {
            it->loops--;
            return -1;
        }
    }
    it->loops--;
    *scalar_slot(&it->scalars, idx) = saved;
    return 0;
}

/* The statement hooks (watchdog, fault injection, benchmarks, progress), in the order added:
 * 0 runs the statement, 1 skips it, -1 fails. */
static int hooks_before(hir_interp *it, const hir_stmt *s, hir_error *e)
{
    for (int i = 0; i < it->nhooks; i++) {
        int h = it->hooks[i].before ? it->hooks[i].before(it->hooks[i].ctx, it, s, e) : 0;
        if (h)
            return h < 0 ? -1 : 1;
    }
    return 0;
}

static void hooks_after(hir_interp *it, const hir_stmt *s)
{
    for (int i = 0; i < it->nhooks; i++)
        if (it->hooks[i].after)
            it->hooks[i].after(it->hooks[i].ctx, it, s);
}

/* ---------------------------------------------------------------- statements, one entry each */

static int exec_get_stream(hir_interp *it, const hir_stmt *s, hir_error *e)
{
    if (s->u.stream.number < 0)
        return interp_fail(it, e, "GetCurrentStream into an indexed stream is not supported");
    if (!hir_map_get(&it->obj_streams, (uint64_t)s->u.stream.number) &&
        hir_map_try_put(&it->obj_streams, (uint64_t)s->u.stream.number, it->cur))
        return interp_oom(it, e, "recording a stream", NULL);
    return 0;
}

static int exec_set_stream(hir_interp *it, const hir_stmt *s, hir_error *e)
{
    hir_stream *st;
    int rc = stream_resolve(it, &s->u.stream, 1, &st, e);
    if (!rc)
        it->cur = st;
    return rc;
}

static int exec_sync_stream(hir_interp *it, const hir_stmt *s, hir_error *e)
{
    hir_stream *st;
    int rc = stream_resolve(it, &s->u.stream, 1, &st, e);
    if (!rc && st != it->cur && it->be->ops->stream_wait(it->be, it->cur, st, e))
        rc = backend_fail(it, e);
    return rc;
}

static int exec_for(hir_interp *it, const hir_stmt *s, hir_error *e)
{
    int64_t start = 0, stop;
    const hir_iterdomain *id = s->u.kfor.id;
    if (extent_of(it, id, &stop, e) ||
        (hir_id_start(id) && interp_eval(it, hir_id_start(id), &start, e)) ||
        (hir_id_stop(id) && interp_eval(it, hir_id_stop(id), &stop, e)))
        return -1;
    return exec_loop(it, s->u.kfor.index, start, stop, &s->body, e);
}

static int exec_host_for(hir_interp *it, const hir_stmt *s, hir_error *e)
{
    int64_t a, b;
    if (interp_eval(it, s->u.hfor.start, &a, e) || interp_eval(it, s->u.hfor.stop, &b, e))
        return -1;
    return exec_loop(it, s->u.hfor.index, a, b, &s->body, e);
}

static int exec_if(hir_interp *it, const hir_stmt *s, hir_error *e)
{
    int64_t c;
    if (interp_eval(it, s->u.cond.pred, &c, e))
        return -1;
    return exec_block(it, c ? &s->body : &s->else_body, e);
}

static int exec_sym_view(hir_interp *it, const hir_stmt *s, hir_error *e)
{
    (void)s;
    return interp_fail(it, e, "SymmetricContiguousView needs symmetric memory, which no "
                       "backend provides");
}

static int exec_kernel_level(hir_interp *it, const hir_stmt *s, hir_error *e)
{
    (void)s;
    return interp_fail(it, e, "a kernel-level load/store cannot run on the host");
}

static int exec_start_coal(hir_interp *it, const hir_stmt *s, hir_error *e)
{
    (void)s;
    if (it->in_group)
        return interp_fail(it, e, "StartCoalescing inside an open coalescing group");
    if (it->be->ops->group_begin(it->be, e))
        return backend_fail(it, e);
    it->in_group = 1;
    return 0;
}

/* EndCoalescing n: close the group and record its work under n; one read without its number
 * (nvFuser before 2025-06-03) cannot be named by a Wait, so the stream waits for it now */
static int exec_end_coal(hir_interp *it, const hir_stmt *s, hir_error *e)
{
    hir_work *w = NULL;
    if (!it->in_group)
        return interp_fail(it, e, "EndCoalescing without StartCoalescing");
    it->in_group = 0;
    if (it->be->ops->group_end(it->be, it->cur, &w, e))
        return backend_fail(it, e);
    if (s->u.comm->number_unprinted)
        return w && it->be->ops->wait(it->be, it->cur, w, e) ? backend_fail(it, e) : 0;
    return record_work(it, s->u.comm->number, w ? w : WORK_SKIPPED, e);
}

static int exec_deallocate(hir_interp *it, const hir_stmt *s, hir_error *e)
{
    (void)e;
    hir_tensor *t = hir_value_tensor(s->in[0]);
    if (!t)
        return 0;
    interp_unbind(it, t);
    /* Deallocate means "release the memory": results kept for reuse go too */
    for (size_t i = 0; i < it->result_cache.cap; i++) {
        rt_result *r = it->result_cache.vals[i];
        if (it->result_cache.keys[i] != UINT64_MAX && r && r->t == t) {
            result_free(it, r);
            hir_map_del(&it->result_cache, it->result_cache.keys[i]);
        }
    }
    return 0;
}

static int exec_scalar_def(hir_interp *it, const hir_stmt *s, hir_error *e)
{
    /* A symbol that carries its own definition is evaluated where used; a statement-only
     * definition binds its current value. */
    hir_scalar tmp = {0};
    tmp.head.kind = HIR_VAL_SCALAR;
    tmp.kind = HIR_SC_ANON;
    tmp.dtype = s->u.sdef.out->dtype;
    tmp.def = s->u.sdef.def;
    int64_t v;
    if (interp_eval(it, &tmp, &v, e))
        return -1;
    return s->u.sdef.out->def ? 0 : bind_scalar(it, s->u.sdef.out, v, e);
}

/* What each statement kind does, indexed by the op table (dialect/defs/ops.def). A kind
 * without an entry cannot run here; the message names it by its keyword. */
typedef int (*exec_fn)(hir_interp *it, const hir_stmt *s, hir_error *e);
static const exec_fn exec_table[HIR_OP_COUNT] = {
    [HIR_OP_ALLOCATE] = exec_allocate,
    [HIR_OP_HIR_ALLOCATE] = exec_hir_allocate,
    [HIR_OP_DEALLOCATE] = exec_deallocate,
    [HIR_OP_GET_STREAM] = exec_get_stream,
    [HIR_OP_SET_STREAM] = exec_set_stream,
    [HIR_OP_SYNC_STREAM] = exec_sync_stream,
    [HIR_OP_FOR] = exec_for,
    [HIR_OP_HOST_FOR] = exec_host_for,
    [HIR_OP_IF] = exec_if,
    [HIR_OP_SCALAR_DEF] = exec_scalar_def,
    [HIR_OP_ALIAS_SELECT] = ops_alias_select,
    [HIR_OP_SELECT] = ops_alias_select,
    [HIR_OP_SHARD_BY_STREAM] = ops_shard_by_stream,
    [HIR_OP_SYM_VIEW] = exec_sym_view,
    [HIR_OP_SET] = ops_set,
    [HIR_OP_SEGMENTER_SET] = ops_set,
    [HIR_OP_LDMATRIX] = exec_kernel_level,
    [HIR_OP_STMATRIX] = exec_kernel_level,
    [HIR_OP_CPASYNC] = exec_kernel_level,
    [HIR_OP_CPASYNC_BULK] = exec_kernel_level,
    [HIR_OP_CPASYNC_TILE] = exec_kernel_level,
    [HIR_OP_LDTMEM] = exec_kernel_level,
    [HIR_OP_STTMEM] = exec_kernel_level,
    [HIR_OP_LINEAR] = ops_linear,
    [HIR_OP_MATMUL] = ops_matmul,
    [HIR_OP_UNARY] = ops_elementwise,
    [HIR_OP_BINARY] = ops_elementwise,
    [HIR_OP_TERNARY] = ops_elementwise,
    [HIR_OP_REDUCTION] = ops_reduction,
    [HIR_OP_SLICE] = ops_slice,
    [HIR_OP_VIEW] = ops_view,
    [HIR_OP_BROADCAST] = ops_flags,
    [HIR_OP_SQUEEZE] = ops_flags,
    [HIR_OP_SDPA] = ops_sdpa,
    [HIR_OP_SDPA_BWD] = ops_sdpa_bwd,
    [HIR_OP_EXPAND] = ops_expand,
    [HIR_OP_FULL] = ops_full,
    [HIR_OP_GROUPED_MMA] = ops_grouped_mma,
    [HIR_OP_COMMUNICATION] = exec_communication,
    [HIR_OP_P2P] = exec_p2p,
    [HIR_OP_WAIT] = exec_wait,
    [HIR_OP_START_COAL] = exec_start_coal,
    [HIR_OP_END_COAL] = exec_end_coal,
    [HIR_OP_SHARE_HANDLES] = exec_share,
    [HIR_OP_POST_ON_STREAM] = exec_kernel,
    [HIR_OP_LAUNCH_KERNEL] = exec_kernel,
    [HIR_OP_CPERM] = exec_cperm,
    [HIR_OP_DISPATCH] = exec_dispatch,
    [HIR_OP_COMBINE] = exec_combine,
};

static int exec_stmt(hir_interp *it, const hir_stmt *s, hir_error *e)
{
    it->stmt = s;
    int hooked = hooks_before(it, s, e);
    if (hooked)
        return hooked < 0 ? -1 : 0;         /* skip: the statement silently does nothing */
    if (it->cfg.trace)
        trace_stmt(it, s);
    exec_fn fn = (unsigned)s->op < HIR_OP_COUNT ? exec_table[s->op] : NULL;
    int rc;
    if (fn) {
        rc = fn(it, s, e);
    } else {
        const hir_opinfo *op = (unsigned)s->op < HIR_OP_COUNT ? &hir_ops[s->op] : NULL;
        rc = interp_fail(it, e, "statement %s cannot run on the host",
                         !op ? "?" : op->keyword ? op->keyword : op->enum_name);
    }
    it->stmt = s;
    hooks_after(it, s);
    return rc;
}

static int exec_block(hir_interp *it, const hir_block *b, hir_error *e)
{
    if (++it->depth > HIR_MAX_NESTING) {
        it->depth--;
        return interp_fail(it, e, "statements nested more than %d deep", HIR_MAX_NESTING);
    }
    for (int i = 0; i < hir_block_size(b); i++)
        if (exec_stmt(it, hir_block_at(b, i), e)) {
            it->depth--;
            return -1;
        }
    it->depth--;
    return 0;
}

/* ---------------------------------------------------------------- API */

/* The named scalars the interpreter binds itself (made if the program never names them) and the
 * interned --bind names live in the program's arena, which has no recovery point once the
 * program is accepted: this one makes running out of memory there an error. Only heap objects
 * are changed between setjmp and a jump. */
static int program_lookups(hir_interp *it, const char **names, const char **interned, int n)
{
    jmp_buf jb;
    jmp_buf *outer = hir_arena_on_oom(it->p->arena, &jb);
    if (setjmp(jb)) {
        hir_arena_on_oom(it->p->arena, outer);
        return -1;
    }
    it->sc_rank = hir_scalar_named(it->p, "rank");
    it->sc_nstreams = hir_scalar_named(it->p, "numberOfStreams");
    it->sc_stream_idx = hir_scalar_named(it->p, "streamIdx");
    for (int i = 0; i < n; i++)
        interned[i] = hir_program_intern(it->p, names[i]);
    hir_arena_on_oom(it->p->arena, outer);
    return 0;
}

/* hir_block_walk: stops (false) at a loop whose index is ctx */
static bool not_loop_index(hir_stmt *s, int depth, void *ctx)
{
    (void)depth;
    return !((s->op == HIR_OP_FOR && s->u.kfor.index == ctx) ||
             (s->op == HIR_OP_HOST_FOR && s->u.hfor.index == ctx));
}

int hir_interp_create(hir_program *p, hir_backend *be, const hir_interp_config *cfg,
                      hir_interp **out, hir_error *e)
{
    hir_interp *it = calloc(1, sizeof *it);
    if (!it)
        return hir_error_set(e, "out of host memory");
    it->p = p;
    it->be = be;
    it->cfg = *cfg;
    if (it->cfg.num_streams <= 0)
        it->cfg.num_streams = 4;
    hir_map_init(&it->tensors);
    hir_map_init(&it->scalars);
    hir_map_init(&it->user_scalars);
    hir_map_init(&it->alloc_cache);
    hir_map_init(&it->result_cache);
    hir_map_init(&it->obj_streams);
    hir_map_init(&it->works);
    hir_map_init(&it->rings);
    hir_map_init(&it->swizzled);
    hir_map_init(&it->held);
    hir_map_init(&it->moe);
    hir_map_init(&it->ew_plans);
    int n = it->cfg.size > 0 ? it->cfg.size : 1;
    it->p2p_sent = calloc((size_t)n, sizeof *it->p2p_sent);
    it->p2p_recvd = calloc((size_t)n, sizeof *it->p2p_recvd);
    if (!it->p2p_sent || !it->p2p_recvd || scan_2026(it, &p->body, 0)) {
        hir_interp_destroy(it);
        return hir_error_set(e, "out of memory (while making the interpreter's tables)");
    }
    it->cur = be->ops->stream_main(be);
    const char *names[64], *interned[64];
    int nb = cfg->nbinds < 64 ? cfg->nbinds : 64;
    for (int i = 0; i < nb; i++)
        names[i] = cfg->binds[i].name;
    if (cfg->nbinds > 64 || program_lookups(it, names, interned, nb)) {
        hir_interp_destroy(it);
        return hir_error_set(e, "%s", cfg->nbinds > 64 ? "more than 64 --bind"
                             : "out of memory (while looking up the program's named scalars)");
    }
    /* user bindings by printed name: symbols i<k>/b<k>/..., or named scalars */
    for (int i = 0; i < nb; i++) {
        const char *nm = cfg->binds[i].name;
        const hir_scalar *s = NULL;
        size_t pl = strcspn(nm, "0123456789");
        if (pl && nm[pl] && strspn(nm + pl, "0123456789") == strlen(nm + pl)) {
            int64_t num = strtoll(nm + pl, NULL, 10);
            const hir_scalar *c = hir_map_get(&p->symbols, (uint64_t)num);
            if (c && c->name && strlen(c->name) == pl && !strncmp(c->name, nm, pl))
                s = c;
        }
        if (!s)
            s = hir_map_get(&p->named, (uintptr_t)interned[i]);
        if (!s) {
            hir_interp_destroy(it);
            return hir_error_set(e, "--bind %s: the program has no scalar of that name", nm);
        }
        /* a value the run gives itself would shadow the binding, or the binding the program */
        const char *why = s == it->sc_rank ? "the runner sets it to each rank's number"
                          : s == it->sc_nstreams ? "the runner sets it (give --streams=N)"
                          : s->def ? "the program defines it"
                          : !hir_block_walk(&p->body, 0, not_loop_index, (void *)s)
                          ? "it is the index of a loop of the program" : NULL;
        if (why) {
            hir_interp_destroy(it);
            return hir_error_set(e, "--bind %s: %s", nm, why);
        }
        if (hir_interp_bind_scalar(it, s, cfg->binds[i].value, e)) {
            hir_interp_destroy(it);
            return -1;
        }
    }
    *out = it;
    return 0;
}

void hir_interp_p2p_counts(const hir_interp *it, const int64_t **sent, const int64_t **recvd)
{
    *sent = it->p2p_sent;
    *recvd = it->p2p_recvd;
}

int hir_interp_add_hook(hir_interp *it, const hir_interp_hook *h, hir_error *e)
{
    if (it->nhooks == HIR_INTERP_MAX_HOOKS)
        return hir_error_set(e, "more than %d statement hooks", HIR_INTERP_MAX_HOOKS);
    it->hooks[it->nhooks++] = *h;
    return 0;
}

void hir_interp_remove_hook(hir_interp *it, const hir_interp_hook *h)
{
    for (int i = 0; i < it->nhooks; i++) {
        hir_interp_hook *x = &it->hooks[i];
        if (x->before == h->before && x->after == h->after && x->ctx == h->ctx) {
            memmove(x, x + 1, (size_t)(it->nhooks - i - 1) * sizeof *x);
            it->nhooks--;
            return;
        }
    }
}

/* ---------------------------------------------------------------- what hooks may ask */

hir_program *hir_interp_program(const hir_interp *it) { return it->p; }
hir_backend *hir_interp_backend(const hir_interp *it) { return it->be; }
hir_stream *hir_interp_stream(const hir_interp *it) { return it->cur; }
const hir_interp_config *hir_interp_cfg(const hir_interp *it) { return &it->cfg; }
uint64_t hir_interp_run_count(const hir_interp *it) { return it->run_no; }

int hir_interp_bound(hir_interp *it, const hir_tensor *t, hir_view *v)
{
    return interp_bound(it, t, v);
}

int hir_interp_eval(hir_interp *it, const hir_scalar *s, int64_t *v, hir_error *e)
{
    return interp_eval(it, s, v, e);
}

int hir_interp_fail(hir_interp *it, hir_error *e, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return interp_fail(it, e, "%s", msg);
}

int hir_interp_bind_run_scalars(hir_interp *it, hir_error *e)
{
    return hir_interp_bind_scalar(it, it->sc_rank, it->cfg.rank, e) ||
           hir_interp_bind_scalar(it, it->sc_nstreams, it->cfg.num_streams, e) ? -1 : 0;
}

void hir_interp_destroy(hir_interp *it)
{
    if (!it)
        return;
    /* Communication still in flight first (receives cancelled, sends completed or given up
     * by the backend), then the buffers it reads or writes: the other order frees memory a
     * transfer may still touch. */
    for (size_t i = 0; i < it->works.cap; i++) {
        hir_work *w = it->works.vals[i];
        if (it->works.keys[i] != UINT64_MAX && w && w != WORK_SKIPPED)
            it->be->ops->work_release(it->be, w);
        it->works.vals[i] = NULL;
    }
    held_release_all(it);
    for (size_t i = 0; i < it->rings.cap; i++)
        if (it->rings.keys[i] != UINT64_MAX)
            free(it->rings.vals[i]);
    hir_map_fini(&it->rings);
    hir_map_fini(&it->swizzled);
    hir_map_fini(&it->held);
    unbind_all(it);
    for (size_t i = 0; i < it->moe.cap; i++)
        if (it->moe.keys[i] != UINT64_MAX && it->moe.vals[i])
            moe_free(it, it->moe.vals[i]);
    hir_map_fini(&it->moe);
    interp_ew_plans_free(it);
    for (size_t i = 0; i < it->alloc_cache.cap; i++)
        if (it->alloc_cache.keys[i] != UINT64_MAX && it->alloc_cache.vals[i])
            interp_buf_unref(it, it->alloc_cache.vals[i]);
    for (size_t i = 0; i < it->result_cache.cap; i++) {
        rt_result *r = it->result_cache.vals[i];
        if (it->result_cache.keys[i] != UINT64_MAX && r)
            result_free(it, r);
    }
    hir_map_fini(&it->result_cache);
    free(it->p2p_sent);
    free(it->p2p_recvd);
    scalars_clear(&it->scalars);
    scalars_clear(&it->user_scalars);
    hir_map_fini(&it->scalars);
    hir_map_fini(&it->user_scalars);
    hir_map_fini(&it->alloc_cache);
    hir_map_fini(&it->obj_streams);
    hir_map_fini(&it->works);
    free(it);
}

static int bind_inputs(hir_interp *it, const hir_view *inputs, hir_error *e)
{
    hir_program *p = it->p;
    char tn[32];
    for (int i = 0; i < p->inputs.n; i++) {
        hir_value *v = p->inputs.items[i];
        hir_scalar *sc = hir_value_scalar(v);
        if (sc) {
            if (inputs[i].ndim != 0 || !inputs[i].data)
                return interp_fail(it, e, "scalar input %d needs a value", i);
            if (bind_scalar(it, sc, *(const int64_t *)inputs[i].data, e))
                return -1;
            continue;
        }
        hir_tensor *t = hir_value_tensor(v);
        hir_shard sh;
        if (hir_interp_shard(it, t, &sh, e))
            return -1;
        if (!sh.on_rank)
            continue;
        if (inputs[i].ndim != sh.ndim)
            return interp_fail(it, e, "input %s has %d dimensions, the program expects %d",
                               interp_tname(t, tn, sizeof tn), inputs[i].ndim, sh.ndim);
        for (int d = 0; d < sh.ndim; d++)
            if (inputs[i].shape[d] != sh.local[d])
                return interp_fail(it, e, "input %s: dimension %d has size %" PRId64
                                   ", the program expects %" PRId64,
                                   interp_tname(t, tn, sizeof tn), d, inputs[i].shape[d],
                                   sh.local[d]);
        if (interp_bind(it, t, &inputs[i], NULL, e))
            return -1;
        /* extents named by symbols take the global size (§2.2) */
        int d = 0;
        for (int k = 0; k < t->nloop; k++) {
            const hir_iterdomain *id = interp_axes(it, t)[k];
            if (!axis_is_runtime(id))
                continue;
            if (id->extent && id->extent->kind == HIR_SC_SYMBOL && !id->extent->def &&
                bind_scalar(it, id->extent, sh.global[d], e))
                return -1;
            d++;
        }
    }
    return 0;
}

int hir_interp_run(hir_interp *it, const hir_view *inputs, hir_error *e)
{
    it->stmt = NULL;
    it->run_no++;
    unbind_all(it);
    scalars_clear(&it->scalars);
    it->cur = it->be->ops->stream_main(it->be);
    it->in_group = 0;
    it->loops = 0;
    if (bind_scalar(it, it->sc_rank, it->cfg.rank, e) ||
        bind_scalar(it, it->sc_nstreams, it->cfg.num_streams, e) ||
        bind_inputs(it, inputs, e))
        return -1;
    if (exec_block(it, &it->p->body, e))
        return -1;
    it->stmt = NULL;
    if (it->in_group)
        return interp_fail(it, e, "the program ended inside a coalescing group");
    for (size_t i = 0; i < it->works.cap; i++) {
        hir_work *w = it->works.vals[i];
        if (it->works.keys[i] != UINT64_MAX && w && w != WORK_SKIPPED)
            return interp_fail(it, e, "Communication %" PRIu64 " was posted but never waited "
                               "for (no Wait Communication %" PRIu64 " reached it)",
                               it->works.keys[i], it->works.keys[i]);
    }
    return 0;
}

int hir_interp_output(hir_interp *it, int i, hir_view *v, hir_error *e)
{
    it->stmt = NULL;
    if (i < 0 || i >= it->p->outputs.n)
        return interp_fail(it, e, "no output %d", i);
    hir_tensor *t = hir_value_tensor(it->p->outputs.items[i]);
    char tn[32];
    if (!t)
        return interp_fail(it, e, "output %d is a scalar; only tensor outputs are supported", i);
    if (!interp_bound(it, t, v))
        return interp_fail(it, e, "output %s was never bound on this rank",
                           interp_tname(t, tn, sizeof tn));
    return 0;
}
