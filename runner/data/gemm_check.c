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
 * u_out: 2^-8 bf16, 2^-11 fp16, 2^-24 float, 2^-53 double; u_acc: 2^-24 (2^-53 for double).
 *
 * Threads: op(B)·r is split over fixed blocks of K and the rows of A and C over ranges, each
 * thread with its own row buffer. Every sum is taken in the same order whatever the number of
 * threads (‖B‖_F² as one partial per fixed block, added in block order), so the verdict and the
 * figures reported do not depend on it. */
#include <math.h>
#include <pthread.h>
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
#define MAX_THREADS 32
#define KBLOCK 512                    /* op(B)·r: K in blocks of this many, one partial each */

/* One randomized check: the GEMM, V vectors, its sizes and element bytes, the error model's
 * figures; per matrix of the batch: rv the V sign vectors (N each), u = op(B)·r (K each), the
 * bias terms beta and ‖B‖_F; bn2 one partial of ‖B‖_F² per block of K. */
typedef struct fv_check {
    const hir_gemm *g;
    int V;
    int64_t M, N, K;
    size_t ea, eb, eo;
    double u_out, gamma, lambda;
    double *rv, *u, *bn2;
    const char *A, *B, *C;
    int64_t bi;
    double beta[MAXV], bnorm;
} fv_check;

/* One thread's share: blocks [b0, b1) of K, or rows [r0, r1) of A and C; row its buffer
 * (max(K, N) doubles) and r its partial verdict. */
typedef struct fv_part {
    const fv_check *f;
    int64_t b0, b1, r0, r1;
    double *row;
    hir_data_gemm_check r;
    pthread_t tid;
    int started;
} fv_part;

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
static void fv_bias(fv_check *f, double *row)
{
    const hir_view *bv = f->g->bias;
    memset(f->beta, 0, sizeof f->beta);
    if (!bv)
        return;
    int64_t N = f->N;
    int64_t bst = bv->ndim ? bv->stride[bv->ndim - 1] : 0;
    for (int d = bv->ndim - 1; d >= 0; d--)
        if (bv->shape[d] != 1) { bst = bv->stride[d]; break; }
    hir_load_f64_n(row, bv->data, bv->dtype, bst, N);
    for (int v = 0; v < f->V; v++)
        for (int64_t j = 0; j < N; j++) f->beta[v] += row[j] * f->rv[(size_t)v * N + j];
}

/* a·b over n elements in four interleaved partial sums (independent additions the processor
 * can overlap), always added in the same order */
static double dot(const double *a, const double *b, int64_t n)
{
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int64_t k = 0;
    for (; k + 4 <= n; k += 4) {
        s0 += a[k] * b[k];
        s1 += a[k + 1] * b[k + 1];
        s2 += a[k + 2] * b[k + 2];
        s3 += a[k + 3] * b[k + 3];
    }
    for (; k < n; k++) s0 += a[k] * b[k];
    return (s0 + s1) + (s2 + s3);
}

/* u = op(B)·r over K's blocks [b0, b1) for every vector, and each block's share of ‖B‖_F² */
static void *fv_op_b(void *arg)
{
    fv_part *p = arg;
    const fv_check *f = p->f;
    const hir_gemm *g = f->g;
    int64_t N = f->N, K = f->K;
    int V = f->V;
    double *u = f->u, *row = p->row;
    const double *rv = f->rv;
    size_t eb = f->eb;
    for (int64_t b = p->b0; b < p->b1; b++) {
        int64_t k0 = b * KBLOCK, k1 = k0 + KBLOCK < K ? k0 + KBLOCK : K, nk = k1 - k0;
        double bn2 = 0;
        if (g->b_trans) {                   /* B is [N, K]: u_k = Σ_n B[n,k] r_n */
            for (int v = 0; v < V; v++)
                memset(u + (size_t)v * K + k0, 0, (size_t)nk * sizeof *u);
            for (int64_t n = 0; n < N; n++) {
                hir_load_f64_n(row, f->B + (n * g->b.stride[0] + k0 * g->b.stride[1]) *
                               (int64_t)eb, g->b.dtype, g->b.stride[1], nk);
                for (int64_t k = 0; k < nk; k++) bn2 += row[k] * row[k];
                for (int v = 0; v < V; v++) {
                    double rn = rv[(size_t)v * N + n], *uv = u + (size_t)v * K + k0;
                    for (int64_t k = 0; k < nk; k++) uv[k] += row[k] * rn;
                }
            }
        } else {                            /* B is [K, N]: u_k = Σ_n B[k,n] r_n */
            for (int64_t k = k0; k < k1; k++) {
                hir_load_f64_n(row, f->B + k * g->b.stride[0] * (int64_t)eb, g->b.dtype,
                               g->b.stride[1], N);
                for (int v = 0; v < V; v++)
                    u[(size_t)v * K + k] = dot(row, rv + (size_t)v * N, N);
                bn2 += dot(row, row, N);
            }
        }
        f->bn2[b] = bn2;
    }
    return NULL;
}

/* Keep the larger of two |difference|/bound figures; NaN (no bound held) is the largest. */
static void keep_worst(double *worst, double w)
{
    if (isnan(w) || (!isnan(*worst) && w > *worst)) *worst = w;
}

/* Row m: A_m·u against C_m·r for every vector, the result recorded in *r. */
static void fv_row(const fv_check *f, int64_t m, double *row, hir_data_gemm_check *r)
{
    const hir_gemm *g = f->g;
    int64_t N = f->N, K = f->K;
    int V = f->V;
    double au[MAXV] = {0}, cr[MAXV] = {0}, an2 = 0, cn2 = 0;
    hir_load_f64_n(row, f->A + m * g->a.stride[0] * (int64_t)f->ea, g->a.dtype, g->a.stride[1],
                   K);
    an2 = dot(row, row, K);
    for (int v = 0; v < V; v++)
        au[v] = dot(row, f->u + (size_t)v * K, K);
    hir_load_f64_n(row, f->C + m * g->out.stride[0] * (int64_t)f->eo, g->out.dtype,
                   g->out.stride[1], N);
    cn2 = dot(row, row, N);
    int finite = 1;               /* a NaN or inf element makes the square sum so; scan then */
    for (int64_t n = 0; n < N && !isfinite(cn2) && finite; n++)
        finite = isfinite(row[n]);
    for (int v = 0; v < V; v++)
        cr[v] = dot(row, f->rv + (size_t)v * N, N);
    double bound = f->lambda * (f->u_out * sqrt(cn2) + f->gamma * sqrt(an2) * f->bnorm) + 1e-300;
    int bad = !finite;
    double worst = finite ? 0 : INFINITY, diff_w = finite ? 0 : NAN;
    for (int v = 0; v < V && finite; v++) {
        double d = fabs(cr[v] - au[v] - f->beta[v]);
        if (!(d <= bound)) bad = 1;
        if (!(d / bound <= worst)) {
            worst = d / bound;
            diff_w = d;
        }
    }
    keep_worst(&r->worst, worst);
    if (bad) {
        if (r->first_bad_row < 0) {
            r->first_bad_row = f->bi * f->M + m;
            r->diff_first = diff_w;
            r->bound_first = bound;
        }
        r->bad_rows++;
    }
}

static void *fv_rows(void *arg)
{
    fv_part *p = arg;
    for (int64_t m = p->r0; m < p->r1; m++)
        fv_row(p->f, m, p->row, &p->r);
    return NULL;
}

/* Run fn over parts [0, nt): parts 1.. on threads of their own, part 0 here; a part whose
 * thread cannot start runs here too. */
static void fv_spread(fv_part *parts, int nt, void *(*fn)(void *))
{
    for (int t = 1; t < nt; t++)
        parts[t].started = pthread_create(&parts[t].tid, NULL, fn, &parts[t]) == 0;
    fn(&parts[0]);
    for (int t = 1; t < nt; t++) {
        if (parts[t].started) pthread_join(parts[t].tid, NULL);
        else fn(&parts[t]);
    }
}

/* Matrix bi of the batch, with its own sign vectors drawn from seed; the rows' verdicts
 * merged into *r in row order. */
static void fv_matrix(fv_check *f, fv_part *parts, int nt, int64_t bi, uint64_t seed,
                      hir_data_gemm_check *r)
{
    const hir_gemm *g = f->g;
    f->bi = bi;
    f->A = (const char *)g->a.data + bi * g->batch_stride_a * (int64_t)f->ea;
    f->B = (const char *)g->b.data + bi * g->batch_stride_b * (int64_t)f->eb;
    f->C = (const char *)g->out.data + bi * g->batch_stride_out * (int64_t)f->eo;
    uint64_t st = seed ^ (0x5851f42d4c957f2dull * (uint64_t)(bi + 1));
    for (int64_t i = 0; i < (int64_t)f->V * f->N; i++)
        f->rv[i] = (splitmix(&st) >> 63) ? 1.0 : -1.0;
    fv_bias(f, parts[0].row);
    int64_t nb = (f->K + KBLOCK - 1) / KBLOCK;
    int nk = nb < nt ? (int)(nb > 0 ? nb : 1) : nt;
    for (int t = 0; t < nk; t++)
        parts[t].b0 = nb * t / nk, parts[t].b1 = nb * (t + 1) / nk;
    fv_spread(parts, nk, fv_op_b);
    double bn2 = 0;
    for (int64_t b = 0; b < nb; b++) bn2 += f->bn2[b];
    f->bnorm = sqrt(bn2);
    int nm = f->M < nt ? (int)(f->M > 0 ? f->M : 1) : nt;
    for (int t = 0; t < nm; t++) {
        parts[t].r0 = f->M * t / nm, parts[t].r1 = f->M * (t + 1) / nm;
        memset(&parts[t].r, 0, sizeof parts[t].r);
        parts[t].r.first_bad_row = -1;
    }
    fv_spread(parts, nm, fv_rows);
    for (int t = 0; t < nm; t++) {
        const hir_data_gemm_check *q = &parts[t].r;
        keep_worst(&r->worst, q->worst);
        if (q->bad_rows && r->first_bad_row < 0) {
            r->first_bad_row = q->first_bad_row;
            r->diff_first = q->diff_first;
            r->bound_first = q->bound_first;
        }
        r->bad_rows += q->bad_rows;
    }
    r->rows += f->M;
}

int hir_data_verify_gemm(const hir_gemm *g, int vectors, uint64_t seed, int threads,
                         hir_data_gemm_check *r, hir_diag *e)
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
    /* threads pay off from about a million multiply-adds a matrix */
    int nt = threads < 1 ? 1 : threads > MAX_THREADS ? MAX_THREADS : threads;
    if (f.M * (K + N) < ((int64_t)1 << 20)) nt = 1;
    size_t rowmax = (size_t)(K > N ? K : N);
    fv_part parts[MAX_THREADS];
    memset(parts, 0, sizeof parts);
    f.rv = malloc((size_t)f.V * (size_t)N * sizeof *f.rv + 1);
    f.u = calloc((size_t)f.V * (size_t)K + 1, sizeof *f.u);
    f.bn2 = calloc((size_t)(K + KBLOCK - 1) / KBLOCK + 1, sizeof *f.bn2);
    int rc = -1, ok = f.rv && f.u && f.bn2;
    for (int t = 0; t < nt && ok; t++) {
        parts[t].f = &f;
        ok = (parts[t].row = malloc((rowmax ? rowmax : 1) * sizeof(double))) != NULL;
    }
    if (!ok) {
        hir_fail(e, "randomized check: out of host memory");
        goto out;
    }
    f.ea = hir_dtype_size(g->a.dtype), f.eb = hir_dtype_size(g->b.dtype);
    f.eo = hir_dtype_size(g->out.dtype);
    for (int64_t bi = 0; bi < batch; bi++)
        fv_matrix(&f, parts, nt, bi, seed, r);
    rc = 0;
out:
    for (int t = 0; t < nt; t++)
        free(parts[t].row);
    free(f.rv);
    free(f.u);
    free(f.bn2);
    return rc;
}
