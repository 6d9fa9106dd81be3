/* test_gemm_cache.c — the cache file of --gemm-tune=FILE (runner/cuda/cuda_gemm_cache.c):
 * a line formatted is parsed back to the same entry; lines of another device or cuBLASLt
 * version are foreign; malformed lines (truncated, bad hex, a short key, garbage, too long)
 * are refused with a reason and, in a file, ignored and counted, the first one named; appending
 * keeps the file's lines and adds one; a missing file is an empty cache. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "runner/cuda/cuda_gemm_cache.h"

static hir_gemm_cache_entry sample(int64_t m)
{
    hir_gemm_cache_entry en;
    memset(&en, 0, sizeof en);
    for (int i = 0; i < HIR_GEMM_KEY_LEN; i++) en.key[i] = m + i;
    en.key[7] = -1;   /* negative fields survive too */
    en.workspace = (uint64_t)32 << 20;
    for (int i = 0; i < HIR_GEMM_ALGO_BYTES; i++) en.algo[i] = (unsigned char)(i * 37 + m);
    en.ms = 1.25;
    return en;
}

static void test_ident(void **state)
{
    (void)state;
    hir_gemm_cache_ident id;
    hir_gemm_cache_ident_init(&id, 130100, "NVIDIA H100 80GB HBM3");
    assert_string_equal(id.device, "NVIDIA_H100_80GB_HBM3");
    hir_gemm_cache_ident_init(&id, 1, "");
    assert_string_equal(id.device, "_");
}

static void test_roundtrip(void **state)
{
    (void)state;
    hir_gemm_cache_ident id;
    hir_gemm_cache_ident_init(&id, 130100, "NVIDIA H200");
    hir_gemm_cache_entry en = sample(4096), back;
    char line[HIR_GEMM_CACHE_LINE_MAX];
    assert_int_equal(hir_gemm_cache_format_line(&en, &id, line, sizeof line), 0);
    assert_true(!strncmp(line, "v1 130100 NVIDIA_H200 33554432 4096,", 36));
    assert_int_equal(line[strlen(line) - 1], '\n');
    line[strlen(line) - 1] = 0;
    int foreign = -1;
    char why[120] = "";
    assert_int_equal(hir_gemm_cache_parse_line(line, &id, &back, &foreign, why, sizeof why), 1);
    assert_int_equal(foreign, 0);
    assert_memory_equal(back.key, en.key, sizeof en.key);
    assert_memory_equal(back.algo, en.algo, sizeof en.algo);
    assert_true(back.workspace == en.workspace);
    assert_true(back.ms == en.ms);
    /* a buffer too small is refused, not cut */
    assert_int_equal(hir_gemm_cache_format_line(&en, &id, line, 100), -1);
}

static void test_foreign(void **state)
{
    (void)state;
    hir_gemm_cache_ident id, other;
    hir_gemm_cache_ident_init(&id, 130100, "NVIDIA H200");
    hir_gemm_cache_entry en = sample(1), back;
    char line[HIR_GEMM_CACHE_LINE_MAX], why[120];
    int foreign;
    hir_gemm_cache_ident_init(&other, 130100, "NVIDIA H100 80GB HBM3");   /* another GPU */
    assert_int_equal(hir_gemm_cache_format_line(&en, &other, line, sizeof line), 0);
    assert_int_equal(hir_gemm_cache_parse_line(line, &id, &back, &foreign, why, sizeof why), 0);
    assert_int_equal(foreign, 1);
    hir_gemm_cache_ident_init(&other, 120805, "NVIDIA H200");             /* another cuBLASLt */
    assert_int_equal(hir_gemm_cache_format_line(&en, &other, line, sizeof line), 0);
    assert_int_equal(hir_gemm_cache_parse_line(line, &id, &back, &foreign, why, sizeof why), 0);
    assert_int_equal(foreign, 1);
    assert_int_equal(hir_gemm_cache_parse_line("# comment", &id, &back, &foreign, why,
                                               sizeof why), 0);
    assert_int_equal(foreign, 0);
    assert_int_equal(hir_gemm_cache_parse_line("", &id, &back, &foreign, why, sizeof why), 0);
}

/* Every way of breaking a good line is refused with a reason. */
static void test_malformed(void **state)
{
    (void)state;
    hir_gemm_cache_ident id;
    hir_gemm_cache_ident_init(&id, 130100, "NVIDIA H200");
    hir_gemm_cache_entry en = sample(7), back;
    char good[HIR_GEMM_CACHE_LINE_MAX], bad[2 * HIR_GEMM_CACHE_LINE_MAX], why[120];
    int foreign;
    assert_int_equal(hir_gemm_cache_format_line(&en, &id, good, sizeof good), 0);
    good[strlen(good) - 1] = 0;
    size_t len = strlen(good);
    /* every truncation of the line before its time is refused (a shorter time is a time) */
    size_t time_at = (size_t)(strrchr(good, ' ') - good) + 1;
    assert_true(time_at < len);
    for (size_t cut = 1; cut <= time_at; cut++) {
        memcpy(bad, good, cut);
        bad[cut] = 0;
        why[0] = 0;
        int rc = hir_gemm_cache_parse_line(bad, &id, &back, &foreign, why, sizeof why);
        if (rc != -1) fail_msg("truncated at %zu accepted: '%s'", cut, bad);
        assert_true(why[0] != 0);
    }
    /* a bad hex digit in the algorithm */
    strcpy(bad, good);
    char *algo = strrchr(bad, ' ') - 10;
    *algo = 'g';
    assert_int_equal(hir_gemm_cache_parse_line(bad, &id, &back, &foreign, why, sizeof why), -1);
    assert_string_equal(why, "bad algorithm (128 hex digits)");
    /* a key of 19 fields */
    strcpy(bad, good);
    char *comma = strchr(bad, ',');
    memmove(comma, strchr(comma + 1, ','), strlen(strchr(comma + 1, ',')) + 1);
    assert_int_equal(hir_gemm_cache_parse_line(bad, &id, &back, &foreign, why, sizeof why), -1);
    /* something after the time, another format version, garbage, a line too long */
    snprintf(bad, sizeof bad, "%s x", good);
    assert_int_equal(hir_gemm_cache_parse_line(bad, &id, &back, &foreign, why, sizeof why), -1);
    snprintf(bad, sizeof bad, "v2%s", good + 2);
    assert_int_equal(hir_gemm_cache_parse_line(bad, &id, &back, &foreign, why, sizeof why), -1);
    assert_int_equal(hir_gemm_cache_parse_line("hello world", &id, &back, &foreign, why,
                                               sizeof why), -1);
    memset(bad, '1', sizeof bad - 1);
    bad[sizeof bad - 1] = 0;
    memcpy(bad, "v1 ", 3);
    assert_int_equal(hir_gemm_cache_parse_line(bad, &id, &back, &foreign, why, sizeof why), -1);
    assert_string_equal(why, "line too long");
}

/* A file with a good line, a foreign one, a malformed one and a comment: one entry, one
 * ignored (named by its line), one foreign; appending keeps all of them and adds one. */
static void test_file(void **state)
{
    (void)state;
    char dir[] = "/tmp/hir_gemm_cache_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/tune.txt", dir);
    hir_gemm_cache_ident id, other;
    hir_gemm_cache_ident_init(&id, 130100, "NVIDIA H200");
    hir_gemm_cache_ident_init(&other, 130100, "Other GPU");
    hir_gemm_cache_entry a = sample(1), b = sample(2), c = sample(3);
    char la[HIR_GEMM_CACHE_LINE_MAX], lb[HIR_GEMM_CACHE_LINE_MAX];
    assert_int_equal(hir_gemm_cache_format_line(&a, &id, la, sizeof la), 0);
    assert_int_equal(hir_gemm_cache_format_line(&b, &other, lb, sizeof lb), 0);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "# hir gemm-tune cache\n%s%sv1 130100 NVIDIA_H200 garbage\n", la, lb);
    fclose(f);

    hir_gemm_cache cache;
    hir_diag e = {0};
    assert_int_equal(hir_gemm_cache_load(&cache, path, &id, &e), 0);
    assert_int_equal(cache.n, 1);
    assert_int_equal(cache.ignored, 1);
    assert_int_equal(cache.foreign, 1);
    char want[300];
    snprintf(want, sizeof want, "%s:4: bad workspace size", path);
    assert_string_equal(cache.note, want);
    assert_non_null(hir_gemm_cache_find(&cache, a.key, a.workspace));
    assert_null(hir_gemm_cache_find(&cache, a.key, a.workspace + 1));
    assert_null(hir_gemm_cache_find(&cache, b.key, b.workspace));   /* foreign */

    assert_int_equal(hir_gemm_cache_append(&cache, &c, &e), 0);
    assert_non_null(hir_gemm_cache_find(&cache, c.key, c.workspace));
    hir_gemm_cache_free(&cache);
    assert_int_equal(hir_gemm_cache_load(&cache, path, &id, &e), 0);
    assert_int_equal(cache.n, 2);
    assert_int_equal(cache.ignored, 1);
    assert_int_equal(cache.foreign, 1);
    assert_non_null(hir_gemm_cache_find(&cache, c.key, c.workspace));
    hir_gemm_cache_free(&cache);

    /* a missing file is an empty cache; the first append makes it */
    char fresh[256];
    snprintf(fresh, sizeof fresh, "%s/new.txt", dir);
    assert_int_equal(hir_gemm_cache_load(&cache, fresh, &id, &e), 0);
    assert_int_equal(cache.n, 0);
    assert_int_equal(hir_gemm_cache_append(&cache, &a, &e), 0);
    hir_gemm_cache_free(&cache);
    assert_int_equal(hir_gemm_cache_load(&cache, fresh, &id, &e), 0);
    assert_int_equal(cache.n, 1);
    assert_int_equal(cache.ignored, 0);
    hir_gemm_cache_free(&cache);

    /* a directory cannot be read as the file */
    assert_int_equal(hir_gemm_cache_load(&cache, dir, &id, &e), -1);
    assert_non_null(strstr(hir_diag_last_error(&e), "--gemm-tune: cannot read"));
    hir_gemm_cache_free(&cache);
    hir_diag_fini(&e);
    unlink(path);
    unlink(fresh);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ident),     cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_foreign),   cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
