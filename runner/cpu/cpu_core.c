/* cpu_core.c — the CPU backend's core entries that no other file implements: memory, streams
 * as tokens, events on the monotonic clock, fill and copy, and the (empty) teardown of peers.
 * Everything runs synchronously on the calling thread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runner/backend/convert.h"
#include "runner/cpu/cpu_internal.h"
#include "support/support.h"

/* ---------------------------------------------------------------- fill, copy */

typedef struct fill_ctx {
    unsigned char bytes[8];
    size_t es;
} fill_ctx;

static int fill_row(void *ctx, char **p, const int64_t *st, int64_t n)
{
    fill_ctx *f = ctx;
    for (int64_t i = 0; i < n; i++)
        memcpy(p[0] + i * st[0] * (int64_t)f->es, f->bytes, f->es);
    return 0;
}

int cpu_fill(hir_backend *be, hir_stream *s, const hir_view *out, double value, hir_diag *e)
{
    if (cpu_check_view(out, "fill", e))
        return -1;
    fill_ctx f = {{0}, hir_dtype_size(out->dtype)};
    hir_store_f64(f.bytes, out->dtype, value);   /* convert once, then replicate bytes */
    const hir_view *vs[1] = {out};
    return cpu_for_rows(out->ndim, out->shape, 1, vs, fill_row, &f);
}

int cpu_copy(hir_backend *be, hir_stream *s, const hir_view *dst, const hir_view *src,
             hir_diag *e)
{
    return cpu_copy_view(dst, src, e);
}

/* ---------------------------------------------------------------- memory */

int cpu_alloc(hir_backend *be, size_t bytes, void **ptr, hir_diag *e)
{
    /* at least 64-byte alignment: what a vectorized BLAS likes, and never less than any dtype
     * needs; large buffers on huge pages (support.h) */
    void *p = hir_alloc_large(bytes);
    if (!p)
        return hir_fail(e, "out of host memory (cannot allocate %zu bytes)", bytes);
    *ptr = p;
    return 0;
}

void cpu_free(hir_backend *be, void *ptr) { free(ptr); }

int cpu_mem_available(hir_backend *be, size_t *bytes, hir_diag *e)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return hir_fail(e, "/proc/meminfo: cannot open");
    char line[256];
    unsigned long long kb = 0;
    int found = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
            found = 1;
            break;
        }
    fclose(f);
    if (!found)
        return hir_fail(e, "/proc/meminfo: no MemAvailable line");
    *bytes = (size_t)kb * 1024;
    return 0;
}

int cpu_upload(hir_backend *be, void *dst, const void *src, size_t bytes, hir_diag *e)
{
    memmove(dst, src, bytes);
    return 0;
}

int cpu_download(hir_backend *be, void *dst, const void *src, size_t bytes, hir_diag *e)
{
    memmove(dst, src, bytes);
    return 0;
}

/* ---------------------------------------------------------------- streams and events */

hir_stream *cpu_stream_main(hir_backend *be) { return &cpu_of(be)->main; }

int cpu_stream_get(hir_backend *be, int64_t key, hir_stream **s, hir_diag *e)
{
    hir_cpu_backend *cb = cpu_of(be);
    if (key < 0)
        return hir_fail(e, "stream key %lld is negative", (long long)key);
    for (int i = 0; i < cb->nstreams; i++)
        if (cb->streams[i]->key == key) {
            *s = cb->streams[i];
            return 0;
        }
    if (cb->nstreams == cb->cap_streams) {
        int cap = cb->cap_streams ? 2 * cb->cap_streams : 8;
        struct hir_stream **v = realloc(cb->streams, (size_t)cap * sizeof *v);
        if (!v)
            return hir_fail(e, "stream_get: out of memory");
        cb->streams = v;
        cb->cap_streams = cap;
    }
    struct hir_stream *n = malloc(sizeof *n);
    if (!n)
        return hir_fail(e, "stream_get: out of memory");
    n->key = key;
    cb->streams[cb->nstreams++] = n;
    *s = n;
    return 0;
}

/* Work is done when it is issued, so there is never anything to wait for. */
int cpu_stream_wait(hir_backend *be, hir_stream *w, hir_stream *on, hir_diag *e)
{
    return 0;
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int cpu_event_create(hir_backend *be, hir_event **ev, hir_diag *e)
{
    *ev = calloc(1, sizeof **ev);
    return *ev ? 0 : hir_fail(e, "event_create: out of memory");
}

int cpu_event_record(hir_backend *be, hir_event *ev, hir_stream *s, hir_diag *e)
{
    ev->t = mono_s();
    return 0;
}

int cpu_event_elapsed_ms(hir_backend *be, hir_event *from, hir_event *to, double *ms,
                         hir_diag *e)
{
    *ms = (to->t - from->t) * 1e3;
    return 0;
}

void cpu_event_destroy(hir_backend *be, hir_event *ev) { free(ev); }

/* ---------------------------------------------------------------- teardown */

/* Nothing to release: ranks share no memory, every transfer is a copy over MPI. */
int cpu_release_peers(hir_backend *be, hir_diag *e)
{
    return 0;
}
