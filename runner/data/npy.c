/* npy.c — the .npy reader and writer. The header is a Python dict literal; we write the
 * exact form NumPy writes and read it back with a small, strict parser (the keys NumPy
 * emits, nothing evaluated), reporting precise messages for files that do not fit. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runner/backend/convert.h"
#include "runner/data/npy.h"
#include "support/support.h"

const char *hir_npy_descr(hir_dtype dt, int flags)
{
    switch (dt) {
    case HIR_DT_FLOAT: return "<f4";
    case HIR_DT_DOUBLE: return "<f8";
    case HIR_DT_HALF: return "<f2";
    case HIR_DT_BFLOAT: return flags & HIR_NPY_RAW_BF16 ? "<u2" : "<f4";
    /* one-byte types have no byte order; NumPy spells them with '|' */
    case HIR_DT_BOOL: return "|b1";
    case HIR_DT_INT8: return "|i1";
    case HIR_DT_UINT8: return "|u1";
    case HIR_DT_INT16: return "<i2";
    case HIR_DT_INT32: return "<i4";
    case HIR_DT_INT64: case HIR_DT_INDEX: return "<i8";
    case HIR_DT_UINT16: return "<u2";
    case HIR_DT_UINT32: return "<u4";
    case HIR_DT_UINT64: return "<u8";
    default: return NULL;
    }
}

static void shape_str(char *buf, size_t cap, int ndim, const int64_t *shape)
{
    size_t k = (size_t)snprintf(buf, cap, "(");
    for (int i = 0; i < ndim && k < cap; i++)
        k += (size_t)snprintf(buf + k, cap - k, "%s%lld", i ? ", " : "", (long long)shape[i]);
    if (k < cap)
        snprintf(buf + k, cap - k, "%s)", ndim == 1 ? "," : "");
}

int hir_npy_write(const char *path, const void *data, hir_dtype dt, int ndim,
                  const int64_t *shape, int flags, hir_diag *e)
{
    const char *descr = hir_npy_descr(dt, flags);
    if (!descr)
        return hir_fail(e, "%s: dtype %s has no .npy form", path, hir_dtype_name(dt));
    if (ndim < 0 || ndim > HIR_MAX_DIMS)
        return hir_fail(e, "%s: rank %d outside 0..%d", path, ndim, HIR_MAX_DIMS);
    char shp[256], dict[512];
    shape_str(shp, sizeof shp, ndim, shape);
    int len = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                       descr, shp);
    /* NumPy pads with spaces and a final newline so the data starts 64-byte aligned */
    int total = 10 + len + 1;
    int pad = (64 - total % 64) % 64;
    int hlen = len + pad + 1;
    if (hlen > 65535)
        return hir_fail(e, "%s: header too long", path);
    int64_t n = 1;
    size_t es = dt == HIR_DT_BFLOAT && !(flags & HIR_NPY_RAW_BF16) ? 4 : hir_dtype_size(dt);
    for (int i = 0; i < ndim; i++)
        if (shape[i] < 0 || __builtin_mul_overflow(n, shape[i], &n))
            return hir_fail(e, "%s: shape does not fit in 64 bits", path);
    if ((uint64_t)n > SIZE_MAX / es)
        return hir_fail(e, "%s: %lld elements do not fit in memory", path, (long long)n);

    /* written under a temporary name and renamed when complete: a failed write leaves no
     * partial .npy behind (nor clobbers an older complete one) */
    hir_replace rep;
    char why[256];
    if (hir_replace_open(&rep, path, why, sizeof why))
        return hir_fail(e, "%s: %s", path, why);
    FILE *f = fdopen(rep.fd, "wb");
    if (!f) {
        hir_fail(e, "%s: %s", path, strerror(errno));
        hir_replace_abort(&rep);
        return -1;
    }
    rep.fd = -1;                 /* f's now */
    unsigned char head[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                              (unsigned char)(hlen & 0xff), (unsigned char)(hlen >> 8)};
    int ok = fwrite(head, 1, 10, f) == 10 && fwrite(dict, 1, (size_t)len, f) == (size_t)len;
    for (int i = 0; i < pad && ok; i++)
        ok = fputc(' ', f) != EOF;
    ok = ok && fputc('\n', f) != EOF;
    if (ok && dt == HIR_DT_BFLOAT && !(flags & HIR_NPY_RAW_BF16)) {
        float buf[1024];
        for (int64_t i = 0; i < n && ok; i += 1024) {
            size_t k = (size_t)(n - i < 1024 ? n - i : 1024);
            hir_bf16_to_f32_n(buf, (const uint16_t *)data + i, k);
            ok = fwrite(buf, 4, k, f) == k;
        }
    } else if (ok && n > 0) {
        size_t bytes = (size_t)n * hir_dtype_size(dt);
        ok = fwrite(data, 1, bytes, f) == bytes;
    }
    int saved = errno;
    if (fclose(f) != 0 && ok) {
        ok = 0;
        saved = errno;
    }
    if (ok && hir_replace_commit(&rep, why, sizeof why))
        return hir_fail(e, "%s: write failed: %s", path, why);
    hir_replace_abort(&rep);
    return ok ? 0 : hir_fail(e, "%s: write failed: %s", path, strerror(saved));
}

/* ---------------------------------------------------------------- reading */

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && isspace((unsigned char)*p))
        p++;
    return p;
}

/* position just after `'key':` in the dict (and its spaces), or NULL; never end: the header
 * is not NUL-terminated and a value must have a first byte before end */
static const char *find_key(const char *s, const char *end, const char *key)
{
    size_t kl = strlen(key);
    for (const char *p = s; end - p >= (ptrdiff_t)(kl + 2); p++)
        if ((*p == '\'' || *p == '"') && !memcmp(p + 1, key, kl) && p[kl + 1] == *p) {
            const char *q = skip_ws(p + kl + 2, end);
            if (q < end && *q == ':') {
                q = skip_ws(q + 1, end);
                return q < end ? q : NULL;
            }
        }
    return NULL;
}

/* a decimal extent in [p, end) (strtoll would read on past end); NULL when malformed */
static const char *parse_extent(const char *p, const char *end, int64_t *v)
{
    int64_t x = 0;
    const char *q = p;
    for (; q < end && *q >= '0' && *q <= '9'; q++)
        if (__builtin_mul_overflow(x, 10, &x) || __builtin_add_overflow(x, *q - '0', &x))
            return NULL;
    if (q == p)
        return NULL;
    *v = x;
    return q;
}

int hir_npy_parse_header(const unsigned char *buf, size_t len, hir_npy_header *h,
                         const char *name, hir_diag *e)
{
    memset(h, 0, sizeof *h);
    if (len < 10 || memcmp(buf, "\x93NUMPY", 6))
        return hir_fail(e, "%s: not a .npy file (bad magic)", name);
    h->version = buf[6];
    size_t hlen, pre;
    if (h->version == 1) {
        hlen = buf[8] | (size_t)buf[9] << 8;
        pre = 10;
    } else if (h->version == 2 || h->version == 3) {
        if (len < 12)
            return hir_fail(e, "%s: truncated header", name);
        hlen = buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 | (size_t)buf[11] << 24;
        pre = 12;
    } else {
        return hir_fail(e, "%s: .npy version %d.%d not supported", name, buf[6], buf[7]);
    }
    if (pre + hlen > len)
        return hir_fail(e, "%s: truncated header (%zu bytes announced, %zu present)", name,
                             hlen, len - pre);
    h->data_offset = pre + hlen;
    const char *s = (const char *)buf + pre, *end = s + hlen;

    const char *p = find_key(s, end, "descr");
    if (!p || (*p != '\'' && *p != '"'))
        return hir_fail(e, "%s: header has no 'descr'", name);
    const char *q = memchr(p + 1, *p, (size_t)(end - p - 1));
    if (!q || q - p - 1 >= (ptrdiff_t)sizeof h->descr)
        return hir_fail(e, "%s: malformed 'descr'", name);
    memcpy(h->descr, p + 1, (size_t)(q - p - 1));

    p = find_key(s, end, "fortran_order");
    if (!p)
        return hir_fail(e, "%s: header has no 'fortran_order'", name);
    if (end - p >= 4 && !memcmp(p, "True", 4))
        h->fortran_order = 1;
    else if (!(end - p >= 5 && !memcmp(p, "False", 5)))
        return hir_fail(e, "%s: malformed 'fortran_order'", name);

    p = find_key(s, end, "shape");
    if (!p || *p != '(')
        return hir_fail(e, "%s: header has no 'shape' tuple", name);
    p = skip_ws(p + 1, end);
    while (p < end && *p != ')') {
        if (h->ndim == HIR_MAX_DIMS)
            return hir_fail(e, "%s: more than %d dimensions", name, HIR_MAX_DIMS);
        int64_t v;
        const char *stop = parse_extent(p, end, &v);
        if (!stop)
            return hir_fail(e, "%s: malformed 'shape'", name);
        h->shape[h->ndim++] = v;
        p = skip_ws(stop, end);
        if (p < end && *p == ',')
            p = skip_ws(p + 1, end);
    }
    if (p >= end)
        return hir_fail(e, "%s: malformed 'shape'", name);
    /* the element count and the bytes of the widest element (16) must fit in 64 bits, so
     * nobody computing a size from this shape can wrap */
    int64_t n = 1;
    for (int i = 0; i < h->ndim; i++)
        if (__builtin_mul_overflow(n, h->shape[i], &n) || n > INT64_MAX / 16) {
            char shp[256];
            shape_str(shp, sizeof shp, h->ndim, h->shape);
            return hir_fail(e, "%s: shape %s has too many elements (its size does not "
                                 "fit in 64 bits)", name, shp);
        }
    return 0;
}

/* Inputs must be regular files: a FIFO would block the open until a writer came. Opened
 * without blocking so that a FIFO is refused at once. */
static FILE *open_regular(const char *path, hir_diag *e)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb)) {
        hir_fail(e, "%s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    if (!S_ISREG(sb.st_mode)) {
        hir_fail(e, "%s: not a regular file (%s)", path, S_ISFIFO(sb.st_mode) ? "a FIFO" :
                      S_ISDIR(sb.st_mode) ? "a directory" : "a special file");
        close(fd);
        return NULL;
    }
    int fl = fcntl(fd, F_GETFL);
    FILE *f = fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) ? NULL : fdopen(fd, "rb");
    if (!f) {
        hir_fail(e, "%s: %s", path, strerror(errno));
        close(fd);
    }
    return f;
}

int hir_npy_read_header(const char *path, hir_npy_header *h, hir_diag *e)
{
    FILE *f = open_regular(path, e);
    if (!f)
        return -1;
    unsigned char buf[4096];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    return hir_npy_parse_header(buf, n, h, path, e);
}

int hir_npy_read(const char *path, void *data, hir_dtype dt, int ndim, const int64_t *shape,
                 hir_diag *e)
{
    const char *want = hir_npy_descr(dt, 0);
    if (!want)
        return hir_fail(e, "%s: dtype %s has no .npy form", path, hir_dtype_name(dt));
    FILE *f = open_regular(path, e);
    if (!f)
        return -1;
    unsigned char head[4096];
    size_t got = fread(head, 1, sizeof head, f);
    hir_npy_header h;
    if (hir_npy_parse_header(head, got, &h, path, e))
        goto fail;
    if (h.fortran_order) {
        hir_fail(e, "%s: Fortran-order arrays are not supported (save with C order)", path);
        goto fail;
    }
    int same_shape = h.ndim == ndim;
    for (int i = 0; i < ndim && same_shape; i++)
        same_shape = h.shape[i] == shape[i];
    if (!same_shape) {
        char a[256], b[256];
        shape_str(a, sizeof a, h.ndim, h.shape);
        shape_str(b, sizeof b, ndim, shape);
        hir_fail(e, "%s: shape %s does not match the program's %s", path, a, b);
        goto fail;
    }
    /* bf16 files come either widened to f4 or as raw u2 patterns */
    int from_f4 = dt == HIR_DT_BFLOAT && !strcmp(h.descr, "<f4");
    int raw_ok = !strcmp(h.descr, want) ||
                 (dt == HIR_DT_BFLOAT && !strcmp(h.descr, "<u2")) ||
                 /* NumPy writes '|' for one-byte types, some writers '<' */
                 (want[0] == '|' && h.descr[0] == '<' && !strcmp(h.descr + 1, want + 1));
    if (!raw_ok && !from_f4) {
        hir_fail(e, "%s: dtype '%s' does not match the program's %s (expected '%s'%s)", path,
                      h.descr, hir_dtype_name(dt), want,
                      dt == HIR_DT_BFLOAT ? " or '<u2'" : "");
        goto fail;
    }
    int64_t n = 1;
    size_t fes = from_f4 ? 4 : hir_dtype_size(dt), bytes;
    for (int i = 0; i < ndim; i++)
        if (__builtin_mul_overflow(n, shape[i], &n)) {
            hir_fail(e, "%s: shape does not fit in 64 bits", path);
            goto fail;
        }
    if (__builtin_mul_overflow((size_t)n, fes, &bytes) || h.data_offset > LONG_MAX) {
        hir_fail(e, "%s: shape does not fit in 64 bits", path);
        goto fail;
    }
    if (fseek(f, (long)h.data_offset, SEEK_SET)) {
        hir_fail(e, "%s: %s", path, strerror(errno));
        goto fail;
    }
    size_t have;
    if (from_f4) {
        float buf[1024];
        have = 0;
        for (int64_t i = 0; i < n; i += 1024) {
            size_t k = (size_t)(n - i < 1024 ? n - i : 1024);
            size_t r = fread(buf, 4, k, f);
            hir_f32_to_bf16_n((uint16_t *)data + i, buf, r);
            have += r * 4;
            if (r < k)
                break;
        }
    } else {
        have = fread(data, 1, bytes, f);
    }
    if (have < bytes) {
        hir_fail(e, "%s: truncated: %zu data bytes expected, %zu present", path, bytes, have);
        goto fail;
    }
    fclose(f);
    return 0;
fail:
    fclose(f);
    return -1;
}
