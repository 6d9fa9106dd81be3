/* map.c — an open-addressing hash map from 64-bit keys to pointers, and string interning
 * built on it. Used for every by-number lookup in a program (tensors, IterDomains, ...). */
#include "support/support.h"

#include <stdlib.h>
#include <string.h>

#define EMPTY UINT64_MAX   /* keys are numbers >= 0 or hashes with the top bit cleared */

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

uint64_t hir_hash_bytes(const void *p, size_t n)
{
    return mix(hir_fnv1a(p, n, HIR_FNV1A_INIT)) >> 1;   /* never EMPTY */
}

void hir_map_init(hir_map *m) { memset(m, 0, sizeof *m); }

void hir_map_init_in(hir_map *m, hir_arena *oom)
{
    memset(m, 0, sizeof *m);
    m->oom = oom;
}

void hir_map_fini(hir_map *m)
{
    hir_arena *oom = m->oom;
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
    m->oom = oom;
}

/* Moves the entries into tables of cap slots; -1 (the map unchanged) when they cannot be had. */
static int rehash(hir_map *m, size_t cap)
{
    uint64_t *ok = m->keys;
    void **ov = m->vals;
    size_t ocap = m->cap;
    uint64_t *nk = cap <= SIZE_MAX / sizeof *nk ? malloc(cap * sizeof *nk) : NULL;
    void **nv = nk ? calloc(cap, sizeof *nv) : NULL;
    if (!nv) {
        free(nk);
        return -1;
    }
    m->keys = nk;
    m->vals = nv;
    memset(nk, 0xff, cap * sizeof *nk);     /* every slot EMPTY (UINT64_MAX) */
    m->cap = cap;
    m->n = 0;
    size_t mask = cap - 1;
    for (size_t i = 0; i < ocap; i++)
        if (ok[i] != EMPTY && ov[i]) {       /* keys are distinct: the first empty slot */
            size_t j = mix(ok[i]) & mask;
            while (nk[j] != EMPTY)
                j = (j + 1) & mask;
            nk[j] = ok[i];
            nv[j] = ov[i];
            m->n++;
        }
    free(ok);
    free(ov);
    return 0;
}

void *hir_map_get(const hir_map *m, uint64_t key)
{
    if (!m->cap)
        return NULL;
    size_t mask = m->cap - 1;
    for (size_t i = mix(key) & mask;; i = (i + 1) & mask) {
        if (m->keys[i] == EMPTY)
            return NULL;
        if (m->keys[i] == key)
            return m->vals[i];
    }
}

int hir_map_try_put(hir_map *m, uint64_t key, void *val)
{
    hir_assert(key != EMPTY);
    if ((m->n + 1) * 4 >= m->cap * 3 && rehash(m, m->cap ? m->cap * 2 : 16))
        return -1;
    size_t mask = m->cap - 1;
    for (size_t i = mix(key) & mask;; i = (i + 1) & mask) {
        if (m->keys[i] == EMPTY) {
            m->keys[i] = key;
            m->vals[i] = val;
            m->n++;
            return 0;
        }
        if (m->keys[i] == key) {
            m->vals[i] = val;
            return 0;
        }
    }
}

void hir_map_put(hir_map *m, uint64_t key, void *val)
{
    if (hir_map_try_put(m, key, val)) {
        if (m->oom)
            hir_arena_oom(m->oom);
        hir_panic(__FILE__, __LINE__, "out of memory (a map with no recovery point)");
    }
}

/* Deletion keeps the slot (value NULL) so probe chains stay intact. */
void hir_map_del(hir_map *m, uint64_t key)
{
    if (!m->cap)
        return;
    size_t mask = m->cap - 1;
    for (size_t i = mix(key) & mask;; i = (i + 1) & mask) {
        if (m->keys[i] == EMPTY)
            return;
        if (m->keys[i] == key) {
            m->vals[i] = NULL;
            return;
        }
    }
}

typedef struct strent {
    struct strent *next;
    size_t len;
    char s[];
} strent;

void hir_strtab_init(hir_strtab *t, hir_arena *a)
{
    t->arena = a;
    hir_map_init_in(&t->map, a);
}

void hir_strtab_fini(hir_strtab *t) { hir_map_fini(&t->map); }

const char *hir_intern(hir_strtab *t, const char *s, size_t n)
{
    uint64_t h = hir_hash_bytes(s, n);
    strent *head = hir_map_get(&t->map, h);
    for (strent *e = head; e; e = e->next)
        if (e->len == n && memcmp(e->s, s, n) == 0)
            return e->s;
    strent *e = hir_arena_alloc(t->arena, sizeof *e + n + 1);
    e->len = n;
    memcpy(e->s, s, n);
    e->s[n] = 0;
    e->next = head;
    hir_map_put(&t->map, h, e);
    return e->s;
}
