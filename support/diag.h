/* diag.h — the diagnostic engine: sources, byte-offset locations, located diagnostics printed
 * MLIR-style (file:line:col, source line, caret, notes) and the --verify-diagnostics checker. */
#ifndef HIR_DIAG_H
#define HIR_DIAG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ------------------------------------------------------------------ diag.c
 *
 * The one diagnostic channel of hir. A diagnostic has a severity, an optional location (a
 * byte range of a hir_source), a message, notes and an optional peer rank; a hir_diag adds a
 * prefix set once (a tool's name, "rank 3") and a sink. The default sink prints
 *     [PREFIX: ]file:line:col: error: message      (then the source line and a caret)
 *     PREFIX: error: message                       (no location; <unknown> when no prefix)
 * and notes after their parent. Tests and libraries install their own sink. */

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
    bool mapped;                 /* text is a mapped input (support/input.h): the parser gives
                                  * back the pages it has scanned; reading them again re-faults
                                  * them from the file */
} hir_source;

typedef struct hir_loc {
    const hir_source *src;       /* NULL for IR made by passes */
    uint32_t begin, end;         /* [begin, end) byte offsets; HIR_LOC_WHOLE: the whole source */
} hir_loc;

/* begin and end of a location that names a whole source: printed as `file: error: msg`, no
 * line, column or caret (a runtime error about the program rather than one statement). */
#define HIR_LOC_WHOLE UINT32_MAX

/* HIR_INTERNAL: a broken invariant ("internal error"), printed by hir_panic only. */
typedef enum hir_severity { HIR_NOTE, HIR_WARNING, HIR_ERROR, HIR_INTERNAL } hir_severity;

typedef struct hir_diag_entry {
    hir_severity sev;
    hir_loc loc;
    char *msg;
    struct hir_diag_entry *notes;   /* linked notes */
    struct hir_diag_entry *next;
    int peer;                       /* the rank a failed exchange or wait was with, -1: none */
    const void *at;                 /* the caller's statement the error belongs to when a
                                     * library finds it during a later call (a backend's
                                     * deferred work): its stmt_id; NULL: the current one */
    char *origin;                   /* who reports it ("rank 3", "rank 0 ref"), printed after
                                     * the hir_diag's prefix; NULL: none (hir_diag_set_origin) */
    bool printed;
} hir_diag_entry;


struct hir_diag;
/* Receives every entry (its notes hang off it) when the engine flushes; replaces printing. */
typedef void (*hir_diag_sink)(void *ctx, const struct hir_diag *d, const hir_diag_entry *e);

/* Collects diagnostics; prints them MLIR-style or keeps them for --verify-diagnostics. */
typedef struct hir_diag {
    FILE *out;                   /* where to print (NULL: keep only) */
    bool keep;                   /* keep entries for later inspection */
    hir_diag_entry *first, *last;
    int errors, warnings;
    int max_errors;              /* stop recording after this many (0: unlimited) */
    int lost;                    /* diagnostics counted but not kept: no memory for them */
    char fallback[320];          /* the last error that could not be kept, cut to fit: the
                                  * runner's "out of memory (while ...)" still reaches the
                                  * user; flush prints it, hir_diag_last_error returns it */
    bool fallback_last;          /* it came after every kept error */
    bool color;                  /* ANSI colours as clang prints them (the tools' --color);
                                  * false: plain text, byte for byte what lit tests expect */
    char prefix[64];             /* "hir-opt", "rank 3": before every diagnostic ("" none) */
    bool status_lines;           /* errors without a location print as `PREFIX: [ORIGIN: ]msg`,
                                  * no severity and not cut: the runner's one-line status
                                  * messages, as hir-run has always printed them */
    hir_diag_sink sink;          /* NULL: print to out */
    void *sink_ctx;
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
/* The prefix, set once after init (printf-style; cut at 63 bytes). */
void hir_diag_set_prefix(hir_diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Entries go to fn instead of being printed; fn sees each entry once, at hir_diag_flush. */
void hir_diag_set_sink(hir_diag *d, hir_diag_sink fn, void *ctx);
/* An error without a location, printed at once (a command line, a file that cannot be read). */
void hir_diag_error(hir_diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An error about an exchange with rank `peer` (no location), kept until hir_diag_flush. */
hir_diag_entry *hir_diag_peer_error(hir_diag *d, int peer, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The text the default sink prints for an entry without a location, into buf (always
 * terminated; returns its length). Fatal paths format with it and write the result with one
 * write(2); it neither allocates nor takes locks. */
size_t hir_diag_format_line(char *buf, size_t n, const char *prefix, hir_severity sev,
                            const char *msg);
/* The fatal paths of the runner (watchdog, fault injection, the boot sentinel, a failed exec):
 * `prefix: [severity: ]msg` and a newline into buf (always terminated; returns its length),
 * the severity left out when sev is NULL, the message not cut. hir_diag_write_fatal writes it
 * to stderr with one write(2) (no stdio lock: a watchdog thread may call it while the main
 * thread is stuck anywhere); neither allocates. */
size_t hir_diag_format_fatal(char *buf, size_t n, const char *prefix, const hir_severity *sev,
                             const char *msg);
void hir_diag_write_fatal(const char *prefix, const hir_severity *sev, const char *msg);
/* The message of the first error kept, or NULL (for a caller that hands the text on). */
const char *hir_diag_first_error(const hir_diag *d);
/* The message of the last error kept, or "" when there is none (tests, a caller that quotes
 * the reason of a call that failed). */
const char *hir_diag_last_error(const hir_diag *d);

/* ---- the runner's error channel
 * A failing runner call records its error in the hir_diag its caller passed and returns -1,
 * so call sites stay `return hir_fail(d, "cudaMemcpyAsync: %s", why);`. Messages are one line
 * (a newline or carriage return from a library string becomes a space). The entry is kept,
 * not printed: the interpreter gives it the failing statement's location and the rank
 * (interp_env.c), the job or tool that owns d flushes it. d may be NULL (nothing kept). */
int hir_fail(hir_diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int hir_vfail(hir_diag *d, const char *fmt, va_list ap);
/* hir_fail about an exchange or wait with rank `peer` (the entry's peer). */
int hir_fail_peer(hir_diag *d, int peer, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The entry's origin, printed after the hir_diag's prefix ("rank 3"); replaces an earlier one.
 * Without memory the entry keeps what it had. */
void hir_diag_set_origin(hir_diag_entry *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Puts `lead: ` before the entry's message (the statement a backend's error came from).
 * Without memory the message stays as it was. */
void hir_diag_prepend(hir_diag_entry *e, const char *lead);
/* Appends formatted text to the entry's message (a hint the caller knows); the same. */
void hir_diag_append(hir_diag_entry *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Moves the entries of src (not yet printed) to the end of d, counts included; src is left
 * empty. For a caller that tried something with a scratch hir_diag and keeps its reasons. */
void hir_diag_move(hir_diag *d, hir_diag *src);
void hir_diag_flush(hir_diag *d);
/* Marks every entry printed without printing it (what a flush would print is not wanted: a
 * refusal the other ranks report). The entries stay for hir_diag_first_error. */
void hir_diag_discard(hir_diag *d);
void hir_diag_fini(hir_diag *d);
void hir_diag_print_entry(FILE *f, const hir_diag_entry *e);
/* --verify-diagnostics: match kept entries against `// expected-error@+1 {{...}}` comments
 * in src; reports mismatches to `out`; returns 0 when everything matched. */
int hir_diag_verify(hir_diag *d, hir_source *src, FILE *out);

#endif
