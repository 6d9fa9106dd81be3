/* backend.h — the backend room (runner/backend/): the small table of functions an execution
 * backend implements, with the views and dtype conversions it works on (types.h, convert.h).
 * It owns the table's shape, not any backend: the CPU backend (runner/cpu/, always built, the
 * reference) and the CUDA backend (runner/cuda/, when CMake finds the toolkit) fill it, the
 * registry (runner/registry/) lists them and creates one from its entry, and the interpreter
 * walks the IR calling
 * only these entries. It may use support/ and the dialect's tables (dtypes, element-wise ops,
 * collective kinds); nothing here includes CUDA, NCCL or MPI headers. */
#ifndef HIR_BACKEND_H
#define HIR_BACKEND_H

#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>

#include "runner/backend/types.h"
#include "support/diag.h"

/* The out-of-band channel between ranks (runner/boot/boot.h): backends get it in their config and
 * use it to share NCCL unique ids and CUDA-IPC handles; the CPU backend moves its data with it. */
typedef struct hir_boot hir_boot;

/* ---------------------------------------------------------------- backend table */

typedef struct hir_backend hir_backend;   /* a backend instance; first member is `ops` */
typedef struct hir_stream hir_stream;     /* opaque, backend-specific */
typedef struct hir_work hir_work;         /* a pending communication, consumed by wait */
typedef struct hir_event hir_event;       /* a timing point */

typedef enum hir_p2p_protocol { HIR_P2P_GET = 0, HIR_P2P_PUT = 1 } hir_p2p_protocol;

typedef struct hir_backend_config {
    hir_boot *boot;
    int rank, size;
    int device;                 /* GPU index (the node-local rank % visible GPUs; the CUDA
                                   backend takes it modulo the GPUs it sees), ignored on CPU */
    double timeout;             /* seconds a wait on a peer may take before it fails */
    hir_p2p_protocol p2p_protocol;
    /* CPU backend only: GEMMs of at least this many FLOP (2·M·N·K) are not computed but
     * recorded, for a randomized check of another backend's result (0: compute all) */
    double defer_gemm_flops;
    /* CUDA backend only: P2P over the NCCL transport is host-staged (device -> host copy, the
     * bootstrap's MPI, host -> device copy) instead of going through NCCL, for ranks that share
     * a GPU (hir-run --nccl-p2p=host-staged; NCCL refuses two ranks on one device) */
    int p2p_host_staged;
    /* CUDA backend only (the CPU backend ignores it): GEMM algorithms tuned on the real buffers
     * (hir-run --gemm-tune): NULL or "off" the heuristic's first choice, "on" several timed
     * once per plan, anything else the path of a cache file of winners, read at the start and
     * appended to by rank 0 (docs/cuda-backend.md, "GEMM tuning") */
    const char *gemm_tune;
    /* CUDA backend only: 1 runs communication posted outside a group on a companion stream of
     * the device's greatest priority, joined back to the posting stream (hir-run
     * --comm-priority=high; docs/cuda-backend.md, "Communication priority"); 0 on the posting
     * stream itself (the default) */
    int comm_priority;
    /* CUDA backend only: how the CUDA-IPC transfers copy (hir-run --ipc-copy): 0 with
     * cudaMemcpyAsync (the default), 1 with cudaMemcpyBatchAsync and the
     * cudaMemcpyFlagPreferOverlapWithCompute hint, which asks the driver for a copy path that
     * leaves the SMs to the kernels running beside it (docs/cuda-backend.md, "CUDA-IPC copies") */
    int ipc_copy_overlap;
} hir_backend_config;

typedef struct hir_collective {
    hir_comm_type kind;         /* dialect/defs/comm.def */
    hir_backend_kind transport; /* dialect/defs/transport.def (backend= in the text) */
    const int *team;           /* world ranks, in the program's order */
    int team_size;
    int my_index;              /* position of this rank in team (caller guarantees >= 0) */
    int root_index;            /* team-relative root for rooted kinds, else -1 */
    hir_reduce_op op;          /* for reducing kinds (sum unless the program says otherwise) */
    const hir_view *input;     /* may be NULL where the kind allows (e.g. non-root gather) */
    const hir_view *output;    /* may be NULL likewise */
    uintptr_t stmt_id;         /* identity of the statement, for caches and messages (the
                                * interpreter's hir_stmt: hir_diag_entry.at) */
    int64_t where;             /* the statement's byte offset in the program's text: the same
                                * on every rank (agree.h); -1 when unknown */
} hir_collective;

typedef struct hir_p2p {
    int is_send;
    int peer;                  /* world rank */
    hir_backend_kind transport;
    hir_view buf;              /* whole buffer to send / receive into */
    uintptr_t stmt_id;         /* identity of the P2PCommunication statement */
} hir_p2p;

/* A GEMM: out[b] = A[b] · op(B[b]) (+ bias), row-major 2-D matrices with unit column stride.
 *   a:   [M, K] (shape[0]=M, shape[1]=K, stride[1]=1, stride[0]=lda >= K)
 *   b:   [K, N] if !b_trans (matmul), [N, K] if b_trans (linear, PyTorch weight layout)
 *   out: [M, N]
 *   bias: NULL or a 1-D [N] view, broadcast over rows (added in the epilogue)
 * batch >= 1 matrices, at element offsets batch_stride_{a,b,out} apart (0 = broadcast).
 * Storage dtypes are those of the views; accumulation is always fp32 (fp64 for double). */
typedef struct hir_gemm {
    hir_view a, b, out;
    const hir_view *bias;
    int b_trans;
    int64_t batch;
    int64_t batch_stride_a, batch_stride_b, batch_stride_out;
} hir_gemm;

/* MoE token routing (hostir-2026.md §3.11): top-1, over all ranks of the job; expert e lives
 * on rank e / (num_experts / size). */
typedef struct hir_moe_dispatch {
    hir_view x;                 /* [T, H] this rank's tokens */
    hir_view topk_idx;          /* [T, 1] or [T]: integer expert ids in [0, num_experts) */
    hir_view topk_weights;      /* [T, 1] or [T] */
    int64_t num_experts;        /* a positive multiple of the job's size */
    hir_backend_kind transport; /* the statement's backend= (the CPU backend ignores it) */
} hir_moe_dispatch;

/* What Dispatch returns. Every data pointer is a fresh allocation of the backend (its alloc),
 * owned by the caller from then on (its free), also when it is empty. R = tokens received. */
typedef struct hir_moe_routed {
    hir_view x;                 /* [R, H] x's dtype: received tokens, by sender rank, each
                                   sender's tokens in ascending expert order (stable) */
    hir_view topk_idx;          /* [R, 1] int64: their expert ids */
    hir_view topk_weights;      /* [R, 1] topk_weights' dtype */
    hir_view src_idx;           /* [R] int64: each token's row on its sender */
    hir_view send_counts;       /* [size] int64: tokens this rank sent to each rank */
    hir_view recv_counts;       /* [size] int64: tokens this rank received from each rank */
} hir_moe_routed;

/* Combine: every token goes back to its sender, which writes it to row src_idx of out. */
typedef struct hir_moe_combine {
    hir_view x;                 /* [R, H] */
    hir_view src_idx;           /* [R] int64, as the Dispatch returned it */
    hir_view send_counts, recv_counts;   /* the Dispatch's */
    hir_view out;               /* [T, H], x's dtype */
    hir_backend_kind transport; /* the statement's backend= (the CPU backend ignores it) */
} hir_moe_combine;

/* Scaled dot-product attention (hostir-2026.md §3.13, docs/runner.md "sdpa"): for every (n, h),
 * out = softmax(q·kᵀ·scale + bias, masked) · v, with float accumulation, and the float
 * log-sum-exp of each softmax row. The interpreter has checked the shapes and dropout_p = 0.
 *   q [N, H, L, E], k [N, H, S, E], v [N, H, S, Ev], out [N, H, L, Ev] (any strides)
 *   bias, mask: 4-d, each extent that of [N, H, L, S] or 1 (broadcast); a mask element 0
 *   masks the score out; data NULL when absent
 *   causal: the top-left causal mask (score (i, j) with j > i is masked out)
 *   lse: [N, H, L] (float), data NULL when the program does not name it */
typedef struct hir_sdpa {
    hir_view q, k, v, bias, mask, out, lse;
    int has_bias, has_mask, causal;
    double scale;
} hir_sdpa;

/* What a benchmark records about the device a backend runs on, and its physical limits. */
typedef struct hir_device_info {
    char name[96];              /* "NVIDIA H200" */
    char uuid[48];              /* identity of the physical device (ranks sharing it agree) */
    int sm_count, cc_major, cc_minor;
    int clock_khz;              /* peak SM clock */
    int mem_clock_khz;
    int driver_version, runtime_version, nccl_version, cublaslt_version;   /* 0: unknown */
    /* dense peak of the device in TFLOP/s for GEMMs of 16-bit floats (tensor cores), float
     * (no TF32) and double: SMs x peak clock x FLOP per clock per SM of the architecture;
     * 0 when the architecture is unknown */
    double peak_tflops_16, peak_tflops_32, peak_tflops_64;
    /* GEMM tuning so far (hir_backend_config.gemm_tune; all 0 when off): plans tuned,
     * candidates timed, the time tuning took; winners taken from the cache file, lines of it
     * ignored as malformed (gemm_tune_note: where the first one is and why, else empty) */
    int gemm_tune_plans, gemm_tune_candidates;
    double gemm_tune_ms;
    int gemm_tune_loaded, gemm_tune_ignored;
    char gemm_tune_note[200];
} hir_device_info;

/* What a backend is, beyond what its groups say (hir_backend_ops.caps): properties of the
 * device or transport that no entry expresses. Whether a backend can capture graphs, run user
 * kernels, defer GEMMs and so on is not a cap: its group pointer is NULL when it cannot. */
enum {
    HIR_CAP_HOST_MEMORY = 1u << 0,   /* its buffers are host memory (limits count them per node) */
    HIR_CAP_NCCL = 1u << 1,          /* it runs communication whose transport is NCCL */
};

/* A captured run of a program that the backend can replay (hir_graph_ops below). */
typedef struct hir_graph hir_graph;
typedef struct hir_ew_plan hir_ew_plan;   /* a pre-resolved element-wise launch (backend's) */

struct hir_deferred_gemm;

/* The optional groups. A backend offers a group whole or not at all: its pointer in the table
 * is NULL when it does not, and every entry of a group it offers is set. Callers test the
 * group pointer, never an entry, and never the backend's name. */

/* Graphs, for timing replays of one run (hir-run --graph; without them bench/ runs eagerly).
 * begin starts capturing the work queued on the main stream (other streams join through
 * stream waits); end with ok = 0 abandons a capture after a failed run; capturing says
 * whether work queued on s is recorded rather than run; rearm runs before each replay, with
 * every rank idle, to reset what a replay must find fresh. */
typedef struct hir_graph_ops {
    int  (*begin)(hir_backend *be, hir_diag *e);
    int  (*end)(hir_backend *be, int ok, hir_graph **out, hir_diag *e);
    int  (*launch)(hir_backend *be, hir_graph *g, hir_diag *e);
    void (*destroy)(hir_backend *be, hir_graph *g);
    int  (*capturing)(hir_backend *be, hir_stream *s);
    int  (*rearm)(hir_backend *be, hir_diag *e);
} hir_graph_ops;

/* User kernels for LaunchKernel (hir-run --kernel; without them the statement is refused).
 * load reads FILE for kernel group `group` (replacing an earlier one); launch queues group
 * `group` on stream s with the raw data of its input and output views. */
typedef struct hir_kernel_ops {
    int  (*load)(hir_backend *be, int group, const char *path, hir_diag *e);
    int  (*launch)(hir_backend *be, hir_stream *s, int group, const hir_view *const *inputs,
                   int ninputs, const hir_view *const *outputs, int noutputs, hir_diag *e);
} hir_kernel_ops;

/* Pre-resolved element-wise operations (without them the interpreter calls unary/binary/
 * ternary every time). resolve does once, for these exact views and scalars, everything unary
 * (nin 1), binary (2) or ternary (3) with operator op would do before queuing work (checks,
 * kernel lookup, argument packing, launch dimensions); launch queues that work on s,
 * recomputing nothing. A plan stays valid as long as the backend lives; it is only correct
 * for the views and scalars it was resolved with, which the caller must compare before
 * reusing it. */
typedef struct hir_plan_ops {
    int  (*resolve)(hir_backend *be, int nin, int op, const hir_view *out,
                    const hir_operand *const *ins, hir_ew_plan **plan, hir_diag *e);
    int  (*launch)(hir_backend *be, hir_stream *s, const hir_ew_plan *plan, hir_diag *e);
    void (*free)(hir_backend *be, hir_ew_plan *plan);
} hir_plan_ops;

/* Randomized checking (without it the backend defers no GEMM; see hir_deferred_gemm below).
 * take_deferred hands over the GEMMs still deferred (a malloc'd array for the caller to free);
 * from then on the backend forgets them, and their operand memory stays valid until the
 * backend is destroyed. gemm_now computes a deferred GEMM after all (exactly, into its output
 * region). */
typedef struct hir_check_ops {
    int  (*take_deferred)(hir_backend *be, struct hir_deferred_gemm **list, int *n, hir_diag *e);
    int  (*gemm_now)(hir_backend *be, const struct hir_deferred_gemm *d, hir_diag *e);
} hir_check_ops;

/* What a benchmark asks of a device (without it: a host backend, no device peak known, and no
 * bare-launch baseline for hir-run --bench-bare). launch_record(1) forgets the previous record
 * and records every kernel launch the backend issues from then on (function, grid, block,
 * shared bytes, stream, argument bytes); launch_record(0) stops. launch_replay issues exactly
 * the recorded launches again and nothing else, and says how many, and how many device calls
 * of the recorded run were not kernel launches (GEMMs, copies, communication: not in the
 * replay). It fails when the recorded run freed device memory (its launches could touch freed
 * memory). device_info describes the device and its limits. */
typedef struct hir_profile_ops {
    int  (*launch_record)(hir_backend *be, int on, hir_diag *e);
    int  (*launch_replay)(hir_backend *be, int64_t *launches, int64_t *other, hir_diag *e);
    int  (*device_info)(hir_backend *be, hir_device_info *d, hir_diag *e);
} hir_profile_ops;

/* The model statements (without them the interpreter refuses the statement): MoE
 * Dispatch/Combine, collective over every rank of the job, and sdpa, queued on stream s like
 * the other compute. */
typedef struct hir_model_ops {
    int  (*moe_dispatch)(hir_backend *be, hir_stream *s, const hir_moe_dispatch *d,
                         hir_moe_routed *r, hir_diag *e);
    int  (*moe_combine)(hir_backend *be, hir_stream *s, const hir_moe_combine *c, hir_diag *e);
    int  (*sdpa)(hir_backend *be, hir_stream *s, const hir_sdpa *a, hir_diag *e);
} hir_model_ops;

/* The table. Every entry of the core (everything up to the groups) is set: a backend that
 * cannot do an operation reports it (`backend 'x' cannot ...`) instead of leaving it NULL. */
typedef struct hir_backend_ops {
    const char *name;                       /* "cpu", "cuda" */
    unsigned caps;                          /* HIR_CAP_* */
    void (*destroy)(hir_backend *be);

    /* memory: plain device (or host) allocations, zero-filled only when asked */
    int  (*alloc)(hir_backend *be, size_t bytes, void **ptr, hir_diag *e);
    void (*free)(hir_backend *be, void *ptr);
    /* bytes the backend could still allocate (for refusing oversize programs up front) */
    int  (*mem_available)(hir_backend *be, size_t *bytes, hir_diag *e);
    /* synchronous host<->backend transfer of a contiguous byte range */
    int  (*upload)(hir_backend *be, void *dst, const void *host_src, size_t bytes, hir_diag *e);
    int  (*download)(hir_backend *be, void *host_dst, const void *src, size_t bytes, hir_diag *e);

    /* streams: key >= 0 for indexed streams, created on first use and kept for the backend's
     * life; stream_main is the stream current at program start (the "default" stream). */
    hir_stream *(*stream_main)(hir_backend *be);
    int  (*stream_get)(hir_backend *be, int64_t key, hir_stream **s, hir_diag *e);
    /* `waiter` waits (device-side, host does not block) for the work queued so far on `on` */
    int  (*stream_wait)(hir_backend *be, hir_stream *waiter, hir_stream *on, hir_diag *e);
    /* host waits for everything queued on every stream; honours the timeout */
    int  (*synchronize)(hir_backend *be, hir_diag *e);

    /* events, for benchmarks and traces */
    int  (*event_create)(hir_backend *be, hir_event **ev, hir_diag *e);
    int  (*event_record)(hir_backend *be, hir_event *ev, hir_stream *s, hir_diag *e);
    int  (*event_elapsed_ms)(hir_backend *be, hir_event *from, hir_event *to, double *ms,
                             hir_diag *e);
    void (*event_destroy)(hir_backend *be, hir_event *ev);

    /* compute, queued on stream s. Views of one call have equal ndim; broadcasting is expressed
     * with stride 0 by the caller, so backends see out-shaped operands only. */
    int  (*fill)(hir_backend *be, hir_stream *s, const hir_view *out, double value, hir_diag *e);
    /* strided copy with element-type conversion (Set, casts); dst and src have equal shapes */
    int  (*copy)(hir_backend *be, hir_stream *s, const hir_view *dst, const hir_view *src,
                 hir_diag *e);
    int  (*gemm)(hir_backend *be, hir_stream *s, const hir_gemm *g, hir_diag *e);
    /* out = op(a[, b[, c]]); operands are views or scalars (see hir_operand) */
    int  (*unary)(hir_backend *be, hir_stream *s, hir_unary_op op, const hir_view *out,
                  const hir_operand *a, hir_diag *e);
    int  (*binary)(hir_backend *be, hir_stream *s, hir_binary_op op, const hir_view *out,
                   const hir_operand *a, const hir_operand *b, hir_diag *e);
    int  (*ternary)(hir_backend *be, hir_stream *s, hir_ternary_op op, const hir_view *out,
                    const hir_operand *a, const hir_operand *b, const hir_operand *c,
                    hir_diag *e);
    /* out has in's ndim with shape 1 on every reduced axis (reduce_mask bit i = axis i) */
    int  (*reduce)(hir_backend *be, hir_stream *s, hir_reduce_op op, const hir_view *out,
                   const hir_view *in, uint32_t reduce_mask, hir_diag *e);

    /* communication. Posting returns a work item that a later wait consumes. */
    int  (*collective)(hir_backend *be, hir_stream *s, const hir_collective *c, hir_work **w,
                       hir_diag *e);
    /* Optional (NULL: teams are made on first use): make the communicator of team (world
     * ranks, this rank among them) now. The interpreter calls it when it is made, for every
     * team of the program's Communications that this rank is in, in program order — the same
     * order on every rank, so the creations cannot wait for each other in a cycle, as they
     * could in the middle of a run whose ranks post overlapping teams in different orders. */
    int  (*team_prepare)(hir_backend *be, const int *team, int n, hir_diag *e);
    /* between group_begin and group_end, p2p posts are coalesced; group_end returns one work */
    int  (*group_begin)(hir_backend *be, hir_diag *e);
    int  (*group_end)(hir_backend *be, hir_stream *s, hir_work **w, hir_diag *e);
    /* *w is NULL when posted inside a group */
    int  (*p2p_post)(hir_backend *be, hir_stream *s, const hir_p2p *p, hir_work **w,
                     hir_diag *e);
    /* ShareMemHandles: make sure every CUDA-transport P2P in the list has its handles,
     * exchanging only with the peers involved; cached by (stmt_id, peer, buffer identity). */
    int  (*share_handles)(hir_backend *be, const hir_p2p *list, int n, hir_diag *e);
    /* make stream s wait for w's completion (never blocks the host, except on the CPU backend
     * where everything is synchronous); consumes w */
    int  (*wait)(hir_backend *be, hir_stream *s, hir_work *w, hir_diag *e);
    /* drop a work item without waiting (error paths) */
    void (*work_release)(hir_backend *be, hir_work *w);
    /* Ordered teardown after a successful job, collective with every peer this rank shared
     * memory with: stop using peer memory, agree with each peer, then free the memory peers
     * mapped (destroy frees nothing a peer may still map). A backend that maps no peer memory
     * has nothing to do and returns 0. */
    int  (*release_peers)(hir_backend *be, hir_diag *e);

    /* the optional groups, NULL when the backend has none */
    const hir_graph_ops *graph;
    const hir_kernel_ops *kernels;
    const hir_plan_ops *plans;
    const hir_check_ops *check;
    const hir_profile_ops *profile;
    const hir_model_ops *model;
} hir_backend_ops;

struct hir_backend {
    const hir_backend_ops *ops;
    hir_backend_config cfg;
};

/* Backends are created through the registry (runner/registry/registry.h). */
/* ---------------------------------------------------------------- randomized checking
 * (CPU backend: runner/cpu/cpu_lazy.c, cpu_verify.c) */

/* A GEMM the CPU backend recorded instead of computing (cfg.defer_gemm_flops): its operands
 * and output region in that backend's memory; g.bias is NULL, the bias is in `bias`. */
typedef struct hir_deferred_gemm {
    hir_gemm g;
    hir_view bias;
    int has_bias;
} hir_deferred_gemm;

/* The GEMMs still deferred are reached through the backend table's check group
 * (ops->check->take_deferred, ops->check->gemm_now); a backend without it defers nothing. */

#endif
