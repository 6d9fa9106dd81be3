/* arena.c — bump allocation for the IR: a program's values and statements live in one arena
 * and are released together; growable pointer vectors live there too. */
#define _GNU_SOURCE
#include "support/support.h"

#include <sys/mman.h>

#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* what arena users store (support.h, HIR_ARENA_ALIGN) */
_Static_assert(_Alignof(void *) <= HIR_ARENA_ALIGN && _Alignof(int64_t) <= HIR_ARENA_ALIGN &&
               _Alignof(double) <= HIR_ARENA_ALIGN && _Alignof(size_t) <= HIR_ARENA_ALIGN &&
               _Alignof(jmp_buf) <= HIR_ARENA_ALIGN, "arena alignment too small");

typedef struct chunk {
    struct chunk *next;
    size_t size, used;
    size_t mapped;               /* bytes mmap'd (0: calloc'd) */
    _Alignas(HIR_ARENA_ALIGN) unsigned char data[];
} chunk;

/* Chunks of 2 MiB and more are mmap'd with transparent huge pages asked for where the kernel
 * has them (madvise mode): a 16 MiB chunk then costs 8 page faults instead of 4096 (a parse of
 * a 37 MB program spent about 15 % of its time in the kernel's fault path). The pages are
 * zero either way. */
enum { HUGE = 1 << 21 };

static chunk *chunk_new(size_t want)
{
    if (want + sizeof(chunk) < HUGE)
        return calloc(1, sizeof(chunk) + want);
    if (want > SIZE_MAX / 4)
        return NULL;
    size_t len = (sizeof(chunk) + want + HUGE - 1) & ~(size_t)(HUGE - 1);
    /* map one huge page more and trim, so the chunk starts on a huge-page boundary */
    unsigned char *raw = mmap(NULL, len + HUGE, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    size_t head = (HUGE - (uintptr_t)raw % HUGE) % HUGE;
    if (head)
        munmap(raw, head);
    if (HUGE - head)
        munmap(raw + head + len, HUGE - head);
    void *m = raw + head;
#ifdef MADV_HUGEPAGE
    madvise(m, len, MADV_HUGEPAGE);   /* advice: ignored where unsupported */
#endif
    chunk *c = m;
    c->mapped = len;
    return c;
}

static void chunk_free(chunk *c)
{
    if (c->mapped)
        munmap(c, c->mapped);
    else
        free(c);
}

struct hir_arena {
    chunk *head;
    size_t total;
    jmp_buf *on_oom;             /* recovery point of the entry point using the arena */
    bool failed;
};

hir_arena *hir_arena_new(void)
{
    return calloc(1, sizeof(hir_arena));
}

jmp_buf *hir_arena_on_oom(hir_arena *a, jmp_buf *jb)
{
    jmp_buf *old = a->on_oom;
    a->on_oom = jb;
    return old;
}

bool hir_arena_failed(const hir_arena *a) { return a->failed; }

_Noreturn void hir_arena_oom(hir_arena *a)
{
    a->failed = true;
    if (a->on_oom)
        longjmp(*a->on_oom, 1);
    hir_panic(__FILE__, __LINE__, "out of memory outside any recovery point");
}

void hir_arena_free(hir_arena *a)
{
    if (!a)
        return;
    for (chunk *c = a->head, *n; c; c = n) {
        n = c->next;
        chunk_free(c);
    }
    free(a);
}

void *hir_arena_try_alloc(hir_arena *a, size_t size)
{
    if (size > SIZE_MAX / 2) {
        a->failed = true;
        return NULL;
    }
    size = (size + HIR_ARENA_ALIGN - 1) & ~(size_t)(HIR_ARENA_ALIGN - 1);
    chunk *c = a->head;
    if (!c || c->size - c->used < size) {
        size_t want = size > (1u << 16) ? size : (1u << 16);
        if (c && want < c->size * 2 && c->size < (1u << 24))
            want = c->size * 2;
        c = chunk_new(want);   /* zeroed once (fresh pages cost nothing to zero) */
        if (!c) {
            a->failed = true;
            return NULL;
        }
        c->size = c->mapped ? c->mapped - sizeof *c : want;
        c->used = 0;
        c->next = a->head;
        a->head = c;
        a->total += c->size;
    }
    void *p = c->data + c->used;   /* already zero: chunks are fresh memory, never reused */
    c->used += size;
    return p;
}

void *hir_arena_alloc(hir_arena *a, size_t size)
{
    chunk *c = a->head;          /* the common case in place: room in the current chunk */
    if (c && size <= SIZE_MAX / 2) {
        size_t r = (size + HIR_ARENA_ALIGN - 1) & ~(size_t)(HIR_ARENA_ALIGN - 1);
        if (c->size - c->used >= r) {
            void *p = c->data + c->used;
            c->used += r;
            return p;
        }
    }
    void *p = hir_arena_try_alloc(a, size);
    if (!p)
        hir_arena_oom(a);
    return p;
}

void *hir_arena_grow(hir_arena *a, void *old, size_t old_size, size_t new_size)
{
    void *p = hir_arena_alloc(a, new_size);
    if (old && old_size)
        memcpy(p, old, old_size < new_size ? old_size : new_size);
    return p;
}

char *hir_arena_strndup(hir_arena *a, const char *s, size_t n)
{
    char *p = hir_arena_alloc(a, n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

size_t hir_arena_bytes(const hir_arena *a) { return a->total; }

void hir_ptrvec_push(hir_arena *a, hir_ptrvec *v, void *item)
{
    if (v->n == v->cap) {
        int cap = v->cap ? v->cap * 2 : 4;
        v->items = hir_arena_grow(a, v->items, sizeof(void *) * v->n, sizeof(void *) * cap);
        v->cap = cap;
    }
    v->items[v->n++] = item;
}

void hir_ptrvec_insert(hir_arena *a, hir_ptrvec *v, int at, void *item)
{
    hir_assert(at >= 0 && at <= v->n);
    hir_ptrvec_push(a, v, NULL);
    memmove(v->items + at + 1, v->items + at, sizeof(void *) * (v->n - 1 - at));
    v->items[at] = item;
}

void hir_ptrvec_remove(hir_ptrvec *v, int at)
{
    hir_assert(at >= 0 && at < v->n);
    memmove(v->items + at, v->items + at + 1, sizeof(void *) * (v->n - 1 - at));
    v->n--;
}

void *hir_alloc_large(size_t bytes)
{
    const size_t huge = (size_t)2 << 20;
    if (bytes > SIZE_MAX - huge)
        return NULL;
    if (bytes < 2 * huge) {
        size_t rounded = (bytes + 63) & ~(size_t)63;
        return aligned_alloc(64, rounded ? rounded : 64);
    }
    size_t rounded = (bytes + huge - 1) & ~(huge - 1);
    void *p = aligned_alloc(huge, rounded);
#ifdef MADV_HUGEPAGE
    if (p)
        madvise(p, rounded, MADV_HUGEPAGE);   /* advice: ignored where unsupported */
#endif
    return p;
}
