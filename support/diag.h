/* diag.h — the diagnostic engine: sources, byte-offset locations, located diagnostics printed
 * MLIR-style (file:line:col, source line, caret, notes) and the --verify-diagnostics checker. */
#ifndef HIR_DIAG_H
#define HIR_DIAG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ------------------------------------------------------------------ diag.c */

/* Text a log put before a line of a program (a timestamp, "[rank 0] "): the program read from
 * the log lacks it, and diagnostics put it back, so line:col and the caret are the log's. */
typedef struct hir_line_prefix {
    const char *text;            /* NULL: nothing removed from this line */
    uint32_t len;
    int line;                    /* the line's number in the log (1-based), 0: line_base + its own */
} hir_line_prefix;

/* A source buffer; locations are byte offsets into it, turned into line:col when printed. */
typedef struct hir_source {
    const char *name;            /* file name as given ("-" for stdin, "<generated>") */
    const char *text;
    size_t len;
    size_t *line_starts;         /* computed lazily */
    size_t nlines;
    int line_base;               /* lines before this text in its file (--split-input-file, a
                                  * program found in a log) */
    const hir_line_prefix *prefixes;   /* per line of text (0-based), or NULL (parser/log.h) */
    size_t nprefixes;
} hir_source;

typedef struct hir_loc {
    const hir_source *src;       /* NULL for IR made by passes */
    uint32_t begin, end;         /* [begin, end) byte offsets */
} hir_loc;

typedef enum hir_severity { HIR_NOTE, HIR_WARNING, HIR_ERROR } hir_severity;

typedef struct hir_diag_entry {
    hir_severity sev;
    hir_loc loc;
    char *msg;
    struct hir_diag_entry *notes;   /* linked notes */
    struct hir_diag_entry *next;
    bool printed;
} hir_diag_entry;

/* Collects diagnostics; prints them MLIR-style or keeps them for --verify-diagnostics. */
typedef struct hir_diag {
    FILE *out;                   /* where to print (NULL: keep only) */
    bool keep;                   /* keep entries for later inspection */
    hir_diag_entry *first, *last;
    int errors, warnings;
    int max_errors;              /* stop recording after this many (0: unlimited) */
    int lost;                    /* diagnostics counted but not kept: no memory for them */
    bool color;                  /* ANSI colours as clang prints them (the tools' --color);
                                  * false: plain text, byte for byte what lit tests expect */
} hir_diag;

void hir_source_init(hir_source *s, const char *name, const char *text, size_t len);
void hir_source_fini(hir_source *s);
void hir_source_linecol(hir_source *s, size_t off, int *line, int *col);
/* Emits a diagnostic; returns the entry so notes can be attached with hir_diag_note. */
hir_diag_entry *hir_diag_emit(hir_diag *d, hir_severity sev, hir_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
hir_diag_entry *hir_diag_vemit(hir_diag *d, hir_severity sev, hir_loc loc, const char *fmt,
                               va_list ap);
/* hir_diag_emit returns NULL (the diagnostic counted in errors/warnings and in lost) when
 * there is no memory to keep it; hir_diag_note ignores a NULL parent. */
void hir_diag_note(hir_diag *d, hir_diag_entry *parent, hir_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void hir_diag_init(hir_diag *d, FILE *out);
void hir_diag_flush(hir_diag *d);
void hir_diag_fini(hir_diag *d);
void hir_diag_print_entry(FILE *f, const hir_diag_entry *e);
/* --verify-diagnostics: match kept entries against `// expected-error@+1 {{...}}` comments
 * in src; reports mismatches to `out`; returns 0 when everything matched. */
int hir_diag_verify(hir_diag *d, hir_source *src, FILE *out);

#endif
