/* input.c — reading an input file: read into memory, or mapped copy-on-write (input.h). */
#define _GNU_SOURCE
#include "support/input.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* A named input must be a regular file: a FIFO would block the open (and the read) until some
 * writer came, a directory or a device has no text of its own. Opened without blocking, so
 * a FIFO is refused at once; '-' reads stdin, whatever it is. Returns the descriptor (blocking
 * again) with its size in *size, or -1 with a message in err. */
static int open_regular(const char *path, size_t *size, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb)) {
        snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (!S_ISREG(sb.st_mode)) {
        snprintf(err, errlen, "cannot read '%s': not a regular file (%s); give a file, or '-' "
                 "for stdin", path, S_ISFIFO(sb.st_mode) ? "a FIFO" : S_ISDIR(sb.st_mode) ?
                 "a directory" : S_ISCHR(sb.st_mode) ? "a character device" : "a special file");
        close(fd);
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK)) {
        snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    *size = sb.st_size >= 0 && (uint64_t)sb.st_size < ((uint64_t)1 << 32) ? (size_t)sb.st_size
                                                                           : SIZE_MAX;
    return fd;
}

static size_t page_size(void)
{
    long pg = sysconf(_SC_PAGESIZE);
    return pg > 0 ? (size_t)pg : 4096;
}

/* The file's size bytes mapped copy-on-write, with zero bytes after them up to the end of a
 * page and at least two: the zero tail of the file's last page, or an anonymous page mapped
 * right after it where the file ends within two bytes of a page end. Reserving the whole
 * range anonymously first and mapping the file over its head keeps the two adjacent. 0, or -1
 * when the kernel refuses (the caller reads the file instead). */
static int map_file(hir_input *in, int fd, size_t size)
{
    size_t pg = page_size();
    size_t total = (size + 2 + pg - 1) / pg * pg, filelen = (size + pg - 1) / pg * pg;
    char *base = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED)
        return -1;
    if (mmap(base, filelen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd, 0) ==
        MAP_FAILED) {
        munmap(base, total);
        return -1;
    }
    in->text = base;
    in->len = size;
    in->maplen = total;
    return 0;
}

static int read_fail(FILE *f, char *buf, char *err, size_t errlen, const char *fmt,
                     const char *path)
{
    snprintf(err, errlen, fmt, path);
    free(buf);
    if (f != stdin)
        fclose(f);
    return -1;
}

/* The whole stream into a malloc'd buffer: of the file's exact size (plus the two NULs) when
 * it is known (cap), growing for pipes. */
static int read_stream(hir_input *in, FILE *f, size_t cap, const char *path, char *err,
                       size_t errlen)
{
    size_t n = 0;
    char *buf = malloc(cap);
    if (!buf)
        return read_fail(f, NULL, err, errlen, "out of memory reading '%s'", path);
    for (;;) {
        if (cap - n < 3) {
            if (cap >= ((size_t)1 << 32))
                return read_fail(f, buf, err, errlen, "'%s' is larger than 4 GiB", path);
            cap *= 2;
            char *nb = realloc(buf, cap);
            if (!nb)
                return read_fail(f, buf, err, errlen, "out of memory reading '%s'", path);
            buf = nb;
        }
        size_t got = fread(buf + n, 1, cap - n - 2, f);
        n += got;
        if (got == 0)
            break;
    }
    if (ferror(f))
        return read_fail(f, buf, err, errlen, "error reading '%s'", path);
    if (f != stdin)
        fclose(f);
    buf[n] = buf[n + 1] = 0;
    in->text = buf;
    in->len = n;
    return 0;
}

int hir_input_read(hir_input *in, const char *path, unsigned flags, char *err, size_t errlen)
{
    memset(in, 0, sizeof *in);
    if (!strcmp(path, "-"))
        return read_stream(in, stdin, (size_t)1 << 16, path, err, errlen);
    size_t size;
    int fd = open_regular(path, &size, err, errlen);
    if (fd < 0)
        return -1;
    /* sizes near 4 GiB are read, and refused there as before */
    if ((flags & HIR_INPUT_MAP) && size >= HIR_INPUT_MAP_MIN && size < ((size_t)1 << 31) &&
        map_file(in, fd, size) == 0) {
        close(fd);
        return 0;
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    return read_stream(in, f, size == SIZE_MAX ? (size_t)1 << 16 : size + 3, path, err, errlen);
}

void hir_input_fini(hir_input *in)
{
    if (in->maplen)
        munmap(in->text, in->maplen);
    else
        free(in->text);
    memset(in, 0, sizeof *in);
}

void hir_text_release(const char *text, bool mapped, size_t from, size_t to)
{
    if (!mapped || to <= from)
        return;
    uintptr_t pg = page_size();
    uintptr_t b = ((uintptr_t)text + from + pg - 1) & ~(pg - 1);
    uintptr_t e = ((uintptr_t)text + to) & ~(pg - 1);
    if (e > b)
        madvise((void *)b, e - b, MADV_DONTNEED);
}
