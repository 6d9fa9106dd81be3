/* cuda_gemm_cache.c — the cache file of tuned GEMM algorithms (cuda_gemm_cache.h): parsing,
 * formatting, loading and appending. Plain C: no CUDA header, testable on any host. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/support.h"

#include "runner/cuda/cuda_gemm_cache.h"

void hir_gemm_cache_ident_init(hir_gemm_cache_ident *id, unsigned long long version,
                               const char *device_name)
{
    id->version = version;
    size_t i = 0;
    for (; device_name && device_name[i] && i + 1 < sizeof id->device; i++) {
        char ch = device_name[i];
        int ok = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')
                 || ch == '.' || ch == '_' || ch == '-';
        id->device[i] = ok ? ch : '_';
    }
    if (i == 0) id->device[i++] = '_';
    id->device[i] = 0;
}

static int hexval(char ch)
{
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

/* A decimal integer at *s ending at a byte of `ends`; advances *s past it. */
static int take_int(const char **s, const char *ends, long long *v)
{
    char *end;
    errno = 0;
    if (!**s || (**s != '-' && (**s < '0' || **s > '9'))) return -1;
    *v = strtoll(*s, &end, 10);
    if (errno || end == *s || !*end || !strchr(ends, *end)) return -1;
    *s = end;
    return 0;
}

static int bad(char *why, size_t n, const char *what)
{
    snprintf(why, n, "%s", what);
    return -1;
}

/* The fields after the ident: WORKSPACE KEY ALGO MS */
static int parse_rest(const char *s, hir_gemm_cache_entry *out, char *why, size_t n)
{
    long long v;
    if (take_int(&s, " ", &v) || v < 0) return bad(why, n, "bad workspace size");
    out->workspace = (uint64_t)v;
    s++;
    for (int i = 0; i < HIR_GEMM_KEY_LEN; i++) {
        if (take_int(&s, i + 1 < HIR_GEMM_KEY_LEN ? "," : " ", &v))
            return bad(why, n, "bad key (20 integers separated by ',')");
        out->key[i] = v;
        s++;
    }
    for (int i = 0; i < HIR_GEMM_ALGO_BYTES; i++) {
        int hi = hexval(s[0]), lo = hi < 0 ? -1 : hexval(s[1]);
        if (hi < 0 || lo < 0) return bad(why, n, "bad algorithm (128 hex digits)");
        out->algo[i] = (unsigned char)(hi << 4 | lo);
        s += 2;
    }
    if (*s != ' ') return bad(why, n, "bad algorithm (128 hex digits)");
    s++;
    char *end;
    errno = 0;
    out->ms = strtod(s, &end);
    if (errno || end == s || *end || !(out->ms >= 0) || out->ms > 1e9)
        return bad(why, n, "bad time");
    return 0;
}

int hir_gemm_cache_parse_line(const char *line, const hir_gemm_cache_ident *id,
                              hir_gemm_cache_entry *out, int *foreign, char *why, size_t n)
{
    *foreign = 0;
    size_t len = strlen(line);
    while (len && strchr("\r\n ", line[len - 1])) len--;
    if (len == 0 || line[0] == '#') return 0;
    if (len >= HIR_GEMM_CACHE_LINE_MAX) return bad(why, n, "line too long");
    char buf[HIR_GEMM_CACHE_LINE_MAX];
    memcpy(buf, line, len);
    buf[len] = 0;
    if (strncmp(buf, "v1 ", 3)) return bad(why, n, "not a v1 line");
    const char *s = buf + 3;
    long long ver;
    if (take_int(&s, " ", &ver) || ver < 0) return bad(why, n, "bad cuBLASLt version");
    const char *dev = ++s, *sp = strchr(dev, ' ');
    if (!sp || sp == dev) return bad(why, n, "no device name");
    for (const char *q = dev; q < sp; q++)
        if (*q == '#') return bad(why, n, "bad device name");
    memset(out, 0, sizeof *out);
    if (parse_rest(sp + 1, out, why, n)) return -1;
    size_t dl = (size_t)(sp - dev);
    if ((unsigned long long)ver != id->version || dl != strlen(id->device) ||
        memcmp(dev, id->device, dl)) {
        *foreign = 1;
        return 0;
    }
    return 1;
}

int hir_gemm_cache_format_line(const hir_gemm_cache_entry *en, const hir_gemm_cache_ident *id,
                               char *buf, size_t n)
{
    size_t at = 0;
    int w = snprintf(buf, n, "v1 %llu %s %" PRIu64 " ", id->version, id->device, en->workspace);
    if (w < 0 || (size_t)w >= n) return -1;
    at = (size_t)w;
    for (int i = 0; i < HIR_GEMM_KEY_LEN; i++) {
        w = snprintf(buf + at, n - at, "%" PRId64 "%s", en->key[i],
                     i + 1 < HIR_GEMM_KEY_LEN ? "," : " ");
        if (w < 0 || (size_t)w >= n - at) return -1;
        at += (size_t)w;
    }
    if (n - at < 2 * HIR_GEMM_ALGO_BYTES + 1) return -1;
    for (int i = 0; i < HIR_GEMM_ALGO_BYTES; i++)
        at += (size_t)snprintf(buf + at, n - at, "%02x", en->algo[i]);
    w = snprintf(buf + at, n - at, " %.6f\n", en->ms);
    return w < 0 || (size_t)w >= n - at ? -1 : 0;
}

static int push(hir_gemm_cache *c, const hir_gemm_cache_entry *en, hir_diag *e)
{
    if (c->n == c->cap) {
        int cap = c->cap ? 2 * c->cap : 16;
        void *p = realloc(c->entries, (size_t)cap * sizeof *c->entries);
        if (!p) return hir_fail(e, "gemm-tune: out of host memory"), -1;
        c->entries = p;
        c->cap = cap;
    }
    c->entries[c->n++] = *en;
    return 0;
}

/* One line of the file (lineno from 1) into c. */
static int load_line(hir_gemm_cache *c, const char *line, int lineno, hir_diag *e)
{
    hir_gemm_cache_entry en;
    int foreign;
    char why[120];
    int rc = hir_gemm_cache_parse_line(line, &c->id, &en, &foreign, why, sizeof why);
    if (rc < 0 && c->ignored++ == 0)
        snprintf(c->note, sizeof c->note, "%s:%d: %s", c->path, lineno, why);
    c->foreign += foreign;
    return rc == 1 ? push(c, &en, e) : 0;
}

int hir_gemm_cache_load(hir_gemm_cache *c, const char *path, const hir_gemm_cache_ident *id,
                        hir_diag *e)
{
    memset(c, 0, sizeof *c);
    c->id = *id;
    if (!(c->path = strdup(path))) return hir_fail(e, "gemm-tune: out of host memory"), -1;
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT) return 0;
        return hir_fail(e, "--gemm-tune: cannot read %s: %s", path, strerror(errno)), -1;
    }
    char line[HIR_GEMM_CACHE_LINE_MAX + 2];
    int lineno = 0, rc = 0, cut = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        size_t len = strlen(line);
        int whole = len && line[len - 1] == '\n';
        if (whole) line[--len] = 0;
        if (!cut) lineno++;
        if (cut || (!whole && !feof(f))) {   /* too long: ignore the rest of it */
            if (!cut && c->ignored++ == 0)
                snprintf(c->note, sizeof c->note, "%s:%d: line too long", c->path, lineno);
            cut = !whole;
            continue;
        }
        rc = load_line(c, line, lineno, e);
    }
    if (!rc && ferror(f))
        rc = hir_fail(e, "--gemm-tune: cannot read %s: %s", path, strerror(errno));
    fclose(f);
    return rc ? -1 : 0;
}

const hir_gemm_cache_entry *hir_gemm_cache_find(const hir_gemm_cache *c, const int64_t *key,
                                                uint64_t workspace)
{
    for (int i = c->n - 1; i >= 0; i--)
        if (c->entries[i].workspace == workspace &&
            !memcmp(c->entries[i].key, key, sizeof c->entries[i].key))
            return &c->entries[i];
    return NULL;
}

/* Copies the file's bytes as they are now (if any) to fd; a last line without its newline
 * gets one. Returns 0, or the errno of what failed. */
static int copy_old(const char *path, int fd)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return errno == ENOENT ? 0 : errno;
    char buf[8192];
    size_t got;
    char last = '\n';
    int rc = 0;
    while (!rc && (got = fread(buf, 1, sizeof buf, f)) > 0) {
        last = buf[got - 1];
        if (write(fd, buf, got) != (ssize_t)got) rc = errno ? errno : EIO;
    }
    if (!rc && ferror(f)) rc = errno ? errno : EIO;
    if (!rc && last != '\n' && write(fd, "\n", 1) != 1) rc = errno ? errno : EIO;
    fclose(f);
    return rc;
}

int hir_gemm_cache_append(hir_gemm_cache *c, const hir_gemm_cache_entry *en, hir_diag *e)
{
    char line[HIR_GEMM_CACHE_LINE_MAX];
    if (hir_gemm_cache_format_line(en, &c->id, line, sizeof line) < 0)
        return hir_fail(e, "gemm-tune: a cache line does not fit"), -1;
    if (push(c, en, e) < 0) return -1;
    hir_replace r;
    char err[256];
    if (hir_replace_open(&r, c->path, err, sizeof err) < 0)
        return hir_fail(e, "--gemm-tune: cannot write %s: %s", c->path, err), -1;
    size_t len = strlen(line);
    int er = copy_old(c->path, r.fd);
    if (!er && write(r.fd, line, len) != (ssize_t)len)
        er = errno ? errno : EIO;
    if (er) {
        hir_replace_abort(&r);
        return hir_fail(e, "--gemm-tune: cannot write %s: %s", c->path, strerror(er)), -1;
    }
    if (hir_replace_commit(&r, err, sizeof err) < 0)
        return hir_fail(e, "--gemm-tune: cannot write %s: %s", c->path, err), -1;
    return 0;
}

void hir_gemm_cache_free(hir_gemm_cache *c)
{
    free(c->path);
    free(c->entries);
    memset(c, 0, sizeof *c);
}
