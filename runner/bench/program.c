/* program.c — what `hir-run --bench / --graph / --bench-bare / --trace` does with a program
 * the job has made ready (hir_bench_program): the timed runs through hir_bench_run (bench.c),
 * eager or as replays of a captured CUDA graph, the bare-launch baseline, and the last run
 * recorded into the Perfetto trace (trace.c). The job translates its options into
 * hir_bench_program_opts; this room knows no job and no registry. */
#include <stdio.h>
#include <string.h>

#include "runner/bench/bench.h"
#include "runner/bench/trace.h"
#include "runner/boot/boot.h"

typedef struct prog_ctx {
    hir_interp *it;
    hir_backend *be;
    const hir_view *inputs;
    hir_graph *graph;
    hir_bench_counters *c;
    hir_bench_counters captured;     /* what one run counts, replayed with the graph */
    int64_t bare_launches, bare_other;
} prog_ctx;

static int run_eager(void *ctx, int iter, hir_diag *e)
{
    prog_ctx *p = ctx;
    return hir_interp_run(p->it, p->inputs, e);
}

static int run_graph(void *ctx, int iter, hir_diag *e)
{
    prog_ctx *p = ctx;
    *p->c = p->captured;
    p->c->nstreams = 0;              /* a graph runs from the main stream, which is timed anyway */
    return p->be->ops->graph->launch(p->be, p->graph, e);
}

static int run_bare(void *ctx, int iter, hir_diag *e)
{
    prog_ctx *p = ctx;
    *p->c = p->captured;
    return p->be->ops->profile->launch_replay(p->be, &p->bare_launches, &p->bare_other, e);
}

/* --bench-bare: one eager run with the backend recording its kernel launches, then the loop
 * that replays exactly those launches (cuLaunchKernel only) timed like the eager runs, then one
 * more eager run so that the buffers end as a real run leaves them. A rank that cannot replay
 * (its run freed device memory) makes every rank skip the loop, saying why. */
static int bench_bare(prog_ctx *p, hir_boot *boot, const hir_bench_opts *eager,
                      hir_bench_result *res, hir_diag *e)
{
    hir_backend *be = p->be;
    if (!be->ops->profile) {
        snprintf(res->bare_why, sizeof res->bare_why, "the %s backend records no launches",
                 be->ops->name);
        return 0;
    }
    if (be->ops->synchronize(be, e) < 0) return -1;
    if (eager->prepare && eager->prepare(eager->prepare_ctx, 0, e) < 0) return -1;
    if (boot && hir_boot_barrier(boot, e) < 0) return -1;
    memset(p->c, 0, sizeof *p->c);
    if (be->ops->profile->launch_record(be, 1, e) < 0) return -1;
    int rc = hir_interp_run(p->it, p->inputs, e);
    hir_diag ignore;
    hir_diag_init(&ignore, NULL);
    be->ops->profile->launch_record(be, 0, &ignore);
    hir_diag_fini(&ignore);
    if (rc < 0 || be->ops->synchronize(be, e) < 0) return -1;
    p->captured = *p->c;
    hir_diag pe;
    hir_diag_init(&pe, NULL);
    int ok = be->ops->profile->launch_replay(be, &p->bare_launches, &p->bare_other, &pe) == 0;
    char why[sizeof res->bare_why];
    snprintf(why, sizeof why, "%.150s",
             ok ? "another rank could not replay its launches" : hir_diag_last_error(&pe));
    hir_diag_fini(&pe);
    int all = hir_bench_all_ok(boot, ok, e);
    if (all < 0) return -1;
    if (!all) {
        memcpy(res->bare_why, why, sizeof why);
        return be->ops->synchronize(be, e);
    }
    hir_bench_opts bo = *eager;
    bo.prepare = NULL;
    bo.progress = 0;
    bo.mode = "bare cuLaunchKernel replay";
    hir_bench_result br;
    if (hir_bench_run(be, boot, &bo, p->c, run_bare, p, &br, e) < 0) return -1;
    res->bare_ok = 1;
    res->bare_host_us = br.host_us;
    res->bare_host_us_min = br.host_us_min;
    res->bare_launches = p->bare_launches;
    res->bare_other = p->bare_other;
    hir_bench_result_free(&br);
    if (be->ops->synchronize(be, e) < 0) return -1;
    if (eager->prepare && eager->prepare(eager->prepare_ctx, 0, e) < 0) return -1;
    if (boot && hir_boot_barrier(boot, e) < 0) return -1;
    return hir_interp_run(p->it, p->inputs, e);
}

/* One eager run to set everything up, then a captured run; on any rank's failure every rank
 * stays eager (a message says why). Returns 1 with the graph, 0 without, -1 on error. */
static int capture(prog_ctx *p, hir_boot *boot, hir_bench_hook *h, const char *no_graphs,
                   int rank, hir_diag *e)
{
    hir_backend *be = p->be;
    if (hir_interp_run(p->it, p->inputs, e) < 0 || be->ops->synchronize(be, e) < 0) return -1;
    if (boot && hir_boot_barrier(boot, e) < 0) return -1;
    hir_diag ce;
    hir_diag_init(&ce, NULL);
    int ok = 0;
    if (be->ops->graph)
        ok = be->ops->graph->begin(be, &ce) == 0;
    else
        hir_fail(&ce, "%s", no_graphs);
    if (ok) {
        memset(p->c, 0, sizeof *p->c);
        h->capturing = 1;
        h->escaped = NULL;
        int rc = hir_interp_run(p->it, p->inputs, &ce);
        h->capturing = 0;
        if (rc == 0 && h->escaped) {
            int line = 0, col = 0;
            if (h->escaped->loc.src)
                hir_source_linecol((hir_source *)h->escaped->loc.src, h->escaped->loc.begin,
                                   &line, &col);
            hir_fail(&ce, "line %d queues work on a stream that never waited for the main "
                               "stream, so a capture would miss it", line);
            rc = -1;
        }
        hir_diag quiet;                   /* a failed run's reason is the one kept */
        hir_diag_init(&quiet, NULL);
        ok = be->ops->graph->end(be, rc == 0, &p->graph, rc == 0 ? &ce : &quiet) == 0;
        hir_diag_fini(&quiet);
        p->captured = *p->c;
    }
    char why[300];
    snprintf(why, sizeof why, "%s", *hir_diag_last_error(&ce) ? hir_diag_last_error(&ce)
                                    : "a run failed during capture");
    hir_diag_fini(&ce);
    int all = hir_bench_all_ok(boot, ok, e);
    if (all < 0) return -1;
    if (!all) {
        if (p->graph) be->ops->graph->destroy(be, p->graph);
        p->graph = NULL;
        if (!ok) {                        /* a warning, printed now: the job goes on */
            hir_diag_set_origin(hir_diag_emit(e, HIR_WARNING, (hir_loc){0}, "--graph: not "
                                "captured (%s); timing eager runs", why), "rank %d", rank);
            hir_diag_flush(e);
        }
        /* leave the backend clean for eager runs */
        if (be->ops->synchronize(be, e) < 0) return -1;
        return 0;
    }
    return 1;
}

typedef struct prep_ctx {
    hir_bench_run_fn user;
    void *user_ctx;
    hir_backend *be;
    hir_boot *boot;
    int graph;
} prep_ctx;

/* Before each run: the caller's step (inputs, outputs), then for graph replays a barrier (every
 * rank's previous replay is over) and the CUDA-IPC semaphores start over; hir_bench_run's own
 * barrier follows, so no rank signals before every rank has reset. */
static int prepare_run(void *ctx, int iter, hir_diag *e)
{
    prep_ctx *p = ctx;
    if (p->user && p->user(p->user_ctx, iter, e) < 0) return -1;
    if (p->graph) {
        if (p->boot && hir_boot_barrier(p->boot, e) < 0) return -1;
        if (p->be->ops->graph && p->be->ops->graph->rearm(p->be, e) < 0) return -1;
    }
    return 0;
}

int hir_bench_program(const hir_bench_program_opts *o, hir_boot *boot, hir_interp *it,
                      hir_backend *be, const hir_view *inputs, hir_bench_run_fn prepare,
                      void *prepare_ctx, hir_bench_result *res, hir_diag *e)
{
    int rank = boot ? hir_boot_rank(boot) : 0;
    memset(res, 0, sizeof *res);
    hir_bench_counters counters;
    memset(&counters, 0, sizeof counters);
    hir_bench_hook hook;
    memset(&hook, 0, sizeof hook);
    hook.counters = &counters;
    hir_trace *trace = NULL;
    prog_ctx p = {.it = it, .be = be, .inputs = inputs, .c = &counters};
    prep_ctx pc = {.user = prepare, .user_ctx = prepare_ctx, .be = be, .boot = boot};
    /* the interpreter calls the hook for every statement while this runs */
    hir_interp_hook bh = {.before = hir_bench_before, .after = hir_bench_after, .ctx = &hook};
    if (hir_interp_add_hook(it, &bh, e))
        return -1;
    int rc = -1;
    FILE *out = o->out ? o->out : stdout;

    if (o->bench > 0) {
        hir_bench_opts bo = {.warmup = o->warmup, .iters = o->bench, .progress = o->progress,
                             .progress_after = o->progress_after,
                             .progress_out = o->progress_out,
                             .program = o->program, .mode = "eager",
                             .prepare = prepare_run, .prepare_ctx = &pc};
        hir_bench_run_fn fn = run_eager;
        if (o->graph) {
            if (prepare && prepare(prepare_ctx, 0, e) < 0) goto out;
            int g = capture(&p, boot, &hook, o->no_graphs, rank, e);
            if (g < 0) goto out;
            if (g) {
                fn = run_graph;
                bo.mode = "graph";
                pc.graph = 1;
            } else {
                bo.mode = "eager (graph capture failed)";
            }
        }
        if (hir_bench_run(be, boot, &bo, &counters, fn, &p, res, e) < 0) goto out;
        if (o->bench_bare && fn == run_eager && !o->graph &&
            bench_bare(&p, boot, &bo, res, e) < 0)
            goto out;
        if (o->bench_bare && o->graph)
            snprintf(res->bare_why, sizeof res->bare_why, "%s",
                     "--graph times graph replays; run --bench-bare without --graph");
        if (rank == 0)
            hir_bench_print(out, res);
    } else {
        /* plain runs; with --trace the last one is recorded */
        int n = o->iters > 0 ? o->iters : 1;
        for (int i = 0; i < n - (o->trace_json != NULL); i++)
            if ((i && be->ops->synchronize(be, e) < 0) ||
                (prepare && prepare(prepare_ctx, i, e) < 0) ||
                hir_interp_run(it, inputs, e) < 0)
                goto out;
    }
    if (o->trace_json) {
        if (hir_trace_create(be, boot, &trace, e) < 0) goto out;
        hook.trace = trace;
        if (be->ops->synchronize(be, e) < 0) goto out;
        if (prepare && prepare(prepare_ctx, -1, e) < 0) goto out;
        if (boot && hir_boot_barrier(boot, e) < 0) goto out;
        if (hir_trace_arm(trace, e) < 0) goto out;
        if (hir_interp_run(it, inputs, e) < 0) goto out;
        if (be->ops->synchronize(be, e) < 0) goto out;
        if (hir_trace_disarm(trace, e) < 0) goto out;
        if (hir_trace_write(trace, o->trace_json, e) < 0) goto out;
        if (rank == 0)
            fprintf(out, "trace: %s (open in ui.perfetto.dev or chrome://tracing)\n",
                    o->trace_json);
    }
    rc = 0;
out:
    hir_interp_remove_hook(it, &bh);
    hook.trace = NULL;
    hir_trace_destroy(trace);
    if (p.graph) be->ops->graph->destroy(be, p.graph);
    return rc;
}
