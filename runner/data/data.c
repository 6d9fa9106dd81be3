/* data.c — deterministic inputs and result comparison. Every input value is a pure function
 * of (seed, tensor key, global linear index) through a counter-based hash, so any rank can
 * produce its shard without communication and sharded and unsharded runs see equal data. */
#include <math.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "runner/backend/convert.h"
#include "runner/data/data.h"
#include "support/support.h"

static const char *const kind_names[] = {"random", "zeros", "ones", "arange"};

int hir_data_kind_lookup(const char *name, hir_data_kind *out)
{
    for (int i = 0; i < 4; i++)
        if (!strcmp(name, kind_names[i])) {
            *out = (hir_data_kind)i;
            return 0;
        }
    return -1;
}

uint64_t hir_data_key(const char *name)
{
    return hir_fnv1a_str(name, HIR_FNV1A_INIT);
}

/* splitmix64's finalizer: a bijective mix with full avalanche, the usual choice for turning
 * a counter into a stream of independent-looking 64-bit values. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* One stream per (seed, tensor), one value per index of it; hash3 = at(stream_of(...), i). */
static uint64_t stream_of(uint64_t seed, uint64_t key)
{
    return mix64(seed * 0x9E3779B97F4A7C15ull + mix64(key + 0x632BE59BD9B4E019ull));
}

static uint64_t hash_at(uint64_t stream, uint64_t index)
{
    return mix64(stream ^ (index * 0x9E3779B97F4A7C15ull + 0xD1B54A32D192ED03ull));
}

static uint64_t hash3(uint64_t seed, uint64_t key, uint64_t index)
{
    return hash_at(stream_of(seed, key), index);
}

static double random_float(uint64_t h)
{
    return (double)(h >> 11) * 0x1.0p-52 - 1.0;   /* 53 random bits -> [-1, 1) */
}

/* arange wraps where consecutive integers stop being exact: 2^8 for bf16 (8 significant
 * bits), 2^11 for f16, 2^24 for f32, and the value range for integer types (int8 at 128,
 * uint8 at 256, ...); bool alternates 0, 1. Wrapping keeps every value exact, so an arange
 * input checks data movement bit for bit. */
static uint64_t arange_period(hir_dtype dt)
{
    switch (dt) {
    case HIR_DT_BFLOAT: return 1ull << 8;
    case HIR_DT_HALF: return 1ull << 11;
    case HIR_DT_FLOAT: return 1ull << 24;
    case HIR_DT_DOUBLE: return 1ull << 53;
    case HIR_DT_BOOL: return 2;
    case HIR_DT_INT8: return 1ull << 7;
    case HIR_DT_UINT8: return 1ull << 8;
    case HIR_DT_INT16: return 1ull << 15;
    case HIR_DT_UINT16: return 1ull << 16;
    case HIR_DT_INT32: return 1ull << 31;
    case HIR_DT_UINT32: return 1ull << 32;
    default: return 1ull << 62;
    }
}

double hir_data_value(hir_data_kind k, hir_dtype dt, uint64_t seed, uint64_t tensor_key,
                      uint64_t index)
{
    switch (k) {
    case HIR_DATA_ZEROS: return 0.0;
    case HIR_DATA_ONES: return 1.0;
    case HIR_DATA_ARANGE: return (double)(index % arange_period(dt));
    case HIR_DATA_RANDOM: default: break;
    }
    uint64_t h = hash3(seed, tensor_key, index);
    /* Integers: small values ([-8, 8) signed, [0, 16) unsigned, {0, 1} bool) so sums and
     * products in a test stay far from overflow. */
    if (dt == HIR_DT_BOOL)
        return (double)(h >> 63);
    if (hir_dtype_is_int(dt)) {
        int is_unsigned = dt == HIR_DT_UINT8 || dt == HIR_DT_UINT16 || dt == HIR_DT_UINT32 ||
                          dt == HIR_DT_UINT64;
        return is_unsigned ? (double)(h >> 60) : (double)(h >> 60) - 8.0;
    }
    return random_float(h);
}

/* Random floating-point data, one innermost row at a time: the stream is hashed once per
 * tensor and the global index advances by one along the row, so a GiB-sized input costs one
 * mix per element instead of three (the values are those of hir_data_value). Rows are split
 * over a few threads for large inputs. */
typedef struct fill_job {
    char *host;
    hir_dtype dt;
    size_t es;
    int ndim;
    const int64_t *local_shape, *gstride, *offset;
    int64_t row, r0, r1;         /* rows [r0, r1) of `row` elements */
    uint64_t stream;
} fill_job;

enum { FILL_BLOCK = 256 };

static void *fill_rows(void *arg)
{
    const fill_job *f = arg;
    int64_t idx[HIR_MAX_DIMS] = {0};
    int64_t r = f->r0;
    for (int d = f->ndim - 2; d >= 0; d--) {     /* multi-index of row r0 */
        idx[d] = r % f->local_shape[d];
        r /= f->local_shape[d];
    }
    for (int64_t rr = f->r0; rr < f->r1; rr++) {
        uint64_t g = 0;
        for (int d = 0; d < f->ndim; d++)
            g += (uint64_t)((f->offset ? f->offset[d] : 0) + idx[d]) * (uint64_t)f->gstride[d];
        char *p = f->host + (size_t)(rr * f->row) * f->es;
        switch (f->dt) {
        case HIR_DT_BFLOAT:
            /* values a block at a time, then converted in one call */
            for (int64_t j0 = 0; j0 < f->row; j0 += FILL_BLOCK) {
                double v[FILL_BLOCK];
                uint16_t b[FILL_BLOCK];
                int64_t nb = f->row - j0 < FILL_BLOCK ? f->row - j0 : FILL_BLOCK;
                for (int64_t j = 0; j < nb; j++)
                    v[j] = random_float(hash_at(f->stream, g + (uint64_t)(j0 + j)));
                hir_f64_to_bf16_n(b, v, (size_t)nb);
                memcpy(p + 2 * j0, b, (size_t)nb * 2);
            }
            break;
        case HIR_DT_FLOAT:
            for (int64_t j = 0; j < f->row; j++) {
                float v = (float)random_float(hash_at(f->stream, g + (uint64_t)j));
                memcpy(p + 4 * j, &v, 4);
            }
            break;
        default:
            for (int64_t j = 0; j < f->row; j++)
                hir_store_f64(p + (size_t)j * f->es, f->dt,
                              random_float(hash_at(f->stream, g + (uint64_t)j)));
        }
        for (int d = f->ndim - 2; d >= 0; d--) {
            if (++idx[d] < f->local_shape[d])
                break;
            idx[d] = 0;
        }
    }
    return NULL;
}

static void fill_random_float(char *host, hir_dtype dt, size_t es, int ndim,
                              const int64_t *local_shape, const int64_t *gstride,
                              const int64_t *offset, int64_t n, uint64_t stream)
{
    enum { MAX_THREADS = 8 };
    int64_t row = ndim ? local_shape[ndim - 1] : 1, rows = n / row;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int nt = n < ((int64_t)1 << 22) ? 1 : (int)(cpus < 1 ? 1 : cpus > MAX_THREADS ? MAX_THREADS : cpus);
    if (nt > rows) nt = (int)rows;
    fill_job job[MAX_THREADS];
    pthread_t th[MAX_THREADS];
    int started[MAX_THREADS] = {0};
    for (int t = 0; t < nt; t++) {
        job[t] = (fill_job){host, dt, es, ndim, local_shape, gstride, offset, row,
                            rows * t / nt, rows * (t + 1) / nt, stream};
        if (t > 0) started[t] = pthread_create(&th[t], NULL, fill_rows, &job[t]) == 0;
    }
    if (nt > 0) fill_rows(&job[0]);
    for (int t = 1; t < nt; t++) {
        if (started[t]) pthread_join(th[t], NULL);
        else fill_rows(&job[t]);             /* no thread: do its share here */
    }
}

int hir_data_fill(void *host, hir_dtype dt, int ndim, const int64_t *local_shape,
                  const int64_t *global_shape, const int64_t *offset, hir_data_kind kind,
                  uint64_t seed, uint64_t tensor_key, hir_diag *e)
{
    if (!hir_dtype_is_storable(dt))
        return hir_fail(e, "input data: dtype %s cannot be generated on the host",
                             hir_dtype_name(dt));
    if (ndim < 0 || ndim > HIR_MAX_DIMS)
        return hir_fail(e, "input data: rank %d outside 0..%d", ndim, HIR_MAX_DIMS);
    if ((unsigned)kind > HIR_DATA_ARANGE)
        return hir_fail(e, "input data: kind %d unknown", (int)kind);
    int64_t gstride[HIR_MAX_DIMS], n = 1, s = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        int64_t g = global_shape ? global_shape[d] : local_shape[d];
        int64_t o = offset ? offset[d] : 0;
        if (local_shape[d] < 0 || o < 0 || o + local_shape[d] > g)
            return hir_fail(e, "input data: block [%lld, +%lld) on axis %d outside extent %lld",
                                 (long long)o, (long long)local_shape[d], d, (long long)g);
        gstride[d] = s;
        s *= g;
        n *= local_shape[d];
    }
    if (n == 0)
        return 0;
    size_t es = hir_dtype_size(dt);
    if (kind == HIR_DATA_RANDOM && hir_dtype_is_float(dt)) {
        fill_random_float(host, dt, es, ndim, local_shape, gstride, offset, n,
                          stream_of(seed, tensor_key));
        return 0;
    }
    int64_t idx[HIR_MAX_DIMS] = {0};
    for (int64_t i = 0; i < n; i++) {
        uint64_t g = 0;
        for (int d = 0; d < ndim; d++)
            g += (uint64_t)((offset ? offset[d] : 0) + idx[d]) * (uint64_t)gstride[d];
        hir_store_f64((char *)host + (size_t)i * es, dt,
                      hir_data_value(kind, dt, seed, tensor_key, g));
        for (int d = ndim - 1; d >= 0; d--) {
            if (++idx[d] < local_shape[d])
                break;
            idx[d] = 0;
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- comparison */

/* Why atol scales with the tensor: most outputs are sums over K (GEMM, reductions) whose
 * rounding error is proportional to the magnitude of the terms, not of the result, so a
 * small output produced by cancellation can carry an absolute error near eps x max|want|.
 * The rtol term admits one rounding of the output itself plus a 1-ulp flip at a rounding
 * boundary (two implementations summing in different orders): about 2 ulp of the dtype.
 *   dtype   eps      atol (x scale)  rtol
 *   f64     2^-52    1e-12           1e-9
 *   f32     2^-23    1e-5            1e-5     (TF32 GEMMs need looser bounds)
 *   f16     2^-10    1e-3            2e-3
 *   bf16    2^-7     8e-3            1.6e-2   (covers an NCCL bf16 ring over a few ranks)
 *   ints, bool       exact           exact */
void hir_compare_tolerance(hir_dtype dt, double *atol, double *rtol)
{
    switch (dt) {
    case HIR_DT_DOUBLE: *atol = 1e-12; *rtol = 1e-9; break;
    case HIR_DT_FLOAT: *atol = 1e-5; *rtol = 1e-5; break;
    case HIR_DT_HALF: *atol = 1e-3; *rtol = 2e-3; break;
    case HIR_DT_BFLOAT: *atol = 8e-3; *rtol = 1.6e-2; break;
    default: *atol = 0; *rtol = 0; break;
    }
}

int hir_compare_with(const void *got, const void *want, hir_dtype dt, int64_t n, double atol,
                     double rtol, hir_compare_result *r)
{
    memset(r, 0, sizeof *r);
    r->n = n;
    r->first_bad = -1;
    if (!hir_dtype_is_storable(dt))
        return -1;
    double da, dr;
    hir_compare_tolerance(dt, &da, &dr);
    r->atol = atol < 0 ? da : atol;
    r->rtol = rtol < 0 ? dr : rtol;
    size_t es = hir_dtype_size(dt);
    int exact = !hir_dtype_is_float(dt);
    double scale = 0;
    for (int64_t i = 0; i < n; i++) {
        double w = hir_load_f64((const char *)want + (size_t)i * es, dt);
        if (isfinite(w) && fabs(w) > scale)
            scale = fabs(w);
    }
    r->scale = scale > 0 ? scale : 1.0;
    for (int64_t i = 0; i < n; i++) {
        const char *pg = (const char *)got + (size_t)i * es, *pw = (const char *)want + (size_t)i * es;
        int bad;
        if (exact) {
            int64_t g = hir_load_i64(pg, dt), w = hir_load_i64(pw, dt);
            double d = fabs((double)g - (double)w);
            bad = g != w;
            if (d > r->max_abs) r->max_abs = d;
            if (w != 0 && d / fabs((double)w) > r->max_rel) r->max_rel = d / fabs((double)w);
        } else {
            double g = hir_load_f64(pg, dt), w = hir_load_f64(pw, dt);
            if (isnan(w) || isnan(g)) {
                bad = !(isnan(w) && isnan(g));
            } else if (isinf(w) || isinf(g)) {
                bad = g != w;
            } else {
                double d = fabs(g - w);
                bad = !(d <= r->atol * r->scale + r->rtol * fabs(w));
                if (d > r->max_abs) r->max_abs = d;
                if (w != 0 && d / fabs(w) > r->max_rel) r->max_rel = d / fabs(w);
            }
        }
        if (bad) {
            if (r->first_bad < 0) {
                r->first_bad = i;
                r->got_first = hir_load_f64(pg, dt);
                r->want_first = hir_load_f64(pw, dt);
            }
            r->mismatches++;
        }
    }
    return r->mismatches ? 1 : 0;
}

int hir_compare(const void *got, const void *want, hir_dtype dt, int64_t n,
                hir_compare_result *r)
{
    return hir_compare_with(got, want, dt, n, -1, -1, r);
}
