/* diag.c — located diagnostics (file:line:col, source line, caret, notes), MLIR-style, and
 * the --verify-diagnostics checker that matches them against expected-* comments. */
#include "support/diag.h"
#include "support/support.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void hir_source_init(hir_source *s, const char *name, const char *text, size_t len)
{
    memset(s, 0, sizeof *s);
    s->name = name;
    s->text = text;
    s->len = len;
}

void hir_source_fini(hir_source *s)
{
    free(s->line_starts);
    s->line_starts = NULL;
}

static void index_lines(hir_source *s)
{
    if (s->line_starts)
        return;
    size_t n = 1;
    for (size_t i = 0; i < s->len; i++)
        n += s->text[i] == '\n';
    s->line_starts = malloc(n * sizeof *s->line_starts);
    if (!s->line_starts)
        return;                   /* no memory: line_of and line_start scan the text instead */
    s->line_starts[0] = 0;
    size_t k = 1;
    for (size_t i = 0; i < s->len; i++)
        if (s->text[i] == '\n')
            s->line_starts[k++] = i + 1;
    s->nlines = n;
}

/* line is 1-based within this source (without line_base) */
static size_t line_of(hir_source *s, size_t off)
{
    index_lines(s);
    if (!s->line_starts) {
        size_t l = 1;
        for (size_t i = 0; i < off && i < s->len; i++)
            l += s->text[i] == '\n';
        return l;
    }
    size_t lo = 0, hi = s->nlines;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (s->line_starts[mid] <= off)
            lo = mid;
        else
            hi = mid;
    }
    return lo + 1;
}

/* offset of the first byte of line l (1-based) */
static size_t line_start(hir_source *s, size_t l)
{
    if (s->line_starts)
        return s->line_starts[l - 1];
    size_t i = 0;
    for (size_t k = 1; k < l && i < s->len; i++)
        k += s->text[i] == '\n';
    return i;
}

/* where line l (1-based) came from in a log, or NULL */
static const hir_line_prefix *origin_of(const hir_source *s, size_t l)
{
    if (!s->prefixes || l < 1 || l > s->nprefixes)
        return NULL;
    return &s->prefixes[l - 1];
}

/* what a log put before line l, or NULL */
static const hir_line_prefix *prefix_of(const hir_source *s, size_t l)
{
    const hir_line_prefix *o = origin_of(s, l);
    return o && o->text ? o : NULL;
}

void hir_source_linecol(hir_source *s, size_t off, int *line, int *col)
{
    if (off > s->len)
        off = s->len;
    size_t l = line_of(s, off);
    const hir_line_prefix *o = origin_of(s, l);
    *line = o && o->line > 0 ? o->line : (int)l + s->line_base;
    *col = (int)(off - line_start(s, l)) + 1 + (o && o->text ? (int)o->len : 0);
}

void hir_diag_init(hir_diag *d, FILE *out)
{
    memset(d, 0, sizeof *d);
    d->out = out;
}

void hir_diag_set_prefix(hir_diag *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->prefix, sizeof d->prefix, fmt, ap);
    va_end(ap);
}

void hir_diag_set_sink(hir_diag *d, hir_diag_sink fn, void *ctx)
{
    d->sink = fn;
    d->sink_ctx = ctx;
}

static void free_entries(hir_diag_entry *e)
{
    while (e) {
        hir_diag_entry *n = e->next;
        free_entries(e->notes);
        free(e->msg);
        free(e->origin);
        free(e);
        e = n;
    }
}

void hir_diag_fini(hir_diag *d)
{
    free_entries(d->first);
    d->first = d->last = NULL;
}

static const char *sev_name(hir_severity s)
{
    return s == HIR_ERROR ? "error" : s == HIR_WARNING ? "warning"
         : s == HIR_INTERNAL ? "internal error" : "note";
}

/* ANSI escapes of the coloured form (clang's colours: error red, warning magenta, note cyan,
 * all bold; the location and message bold; the caret line green). */
#define C_RESET "\033[0m"
#define C_BOLD "\033[1m"
#define C_CARET "\033[1;32m"

static const char *sev_color(hir_severity s)
{
    return s >= HIR_ERROR ? "\033[1;31m" : s == HIR_WARNING ? "\033[1;35m" : "\033[1;36m";
}

/* Prints one line of source with a caret under [begin, end) (clipped to the line). Very long
 * lines are shown as a window around the caret so a 100 MB line prints a few hundred bytes. */
static void print_snippet(FILE *f, hir_source *s, size_t begin, size_t end, bool color)
{
    size_t l = line_of(s, begin);
    size_t ls = line_start(s, l);
    size_t le = ls;
    while (le < s->len && s->text[le] != '\n')
        le++;
    size_t from = ls, to = le;
    const size_t window = 160;
    if (to - from > window) {
        from = begin > ls + window / 2 ? begin - window / 2 : ls;
        to = from + window < le ? from + window : le;
    }
    /* the log's text before the line, when the line is shown from its start */
    const hir_line_prefix *pf = from == ls ? prefix_of(s, l) : NULL;
    for (uint32_t i = 0; pf && i < pf->len; i++) {
        unsigned char c = (unsigned char)pf->text[i];
        fputc(c == '\t' || (c >= 32 && c < 127) ? c : '?', f);
    }
    for (size_t i = from; i < to; i++) {
        unsigned char c = (unsigned char)s->text[i];
        fputc(c == '\t' || (c >= 32 && c < 127) ? c : '?', f);
    }
    fputc('\n', f);
    for (uint32_t i = 0; pf && i < pf->len; i++)
        fputc(pf->text[i] == '\t' ? '\t' : ' ', f);
    for (size_t i = from; i < begin && i < to; i++)
        fputc(s->text[i] == '\t' ? '\t' : ' ', f);
    if (color)
        fputs(C_CARET, f);
    fputc('^', f);
    if (end > begin + 1) {
        size_t stop = end < to ? end : to;
        for (size_t i = begin + 1; i < stop; i++)
            fputc('~', f);
    }
    if (color)
        fputs(C_RESET, f);
    fputc('\n', f);
}

/* Appends c to buf[*k] while there is room (one byte kept for the terminator). */
static void put(char *buf, size_t n, size_t *k, char c)
{
    if (*k + 1 < n)
        buf[(*k)++] = c;
}

static void puts_buf(char *buf, size_t n, size_t *k, const char *s)
{
    while (*s)
        put(buf, n, k, *s++);
}

/* A message without a location is one line whatever it holds: control bytes and DEL come out
 * as \xNN, and after 300 bytes it is cut with "..." (a command-line argument can be huge). */
size_t hir_diag_format_line(char *buf, size_t n, const char *prefix, hir_severity sev,
                            const char *msg)
{
    static const char hex[] = "0123456789abcdef";
    size_t k = 0, shown = 0;
    if (!n)
        return 0;
    puts_buf(buf, n, &k, prefix && *prefix ? prefix : "<unknown>");
    puts_buf(buf, n, &k, ": ");
    puts_buf(buf, n, &k, sev_name(sev));
    puts_buf(buf, n, &k, ": ");
    for (const unsigned char *c = (const unsigned char *)msg; *c; c++) {
        if (shown >= 300) {
            puts_buf(buf, n, &k, "...");
            break;
        }
        if (*c < 0x20 || *c == 0x7f) {
            char esc[5] = {'\\', 'x', hex[*c >> 4], hex[*c & 15], 0};
            puts_buf(buf, n, &k, esc);
            shown += 4;
        } else {
            put(buf, n, &k, (char)*c);
            shown++;
        }
    }
    put(buf, n, &k, '\n');
    buf[k] = 0;
    return k;
}

/* The fatal paths' line: like hir_diag_format_line, but the severity is optional and the
 * message is not cut (the runner's own texts, never user input, and one line each). */
size_t hir_diag_format_fatal(char *buf, size_t n, const char *prefix, const hir_severity *sev,
                             const char *msg)
{
    size_t k = 0;
    if (!n)
        return 0;
    puts_buf(buf, n, &k, prefix && *prefix ? prefix : "<unknown>");
    puts_buf(buf, n, &k, ": ");
    if (sev) {
        puts_buf(buf, n, &k, sev_name(*sev));
        puts_buf(buf, n, &k, ": ");
    }
    for (const char *c = msg; *c; c++)
        put(buf, n, &k, *c == '\n' || *c == '\r' ? ' ' : *c);
    put(buf, n, &k, '\n');
    buf[k] = 0;
    return k;
}

void hir_diag_write_fatal(const char *prefix, const hir_severity *sev, const char *msg)
{
    char buf[4608];
    size_t k = hir_diag_format_fatal(buf, sizeof buf, prefix, sev, msg);
    ssize_t w = write(2, buf, k);
    (void)w;
}

/* The text before a diagnostic: the hir_diag's prefix and the entry's origin, each followed
 * by ": " ("hir-run: rank 3: "), or "" */
static void lead_of(char *buf, size_t n, const char *prefix, const char *origin)
{
    snprintf(buf, n, "%s%s%s%s", prefix ? prefix : "", prefix && *prefix ? ": " : "",
             origin ? origin : "", origin ? ": " : "");
}

/* `file: severity: msg` for a location naming the whole source, else `file:line:col: ...` */
static void print_where(FILE *f, const hir_diag_entry *e)
{
    hir_source *s = (hir_source *)e->loc.src;
    if (e->loc.begin == HIR_LOC_WHOLE) {
        fprintf(f, "%s: ", s->name);
        return;
    }
    int line, col;
    hir_source_linecol(s, e->loc.begin, &line, &col);
    fprintf(f, "%s:%d:%d: ", s->name, line, col);
}

static void print_one(FILE *f, const hir_diag_entry *e, bool color, const char *prefix,
                      const char *origin, bool status)
{
    hir_source *s = (hir_source *)e->loc.src;
    bool whole = s && e->loc.begin == HIR_LOC_WHOLE;
    char lead[256];
    lead_of(lead, sizeof lead, prefix, origin);
    if (!s && status && e->sev == HIR_ERROR) {
        fprintf(f, "%s%s\n", lead, e->msg);
        return;
    }
    if (!s && *lead) {
        char line[1400];
        size_t k = strlen(lead);
        lead[k >= 2 ? k - 2 : 0] = 0;       /* hir_diag_format_line puts its own ": " */
        hir_diag_format_line(line, sizeof line, lead, e->sev, e->msg);
        fputs(line, f);
        return;
    }
    fputs(lead, f);
    if (color) {
        fputs(C_BOLD, f);
        if (s)
            print_where(f, e);
        else
            fputs("<unknown>: ", f);
        fprintf(f, "%s%s:" C_RESET C_BOLD " %s" C_RESET "\n", sev_color(e->sev), sev_name(e->sev),
                e->msg);
        if (s && !whole)
            print_snippet(f, s, e->loc.begin, e->loc.end, true);
        return;
    }
    if (s) {
        print_where(f, e);
        fprintf(f, "%s: %s\n", sev_name(e->sev), e->msg);
        if (!whole)
            print_snippet(f, s, e->loc.begin, e->loc.end, false);
    } else {
        fprintf(f, "<unknown>: %s: %s\n", sev_name(e->sev), e->msg);
    }
}

static void print_entry(FILE *f, const hir_diag_entry *e, bool color, const char *prefix,
                        bool status)
{
    print_one(f, e, color, prefix, e->origin, status);
    for (const hir_diag_entry *n = e->notes; n; n = n->next)
        print_one(f, n, color, prefix, e->origin, status);
}

void hir_diag_print_entry(FILE *f, const hir_diag_entry *e) { print_entry(f, e, false, NULL, false); }

static hir_diag_entry *make(hir_severity sev, hir_loc loc, const char *fmt, va_list ap)
{
    hir_diag_entry *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->sev = sev;
    e->loc = loc;
    e->peer = -1;
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    e->msg = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (!e->msg) {
        free(e);
        return NULL;
    }
    vsnprintf(e->msg, (size_t)n + 1, fmt, ap);
    return e;
}

hir_diag_entry *hir_diag_vemit(hir_diag *d, hir_severity sev, hir_loc loc, const char *fmt,
                               va_list ap)
{
    hir_diag_entry *e = make(sev, loc, fmt, ap);
    if (sev == HIR_ERROR)
        d->errors++;
    else if (sev == HIR_WARNING)
        d->warnings++;
    if (!e) {
        d->lost++;
        if (sev == HIR_ERROR) {
            vsnprintf(d->fallback, sizeof d->fallback, fmt, ap);
            d->fallback_last = true;
        }
        return NULL;
    }
    if (sev == HIR_ERROR)
        d->fallback_last = false;
    /* Notes are printed with their parent: print the previous entry lazily. */
    if (d->last)
        d->last->next = e;
    else
        d->first = e;
    d->last = e;
    return e;
}

/* Prints every entry not printed yet (with its notes) to d->out. Entries are printed late so
 * that notes attached after hir_diag_emit come out with their parent. */
void hir_diag_flush(hir_diag *d)
{
    for (hir_diag_entry *e = d->first; e; e = e->next) {
        if (e->printed)
            continue;
        e->printed = true;
        if (d->sink)
            d->sink(d->sink_ctx, d, e);
        else if (d->out)
            print_entry(d->out, e, d->color, d->prefix, d->status_lines);
    }
    if (d->out && d->fallback[0]) {
        hir_diag_entry x = {.sev = HIR_ERROR, .msg = d->fallback, .peer = -1};
        print_entry(d->out, &x, d->color, d->prefix, d->status_lines);
        d->fallback[0] = 0;
        d->lost--;
    }
    if (d->out && d->lost) {
        fprintf(d->out, "error: out of memory: %d diagnostic%s could not be kept\n", d->lost,
                d->lost == 1 ? "" : "s");
        d->lost = 0;
    }
    if (d->out)
        fflush(d->out);
}

void hir_diag_discard(hir_diag *d)
{
    for (hir_diag_entry *e = d->first; e; e = e->next)
        e->printed = true;
    d->lost = 0;
    d->fallback[0] = 0;
}

hir_diag_entry *hir_diag_emit(hir_diag *d, hir_severity sev, hir_loc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hir_diag_entry *e = hir_diag_vemit(d, sev, loc, fmt, ap);
    va_end(ap);
    return e;
}

void hir_diag_error(hir_diag *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hir_diag_vemit(d, HIR_ERROR, (hir_loc){0}, fmt, ap);
    va_end(ap);
    hir_diag_flush(d);
}

hir_diag_entry *hir_diag_peer_error(hir_diag *d, int peer, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hir_diag_entry *e = hir_diag_vemit(d, HIR_ERROR, (hir_loc){0}, fmt, ap);
    va_end(ap);
    if (e)
        e->peer = peer;
    return e;
}

const char *hir_diag_first_error(const hir_diag *d)
{
    for (const hir_diag_entry *e = d->first; e; e = e->next)
        if (e->sev == HIR_ERROR)
            return e->msg;
    return NULL;
}

const char *hir_diag_last_error(const hir_diag *d)
{
    const char *m = d && d->fallback[0] ? d->fallback : "";
    if (d && d->fallback_last)
        return m;
    for (const hir_diag_entry *e = d ? d->first : NULL; e; e = e->next)
        if (e->sev == HIR_ERROR)
            m = e->msg;
    return m;
}

int hir_vfail(hir_diag *d, const char *fmt, va_list ap)
{
    if (!d)
        return -1;
    hir_diag_entry *e = hir_diag_vemit(d, HIR_ERROR, (hir_loc){0}, fmt, ap);
    /* one line by contract: a stray newline from a library string would break the line */
    for (char *p = e ? e->msg : d->fallback_last ? d->fallback : NULL; p && *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    return -1;
}

int hir_fail(hir_diag *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hir_vfail(d, fmt, ap);
    va_end(ap);
    return -1;
}

int hir_fail_peer(hir_diag *d, int peer, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hir_vfail(d, fmt, ap);
    va_end(ap);
    if (d && d->last && d->last->sev == HIR_ERROR)
        d->last->peer = peer;
    return -1;
}

void hir_diag_set_origin(hir_diag_entry *e, const char *fmt, ...)
{
    if (!e)
        return;
    char buf[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char *o = strdup(buf);
    if (!o)
        return;
    free(e->origin);
    e->origin = o;
}

void hir_diag_prepend(hir_diag_entry *e, const char *lead)
{
    if (!e)
        return;
    size_t a = strlen(lead), b = strlen(e->msg);
    char *m = malloc(a + 2 + b + 1);
    if (!m)
        return;
    memcpy(m, lead, a);
    memcpy(m + a, ": ", 2);
    memcpy(m + a + 2, e->msg, b + 1);
    free(e->msg);
    e->msg = m;
}

void hir_diag_append(hir_diag_entry *e, const char *fmt, ...)
{
    if (!e)
        return;
    char buf[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    size_t a = strlen(e->msg), b = strlen(buf);
    char *m = realloc(e->msg, a + b + 1);
    if (!m)
        return;
    memcpy(m + a, buf, b + 1);
    e->msg = m;
}

void hir_diag_move(hir_diag *d, hir_diag *src)
{
    if (src->first) {
        if (d->last)
            d->last->next = src->first;
        else
            d->first = src->first;
        d->last = src->last;
    }
    d->errors += src->errors;
    d->warnings += src->warnings;
    d->lost += src->lost;
    src->first = src->last = NULL;
    src->errors = src->warnings = src->lost = 0;
}

void hir_diag_note(hir_diag *d, hir_diag_entry *parent, hir_loc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hir_diag_entry *n = parent ? make(HIR_NOTE, loc, fmt, ap) : NULL;
    va_end(ap);
    if (!n) {
        d->lost += parent != NULL;
        return;
    }
    hir_diag_entry **pp = &parent->notes;
    while (*pp)
        pp = &(*pp)->next;
    *pp = n;
}

/* ---- --verify-diagnostics ---- */

typedef struct expect {
    hir_severity sev;
    int line;                  /* absolute line the diagnostic must be on */
    char *text;                /* substring that must occur in the message */
    int at_line;               /* line of the annotation itself */
    bool matched;
} expect;

static bool only_comment_line(hir_source *s, size_t l)
{
    size_t i = line_start(s, l);
    while (i < s->len && s->text[i] == ' ')
        i++;
    return i + 1 < s->len && s->text[i] == '/' && s->text[i + 1] == '/';
}

static const struct { const char *kw; hir_severity sev; } expect_kws[] = {
    {"expected-error", HIR_ERROR}, {"expected-warning", HIR_WARNING},
    {"expected-note", HIR_NOTE}, {"expected-remark", HIR_NOTE},
};

/* The keyword of an annotation in line[0, len): after the first "//" and its spaces, one of
 * expect_kws (its index; -1 for none). *p is set past it. */
static int expect_keyword(const char *line, size_t len, const char **p)
{
    const char *c = NULL;
    for (size_t i = 0; i + 1 < len; i++)
        if (line[i] == '/' && line[i + 1] == '/') {
            c = line + i;
            break;
        }
    if (!c)
        return -1;
    const char *end = line + len;
    *p = c + 2;
    while (*p < end && **p == ' ')
        (*p)++;
    for (int i = 0; i < 4; i++) {
        size_t kl = strlen(expect_kws[i].kw);
        if ((size_t)(end - *p) >= kl && memcmp(*p, expect_kws[i].kw, kl) == 0) {
            *p += kl;
            return i;
        }
    }
    return -1;
}

/* The line an annotation on line l means: l itself, or after '@' the next ("below") or
 * previous ("above") line that is not a comment alone, or l+N / l-N. -1 after a bad '@'. */
static int expect_target(hir_source *s, size_t l, const char **pp, const char *end, int *target)
{
    const char *p = *pp;
    *target = (int)l;
    if (!(p < end && *p == '@'))
        return 0;
    p++;
    if (end - p >= 5 && memcmp(p, "below", 5) == 0) {
        p += 5;
        size_t t = l + 1;
        while (t <= s->nlines && only_comment_line(s, t))
            t++;
        *target = (int)t;
    } else if (end - p >= 5 && memcmp(p, "above", 5) == 0) {
        p += 5;
        size_t t = l - 1;
        while (t >= 1 && only_comment_line(s, t))
            t--;
        *target = (int)t;
    } else if (p < end && (*p == '+' || *p == '-')) {
        int sign = *p == '+' ? 1 : -1;
        p++;
        int v = 0;
        while (p < end && *p >= '0' && *p <= '9' && v < 1000000)
            v = v * 10 + (*p++ - '0');
        *target = (int)l + sign * v;
    } else {
        return -1;
    }
    *pp = p;
    return 0;
}

/* The text of "{{text}}" at *p (spaces before it skipped): [*p, *q), up to the last "}}" so
 * that a message may hold "}". Prints the error and returns -1 when it is not there. */
static int expect_text(hir_source *s, size_t l, const char **p, const char *end, const char **q,
                       FILE *err)
{
    while (*p < end && **p == ' ')
        (*p)++;
    if (end - *p < 4 || (*p)[0] != '{' || (*p)[1] != '{') {
        fprintf(err, "%s:%d: error: expected '{{' in expected-* annotation\n", s->name,
                (int)l + s->line_base);
        return -1;
    }
    *p += 2;
    *q = NULL;
    for (const char *r = *p; r + 1 < end; r++)
        if (r[0] == '}' && r[1] == '}')
            *q = r;
    if (!*q) {
        fprintf(err, "%s:%d: error: unterminated '{{' in expected-* annotation\n", s->name,
                (int)l + s->line_base);
        return -1;
    }
    return 0;
}

static int parse_expectations(hir_source *s, expect **out, FILE *err)
{
    index_lines(s);
    int n = 0, cap = 0, bad = 0;
    expect *ex = NULL;
    if (!s->line_starts) {
        fprintf(err, "%s: error: out of memory reading expected-* annotations\n", s->name);
        *out = NULL;
        return 1;
    }
    for (size_t l = 1; l <= s->nlines; l++) {
        size_t ls = s->line_starts[l - 1];
        size_t le = ls;
        while (le < s->len && s->text[le] != '\n')
            le++;
        const char *line = s->text + ls, *end = s->text + le, *p = NULL, *q;
        int k = expect_keyword(line, le - ls, &p);
        if (k < 0)
            continue;
        int target;
        if (expect_target(s, l, &p, end, &target)) {
            fprintf(err, "%s:%d: error: bad expected-* location after '@'\n", s->name,
                    (int)l + s->line_base);
            bad++;
            continue;
        }
        if (expect_text(s, l, &p, end, &q, err)) {
            bad++;
            continue;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 8;
            expect *nx = realloc(ex, cap * sizeof *ex);
            if (!nx) {
                fprintf(err, "%s: error: out of memory reading expected-* annotations\n",
                        s->name);
                bad++;
                break;
            }
            ex = nx;
        }
        ex[n].sev = expect_kws[k].sev;
        ex[n].line = target + s->line_base;
        ex[n].text = strndup(p, (size_t)(q - p));
        ex[n].at_line = (int)l + s->line_base;
        ex[n].matched = false;
        n++;
    }
    if (bad) {
        /* the caller checks nothing then: the annotations read so far go */
        for (int i = 0; i < n; i++)
            free(ex[i].text);
        free(ex);
        *out = NULL;
        return -bad;
    }
    *out = ex;
    return n;
}

static int check_entry(const hir_diag_entry *e, expect *ex, int n, FILE *err)
{
    int line = 0, col = 0;
    if (e->loc.src)
        hir_source_linecol((hir_source *)e->loc.src, e->loc.begin, &line, &col);
    for (int i = 0; i < n; i++) {
        if (ex[i].matched || ex[i].sev != e->sev || ex[i].line != line)
            continue;
        if (strstr(e->msg, ex[i].text)) {
            ex[i].matched = true;
            return 0;
        }
    }
    fprintf(err, "%s:%d:%d: error: unexpected %s: %s\n",
            e->loc.src ? e->loc.src->name : "<unknown>", line, col, sev_name(e->sev), e->msg);
    return 1;
}

int hir_diag_verify(hir_diag *d, hir_source *src, FILE *err)
{
    expect *ex = NULL;
    int n = parse_expectations(src, &ex, err);
    int failures = 0;
    if (n < 0) {
        failures = -n;
        n = 0;
    }
    for (const hir_diag_entry *e = d->first; e; e = e->next) {
        failures += check_entry(e, ex, n, err);
        for (const hir_diag_entry *note = e->notes; note; note = note->next)
            failures += check_entry(note, ex, n, err);
    }
    for (int i = 0; i < n; i++) {
        if (!ex[i].matched) {
            fprintf(err, "%s:%d: error: expected %s \"%s\" on line %d was not produced\n",
                    src->name, ex[i].at_line, sev_name(ex[i].sev), ex[i].text, ex[i].line);
            failures++;
        }
        free(ex[i].text);
    }
    free(ex);
    return failures ? -1 : 0;
}
