/* test_registry.c — the backend registry (runner/registry/): backends by name, the reference,
 * what this build lacks. CMake passes EXPECT_CUDA_BUILT (1 when the build has the CUDA
 * backend), so a registry that forgets or invents a backend fails here. Folded from the test
 * of the old stand-in, runner/cuda_absent.c: a build without CUDA must refuse to create a CUDA
 * backend with a message instead of crashing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "runner/registry/registry.h"

static void test_names(void **state)
{
    (void)state;
    char buf[64];
    assert_string_equal(hir_registry_names(buf, sizeof buf), "cpu or cuda");
    assert_null(hir_registry_find("tpu"));
    assert_null(hir_registry_find(NULL));
    const hir_backend_entry *cpu = hir_registry_find("cpu");
    assert_non_null(cpu);
    assert_ptr_equal(hir_registry_reference(), cpu);
    assert_true(hir_registry_built(cpu));
    assert_true(hir_registry_available(cpu, NULL, 0));
    assert_int_equal(hir_registry_device_count(cpu), 0);
    assert_ptr_equal(hir_registry_offering(HIR_OFFER_KERNELS), hir_registry_find("cuda"));
}

static void test_create(void **state)
{
    (void)state;
    hir_backend_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.size = 1;
    hir_error e;
    memset(&e, 0, sizeof e);
    hir_backend *be = (hir_backend *)&be;
    assert_int_equal(hir_registry_create("tpu", &cfg, &be, &e), -1);
    assert_null(be);
    assert_string_equal(e.msg, "unknown backend 'tpu' (expected cpu or cuda)");
    assert_int_equal(hir_registry_create("cpu", &cfg, &be, &e), 0);
    assert_non_null(be);
    assert_true(be->ops->caps & HIR_CAP_HOST_MEMORY);
    assert_null(be->ops->load_kernel);
    assert_null(be->ops->graph_begin);
    be->ops->destroy(be);
}

static void test_cuda(void **state)
{
    (void)state;
    const hir_backend_entry *cu = hir_registry_find("cuda");
    assert_non_null(cu);
    assert_int_equal(hir_registry_built(cu), EXPECT_CUDA_BUILT);
    char why[128] = "";
    if (!EXPECT_CUDA_BUILT) {
        assert_false(hir_registry_available(cu, why, sizeof why));
        assert_string_equal(why, "this build has no CUDA backend");
        assert_int_equal(hir_registry_device_count(cu), 0);
        assert_ptr_equal(hir_registry_default(), hir_registry_reference());
        hir_backend_config cfg;
        memset(&cfg, 0, sizeof cfg);
        hir_error e;
        memset(&e, 0, sizeof e);
        hir_backend *be = (hir_backend *)&be;
        assert_int_equal(hir_registry_create("cuda", &cfg, &be, &e), -1);
        assert_null(be);
        assert_string_equal(e.msg, "hir was built without the CUDA backend");
    } else if (hir_registry_device_count(cu) == 0) {
        /* built, no GPU visible (CI) */
        assert_false(hir_registry_available(cu, why, sizeof why));
        assert_string_equal(why, "no CUDA GPU is visible to this process");
        assert_ptr_equal(hir_registry_default(), hir_registry_reference());
    } else {
        assert_true(hir_registry_available(cu, why, sizeof why));
        assert_ptr_equal(hir_registry_default(), cu);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_create),
        cmocka_unit_test(test_cuda),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
