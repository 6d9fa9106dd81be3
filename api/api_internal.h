/* api_internal.h — what the two halves of the public API share: the handles behind
 * include/hir/hir.h and the helpers that fill a diagnostics list. api.c (libhir) defines them;
 * run.c (libhir_runtime) uses them. Not installed. */
#ifndef HIR_API_INTERNAL_H
#define HIR_API_INTERNAL_H

#include <stdarg.h>

#include "dialect/hir.h"
#include "hir/hir.h"

typedef struct hirc_diag_item {
    hirc_severity sev;
    char *file;
    int line, col;
    char *msg;
    char *rendered;
} hirc_diag_item;

struct hirc_diagnostics {
    hirc_diag_item *v;
    size_t n, cap;
    size_t errors;
};

struct hirc_program {
    hir_program *p;
    hir_source src;              /* the text it was parsed from (owned: text, name) */
    char *text;
    char *name;
    bool rewritten;              /* a pipeline ran: the IR is no longer what text says */
    char **strings;              /* names handed out by hirc_input_info/hirc_output_info */
    size_t nstrings, capstrings;
};

/* Move the entries of d (collected with out = NULL) into diags, rendered as hir-opt prints
 * them; d is left empty. diags may be NULL (the entries are dropped). */
hirc_status hirc__diags_take(hirc_diagnostics *diags, hir_diag *d);
/* Append an error without a location, naming `file` (may be NULL). Returns `st`, so a failing
 * path can end with `return hirc__diags_error(d, HIRC_ERR_RUN, name, "...")`. */
hirc_status hirc__diags_error(hirc_diagnostics *diags, hirc_status st, const char *file,
                              const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Append an error at file:line:col (no source line is shown). */
hirc_status hirc__diags_located(hirc_diagnostics *diags, hirc_status st, const char *file,
                                int line, int col, const char *msg);
/* The printed name of an input/output value ("T0", "i3"), into buf. */
const char *hirc__value_name(const hir_value *v, char *buf, size_t n);
/* Internal dtype <-> public dtype (HIRC_DTYPE_OTHER / -1 for no counterpart). */
hirc_dtype hirc__dtype_public(hir_dtype t);
int        hirc__dtype_internal(hirc_dtype t, hir_dtype *out);
/* Number of axes a buffer of tensor t has (reduction and stride axes are not stored). */
int        hirc__tensor_ndim(const hir_tensor *t);

#endif
