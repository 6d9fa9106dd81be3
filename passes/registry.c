/* registry.c — the one table of passes. Each pass lives in its own file. */
#include "passes/passes.h"

const hir_pass_info hir_pass_table[] = {
    {NULL, NULL, NULL, NULL, NULL},
};
