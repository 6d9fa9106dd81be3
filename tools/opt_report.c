/* opt_report.c — hir-opt's did-you-mean checks and timing/statistics reports (opt_report.h). */
#include "tools/opt_report.h"

#include <string.h>
#include <time.h>

double hir_opt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int hir_opt_check_selector(const char *option, const char *sel, hir_diag *d)
{
    if (!strcmp(sel, "*") || hir_pass_find(sel))
        return 0;
    const hir_pass_info *near = hir_pass_suggest(sel);
    if (near)
        hir_diag_error(d, "unknown pass '%s' in %s; did you mean '%s'? (see --list-passes)", sel,
                 option, near->name);
    else
        hir_diag_error(d, "unknown pass '%s' in %s (see --list-passes)", sel, option);
    return -1;
}

void hir_opt_unknown_option(const char *arg, hir_diag *d)
{
    char name[64];
    const char *w = arg + strspn(arg, "-");
    size_t n = strcspn(w, "=");
    const hir_pass_info *near = NULL;
    if (n < sizeof name) {
        memcpy(name, w, n);
        name[n] = 0;
        near = hir_pass_suggest(name);
    }
    if (near)
        hir_diag_error(d, "unknown option '%s'; did you mean '--%s'? (see --help and --list-passes)",
                 arg, near->name);
    else
        hir_diag_error(d, "unknown option '%s' (see --help and --list-passes)", arg);
}

static const char rule[] =
    "===-------------------------------------------------------------------------===\n";

static void row(FILE *f, double s, double total, const char *name)
{
    fprintf(f, "  %9.4f (%5.1f%%)  %s\n", s, total > 0 ? 100 * s / total : 0.0, name);
}

void hir_opt_print_timing(FILE *f, const hir_opt_times *t, const hir_pipeline *pl,
                          const hir_pipeline_stats *st)
{
    double total = hir_opt_now() - t->start;
    double rest = total - t->input - t->parse - t->verify - t->print - t->release -
                  st->verify_seconds;
    for (int i = 0; i < pl->n; i++)
        rest -= st->seconds[i];
    fprintf(f, "%s%29s... Execution time report ...\n%s", rule, "", rule);
    fprintf(f, "  Total Execution Time: %.4f seconds\n\n", total);
    fputs("  ----Wall Time----  ----Name----\n", f);
    row(f, t->input, total, "Input");
    row(f, t->parse, total, "Parser");
    row(f, t->verify, total, "Verifier");
    for (int i = 0; i < pl->n; i++)
        row(f, st->seconds[i], total, pl->pass[i]->name);
    if (pl->n)
        row(f, st->verify_seconds, total, "(verifier after passes)");
    row(f, t->print, total, "Output");
    row(f, t->release, total, "Free");
    row(f, rest > 0 ? rest : 0, total, "Rest");
    row(f, total, total, "Total");
}

void hir_opt_print_statistics(FILE *f, const hir_pipeline *pl, const hir_pipeline_stats *st)
{
    fprintf(f, "%s%29s... Pass statistics report ...\n%s", rule, "", rule);
    fprintf(f, "  %-26s %5s %13s %12s %12s\n", "pass", "runs", "stmts-before", "stmts-after",
            "time (ms)");
    for (int i = 0; i < pl->n; i++)
        fprintf(f, "  %-26s %5d %13ld %12ld %12.4f\n", pl->pass[i]->name, st->runs[i],
                st->stmts_before[i], st->stmts_after[i], st->seconds[i] * 1e3);
}
