/* passes.c — pass registry lookup, textual pipelines and the pipeline runner. */
#include "passes/passes.h"
#include "passes/ir_util.h"

#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

const char *hir_pass_arg(const hir_pass_args *a, const char *key, const char *dflt)
{
    for (int i = 0; a && i < a->n; i++)
        if (!strcmp(a->key[i], key))
            return a->val[i];
    return dflt;
}

const char *hir_pass_opt(const hir_pass_option *opts, const hir_pass_args *a, const char *key)
{
    for (const hir_pass_option *o = opts; o && o->name; o++)
        if (!strcmp(o->name, key))
            return hir_pass_arg(a, key, o->dflt);
    return hir_pass_arg(a, key, NULL);
}

const hir_pass_info *hir_pass_find(const char *name)
{
    for (const hir_pass_info *p = hir_pass_table; p->name; p++)
        if (!strcmp(p->name, name))
            return p;
    return NULL;
}

size_t hir_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (lb > 63)
        return la > lb ? la : lb;         /* long words are never suggestions */
    size_t row[64];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

/* Close enough to be a misspelling: at most a third of the longer word's letters differ. */
static bool close_enough(const char *word, const char *cand, size_t dist)
{
    size_t n = strlen(word) > strlen(cand) ? strlen(word) : strlen(cand);
    return dist > 0 && dist * 3 <= n;
}

const hir_pass_info *hir_pass_suggest(const char *name)
{
    const hir_pass_info *best = NULL;
    size_t bd = (size_t)-1;
    for (const hir_pass_info *p = hir_pass_table; p->name; p++) {
        size_t dist = hir_edit_distance(name, p->name);
        if (dist < bd && close_enough(name, p->name, dist)) {
            bd = dist;
            best = p;
        }
    }
    return best;
}

const char *hir_pass_option_suggest(const hir_pass_info *p, const char *key)
{
    const char *best = NULL;
    size_t bd = (size_t)-1;
    for (const hir_pass_option *o = p->options; o && o->name; o++) {
        size_t dist = hir_edit_distance(key, o->name);
        if (dist < bd && close_enough(key, o->name, dist)) {
            bd = dist;
            best = o->name;
        }
    }
    return best;
}

static bool count_one(hir_stmt *s, int depth, void *ctx)
{
    (void)s, (void)depth;
    ++*(long *)ctx;
    return true;
}

long hir_program_count_stmts(hir_program *p)
{
    long n = 0;
    hir_block_walk(&p->body, 0, count_one, &n);
    return n;
}

void hir_pass_list(FILE *f)
{
    fputs("passes (run in command-line order; --pass-pipeline='a,b{key=value}' or 'a,b,key=value'\n"
          "is the same; options belong to their pass, nothing is carried from pass to pass but the\n"
          "program):\n", f);
    for (const hir_pass_info *p = hir_pass_table; p->name; p++) {
        fprintf(f, "  --%-26s %s\n", p->name, p->summary);
        for (const hir_pass_option *o = p->options; o && o->name; o++) {
            char head[64];
            snprintf(head, sizeof head, "%s=%s", o->name,
                     o->type == HIR_PASS_OPT_ENUM ? o->choices : "NUMBER");
            fprintf(f, "      %-24s %s", head, o->help);
            if (o->required)
                fputs(" (required)", f);
            if (o->dflt)
                fprintf(f, " (default %s)", o->dflt);
            fputc('\n', f);
        }
        if (p->primary)
            fprintf(f, "      (--%s=VALUE sets %s)\n", p->name, p->primary);
    }
}

static char *keep(hir_pipeline *pl, const char *s, size_t n)
{
    /* strings are chained in one list of malloc'd blocks freed by hir_pipeline_fini */
    char *b = malloc(sizeof(char *) + n + 1);
    if (!b)
        return NULL;              /* callers report "out of memory" */
    memcpy(b, &pl->storage, sizeof(char *));
    pl->storage = b;
    char *str = b + sizeof(char *);
    memcpy(str, s, n);
    str[n] = 0;
    return str;
}

void hir_pipeline_fini(hir_pipeline *pl)
{
    char *b = pl->storage;
    while (b) {
        char *next;
        memcpy(&next, b, sizeof(char *));
        free(b);
        b = next;
    }
    pl->storage = NULL;
    pl->n = 0;
}

static const hir_pass_option *find_option(const hir_pass_info *p, const char *key, size_t kl)
{
    for (const hir_pass_option *o = p->options; o && o->name; o++)
        if (strlen(o->name) == kl && !strncmp(o->name, key, kl))
            return o;
    return NULL;
}

/* The canonical spelling of `v` (length n) among o's choices, or NULL. */
static const char *choice_of(const hir_pass_option *o, const char *v, size_t n, size_t *len)
{
    for (const char *c = o->choices; *c;) {
        size_t l = strcspn(c, "|");
        if (l == n && !strncasecmp(c, v, n)) {
            *len = l;
            return c;
        }
        c += l + (c[l] == '|');
    }
    return NULL;
}

/* The choice closest to `v` when close enough to be a misspelling ("cdua" -> "cuda"). */
static void suggest_choice(const hir_pass_option *o, const char *v, char *out, size_t outlen)
{
    size_t bd = (size_t)-1;
    out[0] = 0;
    for (const char *c = o->choices; *c;) {
        size_t l = strcspn(c, "|");
        char cand[64];
        snprintf(cand, sizeof cand, "%.*s", (int)l, c);
        size_t dist = hir_edit_distance(v, cand);
        if (dist < bd && close_enough(v, cand, dist)) {
            bd = dist;
            snprintf(out, outlen, "%s", cand);
        }
        c += l + (c[l] == '|');
    }
}

/* Sets option key=v (lengths kl, vl) of pipeline entry i after checking it against the
 * pass's table; a repeated key replaces the earlier value. */
static int set_option(hir_pipeline *pl, int i, const char *key, size_t kl, const char *v, size_t vl,
                      hir_diag *d)
{
    const hir_pass_info *p = pl->pass[i];
    hir_pass_args *a = &pl->args[i];
    char kbuf[64], vbuf[128];
    snprintf(kbuf, sizeof kbuf, "%.*s", (int)(kl < 63 ? kl : 63), key);
    snprintf(vbuf, sizeof vbuf, "%.*s", (int)(vl < 127 ? vl : 127), v);
    const hir_pass_option *o = find_option(p, key, kl);
    if (!o) {
        const char *near = hir_pass_option_suggest(p, kbuf);
        if (near)
            hir_diag_error(d, "pass '%s' has no option '%s'; did you mean '%s'? (see --list-passes)",
                     p->name, kbuf, near);
        else if (hir_pass_find(kbuf))
            hir_diag_error(d, "pass '%s' has no option '%s' (a key=value item sets an option of "
                     "the pass before it; to run pass '%s' write '%s{...}')", p->name, kbuf, kbuf, kbuf);
        else if (!p->options || !p->options[0].name)
            hir_diag_error(d, "pass '%s' has no option '%s' (it takes no options)", p->name, kbuf);
        else
            hir_diag_error(d, "pass '%s' has no option '%s' (see --list-passes)", p->name, kbuf);
        return -1;
    }
    if (vl == 0) {
        hir_diag_error(d, "pass '%s': option '%s' needs a value", p->name, o->name);
        return -1;
    }
    const char *val = v;
    size_t len = vl;
    if (o->type == HIR_PASS_OPT_ENUM) {
        if (!(val = choice_of(o, v, vl, &len))) {
            char near[64];
            suggest_choice(o, vbuf, near, sizeof near);
            if (near[0])
                hir_diag_error(d, "pass '%s': option '%s' must be one of %s, not '%s'; did you mean '%s'?",
                         p->name, o->name, o->choices, vbuf, near);
            else
                hir_diag_error(d, "pass '%s': option '%s' must be one of %s, not '%s'", p->name,
                         o->name, o->choices, vbuf);
            return -1;
        }
    } else {
        char *end = NULL;
        double x = vl < sizeof vbuf - 1 ? strtod(vbuf, &end) : -1;
        if (!end || *end || !(x >= 0) || x > 1e300 || strchr(vbuf, 'x') || strchr(vbuf, 'X')) {
            hir_diag_error(d, "pass '%s': option '%s' must be a non-negative decimal number, not '%s'",
                     p->name, o->name, vbuf);
            return -1;
        }
    }
    int k = 0;
    while (k < a->n && strcmp(a->key[k], o->name))
        k++;
    if (k == HIR_PASS_MAX_ARGS) {
        hir_diag_error(d, "too many options for pass '%s'", p->name);
        return -1;
    }
    char *kept = keep(pl, val, len);
    if (!kept) {
        hir_diag_error(d, "out of memory");
        return -1;
    }
    a->key[k] = o->name;
    a->val[k] = kept;
    if (k == a->n)
        a->n++;
    return 0;
}

static int add_pass(hir_pipeline *pl, const hir_pass_info *pass, hir_diag *d)
{
    if (pl->n == 64) {
        hir_diag_error(d, "too many passes in the pipeline (at most 64)");
        return -1;
    }
    memset(&pl->args[pl->n], 0, sizeof pl->args[pl->n]);
    pl->pass[pl->n++] = pass;
    return 0;
}

int hir_pipeline_add(hir_pipeline *pl, const hir_pass_info *pass, const char *value, hir_diag *d)
{
    if (value && !pass->primary) {
        hir_diag_error(d, "pass '%s' takes no value", pass->name);
        return -1;
    }
    if (add_pass(pl, pass, d))
        return -1;
    if (value && set_option(pl, pl->n - 1, pass->primary, strlen(pass->primary), value,
                            strlen(value), d)) {
        pl->n--;
        return -1;
    }
    return 0;
}

int hir_pipeline_parse(hir_pipeline *pl, const char *text, hir_diag *d)
{
    const char *s = text;
    int first = pl->n;           /* a short-form key=value binds to a pass of this text */
    while (*s) {
        while (*s == ' ' || *s == ',')
            s++;
        if (!*s)
            break;
        size_t n = strcspn(s, "{,= }");
        if (s[n] == '=') {
            /* short form: "pass,key=value" sets an option of the pass before it */
            const char *v = s + n + 1;
            size_t vl = strcspn(v, ", {}");
            if (pl->n == first) {
                hir_diag_error(d, "option '%.*s' comes before any pass in pipeline '%s' "
                         "(write 'PASS,%.*s' or 'PASS{%.*s}')", (int)(v + vl - s), s, text,
                         (int)(v + vl - s), s, (int)(v + vl - s), s);
                return -1;
            }
            if (n == 0) {
                hir_diag_error(d, "missing option name before '=' in pipeline '%s'", text);
                return -1;
            }
            if (set_option(pl, pl->n - 1, s, n, v, vl, d))
                return -1;
            s = v + vl;
        } else {
            char name[64];
            if (n == 0 || n >= sizeof name) {
                hir_diag_error(d, "bad pass name in pipeline '%s'", text);
                return -1;
            }
            memcpy(name, s, n);
            name[n] = 0;
            const hir_pass_info *p = hir_pass_find(name);
            if (!p) {
                const hir_pass_info *near = hir_pass_suggest(name);
                if (near)
                    hir_diag_error(d, "unknown pass '%s' in pipeline; did you mean '%s'? (see --list-passes)",
                             name, near->name);
                else
                    hir_diag_error(d, "unknown pass '%s' in pipeline (see --list-passes)", name);
                return -1;
            }
            if (add_pass(pl, p, d))
                return -1;
            s += n;
            while (*s == ' ')
                s++;
            if (*s == '{') {
                s++;
                while (*s && *s != '}') {
                    while (*s == ' ' || *s == ',')
                        s++;
                    if (*s == '}' || !*s)
                        break;
                    size_t kl = strcspn(s, "=,{} ");
                    if (s[kl] != '=' || kl == 0) {
                        hir_diag_error(d, "expected key=value in options of pass '%s', not '%.*s'",
                                 name, (int)(kl ? kl : 1), s);
                        return -1;
                    }
                    const char *v = s + kl + 1;
                    size_t vl = strcspn(v, ",{} ");
                    if (set_option(pl, pl->n - 1, s, kl, v, vl, d))
                        return -1;
                    s = v + vl;
                }
                if (*s != '}') {
                    hir_diag_error(d, "missing '}' after options of pass '%s'", name);
                    return -1;
                }
                s++;
            }
        }
        while (*s == ' ')
            s++;
        if (*s && *s != ',') {
            hir_diag_error(d, "expected ',' between passes in pipeline '%s'", text);
            return -1;
        }
    }
    return 0;
}

int hir_pipeline_check(const hir_pipeline *pl, hir_diag *d)
{
    for (int i = 0; i < pl->n; i++)
        for (const hir_pass_option *o = pl->pass[i]->options; o && o->name; o++)
            if (o->required && !hir_pass_arg(&pl->args[i], o->name, NULL)) {
                const char *eg = o->type == HIR_PASS_OPT_ENUM ? o->choices : "NUMBER";
                size_t n = o->type == HIR_PASS_OPT_ENUM ? strcspn(eg, "|") : strlen(eg);
                if (pl->pass[i]->primary && !strcmp(pl->pass[i]->primary, o->name))
                    hir_diag_error(d, "pass '%s' needs option '%s' (%s): write --%s=%.*s or '%s{%s=%.*s}'",
                             pl->pass[i]->name, o->name, eg, pl->pass[i]->name, (int)n, eg,
                             pl->pass[i]->name, o->name, (int)n, eg);
                else
                    hir_diag_error(d, "pass '%s' needs option '%s' (%s): write '%s{%s=%.*s}'",
                             pl->pass[i]->name, o->name, eg, pl->pass[i]->name, o->name, (int)n, eg);
                return -1;
            }
    return 0;
}

void hir_pipeline_print(const hir_pipeline *pl, FILE *f)
{
    for (int i = 0; i < pl->n; i++) {
        fprintf(f, "%s%s", i ? "," : "", pl->pass[i]->name);
        for (int k = 0; k < pl->args[i].n; k++)
            fprintf(f, "%s%s=%s", k ? " " : "{", pl->args[i].key[k], pl->args[i].val[k]);
        if (pl->args[i].n)
            fputc('}', f);
    }
    fputc('\n', f);
}

int hir_pipeline_lint(const hir_pipeline *pl, void (*warn)(const char *msg, void *ctx), void *ctx)
{
    int n = 0;
    for (int i = 0; i < pl->n; i++) {
        const char *kind = hir_pass_arg(&pl->args[i], "kind", NULL);
        if (strcmp(pl->pass[i]->name, "backend") || !kind)
            continue;
        for (int j = i + 1; j < pl->n; j++) {
            const hir_pass_info *q = pl->pass[j];
            if (!find_option(q, "backend", 7) || hir_pass_arg(&pl->args[j], "backend", NULL))
                continue;
            char msg[512];
            if (!strcasecmp(kind, "auto"))   /* no lowering pass takes backend=auto */
                snprintf(msg, sizeof msg, "'backend{kind=auto}' before '%s' has nothing to split "
                         "yet (options belong to their pass; it lowers as its own backend= option "
                         "says); run 'backend{kind=auto nodes=N}' after it", q->name);
            else
                snprintf(msg, sizeof msg, "'backend{kind=%s}' does not choose the backend of the "
                         "later '%s' (options belong to their pass; it lowers as its own backend= "
                         "option says); write '%s{backend=%s}' or --%s=%s", kind, q->name, q->name,
                         kind, q->name, kind);
            warn(msg, ctx);
            n++;
        }
    }
    return n;
}

static bool matches(const char *sel, const char *name) { return sel && (!strcmp(sel, "*") || !strcmp(sel, name)); }

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Verifies after a pass, forwarding only errors: warnings about the input (undefined
 * extents and the like) were already reported once after parsing. */
static int verify_after(hir_program *p, const hir_verify_opts *vo, hir_diag *d)
{
    hir_diag scratch;
    hir_diag_init(&scratch, NULL);
    scratch.keep = true;
    int n = hir_program_verify(p, vo, &scratch);
    if (n == HIR_ENOMEM) {
        hir_diag_fini(&scratch);
        return n;
    }
    for (const hir_diag_entry *e = scratch.first; e; e = e->next) {
        if (e->sev != HIR_ERROR)
            continue;
        hir_diag_entry *f = hir_diag_emit(d, HIR_ERROR, e->loc, "%s", e->msg);
        for (const hir_diag_entry *note = e->notes; note; note = note->next)
            hir_diag_note(d, f, note->loc, "%s", note->msg);
    }
    hir_diag_fini(&scratch);
    return n;
}

static int pipeline_run(hir_program *p, const hir_pipeline *pl, const hir_pipeline_opts *o,
                        hir_diag *d);

/* A pass that runs out of memory (its arena allocations, the program's maps, or the maps it
 * made with hir_map_init_in on the program arena) jumps back here: the program is then half
 * rewritten and must only be freed; HIR_ENOMEM is returned. */
int hir_pipeline_run(hir_program *p, const hir_pipeline *pl, const hir_pipeline_opts *o,
                     hir_diag *d)
{
    jmp_buf oom;
    if (setjmp(oom)) {
        hir_arena_on_oom(p->arena, NULL);
        return HIR_ENOMEM;
    }
    hir_arena_on_oom(p->arena, &oom);
    int rc = pipeline_run(p, pl, o, d);
    hir_arena_on_oom(p->arena, NULL);
    return rc;
}

static int pipeline_run(hir_program *p, const hir_pipeline *pl, const hir_pipeline_opts *o,
                        hir_diag *d)
{
    FILE *dump = o->dump ? o->dump : stderr;
    hir_pipeline_stats *st = o->stats;
    /* the passes read every tensor's logical view: decide those still open (a program the
     * verifier has seen has none) */
    int se = hir_program_shapes(p, NULL, 0, d);
    if (se)
        return se == HIR_ENOMEM ? se : -1;
    for (int i = 0; i < pl->n; i++) {
        const hir_pass_info *pass = pl->pass[i];
        if (matches(o->print_before, pass->name)) {
            fprintf(dump, "// -----// IR Dump Before %s //----- //", pass->name);
            hir_program_print(p, dump);
        }
        if (st)
            st->stmts_before[i] += hir_program_count_stmts(p);
        double t0 = now();
        int rc = pass->run(p, &pl->args[i], d);
        double dt = now() - t0;
        if (st) {
            st->runs[i]++;
            st->seconds[i] += dt;
        }
        if (rc || d->errors)
            return -1;
        /* the next pass sees what the printed program says, nothing more (docs/passes.md,
         * "Options"): `hir-opt A | hir-opt B` equals `hir-opt A B` */
        pu_as_printed(p);
        if (st)
            st->stmts_after[i] += hir_program_count_stmts(p);
        if (o->verify_each) {
            hir_verify_opts vo = {false, o->bound, o->nbound};
            double v0 = now();
            int bad = verify_after(p, &vo, d);
            if (st)
                st->verify_seconds += now() - v0;
            if (bad == HIR_ENOMEM)
                return HIR_ENOMEM;
            if (bad) {
                hir_diag_emit(d, HIR_ERROR, (hir_loc){0}, "the program does not verify after pass '%s'", pass->name);
                return -1;
            }
        }
        if (matches(o->print_after, pass->name)) {
            fprintf(dump, "// -----// IR Dump After %s //----- //", pass->name);
            hir_program_print(p, dump);
        }
    }
    return 0;
}
