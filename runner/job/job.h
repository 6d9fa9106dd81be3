/* job.h — the job room (runner/job/): what hir-run does on one rank. It owns the phases of a
 * job (load and verify the program, agree on it across ranks and check its meshes, make or
 * read inputs, run it, fetch and save outputs, compare them with a reference run on the
 * reference backend), one file per phase (job_internal.h lists them), and the checks across
 * ranks of agree.c (meshes, node assignment, P2P order, the program hash). It is the top of
 * the runner: it may use every room below it (bench, guard, data, interp, registry, boot,
 * backend), the parser, the passes, the dialect and support/, and names no backend (the
 * registry does). Tools only parse flags and pick exit codes. */
#ifndef HIR_RUNNER_JOB_H
#define HIR_RUNNER_JOB_H

#include <stdint.h>
#include <stdio.h>

#include "dialect/hir.h"
#include "runner/backend/backend.h"
#include "runner/bench/bench.h"
#include "runner/boot/boot.h"
#include "runner/data/data.h"
#include "runner/interp/interp.h"

/* ---------------------------------------------------------------- a job (runner/job/job.c) */

typedef enum hir_inputs_kind { HIR_INPUTS_GENERATED, HIR_INPUTS_DIR } hir_inputs_kind;

/* the phases of a job, as hir_run_report.phase_s counts them */
enum { HIR_RUN_PHASE_SETUP, HIR_RUN_PHASE_INPUTS, HIR_RUN_PHASE_RUNS, HIR_RUN_PHASE_OUTPUTS,
       HIR_RUN_PHASE_CHECK, HIR_RUN_PHASES };

/* What a job that ended well did, for the tool's summary line (hir-run prints it on rank 0). */
typedef struct hir_run_report {
    const char *backend;             /* the device's backend ("cpu", "cuda") */
    int is_host;                     /* the backend runs on the host (no GPU) */
    int outputs;                     /* the program's outputs */
    int checked;                     /* outputs compared with the reference run (--check) */
    /* this rank's wall seconds in each phase of the job, in order: setup (load, verify, backends,
     * interpreter), inputs, runs (warm-ups and timed runs with --bench), outputs (fetch, agree,
     * save), check (the reference run and the comparison; 0 without --check) */
    double phase_s[HIR_RUN_PHASES];
} hir_run_report;

typedef struct hir_run_options {
    const char *program;             /* path of the program (or of a log holding it) */
    int container;                   /* --container=N: the N-th program of the log (1-based);
                                      * 0: the input must hold exactly one */
    const char *device;              /* "cpu", "cuda", or NULL for the default */
    int num_streams;                 /* default HIR_INTERP_DEFAULT_STREAMS (4) */
    double timeout;                  /* seconds, default 300 */
    int64_t max_loop_work;           /* bound on a loop nest's trips (<= 0: the interpreter's
                                      * default, HIR_INTERP_DEFAULT_LOOP_WORK) */
    uint64_t seed;
    hir_inputs_kind inputs;
    hir_data_kind data;              /* for HIR_INPUTS_GENERATED */
    const char *inputs_dir;          /* for HIR_INPUTS_DIR */
    const char *save_dir;            /* --save-outputs, or NULL */
    int raw_bf16;
    int check;                       /* --check given */
    const char *check_ref;           /* REF program, NULL: the program itself */
    /* how the reference treats GEMMs: AUTO computes small ones and verifies those of at least
     * 2^30 FLOP by Freivalds' randomized check; FULL computes all; RANDOMIZED verifies all */
    enum { HIR_CHECK_AUTO = 0, HIR_CHECK_FULL, HIR_CHECK_RANDOMIZED } check_mode;
    int check_vectors;               /* random vectors per randomized check (default 2) */
    int vary_inputs;                 /* alternate two input sets run to run, poison outputs */
    int iters;                       /* >= 1 */
    hir_p2p_protocol p2p_protocol;
    int p2p_host_staged;             /* --nccl-p2p=host-staged (CUDA backend) */
    /* --gemm-tune: NULL or "off", "on", or a cache file (hir_backend_config.gemm_tune; checked
     * by hir_gemm_tune_check) */
    const char *gemm_tune;
    int comm_priority;               /* --comm-priority=high: 1 (hir_backend_config.comm_priority) */
    int ipc_copy_overlap;            /* --ipc-copy=overlap: 1 (hir_backend_config's) */
    int verbose;
    int quiet;                       /* --quiet: no summary, no note of ranks sharing a GPU */
    /* a progress line on rank 0's diagnostic stream, stderr (ranks, iteration, elapsed), shown once a run has
     * taken 2 s and refreshed 4 times a second: 1 on, 0 off (hir-run --progress decides: by
     * default on when stderr is a terminal) */
    int progress;
    double progress_after;           /* seconds before the line appears (default 2) */
    const hir_run_binding *binds;
    int nbinds;
    const hir_interp_terms *terms;   /* how messages spell a binding (NULL: --bind NAME) */
    const char *const *kernels;      /* "GROUP=FILE" for LaunchKernel (CUDA device) */
    int nkernels;
    /* benchmark hooks */
    int bench;                       /* timed iterations after the warm-up; 0: off */
    int warmup;
    const char *bench_json;          /* write the timings as JSON */
    const char *trace_json;          /* Chrome trace of statements */
    int graph;                       /* --graph: time replays of a CUDA graph of one run */
    int no_resolve;                  /* --no-preresolve: element-wise statements resolved every time */
    int bench_bare;                  /* --bench-bare: also time the bare cuLaunchKernel loop */
    FILE *out;                       /* report stream (stdout): the timings, the check's
                                      * lines; diagnostics, the --verbose trace and the progress
                                      * line go to the job's hir_diag and its stream */
    bool color;                      /* colour the diagnostics of parsing and verifying */
    hir_run_report *report;          /* filled in when the job ends well, or NULL */
} hir_run_options;

void hir_run_options_init(hir_run_options *o);

/* Checks a --gemm-tune value: off, on, or a cache file, spelled as a path with a '/' or a
 * '.' in it (./tune.txt, gemm.cache) so that a misspelt word is not taken for a file name.
 * 0, or -1 with a message naming the option. */
int hir_gemm_tune_check(const char *v, hir_diag *e);

/* Ranks sharing one GPU (shared_gpu.c). hir_mps_detect: 1 when a CUDA MPS control daemon
 * accepts a connection on its socket, CUDA_MPS_PIPE_DIRECTORY/control (default
 * /tmp/nvidia-mps/control), where the CUDA driver looks for it; 0 otherwise (no socket, or one
 * left by a daemon that is gone). hir_shared_gpu_note: the note rank 0 prints (--bench or
 * --verbose) when ranks_per_device > 1 ranks are time-sliced on one GPU without MPS, written
 * into buf; NULL when no note is due (one rank a GPU, or MPS detected). */
int hir_mps_detect(void);
const char *hir_shared_gpu_note(int ranks_per_device, int mps_detected, char *buf, size_t n);

/* Outcome of hir_run_job, for the tool to turn into an exit code. */
typedef enum hir_run_status {
    HIR_RUN_OK = 0,
    HIR_RUN_CHECK_FAILED = 1,        /* ran, results differ from the reference */
    HIR_RUN_REFUSED = 2,             /* every rank stopped the same way (bad program, mesh,
                                        ranks disagree, bad options): a clean exit */
    HIR_RUN_FAILED = 3,              /* this rank failed; peers may be waiting on it: abort */
} hir_run_status;

/* Run the whole job on this rank: read, verify and compare the program across ranks, check
 * its meshes against the world, make inputs, run it --iters times, save and check outputs.
 * Its diagnostics go to e (the caller sets its prefix, stream or sink): a failure's error,
 * with the rank as its origin and the statement's location, is printed (flushed) by every
 * rank that failed, a refusal by rank 0 alone, before hir_run_job returns; what is not
 * printed is discarded (hir_diag_discard). */
hir_run_status hir_run_job(const hir_run_options *o, hir_boot *boot, hir_diag *e);

/* ---------------------------------------------------------------- checks across ranks
 * (runner/job/agree.c) */

/* The world-size rule: the devices named by the program's meshes and communication teams must
 * be exactly {0, ..., size-1}; a program that names no device runs replicated on every rank.
 * Returns 0 or -1 with the reason. */
int hir_check_meshes(hir_program *p, int size, hir_diag *e);
/* The node rule of backend{kind=auto} programs: every node test `( x / K ) == ( rank / K )`
 * that picks a CUDA-IPC or an NCCL P2P assumes nodes of K consecutive ranks; the job's
 * topology (real or --simulate-nodes) must be exactly that. Returns 0 or -1 with the reason. */
int hir_check_node_assignment(hir_program *p, const hir_boot *boot, hir_diag *e);
/* Reports (into e, located at the blocking statement; NULL: nothing) blocks whose CUDA-IPC send/recv order cannot complete under the protocol
 * when every rank runs the block (Get needs send before recv, Put recv before send;
 * hostir-format.md 4.6): an error for the pipeline's exchange (an IF directly in a kernel-IR
 * FOR, which all ranks run at the same iteration; counted in *fatal), a warning elsewhere.
 * Returns the number of such blocks. */
int hir_check_p2p_order(const hir_program *p, hir_p2p_protocol proto, hir_diag *e, int *fatal);
/* Collectives of overlapping teams that wait for each other in a cycle (team_order.c): what
 * every rank of a job of `size` ranks posts and waits for is worked out from the program
 * (rank, numberOfStreams, o's --bind values, loop indices); the k-th collective of a team on
 * one member meets the k-th on the others. chain 1: the backend (titled `title`) runs a rank's
 * collectives one after another, so each post waits for the one before; chain 0: posts never
 * wait, a Wait does. A cycle gives one located error (notes at the cycle's other collectives)
 * and 1; 0 when there is none or what some rank posts cannot be told before the run; -1 (with
 * the error) when out of memory. The same on every rank. */
int hir_check_team_order(const hir_program *p, const hir_run_options *o, int size,
                         const char *title, int chain, hir_diag *e);

/* FNV-1a hash of a program's text, and the comparison of it across the world: every rank
 * learns every hash; on a difference all ranks fail with a message naming the ranks. */
uint64_t hir_check_text_hash(const char *text, size_t len);
int hir_check_same_program(hir_boot *boot, uint64_t hash, const char *what, hir_diag *e);

#endif
