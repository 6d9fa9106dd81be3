/* test_cuda_spelling.c — every element-wise op of dialect/defs/ewise.def has a CUDA spelling in
 * the kernel generator (runner/cuda/cuda_kernels.c), and every integer spelling of an op that
 * dialect/intops.h defines calls intops, so a new row in the table cannot be forgotten on the
 * device; and every generated kernel source compiles (NVRTC) and links (nvJitLink) for sm_90.
 * Needs no GPU: NVRTC and nvJitLink run on the host. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "dialect/tables.h"
#include "runner/cuda/cuda_backend.h"
#include "runner/cuda/cuda_internal.h"

static void test_every_row_spelled(void **st)
{
    (void)st;
    const int counts[4] = {0, HIR_UN_COUNT, HIR_BIN_COUNT, HIR_TER_COUNT};
    for (int nargs = 1; nargs <= 3; nargs++)
        for (int op = 0; op < counts[nargs]; op++) {
            const char *i = hir_cu_ewise_spelling(nargs, op, 1);
            const char *f = hir_cu_ewise_spelling(nargs, op, 0);
            if (!i && !f)
                fail_msg("element-wise op %d of %d inputs has no CUDA spelling", op, nargs);
        }
    assert_null(hir_cu_ewise_spelling(2, HIR_BIN_COUNT, 1));
    assert_null(hir_cu_ewise_spelling(4, 0, 1));
}

static void test_integer_forms_use_intops(void **st)
{
    (void)st;
    const hir_binary_op ops[] = {HIR_BIN_ADD, HIR_BIN_SUB, HIR_BIN_MUL, HIR_BIN_DIV, HIR_BIN_MOD,
                                 HIR_BIN_FMOD, HIR_BIN_REMAINDER, HIR_BIN_CEILDIV, HIR_BIN_POW,
                                 HIR_BIN_GCD, HIR_BIN_SHL, HIR_BIN_SHR};
    for (size_t k = 0; k < sizeof ops / sizeof *ops; k++) {
        const char *i = hir_cu_ewise_spelling(2, ops[k], 1);
        assert_non_null(i);
        assert_non_null(strstr(i, "hir_iv_"));
    }
    assert_non_null(strstr(hir_cu_ewise_spelling(1, HIR_UN_NEG, 1), "hir_iv_neg"));
    assert_non_null(strstr(hir_cu_ewise_spelling(1, HIR_UN_ABS, 1), "hir_iv_abs"));
}

/* The generated sources themselves: a text that NVRTC rejects (such as device functions that
 * lost their __device__ qualifier) fails here, on a machine without a GPU, not on the GPU. */
static void test_generated_kernels_compile(void **st)
{
    (void)st;
    hir_diag e = {0};
    int n = 0;
    int rc = hir_cu_codegen_check(9, 0, &n, stderr, &e);
    if (rc != 0) fail_msg("kernel generation for sm_90 failed after %d kernels: %s", n, hir_diag_last_error(&e));
    assert_true(n > 100);
    hir_diag_fini(&e);
}

/* the sdpa softmax kernel (runner/cuda/cuda_sdpa.c) in its bias/mask/logsumexp variants */
static void test_sdpa_kernels_compile(void **st)
{
    (void)st;
    hir_diag e = {0};
    int n = 0;
    int rc = hir_cu_sdpa_codegen_check(9, 0, &n, &e);
    if (rc != 0) fail_msg("sdpa kernel generation for sm_90 failed after %d kernels: %s", n, hir_diag_last_error(&e));
    assert_int_equal(n, 7);
    hir_diag_fini(&e);
}

/* the MoE row gather/scatter kernels (runner/cuda/cuda_moe.c), every word size */
static void test_moe_kernels_compile(void **st)
{
    (void)st;
    hir_diag e = {0};
    int n = 0;
    int rc = hir_cu_moe_codegen_check(9, 0, &n, &e);
    if (rc != 0) fail_msg("MoE kernel generation for sm_90 failed after %d kernels: %s", n, hir_diag_last_error(&e));
    assert_int_equal(n, 8);
    hir_diag_fini(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_row_spelled),
        cmocka_unit_test(test_integer_forms_use_intops),
        cmocka_unit_test(test_generated_kernels_compile),
        cmocka_unit_test(test_sdpa_kernels_compile),
        cmocka_unit_test(test_moe_kernels_compile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
