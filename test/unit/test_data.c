/* test_data.c — deterministic input generation (shards equal slices of the global fill),
 * .npy round trips and malformed files, and the comparison tolerances. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "runner/backend/convert.h"
#include "runner/data/data.h"
#include "runner/data/npy.h"
#include "unit_views.h"

static char dir[64];

static int setup(void **state)
{
    snprintf(dir, sizeof dir, "/tmp/hir_test_data_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *path(const char *name)
{
    static char p[128];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return p;
}

static void test_fill_shard_consistency(void **state)
{
    const hir_dtype types[] = {HIR_DT_FLOAT, HIR_DT_BFLOAT, HIR_DT_HALF, HIR_DT_INT32,
                               HIR_DT_DOUBLE};
    const hir_data_kind kinds[] = {HIR_DATA_RANDOM, HIR_DATA_ARANGE, HIR_DATA_ONES};
    int64_t global[3] = {4, 6, 5};
    for (size_t t = 0; t < 5; t++)
        for (size_t k = 0; k < 3; k++) {
            hir_dtype dt = types[t];
            size_t es = hir_dtype_size(dt);
            unsigned char *g = malloc(4 * 6 * 5 * es);
            hir_diag e = {0};
            assert_int_equal(hir_data_fill(g, dt, 3, global, NULL, NULL, kinds[k], 7,
                                           hir_data_key("T0"), &e), 0);
            /* sharded on axis 0 (DID, size 1 per rank) and on axis 1 in blocks of 2 */
            for (int r = 0; r < 4; r++)
                for (int b = 0; b < 3; b++) {
                    int64_t local[3] = {1, 2, 5}, off[3] = {r, 2 * b, 0};
                    unsigned char sh[10 * 8];
                    assert_int_equal(hir_data_fill(sh, dt, 3, local, global, off, kinds[k], 7,
                                                   hir_data_key("T0"), &e), 0);
                    for (int j = 0; j < 2; j++)
                        assert_memory_equal(sh + (size_t)j * 5 * es,
                                            g + (size_t)((r * 6 + 2 * b + j) * 5) * es, 5 * es);
                }
            free(g);
            hir_diag_fini(&e);
        }
}

static void test_fill_values(void **state)
{
    hir_diag e = {0};
    float f[1000];
    int64_t n = 1000;
    assert_int_equal(hir_data_fill(f, HIR_DT_FLOAT, 1, &n, NULL, NULL, HIR_DATA_RANDOM, 1, 2, &e), 0);
    double mean = 0;
    for (int i = 0; i < 1000; i++) {
        assert_true(f[i] >= -1.0f && f[i] < 1.0f);
        mean += f[i] / 1000;
    }
    assert_true(fabs(mean) < 0.1);
    float g[1000];
    hir_data_fill(g, HIR_DT_FLOAT, 1, &n, NULL, NULL, HIR_DATA_RANDOM, 1, 3, &e);
    assert_true(memcmp(f, g, sizeof f) != 0);        /* another tensor key, other data */
    uint16_t b[300];
    int64_t m = 300;
    hir_data_fill(b, HIR_DT_BFLOAT, 1, &m, NULL, NULL, HIR_DATA_ARANGE, 0, 0, &e);
    assert_true(hir_bf16_to_f32(b[255]) == 255.0f && hir_bf16_to_f32(b[256]) == 0.0f &&
                hir_bf16_to_f32(b[299]) == 43.0f);   /* bf16 arange wraps at 256 */
    hir_data_kind k;
    assert_int_equal(hir_data_kind_lookup("arange", &k), 0);
    assert_int_equal(k, HIR_DATA_ARANGE);
    assert_int_equal(hir_data_kind_lookup("gauss", &k), -1);
    int64_t bad_off = 4, loc = 2, glob = 5;
    assert_int_equal(hir_data_fill(b, HIR_DT_BFLOAT, 1, &loc, &glob, &bad_off, HIR_DATA_ONES, 0,
                                   0, &e), -1);
    assert_non_null(strstr(hir_diag_last_error(&e), "outside extent 5"));
    hir_diag_fini(&e);
}

static void roundtrip(hir_dtype dt, int flags)
{
    hir_diag e = {0};
    int64_t shape[2] = {3, 5};
    size_t es = hir_dtype_size(dt);
    unsigned char src[15 * 8], dst[15 * 8];
    hir_data_fill(src, dt, 2, shape, NULL, NULL, HIR_DATA_RANDOM, 3, 4, &e);
    const char *p = path("rt.npy");
    assert_int_equal(hir_npy_write(p, src, dt, 2, shape, flags, &e), 0);
    hir_npy_header h;
    assert_int_equal(hir_npy_read_header(p, &h, &e), 0);
    assert_int_equal(h.data_offset % 64, 0);
    assert_string_equal(h.descr, hir_npy_descr(dt, flags));
    assert_int_equal(h.ndim, 2);
    memset(dst, 0, sizeof dst);
    assert_int_equal(hir_npy_read(p, dst, dt, 2, shape, &e), 0);
    assert_memory_equal(src, dst, 15 * es);
    hir_diag_fini(&e);
}

static void test_npy_roundtrip(void **state)
{
    const hir_dtype types[] = {HIR_DT_FLOAT, HIR_DT_DOUBLE, HIR_DT_HALF, HIR_DT_BFLOAT,
                               HIR_DT_BOOL, HIR_DT_INT8, HIR_DT_INT16, HIR_DT_INT32,
                               HIR_DT_INT64, HIR_DT_UINT8, HIR_DT_UINT16, HIR_DT_UINT32,
                               HIR_DT_UINT64};
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        roundtrip(types[i], 0);
    roundtrip(HIR_DT_BFLOAT, HIR_NPY_RAW_BF16);
    /* 0-d and 1-d headers use NumPy's tuple spelling */
    hir_diag e = {0};
    float x = 2.5f, y = 0;
    assert_int_equal(hir_npy_write(path("s.npy"), &x, HIR_DT_FLOAT, 0, NULL, 0, &e), 0);
    assert_int_equal(hir_npy_read(path("s.npy"), &y, HIR_DT_FLOAT, 0, NULL, &e), 0);
    assert_true(y == 2.5f);
    hir_diag_fini(&e);
}

static void write_bytes(const char *p, const void *b, size_t n)
{
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, n, f), n);
    fclose(f);
}

/* The header dict is not NUL-terminated: parsing must stop at its end. Every prefix of a
 * header (its length field saying so) is put at the very end of a page followed by an
 * inaccessible page, so a read one byte too far is a SIGSEGV in any build. Before: a header
 * ending right after `'descr':` (and spaces) or inside a shape extent was read past its end
 * (found by test/fuzz/fuzz_npy.c; heap-buffer-overflow under ASan, and a read past the 4 KiB
 * stack buffer of hir_npy_read). */
static void test_npy_header_ends_at_buffer(void **state)
{
    (void)state;
    static const char *const dicts[] = {
        "{'descr': '<f4', 'fortran_order': False, 'shape': (12, 345), }",
        "{'fortran_order': False, 'shape': (7,), 'descr': '|i1'}",
        "{'shape': (2, 3), 'fortran_order': True, 'descr':      ",
    };
    long pg = sysconf(_SC_PAGESIZE);
    unsigned char *map = mmap(NULL, 2 * (size_t)pg, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(map != MAP_FAILED);
    assert_int_equal(mprotect(map + pg, (size_t)pg, PROT_NONE), 0);
    int accepted = 0;
    for (size_t k = 0; k < sizeof dicts / sizeof *dicts; k++) {
        size_t dl = strlen(dicts[k]);
        for (size_t cut = 0; cut <= dl; cut++) {
            unsigned char *buf = map + pg - (10 + cut);
            memcpy(buf, "\x93NUMPY\x01\x00", 8);
            buf[8] = (unsigned char)cut;
            buf[9] = 0;
            memcpy(buf + 10, dicts[k], cut);
            hir_npy_header h;
            hir_diag e = {0};
            if (hir_npy_parse_header(buf, 10 + cut, &h, "cut.npy", &e) == 0)
                accepted++;
            else
                assert_true(hir_diag_last_error(&e)[0] != 0);
            hir_diag_fini(&e);
        }
    }
    assert_true(accepted > 0);   /* the whole first two dicts parse */
    munmap(map, 2 * (size_t)pg);
}

static void test_npy_v2_and_malformed(void **state)
{
    hir_diag e = {0};
    /* a v2.0 file as NumPy writes it for very large headers */
    const char dict[] = "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }";
    unsigned char buf[256];
    size_t hl = sizeof dict - 1 + 1;
    memcpy(buf, "\x93NUMPY\x02\x00", 8);
    buf[8] = (unsigned char)hl; buf[9] = 0; buf[10] = 0; buf[11] = 0;
    memcpy(buf + 12, dict, sizeof dict - 1);
    buf[12 + hl - 1] = '\n';
    int32_t v[2] = {7, -9};
    memcpy(buf + 12 + hl, v, 8);
    write_bytes(path("v2.npy"), buf, 12 + hl + 8);
    int32_t got[2];
    int64_t shape = 2;
    assert_int_equal(hir_npy_read(path("v2.npy"), got, HIR_DT_INT32, 1, &shape, &e), 0);
    assert_int_equal(got[1], -9);

    /* truncated data */
    write_bytes(path("trunc.npy"), buf, 12 + hl + 5);
    assert_int_equal(hir_npy_read(path("trunc.npy"), got, HIR_DT_INT32, 1, &shape, &e), -1);
    assert_non_null(strstr(hir_diag_last_error(&e), "truncated: 8 data bytes expected, 5 present"));
    /* truncated header */
    write_bytes(path("trunch.npy"), buf, 30);
    assert_int_equal(hir_npy_read(path("trunch.npy"), got, HIR_DT_INT32, 1, &shape, &e), -1);
    assert_non_null(strstr(hir_diag_last_error(&e), "truncated header"));
    /* bad magic */
    buf[1] = 'X';
    write_bytes(path("magic.npy"), buf, 12 + hl + 8);
    assert_int_equal(hir_npy_read(path("magic.npy"), got, HIR_DT_INT32, 1, &shape, &e), -1);
    assert_non_null(strstr(hir_diag_last_error(&e), "bad magic"));
    buf[1] = 'N';
    /* wrong shape and wrong dtype against what the program declares */
    int64_t shape3 = 3;
    assert_int_equal(hir_npy_read(path("v2.npy"), got, HIR_DT_INT32, 1, &shape3, &e), -1);
    assert_non_null(strstr(hir_diag_last_error(&e), "shape (2,) does not match the program's (3,)"));
    assert_int_equal(hir_npy_read(path("v2.npy"), got, HIR_DT_FLOAT, 1, &shape, &e), -1);
    assert_non_null(strstr(hir_diag_last_error(&e), "dtype '<i4' does not match the program's float (expected '<f4')"));
    uint16_t bf[2];
    assert_int_equal(hir_npy_read(path("v2.npy"), bf, HIR_DT_BFLOAT, 1, &shape, &e), -1);
    assert_non_null(strstr(hir_diag_last_error(&e), "expected '<f4' or '<u2'"));
    /* missing file */
    assert_int_equal(hir_npy_read(path("nope.npy"), got, HIR_DT_INT32, 1, &shape, &e), -1);
    assert_non_null(strstr(hir_diag_last_error(&e), "No such file"));
    /* Fortran order */
    const char fd[] = "{'descr': '<i4', 'fortran_order': True, 'shape': (2,), }\n";
    unsigned char b1[128];
    memcpy(b1, "\x93NUMPY\x01\x00", 8);
    b1[8] = sizeof fd - 1; b1[9] = 0;
    memcpy(b1 + 10, fd, sizeof fd - 1);
    memcpy(b1 + 10 + sizeof fd - 1, v, 8);
    write_bytes(path("f.npy"), b1, 10 + sizeof fd - 1 + 8);
    assert_int_equal(hir_npy_read(path("f.npy"), got, HIR_DT_INT32, 1, &shape, &e), -1);
    assert_non_null(strstr(hir_diag_last_error(&e), "Fortran-order"));
    hir_diag_fini(&e);
}

static void test_compare(void **state)
{
    hir_compare_result r;
    float want[4] = {100.0f, 1.0f, -3.0f, 0.0f};
    float got[4] = {100.0005f, 1.0001f, -3.0f, 0.0f};
    assert_int_equal(hir_compare(got, want, HIR_DT_FLOAT, 4, &r), 0);
    got[1] = 1.01f;
    assert_int_equal(hir_compare(got, want, HIR_DT_FLOAT, 4, &r), 1);
    assert_int_equal(r.mismatches, 1);
    assert_int_equal(r.first_bad, 1);
    assert_true(fabs(r.max_abs - 0.01) < 1e-6);
    /* NaN in got where want is finite is always a mismatch; NaN vs NaN matches */
    got[1] = 1.0f;
    got[3] = NAN;
    assert_int_equal(hir_compare(got, want, HIR_DT_FLOAT, 4, &r), 1);
    assert_int_equal(r.first_bad, 3);
    want[3] = NAN;
    assert_int_equal(hir_compare(got, want, HIR_DT_FLOAT, 4, &r), 0);
    /* bf16: an absolute error of 1% of the tensor's scale passes at a small element
     * (cancellation), but not 2% */
    uint16_t bw[2] = {hir_f32_to_bf16(64.0f), hir_f32_to_bf16(0.01f)};
    uint16_t bg[2] = {hir_f32_to_bf16(64.0f), hir_f32_to_bf16(0.01f + 0.4f)};
    assert_int_equal(hir_compare(bg, bw, HIR_DT_BFLOAT, 2, &r), 0);
    bg[1] = hir_f32_to_bf16(0.01f + 1.2f);
    assert_int_equal(hir_compare(bg, bw, HIR_DT_BFLOAT, 2, &r), 1);
    /* one ulp of bf16 at the element passes by the relative term */
    uint16_t one = hir_f32_to_bf16(1.0f);
    uint16_t next = one + 1;
    assert_int_equal(hir_compare(&next, &one, HIR_DT_BFLOAT, 1, &r), 0);
    /* integers are exact */
    int32_t iw[2] = {1, 2}, ig[2] = {1, 3};
    assert_int_equal(hir_compare(ig, iw, HIR_DT_INT32, 2, &r), 1);
    /* explicit tolerances */
    assert_int_equal(hir_compare_with(ig, iw, HIR_DT_INT32, 2, 1.0, 0, &r), 1);
    float a = 1.0f, b = 1.5f;
    assert_int_equal(hir_compare_with(&a, &b, HIR_DT_FLOAT, 1, 0.5, 0, &r), 0);
    assert_int_equal(hir_compare(&a, &b, HIR_DT_E4M3, 1, &r), -1);
}

/* ---------------------------------------------------------------- randomized GEMM check */

/* The randomized check's refusals (its passing and failing rows run in test/lit/run too). */
static void test_verify_gemm_refusals(void **state)
{
    (void)state;
    float a[6], b[6], o[4];
    int32_t ia[6];
    hir_gemm g = {0};
    g.a = view2(a, HIR_DT_FLOAT, 2, 3, 3);
    g.b = view2(b, HIR_DT_FLOAT, 2, 3, 3);
    g.b_trans = 1;
    g.out = view2(o, HIR_DT_FLOAT, 2, 2, 2);
    g.batch = 1;
    hir_data_gemm_check r;
    hir_diag e = {0};
    g.out.ndim = 1;
    assert_int_equal(hir_data_verify_gemm(&g, 2, 1, 1, &r, &e), -1);
    assert_non_null(strstr(hir_diag_last_error(&e), "randomized check: 2-D operands expected"));
    assert_int_equal(r.first_bad_row, -1);
    g.out.ndim = 2;
    g.a = view2(ia, HIR_DT_INT32, 2, 3, 3);
    assert_int_equal(hir_data_verify_gemm(&g, 2, 1, 1, &r, &e), -1);
    assert_non_null(strstr(hir_diag_last_error(&e), "randomized check: float dtypes expected (got int, float -> float)"));
    g.a = view2(a, HIR_DT_FLOAT, 2, 3, 3);
    g.b_trans = 0;
    assert_int_equal(hir_data_verify_gemm(&g, 2, 1, 1, &r, &e), -1);
    assert_non_null(strstr(hir_diag_last_error(&e), "randomized check: shapes do not match"));
    hir_diag_fini(&e);
}

/* A true product passes every row; one wrong element fails its row, and only that row. */
static void test_verify_gemm_rows(void **state)
{
    (void)state;
    float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 1, 1, 1};   /* A [2,3], B [3,2] */
    float o[4] = {4, 5, 10, 11};                                 /* A·B */
    hir_gemm g = {0};
    g.a = view2(a, HIR_DT_FLOAT, 2, 3, 3);
    g.b = view2(b, HIR_DT_FLOAT, 3, 2, 2);
    g.out = view2(o, HIR_DT_FLOAT, 2, 2, 2);
    g.batch = 1;
    hir_data_gemm_check r;
    hir_diag e = {0};
    assert_int_equal(hir_data_verify_gemm(&g, 2, 7, 1, &r, &e), 0);
    assert_int_equal(r.rows, 2);
    assert_int_equal(r.bad_rows, 0);
    assert_int_equal(r.first_bad_row, -1);
    o[3] = 12;                   /* differs by 1 in row 1: any sign vector sees it */
    assert_int_equal(hir_data_verify_gemm(&g, 2, 7, 1, &r, &e), 0);
    assert_int_equal(r.bad_rows, 1);
    assert_int_equal(r.first_bad_row, 1);
    assert_true(r.diff_first > r.bound_first);
    hir_diag_fini(&e);
}

/* Threads split op(B)·r over blocks of K and the rows over ranges: the verdict and every figure
 * must be the same for 1, 3 and 8 threads, with B either way round and two wrong rows. */
static void test_verify_gemm_threads(void **state)
{
    (void)state;
    enum { M = 800, K = 1300, N = 16 };   /* M·(K+N) above the threshold for threads */
    float *a = malloc(sizeof(float) * M * K), *b = malloc(sizeof(float) * K * N),
          *bt = malloc(sizeof(float) * N * K), *o = malloc(sizeof(float) * M * N);
    assert_non_null(a), assert_non_null(b), assert_non_null(bt), assert_non_null(o);
    uint64_t st = 12345;
    for (int i = 0; i < M * K; i++)
        a[i] = (float)((double)((st = st * 6364136223846793005ull + 1442695040888963407ull)
                                >> 40) / (double)(1 << 24) - 0.5);
    for (int i = 0; i < K * N; i++) {
        b[i] = (float)((double)((st = st * 6364136223846793005ull + 1442695040888963407ull)
                                >> 40) / (double)(1 << 24) - 0.5);
        bt[(i % N) * K + i / N] = b[i];
    }
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            double s = 0;
            for (int k = 0; k < K; k++) s += (double)a[m * K + k] * b[k * N + n];
            o[m * N + n] = (float)s;
        }
    o[17 * N + 3] += 1.0f;
    o[611 * N + 0] -= 2.0f;
    for (int trans = 0; trans < 2; trans++) {
        hir_gemm g = {0};
        g.a = view2(a, HIR_DT_FLOAT, M, K, K);
        g.b = trans ? view2(bt, HIR_DT_FLOAT, N, K, K) : view2(b, HIR_DT_FLOAT, K, N, N);
        g.b_trans = trans;
        g.out = view2(o, HIR_DT_FLOAT, M, N, N);
        g.batch = 1;
        hir_data_gemm_check r1, r;
        hir_diag e = {0};
        assert_int_equal(hir_data_verify_gemm(&g, 2, 99, 1, &r1, &e), 0);
        assert_int_equal(r1.rows, M);
        assert_int_equal(r1.bad_rows, 2);
        assert_int_equal(r1.first_bad_row, 17);
        int counts[] = {3, 8};
        for (int c = 0; c < 2; c++) {
            assert_int_equal(hir_data_verify_gemm(&g, 2, 99, counts[c], &r, &e), 0);
            assert_int_equal(r.rows, r1.rows);
            assert_int_equal(r.bad_rows, r1.bad_rows);
            assert_int_equal(r.first_bad_row, r1.first_bad_row);
            assert_true(r.worst == r1.worst);
            assert_true(r.diff_first == r1.diff_first);
            assert_true(r.bound_first == r1.bound_first);
        }
        hir_diag_fini(&e);
    }
    free(a), free(b), free(bt), free(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fill_shard_consistency),
        cmocka_unit_test(test_fill_values),
        cmocka_unit_test(test_npy_roundtrip),
        cmocka_unit_test(test_npy_v2_and_malformed),
        cmocka_unit_test(test_npy_header_ends_at_buffer),
        cmocka_unit_test(test_compare),
        cmocka_unit_test(test_verify_gemm_refusals),
        cmocka_unit_test(test_verify_gemm_rows),
        cmocka_unit_test(test_verify_gemm_threads),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
