/* cuda_backend.c — the CUDA backend's table (runner/backend/backend.h) and its lifecycle:
 * create (driver entry points, device, streams, cuBLASLt) and destroy. It only fills the table;
 * the entries live beside it (cuda_core.c, cuda_stream.c, cuda_gemm.c, cuda_kernels.c,
 * cuda_nccl.c, cuda_ipc.c, cuda_sdpa.c, cuda_moe.c, cuda_user_kernel.c, cuda_graph.c), their
 * shared helpers in cuda_util.c, and no other file of the backend calls this one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/cuda/cuda_internal.h"

/* ---------------------------------------------------------------- create / destroy */

static void cu_destroy(hir_backend *be)
{
    hir_cu_backend *cb = hir_cu(be);
    if (!cb) return;
    if (!cb->dead) cudaDeviceSynchronize();
    for (int i = 0; i < cb->ngroup_ipc; i++) hir_cu_work_free(cb, cb->group_ipc[i]);
    free(cb->group_ipc);
    free(cb->staged);
    hir_cu_ipc_destroy(cb);
    hir_cu_nccl_destroy(cb);
    hir_cu_agree_destroy(cb);
    hir_cu_gemm_destroy(cb);
    hir_cu_launch_recs_free(cb);
    free(cb->recs);
    hir_cu_kernels_destroy(cb);
    hir_cu_user_kernels_destroy(cb);
    for (int i = 0; i < cb->nstreams; i++) {
        hir_cu_stream_fini(cb, cb->streams[i]);
        free(cb->streams[i]);
    }
    free(cb->streams);
    for (int i = 0; i < cb->nev_pool; i++) cudaEventDestroy(cb->ev_pool[i]);
    free(cb->ev_pool);
    hir_cu_stream_fini(cb, &cb->main);
    if (cb->aux) cudaStreamDestroy(cb->aux);
    free(cb);
}

/* Adapters from the backend's public extras (cuda_backend.h) to the table's signatures. */
static int cu_load_kernel(hir_backend *be, int group, const char *path, hir_diag *e)
{
    return hir_cuda_load_user_kernel(be, group, path, NULL, e);
}

static int cu_graph_end(hir_backend *be, int ok, hir_graph **out, hir_diag *e)
{
    hir_cuda_graph *g = NULL;
    int rc = hir_cuda_graph_end(be, ok, &g, e);
    *out = (hir_graph *)g;
    return rc;
}

static int cu_graph_launch(hir_backend *be, hir_graph *g, hir_diag *e)
{
    return hir_cuda_graph_launch(be, (hir_cuda_graph *)g, e);
}

static void cu_graph_destroy(hir_backend *be, hir_graph *g)
{
    (void)be;
    hir_cuda_graph_destroy((hir_cuda_graph *)g);
}

static int cu_stream_capturing(hir_backend *be, hir_stream *s)
{
    (void)be;
    return hir_cuda_stream_capturing(s);
}

/* Every optional group of the table (runner/backend/backend.h) but the deferred-GEMM check. */
static const hir_graph_ops cu_graph = {
    .begin = hir_cuda_graph_begin,
    .end = cu_graph_end,
    .launch = cu_graph_launch,
    .destroy = cu_graph_destroy,
    .capturing = cu_stream_capturing,
    .rearm = hir_cuda_ipc_rearm,
};

static const hir_kernel_ops cu_kernels = {
    .load = cu_load_kernel,
    .launch = hir_cuda_launch_user_kernel,
};

static const hir_plan_ops cu_plans = {
    .resolve = hir_cu_ew_resolve,
    .launch = hir_cu_ew_launch,
    .free = hir_cu_ew_plan_free,
};

static const hir_profile_ops cu_profile = {
    .launch_record = hir_cu_launch_record,
    .launch_replay = hir_cu_launch_replay,
    .device_info = hir_cu_device_info,
};

static const hir_model_ops cu_model = {
    .moe_dispatch = hir_cu_moe_dispatch,
    .moe_combine = hir_cu_moe_combine,
    .sdpa = hir_cu_sdpa,
};

static const hir_backend_ops cu_ops = {
    .name = "cuda",
#ifdef HIR_HAVE_NCCL
    .caps = HIR_CAP_NCCL,
#endif
    .destroy = cu_destroy,
    .alloc = hir_cu_alloc,
    .free = hir_cu_free,
    .mem_available = hir_cu_mem_available,
    .upload = hir_cu_upload,
    .download = hir_cu_download,
    .stream_main = hir_cu_stream_main,
    .stream_get = hir_cu_stream_get,
    .stream_wait = hir_cu_stream_wait,
    .synchronize = hir_cu_synchronize,
    .event_create = hir_cu_event_create,
    .event_record = hir_cu_event_record,
    .event_elapsed_ms = hir_cu_event_elapsed_ms,
    .event_destroy = hir_cu_event_destroy,
    .fill = hir_cu_fill,
    .copy = hir_cu_copy,
    .gemm = hir_cu_gemm,
    .unary = hir_cu_unary,
    .binary = hir_cu_binary,
    .ternary = hir_cu_ternary,
    .reduce = hir_cu_reduce,
    .collective = hir_cu_collective,
    .group_begin = hir_cu_coalesce_begin,
    .group_end = hir_cu_coalesce_end,
    .p2p_post = hir_cu_p2p_post,
    .share_handles = hir_cu_share_handles,
    .wait = hir_cu_wait,
    .work_release = hir_cu_work_release,
    .release_peers = hir_cu_release_peers,
    .graph = &cu_graph,
    .kernels = &cu_kernels,
    .plans = &cu_plans,
    .profile = &cu_profile,
    .model = &cu_model,
};

static int load_driver(hir_cu_driver *d, hir_diag *e)
{
#define GET(field, sym) do { \
        enum cudaDriverEntryPointQueryResult q; \
        void *fp = NULL; \
        HIR_CK(e, cuda, cudaGetDriverEntryPointByVersion(sym, &fp, 12000, cudaEnableDefault, &q)); \
        if (q != cudaDriverEntryPointSuccess || !fp) \
            return hir_fail(e, "driver entry point %s not found", sym), -1; \
        memcpy(&d->field, &fp, sizeof fp); \
    } while (0)
    GET(GetErrorString, "cuGetErrorString");
    GET(MemGetAddressRange, "cuMemGetAddressRange");
    GET(StreamWriteValue32, "cuStreamWriteValue32");
    GET(StreamWaitValue32, "cuStreamWaitValue32");
    GET(ModuleLoadData, "cuModuleLoadData");
    GET(ModuleUnload, "cuModuleUnload");
    GET(ModuleGetFunction, "cuModuleGetFunction");
    GET(LaunchKernel, "cuLaunchKernel");
    GET(DeviceGetAttribute, "cuDeviceGetAttribute");
    GET(PointerGetAttribute, "cuPointerGetAttribute");
    GET(FuncSetAttribute, "cuFuncSetAttribute");
#undef GET
    return 0;
}

int hir_cuda_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return n > 0 ? n : 0;
}

int hir_cuda_available(void)
{
    return hir_cuda_device_count() > 0;
}

int hir_backend_cuda_create(const hir_backend_config *cfg, hir_backend **out, hir_diag *e)
{
    *out = NULL;
    int ndev = 0;
    cudaError_t st = cudaGetDeviceCount(&ndev);
    if (st != cudaSuccess || ndev == 0) {
        cudaGetLastError();
        return hir_fail(e, "CUDA backend unavailable: no GPU visible (%s); use the CPU "
                                "backend", st != cudaSuccess ? cudaGetErrorString(st)
                                                             : "0 devices"), -1;
    }
    if (cfg->device < 0)
        return hir_fail(e, "CUDA backend: device %d requested", cfg->device), -1;
    hir_cu_backend *cb = calloc(1, sizeof *cb);
    if (!cb) return hir_fail(e, "out of host memory"), -1;
    cb->base.ops = &cu_ops;
    cb->base.cfg = *cfg;
    /* more ranks on a node than visible GPUs (hir-run passes the local rank): they share the
     * GPUs round-robin, local_rank % visible, as backend.h documents */
    cb->base.cfg.device = cfg->device % ndev;
    cb->device = cb->base.cfg.device;
    cb->main.key = -1;
    cb->main.pending_peer = -1;
    /* NCCL reads this at its first call: never use NVLink multicast (NVLS). */
    setenv("NCCL_NVLS_ENABLE", "0", 0);

    HIR_CK_GOTO(e, cuda, cudaSetDevice(cb->device), fail);
    HIR_CK_GOTO(e, cuda, cudaFree(0), fail);           /* make the primary context current */
    if (load_driver(&cb->drv, e) < 0) goto fail;
    struct cudaDeviceProp prop;
    HIR_CK_GOTO(e, cuda, cudaGetDeviceProperties(&prop, cb->device), fail);
    cb->cc_major = prop.major;
    cb->cc_minor = prop.minor;
    cb->sm_count = prop.multiProcessorCount;
    cb->uuid = prop.uuid;
    HIR_CK_GOTO(e, cuda, cudaDeviceGetPCIBusId(cb->pci_bus_id, sizeof cb->pci_bus_id,
                                               cb->device), fail);
    HIR_CK_GOTO(e, cuda, cudaStreamCreateWithFlags(&cb->main.s, cudaStreamNonBlocking), fail);
    HIR_CK_GOTO(e, cuda, cudaStreamCreateWithFlags(&cb->aux, cudaStreamNonBlocking), fail);
    HIR_CK_GOTO(e, cublas, cublasLtCreate(&cb->lt), fail);
    /* What the cuBLAS documentation recommends per workspace: 32 MiB on Hopper (sm_90) and
     * later, 4 MiB before. One per stream (hir_cu_stream_init_ws). */
    cb->workspace_bytes = cb->cc_major >= 9 ? (size_t)32 << 20 : (size_t)4 << 20;
    const char *sw = getenv("HIR_CUDA_SHARED_WORKSPACE");
    cb->shared_ws = sw && !strcmp(sw, "1");
    if (hir_cu_stream_init_ws(cb, &cb->main, e) < 0) goto fail;
    if (hir_cu_gemm_tune_init(cb, cfg->gemm_tune, e) < 0) goto fail;
    *out = &cb->base;
    return 0;
fail:
    cu_destroy(&cb->base);
    return -1;
}
