/* schedule_explain.h — the report of hir-opt --explain-schedule (docs/passes.md, "Schedules
 * past one node"): the scale model's predicted time per step and efficiency of every lowered
 * all-gather pipeline of a program, on a topology of `nodes` nodes. PREDICTIONS only. */
#ifndef HIR_PASSES_SCHEDULE_EXPLAIN_H
#define HIR_PASSES_SCHEDULE_EXPLAIN_H

#include <stdio.h>

#include "dialect/hir.h"
#include "passes/schedule_model.h"

typedef struct hir_explain_opts {
    int64_t nodes;               /* node k holds the k-th block of d/nodes consecutive ranks */
    int streams;                 /* 0: the best of 1, 2, 3, 4, 8 */
    hir_sm model;                /* rate, fixed cost, links (shape and g come from the program) */
} hir_explain_opts;

/* Writes the report to out; 0, -1 after a located diagnostic, or HIR_ENOMEM. */
int hir_explain_schedule(const hir_program *p, const hir_explain_opts *o, FILE *out, hir_diag *d);

#endif
