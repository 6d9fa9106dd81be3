/* log.h — finding the %HostIrContainer programs in a log: the text a run prints around them
 * (other dumps, several containers, as NVFUSER_DUMP=host_ir gives) and the prefix a logger puts
 * before every line ("[rank 0] ", a timestamp). Each program comes out as text the parser reads,
 * with what it needs to report locations in the log itself (docs/language.md, "Logs"). */
#ifndef HIR_PARSER_LOG_H
#define HIR_PARSER_LOG_H

#include <stdbool.h>
#include <stddef.h>

#include "support/diag.h"

typedef struct hir_log_program {
    char *text;                  /* the program, prefixes removed, followed by two NULs (malloc'd);
                                  * NULL when the program is the whole input as it is */
    size_t len;
    int line_base;               /* lines of the log before the program's first line */
    hir_line_prefix *prefixes;   /* per line of text: what the log put before it (malloc'd; the
                                  * texts point into the log), or NULL when nothing was removed */
    size_t nprefixes;
    int header_line;             /* line of "%HostIrContainer {" in the log (1-based) */
} hir_log_program;

typedef struct hir_log {
    hir_log_program *programs;
    int n;                       /* 0: the input holds no "%HostIrContainer {" line */
} hir_log;

/* Finds the programs of `text` (len bytes; it must outlive the result). A line holding
 * "%HostIrContainer { (" starts one; what stands before that on the line is the log's prefix,
 * and every line of the program is expected with the same prefix (exactly, or with digits
 * changed: a timestamp), or with none (a logger that prefixes only a message's first line);
 * a line of the program's span that does not fit is someone else's output and reads as an empty
 * line. A program ends after "} // %HostIrContainer" and its "Index definitions:" trailer, or
 * where the next one starts. A file that is one program and nothing else but blank and comment
 * lines comes back as a single program with text NULL (read the input as it is).
 * mapped: text is a mapped input (support/input.h) whose pages are given back as they are
 * searched. Returns 0, or HIR_ENOMEM with *out empty. */
int  hir_log_find(const char *text, size_t len, bool mapped, hir_log *out);
void hir_log_fini(hir_log *l);

/* A source for program i of l, read from the log `whole` (len bytes) named `name`. The source
 * points into l (and into whole): keep both while it is used. */
void hir_log_source(const hir_log *l, int i, const char *name, const char *whole, size_t len,
                    hir_source *src);

#endif
