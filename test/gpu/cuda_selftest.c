/* cuda_selftest.c — GPU self-test of the CUDA backend against host-computed references, run
 * by hand under `mpirun -np N hir-cuda-selftest` (needs a GPU, so it is no ctest; built with
 * the CUDA backend by test/gpu/CMakeLists.txt, run by test/gpu/run_gpu_checks.sh). Also
 * `--bench-gemm M K N [--tune] [--rounds R] [--iters I]` (bf16 linear TFLOP/s, checked; with
 * --tune also a backend with GEMM tuning on, interleaved), `--bench-copy-overlap M K N D
 * [--rounds R] [--iters I]` (what the all-gather's copies cost the chunk GEMMs on one GPU, per
 * way of issuing them, checked) and `--codegen` (compiles every generated kernel with NVRTC +
 * nvJitLink; needs no GPU). Prints PASS/FAIL per check. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvrtc.h>

#include "runner/boot/boot.h"
#include "runner/cuda/cuda_internal.h"

typedef struct tctx {
    hir_backend *be;
    hir_stream *main;
    int rank, size, pass, fail;
    uint64_t rng;
} tctx;

static void report(tctx *t, const char *name, int ok, const char *detail)
{
    if (ok) t->pass++;
    else t->fail++;
    if (!ok || t->rank == 0)
        printf("[rank %d] %s %s%s%s\n", t->rank, ok ? "PASS" : "FAIL", name,
               detail && detail[0] ? ": " : "", detail ? detail : "");
    fflush(stdout);
}

/* ---------------------------------------------------------------- host element helpers */

static uint64_t rnd(tctx *t)
{
    t->rng ^= t->rng << 13;
    t->rng ^= t->rng >> 7;
    t->rng ^= t->rng << 17;
    return t->rng;
}
static double urand(tctx *t, double lo, double hi)
{
    return lo + (hi - lo) * (double)(rnd(t) >> 11) / 9007199254740992.0;
}

static float bf2f(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static uint16_t f2bf(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}
static float h2f(uint16_t h)
{
    uint32_t s = (uint32_t)(h >> 15) << 31, ex = (h >> 10) & 0x1f, m = h & 0x3ff, u;
    if (ex == 0) {
        float f = ldexpf((float)m, -24);
        return s ? -f : f;
    }
    if (ex == 31) u = s | 0x7f800000u | (m << 13);
    else u = s | ((ex + 112) << 23) | (m << 13);
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static uint16_t f2h(float f)
{
    /* round to nearest even through the exact float grid of half */
    if (f != f) return 0x7e00;
    uint16_t sign = signbit(f) ? 0x8000 : 0;
    float a = fabsf(f);
    if (a >= 65520.0f) return sign | 0x7c00;
    if (a < ldexpf(1.0f, -14)) {
        float m = nearbyintf(a * ldexpf(1.0f, 24));
        return sign | (uint16_t)m;
    }
    int ex;
    float fr = frexpf(a, &ex);              /* a = fr * 2^ex, fr in [0.5,1) */
    float m = nearbyintf(fr * 2048.0f);     /* 11 significant bits */
    if (m >= 2048.0f) { m /= 2; ex++; }
    return sign | (uint16_t)(((ex + 14) << 10) | ((int)m - 1024));
}

static double get_el(const void *p, hir_dtype t, int64_t i)
{
    switch (t) {
    case HIR_DT_FLOAT: return ((const float *)p)[i];
    case HIR_DT_DOUBLE: return ((const double *)p)[i];
    case HIR_DT_HALF: return h2f(((const uint16_t *)p)[i]);
    case HIR_DT_BFLOAT: return bf2f(((const uint16_t *)p)[i]);
    case HIR_DT_BOOL: return ((const uint8_t *)p)[i] != 0;
    case HIR_DT_INT32: return ((const int32_t *)p)[i];
    case HIR_DT_INT64: return (double)((const int64_t *)p)[i];
    default: return NAN;
    }
}
static void set_el(void *p, hir_dtype t, int64_t i, double v)
{
    switch (t) {
    case HIR_DT_FLOAT: ((float *)p)[i] = (float)v; break;
    case HIR_DT_DOUBLE: ((double *)p)[i] = v; break;
    case HIR_DT_HALF: ((uint16_t *)p)[i] = f2h((float)v); break;
    case HIR_DT_BFLOAT: ((uint16_t *)p)[i] = f2bf((float)v); break;
    case HIR_DT_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    case HIR_DT_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
    case HIR_DT_INT64: ((int64_t *)p)[i] = (int64_t)v; break;
    default: break;
    }
}
static double eps_of(hir_dtype t)
{
    switch (t) {
    case HIR_DT_HALF: return 1e-3;
    case HIR_DT_BFLOAT: return 8e-3;
    case HIR_DT_FLOAT: return 2e-6;
    default: return 1e-12;
    }
}

/* A device tensor with a host mirror. */
typedef struct dbuf { void *d, *h; size_t bytes; hir_dtype t; int64_t n; } dbuf;

static int dbuf_new(tctx *t, dbuf *b, hir_dtype dt, int64_t n, hir_diag *e)
{
    b->t = dt;
    b->n = n;
    b->bytes = (size_t)n * hir_dtype_size(dt);
    b->h = calloc(1, b->bytes ? b->bytes : 1);
    return t->be->ops->alloc(t->be, b->bytes, &b->d, e);
}
static void dbuf_free(tctx *t, dbuf *b)
{
    t->be->ops->free(t->be, b->d);
    free(b->h);
}
static void dbuf_random(tctx *t, dbuf *b, double lo, double hi)
{
    for (int64_t i = 0; i < b->n; i++) {
        double v = urand(t, lo, hi);
        if (!hir_dtype_is_float(b->t)) v = floor(v);
        set_el(b->h, b->t, i, v);
    }
}
static int up(tctx *t, dbuf *b, hir_diag *e)
{
    return t->be->ops->upload(t->be, b->d, b->h, b->bytes, e);
}
static int down(tctx *t, dbuf *b, hir_diag *e)
{
    return t->be->ops->download(t->be, b->h, b->d, b->bytes, e);
}
static int poison(tctx *t, dbuf *b, hir_diag *e)
{
    memset(b->h, 0xff, b->bytes);   /* NaN for floats, -1 for ints */
    return up(t, b, e);
}

static hir_view mkview(void *data, hir_dtype dt, int nd, const int64_t *shape,
                       const int64_t *stride)
{
    hir_view v;
    memset(&v, 0, sizeof v);
    v.data = data;
    v.dtype = dt;
    v.ndim = nd;
    int64_t st = 1;
    for (int d = nd - 1; d >= 0; d--) {
        v.shape[d] = shape[d];
        v.stride[d] = stride ? stride[d] : st;
        st *= shape[d];
    }
    return v;
}

/* ---------------------------------------------------------------- GEMM */

/* colmajor: bit 0 = A, bit 1 = B are read through transposed (column-major) views */
static int gemm_case(tctx *t, hir_dtype dt, hir_dtype odt, int64_t M, int64_t K, int64_t N,
                     int b_trans, int bias, int64_t batch, int bcast_b, int64_t pad_lda,
                     int colmajor, char *detail, hir_diag *e)
{
    int64_t lda = colmajor & 1 ? M : K + pad_lda;
    int64_t na = batch * M * lda, nb = (bcast_b ? 1 : batch) * K * N, no = batch * M * N;
    dbuf A, B, O, Bi;
    memset(&Bi, 0, sizeof Bi);
    if (dbuf_new(t, &A, dt, na, e) || dbuf_new(t, &B, dt, nb, e) || dbuf_new(t, &O, odt, no, e))
        return -1;
    if (bias && dbuf_new(t, &Bi, odt, N, e)) return -1;
    dbuf_random(t, &A, -1, 1);
    dbuf_random(t, &B, -1, 1);
    if (bias) dbuf_random(t, &Bi, -1, 1);
    if (up(t, &A, e) || up(t, &B, e) || (bias && up(t, &Bi, e)) || poison(t, &O, e)) return -1;
    hir_gemm g;
    memset(&g, 0, sizeof g);
    int64_t sa[2] = {lda, 1};
    int64_t ash[2] = {M, K}, bsh[2] = {b_trans ? N : K, b_trans ? K : N}, osh[2] = {M, N};
    int64_t sac[2] = {1, M}, sbc[2] = {1, bsh[0]};
    g.a = mkview(A.d, dt, 2, ash, colmajor & 1 ? sac : sa);
    g.b = mkview(B.d, dt, 2, bsh, colmajor & 2 ? sbc : NULL);
    g.out = mkview(O.d, odt, 2, osh, NULL);
    hir_view bv = mkview(Bi.d, odt, 1, &N, NULL);
    g.bias = bias ? &bv : NULL;
    g.b_trans = b_trans;
    g.batch = batch;
    g.batch_stride_a = M * lda;
    g.batch_stride_b = bcast_b ? 0 : K * N;
    g.batch_stride_out = M * N;
    if (t->be->ops->gemm(t->be, t->main, &g, e) || down(t, &O, e)) return -1;
    double num = 0, den = 0;
    int64_t bad = 0;
    for (int64_t bi = 0; bi < batch; bi++)
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                double r = bias ? get_el(Bi.h, odt, j) : 0;
                for (int64_t k = 0; k < K; k++) {
                    double a = get_el(A.h, dt, bi * M * lda +
                                                   (colmajor & 1 ? k * M + i : i * lda + k));
                    int64_t row = b_trans ? j : k, col = b_trans ? k : j;
                    int64_t boff = (bcast_b ? 0 : bi * K * N) +
                                   (colmajor & 2 ? col * bsh[0] + row : row * bsh[1] + col);
                    r += a * get_el(B.h, dt, boff);
                }
                double o = get_el(O.h, odt, bi * M * N + i * N + j);
                if (o != o) bad++;
                num += (o - r) * (o - r);
                den += r * r;
            }
    double rel = sqrt(num / (den > 0 ? den : 1));
    double tol = odt == HIR_DT_DOUBLE ? 1e-12 : odt == HIR_DT_FLOAT ? 1e-5
               : odt == HIR_DT_HALF ? 2e-3 : 1e-2;
    snprintf(detail, 200, "rel err %.2e (tol %.0e), %lld unwritten", rel, tol, (long long)bad);
    dbuf_free(t, &A);
    dbuf_free(t, &B);
    dbuf_free(t, &O);
    if (bias) dbuf_free(t, &Bi);
    return (rel <= tol && bad == 0) ? 1 : 0;
}

static void test_gemm(tctx *t)
{
    static const struct { hir_dtype in, out; const char *name; } dts[] = {
        {HIR_DT_BFLOAT, HIR_DT_BFLOAT, "bf16"}, {HIR_DT_HALF, HIR_DT_HALF, "fp16"},
        {HIR_DT_FLOAT, HIR_DT_FLOAT, "fp32"}, {HIR_DT_DOUBLE, HIR_DT_DOUBLE, "fp64"},
        {HIR_DT_BFLOAT, HIR_DT_FLOAT, "bf16->fp32"}};
    for (size_t d = 0; d < sizeof dts / sizeof *dts; d++)
        for (int cfg = 0; cfg < 7; cfg++) {
            /* cfg: 0 matmul, 1 linear, 2 linear+bias, 3 batched (B broadcast)+bias, 4 lda pad,
             * 5 matmul with A and B column-major views, 6 linear with a column-major weight */
            int b_trans = cfg != 0 && cfg != 3 && cfg != 5, bias = cfg == 2 || cfg == 3;
            int64_t batch = cfg == 3 ? 3 : 1, pad = cfg == 4 ? 8 : 0;
            int64_t M = cfg == 4 ? 128 : 67, K = cfg == 4 ? 64 : 45, N = cfg == 4 ? 256 : 33;
            char name[128], detail[200] = "";
            static const char *cn[] = {"matmul", "linear", "linear+bias", "batch3+bcastB+bias",
                                       "linear lda+8", "matmul A^T,B^T views",
                                       "linear W^T view"};
            snprintf(name, sizeof name, "gemm %s %s %lldx%lldx%lld", dts[d].name, cn[cfg],
                     (long long)M, (long long)K, (long long)N);
            hir_diag e = {0};
            int ok = gemm_case(t, dts[d].in, dts[d].out, M, K, N, b_trans, bias, batch,
                               cfg == 3, pad, cfg == 5 ? 3 : cfg == 6 ? 2 : 0, detail, &e);
            report(t, name, ok == 1, ok < 0 ? hir_diag_last_error(&e) : detail);
            hir_diag_fini(&e);
        }
}

/* ---------------------------------------------------------------- element-wise */

static double ref_op(int tag, int op, double a, double b, double c)
{
    if (tag == 1) switch (op) {
        case HIR_UN_NEG: return -a;
        case HIR_UN_ABS: return fabs(a);
        case HIR_UN_EXP: return exp(a);
        case HIR_UN_LOG: return log(a);
        case HIR_UN_SQRT: return sqrt(a);
        case HIR_UN_RSQRT: return 1 / sqrt(a);
        case HIR_UN_TANH: return tanh(a);
        case HIR_UN_RELU: return a > 0 ? a : 0;
        case HIR_UN_SIGMOID: return 1 / (1 + exp(-a));
        case HIR_UN_GELU: return 0.5 * a * (1 + erf(a / sqrt(2.0)));
        case HIR_UN_SILU: return a / (1 + exp(-a));
        case HIR_UN_FLOOR: return floor(a);
        case HIR_UN_ROUND: return nearbyint(a);
        case HIR_UN_SET: return a;
        }
    if (tag == 2) switch (op) {
        case HIR_BIN_ADD: return a + b;
        case HIR_BIN_SUB: return a - b;
        case HIR_BIN_MUL: return a * b;
        case HIR_BIN_DIV: return a / b;
        case HIR_BIN_LT: return a < b;
        case HIR_BIN_MAX: return a > b ? a : b;
        case HIR_BIN_POW: return pow(a, b);
        case HIR_BIN_REMAINDER: { double r = fmod(a, b); return (r != 0 && (r < 0) != (b < 0)) ? r + b : r; }
        case HIR_BIN_BITAND: return (double)((int64_t)a & (int64_t)b);
        case HIR_BIN_GCD: { int64_t x = llabs((int64_t)a), y = llabs((int64_t)b);
                            while (y) { int64_t q = x % y; x = y; y = q; } return (double)x; }
        }
    if (tag == 3) switch (op) {
        case HIR_TER_WHERE: return a != 0 ? b : c;
        case HIR_TER_CLAMP: return a < b ? b : (a > c ? c : a);
        case HIR_TER_LERP: return a + c * (b - a);
        }
    return NAN;
}

typedef struct ew_case {
    const char *name;
    int tag, op;
    hir_dtype out, in[3];
    int scalar_mask;             /* operand i is a scalar */
    int bcast_mask;              /* operand i broadcast along dim 0 (stride 0) */
    int transpose0;              /* operand 0 read through a transposed view */
    double lo, hi;
} ew_case;

static int ew_run(tctx *t, const ew_case *c, char *detail, hir_diag *e)
{
    int64_t R = 37, C = 129, n = R * C;
    dbuf in[3], out;
    double sc[3] = {0};
    hir_operand ops[3];
    memset(ops, 0, sizeof ops);
    memset(in, 0, sizeof in);
    for (int i = 0; i < c->tag; i++) {
        if (c->scalar_mask >> i & 1) {
            sc[i] = hir_dtype_is_float(c->in[i]) ? 0.75 : 3;
            ops[i].is_scalar = 1;
            ops[i].scalar_is_int = !hir_dtype_is_float(c->in[i]);
            ops[i].f = sc[i];
            ops[i].i = (int64_t)sc[i];
            continue;
        }
        int bc = c->bcast_mask >> i & 1;
        if (dbuf_new(t, &in[i], c->in[i], bc ? C : n, e)) return -1;
        double lo = c->lo, hi = c->hi;
        if (c->tag == 3 && c->op == HIR_TER_WHERE && i == 0) lo = 0, hi = 2;
        if (c->tag == 3 && c->op == HIR_TER_CLAMP && i > 0)
            lo = i == 1 ? -1 : 0.5, hi = i == 1 ? -0.5 : 1;
        dbuf_random(t, &in[i], lo, hi);
        if (i == 1 && !hir_dtype_is_float(c->in[i]))        /* no integer division by 0 */
            for (int64_t k = 0; k < in[i].n; k++)
                if (get_el(in[i].h, c->in[i], k) == 0) set_el(in[i].h, c->in[i], k, 7);
        if (up(t, &in[i], e)) return -1;
        int64_t shp[2] = {R, C}, st[2] = {bc ? 0 : C, 1};
        if (c->transpose0 && i == 0) st[0] = 1, st[1] = R;   /* element (r,c) at c*R + r */
        ops[i].view = mkview(in[i].d, c->in[i], 2, shp, st);
    }
    if (dbuf_new(t, &out, c->out, n, e) || poison(t, &out, e)) return -1;
    int64_t shp[2] = {R, C};
    hir_view ov = mkview(out.d, c->out, 2, shp, NULL);
    int rc = c->tag == 1 ? t->be->ops->unary(t->be, t->main, c->op, &ov, &ops[0], e)
           : c->tag == 2 ? t->be->ops->binary(t->be, t->main, c->op, &ov, &ops[0], &ops[1], e)
           : t->be->ops->ternary(t->be, t->main, c->op, &ov, &ops[0], &ops[1], &ops[2], e);
    if (rc || down(t, &out, e)) return -1;
    int64_t bad = 0, first = -1;
    double fo = 0, fr = 0;
    for (int64_t r = 0; r < R; r++)
        for (int64_t col = 0; col < C; col++) {
            double v[3] = {0};
            for (int i = 0; i < c->tag; i++) {
                if (c->scalar_mask >> i & 1) { v[i] = sc[i]; continue; }
                int64_t idx = (c->bcast_mask >> i & 1) ? col
                            : (c->transpose0 && i == 0) ? col * R + r : r * C + col;
                v[i] = get_el(in[i].h, c->in[i], idx);
            }
            double ref = ref_op(c->tag, c->op, v[0], v[1], v[2]);
            unsigned char q[16];
            set_el(q, c->out, 0, ref);          /* the reference, stored as the output type */
            ref = get_el(q, c->out, 0);
            double o = get_el(out.h, c->out, r * C + col);
            double tol = 4 * eps_of(c->out) * fabs(ref) + 1e-6 +
                         (hir_dtype_is_float(c->out) ? 1e-5 * fabs(ref) : 0);
            if (!(fabs(o - ref) <= tol)) {
                if (first < 0) first = r * C + col, fo = o, fr = ref;
                bad++;
            }
        }
    snprintf(detail, 200, "%lld/%lld wrong%s", (long long)bad, (long long)n,
             bad ? "" : "");
    if (bad) snprintf(detail + strlen(detail), 200 - strlen(detail),
                      " (first at %lld: got %g, want %g)", (long long)first, fo, fr);
    for (int i = 0; i < c->tag; i++) if (in[i].h) dbuf_free(t, &in[i]);
    dbuf_free(t, &out);
    return bad == 0;
}

static void test_elementwise(tctx *t)
{
    const hir_dtype F = HIR_DT_FLOAT, B = HIR_DT_BFLOAT, H = HIR_DT_HALF, I = HIR_DT_INT32,
                    L = HIR_DT_INT64, D = HIR_DT_DOUBLE, Z = HIR_DT_BOOL;
    ew_case cases[] = {
        {"add f32+f32(bcast) -> bf16", 2, HIR_BIN_ADD, B, {F, F}, 0, 2, 0, -2, 2},
        {"mul bf16*scalar -> bf16", 2, HIR_BIN_MUL, B, {B, F}, 2, 0, 0, -2, 2},
        {"sub f16(transposed)-f16", 2, HIR_BIN_SUB, H, {H, H}, 0, 0, 1, -2, 2},
        {"div f64", 2, HIR_BIN_DIV, D, {D, D}, 0, 0, 0, 0.5, 2},
        {"lt f32 -> bool", 2, HIR_BIN_LT, Z, {F, F}, 0, 0, 0, -1, 1},
        {"max f32", 2, HIR_BIN_MAX, F, {F, F}, 0, 1, 0, -1, 1},
        {"pow f32", 2, HIR_BIN_POW, F, {F, F}, 0, 0, 0, 0.5, 1.5},
        {"remainder i32", 2, HIR_BIN_REMAINDER, I, {I, I}, 0, 0, 0, -50, 50},
        {"bitwise_and i64", 2, HIR_BIN_BITAND, L, {L, L}, 0, 0, 0, 0, 1000},
        {"gcd i64", 2, HIR_BIN_GCD, L, {L, L}, 0, 0, 0, 1, 1000},
        {"add i32+int scalar", 2, HIR_BIN_ADD, I, {I, I}, 2, 0, 0, -50, 50},
        {"exp f32", 1, HIR_UN_EXP, F, {F}, 0, 0, 0, -3, 3},
        {"log bf16", 1, HIR_UN_LOG, B, {B}, 0, 0, 0, 0.1, 4},
        {"rsqrt f32", 1, HIR_UN_RSQRT, F, {F}, 0, 0, 0, 0.1, 4},
        {"gelu bf16", 1, HIR_UN_GELU, B, {B}, 0, 0, 0, -3, 3},
        {"silu f32", 1, HIR_UN_SILU, F, {F}, 0, 0, 0, -3, 3},
        {"tanh f16", 1, HIR_UN_TANH, H, {H}, 0, 0, 0, -3, 3},
        {"relu f32", 1, HIR_UN_RELU, F, {F}, 0, 0, 0, -3, 3},
        {"neg i32", 1, HIR_UN_NEG, I, {I}, 0, 0, 0, -50, 50},
        {"abs f64", 1, HIR_UN_ABS, D, {D}, 0, 0, 0, -3, 3},
        {"round f32 (half even)", 1, HIR_UN_ROUND, F, {F}, 0, 0, 0, -30, 30},
        {"cast i32 -> f32", 1, HIR_UN_SET, F, {I}, 0, 0, 0, -1000, 1000},
        {"cast f32 -> f16", 1, HIR_UN_SET, H, {F}, 0, 0, 0, -100, 100},
        {"cast bf16 -> f64 (bcast)", 1, HIR_UN_SET, D, {B}, 0, 1, 0, -100, 100},
        {"cast f64 -> i64", 1, HIR_UN_SET, L, {D}, 0, 0, 0, -1000, 1000},
        {"where bool ? f32 : f32", 3, HIR_TER_WHERE, F, {Z, F, F}, 0, 0, 0, -2, 2},
        {"clamp f32", 3, HIR_TER_CLAMP, F, {F, F, F}, 0, 0, 0, -2, 2},
        {"lerp bf16 (bcast weight)", 3, HIR_TER_LERP, B, {B, B, B}, 0, 4, 0, -2, 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char name[160], detail[240] = "";
        snprintf(name, sizeof name, "elementwise %s", cases[i].name);
        hir_diag e = {0};
        int ok = ew_run(t, &cases[i], detail, &e);
        report(t, name, ok == 1, ok < 0 ? hir_diag_last_error(&e) : detail);
        hir_diag_fini(&e);
    }
}

/* copies (engine paths and the cast kernel) and fills */
static void test_copy_fill(tctx *t)
{
    hir_diag e = {0};
    char detail[200] = "";
    int64_t R = 64, C = 300;
    dbuf a, b;
    if (dbuf_new(t, &a, HIR_DT_FLOAT, R * C, &e) || dbuf_new(t, &b, HIR_DT_FLOAT, R * C, &e)) {
        report(t, "copy setup", 0, hir_diag_last_error(&e));
        return;
    }
    dbuf_random(t, &a, -5, 5);
    up(t, &a, &e);
    /* 1: dense same-dtype copy (cudaMemcpyAsync) */
    int64_t shp[2] = {R, C};
    hir_view va = mkview(a.d, HIR_DT_FLOAT, 2, shp, NULL), vb = mkview(b.d, HIR_DT_FLOAT, 2, shp, NULL);
    int ok = !poison(t, &b, &e) && !t->be->ops->copy(t->be, t->main, &vb, &va, &e) && !down(t, &b, &e) &&
             !memcmp(a.h, b.h, a.bytes);
    report(t, "copy dense f32 (memcpy)", ok, hir_diag_last_error(&e));
    /* 2: pitched 2-D sub-block (cudaMemcpy2DAsync): rows 0..R-1, cols 10..209 */
    int64_t sub[2] = {R, 200};
    hir_view sa = mkview((float *)a.d + 10, HIR_DT_FLOAT, 2, sub, va.stride);
    hir_view sb = mkview((float *)b.d + 50, HIR_DT_FLOAT, 2, sub, vb.stride);
    ok = !poison(t, &b, &e) && !t->be->ops->copy(t->be, t->main, &sb, &sa, &e) && !down(t, &b, &e);
    int64_t bad = 0;
    for (int64_t r = 0; ok && r < R; r++)
        for (int64_t c = 0; c < 200; c++)
            bad += ((float *)b.h)[r * C + 50 + c] != ((float *)a.h)[r * C + 10 + c];
    snprintf(detail, sizeof detail, "%lld wrong", (long long)bad);
    report(t, "copy pitched 2-D f32 (memcpy2D)", ok && !bad, ok ? detail : hir_diag_last_error(&e));
    /* 3: transposed copy (kernel) */
    int64_t tsh[2] = {C, R}, tst[2] = {1, C};
    hir_view ta = mkview(a.d, HIR_DT_FLOAT, 2, tsh, tst), tb = mkview(b.d, HIR_DT_FLOAT, 2, tsh, NULL);
    ok = !poison(t, &b, &e) && !t->be->ops->copy(t->be, t->main, &tb, &ta, &e) && !down(t, &b, &e);
    bad = 0;
    for (int64_t c = 0; ok && c < C; c++)
        for (int64_t r = 0; r < R; r++)
            bad += ((float *)b.h)[c * R + r] != ((float *)a.h)[r * C + c];
    snprintf(detail, sizeof detail, "%lld wrong", (long long)bad);
    report(t, "copy transposed f32 (kernel)", ok && !bad, ok ? detail : hir_diag_last_error(&e));
    /* 4: fills */
    ok = !poison(t, &b, &e) && !t->be->ops->fill(t->be, t->main, &vb, 3.5, &e) && !down(t, &b, &e);
    bad = 0;
    for (int64_t i = 0; ok && i < R * C; i++) bad += ((float *)b.h)[i] != 3.5f;
    report(t, "fill f32 3.5 (kernel)", ok && !bad, ok ? "" : hir_diag_last_error(&e));
    ok = !poison(t, &b, &e) && !t->be->ops->fill(t->be, t->main, &vb, 0.0, &e) && !down(t, &b, &e);
    bad = 0;
    for (int64_t i = 0; ok && i < R * C; i++) bad += ((float *)b.h)[i] != 0.0f;
    report(t, "fill f32 0 (memset)", ok && !bad, ok ? "" : hir_diag_last_error(&e));
    int64_t half_n = R * C / 2;
    hir_view lv = mkview(b.d, HIR_DT_INT64, 1, &half_n, NULL);
    ok = !poison(t, &b, &e) && !t->be->ops->fill(t->be, t->main, &lv, -7, &e) && !down(t, &b, &e);
    bad = 0;
    for (int64_t i = 0; ok && i < half_n; i++) bad += ((int64_t *)b.h)[i] != -7;
    report(t, "fill i64 -7 (kernel)", ok && !bad, ok ? "" : hir_diag_last_error(&e));
    dbuf_free(t, &a);
    dbuf_free(t, &b);
    hir_diag_fini(&e);
}

/* ---------------------------------------------------------------- reductions */

static void test_reduce(tctx *t)
{
    static const struct { const char *name; hir_reduce_op op; hir_dtype in, out; uint32_t mask;
                          int nan; } cs[] = {
        {"sum f32 axis 1", HIR_RED_SUM, HIR_DT_FLOAT, HIR_DT_FLOAT, 2, 0},
        {"sum f32 axis 0", HIR_RED_SUM, HIR_DT_FLOAT, HIR_DT_FLOAT, 1, 0},
        {"sum f32 all", HIR_RED_SUM, HIR_DT_FLOAT, HIR_DT_FLOAT, 3, 0},
        {"sum bf16 -> f32 axis 1", HIR_RED_SUM, HIR_DT_BFLOAT, HIR_DT_FLOAT, 2, 0},
        {"max f32 axis 1 (NaN propagates)", HIR_RED_MAX, HIR_DT_FLOAT, HIR_DT_FLOAT, 2, 1},
        {"fmax f32 axis 1 (NaN skipped)", HIR_RED_FMAX, HIR_DT_FLOAT, HIR_DT_FLOAT, 2, 1},
        {"min f64 axis 0", HIR_RED_MIN, HIR_DT_DOUBLE, HIR_DT_DOUBLE, 1, 0},
        {"sum i64 axis 1", HIR_RED_SUM, HIR_DT_INT64, HIR_DT_INT64, 2, 0},
        {"prod f32 axis 0", HIR_RED_PROD, HIR_DT_FLOAT, HIR_DT_FLOAT, 1, 0},
    };
    int64_t R = 45, C = 1000;
    for (size_t k = 0; k < sizeof cs / sizeof *cs; k++) {
        hir_diag e = {0};
        char name[128], detail[200] = "";
        snprintf(name, sizeof name, "reduce %s", cs[k].name);
        int64_t OR = cs[k].mask & 1 ? 1 : R, OC = cs[k].mask & 2 ? 1 : C;
        dbuf in, out;
        if (dbuf_new(t, &in, cs[k].in, R * C, &e) || dbuf_new(t, &out, cs[k].out, OR * OC, &e)) {
            report(t, name, 0, hir_diag_last_error(&e));
            continue;
        }
        int prod = cs[k].op == HIR_RED_PROD;
        dbuf_random(t, &in, prod ? 0.9 : -10, prod ? 1.1 : 10);
        if (cs[k].nan)
            for (int64_t r = 0; r < R; r += 3) set_el(in.h, cs[k].in, r * C + (r * 7) % C, NAN);
        int64_t ish[2] = {R, C}, osh[2] = {OR, OC};
        hir_view vi = mkview(in.d, cs[k].in, 2, ish, NULL), vo = mkview(out.d, cs[k].out, 2, osh, NULL);
        int ok = !up(t, &in, &e) && !poison(t, &out, &e) &&
                 !t->be->ops->reduce(t->be, t->main, cs[k].op, &vo, &vi, cs[k].mask, &e) &&
                 !down(t, &out, &e);
        int64_t bad = 0;
        for (int64_t o = 0; ok && o < OR * OC; o++) {
            int64_t orow = o / OC, ocol = o % OC;
            double acc = cs[k].op == HIR_RED_SUM ? 0 : cs[k].op == HIR_RED_PROD ? 1
                       : cs[k].op == HIR_RED_MIN ? INFINITY : -INFINITY;
            int sawnan = 0, allnan = 1;
            for (int64_t r = 0; r < R; r++)
                for (int64_t c = 0; c < C; c++) {
                    if (!(cs[k].mask & 1) && r != orow) continue;
                    if (!(cs[k].mask & 2) && c != ocol) continue;
                    double v = get_el(in.h, cs[k].in, r * C + c);
                    if (v != v) { sawnan = 1; continue; }
                    allnan = 0;
                    switch (cs[k].op) {
                    case HIR_RED_SUM: acc += v; break;
                    case HIR_RED_PROD: acc *= v; break;
                    case HIR_RED_MIN: case HIR_RED_FMIN: acc = v < acc ? v : acc; break;
                    default: acc = v > acc ? v : acc; break;
                    }
                }
            if (sawnan && (cs[k].op == HIR_RED_MAX || cs[k].op == HIR_RED_MIN || allnan)) acc = NAN;
            double got = get_el(out.h, cs[k].out, o);
            double tol = cs[k].out == HIR_DT_INT64 ? 0 : 1e-4 * (fabs(acc) + 10);
            if (acc != acc ? got == got : !(fabs(got - acc) <= tol)) {
                if (!bad) snprintf(detail, sizeof detail, "output %lld: got %g want %g",
                                   (long long)o, got, acc);
                bad++;
            }
        }
        report(t, name, ok && !bad, ok ? detail : hir_diag_last_error(&e));
        dbuf_free(t, &in);
        dbuf_free(t, &out);
        hir_diag_fini(&e);
    }
}

/* ---------------------------------------------------------------- user kernel (PTX file) */

static void test_user_kernel(tctx *t)
{
    hir_diag e = {0};
    const char *src =
        "extern \"C\" __global__ void axpy(const float *x, const float *y, float *o, long long n)"
        "{long long i=blockIdx.x*(long long)blockDim.x+threadIdx.x; if(i<n) o[i]=2.0f*x[i]+y[i];}";
    hir_cu_backend *cb = hir_cu(t->be);
    char arch[48], path[128];
    snprintf(arch, sizeof arch, "--gpu-architecture=compute_%d%d", cb->cc_major, cb->cc_minor);
    const char *opts[1] = {arch};
    nvrtcProgram prog;
    size_t n = 0;
    char *ptx = NULL;
    if (nvrtcCreateProgram(&prog, src, "axpy.cu", 0, NULL, NULL) ||
        nvrtcCompileProgram(prog, 1, opts) || nvrtcGetPTXSize(prog, &n) ||
        !(ptx = malloc(n)) || nvrtcGetPTX(prog, ptx)) {
        report(t, "user kernel (PTX via nvJitLink)", 0, "nvrtc failed");
        return;
    }
    nvrtcDestroyProgram(&prog);
    snprintf(path, sizeof path, "/tmp/hir_selftest_axpy_%d.ptx", t->rank);
    FILE *f = fopen(path, "w");
    if (!f) { free(ptx); report(t, "user kernel (PTX via nvJitLink)", 0, "cannot write"); return; }
    fputs(ptx, f);
    fclose(f);
    free(ptx);
    char side[160];
    snprintf(side, sizeof side, "%s.launch", path);
    f = fopen(side, "w");
    if (f) { fputs("entry=axpy\nblock=128\n", f); fclose(f); }
    int64_t N = 10000;
    dbuf x, y, o;
    int ok = !dbuf_new(t, &x, HIR_DT_FLOAT, N, &e) && !dbuf_new(t, &y, HIR_DT_FLOAT, N, &e) &&
             !dbuf_new(t, &o, HIR_DT_FLOAT, N, &e);
    if (ok) {
        dbuf_random(t, &x, -1, 1);
        dbuf_random(t, &y, -1, 1);
        hir_view vx = mkview(x.d, HIR_DT_FLOAT, 1, &N, NULL), vy = mkview(y.d, HIR_DT_FLOAT, 1, &N, NULL),
                 vo = mkview(o.d, HIR_DT_FLOAT, 1, &N, NULL);
        const hir_view *ins[2] = {&vx, &vy}, *outs[1] = {&vo};
        ok = !up(t, &x, &e) && !up(t, &y, &e) && !poison(t, &o, &e) &&
             !hir_cuda_load_user_kernel(t->be, 7, path, NULL, &e) &&
             !hir_cuda_launch_user_kernel(t->be, t->main, 7, ins, 2, outs, 1, &e) &&
             !down(t, &o, &e);
        int64_t bad = 0;
        for (int64_t i = 0; ok && i < N; i++)
            bad += ((float *)o.h)[i] != 2.0f * ((float *)x.h)[i] + ((float *)y.h)[i];
        if (bad) hir_fail(&e, "%lld wrong", (long long)bad);
        ok = ok && !bad;
        dbuf_free(t, &x), dbuf_free(t, &y), dbuf_free(t, &o);
    }
    report(t, "user kernel (PTX via nvJitLink, sidecar)", ok, ok ? "" : hir_diag_last_error(&e));
    remove(path);
    remove(side);
    hir_diag_fini(&e);
}

/* ---------------------------------------------------------------- NCCL */

static void test_nccl(tctx *t, int shared_gpu)
{
    int n = t->size, me = t->rank;
    int *team = malloc(n * sizeof(int));
    for (int i = 0; i < n; i++) team[i] = i;
    int64_t cnt = 1000;
    hir_diag e = {0};
    dbuf in, out;
    if (dbuf_new(t, &in, HIR_DT_FLOAT, cnt * n, &e) || dbuf_new(t, &out, HIR_DT_FLOAT, cnt * n, &e)) {
        report(t, "nccl setup", 0, hir_diag_last_error(&e));
        free(team);
        return;
    }
    for (int64_t i = 0; i < cnt * n; i++) ((float *)in.h)[i] = (float)(me * 10000 + i);
    up(t, &in, &e);
    int64_t c1 = cnt, cn = cnt * n;
    hir_view vin1 = mkview(in.d, HIR_DT_FLOAT, 1, &c1, NULL), vinn = mkview(in.d, HIR_DT_FLOAT, 1, &cn, NULL);
    hir_view vout1 = mkview(out.d, HIR_DT_FLOAT, 1, &c1, NULL), voutn = mkview(out.d, HIR_DT_FLOAT, 1, &cn, NULL);
    if (shared_gpu) {
        /* several ranks on one GPU: NCCL must be refused with a clear message, not hang */
        hir_collective c = {HIR_COMM_ALLREDUCE, HIR_BK_NCCL, team, n, me, -1, HIR_RED_SUM,
                            &vin1, &vout1, 1, 0};
        hir_work *w = NULL;
        int rc = t->be->ops->collective(t->be, t->main, &c, &w, &e);
        int ok = rc < 0 && strstr(hir_diag_last_error(&e), "two ranks on one GPU");
        report(t, "nccl refuses several ranks on one GPU", ok, hir_diag_last_error(&e));
        if (w) t->be->ops->work_release(t->be, w);
        goto done;
    }
    struct { const char *name; hir_comm_type k; const hir_view *i, *o; int root; } cs[] = {
        {"Allreduce", HIR_COMM_ALLREDUCE, &vin1, &vout1, -1},
        {"Allgather", HIR_COMM_ALLGATHER, &vin1, &voutn, -1},
        {"ReduceScatter", HIR_COMM_REDUCESCATTER, &vinn, &vout1, -1},
        {"Broadcast", HIR_COMM_BROADCAST, &vin1, &vout1, 0},
        {"Reduce", HIR_COMM_REDUCE, &vin1, &vout1, 0},
        {"Gather", HIR_COMM_GATHER, &vin1, &voutn, 0},
        {"Scatter", HIR_COMM_SCATTER, &vinn, &vout1, 0},
        {"SendRecv", HIR_COMM_SENDRECV, &vin1, &vout1, 0},
    };
    for (size_t k = 0; k < sizeof cs / sizeof *cs; k++) {
        if (cs[k].k == HIR_COMM_SENDRECV && n > 2) continue;
        char name[64];
        snprintf(name, sizeof name, "nccl %s (%d ranks)", cs[k].name, n);
        hir_collective c = {cs[k].k, HIR_BK_NCCL, team, n, me, cs[k].root, HIR_RED_SUM,
                            cs[k].i, cs[k].o, 100 + k, 0};
        hir_work *w = NULL;
        int ok = !poison(t, &out, &e) && !t->be->ops->collective(t->be, t->main, &c, &w, &e) &&
                 !t->be->ops->wait(t->be, t->main, w, &e) && !down(t, &out, &e);
        int64_t bad = 0;
        for (int64_t i = 0; ok && i < hir_cu_numel(cs[k].o); i++) {
            double want;
            int64_t j = i % cnt, blk = i / cnt;
            switch (cs[k].k) {
            case HIR_COMM_ALLREDUCE: want = 10000.0 * n * (n - 1) / 2 + n * (double)j; break;
            case HIR_COMM_ALLGATHER: case HIR_COMM_GATHER: want = blk * 10000.0 + j; break;
            case HIR_COMM_REDUCESCATTER: want = 10000.0 * n * (n - 1) / 2 + n * (double)(me * cnt + j); break;
            case HIR_COMM_SCATTER: want = me * cnt + j; break;   /* root 0's slice me */
            case HIR_COMM_REDUCE: want = me == 0 ? 10000.0 * n * (n - 1) / 2 + n * (double)j : NAN; break;
            default: want = j; break;                         /* from rank 0 */
            }
            if (want != want) break;
            if ((cs[k].k == HIR_COMM_GATHER) && me != 0) break;
            bad += ((float *)out.h)[i] != (float)want;
        }
        report(t, name, ok && !bad, ok ? (bad ? "wrong values" : "") : hir_diag_last_error(&e));
    }
done:
    dbuf_free(t, &in);
    dbuf_free(t, &out);
    free(team);
    hir_diag_fini(&e);
}

/* ---------------------------------------------------------------- CUDA-IPC ring */

/* Each rank sends its shard to (r-i) and receives chunk (r+i) for i = 1..d-1 on worker streams
 * (stream of step i = (i-1) % 4), `iters` times with data changing every iteration; the result
 * is accumulated on the device and checked at the end (and directly every 100 iterations). */
static void test_ring(tctx *t, hir_p2p_protocol proto, int iters)
{
    int d = t->size, r = t->rank;
    char name[96];
    snprintf(name, sizeof name, "ipc ring %s d=%d x%d", proto == HIR_P2P_PUT ? "put" : "get", d,
             iters);
    t->be->cfg.p2p_protocol = proto;
    hir_diag e = {0};
    int64_t S = 65536;
    dbuf shard, recv, acc;
    if (dbuf_new(t, &shard, HIR_DT_FLOAT, S, &e) || dbuf_new(t, &recv, HIR_DT_FLOAT, S * d, &e) ||
        dbuf_new(t, &acc, HIR_DT_FLOAT, S * d, &e)) {
        report(t, name, 0, hir_diag_last_error(&e));
        return;
    }
    int64_t all = S * d;
    hir_view vshard = mkview(shard.d, HIR_DT_FLOAT, 1, &S, NULL);
    hir_view vrecv = mkview(recv.d, HIR_DT_FLOAT, 1, &all, NULL);
    hir_view vacc = mkview(acc.d, HIR_DT_FLOAT, 1, &all, NULL);
    const hir_backend_ops *o = t->be->ops;
    int nw = d - 1 < 4 ? d - 1 : 4, ok = 1;
    hir_p2p *list = calloc(2 * (size_t)d, sizeof *list);
    hir_stream *ws[4];
    for (int k = 0; k < nw; k++) if (o->stream_get(t->be, k, &ws[k], &e)) ok = 0;
    for (int i = 1; i < d; i++) {
        hir_p2p *s = &list[2 * (i - 1)], *v = &list[2 * (i - 1) + 1];
        s->is_send = 1, s->peer = (r - i + d) % d, s->transport = HIR_BK_CUDA;
        s->buf = vshard, s->stmt_id = 1 + 10 * proto;
        v->is_send = 0, v->peer = (r + i) % d, v->transport = HIR_BK_CUDA;
        v->buf = vrecv, v->stmt_id = 2 + 10 * proto;
        v->buf.data = (float *)recv.d + (size_t)v->peer * S;
        v->buf.shape[0] = S;
    }
    ok = ok && !o->fill(t->be, t->main, &vacc, 0, &e) &&
         !o->share_handles(t->be, list, 2 * (d - 1), &e);
    hir_view mychunk = vshard;
    mychunk.data = (float *)recv.d + (size_t)r * S;
    int64_t bad = 0;
    hir_operand oa = {0}, ob = {0};
    oa.view = vacc, ob.view = vrecv;
    for (int it = 0; ok && it < iters; it++) {
        ok = !o->fill(t->be, t->main, &vshard, r * 1000.0 + it, &e) &&
             !o->copy(t->be, t->main, &mychunk, &vshard, &e);
        for (int k = 0; ok && k < nw; k++) ok = !o->stream_wait(t->be, ws[k], t->main, &e);
        for (int i = 1; ok && i < d; i++) {
            hir_stream *w = ws[(i - 1) % nw];
            hir_p2p *s = &list[2 * (i - 1)], *v = &list[2 * (i - 1) + 1];
            hir_work *ws_ = NULL, *wr = NULL;
            /* Get: send then recv; Put: recv then send (§4.6), else the ring deadlocks */
            if (proto == HIR_P2P_GET)
                ok = !o->p2p_post(t->be, w, s, &ws_, &e) && !o->p2p_post(t->be, w, v, &wr, &e);
            else
                ok = !o->p2p_post(t->be, w, v, &wr, &e) && !o->p2p_post(t->be, w, s, &ws_, &e);
            ok = ok && !o->wait(t->be, w, ws_, &e) && !o->wait(t->be, w, wr, &e);
        }
        for (int k = 0; ok && k < nw; k++) ok = !o->stream_wait(t->be, t->main, ws[k], &e);
        ok = ok && !o->binary(t->be, t->main, HIR_BIN_ADD, &vacc, &oa, &ob, &e);
        if (ok && (it % 100 == 99 || it == iters - 1)) {
            ok = !down(t, &recv, &e);
            for (int64_t k = 0; ok && k < all; k++)
                bad += ((float *)recv.h)[k] != (float)((k / S) * 1000.0 + it);
        }
    }
    ok = ok && !o->synchronize(t->be, &e) && !down(t, &acc, &e);
    for (int64_t k = 0; ok && k < all; k++) {
        double want = (double)(k / S) * 1000.0 * iters + (double)iters * (iters - 1) / 2;
        bad += ((float *)acc.h)[k] != (float)want;
    }
    char detail[1100];
    snprintf(detail, sizeof detail, "%s%lld wrong", ok ? "" : hir_diag_last_error(&e), (long long)bad);
    report(t, name, ok && !bad, detail);
    /* the peers read my buffers until their last wait: free only after everyone is done */
    hir_boot_barrier(t->be->cfg.boot, &e);
    dbuf_free(t, &shard);
    dbuf_free(t, &recv);
    dbuf_free(t, &acc);
    free(list);
    hir_diag_fini(&e);
}

/* IPC corner cases: P2P to self is refused; a post whose handles were never shared shares them
 * on the spot (ranks 0 and 1: one sends while the other receives). */
static void test_ipc_misc(tctx *t)
{
    hir_diag e = {0};
    int64_t S = 1024;
    dbuf b;
    if (dbuf_new(t, &b, HIR_DT_INT32, S, &e)) return;
    hir_p2p p = {1, t->rank, HIR_BK_CUDA, mkview(b.d, HIR_DT_INT32, 1, &S, NULL), 99};
    hir_work *w = NULL;
    int rc = t->be->ops->p2p_post(t->be, t->main, &p, &w, &e);
    report(t, "ipc send to self refused", rc < 0 && strstr(hir_diag_last_error(&e), "send to self"), hir_diag_last_error(&e));
    if (t->size >= 2 && t->rank < 2) {
        t->be->cfg.p2p_protocol = HIR_P2P_GET;
        for (int64_t i = 0; i < S; i++) ((int32_t *)b.h)[i] = (int32_t)(i * 3 + 1);
        int ok = t->rank == 0 ? !up(t, &b, &e) : !poison(t, &b, &e);
        p.peer = 1 - t->rank;
        p.is_send = t->rank == 0;
        p.stmt_id = 98;
        ok = ok && !t->be->ops->p2p_post(t->be, t->main, &p, &w, &e) &&
             !t->be->ops->wait(t->be, t->main, w, &e) && !down(t, &b, &e);
        int64_t bad = 0;
        for (int64_t i = 0; ok && i < S; i++) bad += ((int32_t *)b.h)[i] != (int32_t)(i * 3 + 1);
        report(t, "ipc post without ShareMemHandles (shares on the spot)", ok && !bad,
               ok ? (bad ? "wrong data" : "") : hir_diag_last_error(&e));
    }
    hir_boot_barrier(t->be->cfg.boot, &e);
    dbuf_free(t, &b);
    hir_diag_fini(&e);
}

/* ---------------------------------------------------------------- benchmark */

/* --bench-gemm M K N [--tune] [--rounds R] [--iters I]: bf16 linear out = A · W^T, A [M,K] and
 * W [N,K] tiled from 16M random bf16 values in [-1,1). Variants: "untuned" (the backend as
 * created by default) and with --tune "tuned" (a second backend on the same device with
 * gemm_tune "on", so its first GEMM times the candidates). Both time the same way, interleaved
 * in R rounds: 3 warm-ups, then CUDA events around I back-to-back GEMMs; medians, min and max
 * of the rounds' per-GEMM times. Each variant's output is then checked row by row against the
 * host (Freivalds with a random +-1 vector; a bad tile moves its rows' sums far past the
 * rounding bound): a figure whose GEMM was not checked is not reported as a result. */
typedef struct gvar {
    const char *name;
    hir_backend *be;
    hir_stream *s;
    void *O;
    double ms[64];
} gvar;

typedef struct gbench {
    int64_t M, K, N, ns;
    void *A, *W;
    uint16_t *h;                 /* the 16M seed values on the host */
    int rounds, iters;
} gbench;

static hir_gemm gb_gemm(const gbench *b, void *O)
{
    hir_gemm g;
    memset(&g, 0, sizeof g);
    int64_t ash[2] = {b->M, b->K}, wsh[2] = {b->N, b->K}, osh[2] = {b->M, b->N};
    g.a = mkview(b->A, HIR_DT_BFLOAT, 2, ash, NULL);
    g.b = mkview(b->W, HIR_DT_BFLOAT, 2, wsh, NULL);
    g.out = mkview(O, HIR_DT_BFLOAT, 2, osh, NULL);
    g.b_trans = 1;
    g.batch = 1;
    return g;
}

/* One round of variant v: 3 warm-ups, then events around b->iters GEMMs; per-GEMM ms. */
static int gb_round(const gbench *b, gvar *v, int r, hir_diag *e)
{
    const hir_backend_ops *o = v->be->ops;
    hir_gemm g = gb_gemm(b, v->O);
    hir_event *e0 = NULL, *e1 = NULL;
    int rc = -1;
    if (o->event_create(v->be, &e0, e) || o->event_create(v->be, &e1, e)) goto out;
    for (int i = 0; i < 3; i++)
        if (o->gemm(v->be, v->s, &g, e)) goto out;
    if (o->event_record(v->be, e0, v->s, e)) goto out;
    for (int i = 0; i < b->iters; i++)
        if (o->gemm(v->be, v->s, &g, e)) goto out;
    double ms = 0;
    if (o->event_record(v->be, e1, v->s, e) || o->event_elapsed_ms(v->be, e0, e1, &ms, e))
        goto out;
    v->ms[r] = ms / b->iters;
    rc = 0;
out:
    if (e0) o->event_destroy(v->be, e0);
    if (e1) o->event_destroy(v->be, e1);
    return rc;
}

static int dcmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Freivalds per row: sum_j O[i,j] r_j against sum_k A[i,k] (W^T r)_k, with the rounding bound
 * of a bf16 output (2^-8 relative per element) over the row. *bad: rows outside it. */
static int gb_check(tctx *t, const gbench *b, const gvar *v, int64_t *bad, double *worst,
                    hir_diag *e)
{
    int64_t M = b->M, K = b->K, N = b->N;
    uint16_t *o = malloc((size_t)(M * N) * 2);
    double *r = malloc((size_t)N * sizeof *r), *wr = calloc((size_t)K, sizeof *wr);
    int rc = -1;
    if (!o || !r || !wr) { hir_fail(e, "check: out of host memory"); goto out; }
    if (v->be->ops->synchronize(v->be, e) ||
        v->be->ops->download(v->be, o, v->O, (size_t)(M * N) * 2, e))
        goto out;
    for (int64_t j = 0; j < N; j++) r[j] = urand(t, 0, 1) < 0.5 ? -1.0 : 1.0;
    for (int64_t j = 0; j < N; j++)
        for (int64_t k = 0; k < K; k++) wr[k] += bf2f(b->h[(j * K + k) % b->ns]) * r[j];
    *bad = 0, *worst = 0;
    for (int64_t i = 0; i < M; i++) {
        double want = 0, got = 0, mag = 0;
        for (int64_t k = 0; k < K; k++) want += bf2f(b->h[(i * K + k) % b->ns]) * wr[k];
        for (int64_t j = 0; j < N; j++) {
            double x = bf2f(o[i * N + j]);
            got += x * r[j], mag += x * x;
        }
        double tol = 8.0 * sqrt(mag) * (1.0 / 256) + 1e-3, err = fabs(got - want) / tol;
        if (!(err <= 1.0)) (*bad)++;
        if (!(err <= *worst)) *worst = err;
    }
    rc = 0;
out:
    free(o), free(r), free(wr);
    return rc;
}

static void gb_report(const gbench *b, gvar *v, int64_t bad, double worst)
{
    double s[64], flop = 2.0 * (double)b->M * (double)b->N * (double)b->K;
    memcpy(s, v->ms, sizeof s);
    qsort(s, (size_t)b->rounds, sizeof *s, dcmp);
    double med = b->rounds % 2 ? s[b->rounds / 2]
                               : 0.5 * (s[b->rounds / 2 - 1] + s[b->rounds / 2]);
    printf("hir-cuda gemm bf16 linear m=%lld k=%lld n=%lld: %.3f ms, %.1f TFLOP/s (%s, median "
           "of %d rounds x %d, min %.3f max %.3f; check %s: %lld bad rows, worst %.3g of "
           "bound)\n", (long long)b->M, (long long)b->K, (long long)b->N, med,
           flop / (med * 1e-3) / 1e12, v->name, b->rounds, b->iters, s[0],
           s[b->rounds - 1], bad ? "FAIL" : "PASS", (long long)bad, worst);
    printf("gemm-bench variant=%s m=%lld k=%lld n=%lld check=%s rounds_ms=", v->name,
           (long long)b->M, (long long)b->K, (long long)b->N, bad ? "FAIL" : "PASS");
    for (int r = 0; r < b->rounds; r++) printf("%s%.5f", r ? "," : "", v->ms[r]);
    printf("\n");
}

/* The buffers of b (A, W from the seed) and one output per variant. */
static int gb_alloc(tctx *t, gbench *b, gvar *v, int nv, hir_diag *e)
{
    const hir_backend_ops *o = t->be->ops;
    void *seed = NULL;
    if (o->alloc(t->be, (size_t)(b->M * b->K) * 2, &b->A, e) ||
        o->alloc(t->be, (size_t)(b->N * b->K) * 2, &b->W, e) ||
        o->alloc(t->be, (size_t)b->ns * 2, &seed, e))
        return -1;
    for (int i = 0; i < nv; i++)
        if (o->alloc(t->be, (size_t)(b->M * b->N) * 2, &v[i].O, e)) return -1;
    if (!(b->h = malloc((size_t)b->ns * 2))) return hir_fail(e, "out of host memory"), -1;
    for (int64_t i = 0; i < b->ns; i++) b->h[i] = f2bf((float)urand(t, -1, 1));
    if (o->upload(t->be, seed, b->h, (size_t)b->ns * 2, e)) return -1;
    void *bufs[2] = {b->A, b->W};
    int64_t sizes[2] = {b->M * b->K, b->N * b->K};
    for (int k = 0; k < 2; k++)
        for (int64_t off = 0; off < sizes[k]; off += b->ns) {
            int64_t c = sizes[k] - off < b->ns ? sizes[k] - off : b->ns;
            if (cudaMemcpy((char *)bufs[k] + off * 2, seed, (size_t)c * 2,
                           cudaMemcpyDeviceToDevice) != cudaSuccess)
                return hir_fail(e, "cudaMemcpy of the operands failed"), -1;
        }
    o->free(t->be, seed);
    return 0;
}

/* A failed step of the benchmark: its message, and the diag released. */
static int bench_fail(hir_diag *e)
{
    fprintf(stderr, "bench: %s\n", hir_diag_last_error(e));
    hir_diag_fini(e);
    return 1;
}

static int bench_gemm(tctx *t, hir_backend *tuned, gbench *b)
{
    hir_diag e = {0};
    gvar v[2] = {{.name = "untuned", .be = t->be, .s = t->main},
                 {.name = "tuned", .be = tuned, .s = tuned ? tuned->ops->stream_main(tuned) : 0}};
    int nv = tuned ? 2 : 1, fails = 0;
    b->ns = 1 << 24;
    if (gb_alloc(t, b, v, nv, &e)) return bench_fail(&e);
    for (int r = 0; r < b->rounds; r++)
        for (int i = 0; i < nv; i++)   /* interleaved: untuned, tuned, untuned, ... */
            if (gb_round(b, &v[i], r, &e)) return bench_fail(&e);
    for (int i = 0; i < nv; i++) {
        int64_t bad = 0;
        double worst = 0;
        if (gb_check(t, b, &v[i], &bad, &worst, &e))
            return bench_fail(&e);
        gb_report(b, &v[i], bad, worst);
        fails += bad != 0;
    }
    hir_device_info d;
    if (tuned && tuned->ops->profile && !tuned->ops->profile->device_info(tuned, &d, &e))
        printf("gemm-tune: %d plan%s, %d candidates, %.1f ms\n", d.gemm_tune_plans,
               d.gemm_tune_plans == 1 ? "" : "s", d.gemm_tune_candidates, d.gemm_tune_ms);
    for (int i = 0; i < nv; i++) t->be->ops->free(t->be, v[i].O);
    t->be->ops->free(t->be, b->A), t->be->ops->free(t->be, b->W);
    free(b->h);
    hir_diag_fini(&e);
    return fails ? 1 : 0;
}

/* M K N (argv[2..4]), then from argv[first]: --tune, --rounds R (1-64), --iters I. */
static int bench_args(int argc, char **argv, int first, gbench *b, int *tune)
{
    b->M = atoll(argv[2]), b->K = atoll(argv[3]), b->N = atoll(argv[4]);
    b->rounds = 1, b->iters = 50, *tune = 0;
    for (int i = first; i < argc; i++) {
        if (!strcmp(argv[i], "--tune")) *tune = 1;
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) b->rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc) b->iters = atoi(argv[++i]);
        else return fprintf(stderr, "hir-cuda-selftest: --bench-gemm M K N [--tune] "
                                    "[--rounds R] [--iters I]: '%s'?\n", argv[i]), -1;
    }
    if (b->M < 1 || b->K < 1 || b->N < 1 || b->rounds < 1 || b->rounds > 64 || b->iters < 1)
        return fprintf(stderr, "hir-cuda-selftest: --bench-gemm: M K N positive, rounds 1-64, "
                               "iters positive\n"), -1;
    return 0;
}

/* ---------------------------------------------------------------- copies beside GEMMs */

/* --bench-copy-overlap M K N D [--rounds R] [--iters I]: what a rank's all-gather copies cost
 * its chunk GEMMs when both run on one GPU, per way of issuing the copies. One iteration: D
 * GEMMs [M,K]·[N,K]^T (bf16 linear, as --bench-gemm) on one stream and, on a second stream
 * started with them and not ordered against them, D-1 copies of an [M,K] bf16 shard into the
 * slots of a gathered buffer (what a rank of the CUDA-IPC all-gather moves). Methods, issued by
 * the backend's own copy (hir_cu_copy_d2d): memcpy (cudaMemcpyAsync, hir-run's default),
 * batch (cudaMemcpyBatchAsync, no flag) and batch-overlap (cudaMemcpyBatchAsync with
 * cudaMemcpyFlagPreferOverlapWithCompute, the driver's hint to leave the SMs to compute:
 * --ipc-copy=overlap); a method the runtime refuses is reported as such. Each round times,
 * interleaved, with CUDA events: the GEMMs alone, each method's copies alone, and each
 * method's copies beside the GEMMs (the iteration ends when both streams are
 * done; the GEMM stream's own span is reported too). Medians over the rounds. Checked: the GEMM
 * output (Freivalds, as --bench-gemm) and, per method, every slot equal to its source after
 * the method's own copies. */
/* the methods are hir_cu_copy_d2d's (the backend's copy for --ipc-copy), in its order */
enum { CM_N = HIR_CU_COPY_N };
static const char *const cm_name[CM_N] = {"memcpy", "batch", "batch-overlap"};

typedef struct cobench {
    gbench g;
    int64_t D;
    void *src, *dst;             /* the shard; D-1 slots of M*K elements */
    size_t bytes;                /* one shard */
    int device;
    cudaStream_t cs;
    cudaEvent_t ev[4];
    double gemm_ms[64], copy_ms[CM_N][64], both_ms[CM_N][64], gs_ms[CM_N][64];
    cudaError_t refused[CM_N];   /* cudaSuccess, or why the runtime refused the method */
} cobench;

static cudaError_t co_copies(const cobench *c, int m)
{
    cudaError_t err = cudaSuccess;
    for (int64_t j = 0; j + 1 < c->D && err == cudaSuccess; j++)
        err = hir_cu_copy_d2d(c->cs, (char *)c->dst + (size_t)j * c->bytes, c->src, c->bytes,
                              c->device, m);
    return err;
}

static int co_gemms(tctx *t, const cobench *c, const hir_gemm *g, hir_diag *e)
{
    for (int64_t j = 0; j < c->D; j++)
        if (t->be->ops->gemm(t->be, t->main, g, e)) return -1;
    return 0;
}

static int co_cuda(cudaError_t err, const char *what, hir_diag *e)
{
    return err == cudaSuccess ? 0 : hir_fail(e, "%s: %s", what, cudaGetErrorString(err));
}

static double co_ms(const cobench *c, int a, int b)
{
    float ms = 0;
    cudaEventSynchronize(c->ev[b]);
    cudaEventElapsedTime(&ms, c->ev[a], c->ev[b]);
    return ms;
}

/* One round r: GEMMs alone, then per method its copies alone and its copies beside the GEMMs;
 * one untimed iteration of each before it is timed. */
static int co_round(tctx *t, cobench *c, const hir_gemm *g, int r, hir_diag *e)
{
    cudaStream_t gs = t->main->s;
    int it = c->g.iters;
    for (int k = 0; k <= it; k++) {
        if (k == 1 && co_cuda(cudaEventRecord(c->ev[0], gs), "cudaEventRecord", e)) return -1;
        if (co_gemms(t, c, g, e)) return -1;
    }
    if (co_cuda(cudaEventRecord(c->ev[1], gs), "cudaEventRecord", e)) return -1;
    c->gemm_ms[r] = co_ms(c, 0, 1) / it;
    for (int m = 0; m < CM_N; m++) {
        if (c->refused[m] != cudaSuccess) continue;
        for (int k = 0; k <= it; k++) {
            if (k == 1 && co_cuda(cudaEventRecord(c->ev[0], c->cs), "cudaEventRecord", e))
                return -1;
            if ((c->refused[m] = co_copies(c, m)) != cudaSuccess) break;
        }
        if (c->refused[m] != cudaSuccess) {
            cudaGetLastError();
            if (co_cuda(cudaStreamSynchronize(c->cs), "cudaStreamSynchronize", e)) return -1;
            continue;
        }
        if (co_cuda(cudaEventRecord(c->ev[1], c->cs), "cudaEventRecord", e)) return -1;
        c->copy_ms[m][r] = co_ms(c, 0, 1) / it;
        /* beside the GEMMs: both streams start at ev0; ev2 = the GEMM stream's end, ev3 = both */
        for (int k = 0; k <= it; k++) {
            if (k == 1 && (co_cuda(cudaEventRecord(c->ev[0], gs), "cudaEventRecord", e) ||
                           co_cuda(cudaStreamWaitEvent(c->cs, c->ev[0], 0), "cudaStreamWaitEvent", e)))
                return -1;
            if (co_gemms(t, c, g, e) || co_cuda(co_copies(c, m), cm_name[m], e)) return -1;
        }
        if (co_cuda(cudaEventRecord(c->ev[2], gs), "cudaEventRecord", e) ||
            co_cuda(cudaEventRecord(c->ev[1], c->cs), "cudaEventRecord", e) ||
            co_cuda(cudaStreamWaitEvent(gs, c->ev[1], 0), "cudaStreamWaitEvent", e) ||
            co_cuda(cudaEventRecord(c->ev[3], gs), "cudaEventRecord", e))
            return -1;
        c->gs_ms[m][r] = co_ms(c, 0, 2) / it;
        c->both_ms[m][r] = co_ms(c, 0, 3) / it;
    }
    return 0;
}

static double co_median(const double *v, int n)
{
    double s[64];
    memcpy(s, v, sizeof(double) * (size_t)n);
    qsort(s, (size_t)n, sizeof *s, dcmp);
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

/* Method m's copies, once more into zeroed slots, against the source byte for byte. */
static int co_check_copies(const cobench *c, int m, const unsigned char *want, int *ok,
                           hir_diag *e)
{
    size_t all = c->bytes * (size_t)(c->D - 1);
    unsigned char *got = malloc(all ? all : 1);
    if (!got) return hir_fail(e, "check: out of host memory");
    int rc = co_cuda(cudaMemsetAsync(c->dst, 0, all, c->cs), "cudaMemsetAsync", e) ||
             co_cuda(co_copies(c, m), cm_name[m], e) ||
             co_cuda(cudaStreamSynchronize(c->cs), "cudaStreamSynchronize", e) ||
             co_cuda(cudaMemcpy(got, c->dst, all, cudaMemcpyDeviceToHost), "cudaMemcpy", e);
    *ok = !rc;
    for (int64_t j = 0; j + 1 < c->D && *ok; j++)
        *ok = !memcmp(got + (size_t)j * c->bytes, want, c->bytes);
    free(got);
    return rc ? -1 : 0;
}

static int bench_copy_overlap(tctx *t, cobench *c)
{
    hir_diag e = {0};
    gbench *b = &c->g;
    gvar v = {.name = "chunk", .be = t->be, .s = t->main};
    b->ns = 1 << 24;
    c->bytes = (size_t)(b->M * b->K) * 2;
    unsigned char *want = malloc(c->bytes);
    if (!want) return fprintf(stderr, "bench: out of host memory\n"), 1;
    if (gb_alloc(t, b, &v, 1, &e) ||
        t->be->ops->alloc(t->be, c->bytes * (size_t)(c->D - 1) + 1, &c->dst, &e) ||
        co_cuda(cudaGetDevice(&c->device), "cudaGetDevice", &e) ||
        co_cuda(cudaStreamCreateWithFlags(&c->cs, cudaStreamNonBlocking), "cudaStreamCreate", &e))
        return free(want), bench_fail(&e);
    c->src = b->A;               /* the shard: the GEMM's own operand, as in the pipeline */
    for (int k = 0; k < 4; k++)
        if (co_cuda(cudaEventCreate(&c->ev[k]), "cudaEventCreate", &e))
            return free(want), bench_fail(&e);
    if (co_cuda(cudaMemcpy(want, c->src, c->bytes, cudaMemcpyDeviceToHost), "cudaMemcpy", &e))
        return free(want), bench_fail(&e);
    hir_gemm g = gb_gemm(b, v.O);
    for (int r = 0; r < b->rounds; r++)
        if (co_round(t, c, &g, r, &e)) return free(want), bench_fail(&e);
    int64_t bad = 0;
    double worst = 0;
    if (gb_check(t, b, &v, &bad, &worst, &e)) return free(want), bench_fail(&e);
    double flop = 2.0 * (double)b->M * (double)b->N * (double)b->K * (double)c->D;
    double gm = co_median(c->gemm_ms, b->rounds);
    int fails = bad != 0;
    printf("copy-overlap m=%lld k=%lld n=%lld d=%lld, %d rounds x %d iterations: GEMMs alone "
           "%.3f ms an iteration (%.1f TFLOP/s; check %s: %lld bad rows, worst %.3g of bound); "
           "copies %lld x %.1f MB an iteration\n", (long long)b->M, (long long)b->K,
           (long long)b->N, (long long)c->D, b->rounds, b->iters, gm, flop / (gm * 1e-3) / 1e12,
           bad ? "FAIL" : "PASS", (long long)bad, worst, (long long)(c->D - 1), c->bytes / 1e6);
    for (int m = 0; m < CM_N; m++) {
        if (c->refused[m] != cudaSuccess) {
            printf("copy-overlap %s: refused by the runtime: %s\n", cm_name[m],
                   cudaGetErrorString(c->refused[m]));
            continue;
        }
        int ok = 0;
        if (co_check_copies(c, m, want, &ok, &e)) return free(want), bench_fail(&e);
        fails += !ok;
        double cm = co_median(c->copy_ms[m], b->rounds), bm = co_median(c->both_ms[m], b->rounds),
               sm = co_median(c->gs_ms[m], b->rounds);
        printf("copy-overlap %s: copies alone %.3f ms (%.0f GB/s read + write); beside the "
               "GEMMs the iteration %.3f ms, the GEMM stream %.3f ms: GEMMs alone / iteration "
               "%.4f; copies %s\n", cm_name[m], cm,
               (double)c->bytes * (double)(c->D - 1) * 2 / (cm * 1e-3) / 1e9, bm, sm, gm / bm,
               ok ? "PASS (every slot equals its source)" : "FAIL (a slot differs from its source)");
        printf("copy-overlap-rounds method=%s gemm_ms=", cm_name[m]);
        for (int r = 0; r < b->rounds; r++) printf("%s%.5f", r ? "," : "", c->gemm_ms[r]);
        printf(" copy_ms=");
        for (int r = 0; r < b->rounds; r++) printf("%s%.5f", r ? "," : "", c->copy_ms[m][r]);
        printf(" both_ms=");
        for (int r = 0; r < b->rounds; r++) printf("%s%.5f", r ? "," : "", c->both_ms[m][r]);
        printf("\n");
    }
    for (int k = 0; k < 4; k++) cudaEventDestroy(c->ev[k]);
    cudaStreamDestroy(c->cs);
    t->be->ops->free(t->be, c->dst), t->be->ops->free(t->be, v.O);
    t->be->ops->free(t->be, b->A), t->be->ops->free(t->be, b->W);
    free(b->h), free(want);
    hir_diag_fini(&e);
    return fails ? 1 : 0;
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "--codegen")) {
        int cc = argc >= 3 ? atoi(argv[2]) : 90, n = 0;
        hir_diag e = {0};
        int rc = hir_cu_codegen_check(cc / 10, cc % 10, &n, stderr, &e);
        printf("%s codegen: %d kernels compiled and linked for sm_%d%s%s\n", rc ? "FAIL" : "PASS",
               n, cc, rc ? ": " : "", rc ? hir_diag_last_error(&e) : "");
        hir_diag_fini(&e);
        return rc ? 1 : 0;
    }
    hir_boot *boot = NULL;
    hir_diag e = {0};
    if (hir_boot_init(&argc, &argv, 120, &boot, &e)) {
        fprintf(stderr, "hir-cuda-selftest: %s\n", hir_diag_last_error(&e));
        return 1;
    }
    tctx t;
    memset(&t, 0, sizeof t);
    t.rank = hir_boot_rank(boot);
    t.size = hir_boot_size(boot);
    t.rng = 0x9e3779b97f4a7c15ull ^ (uint64_t)(t.rank + 1) * 0x100000001b3ull;
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        fprintf(stderr, "hir-cuda-selftest: no GPU visible\n");
        hir_boot_fini(boot);
        return 1;
    }
    hir_backend_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.boot = boot;
    cfg.rank = t.rank;
    cfg.size = t.size;
    cfg.device = hir_boot_local_rank(boot) % ndev;
    cfg.timeout = 60;
    if (hir_backend_cuda_create(&cfg, &t.be, &e)) {
        fprintf(stderr, "hir-cuda-selftest: %s\n", hir_diag_last_error(&e));
        hir_boot_fini(boot);
        return 1;
    }
    t.main = t.be->ops->stream_main(t.be);
    int rc = 0;
    if (argc >= 6 && !strcmp(argv[1], "--bench-copy-overlap")) {
        cobench c;
        memset(&c, 0, sizeof c);
        int tune = 0;
        c.D = atoll(argv[5]);
        if (c.D < 2 || c.D > 64 || bench_args(argc, argv, 6, &c.g, &tune) || tune) {
            fprintf(stderr, "hir-cuda-selftest: --bench-copy-overlap M K N D (D 2-64) "
                            "[--rounds R] [--iters I]\n");
            rc = 2;
        } else {
            rc = bench_copy_overlap(&t, &c);
        }
    } else if (argc >= 5 && !strcmp(argv[1], "--bench-gemm")) {
        gbench b;
        memset(&b, 0, sizeof b);
        int tune = 0;
        hir_backend *tuned = NULL;
        hir_backend_config tcfg = cfg;
        tcfg.gemm_tune = "on";
        if (bench_args(argc, argv, 5, &b, &tune)) {
            rc = 2;
        } else if (tune && hir_backend_cuda_create(&tcfg, &tuned, &e)) {
            fprintf(stderr, "hir-cuda-selftest: %s\n", hir_diag_last_error(&e));
            rc = 1;
        } else {
            rc = bench_gemm(&t, tuned, &b);
        }
        if (tuned) tuned->ops->destroy(tuned);
    } else {
        int iters = 1000;
        for (int i = 1; i + 1 < argc; i++) if (!strcmp(argv[i], "--iters")) iters = atoi(argv[i + 1]);
        /* the single-GPU checks run once, at np=1 (or with --all) */
        int local = t.size == 1;
        for (int i = 1; i < argc; i++) if (!strcmp(argv[i], "--all")) local = 1;
        if (local) {
            test_gemm(&t);
            test_elementwise(&t);
            test_copy_fill(&t);
            test_reduce(&t);
            test_user_kernel(&t);
        }
        if (hir_cuda_has_nccl())
            test_nccl(&t, t.size > ndev);
        else if (t.rank == 0)
            printf("[rank 0] SKIP nccl: this build has no NCCL (HIR_ENABLE_NCCL)\n");
        test_ipc_misc(&t);
        if (t.size > 1) {
            test_ring(&t, HIR_P2P_GET, iters);
            test_ring(&t, HIR_P2P_PUT, iters);
        }
        printf("[rank %d] summary: %d passed, %d failed\n", t.rank, t.pass, t.fail);
        rc = t.fail ? 1 : 0;
    }
    t.be->ops->destroy(t.be);
    hir_boot_fini(boot);
    hir_diag_fini(&e);
    return rc;
}
