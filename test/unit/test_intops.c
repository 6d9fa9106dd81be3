/* test_intops.c — the integer semantics of dialect/intops.h: wrapping + - * and pow (3**100 by
 * squaring), truncating / and %, INT64_MIN / -1, ceilDiv and remainder signs, saturating
 * shifts, gcd, division by zero as a status with the device's defined value, and the text the
 * CUDA generator prepends. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dialect/intops.h"

/* 3^100 mod 2^64, by exact repeated multiplication (100 steps, no squaring). */
static int64_t pow_by_steps(int64_t a, int n)
{
    uint64_t v = 1;
    for (int i = 0; i < n; i++)
        v *= (uint64_t)a;
    return (int64_t)v;
}

static void test_wrapping(void **st)
{
    (void)st;
    int64_t r;
    assert_int_equal(hir_iop_add(INT64_MAX, 1, &r), HIR_IOP_WRAPPED);
    assert_true(r == INT64_MIN);
    assert_int_equal(hir_iop_add(INT64_MAX - 1, 1, &r), HIR_IOP_OK);
    assert_int_equal(hir_iop_sub(INT64_MIN, 1, &r), HIR_IOP_WRAPPED);
    assert_true(r == INT64_MAX);
    assert_int_equal(hir_iop_mul(INT64_MIN, -1, &r), HIR_IOP_WRAPPED);
    assert_true(r == INT64_MIN);
    assert_int_equal(hir_iop_mul(INT64_C(1) << 62, -2, &r), HIR_IOP_OK);
    assert_true(r == INT64_MIN);
    assert_int_equal(hir_iop_mul(INT64_C(1) << 62, 2, &r), HIR_IOP_WRAPPED);
    assert_int_equal(hir_iop_neg(INT64_MIN, &r), HIR_IOP_WRAPPED);
    assert_true(r == INT64_MIN);
    assert_int_equal(hir_iop_abs(INT64_MIN, &r), HIR_IOP_WRAPPED);
    assert_true(r == INT64_MIN);
    assert_int_equal(hir_iop_abs(-5, &r), HIR_IOP_OK);
    assert_int_equal(r, 5);
}

static void test_pow(void **st)
{
    (void)st;
    int64_t r;
    assert_int_equal(hir_iop_pow(3, 100, &r), HIR_IOP_WRAPPED);
    assert_true(r == pow_by_steps(3, 100));
    assert_int_equal(hir_iop_pow(3, 39, &r), HIR_IOP_OK);
    assert_true(r == INT64_C(4052555153018976267));
    assert_int_equal(hir_iop_pow(-2, 63, &r), HIR_IOP_OK);   /* exactly INT64_MIN */
    assert_true(r == INT64_MIN);
    assert_int_equal(hir_iop_pow(2, 63, &r), HIR_IOP_WRAPPED);
    assert_true(r == INT64_MIN);
    assert_int_equal(hir_iop_pow(2, 62, &r), HIR_IOP_OK);
    assert_int_equal(hir_iop_pow(7, 0, &r), HIR_IOP_OK);
    assert_int_equal(r, 1);
    assert_int_equal(hir_iop_pow(-1, INT64_MAX, &r), HIR_IOP_OK);
    assert_int_equal(r, -1);
    assert_int_equal(hir_iop_pow(2, -1, &r), HIR_IOP_OK);
    assert_int_equal(r, 0);
    assert_int_equal(hir_iop_pow(-1, -3, &r), HIR_IOP_OK);
    assert_int_equal(r, -1);
    assert_int_equal(hir_iop_pow(0, -1, &r), HIR_IOP_DIV0);
    assert_int_equal(r, -1);
}

static void test_division(void **st)
{
    (void)st;
    int64_t r;
    assert_int_equal(hir_iop_div(-7, 2, &r), HIR_IOP_OK);
    assert_int_equal(r, -3);
    assert_int_equal(hir_iop_mod(-7, 2, &r), HIR_IOP_OK);
    assert_int_equal(r, -1);
    assert_int_equal(hir_iop_remainder(-7, 2, &r), HIR_IOP_OK);
    assert_int_equal(r, 1);
    assert_int_equal(hir_iop_remainder(7, -2, &r), HIR_IOP_OK);
    assert_int_equal(r, -1);
    assert_int_equal(hir_iop_ceildiv(7, 2, &r), HIR_IOP_OK);
    assert_int_equal(r, 4);
    assert_int_equal(hir_iop_ceildiv(-7, 2, &r), HIR_IOP_OK);
    assert_int_equal(r, -3);
    assert_int_equal(hir_iop_ceildiv(-7, -2, &r), HIR_IOP_OK);
    assert_int_equal(r, 4);
    assert_int_equal(hir_iop_div(INT64_MIN, -1, &r), HIR_IOP_WRAPPED);
    assert_true(r == INT64_MIN);
    assert_int_equal(hir_iop_mod(INT64_MIN, -1, &r), HIR_IOP_OK);
    assert_int_equal(r, 0);
    assert_int_equal(hir_iop_ceildiv(INT64_MIN, -1, &r), HIR_IOP_WRAPPED);
    assert_true(r == INT64_MIN);
    /* by zero: an error status; the value is what the device computes */
    assert_int_equal(hir_iop_div(5, 0, &r), HIR_IOP_DIV0);
    assert_int_equal(r, -1);
    assert_int_equal(hir_iop_mod(5, 0, &r), HIR_IOP_DIV0);
    assert_int_equal(r, 5);
    assert_int_equal(hir_iop_remainder(5, 0, &r), HIR_IOP_DIV0);
    assert_int_equal(r, 5);
    assert_int_equal(hir_iop_ceildiv(5, 0, &r), HIR_IOP_DIV0);
    assert_int_equal(r, -1);
}

static void test_shifts_gcd(void **st)
{
    (void)st;
    int64_t r;
    hir_iop_shl(1, 63, &r);
    assert_true(r == INT64_MIN);
    hir_iop_shl(1, 64, &r);
    assert_int_equal(r, 0);
    hir_iop_shl(1, -1, &r);
    assert_int_equal(r, 0);
    hir_iop_shr(-8, 1, &r);
    assert_int_equal(r, -4);
    hir_iop_shr(-8, 64, &r);
    assert_int_equal(r, -1);
    hir_iop_shr(8, 100, &r);
    assert_int_equal(r, 0);
    hir_iop_shr(INT64_MIN, 63, &r);
    assert_int_equal(r, -1);
    assert_int_equal(hir_iop_gcd(-12, 18, &r), HIR_IOP_OK);
    assert_int_equal(r, 6);
    assert_int_equal(hir_iop_gcd(0, 0, &r), HIR_IOP_OK);
    assert_int_equal(r, 0);
    assert_int_equal(hir_iop_gcd(INT64_MIN, 0, &r), HIR_IOP_WRAPPED);
    assert_true(r == INT64_MIN);
}

static void test_device_text(void **st)
{
    (void)st;
    const char *t = HIR_INTOPS_TEXT;
    /* the same definitions, as device functions, plus the value forms the generator calls */
    assert_non_null(strstr(t, "#define hir_iop_devfn static __device__ __forceinline__\n"));
    assert_non_null(strstr(t, "hir_iop_devfn int hir_iop_pow(hir_i64 a, hir_i64 b, hir_i64 *r)"));
    assert_non_null(strstr(t, "hir_iv_##OP"));
    assert_non_null(strstr(t, "HIR_IV(ceildiv)"));
    assert_null(strstr(t, "static inline"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wrapping),
        cmocka_unit_test(test_pow),
        cmocka_unit_test(test_division),
        cmocka_unit_test(test_shifts_gcd),
        cmocka_unit_test(test_device_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
