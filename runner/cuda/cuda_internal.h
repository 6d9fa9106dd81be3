/* cuda_internal.h — state shared by the files of the CUDA backend (runner/cuda/): the backend
 * struct, stream/work/event objects, the caches, and the one check macro that wraps every
 * CUDA / cuBLASLt / NCCL / NVRTC / nvJitLink call. Never included outside runner/cuda/.
 * It does not include <nccl.h>: NCCL is optional, and only cuda_nccl.c sees its header. */
#ifndef HIR_CUDA_INTERNAL_H
#define HIR_CUDA_INTERNAL_H

#include <stdio.h>

#include <cuda.h>
#include <cuda_runtime.h>
#include <cublasLt.h>

#include "support/support.h"

#include "runner/backend/agree.h"
#include "runner/backend/backend.h"
#include "runner/boot/boot.h"
#include "runner/cuda/cuda_backend.h"
#include "runner/cuda/cuda_gemm_cache.h"

/* Error strings per library, so HIR_CK can name any failing call uniformly. */
const char *hir_cu_str_cuda(int st);    /* runtime API (cudaError_t) */
const char *hir_cu_str_cu(int st);      /* driver API (CUresult) */
const char *hir_cu_str_cublas(int st);
const char *hir_cu_str_nccl(int st);
const char *hir_cu_str_nvrtc(int st);
const char *hir_cu_str_nvjitlink(int st);

/* Writes "<call>: <error string> (file:line)" into e and returns -1. */
int hir_cu_fail(hir_diag *e, const char *expr, const char *str, const char *file, int line);

/* The check macro: LIB is one of cuda, cu, cublas, nccl, nvrtc, nvjitlink (all of which use 0
 * for success). On failure it fills *E and returns -1 from the calling function. */
#define HIR_CK(E, LIB, EXPR) do { \
        int hir_st_ = (int)(EXPR); \
        if (hir_st_ != 0) \
            return hir_cu_fail((E), #EXPR, hir_cu_str_##LIB(hir_st_), __FILE__, __LINE__); \
    } while (0)
/* For a status captured earlier (cleanup ran in between): CALL names the call. */
#define HIR_CK_ST(E, LIB, CALL, ST) do { \
        int hir_st_ = (int)(ST); \
        if (hir_st_ != 0) \
            return hir_cu_fail((E), CALL, hir_cu_str_##LIB(hir_st_), __FILE__, __LINE__); \
    } while (0)
/* Same as HIR_CK, but jumps to LABEL (for paths that must release what they took first). */
#define HIR_CK_GOTO(E, LIB, EXPR, LABEL) do { \
        int hir_st_ = (int)(EXPR); \
        if (hir_st_ != 0) { \
            hir_cu_fail((E), #EXPR, hir_cu_str_##LIB(hir_st_), __FILE__, __LINE__); \
            goto LABEL; \
        } \
    } while (0)

struct hir_stream {
    cudaStream_t s;
    int64_t key;                 /* -1 for the main stream */
    /* last communication queued on it, for the timeout message of synchronize */
    char pending[160];
    int pending_peer;
    /* this stream's own cuBLASLt workspace: GEMMs in flight on different streams must never
     * share one (docs/cuda-backend.md, "Concurrent GEMMs and the workspace") */
    void *ws;
    /* with cfg.comm_priority: the stream its communication runs on, made at the device's
     * greatest priority on first use and joined back after every post (cuda_stream.c) */
    struct hir_stream *comm;
};

struct hir_event { cudaEvent_t ev; };

typedef enum { HIR_CU_WORK_EVENT, HIR_CU_WORK_IPC } hir_cu_work_kind;
typedef struct hir_cu_ipc hir_cu_ipc;

/* One side of an NCCL P2P transfer's header (cuda_agree.c): this rank's dtype and element
 * count, and the bootstrap message that carries ours to the receiver or theirs to us. */
typedef struct hir_cu_hdr {
    hir_boot_msg *m;
    int peer, is_recv;
    int64_t dtype, count;
} hir_cu_hdr;

struct hir_work {
    hir_cu_work_kind kind;
    cudaEvent_t ev;              /* EVENT: recorded after the operation; IPC: after the post */
    hir_cu_ipc *ipc;             /* IPC: the handle pair the post used */
    uint32_t seq;                /* IPC: the post's sequence number on that pair */
    hir_stream *posted_on;
    hir_cu_hdr *hdr;             /* NCCL P2P headers of this work (cuda_agree.c) */
    int nhdr;
};

/* One cached cuBLASLt plan: descriptors and the algorithm chosen by the heuristic, or with
 * GEMM tuning on (cfg.gemm_tune) the fastest of the heuristic's candidates on the real buffers
 * (cuda_gemm.c, docs/cuda-backend.md "GEMM tuning"). */
typedef struct hir_cu_gemm_plan {
    uint64_t hash;
    int64_t key[24];
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatmulAlgo_t algo;
    cublasLtMatmulAlgo_t *cand;  /* tuning on: the heuristic's candidates, its best first */
    int ncand;
    int tuned;                   /* algo is final: timed, taken from the cache file, or one
                                    candidate only; 0 while tuning is still due */
} hir_cu_gemm_plan;

/* One compiled runtime kernel. */
typedef struct hir_cu_kernel {
    uint64_t hash;
    void *key;                   /* the spec bytes it was generated from */
    size_t keylen;
    CUmodule mod;
    CUfunction fn;
} hir_cu_kernel;

/* One kernel launch as the backend issued it (hir-run --bench-bare): everything cuLaunchKernel
 * took, the argument bytes copied, so that a tight loop can issue exactly the same launch. */
typedef struct hir_cu_launch_rec {
    CUfunction fn;
    unsigned grid[3], block[3], shmem;
    CUstream stream;
    void **argv;                 /* one malloc'd block: the pointers, then the bytes they point to */
} hir_cu_launch_rec;

typedef struct hir_cu_comm {
    int *team;
    int team_size;
    struct ncclComm *comm;       /* an ncclComm_t (cuda_nccl.c) */
} hir_cu_comm;

/* Local end of a CUDA-IPC P2P: my buffer and semaphore, and the imported peer ones (§4.1).
 * Semaphores carry sequence numbers: the n-th post on a pair signals n into the waiting side's
 * semaphore, and waits are "at least n", so several posts in flight cannot be confused. */
struct hir_cu_ipc {
    uintptr_t stmt_id;
    int peer, is_send;
    char *data;                  /* my buffer (cache key with esize, numel) */
    size_t esize;
    int dtype;                   /* hir_dtype of the buffer, checked against the peer's */
    int64_t numel;
    size_t bytes;
    uint32_t seq;                /* posts made on this pair so far */
    uint32_t *sem;               /* mine, cudaMalloc'd, exported; the peer writes into it */
    char *peer_base;             /* imported allocation base of the peer's buffer */
    char *peer_ptr;              /* peer_base + offset */
    uint32_t *peer_sem;          /* imported */
    int imported;
    cudaIpcMemHandle_t my_buf_h, my_sem_h;
    int64_t my_offset;
};

typedef struct hir_cu_user_kernel {
    int group;
    CUmodule mod;
    CUfunction fn;
    hir_cuda_kernel_opts opts;
    char entry[128];
} hir_cu_user_kernel;

/* Driver API entry points, fetched through cudaGetDriverEntryPointByVersion so that binaries
 * do not link libcuda.so.1 and still start (and report "no GPU") on machines without a driver. */
typedef struct hir_cu_driver {
    __typeof__(&cuGetErrorString) GetErrorString;
    __typeof__(&cuMemGetAddressRange) MemGetAddressRange;
    __typeof__(&cuStreamWriteValue32) StreamWriteValue32;
    __typeof__(&cuStreamWaitValue32) StreamWaitValue32;
    __typeof__(&cuModuleLoadData) ModuleLoadData;
    __typeof__(&cuModuleUnload) ModuleUnload;
    __typeof__(&cuModuleGetFunction) ModuleGetFunction;
    __typeof__(&cuLaunchKernel) LaunchKernel;
    __typeof__(&cuDeviceGetAttribute) DeviceGetAttribute;
    __typeof__(&cuPointerGetAttribute) PointerGetAttribute;
    __typeof__(&cuFuncSetAttribute) FuncSetAttribute;
} hir_cu_driver;

typedef struct hir_cu_backend {
    hir_backend base;
    hir_cu_driver drv;
    int device, cc_major, cc_minor, sm_count;
    char pci_bus_id[32];
    cudaUUID_t uuid;
    int dead;                    /* a wait timed out: streams may never drain, skip frees */

    hir_stream main;
    hir_stream **streams;        /* keyed streams */
    int nstreams, cap_streams;
    cudaStream_t aux;            /* private, for one-off setup (semaphore zeroing) */

    cudaEvent_t *ev_pool;        /* timing-disabled events, reused */
    int nev_pool, cap_ev_pool;

    cublasLtHandle_t lt;
    size_t workspace_bytes;      /* per stream (hir_stream.ws), by architecture */
    /* HIR_CUDA_SHARED_WORKSPACE=1: every stream uses the main stream's workspace, as hir did
     * before the fix; only to reproduce that defect (test/gpu, docs/cuda-backend.md) */
    int shared_ws;
    hir_cu_gemm_plan *plans;
    int nplans, cap_plans;
    /* GEMM tuning (cfg.gemm_tune, cuda_gemm.c): on or off, the cache file (NULL without one),
     * and what it cost so far (hir_device_info's gemm_tune_* fields) */
    int gemm_tune;
    hir_gemm_cache *gemm_cache;
    int tune_plans, tune_candidates, tune_loaded;
    double tune_ms;

    hir_cu_kernel *kernels;
    int nkernels, cap_kernels;

    hir_cu_comm *comms;
    int ncomms, cap_comms;
    int in_group;
    int group_has_ops;
    /* the open group is host-staged (cfg.p2p_host_staged): its NCCL-transport P2P posts wait
     * here for EndCoalescing (cuda_staged.c) */
    int staged_group;
    hir_p2p *staged;
    int nstaged, cap_staged;
    /* CUDA-IPC posts inside the open group: their waits are queued at EndCoalescing, so that
     * the group's one Wait covers them */
    hir_work **group_ipc;
    int ngroup_ipc, cap_group_ipc;

    hir_cu_ipc **ipc;
    int nipc, cap_ipc;
    int memops_checked;
    /* Exported memory is never freed while a peer may map it: frees of exported buffers and
     * semaphores wait here until hir_cu_release_peers (ordered teardown) */
    void **held;
    int nheld, cap_held;
    int *ipc_peers;              /* every peer handles were ever exchanged with */
    int nipc_peers, cap_ipc_peers;

    hir_cu_user_kernel *ukernels;
    int nukernels, cap_ukernels;

    /* launch recording (the table's profile group, hir-run --bench-bare) */
    int rec_on;
    int rec_bad;                 /* recording failed (out of host memory) */
    int rec_freed;               /* device memory was freed while recording */
    hir_cu_launch_rec *recs;
    int nrecs, cap_recs;
    int64_t rec_other;           /* device work recorded that is not a cuLaunchKernel */

    /* collective signatures the team agreed on, by statement (cuda_agree.c, agree.h) */
    hir_sig_cache agreed;
    int64_t agree_exchanges;     /* exchanges made (a cache miss each) */
    hir_cu_hdr *ghdr;            /* headers of the coalescing group being posted */
    int nghdr, cap_ghdr;
    hir_cu_hdr *late;            /* headers not complete at their Wait: settled at synchronize */
    int nlate, cap_late;
} hir_cu_backend;

static inline hir_cu_backend *hir_cu(hir_backend *be) { return (hir_cu_backend *)be; }

/* Grow *arr (elements of size sz) so that index n fits. */
int hir_cu_grow(void **arr, int *cap, int n, size_t sz, hir_diag *e);

/* cuda_agree.c: a collective's team agrees on its signature before it is posted; an NCCL P2P
 * sends its header (dtype, element count) with the data, checked at the receive's Wait or, if
 * it has not arrived by then, at the next synchronize, before anything waits on the device. */
int  hir_cu_coll_agree(hir_cu_backend *cb, const hir_collective *c, hir_diag *e);
int  hir_cu_p2p_header(hir_cu_backend *cb, const hir_p2p *p, hir_work *w, hir_diag *e);
int  hir_cu_group_headers(hir_cu_backend *cb, hir_work *w, hir_diag *e);
int  hir_cu_headers_at_wait(hir_cu_backend *cb, hir_work *w, hir_diag *e);
int  hir_cu_headers_settle(hir_cu_backend *cb, hir_diag *e);
void hir_cu_headers_drop(hir_cu_hdr *h, int n);
void hir_cu_agree_destroy(hir_cu_backend *cb);

/* cuda_staged.c: NCCL-transport P2P through host memory (hir-run --nccl-p2p=host-staged) */
int  hir_cu_staged_p2p(hir_cu_backend *cb, hir_stream *s, const hir_p2p *p, hir_work **w,
                       hir_diag *e);
int  hir_cu_staged_flush(hir_cu_backend *cb, hir_stream *s, hir_diag *e);

/* cuda_util.c: helpers every file calls (it calls no other file) */
int  hir_cu_event_get(hir_cu_backend *cb, cudaEvent_t *ev, hir_diag *e);
void hir_cu_event_put(hir_cu_backend *cb, cudaEvent_t ev);
int  hir_cu_work_event(hir_cu_backend *cb, hir_stream *s, hir_work **w, hir_diag *e);
int  hir_cu_view_contiguous(const hir_view *v);
int64_t hir_cu_numel(const hir_view *v);
double hir_cu_now_s(void);   /* CLOCK_MONOTONIC seconds */
/* One stream-ordered device-to-device copy of bytes from src to dst on st, issued as
 * cudaMemcpyAsync (HIR_CU_COPY_MEMCPY), as a one-copy cudaMemcpyBatchAsync
 * (HIR_CU_COPY_BATCH), or as one with the cudaMemcpyFlagPreferOverlapWithCompute hint
 * (HIR_CU_COPY_BATCH_OVERLAP: --ipc-copy=overlap). device: the current device (the batch's
 * location hints, which only managed memory uses). Returns the runtime's status; a batched copy
 * cannot be captured into a CUDA graph (the caller refuses it on a capturing stream). */
enum { HIR_CU_COPY_MEMCPY, HIR_CU_COPY_BATCH, HIR_CU_COPY_BATCH_OVERLAP, HIR_CU_COPY_N };
cudaError_t hir_cu_copy_d2d(cudaStream_t st, void *dst, const void *src, size_t bytes,
                            int device, int method);

/* cuda_stream.c: streams, synchronize, timing events (the table's entries) */
hir_stream *hir_cu_stream_main(hir_backend *be);
int  hir_cu_stream_get(hir_backend *be, int64_t key, hir_stream **out, hir_diag *e);
int  hir_cu_stream_wait(hir_backend *be, hir_stream *waiter, hir_stream *on, hir_diag *e);
int  hir_cu_synchronize(hir_backend *be, hir_diag *e);
int  hir_cu_event_create(hir_backend *be, hir_event **ev, hir_diag *e);
int  hir_cu_event_record(hir_backend *be, hir_event *ev, hir_stream *s, hir_diag *e);
int  hir_cu_event_elapsed_ms(hir_backend *be, hir_event *a, hir_event *b, double *ms,
                             hir_diag *e);
void hir_cu_event_destroy(hir_backend *be, hir_event *ev);
/* give a stream its workspace (called when the stream is created); release both at the end */
int  hir_cu_stream_init_ws(hir_cu_backend *cb, hir_stream *s, hir_diag *e);
void hir_cu_stream_fini(hir_cu_backend *cb, hir_stream *s);
/* Poll stream s until it drains; fails after the configured timeout (counted from t0, seconds of
 * hir_cu_now_s) with "<what> still busy after …" and marks the backend dead. */
/* --comm-priority=high (cfg.comm_priority): hir_cu_comm_fork gives the stream a communication
 * posted on s runs on (s itself when the option is off or a group is open: *c = s), ordered
 * after s's earlier work; hir_cu_comm_join orders s's later work after it, so that the program
 * sees the same order as without the option and only the device's scheduling changes. */
int  hir_cu_comm_fork(hir_cu_backend *cb, hir_stream *s, hir_stream **c, hir_diag *e);
int  hir_cu_comm_join(hir_cu_backend *cb, hir_stream *s, hir_stream *c, hir_diag *e);
int  hir_cu_stream_drain(hir_cu_backend *cb, hir_stream *s, const char *what, double t0,
                         hir_diag *e);

/* cuda_core.c: memory, the dispatch of communication by transport, the device */
int  hir_cu_alloc(hir_backend *be, size_t bytes, void **ptr, hir_diag *e);
void hir_cu_free(hir_backend *be, void *ptr);
int  hir_cu_mem_available(hir_backend *be, size_t *bytes, hir_diag *e);
int  hir_cu_upload(hir_backend *be, void *dst, const void *src, size_t bytes, hir_diag *e);
int  hir_cu_download(hir_backend *be, void *dst, const void *src, size_t bytes, hir_diag *e);
/* StartCoalescing / EndCoalescing: an NCCL group or a host-staged list, with CUDA-IPC posts */
int  hir_cu_coalesce_begin(hir_backend *be, hir_diag *e);
int  hir_cu_coalesce_end(hir_backend *be, hir_stream *s, hir_work **w, hir_diag *e);
int  hir_cu_p2p_post(hir_backend *be, hir_stream *s, const hir_p2p *p, hir_work **w,
                     hir_diag *e);
int  hir_cu_collective(hir_backend *be, hir_stream *s, const hir_collective *c, hir_work **w,
                       hir_diag *e);
int  hir_cu_wait(hir_backend *be, hir_stream *s, hir_work *w, hir_diag *e);
void hir_cu_work_release(hir_backend *be, hir_work *w);
void hir_cu_work_free(hir_cu_backend *cb, hir_work *w);   /* the same, from inside */
int  hir_cu_device_info(hir_backend *be, hir_device_info *d, hir_diag *e);

/* cuda_gemm.c */
int  hir_cu_gemm(hir_backend *be, hir_stream *s, const hir_gemm *g, hir_diag *e);
void hir_cu_gemm_destroy(hir_cu_backend *cb);
/* GEMM tuning from cfg.gemm_tune (NULL, "off", "on" or a cache file, read here); called at
 * create, after cuBLASLt and the workspace size */
int  hir_cu_gemm_tune_init(hir_cu_backend *cb, const char *mode, hir_diag *e);
/* what tuning cost so far, into the gemm_tune_* fields of d */
void hir_cu_gemm_tune_info(const hir_cu_backend *cb, hir_device_info *d);

/* cuda_launch.c: every cuLaunchKernel of the backend goes through hir_cu_launch, which also
 * records the launch while cb->rec_on (sizes[i]: bytes of the argument args[i] points to) */
int  hir_cu_launch(hir_cu_backend *cb, CUfunction fn, unsigned gx, unsigned gy, unsigned gz,
                   unsigned bx, unsigned by, unsigned bz, unsigned shmem, CUstream st,
                   void **args, const size_t *sizes, int nargs, hir_diag *e);
static inline void hir_cu_rec_other(hir_cu_backend *cb) { if (cb->rec_on) cb->rec_other++; }
int  hir_cu_launch_record(hir_backend *be, int on, hir_diag *e);
int  hir_cu_launch_replay(hir_backend *be, int64_t *launches, int64_t *other, hir_diag *e);
void hir_cu_launch_recs_free(hir_cu_backend *cb);

/* cuda_codegen.c: what a generated element-wise or reduction kernel depends on; its bytes are
 * the cache key. The kernel of a spec (generated, compiled and cached on first use) is
 * launched by cuda_kernels.c with blocks of HIR_CU_EW_BLOCK threads. */
#define HIR_CU_EW_BLOCK 256
typedef struct hir_cu_ew_spec {
    int tag;                     /* 1..3: element-wise with that many inputs; 9: reduce */
    int op;
    int out;                     /* hir_dtype */
    int in[3];                   /* hir_dtype, or -1 for a float scalar, -2 for an int scalar */
    int nd, nr;                  /* element-wise: dims; reduce: kept dims, reduced dims */
    int arch;
} hir_cu_ew_spec;
int  hir_cu_ew_kernel(hir_cu_backend *cb, hir_cu_ew_spec *spec, CUfunction *fn, hir_diag *e);
/* the CUDA C storage type of dtype dt in generated kernels; NULL: no kernels for it */
const char *hir_cu_ew_storage_type(int dt);
void hir_cu_kernels_destroy(hir_cu_backend *cb);

/* cuda_kernels.c: the table's element-wise entries and its plans group (hir_ew_plan) */
int  hir_cu_ew_resolve(hir_backend *be, int nin, int op, const hir_view *out,
                       const hir_operand *const *ins, hir_ew_plan **plan, hir_diag *e);
int  hir_cu_ew_launch(hir_backend *be, hir_stream *s, const hir_ew_plan *plan, hir_diag *e);
void hir_cu_ew_plan_free(hir_backend *be, hir_ew_plan *plan);
int  hir_cu_fill(hir_backend *be, hir_stream *s, const hir_view *out, double v, hir_diag *e);
int  hir_cu_copy(hir_backend *be, hir_stream *s, const hir_view *dst, const hir_view *src,
                 hir_diag *e);
int  hir_cu_unary(hir_backend *be, hir_stream *s, hir_unary_op op, const hir_view *out,
                  const hir_operand *a, hir_diag *e);
int  hir_cu_binary(hir_backend *be, hir_stream *s, hir_binary_op op, const hir_view *out,
                   const hir_operand *a, const hir_operand *b, hir_diag *e);
int  hir_cu_ternary(hir_backend *be, hir_stream *s, hir_ternary_op op, const hir_view *out,
                    const hir_operand *a, const hir_operand *b, const hir_operand *c,
                    hir_diag *e);
int  hir_cu_reduce(hir_backend *be, hir_stream *s, hir_reduce_op op, const hir_view *out,
                   const hir_view *in, uint32_t mask, hir_diag *e);

/* cuda_codegen.c: kernels generated by other files of the backend (cuda_sdpa.c, cuda_moe.c):
 * the source prelude (h2f, f2h, b2f, f2b, HIR_INF...), compiling one source (mod NULL: compile
 * and link only, no GPU needed), and the cache by key bytes, where gen writes the malloc'd
 * source of an uncached key whose entry point is `k`. A key must not be an element-wise spec
 * (its first int > 9). */
const char *hir_cu_kernel_prelude(void);
int  hir_cu_kernel_compile(hir_cu_backend *cb, const char *src, CUmodule *mod, hir_diag *e);
int  hir_cu_kernel_keyed(hir_cu_backend *cb, const void *key, size_t keylen,
                         int (*gen)(const void *key, char **src, hir_diag *e), CUfunction *fn,
                         hir_diag *e);
/* Generate and compile (NVRTC + nvJitLink, no GPU needed) a kernel of every op for sm_XY;
 * the self-test's --codegen mode, so code generation is checked on machines without a GPU. */
int  hir_cu_codegen_check(int cc_major, int cc_minor, int *ncompiled, FILE *log, hir_diag *e);
/* NVRTC -> LTO-IR -> nvJitLink -> cubin -> module (also used for user LTO-IR/PTX files). */
int  hir_cu_link_module(hir_cu_backend *cb, const void *const *inputs, const size_t *sizes,
                        const int *kinds, int n, CUmodule *mod, hir_diag *e);

/* cuda_nccl.c, or cuda_nonccl.c in a build without NCCL (where every entry that needs NCCL
 * fails with a message saying so, and the others do nothing) */
int  hir_cu_nccl_collective(hir_backend *be, hir_stream *s, const hir_collective *c,
                            hir_work **w, hir_diag *e);
int  hir_cu_group_begin(hir_backend *be, hir_diag *e);
int  hir_cu_group_end(hir_backend *be, hir_stream *s, hir_work **w, hir_diag *e);
int  hir_cu_nccl_p2p(hir_cu_backend *cb, hir_stream *s, const hir_p2p *p, hir_work **w,
                     hir_diag *e);
int  hir_cu_nccl_check_async(hir_cu_backend *cb, hir_diag *e);
void hir_cu_nccl_destroy(hir_cu_backend *cb);
/* A variable all-to-all over the job (MoE routing, cuda_moe.c), queued on s in one NCCL group:
 * for each of the nbuf buffers, sc[r] rows of row[b] bytes from sbuf[b] (in rank order) go to
 * rank r and rc[r] rows from rank r land in rbuf[b] (in rank order); device memory. */
int  hir_cu_nccl_alltoallv(hir_cu_backend *cb, hir_stream *s, int nbuf,
                           const void *const *sbuf, void *const *rbuf, const size_t *row,
                           const int64_t *sc, const int64_t *rc, hir_diag *e);
int  hir_cu_nccl_version(void);   /* ncclGetVersion's code; 0 without NCCL */

/* cuda_ipc.c */
int  hir_cu_share_handles(hir_backend *be, const hir_p2p *list, int n, hir_diag *e);
int  hir_cu_ipc_post(hir_cu_backend *cb, hir_stream *s, const hir_p2p *p, hir_work **w,
                     hir_diag *e);
int  hir_cu_ipc_wait(hir_cu_backend *cb, hir_stream *s, hir_work *w, hir_diag *e);
int  hir_cu_ipc_allgather(hir_cu_backend *cb, hir_stream *s, const hir_collective *c,
                          hir_work **w, hir_diag *e);
void hir_cu_ipc_destroy(hir_cu_backend *cb);
/* Ordered teardown: close every mapping of peer memory, tell each peer (pairwise, ascending)
 * and hear the same from it, then free the held exported memory. */
int  hir_cu_release_peers(hir_backend *be, hir_diag *e);
/* drop the cached handles of buffers inside the allocation at ptr (called before freeing) */
int  hir_cu_ipc_forget(hir_cu_backend *cb, void *ptr);   /* 1: exported, hold it */
void hir_cu_ipc_hold(hir_cu_backend *cb, void *ptr);

/* cuda_sdpa.c: the model group's sdpa; the GPU-free check compiles its kernel variants */
int  hir_cu_sdpa(hir_backend *be, hir_stream *s, const hir_sdpa *a, hir_diag *e);
int  hir_cu_sdpa_codegen_check(int cc_major, int cc_minor, int *ncompiled, hir_diag *e);

/* cuda_moe.c: the model group's Dispatch/Combine; the GPU-free check compiles its row kernels */
int  hir_cu_moe_dispatch(hir_backend *be, hir_stream *s, const hir_moe_dispatch *d,
                         hir_moe_routed *r, hir_diag *e);
int  hir_cu_moe_combine(hir_backend *be, hir_stream *s, const hir_moe_combine *c, hir_diag *e);
int  hir_cu_moe_codegen_check(int cc_major, int cc_minor, int *ncompiled, hir_diag *e);

/* cuda_user_kernel.c */
void hir_cu_user_kernels_destroy(hir_cu_backend *cb);

#endif
