/* test_dialect_core.c — the dialect's containers: arena and pointer vectors, the uint64 map,
 * large host buffers, string interning, and the line/column computation of diagnostics. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dialect/hir.h"

static void arena_zeroed_aligned(void **state)
{
    hir_arena *a = hir_arena_new();
    for (int i = 1; i < 5000; i += 7) {
        unsigned char *p = hir_arena_alloc(a, (size_t)i);
        assert_true(((uintptr_t)p & (HIR_ARENA_ALIGN - 1)) == 0);
        for (int k = 0; k < i; k++)
            assert_int_equal(p[k], 0);
        memset(p, 0xab, (size_t)i);
    }
    /* one allocation larger than a chunk */
    char *big = hir_arena_alloc(a, 1 << 20);
    assert_non_null(big);
    assert_int_equal(big[(1 << 20) - 1], 0);
    assert_true(hir_arena_bytes(a) >= (1 << 20));
    char *s = hir_arena_strndup(a, "hello world", 5);
    assert_string_equal(s, "hello");
    int *g = hir_arena_alloc(a, sizeof(int) * 4);
    g[3] = 7;
    g = hir_arena_grow(a, g, sizeof(int) * 4, sizeof(int) * 8);
    assert_int_equal(g[3], 7);
    assert_int_equal(g[7], 0);
    hir_arena_free(a);
}

/* hir_alloc_large: 64-byte aligned below 4 MiB, 2 MiB aligned from there, writable to the last
 * byte, released with free(); NULL (not a wrapped-around size) for an impossible request. */
static void alloc_large_aligned(void **state)
{
    size_t sizes[] = {0, 1, 100, (size_t)4 << 20, ((size_t)4 << 20) + 1, (size_t)9 << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        unsigned char *p = hir_alloc_large(sizes[i]);
        assert_non_null(p);
        size_t align = sizes[i] >= ((size_t)4 << 20) ? (size_t)2 << 20 : 64;
        assert_true((uintptr_t)p % align == 0);
        if (sizes[i]) {
            p[0] = 1;
            p[sizes[i] - 1] = 2;
        }
        free(p);
    }
    assert_null(hir_alloc_large(SIZE_MAX - 10));
}

static void ptrvec_push_insert_remove(void **state)
{
    hir_arena *a = hir_arena_new();
    hir_ptrvec v = {0};
    for (intptr_t i = 0; i < 1000; i++)
        hir_ptrvec_push(a, &v, (void *)i);
    assert_int_equal(v.n, 1000);
    assert_true(v.cap >= 1000);
    hir_ptrvec_insert(a, &v, 0, (void *)(intptr_t)-1);
    hir_ptrvec_insert(a, &v, v.n, (void *)(intptr_t)-2);
    hir_ptrvec_insert(a, &v, 500, (void *)(intptr_t)-3);
    assert_int_equal(v.n, 1003);
    assert_int_equal((intptr_t)v.items[0], -1);
    assert_int_equal((intptr_t)v.items[500], -3);
    assert_int_equal((intptr_t)v.items[501], 499);
    assert_int_equal((intptr_t)v.items[1002], -2);
    hir_ptrvec_remove(&v, 500);
    hir_ptrvec_remove(&v, 0);
    assert_int_equal(v.n, 1001);
    for (intptr_t i = 0; i < 1000; i++)
        assert_int_equal((intptr_t)v.items[i], i);
    hir_arena_free(a);
}

static void map_put_get_del(void **state)
{
    hir_map m;
    hir_map_init(&m);
    assert_null(hir_map_get(&m, 3));
    hir_map_del(&m, 3);   /* on an empty map */
    for (uint64_t k = 0; k < 100000; k++)
        hir_map_put(&m, k * 7919, (void *)(uintptr_t)(k + 1));
    for (uint64_t k = 0; k < 100000; k++)
        assert_int_equal((uintptr_t)hir_map_get(&m, k * 7919), k + 1);
    assert_null(hir_map_get(&m, 1));
    /* overwrite, delete, and reinsert keep the probe chains intact */
    hir_map_put(&m, 7919, (void *)(uintptr_t)42);
    assert_int_equal((uintptr_t)hir_map_get(&m, 7919), 42);
    for (uint64_t k = 0; k < 100000; k += 2)
        hir_map_del(&m, k * 7919);
    for (uint64_t k = 0; k < 100000; k++) {
        void *v = hir_map_get(&m, k * 7919);
        if (k % 2 == 0)
            assert_null(v);
        else
            assert_non_null(v);
    }
    hir_map_put(&m, 0, (void *)(uintptr_t)5);
    assert_int_equal((uintptr_t)hir_map_get(&m, 0), 5);
    hir_map_fini(&m);
    /* hashes never collide with the empty marker */
    assert_true(hir_hash_bytes("", 0) != UINT64_MAX);
    assert_true(hir_hash_bytes("abc", 3) == hir_hash_bytes("abc", 3));
    assert_true(hir_hash_bytes("abc", 3) != hir_hash_bytes("abd", 3));
}

static void interning_shares_pointers(void **state)
{
    hir_arena *a = hir_arena_new();
    hir_strtab t;
    hir_strtab_init(&t, a);
    char buf1[] = "streamIdx", buf2[] = "streamIdx";
    const char *x = hir_intern(&t, buf1, strlen(buf1));
    const char *y = hir_intern(&t, buf2, strlen(buf2));
    assert_ptr_equal(x, y);
    assert_ptr_not_equal(x, buf1);
    assert_string_equal(x, "streamIdx");
    const char *z = hir_intern(&t, "streamIdxX", 9);   /* prefix of a longer buffer */
    assert_ptr_equal(z, x);
    assert_ptr_not_equal(hir_intern(&t, "rank", 4), x);
    assert_string_equal(hir_intern(&t, "", 0), "");
    /* many strings, all distinct and all found again */
    const char *keep[2000];
    char s[32];
    for (int i = 0; i < 2000; i++) {
        snprintf(s, sizeof s, "name%d", i);
        keep[i] = hir_intern(&t, s, strlen(s));
    }
    for (int i = 0; i < 2000; i++) {
        snprintf(s, sizeof s, "name%d", i);
        assert_ptr_equal(hir_intern(&t, s, strlen(s)), keep[i]);
    }
    hir_strtab_fini(&t);
    hir_arena_free(a);
}

/* hir_dtype_match: the longest name that starts the word (a name ending the word ends the
 * search early; a shorter name that is a prefix of a longer one must not win), and the name
 * lengths the printer uses */
static void dtype_longest_match(void **state)
{
    (void)state;
    hir_dtype dt = HIR_DT_COUNT;
    for (int i = 0; i < HIR_DT_COUNT; i++) {
        const char *nm = hir_dtype_name((hir_dtype)i);
        size_t n = strlen(nm);
        assert_int_equal(hir_dtype_name_len((hir_dtype)i), n);
        char buf[64];
        snprintf(buf, sizeof buf, "%s[iS0{4}]", nm);
        assert_int_equal(hir_dtype_match(nm, n, &dt), n);
        assert_int_equal(dt, i);
        assert_int_equal(hir_dtype_match(buf, strlen(buf), &dt), n);
        assert_int_equal(dt, i);
    }
    assert_int_equal(hir_dtype_match("int64_t", 7, &dt), 7);
    assert_int_equal(dt, HIR_DT_INT64);
    assert_int_equal(hir_dtype_match("int64_t", 6, &dt), 3);   /* "int64_" reads as int */
    assert_int_equal(dt, HIR_DT_INT32);
    assert_int_equal(hir_dtype_match("int8_tx", 7, &dt), 6);
    assert_int_equal(dt, HIR_DT_INT8);
    assert_int_equal(hir_dtype_match("__e2m1_x2", 9, &dt), 9);
    assert_int_equal(dt, HIR_DT_E2M1X2);
    assert_int_equal(hir_dtype_match("__e2m1_x", 8, &dt), 6);
    assert_int_equal(dt, HIR_DT_E2M1);
    dt = HIR_DT_COUNT;
    assert_int_equal(hir_dtype_match("__bfloaX", 8, &dt), 0);
    assert_int_equal(hir_dtype_match("", 0, &dt), 0);
    assert_int_equal(dt, HIR_DT_COUNT);
    for (int i = 0; i < HIR_PT_COUNT; i++)
        assert_int_equal(hir_ptype_name_len((hir_ptype)i), strlen(hir_ptype_name((hir_ptype)i)));
    for (int i = 0; i < HIR_MEM_COUNT; i++)
        assert_int_equal(hir_mem_letter_len((hir_mem)i), strlen(hir_mem_letter((hir_mem)i)));
}

static void diag_line_col(void **state)
{
    const char text[] = "ab\n\ncdef\nx";
    hir_source s;
    hir_source_init(&s, "t.hir", text, sizeof text - 1);
    int line, col;
    hir_source_linecol(&s, 0, &line, &col);
    assert_int_equal(line, 1); assert_int_equal(col, 1);
    hir_source_linecol(&s, 2, &line, &col);   /* the newline belongs to line 1 */
    assert_int_equal(line, 1); assert_int_equal(col, 3);
    hir_source_linecol(&s, 3, &line, &col);
    assert_int_equal(line, 2); assert_int_equal(col, 1);
    hir_source_linecol(&s, 6, &line, &col);
    assert_int_equal(line, 3); assert_int_equal(col, 3);
    hir_source_linecol(&s, 9, &line, &col);
    assert_int_equal(line, 4); assert_int_equal(col, 1);
    hir_source_linecol(&s, 10, &line, &col);  /* end of input */
    assert_int_equal(line, 4); assert_int_equal(col, 2);
    hir_source_linecol(&s, 1000, &line, &col);  /* clamped */
    assert_int_equal(line, 4); assert_int_equal(col, 2);
    s.line_base = 10;                           /* a --split-input-file part */
    hir_source_linecol(&s, 3, &line, &col);
    assert_int_equal(line, 12);
    hir_source_fini(&s);
}

static void diag_print_and_count(void **state)
{
    const char text[] = "  FOR i1 from 0 to 3:\n";
    hir_source s;
    hir_source_init(&s, "t.hir", text, sizeof text - 1);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    hir_diag d;
    hir_diag_init(&d, f);
    hir_loc l = {&s, 6, 8};
    hir_diag_entry *e = hir_diag_emit(&d, HIR_ERROR, l, "bad %s", "index");
    hir_loc n = {&s, 2, 5};
    hir_diag_note(&d, e, n, "loop here");
    hir_diag_emit(&d, HIR_WARNING, (hir_loc){0}, "no location");
    assert_int_equal(d.errors, 1);
    assert_int_equal(d.warnings, 1);
    hir_diag_flush(&d);
    fclose(f);
    assert_string_equal(buf,
        "t.hir:1:7: error: bad index\n"
        "  FOR i1 from 0 to 3:\n"
        "      ^~\n"
        "t.hir:1:3: note: loop here\n"
        "  FOR i1 from 0 to 3:\n"
        "  ^~~\n"
        "<unknown>: warning: no location\n");
    free(buf);
    hir_diag_fini(&d);
    hir_source_fini(&s);
}

/* A prefix set once goes before every diagnostic; one without a location is one printable
 * line (control bytes as \xNN, cut after 300 bytes). */
static void diag_prefix_and_one_line(void **state)
{
    const char text[] = "x = y\n";
    hir_source s;
    hir_source_init(&s, "t.hir", text, sizeof text - 1);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    hir_diag d;
    hir_diag_init(&d, f);
    hir_diag_set_prefix(&d, "rank %d", 3);
    hir_diag_emit(&d, HIR_ERROR, (hir_loc){&s, 4, 5}, "undefined");
    hir_diag_error(&d, "bad\tname '%s'", "a\033b");
    fclose(f);
    assert_string_equal(buf,
        "rank 3: t.hir:1:5: error: undefined\n"
        "x = y\n"
        "    ^\n"
        "rank 3: error: bad\\x09name 'a\\x1bb'\n");
    free(buf);
    hir_diag_fini(&d);
    hir_source_fini(&s);

    char longmsg[400], line[512];
    memset(longmsg, 'a', sizeof longmsg - 1);
    longmsg[sizeof longmsg - 1] = 0;
    size_t n = hir_diag_format_line(line, sizeof line, "hir-opt", HIR_ERROR, longmsg);
    assert_int_equal(n, strlen("hir-opt: error: ") + 300 + 4);
    assert_string_equal(line + n - 4, "...\n");
    hir_diag_format_line(line, sizeof line, "map.c:12", HIR_INTERNAL, "n < cap");  /* hir_panic's */
    assert_string_equal(line, "map.c:12: internal error: n < cap\n");
    n = hir_diag_format_line(line, 8, "hir-opt", HIR_ERROR, "x");   /* cut, still terminated */
    assert_int_equal(n, 7);
    assert_string_equal(line, "hir-opt");
}

typedef struct seen {
    int calls, notes, peer;
    char first[64];
} seen;

static void record(void *ctx, const hir_diag *d, const hir_diag_entry *e)
{
    (void)d;
    seen *s = ctx;
    if (!s->calls++)
        snprintf(s->first, sizeof s->first, "%s", e->msg);
    for (const hir_diag_entry *n = e->notes; n; n = n->next)
        s->notes++;
    if (e->peer >= 0)
        s->peer = e->peer;
}

/* An installed sink receives each entry once, with its notes and peer, and nothing is printed. */
static void diag_custom_sink(void **state)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    hir_diag d;
    hir_diag_init(&d, f);
    seen s = {0, 0, -1, ""};
    hir_diag_set_sink(&d, record, &s);
    hir_diag_entry *e = hir_diag_peer_error(&d, 2, "no answer from rank %d", 2);
    hir_diag_note(&d, e, (hir_loc){0}, "waited 5 s");
    hir_diag_flush(&d);
    hir_diag_flush(&d);
    hir_diag_error(&d, "second");
    fclose(f);
    assert_int_equal(s.calls, 2);
    assert_int_equal(s.notes, 1);
    assert_int_equal(s.peer, 2);
    assert_string_equal(s.first, "no answer from rank 2");
    assert_string_equal(hir_diag_first_error(&d), "no answer from rank 2");
    assert_int_equal(len, 0);
    free(buf);
    hir_diag_fini(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(arena_zeroed_aligned),
        cmocka_unit_test(alloc_large_aligned),
        cmocka_unit_test(ptrvec_push_insert_remove),
        cmocka_unit_test(map_put_get_del),
        cmocka_unit_test(interning_shares_pointers),
        cmocka_unit_test(dtype_longest_match),
        cmocka_unit_test(diag_line_col),
        cmocka_unit_test(diag_print_and_count),
        cmocka_unit_test(diag_prefix_and_one_line),
        cmocka_unit_test(diag_custom_sink),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
