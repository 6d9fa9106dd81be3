/* ops_shape.c — statements that make a tensor of a new shape: expand (a stride-0 view or a
 * copy), full (a fill) and reductions through the backend. */
#include <inttypes.h>

#include "runner/interp/ops_internal.h"

/* ---------------------------------------------------------------- expand, full */

/* out = expand(in): in's size-1 axes stretched to out's extents (an expanded broadcast
 * bS{1 ex N} has N at run time). Like at::expand, an unbound output is bound to a view of
 * the input with stride 0 on the stretched axes; a bound one receives a copy. */
int ops_expand(hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    hir_tensor *in = hir_value_tensor(s->in[0]);
    hir_view v, o, x;
    int nd;
    int64_t shape[HIR_MAX_DIMS];
    if (interp_input_and_out_shape(it, s, &v, &nd, shape, e))
        return -1;
    if (nd < v.ndim)
        return interp_fail(it, e, "expand to %d axes from a tensor of %d", nd, v.ndim);
    if (interp_broadcast_to(it, &v, nd, shape, &x, e))
        return -1;
    if (interp_bound(it, s->out, &o))
        return interp_copy_into(it, &o, &x, e);
    return interp_bind(it, s->out, &x, interp_buf_of(it, in), e);
}

/* out = full({extents}, value): a new tensor of out's shape filled with value (the extents
 * printed must agree with out's) */
int ops_full(hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    int nd;
    int64_t shape[HIR_MAX_DIMS];
    if (interp_rt_shape(it, s->out, &nd, shape, e))
        return -1;
    int next = s->nin - 1;
    if (next != nd)
        return interp_fail(it, e, "gives %d extents for a tensor of %d axes", next, nd);
    for (int i = 0; i < next; i++) {
        int64_t x;
        if (interp_eval(it, hir_value_scalar(s->in[i]), &x, e))
            return -1;
        if (x != shape[i])
            return interp_fail(it, e, "extent %d is %" PRId64 " but the output's axis is %" PRId64,
                               i, x, shape[i]);
    }
    const hir_scalar *val = hir_value_scalar(s->in[next]);
    double f;
    if (val->kind == HIR_SC_FLOAT) {
        f = val->fval;
    } else {
        int64_t k;
        if (interp_eval(it, val, &k, e))
            return -1;
        f = (double)k;
    }
    hir_view o;
    if (interp_out_view(it, s->out, nd, shape, &o, e))
        return -1;
    if (hir_view_numel(&o) == 0)
        return 0;
    return it->be->ops->fill(it->be, it->cur, &o, f, e) ? interp_backend_fail(it, e) : 0;
}

/* ---------------------------------------------------------------- reductions */

int ops_reduction(hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    hir_tensor *tin = hir_value_tensor(s->in[0]);
    const hir_tensor *tout = s->out;
    hir_view v;
    if (interp_get(it, tin, &v, e))
        return -1;
    /* the output's logical axes (reductions included, a split axis one axis: its view,
     * dialect/shape.c) line up with the input's runtime dims */
    uint32_t mask = 0;
    int k = 0;
    for (int i = 0; i < tout->shape.naxes; i++) {
        hir_shape_axis a;
        hir_shape_axis_get(tout, i, &a);
        if (a.inner->itype == HIR_IT_STRIDE)
            continue;
        if (a.reduction && k < 32)
            mask |= 1u << k;
        k++;
    }
    if (k != v.ndim)
        return interp_fail(it, e, "the output has %d axes, the input %d dimensions", k, v.ndim);
    int64_t oshape[HIR_MAX_DIMS];
    int ond = 0;
    for (int d = 0; d < v.ndim; d++)
        if (!(mask & (1u << d)))
            oshape[ond++] = v.shape[d];
    hir_view o;
    if (interp_out_view(it, tout, ond, oshape, &o, e))
        return -1;
    hir_view q = interp_view_squeezed(&o), full = v;
    full.data = o.data;
    full.dtype = o.dtype;
    for (int d = 0, j = 0; d < v.ndim; d++) {
        if (mask & (1u << d) || v.shape[d] == 1) {
            full.shape[d] = 1;
            full.stride[d] = 0;
        } else {
            full.stride[d] = q.stride[j++];
        }
    }
    if (hir_view_numel(&full) == 0)
        return 0;
    if (hir_view_numel(&v) == 0)
        return it->be->ops->fill(it->be, it->cur, &full, 0.0, e) ? interp_backend_fail(it, e) : 0;
    if (it->be->ops->reduce(it->be, it->cur, s->u.red.op, &full, &v, mask, e))
        return interp_backend_fail(it, e);
    return 0;
}
