/* support.h — what every library of hir stands on: the panic path and assertions, the arena and
 * pointer vectors, the uint64 -> pointer map, string interning and the one FNV-1a hash.
 * Nothing here knows the Host IR; the dialect and the runner both build on it. */
#ifndef HIR_SUPPORT_H
#define HIR_SUPPORT_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Broken invariants abort with file and line; user mistakes never get here. */
#define hir_assert(c) ((c) ? (void)0 : hir_panic(__FILE__, __LINE__, #c))
_Noreturn void hir_panic(const char *file, int line, const char *what);

/* ------------------------------------------------------------------ file.c */

/* fopen(path, "w") for an output that may be a FIFO or a device: a FIFO that no process reads
 * is an error (errno ENXIO) at once instead of a wait without end. NULL with errno set. */
FILE       *hir_fopen_write(const char *path);
/* strerror(err), with ENXIO said as what it means after hir_fopen_write */
const char *hir_open_strerror(int err);

/* An output file written whole: the text goes to a temporary file beside the target, which is
 * renamed over the target at commit, so a failed write leaves the old file as it was. The
 * target is the path, or where its symbolic links lead (the link stays a link, and the file
 * it names gets the text; a link whose target does not exist is refused). A target that
 * exists keeps its mode and its owner and group (fchown, then fchmod, on the temporary file;
 * when the owner cannot be kept the write is refused); a new one is made with mode 0666 less
 * the umask, as fopen would, without changing the umask. For regular files: a caller with a
 * device or a FIFO writes to it directly (hir_fopen_write). */
typedef struct hir_replace {
    char *target;                /* the file renamed over at commit (malloc'd) */
    char *tmp;                   /* the temporary file beside it (malloc'd) */
    int fd;                      /* the temporary file, open for writing; -1 once closed */
} hir_replace;
/* 0 with r->fd open, or -1 with errno set and why in err (strerror, "out of memory", or a
 * sentence). */
int  hir_replace_open(hir_replace *r, const char *path, char *err, size_t errlen);
/* Closes r->fd unless the caller did (then it sets r->fd = -1) and renames the temporary file
 * over the target. 0, or -1 with why in err; the temporary file is gone either way. */
int  hir_replace_commit(hir_replace *r, char *err, size_t errlen);
/* Drops the temporary file; the target is untouched. Safe after a failed open or a commit. */
void hir_replace_abort(hir_replace *r);

/* ------------------------------------------------------------------ hash.c */

/* FNV-1a over n bytes, continuing from h (start with HIR_FNV1A_INIT). The one byte hash of hir:
 * map keys, interned strings, program and host fingerprints, data seeds, kernel caches. */
#define HIR_FNV1A_INIT UINT64_C(1469598103934665603)
uint64_t hir_fnv1a(const void *p, size_t n, uint64_t h);
/* The same over a NUL-terminated string. */
uint64_t hir_fnv1a_str(const char *s, uint64_t h);

/* ------------------------------------------------------------------ arena.c */

/* Out of memory. IR is built by many small allocations with no error path of their own, so
 * an arena that cannot grow does not return NULL: it jumps (longjmp) to the recovery point
 * that the library entry point using it installed with hir_arena_on_oom (hir_parse,
 * hir_program_verify, hir_pipeline_run, hir_gen_program). That entry point then frees what it
 * allocated, the arena included, and returns HIR_ENOMEM; the tool prints "out of memory" and
 * exits 1. The recovery point lives in the entry point's frame, never in a global. With no
 * recovery point installed, running out of memory is an internal error (hir_panic).
 * hir_arena_try_alloc never jumps: NULL on failure. hir_arena_new returns NULL on failure. */
#define HIR_ENOMEM (-2)
/* Alignment: every allocation is rounded to HIR_ARENA_ALIGN (8) bytes and aligned to it, which
 * suits pointers, int64_t, double, size_t and jmp_buf on the platforms hir builds for. It is less
 * than _Alignof(max_align_t) (16 on x86-64): nothing that needs more (long double, __int128,
 * SIMD vectors) may live in an arena. No user does; rounding to 16 cost about 5 MB of a 37 MB
 * program's IR. */
#define HIR_ARENA_ALIGN 8
typedef struct hir_arena hir_arena;
hir_arena *hir_arena_new(void);
void       hir_arena_free(hir_arena *a);
jmp_buf   *hir_arena_on_oom(hir_arena *a, jmp_buf *jb);   /* installs jb; returns the previous */
_Noreturn void hir_arena_oom(hir_arena *a);               /* jump to the recovery point */
bool       hir_arena_failed(const hir_arena *a);           /* an allocation has failed */
void      *hir_arena_try_alloc(hir_arena *a, size_t size);
void      *hir_arena_alloc(hir_arena *a, size_t size);            /* zeroed, HIR_ARENA_ALIGN-aligned */
void      *hir_arena_grow(hir_arena *a, void *old, size_t old_size, size_t new_size);
char      *hir_arena_strndup(hir_arena *a, const char *s, size_t n);
size_t     hir_arena_bytes(const hir_arena *a);

/* A large host buffer (tensor data): from 4 MiB up aligned to 2 MiB and advised to be backed
 * by transparent huge pages, so that its first touch costs one fault per 2 MiB instead of one
 * per 4 KiB page (a GiB-sized tensor: 512 faults instead of 262,144); smaller ones 64-byte
 * aligned. Released with free(). NULL when out of memory. */
void *hir_alloc_large(size_t bytes);

/* Growable array of pointers living in an arena. */
typedef struct hir_ptrvec {
    void **items;
    int n, cap;
} hir_ptrvec;
void hir_ptrvec_push(hir_arena *a, hir_ptrvec *v, void *item);
void hir_ptrvec_insert(hir_arena *a, hir_ptrvec *v, int at, void *item);
void hir_ptrvec_remove(hir_ptrvec *v, int at);

/* ------------------------------------------------------------------ map.c */

/* Open-addressing map from uint64 keys to pointers (its tables are malloc'd, not in an
 * arena). A map made by hir_map_init_in reports a failed growth through that arena's recovery
 * point (hir_arena_oom); hir_map_try_put returns -1 instead, leaving the map as it was. */
typedef struct hir_map {
    uint64_t *keys;
    void **vals;
    size_t cap, n;
    hir_arena *oom;              /* where a failed growth goes (NULL: hir_panic) */
} hir_map;
void  hir_map_init(hir_map *m);
void  hir_map_init_in(hir_map *m, hir_arena *oom);
int   hir_map_try_put(hir_map *m, uint64_t key, void *val);
void  hir_map_fini(hir_map *m);
void *hir_map_get(const hir_map *m, uint64_t key);
void  hir_map_put(hir_map *m, uint64_t key, void *val);
void  hir_map_del(hir_map *m, uint64_t key);
uint64_t hir_hash_bytes(const void *p, size_t n);

/* Interned strings: equal strings share one pointer for the life of the table. */
typedef struct hir_strtab {
    hir_arena *arena;
    hir_map map;                 /* hash -> chain of entries */
} hir_strtab;
void        hir_strtab_init(hir_strtab *t, hir_arena *a);
void        hir_strtab_fini(hir_strtab *t);
const char *hir_intern(hir_strtab *t, const char *s, size_t n);

#endif
