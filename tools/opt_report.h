/* opt_report.h — hir-opt's command-line checks with did-you-mean suggestions, and its
 * --timing and --pass-statistics reports (mlir-opt's -mlir-timing / -mlir-pass-statistics). */
#ifndef HIR_TOOLS_OPT_REPORT_H
#define HIR_TOOLS_OPT_REPORT_H

#include <stdio.h>

#include "passes/passes.h"

/* Wall time of hir-opt's own phases, summed over --split-input-file parts. */
typedef struct hir_opt_times {
    double start;                /* hir_opt_now() when main began */
    double input;                /* reading the file and finding its programs */
    double parse, verify, print;
    double release;              /* freeing the programs */
} hir_opt_times;

double hir_opt_now(void);

/* --print-ir-before=SEL / --print-ir-after=SEL: SEL is '*' or a registered pass. 0, or -1
 * after reporting "unknown pass 'x' in --print-ir-after; did you mean 'y'?" on d. */
int hir_opt_check_selector(const char *option, const char *sel, hir_diag *d);
/* Reports an unknown "--word[=value]" option on d, with the closest pass name if any. */
void hir_opt_unknown_option(const char *arg, hir_diag *d);

/* The execution time report: reading the input, parsing, verifying, each pass of the
 * pipeline, the verifier between passes, printing, freeing, the rest and the total. */
void hir_opt_print_timing(FILE *f, const hir_opt_times *t, const hir_pipeline *pl,
                          const hir_pipeline_stats *st);
/* Per pass: how often it ran, statements before and after (summed over runs), time. */
void hir_opt_print_statistics(FILE *f, const hir_pipeline *pl, const hir_pipeline_stats *st);

#endif
