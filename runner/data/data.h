/* data.h — the data room (runner/data/): deterministic program inputs
 * (--inputs=random|zeros|ones|arange) defined on the GLOBAL tensor so a rank's shard equals the
 * matching slice of an unsharded run, the dtype-aware comparison of results against a
 * reference, Freivalds' randomized check of a GEMM result (gemm_check.c), and .npy files
 * (npy.h). Host memory only: it may use the backend room's views and conversions, the dialect
 * and support/, never a backend itself. */
#ifndef HIR_RUNNER_DATA_H
#define HIR_RUNNER_DATA_H

#include <stdint.h>

#include "runner/backend/backend.h"

typedef enum hir_data_kind {
    HIR_DATA_RANDOM = 0,   /* uniform in [-1, 1) for floats; see data.c for integers */
    HIR_DATA_ZEROS,
    HIR_DATA_ONES,
    HIR_DATA_ARANGE,       /* global linear index, wrapped where the dtype cannot hold it */
} hir_data_kind;

int         hir_data_kind_lookup(const char *name, hir_data_kind *out);   /* 0 or -1 */
/* A tensor's key for hir_data_fill: FNV-1a of its name (e.g. "T0"), stable across runs. */
uint64_t    hir_data_key(const char *name);
/* The value of global element `index` (pure function of its arguments), before rounding
 * to dtype. */
double      hir_data_value(hir_data_kind k, hir_dtype dt, uint64_t seed, uint64_t tensor_key,
                           uint64_t index);

/* Fill the contiguous local block host[local_shape] that sits at `offset` inside a tensor of
 * global_shape (offset NULL = origin, global_shape NULL = local_shape). */
int hir_data_fill(void *host, hir_dtype dt, int ndim, const int64_t *local_shape,
                  const int64_t *global_shape, const int64_t *offset, hir_data_kind kind,
                  uint64_t seed, uint64_t tensor_key, hir_diag *e);

typedef struct hir_compare_result {
    int64_t n;
    int64_t mismatches;
    int64_t first_bad;           /* -1 when none */
    double got_first, want_first;
    double max_abs, max_rel;     /* over finite pairs */
    double atol, rtol, scale;    /* the rule that was applied (see hir_compare) */
} hir_compare_result;

/* Default tolerances of a dtype: element i passes when
 *     |got_i - want_i| <= atol * scale + rtol * |want_i|,   scale = max_i |want_i| (1 if 0)
 * integers and bool must match exactly. */
void hir_compare_tolerance(hir_dtype dt, double *atol, double *rtol);
/* Compare n contiguous elements of dtype dt. Returns 0 when all pass, 1 when some do not,
 * -1 when dt cannot be compared on the host. NaN matches only NaN; inf only the same inf. */
int  hir_compare(const void *got, const void *want, hir_dtype dt, int64_t n,
                 hir_compare_result *r);
/* Same with explicit tolerances (negative = the dtype's default). */
int  hir_compare_with(const void *got, const void *want, hir_dtype dt, int64_t n, double atol,
                      double rtol, hir_compare_result *r);

/* Freivalds' check of a claimed product (gemm_check.c): g->out holds the result to verify
 * (host memory, any float dtype); g->a, g->b, g->bias are the true operands. For `vectors`
 * random ±1 vectors r it compares out·r with a·(op(b)·r) + (bias·r) in float64, row by row,
 * against a bound derived from the output dtype's rounding and the accumulation over K
 * (docs/runner.md), over up to `threads` threads of this process (the verdict and figures do
 * not depend on their number). Returns 0 (the verdict in *r) or -1 when the GEMM cannot be
 * checked. */
typedef struct hir_data_gemm_check {
    int64_t rows;                /* rows checked (times batch) */
    int64_t bad_rows;            /* rows whose difference exceeded the bound for some r */
    int64_t first_bad_row;       /* -1 when none */
    double worst;                /* largest |difference| / bound seen */
    double diff_first, bound_first;   /* at the first bad row */
} hir_data_gemm_check;
int hir_data_verify_gemm(const hir_gemm *g, int vectors, uint64_t seed, int threads,
                         hir_data_gemm_check *r, hir_diag *e);

#endif
