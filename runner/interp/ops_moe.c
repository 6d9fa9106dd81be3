/* ops_moe.c — Dispatch and Combine (hostir-2026.md §3.11): MoE token routing through the
 * backend's optional moe_dispatch/moe_combine. A Dispatch keeps what it routed (the printed
 * and the unprinted outputs) for the Combine that follows. */
#include <stdlib.h>
#include <string.h>

#include "runner/interp/ops_internal.h"

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

/* Outputs with data-dependent sizes: free symbols among t's extents take the runtime sizes.
 * Dimension d is t's runtime axis d (its view's logical axes without reductions); a split axis
 * binds the X of its ( ceilDiv(X, k) ) where its runtime extent is X, that is where no device
 * part divides it on this rank and no stream loop chunks it. */
static int bind_extents(hir_interp *it, const hir_tensor *t, const hir_view *v, hir_diag *e)
{
    hir_shape_axis ax[HIR_MAX_DIMS];
    int n = hir_interp_rt_axes(t, ax);
    for (int d = 0; d < n && d < v->ndim; d++) {
        const hir_scalar *x = ax[d].nparts == 1 ? ax[d].inner->extent : ax[d].extent;
        if (ax[d].nparts > 1 && (ax[d].device || it->loops > 0))
            continue;
        int64_t cur;
        if (x && x->kind == HIR_SC_SYMBOL && !x->def && interp_lookup(it, x, &cur) != 0 &&
            interp_bind_scalar(it, x, v->shape[d], e))
            return -1;
    }
    return 0;
}

static int bind_routed(hir_interp *it, const hir_tensor *t, const rt_moe *m, int k,
                       const char *what, hir_diag *e)
{
    if (!t)
        return 0;
    hir_shape_axis ax[HIR_MAX_DIMS];
    int nd = hir_interp_rt_axes(t, ax);
    char tn[32];
    if (nd < 0)
        return interp_fail(it, e, "%s has more than %d dimensions", interp_tname(t, tn, sizeof tn),
                           HIR_MAX_DIMS);
    if (nd != m->v[k].ndim)
        return interp_fail(it, e, "%s has %d axes; the Dispatch's %s have %d",
                           interp_tname(t, tn, sizeof tn), nd, what, m->v[k].ndim);
    if (interp_bind(it, t, &m->v[k], m->buf[k], e))
        return -1;
    return bind_extents(it, t, &m->v[k], e);
}

int ops_dispatch(hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    if (!it->be->ops->model)
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
    if (it->be->ops->model->moe_dispatch(it->be, it->cur, &d, &r, e))
        return interp_backend_fail(it, e);
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

int ops_combine(hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    if (!it->be->ops->model)
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
    if (it->be->ops->model->moe_combine(it->be, it->cur, &c, e))
        return interp_backend_fail(it, e);
    return bind_extents(it, s->out, &c.out, e);
}

void ops_moe_release(hir_interp *it)
{
    for (size_t i = 0; i < it->moe.cap; i++)
        if (it->moe.keys[i] != UINT64_MAX && it->moe.vals[i])
            moe_free(it, it->moe.vals[i]);
    hir_map_fini(&it->moe);
}
