/* test_interp_oom.c — running out of memory anywhere in a hir-run job is an error, never an
 * abort (issue 14 F18). hir_run_job (reading, parsing, verifying, the limits check, inputs, the
 * interpreter's tables and buffers, outputs saved as .npy, the --check reference run) runs on
 * one rank again and again, and in run k the k-th allocation that hir's own code makes fails:
 * once only ("transient"), and from then on ("exhausted"). Every run must end with HIR_RUN_OK or
 * with a message that says "out of memory"; the sweep ends when a run makes fewer than k
 * allocations. In the ASan build (scripts/ci-asan) LeakSanitizer also sees every error path.
 *
 * The allocator is replaced at link time (-Wl,--wrap=malloc,... in runner_cpu.cmake): only
 * calls from the objects linked into this program (hir's static libraries and this file) go
 * through __wrap_*; MPI, BLAS and libc keep theirs. The counter is this test's own state, not
 * library state: no hir library has a hook for it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "runner/boot/boot.h"
#include "runner/job/job.h"

#ifndef HIR_RELIABILITY_INPUTS
#error "HIR_RELIABILITY_INPUTS (test/lit/reliability/Inputs) must be defined"
#endif
#ifndef HIR_CORPUS
#error "HIR_CORPUS (test/corpus) must be defined"
#endif
#ifndef HIR_LIT_INPUTS
#error "HIR_LIT_INPUTS (test/lit/Inputs) must be defined"
#endif

/* ---------------------------------------------------------------- the failing allocator */

static struct {
    long count;        /* allocations counted since the sweep step began */
    long fail_at;      /* 0: none fails; else the allocation with this number fails */
    int exhausted;     /* and every one after it */
    long failed;       /* allocations refused in this step */
} heap;

static int refuse(void)
{
    if (!heap.fail_at)
        return 0;
    long n = ++heap.count;
    if (n == heap.fail_at || (heap.exhausted && n > heap.fail_at)) {
        heap.failed++;
        return 1;
    }
    return 0;
}

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t k);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t a, size_t n);

void *__wrap_malloc(size_t n) { return refuse() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t k) { return refuse() ? NULL : __real_calloc(n, k); }
void *__wrap_realloc(void *p, size_t n) { return refuse() ? NULL : __real_realloc(p, n); }
void *__wrap_aligned_alloc(size_t a, size_t n) { return refuse() ? NULL : __real_aligned_alloc(a, n); }

/* ---------------------------------------------------------------- the sweep */

static hir_boot *boot;

typedef struct job {
    const char *program;
    const char *check_ref;           /* NULL: --check against the program itself */
    hir_data_kind data;
    const char *bind;                /* NAME of --bind NAME=3, or NULL */
    int iters;
    int save;                        /* --save-outputs to a fresh folder */
} job;

/* One run of the job with allocation fail_at failing (0: none). Returns the allocations that
 * hir made, and checks the outcome. */
static long run_once(const job *j, long fail_at, int exhausted, const char *what)
{
    char dir[] = "/tmp/hir-oom-XXXXXX";
    assert_non_null(mkdtemp(dir));
    hir_run_options o;
    hir_run_options_init(&o);
    o.program = j->program;
    o.device = "cpu";
    o.timeout = 30;
    o.inputs = HIR_INPUTS_GENERATED;
    o.data = j->data;
    o.check = 1;
    o.check_ref = j->check_ref;
    o.iters = j->iters;
    o.save_dir = j->save ? dir : NULL;
    hir_run_binding b = {j->bind, 3};
    o.binds = &b;
    o.nbinds = j->bind ? 1 : 0;
    char *log = NULL;
    size_t loglen = 0;
    FILE *out = open_memstream(&log, &loglen);   /* libc's: never made to fail */
    assert_non_null(out);
    o.out = out;
    hir_diag e = {0};

    heap.count = 0;
    heap.failed = 0;
    heap.exhausted = exhausted;
    heap.fail_at = fail_at ? fail_at : -1;       /* -1: count, refuse nothing */
    hir_run_status st = hir_run_job(&o, boot, &e);
    long made = heap.count;
    long failed = heap.failed;
    heap.fail_at = 0;

    fclose(out);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
    int ok = st == HIR_RUN_OK;
    /* a failed job says why in e; a comparison that could not be made fails the check (status
     * CHECK_FAILED, exit 1) and says why in the report */
    const char *why = st == HIR_RUN_CHECK_FAILED ? (log ? log : "") : hir_diag_last_error(&e);
    int oom = st != HIR_RUN_OK && strstr(why, "out of ") && strstr(why, "memory");
    if (!failed && !ok)
        fail_msg("%s: the run without a refused allocation failed (status %d): %s\n%s", what,
                 (int)st, hir_diag_last_error(&e), log ? log : "");
    if (failed && !ok && !oom)
        fail_msg("%s: allocation %ld of %s refused (%s): status %d, message '%s', output:\n%s",
                 j->program, fail_at, what, exhausted ? "and every later one" : "once", (int)st,
                 hir_diag_last_error(&e), log ? log : "");
    free(log);
    hir_diag_fini(&e);
    return made;
}

static void sweep(const job *j)
{
    long total = run_once(j, 0, 0, "the reference run");
    assert_true(total > 10);
    long oom_runs = 0;
    for (int exhausted = 0; exhausted < 2; exhausted++)
        for (long k = 1; k <= total + 1; k++) {
            long made = run_once(j, k, exhausted, exhausted ? "exhausted" : "transient");
            oom_runs++;
            if (made < k)
                break;
        }
    print_message("%s: %ld allocations per job, %ld runs with one refused\n", j->program, total,
                  oom_runs);
}

static void test_stream_pipeline(void **state)
{
    (void)state;
    job j = {HIR_RELIABILITY_INPUTS "/oom-stream-pipeline.hir", NULL, HIR_DATA_RANDOM, NULL, 2, 1};
    sweep(&j);
}

static void test_allgather(void **state)
{
    (void)state;
    job j = {HIR_RELIABILITY_INPUTS "/oom-allgather.hir", NULL, HIR_DATA_ARANGE, NULL, 1, 0};
    sweep(&j);
}

static void test_int_ops(void **state)
{
    (void)state;
    job j = {HIR_LIT_INPUTS "/int-ops-run.hir", NULL, HIR_DATA_ONES, NULL, 1, 1};
    sweep(&j);
}

static void test_bind_symbolic(void **state)
{
    (void)state;
    job j = {HIR_LIT_INPUTS "/run-bind-symbolic.hir", NULL, HIR_DATA_ARANGE, "i0", 2, 0};
    sweep(&j);
}

/* 2026 statements: fresh ALLOCATE, a CollectivePermute on a team of one, Wait, Deallocate */
static void test_collective_permute(void **state)
{
    (void)state;
    job j = {HIR_CORPUS "/nvfuser-2026/collective-permute-fec.hir", NULL, HIR_DATA_RANDOM, NULL,
             2, 1};
    sweep(&j);
}

static void test_check_reference(void **state)
{
    (void)state;
    job j = {HIR_RELIABILITY_INPUTS "/oom-stream-pipeline.hir",
             HIR_RELIABILITY_INPUTS "/oom-allgather.hir", HIR_DATA_RANDOM, NULL, 1, 0};
    sweep(&j);
}

int main(int argc, char **argv)
{
    hir_diag e = {0};
    if (hir_boot_init(&argc, &argv, 30, &boot, &e)) {
        fprintf(stderr, "test_interp_oom: %s\n", hir_diag_last_error(&e));
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_pipeline),
        cmocka_unit_test(test_allgather),
        cmocka_unit_test(test_int_ops),
        cmocka_unit_test(test_bind_symbolic),
        cmocka_unit_test(test_collective_permute),
        cmocka_unit_test(test_check_reference),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    hir_boot_fini(boot);
    hir_diag_fini(&e);
    return rc;
}
