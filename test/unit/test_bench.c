/* test_bench.c — the timing loop of hir-run --bench (runner/bench/bench.c) on the CPU backend, whose
 * events read the clock: iteration counts, statistics, FLOP and statement counters, JSON. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "runner/bench/bench.h"
#include "runner/cpu/cpu.h"

typedef struct fake {
    hir_bench_counters *c;
    int calls;
    long sleep_ns;
} fake;

/* One "run": sleeps, and counts what an interpreter would (3 statements, one 2x3x4 GEMM). */
static int fake_run(void *ctx, int iter, hir_diag *e)
{
    fake *f = ctx;
    f->calls++;
    struct timespec ts = {0, f->sleep_ns};
    nanosleep(&ts, NULL);
    hir_bench_count_stmt(f->c, NULL);
    hir_bench_count_stmt(f->c, NULL);
    hir_bench_count_stmt(f->c, NULL);
    hir_bench_count_gemm(f->c, 2, 3, 4, 1, HIR_DT_BFLOAT);
    return 0;
}

static int fail_run(void *ctx, int iter, hir_diag *e)
{
    return iter == 2 ? hir_fail(e, "run %d failed", iter) : 0;
}

static hir_backend *cpu(void)
{
    hir_backend_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.size = 1;
    cfg.timeout = 5;
    hir_backend *be = NULL;
    hir_diag e = {0};
    assert_int_equal(hir_backend_cpu_create(&cfg, &be, &e), 0);
    hir_diag_fini(&e);
    return be;
}

static void test_counts_and_stats(void **state)
{
    hir_backend *be = cpu();
    hir_bench_counters c;
    fake f = {&c, 0, 200000};
    hir_bench_opts o = {.warmup = 2, .iters = 5, .progress = 0, .program = "p.hir"};
    hir_bench_result r;
    hir_diag e = {0};
    assert_int_equal(hir_bench_run(be, NULL, &o, &c, fake_run, &f, &r, &e), 0);
    assert_int_equal(f.calls, 7);                 /* warm-ups + timed */
    assert_int_equal(r.iters, 5);
    assert_int_equal(r.warmup, 2);
    assert_int_equal(r.stmts, 3);
    assert_int_equal(r.gemms, 1);
    assert_true(r.flops == 2.0 * 2 * 3 * 4);      /* counted per iteration, not summed */
    assert_true(r.min_ms >= 0.19 && r.min_ms <= r.median_ms && r.median_ms <= r.max_ms);
    assert_true(r.min_ms <= r.mean_ms && r.mean_ms <= r.max_ms);
    assert_true(r.stddev_ms >= 0);
    assert_true(r.tflops > 0 && r.tflops == r.flops / (r.mean_ms * 1e-3) / 1e12);
    assert_true(r.host_us >= 190);
    char path[] = "/tmp/hir-test-bench-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    hir_bench_meta meta = {.streams = 4, .protocol = "get", .check = "PASS",
                          .check_mode = "auto", .vary_inputs = 1};
    assert_int_equal(hir_bench_write_json(path, &r, &meta, &e), 0);
    FILE *fp = fopen(path, "r");
    char buf[4096] = {0};
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    fclose(fp);
    remove(path);
    assert_true(n > 0);
    assert_non_null(strstr(buf, "\"iters\": 5"));
    assert_non_null(strstr(buf, "\"flops_per_rank\": 48"));
    assert_non_null(strstr(buf, "\"stmts_per_iter\": 3"));
    assert_non_null(strstr(buf, "\"per_iter_ms\": ["));
    assert_non_null(strstr(buf, "\"check\": \"PASS\""));
    assert_non_null(strstr(buf, "\"streams\": 4"));
    assert_non_null(strstr(buf, "\"hir_git\": \""));
    assert_non_null(strstr(buf, "\"gemm_shapes\": [{\"m\": 2, \"n\": 3, \"k\": 4, \"dtype\": \"__bfloat\""));
    hir_bench_result_free(&r);
    be->ops->destroy(be);
}

/* A device whose peak is below what the run claims: the figure is refused, never reported. */
static int tiny_device(hir_backend *be, hir_device_info *d, hir_diag *e)
{
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "test device");
    snprintf(d->uuid, sizeof d->uuid, "GPU-test");
    d->sm_count = 1;
    d->clock_khz = 1;
    d->peak_tflops_16 = 1e-12;       /* 1 FLOP/s */
    return 0;
}

static void test_above_peak_is_an_error(void **state)
{
    hir_backend *be = cpu();
    hir_backend_ops ops = *be->ops;
    const hir_backend_ops *saved = be->ops;
    hir_profile_ops prof = {.device_info = tiny_device};   /* all bench/ asks */
    ops.profile = &prof;
    be->ops = &ops;
    hir_bench_counters c;
    fake f = {&c, 0, 1000};
    hir_bench_opts o = {.warmup = 0, .iters = 2, .progress = 0};
    hir_bench_result r;
    hir_diag e = {0};
    assert_int_equal(hir_bench_run(be, NULL, &o, &c, fake_run, &f, &r, &e), -1);
    assert_non_null(strstr(hir_diag_last_error(&e), "above its peak"));
    /* the same run on a device with a realistic peak is a result */
    be->ops = saved;
    assert_int_equal(hir_bench_run(be, NULL, &o, &c, fake_run, &f, &r, &e), 0);
    assert_int_equal(r.ranks_per_device, 1);
    assert_true(r.tflops_per_device == r.tflops);
    hir_bench_result_free(&r);
    be->ops->destroy(be);
    hir_diag_fini(&e);
}

static void test_failure_propagates(void **state)
{
    hir_backend *be = cpu();
    hir_bench_counters c;
    hir_bench_opts o = {.warmup = 1, .iters = 3, .progress = 0};
    hir_bench_result r;
    hir_diag e = {0};
    assert_int_equal(hir_bench_run(be, NULL, &o, &c, fail_run, NULL, &r, &e), -1);
    assert_string_equal(hir_diag_last_error(&e), "run 2 failed");
    be->ops->destroy(be);
    hir_diag_fini(&e);
}

static void test_streams_noted_once(void **state)
{
    hir_bench_counters c;
    memset(&c, 0, sizeof c);
    int x, y;                                     /* two distinct addresses as streams */
    hir_stream *a = (hir_stream *)&x, *b = (hir_stream *)&y;
    hir_bench_count_stmt(&c, a);
    hir_bench_count_stmt(&c, b);
    hir_bench_count_stmt(&c, a);
    hir_bench_count_stmt(&c, NULL);
    hir_bench_count_stmt(NULL, a);                /* no counters: nothing happens */
    assert_int_equal(c.stmts, 4);
    assert_int_equal(c.nstreams, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts_and_stats),
        cmocka_unit_test(test_failure_propagates),
        cmocka_unit_test(test_above_peak_is_an_error),
        cmocka_unit_test(test_streams_noted_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
