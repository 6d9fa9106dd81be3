/* cpu_sdpa.c — the sdpa statement on the CPU backend (docs/runner-cpu.md, "sdpa"): scaled
 * dot-product attention on host memory, operands rounded to float, sums in double, results
 * rounded to float; the reference the other backends are checked against. */
#include <math.h>
#include <stdlib.h>

#include "runner/convert.h"
#include "runner/cpu/cpu_internal.h"

static double load_at(const hir_view *v, const int64_t *idx)
{
    int64_t off = 0;
    for (int d = 0; d < v->ndim; d++)
        off += (v->shape[d] == 1 ? 0 : idx[d]) * v->stride[d];
    return hir_load_f64((const char *)v->data + off * (int64_t)hir_dtype_size(v->dtype), v->dtype);
}

static void store_at(const hir_view *v, const int64_t *idx, double x)
{
    int64_t off = 0;
    for (int d = 0; d < v->ndim; d++)
        off += idx[d] * v->stride[d];
    hir_store_f64((char *)v->data + off * (int64_t)hir_dtype_size(v->dtype), v->dtype, x);
}

/* one (n, h) slice: scores, softmax with its log-sum-exp, then P·V */
static void sdpa_slice(const hir_sdpa *a, int64_t n, int64_t h, double *row)
{
    int64_t L = a->q.shape[2], E = a->q.shape[3], S = a->k.shape[2], Ev = a->v.shape[3];
    for (int64_t i = 0; i < L; i++) {
        double mx = -INFINITY;
        for (int64_t j = 0; j < S; j++) {
            int64_t qi[4] = {n, h, i, 0}, ki[4] = {n, h, j, 0}, bi[4] = {n, h, i, j};
            double acc = 0;
            for (int64_t c = 0; c < E; c++) {
                qi[3] = ki[3] = c;
                acc += (double)(float)load_at(&a->q, qi) * (double)(float)load_at(&a->k, ki);
            }
            double sc = (float)acc * a->scale;
            if (a->has_bias)
                sc += load_at(&a->bias, bi);
            if ((a->causal && j > i) || (a->has_mask && load_at(&a->mask, bi) == 0))
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
            store_at(&a->lse, li, (float)(mx + log(sum)));
        for (int64_t c = 0; c < Ev; c++) {
            double acc = 0;
            for (int64_t j = 0; j < S; j++) {
                int64_t vi[4] = {n, h, j, c};
                acc += (float)(row[j] / sum) * (double)(float)load_at(&a->v, vi);
            }
            int64_t oi[4] = {n, h, i, c};
            store_at(&a->out, oi, (float)acc);
        }
    }
}

int cpu_sdpa(hir_backend *be, hir_stream *s, const hir_sdpa *a, hir_error *e)
{
    (void)be;
    (void)s;
    int64_t S = a->k.shape[2];
    double *row = malloc((size_t)(S > 0 ? S : 1) * sizeof *row);
    if (!row)
        return hir_error_set(e, "out of memory for a row of %lld scores", (long long)S);
    for (int64_t n = 0; n < a->q.shape[0]; n++)
        for (int64_t h = 0; h < a->q.shape[1]; h++)
            sdpa_slice(a, n, h, row);
    free(row);
    return 0;
}
