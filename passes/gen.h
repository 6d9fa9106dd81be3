/* gen.h — builds the input programs nvFuser's MultiDeviceExecutor would hand to the stream
 * pass (the form of ag-linear-input.hir) for given GEMM sizes, and single-GEMM programs for
 * benchmarks. Used by tools/hir-gen. */
#ifndef HIR_PASSES_GEN_H
#define HIR_PASSES_GEN_H

#include "dialect/hir.h"

typedef enum hir_gen_kind {
    HIR_GEN_AG_LINEAR,           /* allgather of A [d, m/d, k] then linear with W [n, k] (+ b [n]) */
    HIR_GEN_AG_MATMUL,           /* allgather of A then matmul with B [k, n] */
    HIR_GEN_LINEAR,              /* one linear, no communication, one-device mesh */
    HIR_GEN_MATMUL,              /* one matmul, no communication, one-device mesh */
    HIR_GEN_LINEAR_RS,           /* A [d, d, m/d, k/d] and W [d, n, k/d] sharded on K, partial
                                  * linear per stream chunk, then the sum over devices scattered
                                  * over rows: out [r d, d, m/d, n] (no bias) */
    HIR_GEN_MATMUL_RS,           /* the same with matmul and B [d, 1, k/d, n] */
    HIR_GEN_LINEAR_RS_REF,       /* linear-rs computed as gather, then one GEMM over the whole K
                                  * of this rank's chunk (for the randomized check) */
    HIR_GEN_MATMUL_RS_REF,       /* the same for matmul-rs */
    HIR_GEN_TP_MLP,              /* tensor-parallel MLP block: all-gather + linear, GELU, linear +
                                  * reduce-scatter (k hidden, n feed-forward) */
} hir_gen_kind;

typedef struct hir_gen_params {
    hir_gen_kind kind;
    int64_t m, k, n, d;          /* d: devices (ag-*, *-rs) — 1 for the single-GEMM kinds */
    hir_dtype dtype;
    bool bias;                   /* ag-linear and linear only */
} hir_gen_params;

/* Name ("ag-linear", ...) -> kind; -1 when unknown. */
int hir_gen_kind_parse(const char *name, hir_gen_kind *out);
/* Checks the parameters; on error writes a message and returns -1. */
int hir_gen_check(const hir_gen_params *g, hir_diag *dg);
/* Builds the program (checked first). */
int hir_gen_program(const hir_gen_params *g, hir_program **out, hir_diag *dg);

#endif
