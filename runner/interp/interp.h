/* interp.h — the interpreter room (runner/interp/): runs one parsed %HostIrContainer on one
 * rank through a backend table (runner/backend/backend.h). It owns the run's environment
 * (tensor and scalar bindings, streams, pending communication, the allocation and result
 * caches), control flow and every statement's semantics, and a statement hook list through
 * which other rooms (guard/, bench/, the job) watch or steer a run without seeing its insides
 * (interp_internal.h never leaves this folder). It may use the backend table, the dialect and
 * support/; it names no backend. */
#ifndef HIR_RUNNER_INTERP_H
#define HIR_RUNNER_INTERP_H

#include <stdint.h>
#include <stdio.h>

#include "dialect/hir.h"
#include "runner/backend/backend.h"

/* ---------------------------------------------------------------- one program, one rank
 * (interp.c, interp_ops.c, interp_sdpa.c) */

typedef struct hir_interp hir_interp;

/* A user binding of a free scalar (`--bind i0=1024`): symbol spelled as printed. */
typedef struct hir_run_binding {
    const char *name;
    int64_t value;
} hir_run_binding;

/* How a caller spells a binding and the stream count in the messages about them, so that an
 * error is worded at its cause for whoever made the call: hir-run says `--bind NAME` and
 * `--streams=N` (the terms when none are given), the C API and the Python package
 * `binding 'NAME'` and `num_streams=N` (api/run.c). A binding's name is printed between
 * bind_open and bind_close. */
typedef struct hir_interp_terms {
    const char *bind_open, *bind_close;   /* "--bind " ""  /  "binding '" "'" */
    const char *binds;                    /* the bindings as a whole: "--bind" / "bindings" */
    const char *streams;                  /* how to set the stream count: "--streams=N" */
} hir_interp_terms;
/* terms, or hir-run's when terms is NULL */
const hir_interp_terms *hir_interp_terms_or_default(const hir_interp_terms *terms);

/* numberOfStreams when nobody chose one: hir-run's --streams, the C API's num_streams and the
 * interpreter's configuration (num_streams <= 0) all default to it. */
#define HIR_INTERP_DEFAULT_STREAMS 4
/* The bound on a loop nest's work when nobody chose one (hir-run --max-loop-work, the
 * configuration's max_loop_work <= 0): 2^30 iterations of the innermost loop in all. */
#define HIR_INTERP_DEFAULT_LOOP_WORK (INT64_C(1) << 30)

typedef struct hir_interp_config {
    int rank, size;
    int num_streams;                 /* value of numberOfStreams */
    const hir_run_binding *binds;    /* free scalars bound by the user */
    int nbinds;
    FILE *trace;                     /* per-statement trace (--verbose), or NULL */
    const char *label;               /* "main" / "check": prefixes messages of the check run */
    int no_resolve;                  /* 1: never keep pre-resolved element-wise launches
                                      * (hir-run --no-preresolve, to measure what they save) */
    const hir_interp_terms *terms;   /* the wording of binding errors; NULL: hir-run's */
    int64_t max_loop_work;           /* a loop whose trip count times those of the loops around
                                      * it exceeds this is refused before its first iteration;
                                      * <= 0: HIR_INTERP_DEFAULT_LOOP_WORK */
} hir_interp_config;

/* The interpreter keeps, across runs: the allocation cache (ALLOCATE statement -> buffer),
 * streams (by object number and by evaluated index) and pending works. Every run starts with
 * an empty environment. */
int  hir_interp_create(hir_program *p, hir_backend *be, const hir_interp_config *cfg,
                       hir_interp **out, hir_diag *e);
void hir_interp_destroy(hir_interp *it);
/* A statement hook, for the rooms that watch or steer a run from outside (the watchdog and
 * fault injection of runner/guard, benchmarks and traces of runner/bench, the job's progress
 * line). Before each statement the interpreter calls every hook's `before` in the order they
 * were added: 0 lets the statement run, 1 skips it silently (the later hooks are not asked and
 * no `after` follows), -1 fails the run with the message in e. After the statement (failed or
 * not) it calls every `after`. Either function may be NULL. */
typedef struct hir_interp_hook {
    int  (*before)(void *ctx, hir_interp *it, const hir_stmt *s, hir_diag *e);
    void (*after)(void *ctx, hir_interp *it, const hir_stmt *s);
    void *ctx;
} hir_interp_hook;
#define HIR_INTERP_MAX_HOOKS 8
/* Append h (copied) for the runs that follow; -1 with e set when the list is full. */
int  hir_interp_add_hook(hir_interp *it, const hir_interp_hook *h, hir_diag *e);
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
int hir_interp_eval(hir_interp *it, const hir_scalar *s, int64_t *v, hir_diag *e);
/* An error of the statement being run (hooks): recorded in e with the statement's location,
 * the rank as its origin and the statement in front of the message; returns -1. */
int hir_interp_fail(hir_interp *it, hir_diag *e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The same for the last error already in e (a call that failed, a message to keep as the
 * callee wrote it); an error already located stays as it is. Returns -1. */
int hir_interp_locate(hir_interp *it, hir_diag *e);
/* Bind `rank` and `numberOfStreams` as every run does, for walks before the first run. */
int hir_interp_bind_run_scalars(hir_interp *it, hir_diag *e);

/* Where a tensor lives on this rank, in its logical shape (the view's axes, dialect/shape.c):
 * runtime shape (reduction and stride axes dropped; an unsplit device axis of size 1, a split
 * one at its local extent), the global shape (device axes at their mesh extent, a split axis
 * at its logical extent) and the local block's offset in it (along a device axis: the rank's
 * coordinate in the mesh times the extent of what follows the device part, i.e. the inner
 * extent). on_rank is 0 when the tensor has a mesh that does not contain the rank. A
 * stream-split axis counts whole here (a tensor outside a stream loop).
 *
 * A split whose device part is not its outermost part (a stream split, then its inner split by
 * device: [istreamIdx*ideviceIdx.x*iS]) gives a rank one block of `block` elements in every
 * `period` of the axis (block = the extent inside the device part, period = the device part's
 * extent times block), starting at `offset`: local index l is global index
 * (l / block) * period + offset + l % block (hir_shard_global). block 0: one block, local index
 * l is offset + l. */
typedef struct hir_shard {
    int ndim;
    int64_t local[HIR_MAX_DIMS], global[HIR_MAX_DIMS], offset[HIR_MAX_DIMS];
    int64_t block[HIR_MAX_DIMS], period[HIR_MAX_DIMS];
    int on_rank;
} hir_shard;
/* Along dimension d: the global index of local index l, and the local index of global index g
 * (-1 when this rank does not hold it). */
static inline int64_t hir_shard_global(const hir_shard *s, int d, int64_t l)
{
    if (!s->block[d])
        return s->offset[d] + l;
    return l / s->block[d] * s->period[d] + s->offset[d] + l % s->block[d];
}
static inline int64_t hir_shard_local(const hir_shard *s, int d, int64_t g)
{
    if (!s->block[d])
        return g >= s->offset[d] && g < s->offset[d] + s->local[d] ? g - s->offset[d] : -1;
    int64_t q = g / s->period[d], r = g % s->period[d] - s->offset[d];
    int64_t l = q * s->block[d] + r;
    return r >= 0 && r < s->block[d] && l < s->local[d] ? l : -1;
}
int hir_interp_shard(hir_interp *it, const hir_tensor *t, hir_shard *s, hir_diag *e);
/* The loop IterDomains of t in logical order (t->nloop entries, t->shape.ids). */
const hir_iterdomain *const *hir_interp_axes(const hir_interp *it, const hir_tensor *t);
/* The view axes of t that are runtime dimensions (reductions dropped), in order, into ax
 * (HIR_MAX_DIMS entries); returns their number, -1 when there are more. */
int hir_interp_rt_axes(const hir_tensor *t, hir_shape_axis *ax);

/* Bind a free scalar (e.g. an input extent) for every later run. */
int hir_interp_bind_scalar(hir_interp *it, const hir_scalar *s, int64_t v, hir_diag *e);

/* Run the program once. Fresh results of statements are reused by later runs, so the
 * previous run's device work must be complete (backend synchronize) before the next run starts. inputs[i] is the local data of container input i (a tensor view in
 * backend memory, or for a scalar input a 0-d view of int64 in host memory); the views must
 * stay valid for the run. Errors name the rank and the statement (file:line:col). */
int hir_interp_run(hir_interp *it, const hir_view *inputs, hir_diag *e);
/* P2P messages this interpreter posted over all its runs: sent[r] sends to rank r, recvd[r]
 * receives from rank r (arrays of the job's size, owned by the interpreter). A send nobody
 * receives completes on some backends (a small MPI send is buffered), so the job compares
 * these across ranks (hir_run_job). */
void hir_interp_p2p_counts(const hir_interp *it, const int64_t **sent, const int64_t **recvd);
/* The value bound to container output i after the last run (error when unbound). */
int hir_interp_output(hir_interp *it, int i, hir_view *v, hir_diag *e);

#endif
