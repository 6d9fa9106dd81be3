/* cpu_sdpa.c — the sdpa statement on the CPU backend (docs/runner-cpu.md, "sdpa"): scaled
 * dot-product attention on host memory, operands rounded to float, sums in double, results
 * rounded to float; the reference the other backends are checked against. The (n, h) slices
 * are spread over threads (the node's processors, shared by its ranks): each slice is written
 * by one thread, so the result does not depend on their number. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner/boot/boot.h"
#include "runner/cpu/cpu_internal.h"

#define SDPA_MAX_THREADS 64

/* One thread's share: slices first, first + step, ... Each slice's q, k and v are first
 * rounded to float into contiguous rows (what the arithmetic reads anyway), so the dot products
 * run over unit strides; the sums are the same, in the same order, as over the strided views. */
typedef struct sdpa_worker {
    const hir_sdpa *a;
    int64_t first, step;
    float *q, *k, *v;            /* [L, E], [S, E], [S, Ev] of the current slice */
    double *row, *acc;           /* [S] scores, [Ev] sums */
    pthread_t tid;
    int started;
} sdpa_worker;

static void load_slice(const hir_view *x, int64_t n, int64_t h, float *dst)
{
    int64_t R = x->shape[2], C = x->shape[3];
    for (int64_t r = 0; r < R; r++)
        for (int64_t c = 0; c < C; c++) {
            int64_t idx[4] = {n, h, r, c};
            dst[r * C + c] = (float)hir_view_load_at(x, idx);
        }
}

/* one (n, h) slice: scores, softmax with its log-sum-exp, then P·V */
static void sdpa_slice(sdpa_worker *w, int64_t n, int64_t h)
{
    const hir_sdpa *a = w->a;
    int64_t L = a->q.shape[2], E = a->q.shape[3], S = a->k.shape[2], Ev = a->v.shape[3];
    double *row = w->row, *acc = w->acc;
    load_slice(&a->q, n, h, w->q);
    load_slice(&a->k, n, h, w->k);
    load_slice(&a->v, n, h, w->v);
    for (int64_t i = 0; i < L; i++) {
        double mx = -INFINITY;
        const float *qi = w->q + i * E;
        for (int64_t j = 0; j < S; j++) {
            const float *kj = w->k + j * E;
            int64_t bi[4] = {n, h, i, j};
            double dot = 0;
            for (int64_t c = 0; c < E; c++)
                dot += (double)qi[c] * (double)kj[c];
            double sc = (float)dot * a->scale;
            if (a->has_bias)
                sc += hir_view_load_at(&a->bias, bi);
            if ((a->causal && j > i) || (a->has_mask && hir_view_load_at(&a->mask, bi) == 0))
                sc = -INFINITY;
            row[j] = sc;
            if (sc > mx)
                mx = sc;
        }
        double sum = 0;
        for (int64_t j = 0; j < S; j++) {
            row[j] = exp(row[j] - mx);   /* a fully masked row: -inf - -inf = NaN, as torch */
            sum += row[j];
        }
        int64_t li[3] = {n, h, i};
        if (a->lse.data)
            hir_view_store_at(&a->lse, li, (float)(mx + log(sum)));
        for (int64_t c = 0; c < Ev; c++)
            acc[c] = 0;
        for (int64_t j = 0; j < S; j++) {
            double p = (float)(row[j] / sum);
            const float *vj = w->v + j * Ev;
            for (int64_t c = 0; c < Ev; c++)
                acc[c] += p * (double)vj[c];
        }
        for (int64_t c = 0; c < Ev; c++) {
            int64_t oi[4] = {n, h, i, c};
            hir_view_store_at(&a->out, oi, (float)acc[c]);
        }
    }
}

static void *sdpa_work(void *arg)
{
    sdpa_worker *w = arg;
    int64_t H = w->a->q.shape[1], slices = w->a->q.shape[0] * H;
    for (int64_t b = w->first; b < slices; b += w->step)
        sdpa_slice(w, b / H, b % H);
    return NULL;
}

static void worker_free(sdpa_worker *w)
{
    free(w->q);
    free(w->k);
    free(w->v);
    free(w->row);
    free(w->acc);
}

/* threads: the node's processors shared by the ranks on it, at most one per slice */
static int thread_count(hir_backend *be, int64_t slices)
{
    int t = hir_boot_threads(be->cfg.boot, SDPA_MAX_THREADS);
    return t > slices ? (int)slices : t;
}

int cpu_sdpa(hir_backend *be, hir_stream *s, const hir_sdpa *a, hir_diag *e)
{
    (void)s;
    int64_t L = a->q.shape[2], E = a->q.shape[3], S = a->k.shape[2], Ev = a->v.shape[3];
    int64_t slices = a->q.shape[0] * a->q.shape[1];
    if (slices == 0 || L == 0 || Ev == 0)
        return 0;
    int nt = thread_count(be, slices);
    sdpa_worker w[SDPA_MAX_THREADS];
    memset(w, 0, sizeof w);
    int rc = 0;
    for (int t = 0; t < nt; t++) {
        w[t].a = a;
        w[t].first = t;
        w[t].step = nt;
        w[t].q = malloc((size_t)(L * E > 0 ? L * E : 1) * sizeof(float));
        w[t].k = malloc((size_t)(S * E > 0 ? S * E : 1) * sizeof(float));
        w[t].v = malloc((size_t)(S * Ev > 0 ? S * Ev : 1) * sizeof(float));
        w[t].row = malloc((size_t)(S > 0 ? S : 1) * sizeof(double));
        w[t].acc = malloc((size_t)Ev * sizeof(double));
        if (!w[t].q || !w[t].k || !w[t].v || !w[t].row || !w[t].acc) {
            rc = hir_fail(e, "out of memory for the rows of an sdpa slice (L=%lld, S=%lld, "
                               "E=%lld)", (long long)L, (long long)S, (long long)E);
            goto out;
        }
    }
    /* thread 0 is this one; a thread that cannot start leaves its share to this one */
    for (int t = 1; t < nt; t++)
        w[t].started = pthread_create(&w[t].tid, NULL, sdpa_work, &w[t]) == 0;
    sdpa_work(&w[0]);
    for (int t = 1; t < nt; t++) {
        if (w[t].started)
            pthread_join(w[t].tid, NULL);
        else
            sdpa_work(&w[t]);
    }
out:
    for (int t = 0; t < nt; t++)
        worker_free(&w[t]);
    return rc;
}
