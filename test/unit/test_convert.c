/* test_convert.c — bit-level checks of the host conversions: exhaustive bf16 and f16 round
 * trips, rounding ties, subnormals, overflow and NaN, and load/store of every dtype. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "runner/backend/convert.h"

static uint32_t bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float from(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

static void test_bf16_exhaustive(void **state)
{
    for (uint32_t h = 0; h < 65536; h++) {
        float f = hir_bf16_to_f32((uint16_t)h);
        assert_int_equal(bits(f), h << 16);
        uint16_t back = hir_f32_to_bf16(f);
        if (isnan(f)) {
            assert_true(isnan(hir_bf16_to_f32(back)));
            assert_int_equal(back & 0x8000, h & 0x8000);
        } else {
            assert_int_equal(back, h);
        }
    }
}

static void test_bf16_rounding(void **state)
{
    /* 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even -> 1 */
    assert_int_equal(hir_f32_to_bf16(from(0x3F808000)), 0x3F80);
    /* 1 + 3*2^-8 is halfway between 1+2^-7 (odd) and 1+2^-6 (even) -> up */
    assert_int_equal(hir_f32_to_bf16(from(0x3F818000)), 0x3F82);
    /* just above the halfway point rounds up */
    assert_int_equal(hir_f32_to_bf16(from(0x3F808001)), 0x3F81);
    /* largest finite float rounds to inf, as RNE demands */
    assert_int_equal(hir_f32_to_bf16(from(0x7F7FFFFF)), 0x7F80);
    /* a NaN whose payload would carry into the exponent stays NaN */
    uint16_t q = hir_f32_to_bf16(from(0x7FFFFFFF));
    assert_true(isnan(hir_bf16_to_f32(q)));
    assert_int_equal(hir_f32_to_bf16(from(0xFF800001)) & 0xFF80, 0xFF80);
    assert_int_equal(hir_f32_to_bf16(-0.0f), 0x8000);
    /* bulk path agrees with the scalar one */
    float in[7] = {1.0f, -2.5f, 3.14159f, 1e-40f, INFINITY, NAN, 65504.0f};
    uint16_t out[7];
    float back[7];
    hir_f32_to_bf16_n(out, in, 7);
    hir_bf16_to_f32_n(back, out, 7);
    for (int i = 0; i < 7; i++) {
        assert_int_equal(out[i], hir_f32_to_bf16(in[i]));
        assert_int_equal(bits(back[i]), bits(hir_bf16_to_f32(out[i])));
    }
}

static void test_f16_exhaustive(void **state)
{
    for (uint32_t h = 0; h < 65536; h++) {
        float f = hir_f16_to_f32((uint16_t)h);
        uint16_t back = hir_f32_to_f16(f);
        if ((h & 0x7C00) == 0x7C00 && (h & 0x3FF)) {
            assert_true(isnan(f));
            assert_true((back & 0x7C00) == 0x7C00 && (back & 0x3FF));
        } else {
            assert_int_equal(back, h);
        }
    }
}

static void test_f16_edges(void **state)
{
    assert_true(hir_f16_to_f32(0x0001) == 0x1p-24f);          /* smallest subnormal */
    assert_true(hir_f16_to_f32(0x03FF) == 0x3FFp-24f);        /* largest subnormal */
    assert_true(hir_f16_to_f32(0x0400) == 0x1p-14f);          /* smallest normal */
    assert_true(hir_f16_to_f32(0x7BFF) == 65504.0f);
    assert_true(isinf(hir_f16_to_f32(0x7C00)) && hir_f16_to_f32(0x7C00) > 0);
    assert_true(isinf(hir_f16_to_f32(0xFC00)) && hir_f16_to_f32(0xFC00) < 0);
    assert_true(isnan(hir_f16_to_f32(0x7E00)));
    assert_int_equal(bits(hir_f16_to_f32(0x8000)), 0x80000000u);
    assert_int_equal(hir_f32_to_f16(65504.0f), 0x7BFF);
    assert_int_equal(hir_f32_to_f16(65519.0f), 0x7BFF);       /* below the halfway point */
    assert_int_equal(hir_f32_to_f16(65520.0f), 0x7C00);       /* halfway: ties to even = inf */
    assert_int_equal(hir_f32_to_f16(1e10f), 0x7C00);
    assert_int_equal(hir_f32_to_f16(-1e10f), 0xFC00);
    assert_int_equal(hir_f32_to_f16(0x1p-24f), 0x0001);
    assert_int_equal(hir_f32_to_f16(0x1p-25f), 0x0000);       /* tie to even: 0 */
    assert_int_equal(hir_f32_to_f16(0x1.8p-25f), 0x0001);     /* above the tie */
    assert_int_equal(hir_f32_to_f16(0x3p-25f), 0x0002);       /* 1.5 ulp -> 2 (even) */
    assert_int_equal(hir_f32_to_f16(-0.0f), 0x8000);
    assert_int_equal(hir_f32_to_f16(1.0f + 0x1p-11f), 0x3C00);  /* tie -> even */
    assert_int_equal(hir_f32_to_f16(1.0f + 0x3p-11f), 0x3C02);
    uint16_t n = hir_f32_to_f16(NAN);
    assert_true((n & 0x7C00) == 0x7C00 && (n & 0x3FF));
}

static void test_f64_single_rounding(void **state)
{
    /* 1 + 2^-8 + 2^-40: just above the bf16 tie. Through float (RNE) it would become the
     * tie 1 + 2^-8 and round to even = 1.0; rounded once it goes up. */
    double d = 1.0 + 0x1p-8 + 0x1p-40;
    assert_int_equal(hir_f64_to_bf16(d), 0x3F81);
    assert_int_equal(hir_f64_to_f16(1.0 + 0x1p-11 + 0x1p-40), 0x3C01);
    assert_int_equal(hir_f64_to_bf16(1.0 + 0x1p-8), 0x3F80);
    assert_true(isnan(hir_bf16_to_f32(hir_f64_to_bf16(NAN))));
    assert_int_equal(hir_f64_to_bf16(1e300), 0x7F80);
}

/* bf16 nearest to d, ties to even, found by distances: lo = d with its fraction cut to 7 bits
 * (toward zero), hi the next bf16 away from zero; d - lo and hi - d are exact in double. */
static uint16_t bf16_nearest(double d)
{
    uint64_t b;
    memcpy(&b, &d, 8);
    uint64_t lob = b & ~((1ull << 45) - 1);
    double lo, hi;
    memcpy(&lo, &lob, 8);
    uint64_t hib = lob + (1ull << 45);
    memcpy(&hi, &hib, 8);
    double dl = fabs(d - lo), dh = fabs(hi - d);
    uint64_t pick = dl < dh ? lob : dh < dl ? hib : ((lob >> 45) & 1) ? hib : lob;
    double v;
    memcpy(&v, &pick, 8);
    return hir_f32_to_bf16((float)v);   /* v has 8 significant bits: exact in float */
}

/* The direct double -> bf16 path against the nearest value, over random doubles across the
 * normal range, exact ties and their neighbours, and the edges of the fast path. */
static void test_f64_to_bf16_nearest(void **state)
{
    (void)state;
    uint64_t st = 0x243F6A8885A308D3ull;
    for (int i = 0; i < 2000000; i++) {
        st = st * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t frac = st >> 12, e = 1023 - 126 + (st >> 3) % 253, sgn = st & 1;
        if (i % 4 == 1) frac = (frac & ~((1ull << 45) - 1)) | (1ull << 44);          /* a tie */
        if (i % 4 == 2) frac = (frac & ~((1ull << 45) - 1)) | ((1ull << 44) - (st >> 63)); /* below */
        uint64_t b = sgn << 63 | e << 52 | (frac & ((1ull << 52) - 1));
        double d;
        memcpy(&d, &b, 8);
        if (hir_f64_to_bf16(d) != bf16_nearest(d))
            fail_msg("%a: got 0x%04x, nearest 0x%04x", d, hir_f64_to_bf16(d), bf16_nearest(d));
    }
    /* edges: the largest binade of the fast path rounding up into 2^127, the smallest normal,
     * 1 - 2^-54 (rounds up to 1), and values outside the fast path */
    assert_int_equal(hir_f64_to_bf16(0x1.ffffffp126), 0x7F00);
    assert_int_equal(hir_f64_to_bf16(0x1p-126), 0x0080);
    assert_int_equal(hir_f64_to_bf16(-(1.0 - 0x1p-54)), 0xBF80);
    assert_int_equal(hir_f64_to_bf16(0x1.fep127), 0x7F7F);
    assert_int_equal(hir_f64_to_bf16(0x1.ffp127), 0x7F80);
    assert_int_equal(hir_f64_to_bf16(0x1p-133), 0x0001);
    assert_int_equal(hir_f64_to_bf16(-0.0), 0x8000);
}

static void test_load_store_all(void **state)
{
    const hir_dtype types[] = {HIR_DT_FLOAT, HIR_DT_DOUBLE, HIR_DT_HALF, HIR_DT_BFLOAT,
                               HIR_DT_BOOL, HIR_DT_INT8, HIR_DT_INT16, HIR_DT_INT32,
                               HIR_DT_INT64, HIR_DT_UINT8, HIR_DT_UINT16, HIR_DT_UINT32,
                               HIR_DT_UINT64, HIR_DT_INDEX};
    for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
        unsigned char buf[8] = {0};
        assert_true(hir_dtype_is_storable(types[i]));
        hir_store_f64(buf, types[i], 3.0);
        assert_true(hir_load_f64(buf, types[i]) == (types[i] == HIR_DT_BOOL ? 1.0 : 3.0));
        hir_store_i64(buf, types[i], 5);
        assert_int_equal(hir_load_i64(buf, types[i]), types[i] == HIR_DT_BOOL ? 1 : 5);
    }
    assert_false(hir_dtype_is_storable(HIR_DT_E4M3));
    unsigned char b[8];
    hir_store_f64(b, HIR_DT_INT8, 1000.0);           /* saturates */
    assert_int_equal(hir_load_i64(b, HIR_DT_INT8), 127);
    hir_store_f64(b, HIR_DT_UINT8, -3.0);
    assert_int_equal(hir_load_i64(b, HIR_DT_UINT8), 0);
    hir_store_f64(b, HIR_DT_INT32, -2.7);            /* truncates toward zero */
    assert_int_equal(hir_load_i64(b, HIR_DT_INT32), -2);
    hir_store_i64(b, HIR_DT_INT64, INT64_MAX);       /* exact beyond 2^53 */
    assert_true(hir_load_i64(b, HIR_DT_INT64) == INT64_MAX);
    hir_store_i64(b, HIR_DT_INT8, 300);              /* integer casts wrap like C */
    assert_int_equal(hir_load_i64(b, HIR_DT_INT8), 44);
    hir_store_f64(b, HIR_DT_HALF, 0.1);
    assert_true(fabs(hir_load_f64(b, HIR_DT_HALF) - 0.1) < 1e-4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bf16_exhaustive),
        cmocka_unit_test(test_bf16_rounding),
        cmocka_unit_test(test_f16_exhaustive),
        cmocka_unit_test(test_f16_edges),
        cmocka_unit_test(test_f64_single_rounding),
        cmocka_unit_test(test_f64_to_bf16_nearest),
        cmocka_unit_test(test_load_store_all),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
