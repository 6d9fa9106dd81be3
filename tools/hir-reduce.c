/* hir-reduce — shrink a %HostIrContainer program while an interestingness command keeps
 * succeeding (exit 0), as creduce or mlir-reduce do for their languages. docs/hir-reduce.md.
 *
 * Every candidate is made on the IR: the current text is parsed, one edit is applied
 * (delete statements, unwrap a FOR or IF, drop a trailer definition or a header value, fold
 * an operand to a constant), the result is printed, and the printed text must parse again and
 * verify with no error and no more warnings than the current program before the command runs
 * on it. A candidate the command accepts becomes the current program. Passes repeat until none
 * of them changes anything. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dialect/hir.h"
#include "parser/parser.h"
#include "tools/cli.h"
#include "tools/common.h"
#include "tools/opts.h"
#include "tools/outfile.h"

static const char usage_text[] =
    "usage: hir-reduce [options] PROGRAM.hir COMMAND [ARG...]\n"
    "\n"
    "Shrinks PROGRAM while COMMAND stays 'interesting': COMMAND ARG... CANDIDATE.hir is run\n"
    "on every candidate and exit status 0 means interesting. Every candidate parses and\n"
    "verifies before COMMAND sees it (see docs/hir-reduce.md).\n"
    "\n"
    "options (before PROGRAM):\n"
    "  -o FILE          write the reduced program to FILE (default: stdout)\n"
    "  --timeout=SEC    a COMMAND run longer than SEC is killed and counts as not\n"
    "                   interesting (default 60)\n"
    "  --bind NAME=V    treat the free scalar NAME as bound when verifying (as hir-opt --bind)\n"
    "  --max-tests=N    stop after N runs of COMMAND (default: no limit)\n"
    "  --verbose, -v    say on stderr which edit each accepted candidate made\n"
    "  --completion=bash|zsh  print a shell completion script for hir-reduce\n"
    "  --help, -h, --version\n"
    "\n"
    "Options take their value as --opt=V or --opt V; -- ends the options (for a PROGRAM\n"
    "whose name starts with '-'). Every word after PROGRAM belongs to COMMAND.\n";

typedef struct reducer {
    char *cur;                   /* the current (smallest interesting) program's text */
    size_t curlen;
    int cur_warnings;            /* warnings the verifier gives on cur */
    char dir[64];                /* temporary directory of the candidate file */
    char path[96];               /* the candidate file */
    char **cmd;                  /* COMMAND ARG... CANDIDATE NULL */
    int ncmd;
    double timeout;
    long long max_tests, tests, accepted;
    bool verbose;
    const char *bound[64];
    char bound_names[64][128];
    int nbound;
    sigset_t stopset;            /* SIGINT, SIGTERM, SIGHUP: blocked, taken with sigtimedwait */
    sigset_t oldmask;            /* the mask before, which the command gets back */
    int stop_signal;             /* the one taken, 0 none */
} reducer;

/* ------------------------------------------------------------------ parsing candidates */

/* Parses text (len bytes, two NULs after) and verifies it: 0 with *p and the warning count,
 * -1 when it does not parse or verify (diagnostics kept, not printed). */
static int load(reducer *r, const char *name, const char *text, size_t len, hir_source *src,
                hir_program **p, int *warnings, bool report)
{
    hir_diag d;
    hir_diag_init(&d, report ? stderr : NULL);
    hir_source_init(src, name, text, len);
    *p = NULL;
    int rc = hir_parse(src, &d, p);
    hir_verify_opts vo = {false, r->bound, r->nbound};
    if (!rc && hir_program_verify(*p, &vo, &d))
        rc = -1;
    if (rc == 0 && d.errors)
        rc = -1;
    if (report)
        hir_diag_flush(&d);
    *warnings = d.warnings;
    hir_diag_fini(&d);
    if (rc) {
        hir_program_free(*p);
        *p = NULL;
        hir_source_fini(src);
    }
    return rc ? -1 : 0;
}

/* A malloc'd copy of text with the two NULs the scanner needs. */
static char *padded(const char *text, size_t len)
{
    char *s = malloc(len + 2);
    if (!s) {
        fprintf(stderr, "hir-reduce: error: out of memory\n");
        exit(1);
    }
    memcpy(s, text, len);
    s[len] = s[len + 1] = 0;
    return s;
}

static char *print_program(const hir_program *p, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f) {
        fprintf(stderr, "hir-reduce: error: out of memory\n");
        exit(1);
    }
    hir_program_print(p, f);
    if (fclose(f)) {
        fprintf(stderr, "hir-reduce: error: out of memory\n");
        exit(1);
    }
    return buf;
}

/* ------------------------------------------------------------------ running the command */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int write_file(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t k = fwrite(text, 1, len, f);
    return (fclose(f) || k != len) ? -1 : 0;
}

/* A stop signal (SIGINT, SIGTERM, SIGHUP) that arrived, waiting up to ns nanoseconds for one:
 * they are blocked from the start (main), so none is lost and none interrupts a step half
 * done. Records it in r->stop_signal and returns it, or 0. */
static int take_stop_signal(reducer *r, long ns)
{
    struct timespec ts = {0, ns};
    int sig = sigtimedwait(&r->stopset, NULL, &ts);
    if (sig > 0)
        r->stop_signal = sig;
    return sig > 0 ? sig : 0;
}

/* Hands the stop signal to the command's process group, gives it 2 s to end, then kills what
 * is left of the group. */
static void stop_command(pid_t pid, int sig)
{
    kill(-pid, sig);
    int status;
    double end = now() + 2;
    while (waitpid(pid, &status, WNOHANG) == 0 && now() < end) {
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
}

/* Runs the command on `path`: 0 when it exits 0 in time, 1 when it does not, 127 when it exits
 * 127 (msg says it may not exist), -1 when it cannot be started (msg says why), -2 when a stop
 * signal came (before or while it ran; it was handed to the command's group). The command
 * runs in a process group of its own, so a timeout or a stop ends everything it started. */
static int interesting(reducer *r, char *msg, size_t msglen)
{
    if (take_stop_signal(r, 0))
        return -2;
    r->tests++;
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(msg, msglen, "cannot start '%s': %s", r->cmd[0], strerror(errno));
        return -1;
    }
    if (pid == 0) {
        setpgid(0, 0);
        sigprocmask(SIG_SETMASK, &r->oldmask, NULL);
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) {
            dup2(null, 0);
            dup2(null, 1);
            dup2(null, 2);
        }
        execvp(r->cmd[0], r->cmd);
        _exit(127);
    }
    setpgid(pid, pid);
    double end = now() + r->timeout;
    int status = 0;
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid)
            break;
        if (w < 0 && errno != EINTR) {
            snprintf(msg, msglen, "waiting for '%s': %s", r->cmd[0], strerror(errno));
            return -1;
        }
        if (now() > end) {
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            if (r->verbose)
                fprintf(stderr, "hir-reduce: '%s' ran past --timeout=%g: not interesting\n",
                        r->cmd[0], r->timeout);
            return 1;
        }
        int sig = take_stop_signal(r, 5 * 1000 * 1000);   /* also the poll's 5 ms sleep */
        if (sig) {
            stop_command(pid, sig);
            return -2;
        }
    }
    kill(-pid, SIGKILL);   /* whatever it left running in its group */
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
        snprintf(msg, msglen, "'%s' exited 127 (not found or not executable?)", r->cmd[0]);
        return 127;
    }
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

/* ------------------------------------------------------------------ edits */

/* An edit changes the freshly parsed program p; it returns false when it does not apply
 * (then no candidate is tried). */
typedef bool (*edit_fn)(hir_program *p, const void *ctx);

/* Statements are numbered in preorder over the whole program (a FOR before its body, an IF's
 * then-body before its else-body); the numbering of the same text is the same every time. */
static int count_block(const hir_block *b)
{
    int n = 0;
    for (int i = 0; i < hir_block_size(b); i++) {
        const hir_stmt *s = hir_block_at(b, i);
        n += 1 + count_block(&s->body) + count_block(&s->else_body);
    }
    return n;
}

typedef struct range { int lo, hi; } range;   /* preorder numbers [lo, hi) */

/* Removes every statement numbered in [lo, hi) (with its bodies). */
static bool delete_in(hir_block *b, int *idx, const range *rg)
{
    bool changed = false;
    int k = 0;
    for (int i = 0; i < b->stmts.n; i++) {
        hir_stmt *s = b->stmts.items[i];
        int me = (*idx)++;
        if (me >= rg->lo && me < rg->hi) {
            *idx += count_block(&s->body) + count_block(&s->else_body);
            changed = true;
            continue;
        }
        changed |= delete_in(&s->body, idx, rg);
        changed |= delete_in(&s->else_body, idx, rg);
        b->stmts.items[k++] = s;
    }
    b->stmts.n = k;
    return changed;
}

static bool edit_delete(hir_program *p, const void *ctx)
{
    int idx = 0;
    return delete_in(&p->body, &idx, ctx);
}

/* Finds statement number `want`: its block and position. */
static bool find_stmt(hir_block *b, int *idx, int want, hir_block **blk, int *pos)
{
    for (int i = 0; i < hir_block_size(b); i++) {
        hir_stmt *s = hir_block_at(b, i);
        if ((*idx)++ == want) {
            *blk = b;
            *pos = i;
            return true;
        }
        if (find_stmt(&s->body, idx, want, blk, pos) ||
            find_stmt(&s->else_body, idx, want, blk, pos))
            return true;
    }
    return false;
}

static hir_stmt *stmt_numbered(hir_program *p, int want, hir_block **blk, int *pos)
{
    int idx = 0;
    if (!find_stmt(&p->body, &idx, want, blk, pos))
        return NULL;
    return hir_block_at(*blk, *pos);
}

typedef struct unwrap { int stmt; bool else_body; } unwrap;

/* Replaces a FOR by its body, or an IF by its then- or else-body. */
static bool edit_unwrap(hir_program *p, const void *ctx)
{
    const unwrap *u = ctx;
    hir_block *blk;
    int pos;
    hir_stmt *s = stmt_numbered(p, u->stmt, &blk, &pos);
    if (!s || !(hir_ops[s->op].flags & HIR_OPF_REGION))
        return false;
    if (u->else_body && s->op != HIR_OP_IF)
        return false;
    hir_block *inner = u->else_body ? &s->else_body : &s->body;
    hir_ptrvec_remove(&blk->stmts, pos);
    for (int i = 0; i < hir_block_size(inner); i++)
        hir_block_insert(p, blk, pos + i, hir_block_at(inner, i));
    return true;
}

typedef enum list_kind { L_INDEX_DEFS, L_HOSTUNITS, L_INPUTS, L_OUTPUTS } list_kind;
static const char *const list_names[] = {"index definition", "HostUnit", "input", "output"};
typedef struct list_edit { list_kind list; int at; } list_edit;

static hir_ptrvec *list_of(hir_program *p, list_kind k)
{
    switch (k) {
    case L_INDEX_DEFS: return &p->index_defs;
    case L_HOSTUNITS: return &p->hostunits;
    case L_INPUTS: return &p->inputs;
    default: return &p->outputs;
    }
}

static bool edit_list_remove(hir_program *p, const void *ctx)
{
    const list_edit *e = ctx;
    hir_ptrvec *v = list_of(p, e->list);
    if (e->at >= v->n)
        return false;
    hir_ptrvec_remove(v, e->at);
    if (e->list == L_INDEX_DEFS && v->n == 0)
        p->has_index_defs = false;
    return true;
}

/* Scalar operands a constant can replace: a statement's scalar inputs, a select index, an
 * allocation size, a host loop's bounds, a ShardByStream index. */
static int scalar_slots(hir_stmt *s, hir_scalar ***slots, int max)
{
    int n = 0;
    for (int i = 0; i < s->nin && n < max; i++)
        if (s->in[i] && s->in[i]->kind == HIR_VAL_SCALAR)
            slots[n++] = (hir_scalar **)&s->in[i];
    switch (s->op) {
    case HIR_OP_ALIAS_SELECT:
    case HIR_OP_SELECT:
        if (n < max && s->u.sel.index)
            slots[n++] = &s->u.sel.index;
        break;
    case HIR_OP_ALLOCATE:
    case HIR_OP_HIR_ALLOCATE:
        if (n < max && s->u.alloc.size)
            slots[n++] = &s->u.alloc.size;
        break;
    case HIR_OP_HOST_FOR:
        if (n < max && s->u.hfor.start)
            slots[n++] = &s->u.hfor.start;
        if (n < max && s->u.hfor.stop)
            slots[n++] = &s->u.hfor.stop;
        break;
    case HIR_OP_SHARD_BY_STREAM:
        if (n < max && s->u.stream_index)
            slots[n++] = &s->u.stream_index;
        break;
    default:
        break;
    }
    return n;
}

typedef struct fold { int stmt, slot; int64_t value; bool use_value; } fold;

/* Replaces one scalar operand by a literal: its constant value when it folds to one, else
 * the value given (0, then 1). */
static bool edit_fold(hir_program *p, const void *ctx)
{
    const fold *f = ctx;
    hir_block *blk;
    int pos;
    hir_stmt *s = stmt_numbered(p, f->stmt, &blk, &pos);
    hir_scalar **slots[16];
    if (!s || f->slot >= scalar_slots(s, slots, 16))
        return false;
    hir_scalar *old = *slots[f->slot];
    if (hir_scalar_is_literal(old) || old->kind == HIR_SC_FLOAT)
        return false;
    if (!hir_dtype_is_int(old->dtype))
        return false;
    int64_t v;
    if (!f->use_value) {
        if (!hir_scalar_const(old, &v))
            return false;
    } else {
        v = f->value;
    }
    *slots[f->slot] = hir_scalar_int(p, v);
    return true;
}

/* ------------------------------------------------------------------ the search */

/* Tries one edit on the current program: 1 when the command found the candidate interesting
 * (it is now current), 0 when not (or the edit did not apply or did not verify), -1 when
 * the command could not be run. */
static int attempt(reducer *r, edit_fn fn, const void *ctx, const char *what)
{
    if (r->max_tests && r->tests >= r->max_tests)
        return 0;
    hir_source src;
    hir_program *p;
    int w;
    char *text = padded(r->cur, r->curlen);
    if (load(r, "<current>", text, r->curlen, &src, &p, &w, false)) {
        free(text);
        fprintf(stderr, "hir-reduce: error: the current program no longer parses\n");
        return -1;
    }
    bool applied = fn(p, ctx);
    size_t len = 0;
    char *cand = applied ? print_program(p, &len) : NULL;
    hir_program_free(p);
    hir_source_fini(&src);
    free(text);
    if (!applied)
        return 0;
    if (len == r->curlen && !memcmp(cand, r->cur, len)) {
        free(cand);
        return 0;
    }
    char *ctext = padded(cand, len);
    int bad = load(r, "<candidate>", ctext, len, &src, &p, &w, false);
    if (!bad) {
        hir_program_free(p);
        hir_source_fini(&src);
    }
    free(ctext);
    if (bad || w > r->cur_warnings) {
        free(cand);
        return 0;
    }
    if (write_file(r->path, cand, len)) {
        fprintf(stderr, "hir-reduce: error: cannot write %s: %s\n", r->path, strerror(errno));
        free(cand);
        return -1;
    }
    char msg[256];
    int rc = interesting(r, msg, sizeof msg);
    if (rc < 0) {                /* a stop signal, or no process could be started */
        if (rc == -1)
            fprintf(stderr, "hir-reduce: error: %s\n", msg);
        free(cand);
        return -1;
    }
    if (rc == 127 && r->verbose)  /* after the first run: a failing command is not fatal */
        fprintf(stderr, "hir-reduce: %s: not interesting\n", msg);
    if (rc) {
        free(cand);
        return 0;
    }
    free(r->cur);
    r->cur = cand;
    r->curlen = len;
    r->cur_warnings = w;
    r->accepted++;
    if (r->verbose)
        fprintf(stderr, "hir-reduce: %s (now %zu bytes)\n", what, len);
    return 1;
}

static int current_count(reducer *r, int (*measure)(const hir_program *))
{
    hir_source src;
    hir_program *p;
    int w;
    char *text = padded(r->cur, r->curlen);
    int n = -1;
    if (!load(r, "<current>", text, r->curlen, &src, &p, &w, false)) {
        n = measure(p);
        hir_program_free(p);
        hir_source_fini(&src);
    }
    free(text);
    return n;
}

static int measure_stmts(const hir_program *p) { return count_block(&p->body); }
static int measure_index_defs(const hir_program *p) { return p->index_defs.n; }
static int measure_hostunits(const hir_program *p) { return p->hostunits.n; }
static int measure_inputs(const hir_program *p) { return p->inputs.n; }
static int measure_outputs(const hir_program *p) { return p->outputs.n; }

/* Delta debugging over the preorder statement numbers: remove chunks of n/2, n/4, ... 1
 * statements; after a removal the same position is tried again with the same chunk size.
 * Returns the number of accepted candidates, or -1. */
static int reduce_statements(reducer *r)
{
    int total = 0, n = current_count(r, measure_stmts);
    if (n <= 0)
        return n;
    for (int chunk = n > 1 ? n / 2 : 1;; chunk /= 2) {
        if (chunk < 1)
            chunk = 1;
        bool any = false;
        for (int lo = 0; lo < n;) {
            range rg = {lo, lo + chunk};
            char what[96];
            snprintf(what, sizeof what, "deleted statements %d..%d", lo, lo + chunk - 1);
            int rc = attempt(r, edit_delete, &rg, what);
            if (rc < 0)
                return -1;
            if (rc) {
                any = true;
                total++;
                n = current_count(r, measure_stmts);
            } else {
                lo += chunk;
            }
        }
        if (chunk == 1 && !any)
            break;
        if (chunk == 1)
            continue;   /* single deletions again until none succeeds */
    }
    return total;
}

static int reduce_regions(reducer *r)
{
    int total = 0, n = current_count(r, measure_stmts);
    for (int i = 0; i < n; i++) {
        for (int e = 0; e < 2; e++) {
            unwrap u = {i, e == 1};
            char what[96];
            snprintf(what, sizeof what, "unwrapped statement %d (%s body)", i,
                     e ? "else" : "its");
            int rc = attempt(r, edit_unwrap, &u, what);
            if (rc < 0)
                return -1;
            if (rc) {
                total++;
                n = current_count(r, measure_stmts);
                break;
            }
        }
    }
    return total;
}

static int reduce_lists(reducer *r)
{
    static int (*const measures[])(const hir_program *) = {
        measure_index_defs, measure_hostunits, measure_inputs, measure_outputs};
    int total = 0;
    for (int k = 0; k < 4; k++) {
        int n = current_count(r, measures[k]);
        for (int i = n - 1; i >= 0; i--) {   /* from the back: earlier positions stay put */
            list_edit e = {(list_kind)k, i};
            char what[96];
            snprintf(what, sizeof what, "removed %s %d", list_names[k], i);
            int rc = attempt(r, edit_list_remove, &e, what);
            if (rc < 0)
                return -1;
            total += rc;
        }
    }
    return total;
}

static int reduce_folds(reducer *r)
{
    int total = 0, n = current_count(r, measure_stmts);
    for (int i = 0; i < n; i++)
        for (int slot = 0; slot < 16; slot++) {
            static const fold tries[] = {{0, 0, 0, false}, {0, 0, 0, true}, {0, 0, 1, true}};
            for (size_t t = 0; t < sizeof tries / sizeof tries[0]; t++) {
                fold f = tries[t];
                f.stmt = i;
                f.slot = slot;
                char what[96];
                snprintf(what, sizeof what, "replaced operand %d of statement %d by a constant",
                         slot, i);
                int rc = attempt(r, edit_fold, &f, what);
                if (rc < 0)
                    return -1;
                if (rc) {
                    total++;
                    break;
                }
            }
        }
    return total;
}

/* ------------------------------------------------------------------ command line */

static void cleanup(reducer *r)
{
    if (r->path[0])
        unlink(r->path);
    if (r->dir[0])
        rmdir(r->dir);
}

/* One --bind NAME=INTEGER (x) recorded in r; 2 (usage error) when it is not that. */
static int add_bind(reducer *r, const char *x)
{
    char why[128];
    long long v;
    const char *eq = strchr(x, '=');
    if (!eq || eq == x || hir_opt_int(eq + 1, LLONG_MIN, LLONG_MAX, &v, why, sizeof why) ||
        r->nbound == 64 || eq - x >= (ptrdiff_t)sizeof r->bound_names[0])
        return hir_tool_usage_error("hir-reduce", "--bind needs NAME=INTEGER, not '%s'", x);
    snprintf(r->bound_names[r->nbound], sizeof r->bound_names[0], "%.*s", (int)(eq - x), x);
    r->bound[r->nbound] = r->bound_names[r->nbound];
    r->nbound++;
    return 0;
}

enum { OPT_OUTPUT = 1, OPT_TIMEOUT, OPT_MAX_TESTS, OPT_BIND, OPT_VERBOSE, OPT_HELP, OPT_VERSION,
       OPT_COMPLETION };

/* hir-reduce's options (tools/cli.h: --opt=V or --opt V, -- ends them); they come before
 * PROGRAM, and every word after PROGRAM belongs to COMMAND */
static const hir_cli_option reduce_opts[] = {
    {"-o", NULL, HIR_CLI_VALUE, OPT_OUTPUT, "@file"},
    {"--timeout", NULL, HIR_CLI_VALUE, OPT_TIMEOUT, NULL},
    {"--max-tests", NULL, HIR_CLI_VALUE, OPT_MAX_TESTS, NULL},
    {"--bind", NULL, HIR_CLI_VALUE, OPT_BIND, NULL},
    {"--verbose", "-v", HIR_CLI_FLAG, OPT_VERBOSE, NULL},
    {"--help", "-h", HIR_CLI_FLAG, OPT_HELP, NULL},
    {"--version", NULL, HIR_CLI_FLAG, OPT_VERSION, NULL},
    {"--completion", NULL, HIR_CLI_VALUE, OPT_COMPLETION, "bash zsh"},
    {NULL, NULL, 0, 0, NULL},
};

/* One option with its value: -1 to go on, else the exit status. */
static int reduce_option(reducer *r, int id, const char *x, const char **output)
{
    char why[128];
    long long v;
    switch (id) {
    case OPT_HELP:
        fputs(usage_text, stdout);
        return 0;
    case OPT_VERSION:
        hir_tool_version(stdout, "hir-reduce");
        return 0;
    case OPT_COMPLETION:
        if (hir_cli_completion(stdout, "hir-reduce", reduce_opts, NULL, "@file", x))
            return hir_tool_usage_error("hir-reduce", "--completion takes bash or zsh, not '%s'", x);
        return 0;
    case OPT_OUTPUT:
        *output = x;
        return -1;
    case OPT_TIMEOUT:
        if (hir_opt_double(x, 0, 1e7, &r->timeout, why, sizeof why))
            return hir_tool_usage_error("hir-reduce", "--timeout needs %s", why);
        return -1;
    case OPT_MAX_TESTS:
        if (hir_opt_int(x, 1, LLONG_MAX, &v, why, sizeof why))
            return hir_tool_usage_error("hir-reduce", "--max-tests needs %s", why);
        r->max_tests = v;
        return -1;
    case OPT_BIND:
        return add_bind(r, x) ? 2 : -1;
    default:           /* OPT_VERBOSE */
        r->verbose = true;
        return -1;
    }
}

/* The options before PROGRAM, PROGRAM (*input) and where COMMAND starts (*cmd_at). Returns
 * the exit status when the run ends here (--help, --version, a usage error), else -1. */
static int parse_args(int argc, char **argv, reducer *r, const char **output,
                      const char **input, int *cmd_at)
{
    hir_cli cl;
    hir_cli_init(&cl, "hir-reduce", reduce_opts, argc, argv);
    const char *x;
    int id, rc;
    while (!*input && (id = hir_cli_next(&cl, &x)) != HIR_CLI_END) {
        if (id == HIR_CLI_USAGE)
            return 2;
        if (id == HIR_CLI_OPERAND)
            *input = x;
        else if ((rc = reduce_option(r, id, x, output)) >= 0)
            return rc;
    }
    if (!*input)
        return hir_tool_usage_error("hir-reduce", "no program given");
    if (cl.next == argc)
        return hir_tool_usage_error("hir-reduce", "no interestingness command given after %s", *input);
    *cmd_at = cl.next;
    return -1;
}

/* PROGRAM read, parsed and verified, and printed into r->cur; *before its statement count. */
static int load_input(reducer *r, const char *input, int *before)
{
    char err[512];
    hir_input in;     /* read: the text is reduced into r->cur, then not needed (and small) */
    if (hir_input_read(&in, input, 0, err, sizeof err)) {
        fprintf(stderr, "hir-reduce: error: %s\n", err);
        return 1;
    }
    hir_source src;
    hir_program *p;
    if (load(r, strcmp(input, "-") ? input : "<stdin>", in.text, in.len, &src, &p,
             &r->cur_warnings, true)) {
        fprintf(stderr, "hir-reduce: error: %s does not parse and verify: nothing to reduce\n",
                input);
        hir_input_fini(&in);
        return 1;
    }
    r->cur = print_program(p, &r->curlen);
    *before = count_block(&p->body);
    hir_program_free(p);
    hir_source_fini(&src);
    hir_input_fini(&in);
    return 0;
}

/* COMMAND ARG... CANDIDATE in r->cmd, the candidate file in a new temporary directory. */
static int make_command(reducer *r, int argc, char **argv, int i)
{
    r->ncmd = argc - i + 1;
    r->cmd = calloc((size_t)r->ncmd + 1, sizeof *r->cmd);
    if (!r->cmd) {
        fprintf(stderr, "hir-reduce: error: out of memory\n");
        return 1;
    }
    for (int k = i; k < argc; k++)
        r->cmd[k - i] = argv[k];
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp || strlen(tmp) > 40)
        tmp = "/tmp";
    snprintf(r->dir, sizeof r->dir, "%s/hir-reduce.XXXXXX", tmp);
    if (!mkdtemp(r->dir)) {
        fprintf(stderr, "hir-reduce: error: cannot make a temporary directory in %s: %s\n", tmp,
                strerror(errno));
        r->dir[0] = 0;
        free(r->cmd);
        free(r->cur);
        return 1;
    }
    snprintf(r->path, sizeof r->path, "%s/candidate.hir", r->dir);
    r->cmd[r->ncmd - 1] = r->path;
    return 0;
}

/* The program written as the first candidate, and COMMAND checked to find it interesting. */
static int check_start(reducer *r, const char *input)
{
    char err[512];
    if (write_file(r->path, r->cur, r->curlen)) {
        fprintf(stderr, "hir-reduce: error: cannot write %s: %s\n", r->path, strerror(errno));
        return -1;
    }
    int rc = interesting(r, err, sizeof err);
    if (rc == -2)
        return -1;
    if (rc < 0 || rc == 127) {
        fprintf(stderr, "hir-reduce: error: %s\n", err);
        return -1;
    }
    if (rc) {
        fprintf(stderr,
                "hir-reduce: error: %s is not interesting to begin with: '%s' did not exit 0 on "
                "it\n",
                input, r->cmd[0]);
        return -1;
    }
    return 0;
}

/* Rounds of every pass until one changes nothing (or --max-tests is reached). */
static int reduce_rounds(reducer *r)
{
    for (int round = 1;; round++) {
        int changed = 0, k;
        if ((k = reduce_statements(r)) < 0 || (changed += k, (k = reduce_regions(r)) < 0) ||
            (changed += k, (k = reduce_lists(r)) < 0) ||
            (changed += k, (k = reduce_folds(r)) < 0))
            return -1;
        changed += k;
        if (r->verbose)
            fprintf(stderr, "hir-reduce: round %d: %d edits accepted\n", round, changed);
        if (!changed || (r->max_tests && r->tests >= r->max_tests))
            return 0;
    }
}

static const char *signal_name(int sig)
{
    return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "SIGHUP";
}

/* The reduced program (the best so far when a stop signal or an error ended the rounds) to
 * -o, and the summary line. 0, or 1 when the output cannot be written. */
static int finish(reducer *r, const char *output, int before, size_t before_bytes, int failed)
{
    char err[512];
    if (hir_tool_write_output(output, r->cur, r->curlen, err, sizeof err)) {
        fprintf(stderr, "hir-reduce: error: %s\n", err);
        return 1;
    }
    char why[96] = "";
    if (r->stop_signal)
        snprintf(why, sizeof why, " (stopped by %s: the best program so far)",
                 signal_name(r->stop_signal));
    else if (failed)
        snprintf(why, sizeof why, " (stopped by the error above: the best program so far)");
    else if (r->max_tests && r->tests >= r->max_tests)
        snprintf(why, sizeof why, " (stopped at --max-tests)");
    fprintf(stderr, "hir-reduce: %d statements (%zu bytes) -> %d statements (%zu bytes), %lld "
                    "tests, %lld accepted%s\n",
            before, before_bytes, current_count(r, measure_stmts), r->curlen, r->tests,
            r->accepted, why);
    return 0;
}

int main(int argc, char **argv)
{
    reducer r = {0};
    r.timeout = 60;
    const char *output = NULL, *input = NULL;
    int i = 0;
    int code = parse_args(argc, argv, &r, &output, &input, &i);
    if (code >= 0)
        return code;
    /* a stop signal is taken between steps (interesting), handed to the command's process
     * group, and ends the run with the best program so far written (finish) */
    sigemptyset(&r.stopset);
    sigaddset(&r.stopset, SIGINT);
    sigaddset(&r.stopset, SIGTERM);
    sigaddset(&r.stopset, SIGHUP);
    sigprocmask(SIG_BLOCK, &r.stopset, &r.oldmask);

    int before;
    if (load_input(&r, input, &before))
        return 1;
    size_t before_bytes = r.curlen;
    if (make_command(&r, argc, argv, i))
        return 1;

    int status = 1;
    if (check_start(&r, input)) {
        if (r.stop_signal)
            fprintf(stderr, "hir-reduce: stopped by %s before %s was shown interesting: "
                    "nothing written\n", signal_name(r.stop_signal), input);
    } else {
        int failed = reduce_rounds(&r);
        status = finish(&r, output, before, before_bytes, failed);
        if (!status && failed)
            status = 1;
    }
    if (r.stop_signal)
        status = 128 + r.stop_signal;
    cleanup(&r);
    free(r.cmd);
    free(r.cur);
    return status;
}
