/* interp_tensor.c — views and results shared by the tensor statements (views, Set, GEMMs,
 * element-wise, shape ops): element addresses, squeezed views, copies through the backend,
 * contiguous copies, the output of a computing statement (the bound view or a fresh result,
 * hostir-format.md §2.3) and broadcasting by stride-0 views (interp_internal.h). */
#include <inttypes.h>

#include "runner/interp/interp_internal.h"

void *interp_elem_ptr(const hir_view *v, int dim, int64_t idx)
{
    return (char *)v->data + idx * v->stride[dim] * (int64_t)hir_dtype_size(v->dtype);
}

hir_view interp_view_squeezed(const hir_view *v)
{
    hir_view r = *v;
    r.ndim = 0;
    for (int d = 0; d < v->ndim; d++)
        if (v->shape[d] != 1) {
            r.shape[r.ndim] = v->shape[d];
            r.stride[r.ndim++] = v->stride[d];
        }
    return r;
}

static int shape_eq(const hir_view *a, const hir_view *b)
{
    if (a->ndim != b->ndim)
        return 0;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d])
            return 0;
    return 1;
}

void interp_shape_str(const hir_view *v, char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int d = 0; d < v->ndim && k < n; d++)
        k += (size_t)snprintf(buf + k, n - k, "%s%" PRId64, d ? ", " : "", v->shape[d]);
    if (k < n)
        snprintf(buf + k, n - k, "]");
}

int interp_copy_into(hir_interp *it, const hir_view *dst, const hir_view *src, hir_diag *e)
{
    hir_view d = *dst, s = *src;
    if (!shape_eq(&d, &s)) {
        d = interp_view_squeezed(dst);
        s = interp_view_squeezed(src);
        if (!shape_eq(&d, &s)) {
            char a[96], b[96];
            interp_shape_str(dst, a, sizeof a);
            interp_shape_str(src, b, sizeof b);
            return interp_fail(it, e, "cannot copy a %s tensor into a %s one", b, a);
        }
    }
    if (hir_view_numel(&d) == 0)
        return 0;
    if (it->be->ops->copy(it->be, it->cur, &d, &s, e))
        return interp_backend_fail(it, e);
    return 0;
}

int interp_materialize(hir_interp *it, const hir_view *v, hir_view *out, rt_buf **buf,
                    hir_diag *e)
{
    hir_view nv;
    hir_view_init(&nv, NULL, v->dtype, v->ndim, v->shape);
    rt_buf *b = interp_buf_new(it, hir_view_bytes(&nv), e);
    if (!b)
        return -1;
    nv.data = b->ptr;
    if (hir_view_numel(&nv) && it->be->ops->copy(it->be, it->cur, &nv, v, e)) {
        interp_buf_unref(it, b);
        return interp_backend_fail(it, e);
    }
    *out = nv;
    *buf = b;
    return 0;
}

/* Output of a computing statement: the bound view, or a fresh buffer of `shape`. */
int interp_out_view(hir_interp *it, const hir_tensor *t, int ndim, const int64_t *shape,
                    hir_view *v, hir_diag *e)
{
    if (interp_bound(it, t, v)) {
        hir_view want;
        hir_view_init(&want, NULL, t->dtype, ndim, shape);
        hir_view a = interp_view_squeezed(v), b = interp_view_squeezed(&want);
        if (!shape_eq(v, &want) && !shape_eq(&a, &b)) {
            char x[96], y[96], tn[32];
            interp_shape_str(v, x, sizeof x);
            interp_shape_str(&want, y, sizeof y);
            return interp_fail(it, e, "output %s is bound to a %s tensor, the result is %s",
                               interp_tname(t, tn, sizeof tn), x, y);
        }
        if (v->dtype != t->dtype)
            return interp_fail(it, e, "output is bound to a tensor of another dtype");
        return 0;
    }
    return interp_bind_new(it, t, ndim, shape, v, e);
}

/* right-align v to ndim dims of `shape`, size-1 dims broadcast with stride 0 */
int interp_broadcast_to(hir_interp *it, const hir_view *v, int ndim, const int64_t *shape,
                        hir_view *r, hir_diag *e)
{
    *r = *v;
    r->ndim = ndim;
    for (int d = 0; d < ndim; d++) {
        int sd = d - (ndim - v->ndim);
        if (sd < 0) {
            r->shape[d] = shape[d];
            r->stride[d] = 0;
            continue;
        }
        if (v->shape[sd] == shape[d]) {
            r->shape[d] = shape[d];
            r->stride[d] = v->stride[sd];
        } else if (v->shape[sd] == 1) {
            r->shape[d] = shape[d];
            r->stride[d] = 0;
        } else {
            return interp_fail(it, e, "operand dimension %d of size %" PRId64
                               " does not broadcast to %" PRId64, sd, v->shape[sd], shape[d]);
        }
    }
    return 0;
}

/* The first input's view and the output's run-time shape: the prologue of the statements that
 * reshape their input (view, expand). */
int interp_input_and_out_shape(hir_interp *it, const hir_stmt *s, hir_view *v, int *nd,
                               int64_t *shape, hir_diag *e)
{
    if (interp_get(it, hir_value_tensor(s->in[0]), v, e))
        return -1;
    return interp_rt_shape(it, s->out, nd, shape, e);
}
