/* log.c — the %HostIrContainer programs of a log (see log.h). One pass over the lines finds the
 * headers; each program is then read line by line from its header, removing the prefix the
 * logger put before each line, until its footer and trailer. */
#define _GNU_SOURCE              /* memmem */
#include "parser/log.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "support/input.h"
#include "support/support.h"

static const char HEADER[] = "%HostIrContainer { (";
static const char FOOTER[] = "} // %HostIrContainer";
static const char TRAILER[] = "Index definitions:";

typedef struct line { size_t b, n; } line;   /* [b, b + n), without the '\n' */

static bool has(const char *s, size_t n, const char *lit)
{
    size_t k = strlen(lit);
    return n >= k && !memcmp(s, lit, k);
}

static bool blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
            return false;
    return true;
}

static size_t rtrim(const char *s, size_t n)
{
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
        n--;
    return n;
}

static bool digit(char c) { return c >= '0' && c <= '9'; }

/* s[0, n) is the prefix pf[0, n) with digits changed (a timestamp, a counter) */
static bool same_shape(const char *pf, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (pf[i] != s[i] && !(digit(pf[i]) && digit(s[i])))
            return false;
    return true;
}

/* libc's memchr/memmem scan a long log much faster than a byte loop (and, in the fuzz build,
 * without a coverage callback per byte) */
static const char *find_header(const char *s, size_t n)
{
    return memmem(s, n, HEADER, sizeof HEADER - 1);
}

/* memmem over text[from, len). A mapped input (support/input.h) is searched in steps, after
 * each of which the pages searched go back: the log is looked at as a whole before the parser
 * reads it, and must not stay resident for that. */
enum { SCAN_STEP = 4 << 20 };

static const char *find_from(const char *text, size_t from, size_t len, bool mapped,
                             const char *lit, size_t k)
{
    if (!mapped)
        return memmem(text + from, len - from, lit, k);
    while (from < len) {
        size_t end = len - from > SCAN_STEP ? from + SCAN_STEP : len;
        size_t stop = len - end > k ? end + k - 1 : len;   /* a match across the step's end */
        const char *f = memmem(text + from, stop - from, lit, k);
        if (f)
            return f;
        hir_text_release(text, true, 0, end);
        from = end;
    }
    return NULL;
}

/* How the lines after the header carry the prefix: every line with it (exactly, or with other
 * digits), or only the header. */
typedef enum mode { M_UNKNOWN, M_PREFIXED, M_NONE } mode;
typedef enum kind { K_CONTENT, K_BLANK, K_FOREIGN } kind;

/* The prefixes of every header in the log: a line that carries another program's prefix is
 * that program's, even where digits alone tell them apart ("[rank 0] " and "[rank 1] "). */
typedef struct prefixes {
    const line *at;              /* [b, b + n) of each header's prefix */
    size_t n;
} prefixes;

static bool others(const prefixes *all, const char *text, const char *pf, size_t pn,
                   const char *s)
{
    for (size_t i = 0; i < all->n; i++) {
        const char *o = text + all->at[i].b;
        if (all->at[i].n >= pn && o != pf && memcmp(o, pf, pn) && !memcmp(o, s, pn))
            return true;
    }
    return false;
}

/* Classifies one line of a program whose header had prefix pf[0, pn): its content starts
 * *skip bytes in (the prefix). Updates the mode on the first line that decides it. */
static kind classify(const char *text, const prefixes *all, const char *pf, size_t pn, mode *m,
                     const char *s, size_t n, size_t *skip)
{
    *skip = 0;
    if (pn == 0)
        return K_CONTENT;
    bool mine = n >= pn && same_shape(pf, s, pn);
    bool theirs = mine && others(all, text, pf, pn, s);
    mine = mine && !theirs;
    size_t t = rtrim(s, n);
    /* an empty line: nothing, or a prefix alone (its spaces trimmed), this program's or not */
    bool empty = blank(s, n) || (t <= pn && same_shape(pf, s, t) && blank(pf + t, pn - t));
    if (empty && t && memcmp(pf, s, t) && others(all, text, pf, t, s))
        return K_FOREIGN;
    if (*m == M_UNKNOWN && !empty && !theirs)
        *m = mine ? M_PREFIXED : M_NONE;
    if (mine) {
        *skip = pn;
        return K_CONTENT;
    }
    if (empty)
        return K_BLANK;
    if (theirs || *m == M_PREFIXED)
        return K_FOREIGN;
    return K_CONTENT;                /* M_NONE: the line as it is */
}

typedef struct buf {
    char *p;
    size_t n, cap;
} buf;

static int put(buf *b, const char *s, size_t n)
{
    if (b->n + n + 2 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (b->n + n + 2 > cap)
            cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q)
            return HIR_ENOMEM;
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    return 0;
}

/* A program being read: its text (prefixes removed) and, per line kept, where its prefix was. */
typedef struct reader {
    buf b;
    hir_line_prefix *pfx;
    size_t cap, np;
} reader;

/* After the footer: blank lines, then "Index definitions:" and its "  …;" lines, belong to the
 * program; true for a line that ends it. */
static bool ends_after_footer(kind k, const char *c, size_t cn, bool *trailer)
{
    bool empty = k != K_CONTENT || blank(c, cn);
    if (!*trailer && !empty && has(c, cn, TRAILER))
        *trailer = true;
    else if (*trailer && k == K_CONTENT && has(c, cn, "  ") && !blank(c, cn))
        ;
    else if (!*trailer && empty)
        ;
    else
        return true;
    return false;
}

/* Line i (ls, its prefix skip bytes, its content c[0, cn)) added to the program. */
static int keep_line(reader *r, kind k, size_t i, const char *ls, size_t skip, const char *c,
                     size_t cn)
{
    if (r->np == r->cap) {
        hir_line_prefix *q = realloc(r->pfx, 2 * r->cap * sizeof *r->pfx);
        if (!q)
            return HIR_ENOMEM;
        r->pfx = q;
        r->cap *= 2;
    }
    hir_line_prefix *p = &r->pfx[r->np];
    p->text = k == K_CONTENT && skip ? ls : NULL;
    p->len = k == K_CONTENT ? (uint32_t)skip : 0;
    p->line = (int)i + 1;
    if (k == K_CONTENT && put(&r->b, c, cn))
        return HIR_ENOMEM;
    r->np++;
    if (put(&r->b, "\n", 1))
        return HIR_ENOMEM;
    return 0;
}

/* The program's text cut after its first `keep` lines (what follows the footer and is not the
 * trailer goes), handed to *out with its prefixes; the header is on line h. */
static int finish_program(reader *r, size_t h, size_t keep, hir_log_program *out)
{
    buf *b = &r->b;
    size_t off = 0;
    for (size_t i = 0; i < keep && off < b->n; off++)
        if (b->p[off] == '\n')
            i++;
    if (!b->p && put(b, "", 0))
        return HIR_ENOMEM;
    b->n = off;
    b->p[b->n] = b->p[b->n + 1] = 0;
    out->text = b->p;
    out->len = b->n;
    out->line_base = (int)h;
    out->header_line = (int)h + 1;
    out->prefixes = r->pfx;
    out->nprefixes = keep < r->np ? keep : r->np;
    return 0;
}

/* Reads the program whose header is on line h. Sets *last to its last line and *clean when
 * no line of its span was someone else's or carried a prefix. */
static int read_program(const char *text, const line *lines, size_t nlines, size_t h,
                        const prefixes *all, hir_log_program *out, size_t *last, bool *clean)
{
    const char *s = text + lines[h].b;
    const char *hdr = find_header(s, lines[h].n);
    const char *pf = s;
    size_t pn = (size_t)(hdr - s);
    mode m = M_UNKNOWN;
    reader r = {.cap = 64};
    r.pfx = calloc(r.cap, sizeof *r.pfx);
    if (!r.pfx)
        return HIR_ENOMEM;
    *clean = pn == 0;
    bool footer = false, trailer = false;
    size_t end = h, keep = 0;          /* last line of the log kept; lines of text kept */
    for (size_t i = h; i < nlines; i++) {
        const char *ls = text + lines[i].b;
        size_t ln = lines[i].n, skip = 0;
        kind k = i == h ? K_CONTENT : classify(text, all, pf, pn, &m, ls, ln, &skip);
        if (i == h)
            skip = pn;
        const char *c = ls + skip;
        size_t cn = ln - skip;
        if (k == K_FOREIGN) {            /* someone else's line: not part of the text */
            *clean = false;
            continue;
        }
        if (k == K_CONTENT && i > h && find_header(c, cn))
            break;                                /* the next program starts */
        if (footer && ends_after_footer(k, c, cn, &trailer))
            break;
        if (keep_line(&r, k, i, ls, skip, c, cn))
            goto oom;
        if (skip)
            *clean = false;
        if (!footer && k == K_CONTENT && has(c, cn, FOOTER)) {
            footer = true;
            end = i;
            keep = r.np;
        } else if (!footer || (k == K_CONTENT && !blank(c, cn))) {
            end = i;
            keep = r.np;
        }
    }
    if (finish_program(&r, h, keep, out))
        goto oom;
    *last = end;
    return 0;
oom:
    free(r.pfx);
    free(r.b.p);
    return HIR_ENOMEM;
}

static bool comment_or_blank(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && (s[i] == ' ' || s[i] == '\t'))
        i++;
    return blank(s + i, n - i) || has(s + i, n - i, "//");
}

void hir_log_fini(hir_log *l)
{
    for (int i = 0; i < l->n; i++) {
        free(l->programs[i].text);
        free(l->programs[i].prefixes);
    }
    free(l->programs);
    memset(l, 0, sizeof *l);
}

/* The line of text that starts at *at (up to its '\n' or the end): [b, b + n); *at moves past
 * it. */
static void next_line(const char *text, size_t len, size_t *at, line *l)
{
    const char *q = *at < len ? memchr(text + *at, '\n', len - *at) : NULL;
    size_t e = q ? (size_t)(q - text) : len;
    l->b = *at;
    l->n = e - *at;
    *at = e + 1;
}

/* Every line of [from, len) is blank or a comment (from == len + 1: none left). */
static bool rest_comment_or_blank(const char *text, size_t len, size_t from)
{
    while (from <= len) {
        line l;
        next_line(text, len, &from, &l);
        if (!comment_or_blank(text + l.b, l.n))
            return false;
    }
    return true;
}

/* After the footer line, which ends at `at`: blank lines, then the trailer and its "  …;"
 * lines belong to the program; every line after those must be blank or a comment. */
static bool plain_after_footer(const char *text, size_t len, size_t at)
{
    bool trailer = false;
    while (at <= len) {
        line l;
        size_t start = at;
        next_line(text, len, &at, &l);
        const char *c = text + l.b;
        bool empty = blank(c, l.n);
        if (!trailer && !empty && has(c, l.n, TRAILER))
            trailer = true;
        else if (!(trailer && !empty && has(c, l.n, "  ")) && !(!trailer && empty))
            return rest_comment_or_blank(text, len, start);
    }
    return true;
}

/* After the header at h1: h1 when another header follows (anywhere), else the first
 * "\n} // %HostIrContainer" at or after h1, or NULL. One pass over the '%' signs with memchr
 * (both texts contain one, and '%' is rare in a program): a byte loop at memchr's speed, where
 * two memmem scans of the whole text cost more (memmem compares far more often). */
static const char *after_header(const char *text, size_t len, bool mapped, const char *h1)
{
    static const char NL_FOOTER[] = "\n} // %HostIrContainer";
    enum { PCT = 6 };   /* the '%' of NL_FOOTER */
    const char *end = text + len, *footer = NULL;
    /* a mapped input is searched in steps, each given back after it (re-read on demand) */
    for (const char *q = h1 + 1; q < end;) {
        const char *stop = mapped && (size_t)(end - q) > SCAN_STEP ? q + SCAN_STEP : end;
        for (const char *pc; (pc = memchr(q, '%', (size_t)(stop - q))); q = pc + 1) {
            if ((size_t)(end - pc) >= sizeof HEADER - 1 && !memcmp(pc, HEADER, sizeof HEADER - 1))
                return h1;
            if (!footer && pc - h1 >= PCT && (size_t)(end - (pc - PCT)) >= sizeof NL_FOOTER - 1 &&
                !memcmp(pc - PCT, NL_FOOTER, sizeof NL_FOOTER - 1))
                footer = pc - PCT;
        }
        hir_text_release(text, mapped, 0, (size_t)(stop - text));
        q = stop;
    }
    return footer;
}

/* The common case, a file that is one program: one header h1, at the start of its line, and
 * nothing but blank and comment lines around the program. It is read where it lies, with no
 * copy and no per-line prefixes. The program runs to its first line that starts with the
 * footer (or to the end of the file); only the lines before the header and after the footer
 * are looked at one by one, the rest is found with memmem. 1 when that is the case (*out
 * filled), 0 when not, or HIR_ENOMEM. */
static int plain_file(const char *text, size_t len, bool mapped, const char *h1, hir_log *out)
{
    size_t hb = (size_t)(h1 - text);
    if (hb && h1[-1] != '\n')
        return 0;
    const char *f = after_header(text, len, mapped, h1);
    if (f == h1)
        return 0;   /* a second header */
    size_t hl = 0;
    for (size_t at = 0; at < hb;) {           /* the lines before the header's */
        line l;
        next_line(text, len, &at, &l);
        if (!comment_or_blank(text + l.b, l.n))
            return 0;
        hl++;
    }
    if (f) {
        size_t at = (size_t)(f + 1 - text);
        line l;
        next_line(text, len, &at, &l);        /* the footer line itself */
        if (!plain_after_footer(text, len, at))
            return 0;
    }
    out->programs = calloc(1, sizeof *out->programs);
    if (!out->programs)
        return HIR_ENOMEM;
    out->n = 1;
    out->programs[0].len = len;
    out->programs[0].header_line = (int)hl + 1;
    return 1;
}

int hir_log_find(const char *text, size_t len, bool mapped, hir_log *out)
{
    memset(out, 0, sizeof *out);
    /* no header anywhere: nothing to do */
    const char *h1 = find_from(text, 0, len, mapped, HEADER, sizeof HEADER - 1);
    if (!h1)
        return 0;
    int plain = plain_file(text, len, mapped, h1, out);
    if (plain)
        return plain < 0 ? plain : 0;
    size_t nlines = 1;
    for (const char *q = text, *e = text + len; (q = memchr(q, '\n', (size_t)(e - q))); q++)
        nlines++;
    line *lines = malloc(nlines * sizeof *lines);
    if (!lines)
        return HIR_ENOMEM;
    for (size_t k = 0, b = 0; k < nlines; k++)
        next_line(text, len, &b, &lines[k]);
    /* every header's prefix first: each program needs the others' */
    prefixes all = {NULL, 0};
    size_t nh = 0;
    for (size_t i = 0; i < nlines; i++)
        nh += find_header(text + lines[i].b, lines[i].n) != NULL;
    line *hp = malloc((nh ? nh : 1) * sizeof *hp);
    if (!hp) {
        free(lines);
        return HIR_ENOMEM;
    }
    for (size_t i = 0; i < nlines; i++) {
        const char *hd = find_header(text + lines[i].b, lines[i].n);
        if (hd) {
            hp[all.n].b = lines[i].b;
            hp[all.n++].n = (size_t)(hd - (text + lines[i].b));
        }
    }
    all.at = hp;
    int cap = 0;
    size_t first = 0, last = 0;
    bool clean = true;
    for (size_t i = 0; i < nlines; i++) {
        if (!find_header(text + lines[i].b, lines[i].n))
            continue;
        if (out->n == cap) {
            int ncap = cap ? 2 * cap : 4;
            hir_log_program *q = realloc(out->programs, (size_t)ncap * sizeof *q);
            if (!q)
                goto oom;
            out->programs = q;
            cap = ncap;
        }
        hir_log_program *pr = &out->programs[out->n];
        memset(pr, 0, sizeof *pr);
        bool c;
        size_t end;
        if (read_program(text, lines, nlines, i, &all, pr, &end, &c))
            goto oom;
        out->n++;
        if (out->n == 1) {
            first = i;
            last = end;
            clean = c;
        }
    }
    /* one program and nothing else (but blank and comment lines): the input as it is */
    if (out->n == 1 && clean) {
        for (size_t i = 0; i < nlines && clean; i++)
            if ((i < first || i > last) && !comment_or_blank(text + lines[i].b, lines[i].n))
                clean = false;
        if (clean) {
            hir_log_program *pr = &out->programs[0];
            free(pr->text);
            free(pr->prefixes);
            pr->text = NULL;
            pr->prefixes = NULL;
            pr->nprefixes = 0;
            pr->len = len;
            pr->line_base = 0;
        }
    }
    free(lines);
    free(hp);
    hir_text_release(text, mapped, 0, len);   /* the programs are copies, or read from it later */
    return 0;
oom:
    free(lines);
    free(hp);
    hir_log_fini(out);
    return HIR_ENOMEM;
}

void hir_log_source(const hir_log *l, int i, const char *name, const char *whole, size_t len,
                    hir_source *src)
{
    const hir_log_program *pr = &l->programs[i];
    if (!pr->text) {
        hir_source_init(src, name, whole, len);
        return;
    }
    hir_source_init(src, name, pr->text, pr->len);
    src->line_base = pr->line_base;
    src->prefixes = pr->prefixes;
    src->nprefixes = pr->nprefixes;
}
