/* fuzz_util.h — what the parser fuzz targets share: a fatal report and a parse, verify and
 * print of one input. */
#ifndef HIR_FUZZ_UTIL_H
#define HIR_FUZZ_UTIL_H

#include <stddef.h>

#include "dialect/hir.h"

/* Prints "TARGET: WHAT", the diagnostics of d and the two prints (either may be NULL), then
 * aborts: for bugs, not for refused inputs. */
_Noreturn void fuzz_report(const char *target, const char *what, hir_diag *d, const char *a,
                           size_t alen, const char *b, size_t blen);

/* Parses and verifies text (NUL-padded as hir_parse wants); on success prints the program
 * into a malloc'd string (*out, *outlen) and, when keep is given, hands the program over (the
 * caller frees it; text must outlive it). Returns 0 on success, -1 on a parse or verify
 * failure, whose diagnostics are flushed when d->out is set. */
int fuzz_parse_print(const char *name, char *text, size_t len, hir_diag *d, char **out,
                     size_t *outlen, hir_program **keep);

#endif
