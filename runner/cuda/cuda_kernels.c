/* cuda_kernels.c — the element-wise, reduction, fill and copy entries of the CUDA backend and
 * its pre-resolved element-wise plans: the kernels come from cuda_codegen.c, plain copies and
 * zero fills use the copy engines (cudaMemcpy*Async / cudaMemsetAsync) instead. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/cuda/cuda_internal.h"

/* Mirror the `P` structs of the source cuda_codegen.c generates (passed by value). */
typedef struct ew_params {
    int64_t n;
    void *out;
    const void *in[3];
    int64_t shape[HIR_MAX_DIMS];
    int64_t so[HIR_MAX_DIMS];
    int64_t si[3][HIR_MAX_DIMS];
    double sf[3];
    int64_t sint[3];
} ew_params;

typedef struct red_params {
    void *out;
    const void *in;
    int64_t nout, nred;
    int64_t kshape[HIR_MAX_DIMS], kin[HIR_MAX_DIMS], kout[HIR_MAX_DIMS];
    int64_t rshape[HIR_MAX_DIMS], rin[HIR_MAX_DIMS];
} red_params;

/* ---------------------------------------------------------------- element-wise launch */

static int check_dtype(int dt, hir_diag *e)
{
    if (!hir_cu_ew_storage_type(dt))
        return hir_fail(e, "the CUDA backend has no element-wise kernels for dtype %s",
                             hir_dtype_name((hir_dtype)dt)), -1;
    return 0;
}

/* Drop size-1 dims and merge dims that are contiguous in every view (fewer index divisions,
 * fewer kernel variants). strides[v][d]: v = 0 output, 1.. inputs (NULL = scalar). */
static int collapse(int nd, const int64_t *shape, int nv, const int64_t *const *strides,
                    int64_t oshape[], int64_t ostr[][HIR_MAX_DIMS])
{
    int m = 0;
    for (int d = 0; d < nd; d++) {
        if (shape[d] == 1) continue;
        if (m > 0) {
            int ok = 1;
            for (int v = 0; v < nv; v++)
                if (strides[v] && ostr[v][m - 1] != strides[v][d] * shape[d]) ok = 0;
            if (ok) {
                oshape[m - 1] *= shape[d];
                for (int v = 0; v < nv; v++) if (strides[v]) ostr[v][m - 1] = strides[v][d];
                continue;
            }
        }
        oshape[m] = shape[d];
        for (int v = 0; v < nv; v++) ostr[v][m] = strides[v] ? strides[v][d] : 0;
        m++;
    }
    return m;
}

static int launch(hir_cu_backend *cb, hir_stream *s, CUfunction fn, unsigned grid,
                  unsigned block, void *params, size_t psize, hir_diag *e)
{
    void *args[1] = {params};
    return hir_cu_launch(cb, fn, grid, 1, 1, block, 1, 1, 0, (CUstream)s->s, args, &psize, 1, e);
}

static unsigned grid_for(hir_cu_backend *cb, int64_t n, unsigned block)
{
    int64_t g = (n + block - 1) / block, cap = (int64_t)cb->sm_count * 32;
    if (g > cap) g = cap;
    return (unsigned)(g < 1 ? 1 : g);
}

/* What an element-wise launch needs, resolved once: the kernel, its packed parameters and the
 * grid (hir_ew_plan of the backend table: the interpreter keeps one per statement). */
struct hir_ew_plan {
    CUfunction fn;
    unsigned grid;
    int64_t n;                   /* 0: nothing to launch */
    ew_params p;
};

static int ew_resolve(hir_cu_backend *cb, int nin, int op, const hir_view *out,
                      const hir_operand *const *ins, hir_ew_plan *r, hir_diag *e)
{
    if (check_dtype(out->dtype, e) < 0) return -1;
    int64_t n = hir_cu_numel(out);
    r->n = n;
    if (n == 0) return 0;
    hir_cu_ew_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.tag = nin;
    spec.op = op;
    spec.out = out->dtype;
    ew_params *p = &r->p;
    memset(p, 0, sizeof *p);
    const int64_t *strides[4] = {out->stride, NULL, NULL, NULL};
    for (int i = 0; i < nin; i++) {
        const hir_operand *o = ins[i];
        if (o->is_scalar) {
            spec.in[i] = o->scalar_is_int ? -2 : -1;
            p->sf[i] = o->f;
            p->sint[i] = o->i;
            continue;
        }
        if (check_dtype(o->view.dtype, e) < 0) return -1;
        if (o->view.ndim != out->ndim)
            return hir_fail(e, "element-wise operand %d has %d dims, output %d", i,
                                 o->view.ndim, out->ndim), -1;
        for (int d = 0; d < out->ndim; d++)
            if (o->view.shape[d] != out->shape[d] && o->view.stride[d] != 0 &&
                o->view.shape[d] != 1)
                return hir_fail(e, "element-wise operand %d: dim %d is %lld, output %lld",
                                     i, d, (long long)o->view.shape[d],
                                     (long long)out->shape[d]), -1;
        spec.in[i] = o->view.dtype;
        p->in[i] = o->view.data;
        strides[i + 1] = o->view.stride;
    }
    int64_t str[4][HIR_MAX_DIMS];
    int nd = collapse(out->ndim, out->shape, nin + 1, strides, p->shape, str);
    if (nd == 0) {
        nd = 1;
        p->shape[0] = 1;
        for (int v = 0; v < 4; v++) str[v][0] = 0;
    }
    spec.nd = nd;
    for (int d = 0; d < nd; d++) {
        p->so[d] = str[0][d];
        for (int i = 0; i < nin; i++) p->si[i][d] = strides[i + 1] ? str[i + 1][d] : 0;
    }
    p->n = n;
    p->out = out->data;
    r->grid = grid_for(cb, n, HIR_CU_EW_BLOCK);
    return hir_cu_ew_kernel(cb, &spec, &r->fn, e);
}

static int ew_issue(hir_cu_backend *cb, hir_stream *s, const hir_ew_plan *r, hir_diag *e)
{
    if (r->n == 0) return 0;
    void *args[1] = {(void *)&r->p};
    static const size_t psize = sizeof r->p;
    return hir_cu_launch(cb, r->fn, r->grid, 1, 1, HIR_CU_EW_BLOCK, 1, 1, 0, (CUstream)s->s, args,
                         &psize, 1, e);
}

static int elementwise(hir_backend *be, hir_stream *s, int nin, int op, const hir_view *out,
                       const hir_operand *const *ins, hir_diag *e)
{
    hir_cu_backend *cb = hir_cu(be);
    hir_ew_plan r;
    if (ew_resolve(cb, nin, op, out, ins, &r, e) < 0) return -1;
    return ew_issue(cb, s, &r, e);
}

int hir_cu_ew_resolve(hir_backend *be, int nin, int op, const hir_view *out,
                      const hir_operand *const *ins, hir_ew_plan **plan, hir_diag *e)
{
    *plan = NULL;
    hir_ew_plan *r = malloc(sizeof *r);
    if (!r) return hir_fail(e, "out of host memory"), -1;
    if (ew_resolve(hir_cu(be), nin, op, out, ins, r, e) < 0) {
        free(r);
        return -1;
    }
    *plan = r;
    return 0;
}

int hir_cu_ew_launch(hir_backend *be, hir_stream *s, const hir_ew_plan *plan, hir_diag *e)
{
    return ew_issue(hir_cu(be), s, plan, e);
}

void hir_cu_ew_plan_free(hir_backend *be, hir_ew_plan *plan)
{
    (void)be;
    free(plan);
}

int hir_cu_unary(hir_backend *be, hir_stream *s, hir_unary_op op, const hir_view *out,
                 const hir_operand *a, hir_diag *e)
{
    const hir_operand *ins[1] = {a};
    return elementwise(be, s, 1, op, out, ins, e);
}

int hir_cu_binary(hir_backend *be, hir_stream *s, hir_binary_op op, const hir_view *out,
                  const hir_operand *a, const hir_operand *b, hir_diag *e)
{
    const hir_operand *ins[2] = {a, b};
    return elementwise(be, s, 2, op, out, ins, e);
}

int hir_cu_ternary(hir_backend *be, hir_stream *s, hir_ternary_op op, const hir_view *out,
                   const hir_operand *a, const hir_operand *b, const hir_operand *c,
                   hir_diag *e)
{
    const hir_operand *ins[3] = {a, b, c};
    return elementwise(be, s, 3, op, out, ins, e);
}

int hir_cu_fill(hir_backend *be, hir_stream *s, const hir_view *out, double v, hir_diag *e)
{
    int64_t n = hir_cu_numel(out);
    if (n == 0) return 0;
    size_t es = hir_dtype_size(out->dtype);
    /* zero (any type) and byte-sized values: the memset engine, no kernel */
    if (hir_cu_view_contiguous(out) && es > 0 &&
        ((v == 0.0 && !(1.0 / v < 0)) ||
         (es == 1 && hir_dtype_is_int(out->dtype) && v >= -128 && v <= 255 && v == (int)v) ||
         (out->dtype == HIR_DT_BOOL))) {
        int byte = out->dtype == HIR_DT_BOOL ? (v != 0) : (int)v & 0xff;
        hir_cu_rec_other(hir_cu(be));
        HIR_CK(e, cuda, cudaMemsetAsync(out->data, byte, (size_t)n * es, s->s));
        return 0;
    }
    hir_operand a;
    memset(&a, 0, sizeof a);
    a.is_scalar = 1;
    a.scalar_is_int = !hir_dtype_is_float(out->dtype);
    a.f = v;
    a.i = (int64_t)v;
    const hir_operand *ins[1] = {&a};
    return elementwise(be, s, 1, HIR_UN_SET, out, ins, e);
}

int hir_cu_copy(hir_backend *be, hir_stream *s, const hir_view *dst, const hir_view *src,
                hir_diag *e)
{
    if (dst->ndim != src->ndim)
        return hir_fail(e, "copy: %d-D into %d-D", src->ndim, dst->ndim), -1;
    for (int d = 0; d < dst->ndim; d++)
        if (dst->shape[d] != src->shape[d] && !(src->shape[d] == 1 && src->stride[d] == 0))
            return hir_fail(e, "copy: shapes differ at dim %d (%lld vs %lld)", d,
                                 (long long)dst->shape[d], (long long)src->shape[d]), -1;
    int64_t n = hir_cu_numel(dst);
    if (n == 0) return 0;
    size_t es = hir_dtype_size(dst->dtype);
    if (dst->dtype == src->dtype && es > 0) {
        /* same type: use the copy engines when the region is 1-D dense or 2-D pitched */
        const int64_t *strides[2] = {dst->stride, src->stride};
        int64_t shp[HIR_MAX_DIMS], str[2][HIR_MAX_DIMS];
        int nd = collapse(dst->ndim, dst->shape, 2, strides, shp, str);
        int engine = nd == 0 || (nd == 1 && str[0][0] == 1 && str[1][0] == 1) ||
                     (nd == 2 && str[0][1] == 1 && str[1][1] == 1 && str[0][0] >= shp[1] &&
                      str[1][0] >= shp[1]);
        if (engine) hir_cu_rec_other(hir_cu(be));
        if (nd == 0) {
            HIR_CK(e, cuda, cudaMemcpyAsync(dst->data, src->data, es, cudaMemcpyDeviceToDevice,
                                            s->s));
            return 0;
        }
        if (nd == 1 && str[0][0] == 1 && str[1][0] == 1) {
            HIR_CK(e, cuda, cudaMemcpyAsync(dst->data, src->data, (size_t)n * es,
                                            cudaMemcpyDeviceToDevice, s->s));
            return 0;
        }
        if (nd == 2 && str[0][1] == 1 && str[1][1] == 1 && str[0][0] >= shp[1] &&
            str[1][0] >= shp[1]) {
            HIR_CK(e, cuda, cudaMemcpy2DAsync(dst->data, (size_t)str[0][0] * es, src->data,
                                              (size_t)str[1][0] * es, (size_t)shp[1] * es,
                                              (size_t)shp[0], cudaMemcpyDeviceToDevice, s->s));
            return 0;
        }
    }
    hir_operand a;
    memset(&a, 0, sizeof a);
    a.view = *src;
    return hir_cu_unary(be, s, HIR_UN_SET, dst, &a, e);
}

int hir_cu_reduce(hir_backend *be, hir_stream *s, hir_reduce_op op, const hir_view *out,
                  const hir_view *in, uint32_t mask, hir_diag *e)
{
    hir_cu_backend *cb = hir_cu(be);
    if (check_dtype(out->dtype, e) < 0 || check_dtype(in->dtype, e) < 0) return -1;
    if (out->ndim != in->ndim)
        return hir_fail(e, "reduce: output has %d dims, input %d", out->ndim, in->ndim),
               -1;
    red_params p;
    memset(&p, 0, sizeof p);
    hir_cu_ew_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.tag = 9;
    spec.op = op;
    spec.out = out->dtype;
    spec.in[0] = in->dtype;
    int nk = 0, nr = 0;
    p.nout = 1, p.nred = 1;
    for (int d = 0; d < in->ndim; d++) {
        if (in->shape[d] == 1) continue;
        if (mask & (1u << d)) {
            if (out->shape[d] != 1)
                return hir_fail(e, "reduce: reduced dim %d of the output is %lld, not 1",
                                     d, (long long)out->shape[d]), -1;
            p.rshape[nr] = in->shape[d];
            p.rin[nr++] = in->stride[d];
            p.nred *= in->shape[d];
        } else {
            if (out->shape[d] != in->shape[d])
                return hir_fail(e, "reduce: kept dim %d differs (%lld vs %lld)", d,
                                     (long long)out->shape[d], (long long)in->shape[d]), -1;
            p.kshape[nk] = in->shape[d];
            p.kin[nk] = in->stride[d];
            p.kout[nk++] = out->stride[d];
            p.nout *= in->shape[d];
        }
    }
    if (p.nred == 0 || p.nout == 0) {
        if (p.nout == 0) return 0;
        /* empty reduction: the identity (sum 0, prod 1, max -inf ...) */
        double id = op == HIR_RED_SUM ? 0.0 : op == HIR_RED_PROD ? 1.0
                  : (op == HIR_RED_MAX || op == HIR_RED_FMAX) ? -1.0 / 0.0 : 1.0 / 0.0;
        return hir_cu_fill(be, s, out, id, e);
    }
    spec.nd = nk;
    spec.nr = nr;
    p.out = out->data;
    p.in = in->data;
    CUfunction fn;
    if (hir_cu_ew_kernel(cb, &spec, &fn, e) < 0) return -1;
    unsigned block = p.nred >= HIR_CU_EW_BLOCK ? HIR_CU_EW_BLOCK
                                               : (unsigned)((p.nred + 31) / 32 * 32);
    int64_t grid = p.nout, cap = (int64_t)cb->sm_count * 64;
    if (grid > cap) grid = cap;
    return launch(cb, s, fn, (unsigned)grid, block, &p, sizeof p, e);
}
