/* test_cuda_absent.c — a build without the CUDA backend (HIR_ENABLE_CUDA=OFF, or no toolkit)
 * links runner/cuda_absent.c in its place: it must report no GPU and no NCCL, and refuse to
 * create a CUDA backend with a message instead of crashing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "runner/backend.h"

static void test_stand_in(void **state)
{
    (void)state;
    hir_backend *cu = (hir_backend *)&cu;
    hir_backend_config cfg;
    memset(&cfg, 0, sizeof cfg);
    hir_error e;
    memset(&e, 0, sizeof e);
    assert_int_equal(hir_backend_cuda_create(&cfg, &cu, &e), -1);
    assert_null(cu);
    assert_non_null(strstr(e.msg, "without the CUDA backend"));
    assert_int_equal(hir_cuda_available(), 0);
    assert_int_equal(hir_cuda_has_nccl(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stand_in),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
