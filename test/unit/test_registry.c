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
    hir_diag e = {0};
    memset(&e, 0, sizeof e);
    hir_backend *be = (hir_backend *)&be;
    assert_int_equal(hir_registry_create(hir_registry_find("tpu"), &cfg, &be, &e), -1);
    assert_null(be);
    assert_string_equal(hir_diag_last_error(&e), "hir_registry_create: no backend entry");
    be = (hir_backend *)&be;
    assert_int_equal(hir_registry_create(hir_registry_find("cpu"), &cfg, &be, &e), 0);
    assert_non_null(be);
    assert_true(be->ops->caps & HIR_CAP_HOST_MEMORY);
    assert_null(be->ops->kernels);
    assert_null(be->ops->graph);
    be->ops->destroy(be);
    hir_diag_fini(&e);
}

/* The contract of runner/backend/backend.h: every core entry is set, and a group is offered
 * whole (every entry set) or not at all (NULL). The CPU backend offers the deferred-GEMM check
 * and the model statements, nothing else; with defer_gemm_flops its table is the wrapped one,
 * which must keep the same groups. */
#define CORE_SET(o, f) assert_non_null((o)->f)
static void check_contract(const hir_backend_ops *o)
{
    assert_non_null(o->name);
    CORE_SET(o, destroy); CORE_SET(o, alloc); CORE_SET(o, free); CORE_SET(o, mem_available);
    CORE_SET(o, upload); CORE_SET(o, download); CORE_SET(o, stream_main);
    CORE_SET(o, stream_get); CORE_SET(o, stream_wait); CORE_SET(o, synchronize);
    CORE_SET(o, event_create); CORE_SET(o, event_record); CORE_SET(o, event_elapsed_ms);
    CORE_SET(o, event_destroy); CORE_SET(o, fill); CORE_SET(o, copy); CORE_SET(o, gemm);
    CORE_SET(o, unary); CORE_SET(o, binary); CORE_SET(o, ternary); CORE_SET(o, reduce);
    CORE_SET(o, collective); CORE_SET(o, group_begin); CORE_SET(o, group_end);
    CORE_SET(o, p2p_post); CORE_SET(o, share_handles); CORE_SET(o, wait);
    CORE_SET(o, work_release); CORE_SET(o, release_peers);
    if (o->graph) {
        CORE_SET(o->graph, begin); CORE_SET(o->graph, end); CORE_SET(o->graph, launch);
        CORE_SET(o->graph, destroy); CORE_SET(o->graph, capturing); CORE_SET(o->graph, rearm);
    }
    if (o->kernels) { CORE_SET(o->kernels, load); CORE_SET(o->kernels, launch); }
    if (o->plans) {
        CORE_SET(o->plans, resolve); CORE_SET(o->plans, launch); CORE_SET(o->plans, free);
    }
    if (o->check) { CORE_SET(o->check, take_deferred); CORE_SET(o->check, gemm_now); }
    if (o->profile) {
        CORE_SET(o->profile, launch_record); CORE_SET(o->profile, launch_replay);
        CORE_SET(o->profile, device_info);
    }
    if (o->model) {
        CORE_SET(o->model, moe_dispatch); CORE_SET(o->model, moe_combine);
        CORE_SET(o->model, sdpa);
    }
}

static void test_contract(void **state)
{
    (void)state;
    for (int defer = 0; defer < 2; defer++) {
        hir_backend_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.size = 1;
        cfg.defer_gemm_flops = defer ? 1 : 0;
        hir_diag e = {0};
        memset(&e, 0, sizeof e);
        hir_backend *be = NULL;
        assert_int_equal(hir_registry_create(hir_registry_reference(), &cfg, &be, &e), 0);
        const hir_backend_ops *o = be->ops;
        check_contract(o);
        assert_non_null(o->check);
        assert_non_null(o->model);
        assert_null(o->graph);
        assert_null(o->kernels);
        assert_null(o->plans);
        assert_null(o->profile);
        assert_int_equal(o->release_peers(be, &e), 0);
        be->ops->destroy(be);
        hir_diag_fini(&e);
    }
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
        hir_diag e = {0};
        memset(&e, 0, sizeof e);
        hir_backend *be = (hir_backend *)&be;
        assert_int_equal(hir_registry_create(cu, &cfg, &be, &e), -1);
        assert_null(be);
        assert_string_equal(hir_diag_last_error(&e), "hir was built without the CUDA backend");
        hir_diag_fini(&e);
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
        cmocka_unit_test(test_contract),
        cmocka_unit_test(test_cuda),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
