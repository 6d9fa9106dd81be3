/* test_dialect_tables.c — the tables generated from dialect/defs/: every row has a name, the
 * lookups invert the names, and the facts the defs state (roots, reductions, letters,
 * prefixes) come back through the API. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dialect/dtype.h"
#include "dialect/tables.h"

static void test_ewise(void **st)
{
    (void)st;
    hir_binary_op bop;
    assert_true(hir_binary_op_lookup("ceilDiv", &bop));
    assert_int_equal(bop, HIR_BIN_CEILDIV);
    assert_true(hir_binary_op_lookup("%", &bop));
    assert_int_equal(bop, HIR_BIN_MOD);
    assert_string_equal(hir_binary_op_name(HIR_BIN_XOR), "bitwise_xor");
    assert_string_equal(hir_binary_infix(HIR_BIN_SHL), "<<");
    assert_null(hir_binary_infix(HIR_BIN_POW));
    assert_false(hir_binary_op_lookup("nope", &bop));
    hir_unary_op uop;
    assert_true(hir_unary_op_lookup("-", &uop));
    assert_int_equal(uop, HIR_UN_NEG);
    hir_reduce_op rop;
    assert_true(hir_reduce_op_lookup("fmax", &rop));
    assert_int_equal(rop, HIR_RED_FMAX);
    hir_ternary_op top;
    assert_true(hir_ternary_op_lookup("where", &top));
    assert_int_equal(top, HIR_TER_WHERE);
    assert_string_equal(hir_reduce_op_name(HIR_RED_SUM), "add");
    /* every row's name looks up to itself */
    for (int i = 0; i < HIR_UN_COUNT; i++)
        assert_true(hir_unary_op_lookup(hir_unary_op_name((hir_unary_op)i), &uop) && (int)uop == i);
    for (int i = 0; i < HIR_BIN_COUNT; i++)
        assert_true(hir_binary_op_lookup(hir_binary_op_name((hir_binary_op)i), &bop) && (int)bop == i);
    int op;
    assert_true(hir_ewise_fn_lookup("fmaxf", 2, &op));
    assert_int_equal(op, HIR_BIN_FMAX);
    assert_true(hir_ewise_fn_lookup("max", 2, &op));
    assert_int_equal(op, HIR_BIN_MAX);
    assert_false(hir_ewise_fn_lookup("max", 1, &op));
    /* nvFuser's float-output spellings of unary operators, and its casts */
    assert_true(hir_ewise_fn_lookup("log1pf", 1, &op));
    assert_int_equal(op, HIR_UN_LOG1P);
    assert_true(hir_ewise_fn_lookup("nearbyintf", 1, &op));
    assert_int_equal(op, HIR_UN_ROUND);
    assert_true(hir_ewise_fn_lookup("isinf", 1, &op));
    assert_int_equal(op, HIR_UN_ISINF);
    assert_true(hir_ewise_fn_lookup("threshold", 3, &op));
    assert_int_equal(op, HIR_TER_THRESHOLD);
    assert_true(hir_ewise_is_cast("__float2half"));
    assert_true(hir_ewise_is_cast("__to_int64"));
    assert_false(hir_ewise_is_cast("bit_ceil"));
    assert_false(hir_ewise_is_cast("__"));
    assert_false(hir_ewise_is_cast(NULL));
    assert_string_equal(hir_binary_op_name((hir_binary_op)HIR_BIN_COUNT), "?");
}

static void test_comm_transport(void **st)
{
    (void)st;
    hir_comm_type t;
    for (int i = 0; i < HIR_COMM_COUNT; i++) {
        assert_true(hir_comm_type_lookup(hir_comm_type_name((hir_comm_type)i), &t));
        assert_int_equal(t, i);
    }
    assert_true(hir_comm_type_has_root(HIR_COMM_BROADCAST));
    assert_false(hir_comm_type_has_root(HIR_COMM_ALLGATHER));
    assert_true(hir_comm_type_reduces(HIR_COMM_REDUCESCATTER));
    assert_false(hir_comm_type_reduces(HIR_COMM_GATHER));
    assert_false(hir_comm_type_lookup("allgather", &t));
    hir_backend_kind b;
    assert_true(hir_backend_kind_lookup("UCC", &b));
    assert_int_equal(b, HIR_BK_UCC);
    assert_false(hir_backend_kind_lookup("MPI", &b));
}

static void test_letters(void **st)
{
    (void)st;
    hir_mem m;
    assert_true(hir_mem_lookup_letter("sym", 3, &m));
    assert_int_equal(m, HIR_MEM_SYMMETRIC);
    assert_false(hir_mem_lookup_letter("sy", 2, &m));
    assert_true(hir_mem_lookup_name("register", &m));
    assert_int_equal(m, HIR_MEM_LOCAL);
    hir_itype it;
    for (int i = 0; i < HIR_IT_COUNT; i++) {
        assert_true(hir_itype_lookup(hir_itype_letter((hir_itype)i), &it));
        assert_int_equal(it, i);
    }
    assert_false(hir_itype_lookup('x', &it));
    hir_ptype pt;
    assert_true(hir_ptype_lookup("deviceIdx.y", 11, &pt));
    assert_int_equal(pt, HIR_PT_DIDY);
    assert_true(hir_ptype_is_stream(HIR_PT_STREAM_OLD0));
    hir_dtype dt;
    assert_true(hir_dtype_of_symbol_prefix("i", 1, &dt));
    assert_int_equal(dt, HIR_DT_INDEX);
    assert_true(hir_dtype_of_symbol_prefix("f4x2_", 5, &dt));
    assert_int_equal(dt, HIR_DT_E2M1X2);
    assert_true(hir_dtype_of_symbol_prefix("c", 1, &dt));
    assert_int_equal(dt, HIR_DT_CDOUBLE);
    assert_true(hir_dtype_of_symbol_prefix("ptr", 3, &dt));
    assert_int_equal(dt, HIR_DT_INDEX);
    assert_false(hir_dtype_of_symbol_prefix("x", 1, &dt));
}

static void test_ops(void **st)
{
    (void)st;
    hir_op op;
    assert_true(hir_op_lookup("CollectivePermute", 17, &op));
    assert_int_equal(op, HIR_OP_CPERM);
    for (int i = 0; i < HIR_OP_COUNT; i++)
        assert_non_null(hir_ops[i].enum_name);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ewise),
        cmocka_unit_test(test_comm_transport),
        cmocka_unit_test(test_letters),
        cmocka_unit_test(test_ops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
