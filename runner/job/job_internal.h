/* job_internal.h — what the files of runner/job/ share and nothing outside sees: the job
 * record, the records of its phases (the program loaded, the inputs, the outputs, --vary-inputs,
 * the --verbose log) and the phases themselves. hir_run_job (job.c) is the row of phases:
 *   job_load (load.c)  job_backends, job_refusals, job_interp (setup.c)
 *   job_make_inputs (inputs.c)  job_run (run.c)  job_outputs (outputs.c)
 *   job_compare (compare.c)  job_bench_json (run.c)  and job_end (job.c) releases it all.
 * The checks across ranks are agree.c's (job.h). */
#ifndef HIR_RUNNER_JOB_INTERNAL_H
#define HIR_RUNNER_JOB_INTERNAL_H

#include <stdbool.h>
#include <stdio.h>

#include "parser/log.h"
#include "runner/bench/bench.h"
#include "runner/guard/guard.h"
#include "runner/job/job.h"
#include "runner/registry/registry.h"
#include "support/input.h"

/* A program loaded on this rank. */
typedef struct loaded {
    hir_input in;                    /* read, not mapped: the runner is a library (input.h) */
    hir_log log;                     /* the programs of text, which may be a log */
    hir_source src;
    hir_program *p;
} loaded;

/* Host and backend copies of one rank's inputs. */
typedef struct inputs {
    int n;
    hir_view *views;         /* what hir_interp_run gets */
    void **dev;              /* backend buffers (NULL for scalars / absent) */
    int64_t *scalars;
} inputs;

typedef struct outputs {
    int n;
    void **host;
    hir_shard *shard;
    hir_dtype *dtype;
    int *present;
} outputs;

/* Runs alternate between two input sets: the generated one and the same scaled by 2 (exact in
 * every float format for data in [-1, 1)), switched in place on the device before a run, so
 * the program and a captured graph keep their pointers and nothing is generated twice. The
 * previous run's outputs are filled with NaN first. A GEMM then changes by 4x, a copy by 2x:
 * neither an output left from an earlier run nor one computed from earlier inputs can pass the
 * check, which rebuilds the inputs of the last run. Untimed. */
typedef struct vary {
    hir_interp *it;
    hir_backend *be;
    hir_program *p;
    inputs *in;
    int runs, cur;               /* cur: 1 when the inputs are scaled by 2 */
} vary;

/* --verbose: each rank writes its statement trace into memory; at the end of a job that every
 * rank finished alike, rank 0 prints all of them, rank by rank in rank order, so the lines of
 * one rank stay together (docs/runner.md). A rank that failed, or a job that cannot gather,
 * prints its own lines at once (each line names its rank), so nothing is lost. */
typedef struct verbose_log {
    FILE *f;                     /* memory stream, NULL when off */
    char *buf;
    size_t len;
} verbose_log;

/* One job on one rank, phase by phase; job_end releases whatever the phases made. */
typedef struct job {
    const hir_run_options *o;
    hir_boot *boot;
    int rank, size;
    loaded main, ref;
    verbose_log vlog;
    const hir_backend_entry *dev, *refb;
    int is_cpu;                  /* the device is the reference backend */
    int located;                 /* past the device choice: failures get the rank prefix */
    hir_backend *be, *cpu;       /* cpu: the reference run's backend (be itself when it can) */
    hir_interp_config cfg;
    hir_watchdog *wd;
    hir_interp *it;
    inputs in;
    outputs out;
    vary vi;
    hir_bench_result bres;
} job;

/* ---------------------------------------------------------------- shared by the phases
 * (messages.c) */

/* Sets e to "rank R: " and fmt with a and b; returns HIR_RUN_REFUSED. */
hir_run_status job_refuse(hir_diag *e, int rank, const char *fmt, const char *a,
                          const char *b);
/* The name of a program input or output as files and messages spell it (T3, i0, ...). */
const char *job_value_name(const hir_value *v, char *buf, size_t n);

/* ---------------------------------------------------------------- load and verify (load.c) */

hir_run_status job_load(job *j, hir_diag *e);
void job_loaded_free(loaded *l);

/* ---------------------------------------------------------------- devices, refusals, the
 * interpreter (setup.c) */

hir_run_status job_backends(job *j, hir_diag *e);
hir_run_status job_refusals(job *j, hir_diag *e);
hir_run_status job_interp(job *j, hir_diag *e);
/* Stops the watchdog (if any) and removes its hook from it (it may be NULL). */
void job_watch_stop(hir_interp *it, hir_watchdog **wd);

/* ---------------------------------------------------------------- inputs, --vary-inputs
 * (inputs.c) */

/* Makes (or reads, --inputs=DIR) the inputs of program p on backend be; `names` is the program
 * whose input names are used (the main program's, also for a --check reference). */
int job_make_inputs(hir_interp *it, hir_program *p, hir_backend *be, const hir_run_options *o,
                    hir_program *names, int rank, inputs *in, hir_diag *e);
void job_inputs_free(inputs *in, hir_backend *be);
/* --inputs=DIR: extents named by symbols come from the files' shapes. */
int job_bind_dir_extents(hir_interp *it, hir_program *p, const hir_run_options *o,
                         hir_program *names, int rank, hir_diag *e);
/* Multiplies the float inputs by f in place on the backend. */
int job_scale_inputs(hir_backend *be, inputs *in, double f, hir_diag *e);
/* --vary-inputs: the step before each run (ctx a vary), a hir_bench_run_fn. */
int job_vary_prepare(void *ctx, int iter, hir_diag *e);

/* ---------------------------------------------------------------- checks across ranks
 * (agree.c; the others are job.h's) */

/* Every rank's bound extents (free symbols used as extents, from --bind or --inputs=DIR
 * shapes, per-rank files included) and scalar inputs, compared across the world before any
 * input is made: 0, 1 when the ranks disagree (every rank has the same message in e: the
 * symbol, the tensor and axis, both ranks and both values), -1 when they cannot compare. */
int job_agree_extents(job *j, hir_diag *e);

/* ---------------------------------------------------------------- the runs (run.c) */

int job_run(job *j, hir_diag *e);
double job_now_s(void);   /* CLOCK_MONOTONIC seconds (the progress line, the phase times) */
/* --bench-json after the check, with its verdict st; returns st or HIR_RUN_FAILED. */
hir_run_status job_bench_json(job *j, hir_run_status st, hir_diag *e);

/* ---------------------------------------------------------------- outputs, gathering to
 * rank 0 (outputs.c) */

hir_run_status job_outputs(job *j, hir_diag *e);
int job_fetch_outputs(hir_interp *it, hir_program *p, hir_backend *be, int rank, outputs *out,
                      hir_diag *e);
void job_outputs_free(outputs *o);
/* every rank gets every rank's `bytes` (small messages over the bootstrap) */
int job_allgather(hir_boot *boot, const void *mine, void *all, size_t bytes, hir_diag *e);
/* --verbose: rank 0 prints every rank's trace when the job ended alike everywhere */
void job_verbose_finish(verbose_log *v, hir_run_status st, hir_boot *boot, FILE *out);

/* ---------------------------------------------------------------- --check (compare.c) */

hir_run_status job_compare(job *j, hir_diag *e);

#endif
