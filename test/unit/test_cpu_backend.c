/* test_cpu_backend.c — the CPU reference backend's kernels without MPI: GEMM against a tiny
 * reference (dtypes, transposes, batches, bias, strided operands), element-wise ops with
 * broadcast strides and scalars, integer C semantics, reductions, copies with casts, and
 * the small pieces (streams, events, memory, op tables, teams of one). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runner/backend/backend.h"
#include "runner/cpu/cpu.h"
#include "runner/backend/convert.h"
#include "runner/data/data.h"
#include "unit_views.h"

static int setup(void **state)
{
    hir_backend_config cfg = {0};
    cfg.size = 1;
    cfg.timeout = 5;
    hir_backend *be;
    hir_diag e = {0};
    if (hir_backend_cpu_create(&cfg, &be, &e))
        return -1;
    *state = be;
    hir_diag_fini(&e);
    return 0;
}

static int teardown(void **state)
{
    hir_backend *be = *state;
    be->ops->destroy(be);
    return 0;
}

static double at(const hir_view *v, int64_t i, int64_t j)
{
    const char *p = (const char *)v->data +
                    (i * v->stride[0] + j * v->stride[1]) * (int64_t)hir_dtype_size(v->dtype);
    return hir_load_f64(p, v->dtype);
}

/* ---------------------------------------------------------------- GEMM */

static void gemm_case(hir_backend *be, hir_dtype dt, int b_trans, int64_t batch, int bias,
                      int64_t pad)
{
    const int64_t M = 5, K = 7, N = 3;
    int64_t lda = K + pad, ldb = (b_trans ? K : N) + pad, ldo = N + pad;
    int64_t sa = M * lda, sb = batch > 1 && pad ? 0 : (b_trans ? N : K) * ldb, so = M * ldo;
    size_t es = hir_dtype_size(dt);
    hir_diag e = {0};
    int64_t na = sa * batch, nb = (b_trans ? N : K) * ldb * batch, no = so * batch;
    void *A = calloc((size_t)na, es), *B = calloc((size_t)nb, es), *O = calloc((size_t)no, es);
    void *bias_d = calloc((size_t)N, es);
    assert_int_equal(hir_data_fill(A, dt, 1, &na, NULL, NULL, HIR_DATA_RANDOM, 1, 1, &e), 0);
    assert_int_equal(hir_data_fill(B, dt, 1, &nb, NULL, NULL, HIR_DATA_RANDOM, 1, 2, &e), 0);
    int64_t nn = N;
    hir_data_fill(bias_d, dt, 1, &nn, NULL, NULL, HIR_DATA_RANDOM, 1, 3, &e);
    hir_view bv = {0};
    hir_view_init(&bv, bias_d, dt, 1, &nn);

    hir_gemm g = {0};
    g.a = view2(A, dt, M, K, lda);
    g.b = b_trans ? view2(B, dt, N, K, ldb) : view2(B, dt, K, N, ldb);
    g.out = view2(O, dt, M, N, ldo);
    g.bias = bias ? &bv : NULL;
    g.b_trans = b_trans;
    g.batch = batch;
    g.batch_stride_a = sa;
    g.batch_stride_b = sb;
    g.batch_stride_out = so;
    assert_int_equal(be->ops->gemm(be, be->ops->stream_main(be), &g, &e), 0);

    for (int64_t bi = 0; bi < batch; bi++) {
        hir_view a = g.a, b = g.b, o = g.out;
        a.data = (char *)A + bi * sa * (int64_t)es;
        b.data = (char *)B + bi * sb * (int64_t)es;
        o.data = (char *)O + bi * so * (int64_t)es;
        unsigned char want[8], got[8];
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                double s = bias ? hir_load_f64((char *)bias_d + j * (int64_t)es, dt) : 0;
                for (int64_t k = 0; k < K; k++)
                    s += at(&a, i, k) * (b_trans ? at(&b, j, k) : at(&b, k, j));
                hir_store_f64(want, dt, s);
                hir_store_f64(got, dt, at(&o, i, j));
                hir_compare_result r;
                if (hir_compare(got, want, dt, 1, &r) != 0)
                    fail_msg("%s b_trans=%d batch=%lld bias=%d pad=%lld: [%lld,%lld,%lld] got %g want %g",
                             hir_dtype_name(dt), b_trans, (long long)batch, bias, (long long)pad,
                             (long long)bi, (long long)i, (long long)j, at(&o, i, j), s);
            }
    }
    /* padding between rows stays untouched */
    if (pad)
        assert_true(hir_load_f64((char *)O + N * (int64_t)es, dt) == 0.0);
    free(A); free(B); free(O); free(bias_d);
    hir_diag_fini(&e);
}

static void test_gemm(void **state)
{
    const hir_dtype types[] = {HIR_DT_BFLOAT, HIR_DT_HALF, HIR_DT_FLOAT, HIR_DT_DOUBLE};
    for (int t = 0; t < 4; t++)
        for (int bt = 0; bt < 2; bt++)
            for (int batch = 1; batch <= 3; batch += 2)
                for (int bias = 0; bias < 2; bias++)
                    for (int pad = 0; pad <= 2; pad += 2)
                        gemm_case(*state, types[t], bt, batch, bias, pad);
}

static void test_gemm_errors(void **state)
{
    hir_backend *be = *state;
    float a[6], b[6], o[4];
    hir_gemm g = {0};
    g.a = view2(a, HIR_DT_FLOAT, 2, 3, 3);
    g.b = view2(b, HIR_DT_FLOAT, 2, 3, 3);       /* [2,3] used as [K,N]: K mismatch */
    g.out = view2(o, HIR_DT_FLOAT, 2, 2, 2);
    g.batch = 1;
    hir_diag e = {0};
    assert_int_equal(be->ops->gemm(be, NULL, &g, &e), -1);
    assert_non_null(strstr(hir_diag_last_error(&e), "gemm: A is [2, 3] but B is [2, 3]"));
    g.b_trans = 1;
    assert_int_equal(be->ops->gemm(be, NULL, &g, &e), 0);
#define GEMM_REFUSED(want)                                                                 \
    do {                                                                                   \
        assert_int_equal(be->ops->gemm(be, NULL, &g, &e), -1);                            \
        if (!strstr(hir_diag_last_error(&e), want))                                                          \
            fail_msg("'%s' does not hold '%s'", hir_diag_last_error(&e), want);                              \
    } while (0)
    g.a.data = NULL;
    GEMM_REFUSED("gemm A: null data pointer");
    g.a.data = a;
    g.a.ndim = 1;
    GEMM_REFUSED("gemm: operands must be 2-D (A 1-D, B 2-D, out 2-D)");
    g.a.ndim = 2;
    g.out = view2(o, HIR_DT_FLOAT, 2, 1, 1);
    GEMM_REFUSED("gemm: output is [2, 1], expected [2, 2]");
    g.out = view2(o, HIR_DT_FLOAT, 2, 2, 2);
    float bias[3] = {10, 20, 30};
    int64_t n3 = 3, n2 = 2;
    hir_view bv;
    hir_view_init(&bv, NULL, HIR_DT_FLOAT, 1, &n2);
    g.bias = &bv;
    GEMM_REFUSED("gemm bias: null data pointer");
    hir_view_init(&bv, bias, HIR_DT_FLOAT, 1, &n3);
    GEMM_REFUSED("gemm: bias must be 1-D of extent 2");
    hir_view_init(&bv, bias, HIR_DT_FLOAT, 1, &n2);
    g.batch = 0;
    GEMM_REFUSED("gemm: batch 0 < 1");
    g.batch = 1;
    /* extents past INT_MAX are refused before any element is read */
    g.a = view2(a, HIR_DT_FLOAT, (int64_t)1 << 31, 3, 3);
    g.out = view2(o, HIR_DT_FLOAT, (int64_t)1 << 31, 2, 2);
    GEMM_REFUSED("gemm: extents beyond the 32-bit BLAS interface");
#undef GEMM_REFUSED
    /* M = 0: nothing to do; K = 0: the output is the bias on every row (zero without one) */
    g.a = view2(a, HIR_DT_FLOAT, 0, 3, 3);
    g.out = view2(o, HIR_DT_FLOAT, 0, 2, 2);
    o[0] = -1;
    assert_int_equal(be->ops->gemm(be, NULL, &g, &e), 0);
    assert_true(o[0] == -1);
    g.a = view2(a, HIR_DT_FLOAT, 2, 0, 1);
    g.b = view2(b, HIR_DT_FLOAT, 2, 0, 1);
    g.out = view2(o, HIR_DT_FLOAT, 2, 2, 2);
    for (int i = 0; i < 4; i++)
        o[i] = -1;
    assert_int_equal(be->ops->gemm(be, NULL, &g, &e), 0);
    assert_true(o[0] == 10 && o[1] == 20 && o[2] == 10 && o[3] == 20);
    g.bias = NULL;
    assert_int_equal(be->ops->gemm(be, NULL, &g, &e), 0);
    assert_true(o[0] == 0 && o[1] == 0 && o[2] == 0 && o[3] == 0);
    hir_diag_fini(&e);
}

/* ---------------------------------------------------------------- element-wise */

static hir_operand opv(hir_view v) { hir_operand o = {0}; o.view = v; return o; }
static hir_operand opf(double f) { hir_operand o = {0}; o.is_scalar = 1; o.f = f; return o; }
static hir_operand opi(int64_t i)
{
    hir_operand o = {0};
    o.is_scalar = 1;
    o.scalar_is_int = 1;
    o.i = i;
    return o;
}

static void test_binary_broadcast_scalar(void **state)
{
    hir_backend *be = *state;
    hir_diag e = {0};
    float a[6] = {1, 2, 3, 4, 5, 6}, row[3] = {10, 20, 30}, out[6];
    hir_view va = view2(a, HIR_DT_FLOAT, 2, 3, 3), vo = view2(out, HIR_DT_FLOAT, 2, 3, 3);
    hir_view vr = view2(row, HIR_DT_FLOAT, 2, 3, 0);        /* stride 0: broadcast rows */
    hir_operand A = opv(va), R = opv(vr), S = opf(0.5);
    assert_int_equal(be->ops->binary(be, NULL, HIR_BIN_ADD, &vo, &A, &R, &e), 0);
    assert_true(out[0] == 11 && out[5] == 36);
    assert_int_equal(be->ops->binary(be, NULL, HIR_BIN_MUL, &vo, &A, &S, &e), 0);
    assert_true(out[3] == 2.0f);
    /* size-1 axis against a larger output broadcasts too */
    hir_view v1 = view2(row, HIR_DT_FLOAT, 1, 3, 3);
    hir_operand R1 = opv(v1);
    assert_int_equal(be->ops->binary(be, NULL, HIR_BIN_SUB, &vo, &A, &R1, &e), 0);
    assert_true(out[4] == -15.0f);
    /* transposed operand (column-major strides) into a bf16 output */
    uint16_t ob[6];
    hir_view vt = va;
    vt.shape[0] = 3; vt.shape[1] = 2; vt.stride[0] = 1; vt.stride[1] = 3;
    hir_view vob = view2(ob, HIR_DT_BFLOAT, 3, 2, 2);
    hir_operand T = opv(vt), one = opi(1);
    assert_int_equal(be->ops->binary(be, NULL, HIR_BIN_ADD, &vob, &T, &one, &e), 0);
    assert_true(hir_bf16_to_f32(ob[1]) == 5.0f && hir_bf16_to_f32(ob[2]) == 3.0f);
    /* comparisons into bool, max with NaN */
    uint8_t mask[6];
    hir_view vm = view2(mask, HIR_DT_BOOL, 2, 3, 3);
    hir_operand three = opf(3.0);
    assert_int_equal(be->ops->binary(be, NULL, HIR_BIN_GT, &vm, &A, &three, &e), 0);
    assert_true(mask[2] == 0 && mask[3] == 1);
    a[0] = NAN;
    assert_int_equal(be->ops->binary(be, NULL, HIR_BIN_MAX, &vo, &A, &three, &e), 0);
    assert_true(isnan(out[0]) && out[1] == 3.0f && out[4] == 5.0f);
    assert_int_equal(be->ops->binary(be, NULL, HIR_BIN_FMAX, &vo, &A, &three, &e), 0);
    assert_true(out[0] == 3.0f);
    assert_int_equal(be->ops->binary(be, NULL, HIR_BIN_BITAND, &vo, &A, &three, &e), -1);
    assert_non_null(strstr(hir_diag_last_error(&e), "bitwise_and: not defined on floating-point"));
    hir_diag_fini(&e);
}

static void test_integer_semantics(void **state)
{
    hir_backend *be = *state;
    hir_diag e = {0};
    int64_t shape = 4;
    int32_t a[4] = {-7, 7, -7, 7}, b[4] = {3, -3, 2, 2}, o[4];
    hir_view va, vb, vo;
    hir_view_init(&va, a, HIR_DT_INT32, 1, &shape);
    hir_view_init(&vb, b, HIR_DT_INT32, 1, &shape);
    hir_view_init(&vo, o, HIR_DT_INT32, 1, &shape);
    hir_operand A = opv(va), B = opv(vb);
    assert_int_equal(be->ops->binary(be, NULL, HIR_BIN_MOD, &vo, &A, &B, &e), 0);
    assert_int_equal(o[0], -1); assert_int_equal(o[1], 1);     /* C: sign of dividend */
    assert_int_equal(be->ops->binary(be, NULL, HIR_BIN_DIV, &vo, &A, &B, &e), 0);
    assert_int_equal(o[0], -2); assert_int_equal(o[2], -3);    /* truncating */
    assert_int_equal(be->ops->binary(be, NULL, HIR_BIN_REMAINDER, &vo, &A, &B, &e), 0);
    assert_int_equal(o[0], 2); assert_int_equal(o[1], -2);     /* sign of divisor */
    assert_int_equal(be->ops->binary(be, NULL, HIR_BIN_CEILDIV, &vo, &A, &B, &e), 0);
    assert_int_equal(o[3], 4); assert_int_equal(o[2], -3);
    hir_operand two = opi(2);
    assert_int_equal(be->ops->binary(be, NULL, HIR_BIN_SHL, &vo, &A, &two, &e), 0);
    assert_int_equal(o[1], 28);
    assert_int_equal(be->ops->binary(be, NULL, HIR_BIN_POW, &vo, &B, &two, &e), 0);
    assert_int_equal(o[0], 9);
    assert_int_equal(be->ops->binary(be, NULL, HIR_BIN_GCD, &vo, &A, &B, &e), 0);
    assert_int_equal(o[0], 1);
    hir_operand zero = opi(0);
    assert_int_equal(be->ops->binary(be, NULL, HIR_BIN_DIV, &vo, &A, &zero, &e), -1);
    assert_non_null(strstr(hir_diag_last_error(&e), "integer division by zero"));
    /* an int tensor with a float scalar computes in floating point */
    float of[4];
    hir_view vof;
    hir_view_init(&vof, of, HIR_DT_FLOAT, 1, &shape);
    hir_operand half = opf(0.5);
    assert_int_equal(be->ops->binary(be, NULL, HIR_BIN_MUL, &vof, &A, &half, &e), 0);
    assert_true(of[0] == -3.5f);
    /* unary */
    assert_int_equal(be->ops->unary(be, NULL, HIR_UN_NEG, &vo, &A, &e), 0);
    assert_int_equal(o[0], 7);
    assert_int_equal(be->ops->unary(be, NULL, HIR_UN_BITNOT, &vo, &A, &e), 0);
    assert_int_equal(o[1], ~7);
    assert_int_equal(be->ops->unary(be, NULL, HIR_UN_RELU, &vo, &A, &e), 0);
    assert_int_equal(o[0], 0); assert_int_equal(o[1], 7);
    hir_operand F = opv(vof);
    assert_int_equal(be->ops->unary(be, NULL, HIR_UN_BITNOT, &vof, &F, &e), -1);
    assert_int_equal(be->ops->unary(be, NULL, HIR_UN_ABS, &vof, &F, &e), 0);
    assert_true(of[0] == 3.5f);
    assert_int_equal(be->ops->unary(be, NULL, HIR_UN_EXP, &vof, &A, &e), 0);
    assert_true(fabsf(of[1] - expf(7)) < 1);
    hir_diag_fini(&e);
}

static void test_ternary(void **state)
{
    hir_backend *be = *state;
    hir_diag e = {0};
    int64_t shape = 3;
    uint8_t c[3] = {1, 0, 1};
    float x[3] = {-2, 0.5f, 9}, o[3];
    hir_view vc, vx, vo;
    hir_view_init(&vc, c, HIR_DT_BOOL, 1, &shape);
    hir_view_init(&vx, x, HIR_DT_FLOAT, 1, &shape);
    hir_view_init(&vo, o, HIR_DT_FLOAT, 1, &shape);
    hir_operand C = opv(vc), X = opv(vx), lo = opf(0), hi = opf(1), s = opi(7);
    assert_int_equal(be->ops->ternary(be, NULL, HIR_TER_WHERE, &vo, &C, &X, &s, &e), 0);
    assert_true(o[0] == -2 && o[1] == 7 && o[2] == 9);
    assert_int_equal(be->ops->ternary(be, NULL, HIR_TER_CLAMP, &vo, &X, &lo, &hi, &e), 0);
    assert_true(o[0] == 0 && o[1] == 0.5f && o[2] == 1);
    hir_operand w = opf(0.25);
    assert_int_equal(be->ops->ternary(be, NULL, HIR_TER_LERP, &vo, &lo, &X, &w, &e), 0);
    assert_true(o[2] == 2.25f);
    hir_diag_fini(&e);
}

/* ---------------------------------------------------------------- reductions */

static void test_reduce(void **state)
{
    hir_backend *be = *state;
    hir_diag e = {0};
    float in[12];
    for (int i = 0; i < 12; i++)
        in[i] = (float)i;
    hir_view vi = view2(in, HIR_DT_FLOAT, 3, 4, 4);
    float o3[3], o4[4], o1;
    hir_view v31 = view2(o3, HIR_DT_FLOAT, 3, 1, 1), v14 = view2(o4, HIR_DT_FLOAT, 1, 4, 4);
    hir_view v11 = view2(&o1, HIR_DT_FLOAT, 1, 1, 1);
    assert_int_equal(be->ops->reduce(be, NULL, HIR_RED_SUM, &v31, &vi, 2, &e), 0);
    assert_true(o3[0] == 6 && o3[2] == 38);
    assert_int_equal(be->ops->reduce(be, NULL, HIR_RED_MAX, &v14, &vi, 1, &e), 0);
    assert_true(o4[0] == 8 && o4[3] == 11);
    assert_int_equal(be->ops->reduce(be, NULL, HIR_RED_SUM, &v11, &vi, 3, &e), 0);
    assert_true(o1 == 66);
    assert_int_equal(be->ops->reduce(be, NULL, HIR_RED_PROD, &v31, &vi, 2, &e), 0);
    assert_true(o3[1] == 4 * 5 * 6 * 7);
    in[5] = NAN;
    assert_int_equal(be->ops->reduce(be, NULL, HIR_RED_MAX, &v31, &vi, 2, &e), 0);
    assert_true(isnan(o3[1]) && o3[2] == 11);
    assert_int_equal(be->ops->reduce(be, NULL, HIR_RED_FMAX, &v31, &vi, 2, &e), 0);
    assert_true(o3[1] == 7);
    assert_int_equal(be->ops->reduce(be, NULL, HIR_RED_FMIN, &v31, &vi, 2, &e), 0);
    assert_true(o3[1] == 4);
    for (int i = 4; i < 8; i++)
        in[i] = NAN;
    assert_int_equal(be->ops->reduce(be, NULL, HIR_RED_FMIN, &v31, &vi, 2, &e), 0);
    assert_true(isnan(o3[1]));       /* all NaN -> NaN */
    /* wrong output shape */
    assert_int_equal(be->ops->reduce(be, NULL, HIR_RED_SUM, &v14, &vi, 2, &e), -1);
    assert_non_null(strstr(hir_diag_last_error(&e), "expected"));
    /* bf16 sum of 4096 ones accumulates exactly (a bf16 accumulator would stop at 256) */
    uint16_t *ones = malloc(4096 * 2), ob;
    for (int i = 0; i < 4096; i++)
        ones[i] = hir_f32_to_bf16(1.0f);
    hir_view vb = view2(ones, HIR_DT_BFLOAT, 1, 4096, 4096), vob = view2(&ob, HIR_DT_BFLOAT, 1, 1, 1);
    assert_int_equal(be->ops->reduce(be, NULL, HIR_RED_SUM, &vob, &vb, 2, &e), 0);
    assert_true(hir_bf16_to_f32(ob) == 4096.0f);
    free(ones);
    /* integer min */
    int64_t iv[4] = {5, -3, 8, 0}, io;
    hir_view viv = view2(iv, HIR_DT_INT64, 1, 4, 4), vio = view2(&io, HIR_DT_INT64, 1, 1, 1);
    assert_int_equal(be->ops->reduce(be, NULL, HIR_RED_MIN, &vio, &viv, 2, &e), 0);
    assert_int_equal(io, -3);
    hir_diag_fini(&e);
}

/* ---------------------------------------------------------------- copy and fill */

static void test_copy_fill(void **state)
{
    hir_backend *be = *state;
    hir_diag e = {0};
    float f[6] = {1.5f, -2.7f, 3, 4, 300, -1e9f};
    int32_t i32[6];
    uint16_t bf[6];
    int8_t i8[6];
    hir_view vf = view2(f, HIR_DT_FLOAT, 2, 3, 3);
    hir_view vi = view2(i32, HIR_DT_INT32, 2, 3, 3), vb = view2(bf, HIR_DT_BFLOAT, 2, 3, 3);
    hir_view v8 = view2(i8, HIR_DT_INT8, 2, 3, 3);
    assert_int_equal(be->ops->copy(be, NULL, &vi, &vf, &e), 0);
    assert_int_equal(i32[0], 1); assert_int_equal(i32[1], -2);   /* truncation */
    assert_int_equal(be->ops->copy(be, NULL, &vb, &vf, &e), 0);
    assert_int_equal(bf[0], hir_f32_to_bf16(1.5f));
    assert_int_equal(be->ops->copy(be, NULL, &v8, &vi, &e), 0);  /* int -> int wraps */
    assert_int_equal(i8[4], (int8_t)300);
    /* transposing copy through strides */
    float t[6];
    hir_view vt = view2(t, HIR_DT_FLOAT, 3, 2, 2), vft = vf;
    vft.shape[0] = 3; vft.shape[1] = 2; vft.stride[0] = 1; vft.stride[1] = 3;
    assert_int_equal(be->ops->copy(be, NULL, &vt, &vft, &e), 0);
    assert_true(t[1] == 4 && t[2] == -2.7f);
    /* shape mismatch */
    assert_int_equal(be->ops->copy(be, NULL, &vt, &vf, &e), -1);
    /* fill: every other column of a bf16 matrix */
    uint16_t m[8] = {0};
    hir_view vm = view2(m, HIR_DT_BFLOAT, 2, 2, 4);
    vm.stride[1] = 2;
    assert_int_equal(be->ops->fill(be, NULL, &vm, 1.5, &e), 0);
    assert_true(hir_bf16_to_f32(m[0]) == 1.5f && m[1] == 0 && hir_bf16_to_f32(m[6]) == 1.5f);
    /* unsupported dtype */
    hir_view v4 = vm;
    v4.dtype = HIR_DT_E4M3;
    assert_int_equal(be->ops->fill(be, NULL, &v4, 0, &e), -1);
    assert_non_null(strstr(hir_diag_last_error(&e), "not supported by the CPU backend"));
    hir_diag_fini(&e);
}

/* ---------------------------------------------------------------- the rest of the table */

static void test_misc(void **state)
{
    hir_backend *be = *state;
    hir_diag e = {0};
    assert_string_equal(be->ops->name, "cpu");
    hir_stream *s1, *s2, *s3;
    assert_int_equal(be->ops->stream_get(be, 3, &s1, &e), 0);
    assert_int_equal(be->ops->stream_get(be, 3, &s2, &e), 0);
    assert_int_equal(be->ops->stream_get(be, 4, &s3, &e), 0);
    assert_ptr_equal(s1, s2);
    assert_ptr_not_equal(s1, s3);
    assert_int_equal(be->ops->stream_wait(be, s1, be->ops->stream_main(be), &e), 0);
    hir_event *a, *b;
    double ms;
    assert_int_equal(be->ops->event_create(be, &a, &e), 0);
    assert_int_equal(be->ops->event_create(be, &b, &e), 0);
    be->ops->event_record(be, a, s1, &e);
    be->ops->event_record(be, b, s1, &e);
    assert_int_equal(be->ops->event_elapsed_ms(be, a, b, &ms, &e), 0);
    assert_true(ms >= 0);
    be->ops->event_destroy(be, a);
    be->ops->event_destroy(be, b);
    size_t avail;
    assert_int_equal(be->ops->mem_available(be, &avail, &e), 0);
    assert_true(avail > 0);
    void *p;
    assert_int_equal(be->ops->alloc(be, 100, &p, &e), 0);
    assert_int_equal((uintptr_t)p % 64, 0);
    be->ops->free(be, p);
    assert_int_equal(be->ops->synchronize(be, &e), 0);

    /* a team of one needs no MPI: Allreduce = copy */
    float in[4] = {1, 2, 3, 4}, out[4] = {0};
    int64_t n = 4;
    hir_view vi, vo;
    hir_view_init(&vi, in, HIR_DT_FLOAT, 1, &n);
    hir_view_init(&vo, out, HIR_DT_FLOAT, 1, &n);
    int team[1] = {0};
    hir_collective c = {HIR_COMM_ALLREDUCE, HIR_BK_NCCL, team, 1, 0, -1, HIR_RED_SUM,
                        &vi, &vo, 1, 0};
    hir_work *w;
    assert_int_equal(be->ops->collective(be, NULL, &c, &w, &e), 0);
    assert_int_equal(be->ops->wait(be, NULL, w, &e), 0);
    assert_true(out[3] == 4);
    /* without a bootstrap, P2P says why it cannot run; self-sharing is refused */
    hir_p2p pp = {1, 1, HIR_BK_NCCL, vi, 2};
    assert_int_equal(be->ops->p2p_post(be, NULL, &pp, &w, &e), -1);
    assert_non_null(strstr(hir_diag_last_error(&e), "needs the MPI bootstrap"));
    pp.peer = 0;
    pp.transport = HIR_BK_CUDA;
    assert_int_equal(be->ops->share_handles(be, &pp, 1, &e), -1);
    assert_non_null(strstr(hir_diag_last_error(&e), "send to self not supported"));
    assert_int_equal(be->ops->group_end(be, NULL, &w, &e), -1);
    hir_diag_fini(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm),
        cmocka_unit_test(test_gemm_errors),
        cmocka_unit_test(test_binary_broadcast_scalar),
        cmocka_unit_test(test_integer_semantics),
        cmocka_unit_test(test_ternary),
        cmocka_unit_test(test_reduce),
        cmocka_unit_test(test_copy_fill),
        cmocka_unit_test(test_misc),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
