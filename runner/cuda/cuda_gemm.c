/* cuda_gemm.c — GEMM through cuBLASLt. Row-major hir views are mapped onto column-major
 * cuBLASLt by computing out^T = op(B)^T · A^T; a plan (descriptors + the algorithm from the
 * heuristic) is built once per shape/dtype/layout/epilogue/alignment and cached. With GEMM
 * tuning on (cfg.gemm_tune) the heuristic gives up to TUNE_MAX candidates and the first
 * eager use of a plan times each on the real buffers and keeps the fastest (plan_tune); a
 * cache file (cuda_gemm_cache.c) keeps winners from run to run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/cuda/cuda_internal.h"

static int lt_type(hir_dtype t, cudaDataType_t *out)
{
    switch (t) {
    case HIR_DT_FLOAT: *out = CUDA_R_32F; return 0;
    case HIR_DT_DOUBLE: *out = CUDA_R_64F; return 0;
    case HIR_DT_HALF: *out = CUDA_R_16F; return 0;
    case HIR_DT_BFLOAT: *out = CUDA_R_16BF; return 0;
    default: return -1;
    }
}

/* A 2-D operand as cuBLASLt sees it: row-major (unit column stride) or column-major. */
typedef struct mat { int row_major; int64_t ld; } mat;

static int classify(const hir_view *v, const char *what, mat *m, hir_diag *e)
{
    if (v->ndim != 2)
        return hir_fail(e, "gemm: %s must be 2-D (got %d-D)", what, v->ndim), -1;
    int64_t r = v->shape[0], c = v->shape[1];
    if (c == 1 || v->stride[1] == 1) {
        m->row_major = 1;
        m->ld = r == 1 ? (c > 1 ? c : 1) : v->stride[0];
        if (m->ld < c) goto bad;
        return 0;
    }
    if (r == 1 || v->stride[0] == 1) {
        m->row_major = 0;
        m->ld = c == 1 ? (r > 1 ? r : 1) : v->stride[1];
        if (m->ld < r) goto bad;
        return 0;
    }
bad:
    return hir_fail(e, "gemm: %s [%lld,%lld] with strides [%lld,%lld] is not a dense "
                            "row- or column-major matrix", what, (long long)r, (long long)c,
                         (long long)v->stride[0], (long long)v->stride[1]), -1;
}

/* Largest power of two <= 256 dividing every address the operand takes over the batch. */
static int64_t align_of(const void *p, int64_t batch_stride_bytes)
{
    uint64_t x = (uint64_t)(uintptr_t)p | (uint64_t)batch_stride_bytes | 256u;
    return (int64_t)(x & (~x + 1));
}

/* GEMM tuning: candidates asked of the heuristic, untimed and timed runs of each */
#define TUNE_MAX 16
#define TUNE_WARMUP 2
#define TUNE_RUNS 5

_Static_assert(sizeof(cublasLtMatmulAlgo_t) == HIR_GEMM_ALGO_BYTES,
               "the cache file stores cublasLtMatmulAlgo_t as 64 bytes");

static void plan_free(hir_cu_gemm_plan *p)
{
    free(p->cand);
    if (p->desc) cublasLtMatmulDescDestroy(p->desc);
    if (p->la) cublasLtMatrixLayoutDestroy(p->la);
    if (p->lb) cublasLtMatrixLayoutDestroy(p->lb);
    if (p->lc) cublasLtMatrixLayoutDestroy(p->lc);
}

static int layout(cublasLtMatrixLayout_t *l, cudaDataType_t t, int64_t rows, int64_t cols,
                  int64_t ld, int64_t batch, int64_t stride, hir_diag *e)
{
    HIR_CK(e, cublas, cublasLtMatrixLayoutCreate(l, t, (uint64_t)rows, (uint64_t)cols, ld));
    if (batch > 1) {
        int32_t bc = (int32_t)batch;
        HIR_CK(e, cublas, cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                           &bc, sizeof bc));
        HIR_CK(e, cublas, cublasLtMatrixLayoutSetAttribute(
                              *l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                              sizeof stride));
    }
    return 0;
}

/* A winner of the cache file for p, if it has one that cuBLASLt still accepts for p's
 * descriptors within the workspace (a line is never trusted blindly). */
static int plan_from_cache(hir_cu_backend *cb, hir_cu_gemm_plan *p)
{
    const hir_gemm_cache_entry *en =
        cb->gemm_cache ? hir_gemm_cache_find(cb->gemm_cache, p->key, cb->workspace_bytes)
                       : NULL;
    if (!en) return 0;
    cublasLtMatmulAlgo_t algo;
    cublasLtMatmulHeuristicResult_t chk;
    memcpy(&algo, en->algo, sizeof algo);
    if (cublasLtMatmulAlgoCheck(cb->lt, p->desc, p->la, p->lb, p->lc, p->lc, &algo, &chk) !=
            CUBLAS_STATUS_SUCCESS || chk.workspaceSize > cb->workspace_bytes)
        return 0;
    p->algo = algo;
    cb->tune_loaded++;
    return 1;
}

/* Tuning on: keeps the heuristic's candidates in p, unless the cache file has the winner or
 * there is nothing to choose from (then p is tuned already). */
static int plan_candidates(hir_cu_backend *cb, hir_cu_gemm_plan *p,
                           const cublasLtMatmulHeuristicResult_t *res, int nres, hir_diag *e)
{
    p->tuned = !cb->gemm_tune || nres < 2 || plan_from_cache(cb, p);
    if (p->tuned) return 0;
    if (!(p->cand = malloc((size_t)nres * sizeof *p->cand)))
        return hir_fail(e, "out of host memory"), -1;
    for (int i = 0; i < nres; i++) p->cand[i] = res[i].algo;
    p->ncand = nres;
    return 0;
}

/* Build the plan for key k (see hir_cu_gemm for the fields). */
static int plan_build(hir_cu_backend *cb, const int64_t *k, hir_cu_gemm_plan *p, hir_diag *e)
{
    int64_t M = k[0], N = k[1], K = k[2], lda = k[3], ldb = k[4], ldc = k[5];
    int transa = (int)k[6], transb = (int)k[7];
    cudaDataType_t tin = (cudaDataType_t)k[8], tout = (cudaDataType_t)k[9];
    int64_t batch = k[10], sa = k[11], sb = k[12], so = k[13];
    int bias = (int)k[14];
    cudaDataType_t tbias = (cudaDataType_t)k[15];
    int is64 = tin == CUDA_R_64F;
    /* fp32 stays fp32: CUBLAS_COMPUTE_32F never uses TF32 (that would be _FAST_TF32), so fp32
     * programs get the CPU reference's rounding; bf16/fp16 accumulate in fp32 likewise. */
    cublasComputeType_t ct = is64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
    cudaDataType_t scale = is64 ? CUDA_R_64F : CUDA_R_32F;
    HIR_CK(e, cublas, cublasLtMatmulDescCreate(&p->desc, ct, scale));
    cublasOperation_t opa = transa ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t opb = transb ? CUBLAS_OP_T : CUBLAS_OP_N;
    HIR_CK(e, cublas, cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &opa,
                                                     sizeof opa));
    HIR_CK(e, cublas, cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &opb,
                                                     sizeof opb));
    if (bias) {
        cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
        HIR_CK(e, cublas, cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                                         &epi, sizeof epi));
        HIR_CK(e, cublas, cublasLtMatmulDescSetAttribute(
                              p->desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &tbias, sizeof tbias));
    }
    /* cuBLASLt's A is our B (op(B)^T is [N,K]); its B is our A (A^T is [K,M]). */
    if (layout(&p->la, tin, transa ? K : N, transa ? N : K, ldb, batch, sb, e) < 0) return -1;
    if (layout(&p->lb, tin, transb ? M : K, transb ? K : M, lda, batch, sa, e) < 0) return -1;
    if (layout(&p->lc, tout, N, M, ldc, batch, so, e) < 0) return -1;

    cublasLtMatmulPreference_t pref;
    HIR_CK(e, cublas, cublasLtMatmulPreferenceCreate(&pref));
    uint64_t ws = cb->workspace_bytes;
    uint32_t al[4] = {(uint32_t)k[17], (uint32_t)k[16], (uint32_t)k[18], (uint32_t)k[19]};
    int st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                  &ws, sizeof ws);
    if (!st) st = cublasLtMatmulPreferenceSetAttribute(
                 pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al[0], sizeof al[0]);
    if (!st) st = cublasLtMatmulPreferenceSetAttribute(
                 pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al[1], sizeof al[1]);
    if (!st) st = cublasLtMatmulPreferenceSetAttribute(
                 pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al[2], sizeof al[2]);
    if (!st) st = cublasLtMatmulPreferenceSetAttribute(
                 pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al[2], sizeof al[2]);
    /* tuning off: the heuristic's first choice, as ever; on: up to TUNE_MAX of them, best
     * first, under the same workspace and alignment preferences */
    cublasLtMatmulHeuristicResult_t res[TUNE_MAX];
    int nres = 0;
    if (!st) st = cublasLtMatmulAlgoGetHeuristic(cb->lt, p->desc, p->la, p->lb, p->lc, p->lc,
                                                 pref, cb->gemm_tune ? TUNE_MAX : 1, res, &nres);
    cublasLtMatmulPreferenceDestroy(pref);
    HIR_CK_ST(e, cublas, "cublasLtMatmulPreferenceSetAttribute/AlgoGetHeuristic", st);
    if (nres < 1)
        return hir_fail(e, "cublasLtMatmulAlgoGetHeuristic: no algorithm for M=%lld N=%lld "
                                "K=%lld%s", (long long)M, (long long)N, (long long)K,
                             bias ? " with bias epilogue" : ""), -1;
    p->algo = res[0].algo;
    return plan_candidates(cb, p, res, nres, e);
}

static int plan_get(hir_cu_backend *cb, const int64_t *k, hir_cu_gemm_plan **out, hir_diag *e)
{
    uint64_t h = hir_fnv1a(k, 20 * sizeof(int64_t), HIR_FNV1A_INIT);
    for (int i = 0; i < cb->nplans; i++)
        if (cb->plans[i].hash == h && !memcmp(cb->plans[i].key, k, 20 * sizeof(int64_t)))
            return *out = &cb->plans[i], 0;
    if (hir_cu_grow((void **)&cb->plans, &cb->cap_plans, cb->nplans, sizeof(hir_cu_gemm_plan),
                    e) < 0)
        return -1;
    hir_cu_gemm_plan *p = &cb->plans[cb->nplans];
    memset(p, 0, sizeof *p);
    memcpy(p->key, k, 20 * sizeof(int64_t));
    p->hash = h;
    if (plan_build(cb, k, p, e) < 0) {
        plan_free(p);
        return -1;
    }
    cb->nplans++;
    *out = p;
    return 0;
}

/* ---------------------------------------------------------------- tuning */

/* One cublasLtMatmul of plan p with algorithm algo (its status: a candidate may fail). */
static int lt_run(hir_cu_backend *cb, hir_stream *s, hir_cu_gemm_plan *p,
                  const cublasLtMatmulAlgo_t *algo, const hir_gemm *g, const void *alpha,
                  const void *beta)
{
    return (int)cublasLtMatmul(cb->lt, p->desc, alpha, g->b.data, p->la, g->a.data, p->lb, beta,
                               g->out.data, p->lc, g->out.data, p->lc, algo, s->ws,
                               cb->workspace_bytes, s->s);
}

/* The bytes [*lo, *hi) that view v spans over batch matrices bstride elements apart. */
static void span_of(const hir_view *v, int64_t batch, int64_t bstride, uintptr_t *lo,
                    uintptr_t *hi)
{
    int64_t last = (batch - 1) * (bstride < 0 ? -bstride : bstride);
    for (int i = 0; i < v->ndim; i++)
        last += (v->shape[i] - 1) * (v->stride[i] < 0 ? -v->stride[i] : v->stride[i]);
    *lo = (uintptr_t)v->data;
    *hi = *lo + (uintptr_t)((last + 1) * (int64_t)hir_dtype_size(v->dtype));
}

/* Whether the output shares bytes with an operand: then the candidates' runs would change
 * what the real GEMM reads, and the plan is not tuned. (Every GEMM here has beta = 0: the
 * output is only written, so timing into it and writing it again after is harmless.) */
static int out_overlaps(const hir_gemm *g, const hir_view *bias, int64_t batch)
{
    uintptr_t olo, ohi, lo, hi;
    span_of(&g->out, batch, g->batch_stride_out, &olo, &ohi);
    span_of(&g->a, batch, g->batch_stride_a, &lo, &hi);
    if (lo < ohi && olo < hi) return 1;
    span_of(&g->b, batch, g->batch_stride_b, &lo, &hi);
    if (lo < ohi && olo < hi) return 1;
    if (!bias) return 0;
    span_of(bias, 1, 0, &lo, &hi);
    return lo < ohi && olo < hi;
}

/* Queues candidate c's runs on s: TUNE_WARMUP untimed, then TUNE_RUNS between the events
 * ev[0..TUNE_RUNS]; *ok is 0 when cuBLASLt refused one of them (the candidate is skipped). */
static int tune_queue(hir_cu_backend *cb, hir_stream *s, hir_cu_gemm_plan *p, int c,
                      const hir_gemm *g, const void *alpha, const void *beta, cudaEvent_t *ev,
                      int *ok, hir_diag *e)
{
    *ok = 0;
    for (int w = 0; w < TUNE_WARMUP; w++)
        if (lt_run(cb, s, p, &p->cand[c], g, alpha, beta)) return cudaGetLastError(), 0;
    HIR_CK(e, cuda, cudaEventRecord(ev[0], s->s));
    for (int r = 0; r < TUNE_RUNS; r++) {
        if (lt_run(cb, s, p, &p->cand[c], g, alpha, beta)) return cudaGetLastError(), 0;
        HIR_CK(e, cuda, cudaEventRecord(ev[r + 1], s->s));
    }
    *ok = 1;
    return 0;
}

/* The candidate with the least median time: *best its index (-1 when none ran), *ms its
 * time. */
static int tune_pick(hir_cu_backend *cb, const hir_cu_gemm_plan *p, cudaEvent_t *ev,
                     const int *ok, int *best, double *ms, hir_diag *e)
{
    *best = -1;
    for (int c = 0; c < p->ncand; c++) {
        if (!ok[c]) continue;
        float t[TUNE_RUNS];
        cudaEvent_t *E = &ev[c * (TUNE_RUNS + 1)];
        for (int r = 0; r < TUNE_RUNS; r++) {
            HIR_CK(e, cuda, cudaEventElapsedTime(&t[r], E[r], E[r + 1]));
            for (int i = r; i > 0 && t[i - 1] > t[i]; i--) {
                float x = t[i];
                t[i] = t[i - 1], t[i - 1] = x;
            }
        }
        cb->tune_candidates++;
        if (*best < 0 || t[TUNE_RUNS / 2] < *ms) *best = c, *ms = t[TUNE_RUNS / 2];
    }
    return 0;
}

/* The winner of p, appended to the cache file (by rank 0 only: ranks of one job would race). */
static int tune_save(hir_cu_backend *cb, const hir_cu_gemm_plan *p, double ms, hir_diag *e)
{
    if (!cb->gemm_cache || cb->base.cfg.rank != 0) return 0;
    hir_gemm_cache_entry en;
    memset(&en, 0, sizeof en);
    memcpy(en.key, p->key, sizeof en.key);
    en.workspace = cb->workspace_bytes;
    memcpy(en.algo, &p->algo, sizeof en.algo);
    en.ms = ms;
    return hir_gemm_cache_append(cb->gemm_cache, &en, e);
}

/* The first eager use of plan p: each candidate timed on stream s with the real operands
 * (the host waits for s once), the fastest kept. Not while s is being captured into a CUDA
 * graph (events cannot be waited for there): the capture takes the heuristic's first choice
 * and the plan is tuned at its next eager use. The caller then runs the GEMM with p->algo. */
static int plan_tune(hir_cu_backend *cb, hir_stream *s, hir_cu_gemm_plan *p, const hir_gemm *g,
                     const hir_view *bias, int64_t batch, const void *alpha, const void *beta,
                     hir_diag *e)
{
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    HIR_CK(e, cuda, cudaStreamIsCapturing(s->s, &cs));
    if (cs != cudaStreamCaptureStatusNone) return 0;
    p->tuned = 1;
    if (out_overlaps(g, bias, batch)) return 0;
    double t0 = hir_cu_now_s(), ms = 0;
    cudaEvent_t ev[TUNE_MAX * (TUNE_RUNS + 1)];
    int ok[TUNE_MAX] = {0}, nev = 0, rc = -1, best = -1;
    for (; nev < p->ncand * (TUNE_RUNS + 1); nev++)
        HIR_CK_GOTO(e, cuda, cudaEventCreate(&ev[nev]), out);
    for (int c = 0; c < p->ncand; c++)
        if (tune_queue(cb, s, p, c, g, alpha, beta, &ev[c * (TUNE_RUNS + 1)], &ok[c], e) < 0)
            goto out;
    if (hir_cu_stream_drain(cb, s, "gemm-tune: the candidates' runs", t0, e) < 0 ||
        tune_pick(cb, p, ev, ok, &best, &ms, e) < 0)
        goto out;
    rc = 0;
out:
    for (int i = 0; i < nev; i++) cudaEventDestroy(ev[i]);
    if (rc < 0 || best < 0) return rc;
    p->algo = p->cand[best];
    cb->tune_plans++;
    cb->tune_ms += (hir_cu_now_s() - t0) * 1e3;
    free(p->cand);
    p->cand = NULL, p->ncand = 0;
    return tune_save(cb, p, ms, e);
}

int hir_cu_gemm_tune_init(hir_cu_backend *cb, const char *mode, hir_diag *e)
{
    if (!mode || !*mode || !strcmp(mode, "off")) return 0;
    cb->gemm_tune = 1;
    if (!strcmp(mode, "on")) return 0;
    struct cudaDeviceProp prop;
    HIR_CK(e, cuda, cudaGetDeviceProperties(&prop, cb->device));
    hir_gemm_cache_ident id;
    hir_gemm_cache_ident_init(&id, (unsigned long long)cublasLtGetVersion(), prop.name);
    if (!(cb->gemm_cache = calloc(1, sizeof *cb->gemm_cache)))
        return hir_fail(e, "out of host memory"), -1;
    return hir_gemm_cache_load(cb->gemm_cache, mode, &id, e);
}

void hir_cu_gemm_tune_info(const hir_cu_backend *cb, hir_device_info *d)
{
    d->gemm_tune_plans = cb->tune_plans;
    d->gemm_tune_candidates = cb->tune_candidates;
    d->gemm_tune_ms = cb->tune_ms;
    d->gemm_tune_loaded = cb->tune_loaded;
    if (!cb->gemm_cache) return;
    d->gemm_tune_ignored = cb->gemm_cache->ignored;
    snprintf(d->gemm_tune_note, sizeof d->gemm_tune_note, "%s", cb->gemm_cache->note);
}

/* ---------------------------------------------------------------- the GEMM */

/* A GEMM's checked figures: the cuBLASLt dtypes, the operands' layouts and the sizes. */
typedef struct gemm_dims {
    cudaDataType_t ta, to;
    mat A, B, O;
    int64_t M, N, K, batch;
} gemm_dims;

/* The dtypes, layouts, shapes and batch of g, checked; fills *d. */
static int gemm_check(const hir_gemm *g, gemm_dims *d, hir_diag *e)
{
    cudaDataType_t ta, tb, to;
    if (lt_type(g->a.dtype, &ta) < 0 || lt_type(g->b.dtype, &tb) < 0 ||
        lt_type(g->out.dtype, &to) < 0 || ta != tb)
        return hir_fail(e, "gemm: unsupported dtypes a=%s b=%s out=%s (float, double, "
                                "__half, __bfloat; a and b alike)",
                             hir_dtype_name(g->a.dtype), hir_dtype_name(g->b.dtype),
                             hir_dtype_name(g->out.dtype)), -1;
    if ((ta == CUDA_R_32F || ta == CUDA_R_64F) ? to != ta : (to != ta && to != CUDA_R_32F))
        return hir_fail(e, "gemm: output dtype %s not allowed for inputs %s",
                             hir_dtype_name(g->out.dtype), hir_dtype_name(g->a.dtype)), -1;
    d->ta = ta, d->to = to;
    if (classify(&g->a, "a", &d->A, e) < 0 || classify(&g->b, "b", &d->B, e) < 0 ||
        classify(&g->out, "out", &d->O, e) < 0)
        return -1;
    if (!d->O.row_major)
        return hir_fail(e, "gemm: the output must have unit column stride"), -1;
    int64_t M = g->a.shape[0], K = g->a.shape[1];
    int64_t N = g->b_trans ? g->b.shape[0] : g->b.shape[1];
    int64_t Kb = g->b_trans ? g->b.shape[1] : g->b.shape[0];
    if (Kb != K || g->out.shape[0] != M || g->out.shape[1] != N)
        return hir_fail(e, "gemm: shapes do not match: a [%lld,%lld], b%s [%lld,%lld], "
                                "out [%lld,%lld]", (long long)M, (long long)K,
                             g->b_trans ? "^T" : "", (long long)g->b.shape[0],
                             (long long)g->b.shape[1], (long long)g->out.shape[0],
                             (long long)g->out.shape[1]), -1;
    d->M = M, d->N = N, d->K = K;
    d->batch = g->batch < 1 ? 1 : g->batch;
    if (d->batch > 1 && g->batch_stride_out == 0)
        return hir_fail(e, "gemm: batched output with batch stride 0"), -1;
    return 0;
}

/* The bias of g, checked: *tbias its dtype; *bias NULL when the epilogue cannot take it
 * (strided, or K == 0), so that it is added after the product. */
static int gemm_check_bias(const hir_gemm *g, const gemm_dims *d, cudaDataType_t *tbias,
                           const hir_view **bias, hir_diag *e)
{
    *bias = g->bias;
    if (!*bias) return 0;
    if (hir_cu_numel(*bias) != d->N)
        return hir_fail(e, "gemm: bias has %lld elements, expected N=%lld",
                             (long long)hir_cu_numel(*bias), (long long)d->N), -1;
    if (lt_type((*bias)->dtype, tbias) < 0 || (*tbias != d->to && *tbias != CUDA_R_32F))
        return hir_fail(e, "gemm: bias dtype %s must be the output's or float",
                             hir_dtype_name((*bias)->dtype)), -1;
    if (!hir_cu_view_contiguous(*bias) || d->K == 0) *bias = NULL;   /* epilogue wants dense */
    return 0;
}

/* The product through cuBLASLt, with the bias fused when a plan takes it; *bias becomes NULL
 * when it does not (the caller adds it then). */
static int gemm_matmul(hir_cu_backend *cb, hir_stream *s, const hir_gemm *g, const gemm_dims *d,
                       cudaDataType_t tbias, const hir_view **biasp, hir_diag *e)
{
    const hir_view *bias = *biasp;
    cudaDataType_t ta = d->ta;
    size_t ea = hir_dtype_size(g->a.dtype), eo = hir_dtype_size(g->out.dtype);
    int64_t k[20] = {d->M, d->N, d->K, d->A.ld, d->B.ld, d->O.ld,
                     /* transa: see the table in docs/cuda-backend.md */
                     g->b_trans == d->B.row_major, !d->A.row_major, ta, d->to, d->batch,
                     g->batch_stride_a, g->batch_stride_b, g->batch_stride_out,
                     bias != NULL, bias ? tbias : 0,
                     align_of(g->a.data, g->batch_stride_a * (int64_t)ea),
                     align_of(g->b.data, g->batch_stride_b * (int64_t)ea),
                     align_of(g->out.data, g->batch_stride_out * (int64_t)eo),
                     bias ? align_of(bias->data, 0) : 0};
    /* bias dtype float with a 16-bit output is legal in cuBLASLt; otherwise it must match */
    hir_cu_gemm_plan *p = NULL;
    hir_diag e2;
    hir_diag_init(&e2, NULL);
    int rc = plan_get(cb, k, &p, &e2);
    if (rc < 0 && !bias) hir_diag_move(e, &e2);
    hir_diag_fini(&e2);
    if (rc < 0) {
        if (!bias) return -1;
        /* no fused-bias kernel for this case: plain GEMM, then a broadcast add below */
        k[14] = 0, k[15] = 0, k[19] = 0;
        bias = *biasp = NULL;
        if (plan_get(cb, k, &p, e) < 0) return -1;
    }
    if (bias) {
        const void *bp = bias->data;
        HIR_CK(e, cublas, cublasLtMatmulDescSetAttribute(
                              p->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bp, sizeof bp));
    }
    double one64 = 1.0, zero64 = 0.0;
    float one32 = 1.0f, zero32 = 0.0f;
    const void *alpha = ta == CUDA_R_64F ? (const void *)&one64 : (const void *)&one32;
    const void *beta = ta == CUDA_R_64F ? (const void *)&zero64 : (const void *)&zero32;
    if (!p->tuned && plan_tune(cb, s, p, g, bias, d->batch, alpha, beta, e) < 0) return -1;
    HIR_CK(e, cublas, cublasLtMatmul(cb->lt, p->desc, alpha, g->b.data, p->la, g->a.data,
                                     p->lb, beta, g->out.data, p->lc, g->out.data, p->lc,
                                     &p->algo, s->ws, cb->workspace_bytes, s->s));
    return 0;
}

/* out += bias broadcast over rows (and batches) */
static int gemm_add_bias(hir_backend *be, hir_stream *s, const hir_gemm *g, const gemm_dims *d,
                         hir_diag *e)
{
    for (int64_t bi = 0; bi < d->batch; bi++) {
        hir_view o = g->out;
        o.data = (char *)o.data + bi * g->batch_stride_out * hir_dtype_size(o.dtype);
        hir_operand a = {0}, b = {0};
        a.view = o;
        b.view = *g->bias;
        b.view.ndim = 2;
        b.view.shape[0] = d->M, b.view.shape[1] = d->N;
        b.view.stride[0] = 0;
        b.view.stride[1] = g->bias->ndim ? g->bias->stride[g->bias->ndim - 1] : 0;
        for (int dim = g->bias->ndim - 1; dim >= 0; dim--)
            if (g->bias->shape[dim] != 1) { b.view.stride[1] = g->bias->stride[dim]; break; }
        if (hir_cu_binary(be, s, HIR_BIN_ADD, &o, &a, &b, e) < 0) return -1;
    }
    return 0;
}

int hir_cu_gemm(hir_backend *be, hir_stream *s, const hir_gemm *g, hir_diag *e)
{
    hir_cu_backend *cb = hir_cu(be);
    hir_cu_rec_other(cb);
    cudaDataType_t tbias = CUDA_R_32F;
    gemm_dims d;
    if (gemm_check(g, &d, e) < 0) return -1;
    if (d.M == 0 || d.N == 0) return 0;
    const hir_view *bias;
    if (gemm_check_bias(g, &d, &tbias, &bias, e) < 0) return -1;
    if (d.K == 0) {
        if (hir_cu_fill(be, s, &g->out, 0.0, e) < 0) return -1;
    } else if (gemm_matmul(cb, s, g, &d, tbias, &bias, e) < 0) {
        return -1;
    }
    if (g->bias && !bias && gemm_add_bias(be, s, g, &d, e) < 0) return -1;
    return 0;
}

void hir_cu_gemm_destroy(hir_cu_backend *cb)
{
    for (int i = 0; i < cb->nplans; i++) plan_free(&cb->plans[i]);
    free(cb->plans);
    cb->plans = NULL;
    cb->nplans = 0;
    if (cb->gemm_cache) hir_gemm_cache_free(cb->gemm_cache);
    free(cb->gemm_cache);
    cb->gemm_cache = NULL;
    if (cb->lt) cublasLtDestroy(cb->lt);
}
