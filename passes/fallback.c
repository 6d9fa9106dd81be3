/* fallback.c — --pipeline-fallback: lower an all-gather + GEMM program as a stream pipeline
 * where pipelining pays, and as gather-then-GEMM where it cannot (small GEMMs: per-chunk
 * overhead and smaller, less efficient chunk GEMMs outweigh the hidden gather).
 *
 * Needs: the unlowered form (a resharding Set feeding linear/matmul, or a partial GEMM followed
 *   by its sum over the devices, as hir-gen ag-linear / linear-rs print them).
 * Changes: exactly what the chosen lowering changes:
 *   FLOPs per rank >= min-flops: --stream-parallel{backend=B protocol=P}, then --backend=B
 *   FLOPs per rank <  min-flops: --convert-to-communication{backend=nccl} (one Allgather, then
 *                                the whole GEMM; or the whole GEMM, then one ReduceScatter)
 *   FLOPs are 2 x the product of every output extent of each linear/matmul (the reduction axis
 *   is K), summed; a symbolic extent makes the size unknown and keeps the pipeline.
 * The default crossover is derived, not yet measured (docs/benchmarks.md, "Fallback"): about
 * 0.3 ms of fixed device cost for an 8-chunk CUDA-IPC pipeline (from a trace) against the gather
 * it hides (7/8 * m * k * 2 bytes at ~370 GB/s per GPU), which break even near m = 4096 for
 * k = 16384, n = 8192: 2*m*n*k ~ 1.1e12. Replace it with the crossover bench/ag_gemm.py measures
 * on 8 GPUs. min-flops=0 always pipelines.
 */
#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"

int hir_run_convert_to_communication(hir_program *p, const hir_pass_args *args, hir_diag *d);
int hir_run_stream_parallel(hir_program *p, const hir_pass_args *args, hir_diag *d);
int hir_run_backend(hir_program *p, const hir_pass_args *args, hir_diag *d);

/* 2·M·N·K from the recorded crossover (see the file comment). */
#define HIR_FALLBACK_MIN_FLOPS "1e12"

/* 2 x product of the output's extents; -1 when one is not a constant. */
static double gemm_flops(const hir_stmt *s)
{
    const hir_tensor *t = s->out;
    if (!t) return -1;
    double f = 2.0;
    for (int i = 0; i < t->nloop; i++) {
        const hir_iterdomain *id = t->shape.ids[i];
        if (id->itype == HIR_IT_BROADCAST || hir_ptype_is_device(id->ptype)) continue;
        if (!id->extent || id->extent->kind != HIR_SC_INT) return -1;
        f *= (double)id->extent->ival;
    }
    return f;
}

static double block_flops(const hir_block *b)
{
    double sum = 0;
    for (int i = 0; i < hir_block_size(b); i++) {
        const hir_stmt *s = hir_block_at(b, i);
        double f = 0;
        if (s->op == HIR_OP_LINEAR || s->op == HIR_OP_MATMUL) {
            f = gemm_flops(s);
        } else {
            double a = block_flops(&s->body), c = block_flops(&s->else_body);
            f = a < 0 || c < 0 ? -1 : a + c;
        }
        if (f < 0) return -1;
        sum += f;
    }
    return sum;
}

extern const hir_pass_option hir_opts_pipeline_fallback[];

int hir_run_pipeline_fallback(hir_program *p, const hir_pass_args *args, hir_diag *d)
{
    const char *backend = hir_pass_opt(hir_opts_pipeline_fallback, args, "backend");
    const char *mf = hir_pass_opt(hir_opts_pipeline_fallback, args, "min-flops");
    const char *proto = hir_pass_arg(args, "protocol", NULL);
    char *end = NULL;
    double min_flops = strtod(mf, &end);
    hir_loc none = {0};
    if (!end || *end || !(min_flops >= 0)) {
        hir_diag_emit(d, HIR_ERROR, none, "pipeline-fallback: min-flops=%s is not a "
                      "non-negative number", mf);
        return -1;
    }
    if (strcmp(backend, "nccl") && strcmp(backend, "cuda")) {
        hir_diag_emit(d, HIR_ERROR, none, "pipeline-fallback: backend=%s: expected nccl or "
                      "cuda", backend);
        return -1;
    }
    if (proto && strcmp(backend, "cuda")) {
        hir_diag_emit(d, HIR_ERROR, none, "pipeline-fallback: protocol= applies to backend=cuda only");
        return -1;
    }
    double flops = block_flops(&p->body);
    hir_pass_args a = {0};
    if (flops >= 0 && flops < min_flops) {
        a.n = 1;
        a.key[0] = "backend";
        a.val[0] = "nccl";
        return hir_run_convert_to_communication(p, &a, d);
    }
    a.n = 1;
    a.key[0] = "backend";
    a.val[0] = backend;
    if (proto) {
        a.key[1] = "protocol";
        a.val[1] = proto;
        a.n = 2;
    }
    if (hir_run_stream_parallel(p, &a, d)) return -1;
    a.key[0] = "kind";
    return hir_run_backend(p, &a, d);
}

const hir_pass_option hir_opts_pipeline_fallback[] = {
    {"backend", HIR_PASS_OPT_ENUM, "nccl|cuda", "cuda", "exchange of the pipeline", false},
    {"min-flops", HIR_PASS_OPT_NUMBER, NULL, HIR_FALLBACK_MIN_FLOPS,
     "pipeline only when the GEMMs' 2*M*N*K per rank reaches this (0: always)", false},
    {"protocol", HIR_PASS_OPT_ENUM, "get|put", NULL,
     "backend=cuda: order the CUDA exchanges for hir-run --p2p-protocol (default get)", false},
    {NULL, 0, NULL, NULL, NULL, false},
};
