/* registry.c — the one table of passes, in the order --list-passes shows them. Each pass
 * lives in its own file, which opens with what it needs and what it changes. */
#include "passes/passes.h"

#define PASS(id) \
    int hir_run_##id(hir_program *p, const hir_pass_args *args, hir_diag *d); \
    extern const hir_pass_option hir_opts_##id[];
PASS(convert_to_communication)
PASS(stream_parallel)
PASS(backend)
PASS(canonicalize)
PASS(hoist_handle_exchange)
PASS(pipeline_fallback)
PASS(defer_send_wait)
PASS(strip_communication)
PASS(forward_local_shard)
#undef PASS

const hir_pass_info hir_pass_table[] = {
    {"convert-to-communication",
     "turn resharding Sets (device axis gathered) into Allgather, sums over a device axis into ReduceScatter/Allreduce Communications, with ALLOCATE and Wait",
     "backend", hir_opts_convert_to_communication, hir_run_convert_to_communication},
    {"stream-parallel",
     "pipeline stream-parallel statements over CUDA streams: FOR loops, slices, P2P allgather, GEMM + reduce-scatter",
     "backend", hir_opts_stream_parallel, hir_run_stream_parallel},
    {"backend",
     "choose the communication backend: rewrite lowered P2P exchanges NCCL <-> CUDA, set collectives",
     "kind", hir_opts_backend, hir_run_backend},
    {"canonicalize",
     "fold constant index arithmetic, merge equal index definitions, drop dead ones, sort the trailer",
     NULL, hir_opts_canonicalize, hir_run_canonicalize},
    {"hoist-handle-exchange",
     "exchange all CUDA-IPC handles of a pipeline in a loop before it, not inside its main loop",
     NULL, hir_opts_hoist_handle_exchange, hir_run_hoist_handle_exchange},
    {"pipeline-fallback",
     "lower all-gather + GEMM (GEMM + reduce-scatter) as a stream pipeline, or as gather-then-GEMM (GEMM-then-ReduceScatter) below a FLOP crossover where pipelining cannot pay",
     "backend", hir_opts_pipeline_fallback, hir_run_pipeline_fallback},
    {"defer-send-wait",
     "move each CUDA-IPC send's Wait to the end of its loop iteration, so a chunk's GEMM does not wait for the peer's pull (nvFuser 2025-12 form)",
     NULL, hir_opts_defer_send_wait, hir_run_defer_send_wait},
    {"forward-local-shard",
     "let the GEMM of a rank's own chunk in an all-gather pipeline read the local shard, not a copy of it in the gathered buffer (when nothing else reads that buffer)",
     NULL, hir_opts_forward_local_shard, hir_run_forward_local_shard},
    {"strip-communication",
     "remove every communication statement and keep the compute (compute-only ceiling; the outputs are meaningless)",
     NULL, hir_opts_strip_communication, hir_run_strip_communication},
    {NULL, NULL, NULL, NULL, NULL},
};
