/* run.c — the runs of a job: --iters plain runs with the --progress line, or, for --bench and
 * --trace, the bench room's driver (hir_bench_program) with the job's options translated into
 * its own; and the --bench-json file written after the check with its verdict. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "runner/job/job_internal.h"

/* The progress line of runs that are not benchmarks (--progress): rank 0 only, from the
 * statement hook, so a single long run shows it too. */
typedef struct progress_line {
    FILE *f;
    int ranks, iter, iters;
    double t0, last, after;
    bool shown;
} progress_line;

double job_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void progress_show(progress_line *pl)
{
    double now = job_now_s();
    if (now - pl->t0 < pl->after || now - pl->last < 0.25)
        return;
    pl->last = now;
    pl->shown = true;
    fprintf(pl->f, "\r\033[Khir-run: %d rank%s, iteration %d/%d, %.1f s", pl->ranks,
            pl->ranks == 1 ? "" : "s", pl->iter + 1, pl->iters, now - pl->t0);
    fflush(pl->f);
}

static int progress_on_stmt(void *ctx, hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    (void)it, (void)s, (void)e;
    progress_show(ctx);
    return 0;
}

static void progress_end(progress_line *pl)
{
    if (pl->shown) {
        fputs("\r\033[K", pl->f);   /* the line goes; what follows starts clean */
        fflush(pl->f);
    }
}

/* Why a backend without graph entries cannot capture a graph: the registry names the backend
 * that offers graphs and whether this build has it. */
static const char *graphs_missing(char *buf, size_t n)
{
    const hir_backend_entry *g = hir_registry_offering(HIR_OFFER_GRAPHS);
    if (g)
        snprintf(buf, n, "%s graphs need the %s backend%s", g->title, g->title,
                 hir_registry_built(g) ? "" : ", which this build lacks");
    else
        snprintf(buf, n, "no backend of this build captures graphs");
    return buf;
}

/* --gemm-tune with --bench or --verbose: rank 0 says what tuning cost it (docs/benchmarks.md) */
static void gemm_tune_report(job *j)
{
    const hir_run_options *o = j->o;
    hir_device_info d;
    if (j->rank || !o->gemm_tune || !strcmp(o->gemm_tune, "off") || !(o->bench || o->verbose) ||
        !j->be->ops->profile || j->be->ops->profile->device_info(j->be, &d, NULL))
        return;
    fprintf(o->out, "gemm-tune: %d plan%s, %d candidate%s, %.1f ms", d.gemm_tune_plans,
            d.gemm_tune_plans == 1 ? "" : "s", d.gemm_tune_candidates,
            d.gemm_tune_candidates == 1 ? "" : "s", d.gemm_tune_ms);
    if (strcmp(o->gemm_tune, "on"))
        fprintf(o->out, "; %d plan%s from %s", d.gemm_tune_loaded,
                d.gemm_tune_loaded == 1 ? "" : "s", o->gemm_tune);
    fputc('\n', o->out);
}

/* The runs: timed or traced through hir_bench_program, else --iters plain runs with the
 * progress line. Results are reused run to run (interp.c): each run starts on an idle
 * device. */
int job_run(job *j, hir_diag *e)
{
    const hir_run_options *o = j->o;
    hir_bench_run_fn prep = o->vary_inputs ? job_vary_prepare : NULL;
    if (o->bench > 0 || o->trace_json) {
        char no_graphs[200];
        hir_bench_program_opts bo = {.bench = o->bench, .warmup = o->warmup, .iters = o->iters,
                                     .graph = o->graph, .bench_bare = o->bench_bare,
                                     .trace_json = o->trace_json, .progress = o->progress,
                                     .progress_after = o->progress_after,
                                     .program = o->program,
                                     .no_graphs = graphs_missing(no_graphs, sizeof no_graphs),
                                     .out = o->out, .progress_out = e->out};
        int rc = hir_bench_program(&bo, j->boot, j->it, j->be, j->in.views, prep, &j->vi,
                                   &j->bres, e);
        if (!rc)
            gemm_tune_report(j);
        return rc;
    }
    progress_line pl = {e->out, j->size, 0, o->iters, job_now_s(), 0, o->progress_after, false};
    hir_interp_hook ph = {.before = progress_on_stmt, .ctx = &pl};
    bool hooked = o->progress && j->rank == 0 && e->out;
    if (hooked && hir_interp_add_hook(j->it, &ph, e))   /* bench.c hooks --bench likewise */
        return -1;
    int failed = 0;
    for (int i = 0; i < o->iters && !failed; i++) {
        pl.iter = i;
        failed = (i && j->be->ops->synchronize(j->be, e)) || (prep && prep(&j->vi, i, e)) ||
                 hir_interp_run(j->it, j->in.views, e);
    }
    progress_end(&pl);
    if (hooked)
        hir_interp_remove_hook(j->it, &ph);
    if (!failed)
        gemm_tune_report(j);
    return failed ? -1 : 0;
}

/* The benchmark's JSON, after the check, with its verdict. */
hir_run_status job_bench_json(job *j, hir_run_status st, hir_diag *e)
{
    const hir_run_options *o = j->o;
    if (j->bres.iters > 0 && o->bench_json && j->rank == 0 &&
        (st == HIR_RUN_OK || st == HIR_RUN_CHECK_FAILED)) {
        static const char *const modes[] = {"auto", "full", "randomized"};
        hir_bench_meta meta = {.streams = o->num_streams,
                               .protocol = j->is_cpu ? NULL
                                           : o->p2p_protocol == HIR_P2P_PUT ? "put" : "get",
                               .check = !o->check ? "not checked"
                                        : st == HIR_RUN_OK ? "PASS" : "FAIL",
                               .check_mode = o->check ? modes[o->check_mode] : NULL,
                               .vary_inputs = o->vary_inputs};
        if (hir_bench_write_json(o->bench_json, &j->bres, &meta, e))
            st = HIR_RUN_FAILED;
    }
    return st;
}
