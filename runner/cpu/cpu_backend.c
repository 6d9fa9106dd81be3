/* cpu_backend.c — the CPU reference backend's table (runner/backend/backend.h) and its
 * lifecycle. It only fills the table: the entries live in cpu_core.c (memory, streams, events,
 * fill, copy), cpu_elementwise.c, cpu_gemm.c, cpu_comm.c, cpu_sdpa.c and cpu_lazy.c, and the
 * helpers they share in cpu_util.c. No other file of the backend calls this one. */
#include <stdlib.h>

#include "runner/cpu/cpu_internal.h"
#include "runner/cpu/cpu.h"

/* ---------------------------------------------------------------- lifecycle */

static void cpu_destroy(hir_backend *be)
{
    if (!be)
        return;
    hir_cpu_backend *cb = cpu_of(be);
    cpu_comm_destroy(cb);
    cpu_lazy_destroy(cb);
    for (int i = 0; i < cb->nstreams; i++)
        free(cb->streams[i]);
    free(cb->streams);
    for (int i = 0; i < 3; i++)
        free(cb->scratch[i]);
    free(cb);
}

/* Its optional groups: the deferred GEMMs of randomized checking (cpu_lazy.c; a backend
 * created without cfg.defer_gemm_flops simply has none to hand over) and the model
 * statements. No graphs, user kernels, element-wise plans or device profile. */
static const hir_check_ops cpu_check = {
    .take_deferred = cpu_take_deferred,
    .gemm_now = cpu_gemm_now,
};

static const hir_model_ops cpu_model = {
    .moe_dispatch = cpu_moe_dispatch,
    .moe_combine = cpu_moe_combine,
    .sdpa = cpu_sdpa,
};

static const hir_backend_ops cpu_ops = {
    .name = "cpu",
    .caps = HIR_CAP_HOST_MEMORY | HIR_CAP_NCCL,   /* every transport goes over MPI */
    .destroy = cpu_destroy,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .mem_available = cpu_mem_available,
    .upload = cpu_upload,
    .download = cpu_download,
    .stream_main = cpu_stream_main,
    .stream_get = cpu_stream_get,
    .stream_wait = cpu_stream_wait,
    .synchronize = cpu_synchronize,
    .event_create = cpu_event_create,
    .event_record = cpu_event_record,
    .event_elapsed_ms = cpu_event_elapsed_ms,
    .event_destroy = cpu_event_destroy,
    .fill = cpu_fill,
    .copy = cpu_copy,
    .gemm = cpu_gemm,
    .unary = cpu_unary,
    .binary = cpu_binary,
    .ternary = cpu_ternary,
    .reduce = cpu_reduce,
    .collective = cpu_collective,
    .team_prepare = cpu_team_prepare,
    .group_begin = cpu_group_begin,
    .group_end = cpu_group_end,
    .p2p_post = cpu_p2p_post,
    .share_handles = cpu_share_handles,
    .wait = cpu_wait,
    .work_release = cpu_work_release,
    .release_peers = cpu_release_peers,
    .check = &cpu_check,
    .model = &cpu_model,
};

int hir_backend_cpu_create(const hir_backend_config *cfg, hir_backend **out, hir_diag *e)
{
    *out = NULL;
    hir_cpu_backend *cb = calloc(1, sizeof *cb);
    if (!cb)
        return hir_fail(e, "hir_backend_cpu_create: out of memory");
    cb->base.ops = &cpu_ops;
    cb->base.cfg = *cfg;
    if (cb->base.cfg.size <= 0)
        cb->base.cfg.size = 1;
    cb->main.key = -1;
    if (cb->base.cfg.defer_gemm_flops > 0)
        cpu_lazy_install(cb);
    if (cpu_comm_create(cb, e)) {
        cpu_destroy(&cb->base);
        return -1;
    }
    *out = &cb->base;
    return 0;
}
