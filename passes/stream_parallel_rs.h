/* stream_parallel_rs.h — the GEMM + reduce-scatter lowering of --stream-parallel
 * (stream_parallel_rs.c), called by hir_run_stream_parallel before its all-gather lowering. */
#ifndef HIR_PASSES_STREAM_PARALLEL_RS_H
#define HIR_PASSES_STREAM_PARALLEL_RS_H

#include "dialect/hir.h"

/* Lowers every top-level (partial GEMM, reduction over its device axis) pair to a stream
 * pipeline of the given backend (put: CUDA exchanges post recv before send); 0 also when there
 * is none, -1 after a located error. */
int hir_stream_parallel_rs(hir_program *p, hir_backend_kind backend, bool put, bool scheduled,
                           hir_diag *d);

#endif
