/* bench.h — the bench room (runner/bench/): `hir-run --bench` and `--trace`. It owns the timing
 * loop (time runs of a program the way performance.md measures: warm-ups, then timed
 * iterations, a barrier across ranks before each, backend events around each, the slowest
 * rank's time per iteration; report mean/min/max/stddev, TFLOP/s from the GEMMs the
 * interpreter executed, and host time per statement), the statement hook that counts and
 * brackets statements, and the Perfetto trace (trace.h). Graph replay goes through the backend
 * table's optional graph entries. It sees a run only through interp.h and its hooks; it may use
 * the backend table, the bootstrap, the dialect and support/. hir_bench_program (program.c)
 * drives all of it for a job, from options of its own: the job translates its own into them. */
#ifndef HIR_RUNNER_BENCH_H
#define HIR_RUNNER_BENCH_H

#include <stdint.h>
#include <stdio.h>

#include "dialect/hir.h"
#include "runner/backend/backend.h"
#include "runner/interp/interp.h"

#define HIR_BENCH_MAX_STREAMS 64

/* What the interpreter counts while it runs (reset before every iteration). Fed through
 * hir_bench_count_*; a NULL counter set costs nothing. */
#define HIR_BENCH_MAX_SHAPES 8

typedef struct hir_bench_shape {
    int64_t m, n, k, count;
    int dtype;                   /* hir_dtype of the GEMM's inputs */
} hir_bench_shape;

typedef struct hir_bench_counters {
    double flops;                /* 2·M·N·K per executed linear/matmul (times batch) */
    int64_t gemms;               /* executed linear/matmul statements */
    unsigned dtypes;             /* bit per hir_dtype of GEMM inputs seen (for the peak) */
    int nshapes;                 /* distinct GEMM shapes, the first HIR_BENCH_MAX_SHAPES */
    hir_bench_shape shapes[HIR_BENCH_MAX_SHAPES];
    int64_t stmts;               /* executed statements (control flow included) */
    int nstreams;                /* streams that received work, so the end event waits for all */
    hir_stream *streams[HIR_BENCH_MAX_STREAMS];
} hir_bench_counters;

static inline void hir_bench_count_stmt(hir_bench_counters *c, hir_stream *s)
{
    if (!c) return;
    c->stmts++;
    if (!s) return;
    for (int i = c->nstreams - 1; i >= 0; i--)
        if (c->streams[i] == s) return;
    if (c->nstreams < HIR_BENCH_MAX_STREAMS) c->streams[c->nstreams++] = s;
}

static inline void hir_bench_count_gemm(hir_bench_counters *c, int64_t m, int64_t n, int64_t k,
                                        int64_t batch, int dtype)
{
    if (!c) return;
    c->flops += 2.0 * (double)m * (double)n * (double)k * (double)(batch > 0 ? batch : 1);
    c->gemms++;
    if (dtype >= 0 && dtype < 32) c->dtypes |= 1u << dtype;
    m *= batch > 0 ? batch : 1;
    for (int i = 0; i < c->nshapes; i++)
        if (c->shapes[i].m == m && c->shapes[i].n == n && c->shapes[i].k == k &&
            c->shapes[i].dtype == dtype) {
            c->shapes[i].count++;
            return;
        }
    if (c->nshapes < HIR_BENCH_MAX_SHAPES)
        c->shapes[c->nshapes++] = (hir_bench_shape){m, n, k, 1, dtype};
}

/* One run of the program. `iter` counts from 0 over warm-ups and timed runs. */
typedef int (*hir_bench_run_fn)(void *ctx, int iter, hir_diag *e);

typedef struct hir_bench_opts {
    /* called before each run with every stream idle, before the barrier that starts the timed
     * interval (new inputs, poisoned outputs, re-armed semaphores); may be NULL */
    hir_bench_run_fn prepare;
    void *prepare_ctx;
    int warmup;                  /* untimed runs first (default 5) */
    int iters;                   /* timed runs (default 50) */
    FILE *progress_out;          /* where the progress line goes (NULL: none) */
    double progress_after;       /* seconds before it appears (0: 2 s) */
    int progress;                /* 1: a progress line on rank 0 once the run took 2 s; 0: none;
                                  * -1: like 1 when stderr is a terminal */
    const char *json_path;       /* NULL: no JSON */
    const char *program;         /* for the report: the program's file name */
    const char *mode;            /* for the report: "eager" or "graph" */
} hir_bench_opts;

typedef struct hir_bench_result {
    int ranks, warmup, iters;
    const char *backend, *program, *mode;
    /* Wall time per iteration on one clock: from leaving the barrier that starts it to leaving
     * the barrier after every rank's streams drained (the largest over ranks) */
    double mean_ms, median_ms, min_ms, max_ms, stddev_ms;
    double dev_mean_ms;          /* per-rank device-event interval, largest rank (diagnostic) */
    double first_ms;             /* the first (cold) run, host wall clock, slowest rank */
    double host_us;              /* host time to issue one iteration, slowest rank (mean) */
    double host_us_min;          /* its minimum over iterations */
    double flops;                /* per rank per iteration (largest over ranks) */
    int64_t gemms, stmts;        /* per iteration, rank 0 */
    double tflops;               /* per rank: flops / mean time */
    /* ranks on one physical device share its throughput: the FLOP of every rank on a device
     * over the mean time, for the busiest device; ranks_per_device likewise */
    double tflops_per_device;
    int ranks_per_device, ndevices;
    int have_device;             /* device info below is valid (rank 0's device) */
    hir_device_info device;
    double peak_tflops;          /* device peak for the fastest GEMM dtype run; 0: unknown */
    unsigned dtypes;
    int nshapes;
    hir_bench_shape shapes[HIR_BENCH_MAX_SHAPES];
    /* --bench-bare: the bare-launch baseline, timed like the host time above (same warm-ups,
     * iterations, host interval) over a loop that replays, with cuLaunchKernel only, the kernel
     * launches one eager run issued. bare_ok 0: not measured (bare_why says why) */
    int bare_ok;
    char bare_why[160];
    double bare_host_us, bare_host_us_min;    /* per iteration, slowest rank (mean, min) */
    int64_t bare_launches;                    /* launches replayed per iteration (rank 0) */
    int64_t bare_other;                       /* device calls of the run not replayed */
    double *per_iter_ms;         /* iters entries, owned */
    /* each rank's own figures over the timed iterations (rank order, `ranks` entries, owned):
     * its wall interval, its device-event interval and its host issue time */
    struct hir_bench_rank {
        double wall_min, wall_median, wall_max;      /* ms */
        double dev_min, dev_median, dev_max;         /* ms */
        double host_us;                              /* mean */
    } *per_rank;
} hir_bench_result;

/* Collective over all ranks (boot may be NULL for a single process). Every rank gets the
 * result. A figure above the device's peak is an error (-1, every rank), never a result. */
int  hir_bench_run(hir_backend *be, hir_boot *boot, const hir_bench_opts *o,
                   hir_bench_counters *c, hir_bench_run_fn fn, void *ctx,
                   hir_bench_result *r, hir_diag *e);
void hir_bench_print(FILE *f, const hir_bench_result *r);
/* Everything that makes the figure reproducible: meta (options of the run, NULL-safe) and
 * the check verdict ("PASS", "FAIL", "not checked"). */
typedef struct hir_bench_meta {
    int streams;
    const char *protocol;        /* CUDA-IPC protocol, or NULL */
    const char *check;           /* verdict */
    const char *check_mode;
    int vary_inputs;
} hir_bench_meta;
int  hir_bench_write_json(const char *path, const hir_bench_result *r, const hir_bench_meta *m,
                          hir_diag *e);
void hir_bench_result_free(hir_bench_result *r);

/* The statement hook (hir_interp_hook, ctx a hir_bench_hook) for benchmarks and traces:
 * counts statements, GEMM FLOPs and the streams that got work, and brackets statements in
 * the trace. counters and trace may be NULL. */
#define HIR_BENCH_HOOK_DEPTH 64
struct hir_trace;
typedef struct hir_bench_hook {
    hir_bench_counters *counters;
    struct hir_trace *trace;
    int depth;
    int tokens[HIR_BENCH_HOOK_DEPTH];
    const hir_scalar *loops[HIR_BENCH_HOOK_DEPTH];   /* indices of the enclosing loops */
    int nloops;
    int capturing;               /* a CUDA graph capture is running */
    const hir_stmt *escaped;     /* first device statement on a stream outside the capture */
} hir_bench_hook;
int  hir_bench_before(void *ctx, hir_interp *it, const hir_stmt *s, hir_diag *e);
void hir_bench_after(void *ctx, hir_interp *it, const hir_stmt *s);

/* 1 on every rank when ok is 1 on every rank (0 elsewhere, -1 with e set on error). */
int hir_bench_all_ok(hir_boot *boot, int ok, hir_diag *e);

/* ---------------------------------------------------------------- a program's runs (program.c) */

/* What hir_bench_program does: hir-run's --bench, --warmup, --graph, --bench-bare, --trace,
 * --iters and --progress, as the job passes them on. */
typedef struct hir_bench_program_opts {
    int bench;                   /* timed iterations after the warm-up; 0: plain runs */
    int warmup;                  /* untimed runs before the timed ones */
    int iters;                   /* plain runs without bench (< 1: one) */
    int graph;                   /* time replays of a CUDA graph of one run */
    int bench_bare;              /* also time the bare cuLaunchKernel loop */
    const char *trace_json;      /* record the last run into this Perfetto trace, or NULL */
    int progress;                /* the timing loop's progress line (hir_bench_opts) */
    double progress_after;
    const char *program;         /* for the report: the program's file name */
    /* why a backend without graph entries cannot capture (names the backend that can) */
    const char *no_graphs;
    FILE *out;                   /* the report (NULL: stdout) */
    FILE *progress_out;          /* the progress line (NULL: none) */
} hir_bench_program_opts;

/* The runs of a program ready to run (interpreter, backend, inputs): o->bench timed iterations
 * after o->warmup (with o->graph: replays of a captured run), else o->iters plain runs; with
 * o->trace_json the last run is recorded. prepare (may be NULL) runs before each run.
 * Collective over all ranks; rank 0 prints the report and writes the trace. */
int hir_bench_program(const hir_bench_program_opts *o, hir_boot *boot, hir_interp *it,
                      hir_backend *be, const hir_view *inputs, hir_bench_run_fn prepare,
                      void *prepare_ctx, hir_bench_result *res, hir_diag *e);

#endif
