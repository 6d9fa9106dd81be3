/* hir-opt — read a %HostIrContainer program, verify it, run passes, print it back.
 * A thin driver over the parser, verifier and pass libraries (mlir-opt style). */
#include <assert.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dialect/hir.h"
#include "parser/log.h"
#include "parser/parser.h"
#include "passes/passes.h"
#include "passes/schedule_explain.h"
#include "tools/cli.h"
#include "tools/common.h"
#include "tools/opt_report.h"
#include "tools/opts.h"
#include "tools/outfile.h"

typedef struct options {
    const char *input;
    const char *output;
    bool verify_diagnostics;
    bool split;
    hir_pipeline_opts popts;
    bool timing, statistics;     /* --timing, --pass-statistics */
    hir_pipeline_stats stats;
    hir_opt_times times;
    hir_color_mode color;
    const char *bound[64];       /* --bind NAME=V names (the value matters to hir-run only) */
    char bound_names[64][128];
    int nbound;
    const char *logical[64];     /* --logical T1=2,11*12: the user's readings (hir_program_shapes) */
    int nlogical;
    bool print_pipeline;         /* --print-pipeline: the pipeline's canonical text, then exit */
    bool print_shapes;           /* --print-shapes: each tensor's logical view, not the program */
    bool explain;                /* --explain-schedule[=...]: the model's report, not the program */
    hir_explain_opts xo;
    int print_form;              /* --print-form=2025|2026: HIR_FORM_*, or -1 */
    long container;              /* --container=N (1-based), 0: every program of the input */
    hir_diag tool;               /* errors about the command line: "hir-opt: error: ..." */
} options;

static void usage(FILE *f)
{
    fputs("usage: hir-opt [options] [FILE|-]\n"
          "\n"
          "Reads a %HostIrContainer program (as nvFuser prints it; standard input when FILE is\n"
          "'-' or not given), verifies it, runs the requested passes in command-line order and\n"
          "prints the result.\n"
          "\n"
          "options (--opt=V and --opt V alike; -- ends the options):\n"
          "  -o FILE                   write the output to FILE (default: stdout)\n"
          "  --PASS[=VALUE]            run pass PASS (see --list-passes); VALUE (only after '=')\n"
          "                            sets its main option: --stream-parallel=cuda\n"
          "  --pass-pipeline=TEXT      run passes given as text, options in braces after their pass:\n"
          "                            'stream-parallel{backend=cuda protocol=put},canonicalize'\n"
          "                            (the short form 'stream-parallel,backend=cuda' is an alias:\n"
          "                            a key=value item sets an option of the pass before it)\n"
          "  --print-pipeline          print the pipeline the command line adds up to, in the\n"
          "                            braces form, and exit (no input is read)\n"
          "  --list-passes             list every pass with its options\n"
          "  --no-verify-each          do not run the verifier after every pass\n"
          "  --print-ir-before=PASS    print the program before PASS ('*' for all)\n"
          "  --print-ir-after=PASS     print the program after PASS ('*' for all)\n"
          "  --print-ir-before-all, --print-ir-after-all\n"
          "  --timing                  print the wall time of parsing, verifying, each pass and printing\n"
          "                            to stderr (a table like mlir-opt's -mlir-timing)\n"
          "  --pass-statistics         print, per pass, statements before and after and its time\n"
          "  --color=auto|always|never colour diagnostics (auto: stderr is a terminal, TERM is not\n"
          "                            'dumb' and NO_COLOR is unset)\n"
          "  --verify-diagnostics      check diagnostics against // expected-error@+1 {{...}} comments\n"
          "  --split-input-file        handle '// -----' separated parts independently\n"
          "  --bind NAME=V             treat the free scalar NAME (a symbolic extent such as i0)\n"
          "                            as bound, as hir-run --bind does; without it a symbolic\n"
          "                            extent stays symbolic (a warning, not an error)\n"
          "  --print-shapes            print each tensor's logical shape and how hir decided it,\n"
          "                            in place of the program (docs/language.md)\n"
          "  --explain-schedule[=KEY=VALUE,...]\n"
          "                            in place of the program, the scale model's PREDICTED time per\n"
          "                            step and efficiency of each lowered all-gather pipeline; keys:\n"
          "                            nodes (default 1), streams (default: the best), tflops,\n"
          "                            gemm-fixed-us, nvlink-gbs, ib-gbs, hbm-gbs, nvlink-latency-us,\n"
          "                            ib-latency-us (default: bench/scale_model.py's)\n"
          "  --logical T1=2,11*12      read T1's logical axes so: the IterDomain numbers of each\n"
          "                            axis in order, '*' between the parts of a split (for a\n"
          "                            tensor whose shape the program leaves ambiguous)\n"
          "  --print-form=2025|2026    print every statement in that generation of nvFuser's printer;\n"
          "                            a statement the generation cannot express is an error\n"
          "  --container=N             the input is a log: read only its N-th %HostIrContainer\n"
          "                            (1-based; default: every one, printed one after another)\n"
          "  --completion=bash|zsh     print a shell completion script for hir-opt\n"
          "  --help, -h, --version\n",
          f);
}

static void list_passes(FILE *f) { hir_pass_list(f); }

static void warn_pipeline(const char *msg, void *ctx)
{
    hir_diag_emit(ctx, HIR_WARNING, (hir_loc){0}, "%s", msg);
    hir_diag_flush(ctx);
}

/* One input (or one split part): parse, verify, run the pipeline, print into `out`. */
static int process(hir_source *src, options *o, const hir_pipeline *pl, FILE *out,
                   hir_diag *d)
{
    hir_program *p = NULL;
    const char *doing = "parsing";
    double t = hir_opt_now();
    int rc = hir_parse(src, d, &p);
    o->times.parse += hir_opt_now() - t;
    hir_verify_opts vo = {false, o->bound, o->nbound};
    t = hir_opt_now();
    if (!rc && o->nlogical && (rc = hir_program_shapes(p, o->logical, o->nlogical, d)) == HIR_ENOMEM)
        doing = "reading the shapes of";
    if (!rc && (rc = hir_program_verify(p, &vo, d)) == HIR_ENOMEM)
        doing = "verifying";
    o->times.verify += hir_opt_now() - t;
    if (!rc && pl->n && (rc = hir_pipeline_run(p, pl, &o->popts, d)) == HIR_ENOMEM)
        doing = "running the passes on";
    if (!rc && o->print_form >= 0 && hir_program_convert_form(p, (hir_form)o->print_form, d))
        rc = -1;
    t = hir_opt_now();
    if (!rc && o->explain) {
        if ((rc = hir_explain_schedule(p, &o->xo, out, d)) == HIR_ENOMEM)
            doing = "explaining the schedule of";
    } else if (!rc && o->print_shapes)
        hir_program_print_shapes(p, out);
    else if (!rc)
        hir_program_print(p, out);
    o->times.print += hir_opt_now() - t;
    t = hir_opt_now();
    hir_program_free(p);
    o->times.release += hir_opt_now() - t;
    if (rc == HIR_ENOMEM) {
        hir_diag_flush(d);        /* what was said before memory ran out */
        hir_tool_error("hir-opt", "out of memory (while %s %s)", doing, src->name);
        return rc;
    }
    return rc ? -1 : 0;
}

/* One program (a split part, one program of a log, or the whole input): diagnostics, processing,
 * --verify-diagnostics. Returns 1 when it failed. */
static int one_part(options *o, const hir_pipeline *pl, hir_source *src, FILE *out, bool *first)
{
    hir_diag d;
    hir_diag_init(&d, stderr);
    d.keep = o->verify_diagnostics;
    d.color = hir_tool_use_color(o->color, stderr);
    if (!*first && o->split)
        fputs("// -----\n", out);
    *first = false;
    int failed = 0;
    int rc = process(src, o, pl, out, &d);
    if (o->verify_diagnostics) {
        if (hir_diag_verify(&d, src, stderr))
            failed = 1;
    } else {
        hir_diag_flush(&d);
        if (rc || d.errors)
            failed = 1;
    }
    hir_diag_fini(&d);
    return failed;
}

static bool is_split_line(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && s[i] == ' ')
        i++;
    if (n - i < 8 || memcmp(s + i, "// -----", 8))
        return false;
    for (i += 8; i < n; i++)
        if (s[i] != '-' && s[i] != ' ' && s[i] != '\r')
            return false;
    return true;
}

/* What parse_args tells main: go on, stop with status 0 (--help, --version), or a usage error. */
enum { ARGS_RUN, ARGS_DONE, ARGS_USAGE };

enum {
    OPT_OUTPUT = 1, OPT_PIPELINE, OPT_LIST, OPT_NO_VERIFY, OPT_BEFORE, OPT_AFTER, OPT_BEFORE_ALL,
    OPT_AFTER_ALL, OPT_TIMING, OPT_STATISTICS, OPT_COLOR, OPT_VERIFY_DIAG, OPT_SPLIT, OPT_BIND,
    OPT_SHAPES, OPT_LOGICAL, OPT_FORM, OPT_CONTAINER, OPT_PRINT_PIPELINE, OPT_HELP, OPT_VERSION,
    OPT_COMPLETION, OPT_EXPLAIN,
};

/* hir-opt's options (tools/cli.h: --opt=V or --opt V, -- ends them); a --PASS[=VALUE] of the
 * pass registry is any other --word, its value (optional) only after '=' */
static const hir_cli_option opt_opts[] = {
    {"-o", NULL, HIR_CLI_VALUE, OPT_OUTPUT, "@file"},
    {"--pass-pipeline", NULL, HIR_CLI_VALUE, OPT_PIPELINE, NULL},
    {"--print-pipeline", NULL, HIR_CLI_FLAG, OPT_PRINT_PIPELINE, NULL},
    {"--list-passes", NULL, HIR_CLI_FLAG, OPT_LIST, NULL},
    {"--no-verify-each", NULL, HIR_CLI_FLAG, OPT_NO_VERIFY, NULL},
    {"--print-ir-before", NULL, HIR_CLI_VALUE, OPT_BEFORE, NULL},
    {"--print-ir-after", NULL, HIR_CLI_VALUE, OPT_AFTER, NULL},
    {"--print-ir-before-all", NULL, HIR_CLI_FLAG, OPT_BEFORE_ALL, NULL},
    {"--print-ir-after-all", NULL, HIR_CLI_FLAG, OPT_AFTER_ALL, NULL},
    {"--timing", NULL, HIR_CLI_FLAG, OPT_TIMING, NULL},
    {"--pass-statistics", NULL, HIR_CLI_FLAG, OPT_STATISTICS, NULL},
    {"--color", NULL, HIR_CLI_VALUE, OPT_COLOR, "auto always never"},
    {"--verify-diagnostics", NULL, HIR_CLI_FLAG, OPT_VERIFY_DIAG, NULL},
    {"--split-input-file", NULL, HIR_CLI_FLAG, OPT_SPLIT, NULL},
    {"--bind", NULL, HIR_CLI_VALUE, OPT_BIND, NULL},
    {"--print-shapes", NULL, HIR_CLI_FLAG, OPT_SHAPES, NULL},
    {"--logical", NULL, HIR_CLI_VALUE, OPT_LOGICAL, NULL},
    {"--print-form", NULL, HIR_CLI_VALUE, OPT_FORM, "2025 2026"},
    {"--container", NULL, HIR_CLI_VALUE, OPT_CONTAINER, NULL},
    {"--explain-schedule", NULL, HIR_CLI_OPTIONAL, OPT_EXPLAIN, NULL},
    {"--help", "-h", HIR_CLI_FLAG, OPT_HELP, NULL},
    {"--version", NULL, HIR_CLI_FLAG, OPT_VERSION, NULL},
    {"--completion", NULL, HIR_CLI_VALUE, OPT_COMPLETION, "bash zsh"},
    {NULL, NULL, 0, 0, NULL},
};

/* --completion=SHELL: the table's options and a --PASS of every registered pass */
static int print_completion(const char *shell)
{
    char names[64][72];
    const char *extra[65];
    int n = 0;
    for (const hir_pass_info *p = hir_pass_table; p->name && n < 64; p++, n++) {
        snprintf(names[n], sizeof names[n], "--%s", p->name);
        extra[n] = names[n];
    }
    extra[n] = NULL;
    if (hir_cli_completion(stdout, "hir-opt", opt_opts, extra, "@file", shell)) {
        hir_tool_usage_error("hir-opt", "--completion takes bash or zsh, not '%s'", shell);
        return ARGS_USAGE;
    }
    return ARGS_DONE;
}

/* --bind NAME=V */
static int parse_bind(options *o, const char *x)
{
    const char *eq = strchr(x, '=');
    long long val;
    char why[128];
    if (!eq || eq == x || hir_opt_int(eq + 1, LLONG_MIN, LLONG_MAX, &val, why, sizeof why) ||
        o->nbound == 64 || eq - x >= (ptrdiff_t)sizeof o->bound_names[0]) {
        hir_tool_usage_error("hir-opt", "--bind needs NAME=INTEGER, not '%s'", x);
        return ARGS_USAGE;
    }
    snprintf(o->bound_names[o->nbound], sizeof o->bound_names[0], "%.*s", (int)(eq - x), x);
    for (int k = 0; k < o->nbound; k++)
        if (!strcmp(o->bound_names[k], o->bound_names[o->nbound])) {
            hir_tool_usage_error("hir-opt", "--bind gives '%s' a second value", o->bound_names[k]);
            return ARGS_USAGE;
        }
    o->bound[o->nbound] = o->bound_names[o->nbound];
    o->nbound++;
    o->popts.bound = o->bound;
    o->popts.nbound = o->nbound;
    return ARGS_RUN;
}

/* --print-form=2025|2026 and --container=N */
static int parse_form_or_container(options *o, int id, const char *x)
{
    if (id == OPT_FORM) {
        if (!strcmp(x, "2025") || !strcmp(x, "2026")) {
            o->print_form = x[3] == '5' ? HIR_FORM_2025 : HIR_FORM_2026;
            return ARGS_RUN;
        }
        hir_tool_usage_error("hir-opt", "--print-form takes 2025 or 2026, not '%s'", x);
        return ARGS_USAGE;
    }
    char *end = NULL;
    long v = *x >= '0' && *x <= '9' ? strtol(x, &end, 10) : 0;
    if (v < 1 || !end || *end || v > 1000000000L) {
        hir_tool_usage_error("hir-opt", "--container takes a program number from 1, not '%s'", x);
        return ARGS_USAGE;
    }
    o->container = v;
    return ARGS_RUN;
}

/* The flags without a value; false when `id` is none of them. */
static bool simple_flag(options *o, int id, bool *list)
{
    switch (id) {
    case OPT_VERIFY_DIAG: o->verify_diagnostics = true; break;
    case OPT_SPLIT: o->split = true; break;
    case OPT_LIST: *list = true; break;
    case OPT_NO_VERIFY: o->popts.verify_each = 0; break;
    case OPT_TIMING: o->timing = true; break;
    case OPT_SHAPES: o->print_shapes = true; break;
    case OPT_STATISTICS: o->statistics = true; break;
    case OPT_AFTER_ALL: o->popts.print_after = "*"; break;
    case OPT_BEFORE_ALL: o->popts.print_before = "*"; break;
    case OPT_PRINT_PIPELINE: o->print_pipeline = true; break;
    default: return false;
    }
    return true;
}

/* --PASS[=VALUE]: a pass of the registry added to the pipeline. */
static int parse_pass_flag(hir_pipeline *pl, const char *a, hir_diag *tool)
{
    char name[128];
    const char *eq = strchr(a + 2, '=');
    size_t n = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
    if (n >= sizeof name) {
        hir_tool_usage_error("hir-opt", "unknown option '%s'", a);
        return ARGS_USAGE;
    }
    memcpy(name, a + 2, n);
    name[n] = 0;
    const hir_pass_info *p = hir_pass_find(name);
    const char *close = p ? NULL : hir_cli_suggest(opt_opts, a);
    if (close) {           /* a misspelt option of the table rather than of a pass */
        hir_tool_usage_error("hir-opt", "unknown option '%s'; did you mean '%s'?", a, close);
        return ARGS_USAGE;
    }
    if (!p) {
        hir_opt_unknown_option(a, tool);
        return ARGS_USAGE;
    }
    if (hir_pipeline_add(pl, p, eq ? eq + 1 : NULL, tool))
        return ARGS_USAGE;
    return ARGS_RUN;
}

/* --explain-schedule=KEY=VALUE,...: the topology and the model's inputs */
static int parse_explain(options *o, const char *spec)
{
    static const struct { const char *key; size_t off; double scale; } keys[] = {
        {"tflops", offsetof(hir_sm, R), 1e12},
        {"gemm-fixed-us", offsetof(hir_sm, t_fixed), 1e-6},
        {"nvlink-gbs", offsetof(hir_sm, B_nvl), 1e9},
        {"ib-gbs", offsetof(hir_sm, B_ib), 1e9},
        {"hbm-gbs", offsetof(hir_sm, B_hbm), 1e9},
        {"nvlink-latency-us", offsetof(hir_sm, lat_nvl), 1e-6},
        {"ib-latency-us", offsetof(hir_sm, lat_ib), 1e-6},
    };
    o->explain = true;
    o->xo.nodes = 1;
    hir_sm_defaults(&o->xo.model);
    char buf[512];
    if (strlen(spec) >= sizeof buf) {
        hir_tool_usage_error("hir-opt", "--explain-schedule: the settings are too long");
        return ARGS_USAGE;
    }
    strcpy(buf, spec);
    for (char *save = NULL, *item = strtok_r(buf, ", ", &save); item; item = strtok_r(NULL, ", ", &save)) {
        char *eq = strchr(item, '='), *end;
        if (!eq) {
            hir_tool_usage_error("hir-opt", "--explain-schedule takes KEY=VALUE items, not '%s'", item);
            return ARGS_USAGE;
        }
        *eq = 0;
        double v = strtod(eq + 1, &end);
        bool whole = !strcmp(item, "nodes") || !strcmp(item, "streams");
        if (!eq[1] || *end || !(v >= 0) || v > 1e12 || (whole && (v < 1 || v > 1e6 || v != (double)(int64_t)v))) {
            hir_tool_usage_error("hir-opt", "--explain-schedule: %s=%s is not a %s", item, eq + 1,
                           whole ? "whole number from 1" : "number >= 0");
            return ARGS_USAGE;
        }
        if (!strcmp(item, "nodes"))
            o->xo.nodes = (int64_t)v;
        else if (!strcmp(item, "streams"))
            o->xo.streams = (int)v;
        else {
            size_t k = 0;
            while (k < sizeof keys / sizeof keys[0] && strcmp(keys[k].key, item))
                k++;
            if (k == sizeof keys / sizeof keys[0]) {
                hir_tool_usage_error("hir-opt", "--explain-schedule has no setting '%s' (nodes, streams, tflops, "
                               "gemm-fixed-us, nvlink-gbs, ib-gbs, hbm-gbs, nvlink-latency-us, ib-latency-us)", item);
                return ARGS_USAGE;
            }
            if (v <= 0 && !strstr(item, "-us")) {
                hir_tool_usage_error("hir-opt", "--explain-schedule: %s must be positive", item);
                return ARGS_USAGE;
            }
            *(double *)((char *)&o->xo.model + keys[k].off) = v * keys[k].scale;
        }
    }
    return ARGS_RUN;
}

/* The options that take a value, and the input. */
static int valued_flag(options *o, hir_pipeline *pl, int id, const char *x)
{
    switch (id) {
    case OPT_OUTPUT:
        o->output = x;
        return ARGS_RUN;
    case OPT_COLOR:
        if (hir_tool_color_parse(x, &o->color)) {
            hir_tool_usage_error("hir-opt", "--color takes auto, always or never, not '%s'", x);
            return ARGS_USAGE;
        }
        return ARGS_RUN;
    case OPT_BEFORE:
    case OPT_AFTER: {
        bool before = id == OPT_BEFORE;
        if (hir_opt_check_selector(before ? "--print-ir-before" : "--print-ir-after", x, &o->tool))
            return ARGS_USAGE;
        *(before ? &o->popts.print_before : &o->popts.print_after) = x;
        return ARGS_RUN;
    }
    case OPT_PIPELINE:
        return hir_pipeline_parse(pl, x, &o->tool) ? ARGS_USAGE : ARGS_RUN;
    case OPT_BIND:
        return parse_bind(o, x);
    case OPT_LOGICAL:
        if (*x != 'T' || !strchr(x, '=') || o->nlogical == 64) {
            hir_tool_usage_error("hir-opt", "--logical needs T<number>=<axes> (e.g. T1=2,11*12), not '%s'", x);
            return ARGS_USAGE;
        }
        o->logical[o->nlogical++] = x;
        return ARGS_RUN;
    case OPT_FORM:
    case OPT_CONTAINER:
        return parse_form_or_container(o, id, x);
    case OPT_EXPLAIN:
        return parse_explain(o, x ? x : "");
    case HIR_CLI_OTHER:
        return parse_pass_flag(pl, x, &o->tool);
    default:           /* HIR_CLI_OPERAND: the input */
        if (o->input) {
            hir_tool_usage_error("hir-opt", "more than one input file ('%s' and '%s')", o->input, x);
            return ARGS_USAGE;
        }
        o->input = x;
        return ARGS_RUN;
    }
}

/* The command line, in order (passes run in the order given). */
static int parse_args(options *o, hir_pipeline *pl, int argc, char **argv, bool *list)
{
    hir_cli cl;
    hir_cli_init(&cl, "hir-opt", opt_opts, argc, argv);
    cl.pass_other = true;
    const char *x;
    int id;
    while ((id = hir_cli_next(&cl, &x)) != HIR_CLI_END) {
        int rc = ARGS_RUN;
        if (id == HIR_CLI_USAGE) {
            return ARGS_USAGE;
        } else if (id == OPT_HELP) {
            usage(stdout);
            return ARGS_DONE;
        } else if (id == OPT_VERSION) {
            hir_tool_version(stdout, "hir-opt");
            return ARGS_DONE;
        } else if (id == OPT_COMPLETION) {
            return print_completion(x);
        } else if (!simple_flag(o, id, list)) {
            rc = valued_flag(o, pl, id, x);
        }
        if (rc != ARGS_RUN)
            return rc;
    }
    return ARGS_RUN;
}

/* What is left once the flags are read: the input named, the pipeline checked. */
static int check_args(options *o, hir_pipeline *pl)
{
    if (hir_pipeline_check(pl, &o->tool))
        return ARGS_USAGE;
    if (o->print_pipeline) {      /* the pipeline's canonical text; no input is read */
        hir_pipeline_print(pl, stdout);
        return ARGS_DONE;
    }
    if (!o->input || !strcmp(o->input, "-")) {   /* no file, or '-': standard input */
        o->input = "-";
        if (isatty(0))
            fputs("hir-opt: reading the program from standard input (end it with Ctrl-D)\n", stderr);
    }
    hir_pipeline_lint(pl, warn_pipeline, &o->tool);
    if (o->container && o->split) {
        hir_tool_usage_error("hir-opt", "--container and --split-input-file do not go together");
        return ARGS_USAGE;
    }
    return ARGS_RUN;
}

/* The input is a log: every %HostIrContainer in it, or the --container'th. Returns the number
 * of programs that failed, or -1 after an error that ends the run. */
static int run_log(options *o, const hir_pipeline *pl, const char *name, const hir_input *in,
                   FILE *out)
{
    const char *text = in->text;
    size_t len = in->len;
    bool mapped = in->maplen != 0;
    hir_log log;
    bool first = true;
    int failures = 0;
    double t = hir_opt_now();
    int found = hir_log_find(text, len, mapped, &log);
    o->times.input += hir_opt_now() - t;
    if (found) {
        hir_tool_error("hir-opt", "out of memory (while reading %s)", name);
        return -1;
    }
    if (o->container > log.n) {
        if (log.n)
            hir_tool_error("hir-opt", "--container=%ld, but %s holds %d %%HostIrContainer program%s",
                    o->container, name, log.n, log.n == 1 ? "" : "s");
        else
            hir_tool_error("hir-opt", "--container=%ld, but %s holds no %%HostIrContainer program",
                    o->container, name);
        hir_log_fini(&log);
        return -1;
    }
    int from = o->container ? (int)o->container - 1 : 0;
    int to = o->container ? (int)o->container : log.n;
    if (!log.n) {         /* no header at all: the parser says what is wrong */
        hir_source src;
        hir_source_init(&src, name, text, len);
        src.mapped = mapped;
        failures += one_part(o, pl, &src, out, &first);
        hir_source_fini(&src);
    }
    for (int k = from; k < to; k++) {
        hir_source src;
        hir_log_source(&log, k, name, text, len, &src);
        src.mapped = mapped && src.text == text;   /* the input as it is, not a copy */
        failures += one_part(o, pl, &src, out, &first);
        hir_source_fini(&src);
    }
    hir_log_fini(&log);
    return failures;
}

/* --split-input-file: parts at "// -----" lines, each keeping its line numbers in the whole file
 * through line_base. Returns the number of parts that failed, or -1 when out of memory. */
static int run_split(options *o, const hir_pipeline *pl, const char *name, const char *text,
                     size_t len, FILE *out)
{
    size_t start = 0, ls = 0;
    int line = 1, part_line = 0, failures = 0;
    bool first = true;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && text[i] != '\n')
            continue;
        bool sep = is_split_line(text + ls, i - ls);
        if (sep || i == len) {
            size_t end = sep ? ls : len;
            char *chunk = malloc(end - start + 2);   /* the scanner needs two NULs at the end */
            if (!chunk) {
                hir_tool_error("hir-opt", "out of memory (while splitting %s)", name);
                return -1;
            }
            memcpy(chunk, text + start, end - start);
            chunk[end - start] = chunk[end - start + 1] = 0;
            hir_source src;
            hir_source_init(&src, name, chunk, end - start);
            src.line_base = part_line;
            failures += one_part(o, pl, &src, out, &first);
            hir_source_fini(&src);
            free(chunk);
            start = i + 1;
            part_line = line;
        }
        ls = i + 1;
        line++;
    }
    return failures;
}

/* Statistics, timing, then the output: -o FILE is replaced only by a complete output
 * (tools/outfile.c), and not at all when a program failed. Returns the exit status. */
static int finish(options *o, const hir_pipeline *pl, const char *name, int failures,
                  hir_outfile *out)
{
    char err[512];
    if (o->statistics)
        hir_opt_print_statistics(stderr, pl, &o->stats);
    if (o->timing)
        hir_opt_print_timing(stderr, &o->times, pl, &o->stats);
    if (failures && !o->verify_diagnostics) {
        hir_outfile_abort(out);
        return 1;
    }
    int rc = hir_outfile_commit(out, err, sizeof err);
    if (rc == HIR_ENOMEM) {
        hir_tool_error("hir-opt", "out of memory (while printing %s)", name);
        return 1;
    }
    if (rc) {
        hir_tool_error("hir-opt", "%s", err);
        return 1;
    }
    return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    options o = {0};
    o.print_form = -1;
    o.popts.verify_each = 1;
    o.popts.dump = stderr;
    o.popts.stats = &o.stats;
    o.times.start = hir_opt_now();
    hir_diag_init(&o.tool, stderr);
    hir_diag_set_prefix(&o.tool, "hir-opt");
    hir_pipeline pl = {0};
    bool list = false;

    /* Bad command lines (usage errors) exit 2. Early exits free the pipeline's strings too, so
     * LeakSanitizer (scripts/ci-asan) stays quiet on bad command lines
     * (test/lit/reliability/asan-bad-command-line.test). */
    int args = parse_args(&o, &pl, argc, argv, &list);
    if (args == ARGS_RUN && list) {
        list_passes(stdout);
        args = ARGS_DONE;
    }
    if (args == ARGS_RUN)
        args = check_args(&o, &pl);
    if (args != ARGS_RUN) {
        hir_pipeline_fini(&pl);
        hir_diag_fini(&o.tool);
        return args == ARGS_DONE ? 0 : 2;
    }

    /* a large file is mapped and given back as it is read (support/input.h): it costs almost
     * no resident memory; the handler turns a truncation under the mapping into an error */
    char err[512];
    hir_input in;
    bool map = strcmp(o.input, "-") && !hir_tool_catch_sigbus("hir-opt", o.input);
    if (hir_input_read(&in, o.input, map ? HIR_INPUT_MAP : 0, err, sizeof err)) {
        hir_tool_error("hir-opt", "%s", err);
        hir_pipeline_fini(&pl);
        hir_diag_fini(&o.tool);
        return 1;
    }
    o.times.input = hir_opt_now() - o.times.start;   /* the command line and the file */
    const char *name = strcmp(o.input, "-") ? o.input : "<stdin>";
    /* the output streams into its temporary file as it is printed (tools/outfile.h) */
    static_assert(sizeof(hir_outfile) < (1 << 17), "hir_outfile lives on the stack");
    hir_outfile out;
    if (hir_outfile_open(&out, o.output)) {
        hir_tool_error("hir-opt", "out of memory");
        hir_input_fini(&in);
        hir_pipeline_fini(&pl);
        hir_diag_fini(&o.tool);
        return 1;   /* out of memory is exit status 1, like every other place it can happen */
    }
    if (out.rep.tmp)
        hir_tool_sigbus_unlink(out.rep.tmp);
    int failures = o.split ? run_split(&o, &pl, name, in.text, in.len, out.f)
                           : run_log(&o, &pl, name, &in, out.f);
    hir_input_fini(&in);
    int rc;
    if (failures < 0) {
        hir_outfile_abort(&out);
        rc = 1;
    } else {
        rc = finish(&o, &pl, name, failures, &out);
    }
    hir_pipeline_fini(&pl);
    hir_diag_fini(&o.tool);
    return rc;
}
