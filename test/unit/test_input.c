/* test_input.c — support/input.c: an input read or mapped (the same bytes, two NULs after, at
 * every size around a page end), the pages given back and faulted in again unchanged, the
 * parser and the log search giving back a mapped input as they go, and a file truncated under
 * its mapping: SIGBUS, which the tools' handler (tools/common.c) turns into a one-line error
 * and exit status 1. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "dialect/hir.h"
#include "parser/log.h"
#include "parser/parser.h"
#include "support/input.h"
#include "tools/common.h"

/* A temporary file of n bytes (a pattern without NULs, or `text` repeated). */
static void make_file(char *path, size_t n, const char *text)
{
    strcpy(path, "/tmp/hir-test-input-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    char *b = malloc(n ? n : 1);
    size_t k = text ? strlen(text) : 0;
    for (size_t i = 0; i < n; i++)
        b[i] = text ? text[i % k] : (char)('a' + i * 7919 % 26);
    assert_int_equal(write(fd, b, n), (ssize_t)n);
    close(fd);
    free(b);
}

/* Resident kB of the mapping that holds addr (/proc/self/smaps), -1 when not found. */
static long resident_kb(const void *addr)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    bool in = false;
    long kb = -1;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long b, e;
        if (sscanf(line, "%lx-%lx ", &b, &e) == 2 && strchr(line, '-') < strchr(line, ' '))
            in = (uintptr_t)addr >= b && (uintptr_t)addr < e;
        else if (in && sscanf(line, "Rss: %ld kB", &kb) == 1)
            break;
    }
    if (f)
        fclose(f);
    return kb;
}

static void same_bytes_at_every_size(void **state)
{
    (void)state;
    long pg = sysconf(_SC_PAGESIZE);
    size_t base = (HIR_INPUT_MAP_MIN + 2 * (size_t)pg - 1) / (size_t)pg * (size_t)pg;
    size_t sizes[] = {base - 3, base - 2, base - 1, base, base + 1, base + 100};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        char path[64], err[256];
        make_file(path, sizes[s], NULL);
        hir_input m, r;
        assert_int_equal(hir_input_read(&m, path, HIR_INPUT_MAP, err, sizeof err), 0);
        assert_int_equal(hir_input_read(&r, path, 0, err, sizeof err), 0);
        assert_true(m.maplen > 0);
        assert_int_equal(r.maplen, 0);
        assert_int_equal(m.len, sizes[s]);
        assert_int_equal(r.len, sizes[s]);
        assert_memory_equal(m.text, r.text, r.len);
        assert_int_equal(m.text[m.len], 0);
        assert_int_equal(m.text[m.len + 1], 0);
        m.text[m.len + 1] = 'x';                  /* the tail is writable (flex writes there) */
        m.text[m.len + 1] = 0;
        hir_input_fini(&m);
        hir_input_fini(&r);
        unlink(path);
    }
}

static void small_files_and_stdin_are_read(void **state)
{
    (void)state;
    char path[64], err[256];
    make_file(path, HIR_INPUT_MAP_MIN - 1, NULL);
    hir_input in;
    assert_int_equal(hir_input_read(&in, path, HIR_INPUT_MAP, err, sizeof err), 0);
    assert_int_equal(in.maplen, 0);
    hir_input_fini(&in);
    unlink(path);
    assert_int_equal(hir_input_read(&in, path, HIR_INPUT_MAP, err, sizeof err), -1);
    assert_non_null(strstr(err, "cannot open"));
}

/* A page given back comes again with the file's bytes: a change not put back is gone (so the
 * pages really went), and the rest reads as before. */
static void released_pages_come_back_from_the_file(void **state)
{
    (void)state;
    char path[64], err[256];
    make_file(path, 3 * HIR_INPUT_MAP_MIN, NULL);
    hir_input in;
    assert_int_equal(hir_input_read(&in, path, HIR_INPUT_MAP, err, sizeof err), 0);
    char first = in.text[0], last = in.text[in.len - 1];
    in.text[0] = 0;
    in.text[in.len - 1] = 0;
    hir_text_release(in.text, true, 0, in.len / 2);
    assert_int_equal(in.text[0], first);
    assert_int_equal(in.text[in.len - 1], 0);       /* past the range: kept */
    in.text[in.len - 1] = last;
    hir_text_release(in.text, true, 0, in.len);
    assert_true(resident_kb(in.text) < 64);
    hir_input r;
    assert_int_equal(hir_input_read(&r, path, 0, err, sizeof err), 0);
    assert_memory_equal(in.text, r.text, r.len);
    hir_text_release(r.text, false, 0, r.len);      /* a read input: nothing happens */
    hir_input_fini(&r);
    hir_input_fini(&in);
    unlink(path);
}

#define HEAD "%HostIrContainer { (T0_g_float[iS0{8}]) -> () :\n"
#define STMT "  T1_g_float[iS1{8}] = Set( T0_g_float[iS0{8}], cache_op=Streaming )\n  Synchronize Stream 0\n"

/* hir_parse and hir_log_find give back a mapped input as they go; the program and the
 * diagnostic (its source line read again after the parse) are those of the read input. */
static char *parse_print(const char *path, unsigned flags, long *kb_log, long *kb_parse,
                         char **diags)
{
    char err[256], *out = NULL, *dg = NULL;
    size_t n, dn;
    hir_input in;
    assert_int_equal(hir_input_read(&in, path, flags, err, sizeof err), 0);
    hir_log log;
    assert_int_equal(hir_log_find(in.text, in.len, in.maplen != 0, &log), 0);
    *kb_log = resident_kb(in.text);
    hir_source src;
    hir_source_init(&src, path, in.text, in.len);
    src.mapped = in.maplen != 0;
    FILE *df = open_memstream(&dg, &dn);
    hir_diag d;
    hir_diag_init(&d, df);
    hir_program *p;
    int rc = hir_parse(&src, &d, &p);
    *kb_parse = resident_kb(in.text);
    hir_diag_flush(&d);
    fclose(df);
    FILE *f = open_memstream(&out, &n);
    fprintf(f, "rc %d\n", rc);
    if (!rc)
        hir_program_print(p, f);
    fclose(f);
    hir_program_free(p);
    hir_diag_fini(&d);
    hir_source_fini(&src);
    hir_log_fini(&log);
    hir_input_fini(&in);
    *diags = dg;
    return out;
}

static void parser_gives_back_a_mapped_input(void **state)
{
    (void)state;
    for (int bad = 0; bad < 2; bad++) {
        size_t n = 12 * HIR_INPUT_MAP_MIN / (sizeof STMT - 1) * (sizeof STMT - 1);
        size_t hn = sizeof HEAD - 1, tn = bad ? 12 : 22;
        char *text = malloc(hn + n + tn + 1);
        memcpy(text, HEAD, hn);
        for (size_t i = 0; i < n; i += sizeof STMT - 1)
            memcpy(text + hn + i, STMT, sizeof STMT - 1);
        memcpy(text + hn + n, bad ? "  Bogus 1 2\n" : "} // %HostIrContainer\n", tn);
        char path[64];
        make_file(path, hn + n + tn, NULL);
        FILE *f = fopen(path, "w");
        fwrite(text, 1, hn + n + tn, f);
        fclose(f);
        free(text);
        long kl, kp, rl, rp;
        char *dm, *dr;
        char *m = parse_print(path, HIR_INPUT_MAP, &kl, &kp, &dm);
        char *r = parse_print(path, 0, &rl, &rp, &dr);
        assert_string_equal(m, r);
        assert_string_equal(dm, dr);
        assert_true(strlen(r) > (bad ? 4 : n));
        assert_true(!bad || strstr(dr, "Bogus 1 2"));
        assert_true(kl < 6 * 1024);       /* the log search: one step and a little */
        assert_true(kp < 256);            /* after the parse: next to nothing */
        free(m), free(r), free(dm), free(dr);
        unlink(path);
    }
}

/* A child maps the file, has it truncated, then reads its end. */
static int truncated_child(const char *path, bool handler, const char *tmp, int errfd)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(errfd, STDERR_FILENO);
        signal(SIGBUS, SIG_DFL);                  /* not cmocka's, inherited */
        if (handler && (hir_tool_catch_sigbus("hir-test", path) || (hir_tool_sigbus_unlink(tmp), 0)))
            _exit(9);
        char err[256];
        hir_input in;
        if (hir_input_read(&in, path, HIR_INPUT_MAP, err, sizeof err) || !in.maplen)
            _exit(8);
        if (truncate(path, 0))
            _exit(7);
        volatile char c = in.text[in.len - 1];
        (void)c;
        _exit(0);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    return st;
}

static void truncated_input_is_an_error(void **state)
{
    (void)state;
    char path[64], tmp[64];
    make_file(path, 2 * HIR_INPUT_MAP_MIN, NULL);
    int st = truncated_child(path, false, NULL, STDERR_FILENO);
    assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGBUS);   /* what the handler is for */
    unlink(path);
    make_file(path, 2 * HIR_INPUT_MAP_MIN, NULL);
    make_file(tmp, 10, NULL);
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    st = truncated_child(path, true, tmp, fds[1]);
    close(fds[1]);
    char got[1024] = {0}, want[1024];
    assert_true(read(fds[0], got, sizeof got - 1) > 0);
    close(fds[0]);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 1);
    snprintf(want, sizeof want, "hir-test: error: '%s' changed while it was read (truncated?)\n",
             path);
    assert_string_equal(got, want);
    assert_int_equal(access(tmp, F_OK), -1);        /* the temporary output is gone */
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(same_bytes_at_every_size),
        cmocka_unit_test(small_files_and_stdin_are_read),
        cmocka_unit_test(released_pages_come_back_from_the_file),
        cmocka_unit_test(parser_gives_back_a_mapped_input),
        cmocka_unit_test(truncated_input_is_an_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
