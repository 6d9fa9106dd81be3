/* cpu_gemm.c — GEMM of the CPU reference backend through CBLAS (OpenBLAS). Operands that
 * are not already in the compute type (f32, or f64 when both inputs are double) with unit
 * column stride are converted once into reused scratch; the bias is added in the compute
 * type and the result is rounded once into the output dtype, as cuBLAS epilogues do. */
#include <limits.h>
#include <string.h>

#include <cblas.h>

#include "runner/cpu/cpu_internal.h"

/* Where one matrix operand of the BLAS call lives: either the caller's memory (already in
 * the compute type with unit column stride) or scratch filled by a converting copy. */
typedef struct gemm_operand {
    void *ptr;
    int64_t ld;
    int converted;
} gemm_operand;

static int gemm_view2(hir_view *v, const hir_view *base, int64_t elem_off, int64_t rows,
                      int64_t cols)
{
    *v = *base;
    v->data = (char *)base->data + elem_off * (int64_t)hir_dtype_size(base->dtype);
    v->ndim = 2;
    v->shape[0] = rows;
    v->shape[1] = cols;
    return 0;
}

static int direct_ok(const hir_view *v, hir_dtype ct, int64_t rows, int64_t cols)
{
    if (v->dtype != ct || (cols > 1 && v->stride[1] != 1))
        return 0;
    return rows <= 1 || (v->stride[0] >= cols && v->stride[0] <= INT_MAX);
}

static int gemm_prepare(hir_cpu_backend *cb, int slot, const hir_view *v, hir_dtype ct,
                        gemm_operand *o, hir_diag *e)
{
    int64_t rows = v->shape[0], cols = v->shape[1];
    if (direct_ok(v, ct, rows, cols)) {
        o->ptr = v->data;
        o->ld = rows <= 1 || cols == 0 ? (cols > 0 ? cols : 1) : v->stride[0];
        if (o->ld < cols)
            o->ld = cols;
        if (o->ld < 1)
            o->ld = 1;
        o->converted = 0;
        return 0;
    }
    size_t es = hir_dtype_size(ct);
    void *buf = cpu_scratch(cb, slot, (size_t)(rows * cols > 0 ? rows * cols : 1) * es, e);
    if (!buf)
        return -1;
    hir_view dst;
    int64_t shape[2] = {rows, cols};
    hir_view_init(&dst, buf, ct, 2, shape);
    if (cpu_copy_view(&dst, v, e))
        return -1;
    o->ptr = buf;
    o->ld = cols > 0 ? cols : 1;
    o->converted = 1;
    return 0;
}

/* The operands' ranks and extents, the bias and the batch checked: *M, *N, *K the sizes. */
static int gemm_check(const hir_gemm *g, int64_t *M, int64_t *N, int64_t *K, hir_diag *e)
{
    if (cpu_check_view(&g->a, "gemm A", e) || cpu_check_view(&g->b, "gemm B", e) ||
        cpu_check_view(&g->out, "gemm output", e))
        return -1;
    if (g->a.ndim != 2 || g->b.ndim != 2 || g->out.ndim != 2)
        return hir_fail(e, "gemm: operands must be 2-D (A %d-D, B %d-D, out %d-D)",
                             g->a.ndim, g->b.ndim, g->out.ndim);
    *M = g->a.shape[0], *K = g->a.shape[1];
    *N = g->b_trans ? g->b.shape[0] : g->b.shape[1];
    int64_t Kb = g->b_trans ? g->b.shape[1] : g->b.shape[0];
    if (*K != Kb)
        return hir_fail(e, "gemm: A is [%lld, %lld] but B%s is [%lld, %lld]", (long long)*M,
                             (long long)*K, g->b_trans ? " (transposed)" : "",
                             (long long)g->b.shape[0], (long long)g->b.shape[1]);
    if (g->out.shape[0] != *M || g->out.shape[1] != *N)
        return hir_fail(e, "gemm: output is [%lld, %lld], expected [%lld, %lld]",
                             (long long)g->out.shape[0], (long long)g->out.shape[1],
                             (long long)*M, (long long)*N);
    if (g->bias) {
        if (cpu_check_view(g->bias, "gemm bias", e))
            return -1;
        if (g->bias->ndim != 1 || g->bias->shape[0] != *N)
            return hir_fail(e, "gemm: bias must be 1-D of extent %lld", (long long)*N);
    }
    if (g->batch < 1)
        return hir_fail(e, "gemm: batch %lld < 1", (long long)g->batch);
    if (*M > INT_MAX || *N > INT_MAX || *K > INT_MAX)
        return hir_fail(e, "gemm: extents beyond the 32-bit BLAS interface");
    return 0;
}

/* One GEMM of the batch: its sizes, compute type ct (double when dbl, else float) of es
 * bytes, and the operands as the BLAS call takes them. */
typedef struct gemm_call {
    int64_t M, N, K;
    int dbl;
    hir_dtype ct;
    size_t es;
    gemm_operand A, B, C;
} gemm_call;

/* Where the product goes (the output itself when the BLAS can write it, else slot 2 of the
 * scratch), and the bias copied in the compute type: *bias its place, *direct_c whether C
 * is the output. */
static int gemm_place_c(hir_cpu_backend *cb, const hir_gemm *g, const hir_view *vo,
                        gemm_call *k, void **bias, int *direct_c, hir_diag *e)
{
    int64_t M = k->M, N = k->N;
    *direct_c = direct_ok(vo, k->ct, M, N);
    size_t cbytes = (size_t)(M * N) * k->es;
    if (*direct_c) {
        k->C.ptr = vo->data;
        k->C.ld = M <= 1 ? N : vo->stride[0];
    } else {
        /* slot 2 holds [C | bias]; the bias row sits after C */
        void *buf = cpu_scratch(cb, 2, cbytes + (size_t)N * k->es + 64, e);
        if (!buf)
            return -1;
        k->C.ptr = buf;
        k->C.ld = N;
    }
    if (g->bias) {
        *bias = (char *)cb->scratch[2] + (*direct_c ? 0 : cbytes);
        hir_view bv;
        hir_view_init(&bv, *bias, k->ct, 1, &N);
        if (cpu_copy_view(&bv, g->bias, e))
            return -1;
    }
    return 0;
}

/* C = A · op(B) through CBLAS (zero when K is 0), then C += bias on every row. */
static void gemm_blas(const hir_gemm *g, const gemm_call *k, const void *bias)
{
    int64_t M = k->M, N = k->N, K = k->K;
    const gemm_operand *A = &k->A, *B = &k->B, *C = &k->C;
    if (K == 0) {
        for (int64_t i = 0; i < M; i++)
            memset((char *)C->ptr + (size_t)(i * C->ld) * k->es, 0, (size_t)N * k->es);
    } else if (k->dbl) {
        cblas_dgemm(CblasRowMajor, CblasNoTrans, g->b_trans ? CblasTrans : CblasNoTrans,
                    (int)M, (int)N, (int)K, 1.0, A->ptr, (int)A->ld, B->ptr, (int)B->ld, 0.0,
                    C->ptr, (int)C->ld);
    } else {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, g->b_trans ? CblasTrans : CblasNoTrans,
                    (int)M, (int)N, (int)K, 1.0f, A->ptr, (int)A->ld, B->ptr, (int)B->ld, 0.0f,
                    C->ptr, (int)C->ld);
    }
    if (!g->bias)
        return;
    for (int64_t i = 0; i < M; i++) {
        if (k->dbl) {
            double *r = (double *)C->ptr + i * C->ld;
            for (int64_t j = 0; j < N; j++)
                r[j] += ((const double *)bias)[j];
        } else {
            float *r = (float *)C->ptr + i * C->ld;
            for (int64_t j = 0; j < N; j++)
                r[j] += ((const float *)bias)[j];
        }
    }
}

/* Matrix bi of the batch: its operands prepared, the product, and the rounding copy into the
 * output when C was scratch. */
static int gemm_one(hir_cpu_backend *cb, const hir_gemm *g, int64_t bi, gemm_call *k,
                    void *bias, hir_diag *e)
{
    int64_t M = k->M, N = k->N, K = k->K;
    hir_view va, vb, vo;
    gemm_view2(&va, &g->a, bi * g->batch_stride_a, M, K);
    gemm_view2(&vb, &g->b, bi * g->batch_stride_b, g->b_trans ? N : K, g->b_trans ? K : N);
    gemm_view2(&vo, &g->out, bi * g->batch_stride_out, M, N);

    /* a broadcast operand (batch stride 0) is converted only for the first matrix */
    if (bi == 0 || g->batch_stride_a != 0)
        if (gemm_prepare(cb, 0, &va, k->ct, &k->A, e))
            return -1;
    if (bi == 0 || g->batch_stride_b != 0)
        if (gemm_prepare(cb, 1, &vb, k->ct, &k->B, e))
            return -1;

    int direct_c;
    if (gemm_place_c(cb, g, &vo, k, &bias, &direct_c, e))
        return -1;
    gemm_blas(g, k, bias);
    if (!direct_c) {
        hir_view cv;
        int64_t shape[2] = {M, N};
        hir_view_init(&cv, k->C.ptr, k->ct, 2, shape);
        if (cpu_copy_view(&vo, &cv, e))
            return -1;
    }
    return 0;
}

int cpu_gemm(hir_backend *be, hir_stream *s, const hir_gemm *g, hir_diag *e)
{
    hir_cpu_backend *cb = cpu_of(be);
    gemm_call k = {0};
    if (gemm_check(g, &k.M, &k.N, &k.K, e))
        return -1;
    if (k.M == 0 || k.N == 0)
        return 0;

    k.dbl = g->a.dtype == HIR_DT_DOUBLE && g->b.dtype == HIR_DT_DOUBLE;
    k.ct = k.dbl ? HIR_DT_DOUBLE : HIR_DT_FLOAT;
    k.es = hir_dtype_size(k.ct);

    /* bias, once, in the compute type */
    void *bias = NULL;
    if (g->bias) {
        bias = cpu_scratch(cb, 2, (size_t)k.N * k.es * 2 + 64, e);   /* tail of slot 2 */
        if (!bias)
            return -1;
    }

    for (int64_t bi = 0; bi < g->batch; bi++)
        if (gemm_one(cb, g, bi, &k, bias, e))
            return -1;
    return 0;
}
