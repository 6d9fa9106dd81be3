/* fault.c — HIR_FAULT=RANK:LINE:KIND: make one rank exit, crash, stall or corrupt its input
 * shard just before a chosen statement, so that tests can show what the other ranks and
 * --check do about it (test/lit/reliability/fault-*.test, docs/reliability.md). */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner/guard/guard.h"
#include "support/diag.h"

typedef enum fault_kind {
    FAULT_EXIT, FAULT_CRASH, FAULT_STALL, FAULT_CORRUPT, FAULT_SKIP, FAULT_NKINDS
} fault_kind;

typedef struct fault_spec {
    long rank, line;
    fault_kind kind;
    int64_t tensor;          /* corrupt=T<n>: the input's number; -1: every tensor input */
} fault_spec;

static int parse_spec(const char *txt, fault_spec *f, hir_diag *e)
{
    static const char *const kinds[] = {"exit", "crash", "stall", "corrupt", "skip"};
    char *end;
    memset(f, 0, sizeof *f);
    f->tensor = -1;
    f->rank = strtol(txt, &end, 10);
    if (end == txt || *end != ':' || f->rank < 0)
        goto bad;
    const char *l = end + 1;
    f->line = strtol(l, &end, 10);
    if (end == l || *end != ':' || f->line <= 0)
        goto bad;
    const char *k = end + 1;
    for (int i = 0; i < FAULT_NKINDS; i++) {
        size_t n = strlen(kinds[i]);
        if (!strncmp(k, kinds[i], n) && (!k[n] || (i == FAULT_CORRUPT && k[n] == '='))) {
            f->kind = (fault_kind)i;
            if (k[n] == '=') {
                const char *t = k + n + 1;
                if (*t != 'T' || !(f->tensor = strtoll(t + 1, &end, 10), end != t + 1 && !*end))
                    goto bad;
            }
            return 0;
        }
    }
bad:
    return hir_fail(e, "%s=%s: expected RANK:LINE:KIND with KIND exit, crash, stall, "
                         "corrupt, corrupt=T<n> or skip", HIR_FAULT_ENV, txt);
}

static int stmt_line(hir_interp *it, const hir_stmt *s)
{
    hir_program *p = hir_interp_program(it);
    if (!p->src || s->loc.src != p->src)
        return -1;
    int line, col;
    hir_source_linecol(p->src, s->loc.begin, &line, &col);
    return line;
}

typedef struct line_probe {
    hir_interp *it;
    long line;
    int found;
} line_probe;

static bool probe_line(hir_stmt *s, int depth, void *ctx)
{
    line_probe *lp = ctx;
    if (stmt_line(lp->it, s) == lp->line)
        lp->found = 1;
    return !lp->found;
}

/* Negate and add one, through the backend, so zeros change too. */
static int corrupt_inputs(hir_interp *it, const fault_spec *f, hir_diag *e)
{
    hir_program *p = hir_interp_program(it);
    hir_backend *be = hir_interp_backend(it);
    hir_stream *cur = hir_interp_stream(it);
    int done = 0;
    for (int i = 0; i < p->inputs.n; i++) {
        hir_tensor *t = hir_value_tensor(p->inputs.items[i]);
        hir_view v;
        if (!t || (f->tensor >= 0 && t->number != f->tensor) || !hir_interp_bound(it, t, &v))
            continue;
        if (hir_view_numel(&v) == 0)
            continue;
        hir_operand a = {0}, one = {0};
        a.view = v;
        one.is_scalar = 1;
        one.f = 1.0;
        one.i = 1;
        if (be->ops->unary(be, cur, HIR_UN_NEG, &v, &a, e) ||
            be->ops->binary(be, cur, HIR_BIN_ADD, &v, &a, &one, e) ||
            be->ops->synchronize(be, e))
        {
            hir_diag_prepend(e->last, HIR_FAULT_ENV " corrupt");
            return hir_interp_locate(it, e);
        }
        done++;
    }
    if (!done && f->tensor >= 0)
        return hir_interp_fail(it, e, "%s corrupt=T%" PRId64 ": T%" PRId64 " is not an input held "
                           "by rank %d", HIR_FAULT_ENV, f->tensor, f->tensor,
                               hir_interp_cfg(it)->rank);
    return 0;
}

int hir_fault_before_stmt(void *ctx, hir_interp *it, const hir_stmt *s, hir_diag *e)
{
    (void)ctx;
    const hir_interp_config *cfg = hir_interp_cfg(it);
    hir_program *p = hir_interp_program(it);
    const char *txt = getenv(HIR_FAULT_ENV);
    if (!txt || !*txt || cfg->label)     /* never in the --check reference run */
        return 0;
    fault_spec f;
    if (parse_spec(txt, &f, e))
        return hir_interp_locate(it, e);
    /* A fault that can never fire would make a test pass for the wrong reason: the program's
     * first statement checks that the line exists, on every rank alike. */
    if (p->body.stmts.n && s == p->body.stmts.items[0]) {
        line_probe lp = {it, f.line, 0};
        hir_block_walk(&p->body, 0, probe_line, &lp);
        if (!lp.found)
            return hir_interp_fail(it, e, "%s=%s: no statement starts on line %ld", HIR_FAULT_ENV,
                               txt, f.line);
        if (f.rank >= cfg->size)
            return hir_interp_fail(it, e, "%s=%s: rank %ld does not exist (the job has %d rank%s)",
                               HIR_FAULT_ENV, txt, f.rank, cfg->size,
                               cfg->size == 1 ? "" : "s");
        if (f.kind == FAULT_CORRUPT && f.tensor >= 0) {
            hir_tensor *input = NULL;
            for (int i = 0; i < p->inputs.n; i++) {
                hir_tensor *t = hir_value_tensor(p->inputs.items[i]);
                if (t && t->number == f.tensor)
                    input = t;
            }
            if (!input)
                return hir_interp_fail(it, e, "%s corrupt=T%" PRId64 ": T%" PRId64 " is not a "
                                   "tensor input of the program", HIR_FAULT_ENV, f.tensor,
                                   f.tensor);
            /* the faulted rank must hold it; only that rank can tell, before it starts */
            hir_view v;
            if (f.rank == cfg->rank && !hir_interp_bound(it, input, &v))
                return hir_interp_fail(it, e, "%s corrupt=T%" PRId64 ": T%" PRId64 " is not an "
                                   "input held by rank %d", HIR_FAULT_ENV, f.tensor, f.tensor,
                                   cfg->rank);
        }
    }
    if (f.rank != cfg->rank || stmt_line(it, s) != f.line)
        return 0;
    if (f.kind == FAULT_SKIP && hir_interp_run_count(it) < 2)
        return 0;
    static const char *const what[] = {"exiting", "crashing (SIGSEGV)", "stalling forever",
                                       "corrupting its input shard", "skipping"};
    int line, col;
    hir_source_linecol(p->src, s->loc.begin, &line, &col);
    char prefix[48], msg[700];
    snprintf(prefix, sizeof prefix, "hir-run: rank %d", cfg->rank);
    snprintf(msg, sizeof msg, "%s: %s before %s:%d:%d (%s)", HIR_FAULT_ENV, what[f.kind],
             p->src->name, line, col, hir_ops[s->op].keyword ? hir_ops[s->op].keyword : "statement");
    fflush(stderr);
    hir_diag_write_fatal(prefix, NULL, msg);
    switch (f.kind) {
    case FAULT_EXIT:
        _exit(3);
    case FAULT_CRASH:
        /* the default action, as for a real fault: no handler (a sanitizer's, say) may
         * turn it into an orderly exit */
        signal(SIGSEGV, SIG_DFL);
        raise(SIGSEGV);
        _exit(128 + SIGSEGV);
    case FAULT_STALL:
        for (;;)
            pause();
    case FAULT_CORRUPT:
        return corrupt_inputs(it, &f, e);
    case FAULT_SKIP:
        return 1;
    case FAULT_NKINDS:
        break;
    }
    return 0;
}
