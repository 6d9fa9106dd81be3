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

/* --backend on the pipelines that lowering made (found by their shape, so also after a pipe):
 * kind CUDA rewrites nvFuser's Reduce form into the ring, NCCL the ring into the Reduce form
 * (the GEMM taken back to its whole tensors and lowered again where the old pipeline stood, on
 * its main stream); a ring already in the CUDA form only takes `protocol`'s order (get|put; NULL:
 * kept). The index symbols of the removed statements are marked in old. Returns the number
 * of pipelines rewritten, or -1 after a diagnostic. */
int hir_rs_backend(hir_program *p, hir_backend_kind kind, const char *protocol, hir_map *old, hir_diag *d);

#endif
