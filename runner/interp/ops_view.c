/* ops_view.c — the view statements: HirAliasSelect and select, ShardByStream, slice, view,
 * broadcast and squeeze. An unbound output is bound to a view of the input's buffer; a bound one
 * receives a copy. SymmetricContiguousView is refused (no backend has symmetric memory). */
#include <inttypes.h>

#include "dialect/intops.h"
#include "runner/interp/ops_internal.h"

static void view_drop_dim(hir_view *v, int dim)
{
    for (int d = dim; d + 1 < v->ndim; d++) {
        v->shape[d] = v->shape[d + 1];
        v->stride[d] = v->stride[d + 1];
    }
    v->ndim--;
}

int ops_alias_select(hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    hir_tensor *in = hir_value_tensor(s->in[0]);
    char tn[32], tn2[32];
    hir_view v;
    if (interp_get(it, in, &v, e))
        return -1;
    /* the position among the input's view axes without reductions */
    int pos = interp_axis_pos(it, in, s->u.sel.axis);
    if (pos < 0)
        return interp_fail(it, e, "axis %" PRId64 " is not an axis of %s",
                           s->u.sel.axis->number, interp_tname(in, tn, sizeof tn));
    /* a reduction axis has no runtime dimension: the output is the input unchanged
     * (hostir-2026.md §3.14, the MDE reduce-scatter's selection of the reduced buffer) */
    if (s->u.sel.axis->itype == HIR_IT_REDUCTION)
        return interp_bind(it, s->out, &v, interp_buf_of(it, in), e);
    /* the output has an axis for each of the input's but the selected one and the reductions
     * (device axes of their own marked rf included: interp_rf_expand) */
    if (interp_rf_expand(in, &v))
        return interp_fail(it, e, "%s has more than %d dimensions", interp_tname(in, tn, sizeof tn),
                           HIR_MAX_DIMS);
    int a = interp_unreduced_pos(in, pos);
    if (a >= v.ndim)
        return interp_fail(it, e, "axis position %d outside the %d dimensions of %s", a, v.ndim,
                           interp_tname(in, tn, sizeof tn));
    int64_t idx = 0;
    /* a broadcast axis, or an axis of local size 1 (a device axis on this rank), selects
     * index 0 whatever `index =` says (hostir-2026.md §3.14) */
    if (s->u.sel.axis->itype != HIR_IT_BROADCAST && v.shape[a] != 1 &&
        interp_eval(it, s->u.sel.index, &idx, e))
        return -1;
    if (idx < 0 || idx >= v.shape[a])
        return interp_fail(it, e, "index %" PRId64 " outside [0, %" PRId64 ") of axis %d of %s",
                           idx, v.shape[a], a, interp_tname(in, tn, sizeof tn));
    v.data = interp_elem_ptr(&v, a, idx);
    view_drop_dim(&v, a);
    if (interp_rf_squeeze(s->out, &v))
        return interp_fail(it, e, "an rf device axis of %s is not one of size 1 in %s",
                           interp_tname(s->out, tn, sizeof tn), interp_tname(in, tn2, sizeof tn2));
    return interp_bind(it, s->out, &v, interp_buf_of(it, in), e);
}

int ops_shard_by_stream(hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    hir_tensor *in = hir_value_tensor(s->in[0]);
    hir_view v;
    if (interp_get(it, in, &v, e))
        return -1;
    /* the output's view axis with a stream part: ShardByStream chunks the logical axis the
     * stream axis was split from (or an unsplit stream axis itself) */
    const hir_tensor *o = s->out;
    int pos = -1;
    const hir_iterdomain *sid = NULL;
    for (int i = 0; i < o->shape.naxes && !sid; i++) {
        hir_shape_axis ax;
        hir_shape_axis_get(o, i, &ax);
        for (int k = 0; k < ax.nparts; k++)
            if (hir_ptype_is_stream(o->shape.ids[ax.first + k]->ptype)) {
                sid = o->shape.ids[ax.first + k];
                pos = i;
            }
    }
    if (pos < 0)
        return interp_fail(it, e, "the output has no stream-parallel axis");
    /* the output has an axis for each of the input's but the reductions (newValLike), device
     * axes of their own marked rf included (interp_rf_expand) */
    char tn[32], tn2[32];
    if (interp_rf_expand(in, &v))
        return interp_fail(it, e, "%s has more than %d dimensions", interp_tname(in, tn, sizeof tn),
                           HIR_MAX_DIMS);
    int a = interp_unreduced_pos(o, pos);
    if (a >= v.ndim)
        return interp_fail(it, e, "stream axis %d outside the input's %d dimensions", a, v.ndim);
    int64_t k, x;
    if (interp_eval(it, sid->extent, &k, e) || interp_eval(it, s->u.stream_index, &x, e))
        return -1;
    if (k <= 0)
        return interp_fail(it, e, "stream axis extent %" PRId64 " is not positive", k);
    /* in the loop of a CollectivePermute ring the stream axis is swizzled: chunk
     * (x + t) % n on the rank at team position t (hostir-2026.md §3.10, rule 2) */
    rt_ring *ring = hir_map_get(&it->swizzled, (uintptr_t)s);
    if (ring && ring->pos >= 0 && x >= 0 &&
        (hir_iop_add(x, ring->pos, &x) || hir_iop_mod(x, ring->n, &x)))
        return interp_fail(it, e, "integer overflow in the swizzled stream index");
    int64_t n = v.shape[a], cs = (n + k - 1) / k;
    if (x < 0 || x >= k)
        return interp_fail(it, e, "stream index %" PRId64 " outside [0, %" PRId64 ")", x, k);
    int64_t start = x * cs < n ? x * cs : n, size = n - start < cs ? n - start : cs;
    v.data = interp_elem_ptr(&v, a, start);
    v.shape[a] = size;
    if (interp_rf_squeeze(o, &v))
        return interp_fail(it, e, "an rf device axis of %s is not one of size 1 in %s",
                           interp_tname(o, tn, sizeof tn), interp_tname(in, tn2, sizeof tn2));
    return interp_bind(it, s->out, &v, interp_buf_of(it, in), e);
}

int ops_slice(hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    hir_tensor *in = hir_value_tensor(s->in[0]);
    hir_view v;
    if (interp_get(it, in, &v, e))
        return -1;
    if (s->u.slice.nranges != v.ndim)
        return interp_fail(it, e, "%d ranges for a %d-dimensional input", s->u.slice.nranges,
                           v.ndim);
    for (int d = 0; d < v.ndim; d++) {
        const hir_slice_range *r = &s->u.slice.ranges[d];
        int64_t a = 0, b = v.shape[d], st = 1;
        if ((r->start && interp_eval(it, r->start, &a, e)) ||
            (r->stop && interp_eval(it, r->stop, &b, e)) ||
            (r->step && interp_eval(it, r->step, &st, e)))
            return -1;
        if (st <= 0)
            return interp_fail(it, e, "slice step %" PRId64 " is not positive", st);
        a = a < 0 ? 0 : a > v.shape[d] ? v.shape[d] : a;
        b = b < a ? a : b > v.shape[d] ? v.shape[d] : b;
        v.data = interp_elem_ptr(&v, d, a);
        v.shape[d] = (b - a + st - 1) / st;
        v.stride[d] *= st;
    }
    hir_view o;
    if (interp_bound(it, s->out, &o))
        return interp_copy_into(it, &o, &v, e);
    return interp_bind(it, s->out, &v, interp_buf_of(it, in), e);
}

int ops_view(hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    hir_tensor *in = hir_value_tensor(s->in[0]);
    hir_view v, o;
    int nd;
    int64_t shape[HIR_MAX_DIMS];
    if (interp_input_and_out_shape(it, s, &v, &nd, shape, e))
        return -1;
    hir_view want;
    hir_view_init(&want, NULL, v.dtype, nd, shape);
    if (hir_view_numel(&want) != hir_view_numel(&v))
        return interp_fail(it, e, "cannot view %" PRId64 " elements as %" PRId64,
                           hir_view_numel(&v), hir_view_numel(&want));
    if (interp_bound(it, s->out, &o)) {
        if (!hir_view_is_contiguous(&v)) {
            hir_view c;
            rt_buf *b;
            if (interp_materialize(it, &v, &c, &b, e))
                return -1;
            want.data = c.data;
            int rc = interp_copy_into(it, &o, &want, e);
            interp_buf_unref(it, b);
            return rc;
        }
        want.data = v.data;
        return interp_copy_into(it, &o, &want, e);
    }
    if (hir_view_is_contiguous(&v)) {
        want.data = v.data;
        return interp_bind(it, s->out, &want, interp_buf_of(it, in), e);
    }
    hir_view c;
    rt_buf *b;
    if (interp_materialize(it, &v, &c, &b, e))
        return -1;
    want.data = c.data;
    int rc = interp_bind(it, s->out, &want, b, e);
    interp_buf_unref(it, b);
    return rc;
}

/* broadcast (flags over output axes: true = new axis) and squeeze (flags over input axes:
 * true = removed) */
int ops_flags(hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    hir_tensor *in = hir_value_tensor(s->in[0]);
    hir_view v, r;
    if (interp_get(it, in, &v, e))
        return -1;
    r = v;
    r.ndim = 0;
    int nf = s->u.flags.nflags;
    if (s->op == HIR_OP_BROADCAST) {
        int k = 0;
        for (int i = 0; i < nf; i++) {
            if (r.ndim == HIR_MAX_DIMS)
                return interp_fail(it, e, "too many dimensions");
            if (s->u.flags.flags[i]) {
                r.shape[r.ndim] = 1;
                r.stride[r.ndim++] = 0;
            } else {
                if (k >= v.ndim)
                    return interp_fail(it, e, "flags name more input axes than the input has");
                r.shape[r.ndim] = v.shape[k];
                r.stride[r.ndim++] = v.stride[k++];
            }
        }
        if (k != v.ndim)
            return interp_fail(it, e, "flags name %d input axes, the input has %d", k, v.ndim);
    } else {
        if (nf != v.ndim)
            return interp_fail(it, e, "%d flags for a %d-dimensional input", nf, v.ndim);
        for (int i = 0; i < nf; i++) {
            if (s->u.flags.flags[i]) {
                if (v.shape[i] != 1)
                    return interp_fail(it, e, "cannot squeeze axis %d of size %" PRId64, i,
                                       v.shape[i]);
                continue;
            }
            r.shape[r.ndim] = v.shape[i];
            r.stride[r.ndim++] = v.stride[i];
        }
    }
    hir_view o;
    if (interp_bound(it, s->out, &o))
        return interp_copy_into(it, &o, &r, e);
    return interp_bind(it, s->out, &r, interp_buf_of(it, in), e);
}

int ops_sym_view(hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    (void)s;
    return interp_fail(it, e, "SymmetricContiguousView needs symmetric memory, which no "
                       "backend provides");
}
