/* outfile.c — checked, all-or-nothing output for the tools (outfile.h). */
#define _GNU_SOURCE              /* fopencookie */
#include "tools/outfile.h"

#include "support/support.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int write_all(int fd, const char *buf, size_t len)
{
    while (len) {
        ssize_t k = write(fd, buf, len);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            if (k == 0)
                errno = EIO;
            return -1;
        }
        buf += k;
        len -= (size_t)k;
    }
    return 0;
}

int hir_tool_write_output(const char *path, const char *buf, size_t len, char *err,
                          size_t errlen)
{
    if (!path || !strcmp(path, "-")) {
        if (fflush(stdout) || write_all(1, buf, len)) {
            snprintf(err, errlen, "writing the output to stdout failed: %s", strerror(errno));
            return -1;
        }
        return 0;
    }
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        /* a device or a pipe (/dev/null, /dev/stdout): no temporary name to rename; a FIFO
         * that no process reads is an error, not a wait without end */
        FILE *f = hir_fopen_write(path);
        int ok = f && fwrite(buf, 1, len, f) == len;
        int saved = errno;
        if (f && fclose(f) && ok) {
            ok = 0;
            saved = errno;
        }
        if (!ok) {
            snprintf(err, errlen, "cannot write '%s': %s", path, hir_open_strerror(saved));
            return -1;
        }
        return 0;
    }
    hir_replace rep;
    char why[256];
    int rc = hir_replace_open(&rep, path, why, sizeof why) || write_all(rep.fd, buf, len)
             || hir_replace_commit(&rep, why, sizeof why) ? -1 : 0;
    if (rc && rep.fd >= 0)          /* the write failed: why is not set yet */
        snprintf(why, sizeof why, "%s", strerror(errno));
    hir_replace_abort(&rep);
    if (rc)
        snprintf(err, errlen, "cannot write '%s': %s", path, why);
    return rc;
}

enum { OUT_RENAME, OUT_SPOOL, OUT_MEM };

/* The stdio stream's writes go straight to the temporary file; the first error is kept. */
static ssize_t cookie_write(void *c, const char *b, size_t n)
{
    hir_outfile *o = c;
    if (o->err)
        return -1;
    if (write_all(o->fd, b, n)) {
        o->err = errno;
        return -1;
    }
    return (ssize_t)n;
}

/* OUT_MEM's writes: appended to o->mem, which doubles when full (a memory stream would zero
 * every byte it grows by and copy the text in small pieces). Out of memory is kept as ENOMEM. */
static ssize_t cookie_mem_write(void *c, const char *b, size_t n)
{
    hir_outfile *o = c;
    if (o->err)
        return -1;
    if (n > o->memcap - o->memlen) {
        size_t cap = o->memcap ? o->memcap : sizeof o->buf;
        while (cap - o->memlen < n && cap <= SIZE_MAX / 2)
            cap *= 2;
        char *m = cap - o->memlen >= n ? realloc(o->mem, cap) : NULL;
        if (!m) {
            o->err = ENOMEM;
            return -1;
        }
        o->mem = m;
        o->memcap = cap;
    }
    memcpy(o->mem + o->memlen, b, n);
    o->memlen += n;
    return (ssize_t)n;
}

static int open_stream(hir_outfile *o, cookie_write_function_t *write)
{
    cookie_io_functions_t io = {.write = write};
    o->f = fopencookie(o, "w", io);
    if (!o->f)
        return -1;
    setvbuf(o->f, o->buf, _IOFBF, sizeof o->buf);
    return 0;
}

static void close_fd(hir_outfile *o)
{
    if (o->fd >= 0)
        close(o->fd);
    o->fd = -1;
}

int hir_outfile_open(hir_outfile *o, const char *path)
{
    o->path = path && strcmp(path, "-") ? path : NULL;
    o->fd = -1;
    o->rep = (hir_replace){NULL, NULL, -1};
    o->err = 0;
    o->mem = NULL;
    o->memlen = 0;
    o->memcap = 0;
    struct stat st;
    if (!o->path) {
        FILE *t = tmpfile();
        if (t) {
            o->fd = dup(fileno(t));
            fclose(t);                 /* unnamed: it goes with its last descriptor */
        }
        if (o->fd >= 0 && !open_stream(o, cookie_write)) {
            o->mode = OUT_SPOOL;
            return 0;
        }
        close_fd(o);
    } else if (stat(o->path, &st) ? errno == ENOENT : S_ISREG(st.st_mode)) {
        char why[256];
        if (!hir_replace_open(&o->rep, o->path, why, sizeof why)) {
            o->fd = o->rep.fd;
            if (!open_stream(o, cookie_write)) {
                o->mode = OUT_RENAME;
                return 0;
            }
        }
        hir_replace_abort(&o->rep);
        o->fd = -1;
    }
    /* a device or a FIFO, or no temporary file: in memory, written at commit as before */
    o->mode = OUT_MEM;
    return open_stream(o, cookie_mem_write);
}

void hir_outfile_abort(hir_outfile *o)
{
    if (o->f)
        fclose(o->f);
    o->f = NULL;
    if (o->mode == OUT_RENAME)
        o->fd = -1;                /* rep's descriptor: closed by hir_replace_abort */
    close_fd(o);
    hir_replace_abort(&o->rep);
    free(o->mem);
    o->mem = NULL;
}

/* Copies the spooled output to stdout. */
static int copy_spool(hir_outfile *o)
{
    if (lseek(o->fd, 0, SEEK_SET) < 0)
        return -1;
    for (;;) {
        ssize_t k = read(o->fd, o->buf, sizeof o->buf);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -1;
        if (k == 0)
            return 0;
        if (write_all(1, o->buf, (size_t)k))
            return -1;
    }
}

int hir_outfile_commit(hir_outfile *o, char *err, size_t errlen)
{
    int rc = 0;
    if (o->mode == OUT_MEM) {
        bool lost = fclose(o->f) != 0 || o->err;   /* the buffer could not grow */
        o->f = NULL;
        if (lost) {
            snprintf(err, errlen, "out of memory");
            rc = HIR_ENOMEM;
        } else {
            rc = hir_tool_write_output(o->path, o->mem, o->memlen, err, errlen);
        }
        hir_outfile_abort(o);
        return rc;
    }
    int e = 0;
    if (fflush(o->f) || o->err)
        e = o->err ? o->err : errno;
    fclose(o->f);
    o->f = NULL;
    if (!e && o->mode == OUT_SPOOL && (fflush(stdout) || copy_spool(o)))
        e = errno;
    char why[256] = "";
    if (!e && o->mode == OUT_RENAME) {
        o->fd = -1;
        if (hir_replace_commit(&o->rep, why, sizeof why))
            e = errno;
    }
    if (e) {
        if (o->mode == OUT_SPOOL)
            snprintf(err, errlen, "writing the output to stdout failed: %s", strerror(e));
        else
            snprintf(err, errlen, "cannot write '%s': %s", o->path, why[0] ? why : strerror(e));
        rc = -1;
    }
    hir_outfile_abort(o);
    return rc;
}
