/* gemm_check.c — Freivalds' randomized check of a GEMM result, in float64 on the host (the
 * data room: host arithmetic on host copies; --check calls it for the reference's deferred
 * GEMMs).
 *
 * For a claimed C = A·op(B) + bias (M×N, K the inner size) and random vectors r of N signs
 * (±1), the exact identity C·r = A·(op(B)·r) + (bias·r) costs O(MN + NK + MK) to test instead
 * of O(MNK) to recompute C. Row m fails when |(C·r)_m − (A·(op(B)·r))_m − bias·r| > bound_m:
 *
 *   bound_m = λ · ( u_out·‖C_m‖₂ + γ_K·‖A_m‖₂·‖B‖_F ),  λ = 8,  γ_K = 4·√K·u_acc
 *
 * The GPU's error in element (m,j) is δ_mj = (output rounding, ≤ u_out·|C_mj|) + (accumulation
 * error, ≤ γ_K·Σ_k |A_mk||B_kj| ≤ γ_K·‖A_m‖·‖B_j‖ by Cauchy–Schwarz). The signs r are drawn
 * after C exists, so Σ_j δ_mj r_j is a sum of independent bounded terms and Hoeffding's
 * inequality gives P(|Σ δ r| > λ·‖δ_m‖₂) ≤ 2·exp(−λ²/2) ≈ 2.5e-14 per row and vector; ‖δ_m‖₂ is
 * bounded by the bracket above. γ_K uses the probabilistic √K growth of rounding errors in
 * long sums (Higham and Mary, 2019) with a factor 4 of margin instead of the worst case K·u.
 * A wrong row (a tile not written, stale data, a wrong chunk) differs by about ‖C_m‖₂ and
 * fails unless the random sum happens to cancel (probability ≈ 5 % per vector at bf16 and
 * K = 16384, so about 0.25 % with two vectors for one row, and never for a whole tile).
 * u_out: 2^-8 bf16, 2^-11 fp16, 2^-24 float, 2^-53 double; u_acc: 2^-24 (2^-53 for double). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runner/backend/convert.h"
#include "runner/data/data.h"

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double unit_round(hir_dtype t)
{
    switch (t) {
    case HIR_DT_BFLOAT: return ldexp(1.0, -8);
    case HIR_DT_HALF: return ldexp(1.0, -11);
    case HIR_DT_FLOAT: return ldexp(1.0, -24);
    case HIR_DT_DOUBLE: return ldexp(1.0, -53);
    default: return -1;
    }
}

#define MAXV 8

/* One randomized check: the GEMM, V vectors, its sizes and element bytes, the error model's
 * figures, and host scratch: rv the V sign vectors (N each), u = op(B)·r (K each), row one
 * row of any operand in float64. */
typedef struct fv_check {
    const hir_gemm *g;
    int V;
    int64_t M, N, K;
    size_t ea, eb, eo;
    double u_out, gamma, lambda;
    double *rv, *u, *row;
} fv_check;

/* Ranks, dtypes and shapes checked; fills the sizes and u_out of *f. */
static int fv_validate(const hir_gemm *g, fv_check *f, hir_diag *e)
{
    if (g->a.ndim != 2 || g->b.ndim != 2 || g->out.ndim != 2)
        return hir_fail(e, "randomized check: 2-D operands expected"), -1;
    f->u_out = unit_round(g->out.dtype);
    if (f->u_out < 0 || unit_round(g->a.dtype) < 0 || unit_round(g->b.dtype) < 0)
        return hir_fail(e, "randomized check: float dtypes expected (got %s, %s -> %s)",
                             hir_dtype_name(g->a.dtype), hir_dtype_name(g->b.dtype),
                             hir_dtype_name(g->out.dtype)), -1;
    int64_t M = g->a.shape[0], K = g->a.shape[1];
    int64_t N = g->b_trans ? g->b.shape[0] : g->b.shape[1];
    if ((g->b_trans ? g->b.shape[1] : g->b.shape[0]) != K || g->out.shape[0] != M ||
        g->out.shape[1] != N)
        return hir_fail(e, "randomized check: shapes do not match"), -1;
    f->M = M, f->N = N, f->K = K;
    return 0;
}

/* beta[v] = bias · r_v (zero without a bias) */
static void fv_bias(const fv_check *f, double *beta)
{
    const hir_view *bv = f->g->bias;
    if (!bv)
        return;
    int64_t N = f->N;
    int64_t bst = bv->ndim ? bv->stride[bv->ndim - 1] : 0;
    for (int d = bv->ndim - 1; d >= 0; d--)
        if (bv->shape[d] != 1) { bst = bv->stride[d]; break; }
    hir_load_f64_n(f->row, bv->data, bv->dtype, bst, N);
    for (int v = 0; v < f->V; v++)
        for (int64_t j = 0; j < N; j++) beta[v] += f->row[j] * f->rv[(size_t)v * N + j];
}

/* u = op(B)·r for every vector; returns ‖B‖_F² */
static double fv_op_b(const fv_check *f, const char *B)
{
    const hir_gemm *g = f->g;
    int64_t N = f->N, K = f->K;
    int V = f->V;
    double *u = f->u, *row = f->row;
    const double *rv = f->rv;
    size_t eb = f->eb;
    memset(u, 0, (size_t)V * (size_t)K * sizeof *u);
    double bn2 = 0;
    if (g->b_trans) {                       /* B is [N, K]: u_k = Σ_n B[n,k] r_n */
        for (int64_t n = 0; n < N; n++) {
            hir_load_f64_n(row, B + n * g->b.stride[0] * (int64_t)eb, g->b.dtype,
                         g->b.stride[1], K);
            for (int64_t k = 0; k < K; k++) bn2 += row[k] * row[k];
            for (int v = 0; v < V; v++) {
                double rn = rv[(size_t)v * N + n], *uv = u + (size_t)v * K;
                for (int64_t k = 0; k < K; k++) uv[k] += row[k] * rn;
            }
        }
    } else {                                /* B is [K, N]: u_k = Σ_n B[k,n] r_n */
        for (int64_t k = 0; k < K; k++) {
            hir_load_f64_n(row, B + k * g->b.stride[0] * (int64_t)eb, g->b.dtype,
                         g->b.stride[1], N);
            for (int v = 0; v < V; v++) {
                double s = 0;
                const double *rr = rv + (size_t)v * N;
                for (int64_t n = 0; n < N; n++) s += row[n] * rr[n];
                u[(size_t)v * K + k] = s;
            }
            for (int64_t n = 0; n < N; n++) bn2 += row[n] * row[n];
        }
    }
    return bn2;
}

/* Row m of matrix bi: A_m·u against C_m·r for every vector, the result recorded in *r. */
static void fv_row(const fv_check *f, int64_t bi, int64_t m, const char *A, const char *C,
                   const double *beta, double bnorm, hir_data_gemm_check *r)
{
    const hir_gemm *g = f->g;
    int64_t N = f->N, K = f->K;
    int V = f->V;
    double *row = f->row;
    double au[MAXV] = {0}, cr[MAXV] = {0}, an2 = 0, cn2 = 0;
    hir_load_f64_n(row, A + m * g->a.stride[0] * (int64_t)f->ea, g->a.dtype, g->a.stride[1], K);
    for (int64_t k = 0; k < K; k++) an2 += row[k] * row[k];
    for (int v = 0; v < V; v++) {
        const double *uv = f->u + (size_t)v * K;
        double s = 0;
        for (int64_t k = 0; k < K; k++) s += row[k] * uv[k];
        au[v] = s;
    }
    hir_load_f64_n(row, C + m * g->out.stride[0] * (int64_t)f->eo, g->out.dtype,
                 g->out.stride[1], N);
    int finite = 1;
    for (int64_t n = 0; n < N; n++) {
        cn2 += row[n] * row[n];
        if (!isfinite(row[n])) finite = 0;
    }
    for (int v = 0; v < V; v++) {
        const double *rr = f->rv + (size_t)v * N;
        double s = 0;
        for (int64_t n = 0; n < N; n++) s += row[n] * rr[n];
        cr[v] = s;
    }
    double bound = f->lambda * (f->u_out * sqrt(cn2) + f->gamma * sqrt(an2) * bnorm) + 1e-300;
    int bad = !finite;
    double worst = finite ? 0 : INFINITY, diff_w = finite ? 0 : NAN;
    for (int v = 0; v < V && finite; v++) {
        double d = fabs(cr[v] - au[v] - beta[v]);
        if (!(d <= bound)) bad = 1;
        if (!(d / bound <= worst)) {
            worst = d / bound;
            diff_w = d;
        }
    }
    if (!(worst <= r->worst)) r->worst = worst;
    if (bad) {
        if (r->first_bad_row < 0) {
            r->first_bad_row = bi * f->M + m;
            r->diff_first = diff_w;
            r->bound_first = bound;
        }
        r->bad_rows++;
    }
}

/* Matrix bi of the batch, with its own sign vectors drawn from seed. */
static void fv_matrix(const fv_check *f, int64_t bi, uint64_t seed, hir_data_gemm_check *r)
{
    const hir_gemm *g = f->g;
    const char *A = (const char *)g->a.data + bi * g->batch_stride_a * (int64_t)f->ea;
    const char *B = (const char *)g->b.data + bi * g->batch_stride_b * (int64_t)f->eb;
    const char *C = (const char *)g->out.data + bi * g->batch_stride_out * (int64_t)f->eo;
    uint64_t st = seed ^ (0x5851f42d4c957f2dull * (uint64_t)(bi + 1));
    for (int64_t i = 0; i < (int64_t)f->V * f->N; i++)
        f->rv[i] = (splitmix(&st) >> 63) ? 1.0 : -1.0;
    double beta[MAXV] = {0};
    fv_bias(f, beta);
    double bnorm = sqrt(fv_op_b(f, B));
    for (int64_t m = 0; m < f->M; m++)
        fv_row(f, bi, m, A, C, beta, bnorm, r);
    r->rows += f->M;
}

int hir_data_verify_gemm(const hir_gemm *g, int vectors, uint64_t seed, hir_data_gemm_check *r,
                         hir_diag *e)
{
    memset(r, 0, sizeof *r);
    r->first_bad_row = -1;
    if (vectors < 1) vectors = 1;
    if (vectors > MAXV) vectors = MAXV;
    fv_check f = {.g = g, .V = vectors};
    if (fv_validate(g, &f, e) < 0)
        return -1;
    int64_t N = f.N, K = f.K;
    double u_acc = g->a.dtype == HIR_DT_DOUBLE ? ldexp(1.0, -53) : ldexp(1.0, -24);
    f.gamma = 4.0 * sqrt((double)(K > 0 ? K : 1)) * u_acc, f.lambda = 8.0;
    int64_t batch = g->batch < 1 ? 1 : g->batch;
    size_t rowmax = (size_t)(K > N ? K : N);
    f.rv = malloc((size_t)f.V * (size_t)N * sizeof *f.rv);
    f.u = calloc((size_t)f.V * (size_t)K, sizeof *f.u);
    f.row = malloc((rowmax ? rowmax : 1) * sizeof *f.row);
    int rc = -1;
    if (!f.rv || !f.u || !f.row) {
        hir_fail(e, "randomized check: out of host memory");
        goto out;
    }
    f.ea = hir_dtype_size(g->a.dtype), f.eb = hir_dtype_size(g->b.dtype);
    f.eo = hir_dtype_size(g->out.dtype);
    for (int64_t bi = 0; bi < batch; bi++)
        fv_matrix(&f, bi, seed, r);
    rc = 0;
out:
    free(f.rv);
    free(f.u);
    free(f.row);
    return rc;
}
