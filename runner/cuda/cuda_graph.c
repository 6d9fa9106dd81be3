/* cuda_graph.c — capturing one run of a program into a CUDA graph and replaying it
 * (`hir-run --bench --graph`). Capture starts on the main stream in relaxed mode; worker
 * streams join through the program's own Synchronize statements (event waits) and must be
 * joined back before the end, else cudaStreamEndCapture reports the unjoined work. */
#include <stdlib.h>
#include <string.h>

#include "runner/cuda/cuda_internal.h"

struct hir_cuda_graph {
    cudaGraph_t graph;
    cudaGraphExec_t exec;
};

int hir_cuda_graph_begin(hir_backend *be, hir_diag *e)
{
    if (!be || strcmp(be->ops->name, "cuda"))
        return hir_fail(e, "CUDA graphs need the CUDA backend");
    HIR_CK(e, cuda, cudaStreamBeginCapture(hir_cu(be)->main.s, cudaStreamCaptureModeRelaxed));
    return 0;
}

int hir_cuda_graph_end(hir_backend *be, int ok, hir_cuda_graph **out, hir_diag *e)
{
    *out = NULL;
    hir_cu_backend *cb = hir_cu(be);
    cudaGraph_t g = NULL;
    cudaError_t st = cudaStreamEndCapture(cb->main.s, &g);
    if (!ok) {                               /* the run failed: just leave capture mode */
        if (g) cudaGraphDestroy(g);
        cudaGetLastError();
        return -1;
    }
    if (st != cudaSuccess) {
        cudaGetLastError();
        return hir_fail(e, "cudaStreamEndCapture: %s (a stream that got work was not "
                                "joined back to the main stream, or an operation cannot be "
                                "captured)", cudaGetErrorString(st));
    }
    hir_cuda_graph *x = calloc(1, sizeof *x);
    if (!x) {
        cudaGraphDestroy(g);
        return hir_fail(e, "out of host memory");
    }
    x->graph = g;
    st = cudaGraphInstantiateWithFlags(&x->exec, g, 0);
    if (st != cudaSuccess) {
        cudaGetLastError();
        cudaGraphDestroy(g);
        free(x);
        return hir_fail(e, "cudaGraphInstantiate: %s", cudaGetErrorString(st));
    }
    *out = x;
    return 0;
}

int hir_cuda_graph_launch(hir_backend *be, hir_cuda_graph *g, hir_diag *e)
{
    HIR_CK(e, cuda, cudaGraphLaunch(g->exec, hir_cu(be)->main.s));
    return 0;
}

void hir_cuda_graph_destroy(hir_cuda_graph *g)
{
    if (!g) return;
    if (g->exec) cudaGraphExecDestroy(g->exec);
    if (g->graph) cudaGraphDestroy(g->graph);
    free(g);
}

int hir_cuda_stream_capturing(hir_stream *s)
{
    enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
    if (!s || cudaStreamIsCapturing(s->s, &st) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return st == cudaStreamCaptureStatusActive;
}
