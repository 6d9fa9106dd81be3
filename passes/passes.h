/* passes.h — the pass registry and the pipeline runner used by hir-opt (MLIR-style: passes
 * are registered by name in one table, chained by a textual pipeline, and the verifier runs
 * after each of them). */
#ifndef HIR_PASSES_H
#define HIR_PASSES_H

#include <stdio.h>

#include "dialect/hir.h"

#define HIR_PASS_MAX_ARGS 8

typedef struct hir_pass_args {
    int n;
    const char *key[HIR_PASS_MAX_ARGS];
    const char *val[HIR_PASS_MAX_ARGS];
} hir_pass_args;

/* The value of option `key` as given in the pipeline (already validated against the pass's
 * table), or `dflt` when not given. */
const char *hir_pass_arg(const hir_pass_args *a, const char *key, const char *dflt);

/* Typed pass options. Each pass declares its options in a table (name, type, allowed values,
 * default, help); the pipeline builder checks every key and value against it before any input
 * is read, and --list-passes prints it. Options live in the pipeline, never in the program:
 * a pass reads only its own options and the printed program (docs/passes.md, "Options"). */
typedef enum hir_pass_opt_type {
    HIR_PASS_OPT_ENUM,           /* one of `choices` ("nccl|cuda"), case-insensitive */
    HIR_PASS_OPT_NUMBER,         /* a finite decimal number >= 0 ("1e12", "0") */
} hir_pass_opt_type;

typedef struct hir_pass_option {
    const char *name;
    hir_pass_opt_type type;
    const char *choices;         /* ENUM: "nccl|cuda"; NUMBER: NULL */
    const char *dflt;            /* the default as text, or NULL when the pass derives it from
                                  * the program (the help says how) */
    const char *help;
    bool required;               /* the pipeline is refused without it */
} hir_pass_option;

/* The value of option `key` of a pass whose option table is `opts`: as given in the pipeline,
 * else the table's default (NULL: "derived from the program"). */
const char *hir_pass_opt(const hir_pass_option *opts, const hir_pass_args *a, const char *key);

/* A pass returns 0, or -1 after reporting located diagnostics; on failure the program may be
 * partially rewritten and must not be printed. */
typedef int (*hir_pass_fn)(hir_program *p, const hir_pass_args *args, hir_diag *d);

typedef struct hir_pass_info {
    const char *name;            /* "stream-parallel" */
    const char *summary;         /* one line */
    const char *primary;         /* option set by "--name=VALUE", or NULL */
    const hir_pass_option *options;   /* NULL-terminated */
    hir_pass_fn run;
} hir_pass_info;

extern const hir_pass_info hir_pass_table[];   /* terminated by an entry with name NULL */
const hir_pass_info *hir_pass_find(const char *name);
/* Did-you-mean: the registered pass (or the option of pass p) closest to `name` by edit
 * distance, when close enough to be a likely misspelling; NULL otherwise. */
const hir_pass_info *hir_pass_suggest(const char *name);
const char *hir_pass_option_suggest(const hir_pass_info *p, const char *key);
/* Levenshtein distance between a and b (used by the suggestions above and by the tools). */
size_t hir_edit_distance(const char *a, const char *b);
/* --list-passes: every pass with its summary, options and the option --PASS=VALUE sets. */
void hir_pass_list(FILE *f);

typedef struct hir_pipeline {
    int n;
    const hir_pass_info *pass[64];
    hir_pass_args args[64];
    char *storage;               /* owns the strings of args */
} hir_pipeline;

/* Appends passes written as text: "name{k=v k2=v2},name2" (options in braces, separated by
 * spaces or commas), or the short form "name,k=v,k2=v2" where each key=value item binds to
 * the pass before it. A later value of the same option replaces the earlier one. Returns 0,
 * or -1 with a message (unknown pass or option, bad value: with a did-you-mean suggestion
 * when a registered name is close). */
int  hir_pipeline_parse(hir_pipeline *pl, const char *text, hir_diag *d);
/* Appends one pass with an optional primary value ("--backend=cuda"), checked like the
 * pipeline text. */
int  hir_pipeline_add(hir_pipeline *pl, const hir_pass_info *pass, const char *value,
                      hir_diag *d);
void hir_pipeline_fini(hir_pipeline *pl);
/* The pipeline in its one canonical spelling, the form --pass-pipeline reads back:
 * "stream-parallel{backend=cuda},canonicalize" (options in braces, as given), then a newline.
 * hir-opt --print-pipeline shows what a command line's --PASS flags and texts add up to. */
void hir_pipeline_print(const hir_pipeline *pl, FILE *f);
/* Checks what only the whole pipeline shows: every required option is set. Returns 0, or -1
 * with a message. */
int hir_pipeline_check(const hir_pipeline *pl, hir_diag *d);
/* Pipelines that are legal but probably not what was meant: a --backend pass followed by a
 * pass that lowers to a backend of its own without that option set (the --backend choice is
 * not carried over). Writes one line per case through `warn` and returns their count. */
int hir_pipeline_lint(const hir_pipeline *pl, void (*warn)(const char *msg, void *ctx), void *ctx);

/* What the pipeline measured, per pipeline position (accumulated over runs: one per
 * --split-input-file part), for --timing and --pass-statistics. */
typedef struct hir_pipeline_stats {
    int runs[64];                /* how many times pass i ran */
    long stmts_before[64];       /* statements (nested ones included) before pass i */
    long stmts_after[64];
    double seconds[64];          /* wall time of pass i */
    double verify_seconds;       /* wall time of the verifier between passes */
} hir_pipeline_stats;

typedef struct hir_pipeline_opts {
    int verify_each;             /* run the verifier after every pass */
    const char *print_before;    /* pass name, "*" for all, or NULL */
    const char *print_after;
    FILE *dump;                  /* where banners go */
    hir_pipeline_stats *stats;   /* filled in when not NULL */
    const char *const *bound;    /* --bind names: defined for the verifier after each pass */
    int nbound;
} hir_pipeline_opts;

/* Statements of the program, nested ones (loop and IF bodies) included. */
long hir_program_count_stmts(hir_program *p);

int hir_pipeline_run(hir_program *p, const hir_pipeline *pl, const hir_pipeline_opts *o,
                     hir_diag *d);

#endif
