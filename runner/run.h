/* run.h — the Host IR interpreter library: runs a parsed %HostIrContainer on one rank through a
 * backend (runner/backend/backend.h), plus the job-level pieces hir-run is made of: program identity and
 * mesh checks across ranks, input generation/loading, output saving and checking against a
 * reference run on the CPU backend. Tools only parse flags and pick exit codes. */
#ifndef HIR_RUNNER_RUN_H
#define HIR_RUNNER_RUN_H

#include <stdint.h>
#include <stdio.h>

#include "dialect/hir.h"
#include "runner/backend/backend.h"
#include "runner/data/data.h"

/* ---------------------------------------------------------------- one program, one rank
 * (runner/interp.c, interp_ops.c) */

typedef struct hir_interp hir_interp;

/* A user binding of a free scalar (`--bind i0=1024`): symbol spelled as printed. */
typedef struct hir_run_binding {
    const char *name;
    int64_t value;
} hir_run_binding;

typedef struct hir_interp_config {
    int rank, size;
    int num_streams;                 /* value of numberOfStreams */
    const hir_run_binding *binds;    /* free scalars bound by the user */
    int nbinds;
    FILE *trace;                     /* per-statement trace (--verbose), or NULL */
    const char *label;               /* "main" / "check": prefixes messages of the check run */
} hir_interp_config;

/* The interpreter keeps, across runs: the allocation cache (ALLOCATE statement -> buffer),
 * streams (by object number and by evaluated index) and pending works. Every run starts with
 * an empty environment. */
int  hir_interp_create(hir_program *p, hir_backend *be, const hir_interp_config *cfg,
                       hir_interp **out, hir_error *e);
void hir_interp_destroy(hir_interp *it);
/* A statement hook, for the rooms that watch or steer a run from outside (the watchdog and
 * fault injection of runner/guard, benchmarks and traces of runner/bench, the job's progress
 * line). Before each statement the interpreter calls every hook's `before` in the order they
 * were added: 0 lets the statement run, 1 skips it silently (the later hooks are not asked and
 * no `after` follows), -1 fails the run with the message in e. After the statement (failed or
 * not) it calls every `after`. Either function may be NULL. */
typedef struct hir_interp_hook {
    int  (*before)(void *ctx, hir_interp *it, const hir_stmt *s, hir_error *e);
    void (*after)(void *ctx, hir_interp *it, const hir_stmt *s);
    void *ctx;
} hir_interp_hook;
#define HIR_INTERP_MAX_HOOKS 8
/* Append h (copied) for the runs that follow; -1 with e set when the list is full. */
int  hir_interp_add_hook(hir_interp *it, const hir_interp_hook *h, hir_error *e);
/* Remove the hook equal to h (same functions and ctx); nothing when there is none. */
void hir_interp_remove_hook(hir_interp *it, const hir_interp_hook *h);

/* What a hook may ask: the program, the backend and the stream current at this statement,
 * the configuration, the runs started so far (1 during the first), a tensor's binding (1 when
 * bound), a scalar's value, and a failure located at the current statement (returns -1 with
 * e set to "rank R: file:line:col: error: Stmt: message"). */
hir_program *hir_interp_program(const hir_interp *it);
hir_backend *hir_interp_backend(const hir_interp *it);
hir_stream  *hir_interp_stream(const hir_interp *it);
const hir_interp_config *hir_interp_cfg(const hir_interp *it);
uint64_t hir_interp_run_count(const hir_interp *it);
int hir_interp_bound(hir_interp *it, const hir_tensor *t, hir_view *v);
int hir_interp_eval(hir_interp *it, const hir_scalar *s, int64_t *v, hir_error *e);
int hir_interp_fail(hir_interp *it, hir_error *e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Bind `rank` and `numberOfStreams` as every run does, for walks before the first run. */
int hir_interp_bind_run_scalars(hir_interp *it, hir_error *e);

/* Where a tensor lives on this rank: runtime shape (reduction and stride axes dropped, DID
 * axes of size 1), the global shape (DID axes at their mesh extent) and the local block's
 * offset in it (the rank's coordinate in the mesh along each DID axis). on_rank is 0 when the
 * tensor has a mesh that does not contain the rank. */
typedef struct hir_shard {
    int ndim;
    int64_t local[HIR_MAX_DIMS], global[HIR_MAX_DIMS], offset[HIR_MAX_DIMS];
    int on_rank;
} hir_shard;
int hir_interp_shard(hir_interp *it, const hir_tensor *t, hir_shard *s, hir_error *e);
/* The order of t's runtime axes (t->nloop entries, reduction and stride axes included): its
 * logical domain, or in a 2026-syntax program its loop domain as printed (docs/runner.md). */
const hir_iterdomain *const *hir_interp_axes(const hir_interp *it, const hir_tensor *t);

/* Bind a free scalar (e.g. an input extent) for every later run. */
int hir_interp_bind_scalar(hir_interp *it, const hir_scalar *s, int64_t v, hir_error *e);

/* Run the program once. Fresh results of statements are reused by later runs, so the
 * previous run's device work must be complete (backend synchronize) before the next run starts. inputs[i] is the local data of container input i (a tensor view in
 * backend memory, or for a scalar input a 0-d view of int64 in host memory); the views must
 * stay valid for the run. Errors name the rank and the statement (file:line:col). */
int hir_interp_run(hir_interp *it, const hir_view *inputs, hir_error *e);
/* P2P messages this interpreter posted over all its runs: sent[r] sends to rank r, recvd[r]
 * receives from rank r (arrays of the job's size, owned by the interpreter). A send nobody
 * receives completes on some backends (a small MPI send is buffered), so the job compares
 * these across ranks (hir_run_job). */
void hir_interp_p2p_counts(const hir_interp *it, const int64_t **sent, const int64_t **recvd);
/* The value bound to container output i after the last run (error when unbound). */
int hir_interp_output(hir_interp *it, int i, hir_view *v, hir_error *e);

/* ---------------------------------------------------------------- a job (runner/interp_job.c) */

typedef enum hir_inputs_kind { HIR_INPUTS_GENERATED, HIR_INPUTS_DIR } hir_inputs_kind;

typedef struct hir_run_options {
    const char *program;             /* path of the program (or of a log holding it) */
    int container;                   /* --container=N: the N-th program of the log (1-based);
                                      * 0: the input must hold exactly one */
    const char *device;              /* "cpu", "cuda", or NULL for the default */
    int num_streams;                 /* default 4 */
    double timeout;                  /* seconds, default 300 */
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
    int verbose;
    /* a progress line on rank 0's stderr (ranks, iteration, elapsed), shown once a run has
     * taken 2 s and refreshed 4 times a second: 1 on, 0 off (hir-run --progress decides: by
     * default on when stderr is a terminal) */
    int progress;
    double progress_after;           /* seconds before the line appears (default 2) */
    const hir_run_binding *binds;
    int nbinds;
    const char *const *kernels;      /* "GROUP=FILE" for LaunchKernel (CUDA device) */
    int nkernels;
    /* benchmark hooks */
    int bench;                       /* timed iterations after the warm-up; 0: off */
    int warmup;
    const char *bench_json;          /* write the timings as JSON */
    const char *trace_json;          /* Chrome trace of statements */
    int graph;                       /* --graph: time replays of a CUDA graph of one run */
    FILE *out;                       /* report stream (stdout) */
    FILE *err;                       /* messages (stderr) */
    bool color;                      /* colour the diagnostics of parsing and verifying */
} hir_run_options;

void hir_run_options_init(hir_run_options *o);

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
 * The message of a failure is in e (already prefixed with the rank). */
hir_run_status hir_run_job(const hir_run_options *o, hir_boot *boot, hir_error *e);

/* ---------------------------------------------------------------- checks (runner/check.c) */

/* The world-size rule: the devices named by the program's meshes and communication teams must
 * be exactly {0, ..., size-1}; a program that names no device runs replicated on every rank.
 * Returns 0 or -1 with the reason. */
int hir_check_meshes(hir_program *p, int size, hir_error *e);
/* The node rule of backend{kind=auto} programs: every node test `( x / K ) == ( rank / K )`
 * that picks a CUDA-IPC or an NCCL P2P assumes nodes of K consecutive ranks; the job's
 * topology (real or --simulate-nodes) must be exactly that. Returns 0 or -1 with the reason. */
int hir_check_node_assignment(hir_program *p, const hir_boot *boot, hir_error *e);
/* Reports (on `err`) blocks whose CUDA-IPC send/recv order cannot complete under the protocol
 * when every rank runs the block (Get needs send before recv, Put recv before send;
 * hostir-format.md 4.6): an error for the pipeline's exchange (an IF directly in a kernel-IR
 * FOR, which all ranks run at the same iteration; counted in *fatal), a warning elsewhere.
 * Returns the number of such blocks. */
int hir_check_p2p_order(const hir_program *p, hir_p2p_protocol proto, FILE *err, int *fatal);

/* FNV-1a hash of a program's text, and the comparison of it across the world: every rank
 * learns every hash; on a difference all ranks fail with a message naming the ranks. */
uint64_t hir_check_text_hash(const char *text, size_t len);
int hir_check_same_program(hir_boot *boot, uint64_t hash, const char *what, hir_error *e);

/* Compare one output: got (the program's local data) against want (the reference's local
 * data), both host copies of dtype dt described by their shards; only the global region both
 * ranks hold is compared. *compared is the number of elements compared. */
int hir_check_compare_region(const void *got, const hir_shard *gs, const void *want,
                             const hir_shard *ws, hir_dtype dt, hir_compare_result *r,
                             int64_t *compared, hir_error *e);

#endif
