/* fuzz_npy.c — libFuzzer target for the .npy reader (runner/data/npy.c): the input is a whole .npy
 * file. Its header is parsed from a buffer of exactly the input's size (so that a read past
 * the end is an ASan report), then the file is read back through hir_npy_read from a memfd,
 * the way `hir-run --inputs=DIR` reads it, for every dtype whose descr the header names, with
 * the header's own shape (when its data is at most 1 MiB) and with a shape that differs.
 * Errors are expected; crashes, leaks, UB, reads out of bounds and a successful read that did
 * not fill the array are findings. */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runner/data/npy.h"

static void read_as(const char *path, hir_dtype dt, const hir_npy_header *h, size_t size)
{
    int64_t n = 1;
    for (int i = 0; i < h->ndim; i++)
        n *= h->shape[i];                  /* the header checked that this fits */
    size_t es = hir_dtype_size(dt);
    if (n > (1 << 20) / 8)
        return;
    size_t bytes = (size_t)n * es;
    unsigned char *data = malloc(bytes ? bytes : 1);
    if (!data)
        abort();
    hir_diag e = {0};
    if (hir_npy_read(path, data, dt, h->ndim, h->shape, &e) == 0) {
        /* success means every byte of the array came from the file */
        size_t from = strcmp(h->descr, "<f4") == 0 && dt == HIR_DT_BFLOAT ? 4 : es;
        if (h->data_offset + (size_t)n * from > size) {
            fprintf(stderr, "fuzz_npy: read %zu bytes of data from a %zu-byte file\n",
                    (size_t)n * from, size);
            abort();
        }
    } else if (!hir_diag_last_error(&e)[0]) {
        fprintf(stderr, "fuzz_npy: hir_npy_read failed with no message\n");
        abort();
    }
    /* a different shape must be refused */
    if (h->ndim > 0) {
        int64_t other[HIR_MAX_DIMS];
        memcpy(other, h->shape, sizeof other);
        other[0] = h->shape[0] + 1;
        if (hir_npy_read(path, data, dt, h->ndim, other, &e) == 0) {
            fprintf(stderr, "fuzz_npy: a shape that differs from the header's was accepted\n");
            abort();
        }
    }
    free(data);
    hir_diag_fini(&e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned char *buf = malloc(size ? size : 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    hir_npy_header h;
    hir_diag e = {0};
    int rc = hir_npy_parse_header(buf, size, &h, "<fuzz>", &e);
    free(buf);
    if (rc) {
        if (!hir_diag_last_error(&e)[0])
            abort();
        hir_diag_fini(&e);
        return 0;
    }
    if (h.ndim < 0 || h.ndim > HIR_MAX_DIMS || h.data_offset > size)
        abort();

    int fd = memfd_create("fuzz.npy", MFD_CLOEXEC);
    if (fd < 0)
        abort();
    if (size && write(fd, data, size) != (ssize_t)size)
        abort();
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    for (int dt = 0; dt < HIR_DT_COUNT; dt++) {
        const char *want = hir_npy_descr((hir_dtype)dt, 0);
        bool ours = want && (!strcmp(want + 1, h.descr + 1) ||
                             (dt == HIR_DT_BFLOAT && (!strcmp(h.descr, "<f4") ||
                                                      !strcmp(h.descr, "<u2"))));
        if (ours)
            read_as(path, (hir_dtype)dt, &h, size);
    }
    close(fd);
    hir_diag_fini(&e);
    return 0;
}
