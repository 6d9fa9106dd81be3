/* parser.h — reading %HostIrContainer text into a program. */
#ifndef HIR_PARSER_H
#define HIR_PARSER_H

#include "dialect/hir.h"
#include "support/input.h"   /* hir_input_read: a file read for hir_parse */

/* Parses src (whose text must be followed by two NUL bytes: see hir_source_load) into a new
 * program. Returns 0 on success; on failure returns -1 with located diagnostics in d, and
 * *out is NULL. The program keeps a pointer to src for later diagnostics. */
int hir_parse(hir_source *src, hir_diag *d, hir_program **out);

#endif
