/* test_parser_log.c — parser/log.c: the %HostIrContainer programs of a log. Each case gives a
 * log and checks the program texts found (prefixes removed, other lines left out), where their
 * lines came from, and that the parser reads them with locations in the log. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dialect/hir.h"
#include "parser/log.h"
#include "parser/parser.h"

#define PROG                                                                  \
    "%HostIrContainer { (T0_g_float[iS0{8}]) -> (T1_g_float[iS1{8}]) :\n"    \
    "  T1_g_float[iS1{8}]\n"                                                  \
    "     = Set( T0_g_float[iS0{8}], cache_op=Streaming )\n"                  \
    "} // %HostIrContainer\n"

/* `prefix` before every line of PROG */
static char *prefixed(const char *before, const char *prefix, const char *after)
{
    static const char prog[] = PROG;
    size_t n = strlen(before) + strlen(after) + sizeof prog + 8 * (strlen(prefix) + 1);
    char *out = calloc(1, n + 2), *w = out;
    w += sprintf(w, "%s", before);
    for (const char *l = prog; *l;) {
        const char *e = strchr(l, '\n');
        w += sprintf(w, "%s%.*s\n", prefix, (int)(e - l), l);
        l = e + 1;
    }
    sprintf(w, "%s", after);
    return out;
}

static void one_program_is_the_input(void **state)
{
    (void)state;
    const char *text = "// RUN: hir-opt %s\n\n" PROG "\n// CHECK: x\n";
    hir_log log;
    assert_int_equal(hir_log_find(text, strlen(text), false, &log), 0);
    assert_int_equal(log.n, 1);
    assert_null(log.programs[0].text);       /* read as it is */
    assert_int_equal(log.programs[0].header_line, 3);
    hir_log_fini(&log);
}

static void text_around_is_left_out(void **state)
{
    (void)state;
    char *text = prefixed("Fusion segments: 3\n\n", "", "=== next dump ===\nT3 = T1 + T2\n");
    hir_log log;
    assert_int_equal(hir_log_find(text, strlen(text), false, &log), 0);
    assert_int_equal(log.n, 1);
    assert_non_null(log.programs[0].text);
    assert_string_equal(log.programs[0].text, PROG);
    assert_int_equal(log.programs[0].line_base, 2);
    hir_log_fini(&log);
    free(text);
}

static void prefixes_are_removed_and_kept_for_locations(void **state)
{
    (void)state;
    char *text = prefixed("[rank 0] starting\n", "[rank 0] ", "[rank 0] done\n");
    hir_log log;
    assert_int_equal(hir_log_find(text, strlen(text), false, &log), 0);
    assert_int_equal(log.n, 1);
    const hir_log_program *pr = &log.programs[0];
    assert_string_equal(pr->text, PROG);
    assert_int_equal(pr->nprefixes, 4);
    assert_int_equal(pr->prefixes[1].len, 9);
    assert_memory_equal(pr->prefixes[1].text, "[rank 0] ", 9);
    assert_int_equal(pr->prefixes[1].line, 3);
    /* a location in the program is a location in the log: line 3, after the prefix */
    hir_source src;
    hir_log_source(&log, 0, "run.log", text, strlen(text), &src);
    int line, col;
    hir_source_linecol(&src, strlen("%HostIrContainer { (T0_g_float[iS0{8}]) -> (T1_g_float[iS1{8}]) :\n  "), &line, &col);
    assert_int_equal(line, 3);
    assert_int_equal(col, 12);
    hir_diag d;
    hir_diag_init(&d, NULL);
    hir_program *p = NULL;
    assert_int_equal(hir_parse(&src, &d, &p), 0);
    hir_program_free(p);
    hir_diag_fini(&d);
    hir_source_fini(&src);
    hir_log_fini(&log);
    free(text);
}

static void timestamps_differ_line_by_line(void **state)
{
    (void)state;
    const char *text = "12:00:00.001 I: %HostIrContainer { (T0_g_float[iS0{8}]) -> (T1_g_float[iS1{8}]) :\n"
                       "12:00:00.001 I:   T1_g_float[iS1{8}]\n"
                       "12:00:00.002 I:      = Set( T0_g_float[iS0{8}], cache_op=Streaming )\n"
                       "12:00:01.517 I: } // %HostIrContainer\n"
                       "12:00:01.517 I: \n"
                       "12:00:02.000 I: finished\n";
    hir_log log;
    assert_int_equal(hir_log_find(text, strlen(text), false, &log), 0);
    assert_int_equal(log.n, 1);
    assert_string_equal(log.programs[0].text, PROG);
    hir_log_fini(&log);
}

static void interleaved_programs_are_told_apart(void **state)
{
    (void)state;
    const char *text = "[1] %HostIrContainer { (T0_g_float[iS0{8}]) -> (T1_g_float[iS1{8}]) :\n"
                       "[0] %HostIrContainer { (T0_g_float[iS0{8}]) -> (T1_g_float[iS1{8}]) :\n"
                       "[0]   T1_g_float[iS1{8}]\n"
                       "[1]   T1_g_float[iS1{8}]\n"
                       "[1]      = Set( T0_g_float[iS0{8}], cache_op=Streaming )\n"
                       "[0]      = Set( T0_g_float[iS0{8}], cache_op=Streaming )\n"
                       "[0] } // %HostIrContainer\n"
                       "[1] } // %HostIrContainer\n";
    hir_log log;
    assert_int_equal(hir_log_find(text, strlen(text), false, &log), 0);
    assert_int_equal(log.n, 2);
    assert_string_equal(log.programs[0].text, PROG);
    assert_string_equal(log.programs[1].text, PROG);
    /* the [0] program: its lines are 2, 3, 6, 7 of the log */
    assert_int_equal(log.programs[1].prefixes[2].line, 6);
    assert_int_equal(log.programs[1].prefixes[3].line, 7);
    hir_log_fini(&log);
}

static void several_programs_and_a_trailer(void **state)
{
    (void)state;
    const char *text = "\n" PROG "\nIndex definitions:\n  i3 = i1 * 2;\n\nrun 2\n\n" PROG "\nbye\n";
    hir_log log;
    assert_int_equal(hir_log_find(text, strlen(text), false, &log), 0);
    assert_int_equal(log.n, 2);
    assert_string_equal(log.programs[0].text, PROG "\nIndex definitions:\n  i3 = i1 * 2;\n");
    assert_string_equal(log.programs[1].text, PROG);
    assert_int_equal(log.programs[1].header_line, 12);
    hir_log_fini(&log);
}

static void a_program_without_footer_ends_at_the_next(void **state)
{
    (void)state;
    const char *text = "%HostIrContainer { (T0_g_float[iS0{8}]) -> (T1_g_float[iS1{8}]) :\n"
                       "  T1_g_float[iS1{8}]\n" PROG;
    hir_log log;
    assert_int_equal(hir_log_find(text, strlen(text), false, &log), 0);
    assert_int_equal(log.n, 2);
    assert_string_equal(log.programs[0].text,
                        "%HostIrContainer { (T0_g_float[iS0{8}]) -> (T1_g_float[iS1{8}]) :\n"
                        "  T1_g_float[iS1{8}]\n");
    assert_string_equal(log.programs[1].text, PROG);
    hir_log_fini(&log);
}

static void a_blank_line_ends_a_prefixed_trailer(void **state)
{
    (void)state;
    /* after "Index definitions:" and its lines, an empty line ends the program: the
     * definition after it is not part of it */
    char *text = prefixed("", "[r0] ", "[r0] Index definitions:\n[r0]   i3 = i1 * 2;\n\n"
                                       "[r0]   i4 = 5;\n");
    hir_log log;
    assert_int_equal(hir_log_find(text, strlen(text), false, &log), 0);
    assert_int_equal(log.n, 1);
    assert_string_equal(log.programs[0].text, PROG "Index definitions:\n  i3 = i1 * 2;\n");
    assert_int_equal(log.programs[0].nprefixes, 6);
    assert_int_equal(log.programs[0].prefixes[5].line, 6);
    hir_log_fini(&log);
    free(text);
}

static void no_program(void **state)
{
    (void)state;
    hir_log log;
    assert_int_equal(hir_log_find("hello\n", 6, false, &log), 0);
    assert_int_equal(log.n, 0);
    hir_log_fini(&log);
    assert_int_equal(hir_log_find("", 0, false, &log), 0);
    assert_int_equal(log.n, 0);
    hir_log_fini(&log);
}

/* One program with '%' signs in its body (the one-program check looks at each): read where it
 * lies, its footer found; a second header after them makes it a log of two. */
static void percent_signs_before_the_footer(void **state)
{
    (void)state;
    const char *text = "%HostIrContainer { (T0_g_float[iS0{8}]) -> () :\n"
                       "  SetCurrentStream to Stream ( rank % numberOfStreams )\n"
                       "} // %HostIrContainer\n"
                       "\n";
    hir_log log;
    assert_int_equal(hir_log_find(text, strlen(text), false, &log), 0);
    assert_int_equal(log.n, 1);
    assert_null(log.programs[0].text);   /* the whole input, read where it lies */
    assert_int_equal(log.programs[0].len, strlen(text));
    hir_log_fini(&log);
    char two[512];
    snprintf(two, sizeof two, "%s%s", text, text);
    assert_int_equal(hir_log_find(two, strlen(two), false, &log), 0);
    assert_int_equal(log.n, 2);
    hir_log_fini(&log);
}

static void expect_exact(const hir_block *b, int n)
{
    assert_int_equal(b->stmts.n, n);
    assert_int_equal(b->stmts.cap, n);
    for (int i = 0; i < n; i++)
        assert_non_null(b->stmts.items[i]);
}

/* A program parsed from a string: the scanner reads in place, so the text is copied into a
 * buffer with the two NULs it needs after it. */
typedef struct parsed {
    char *buf;
    hir_source src;
    hir_diag d;
    hir_program *p;
} parsed;

static void parse_text(parsed *t, const char *name, const char *text)
{
    size_t len = strlen(text);
    t->buf = calloc(1, len + 2);
    assert_non_null(t->buf);
    memcpy(t->buf, text, len);
    t->src = (hir_source){.name = name, .text = t->buf, .len = len};
    hir_diag_init(&t->d, NULL);
    t->p = NULL;
    assert_int_equal(hir_parse(&t->src, &t->d, &t->p), 0);
}

static void parsed_fini(parsed *t)
{
    hir_program_free(t->p);
    hir_diag_fini(&t->d);
    hir_source_fini(&t->src);
    free(t->buf);
}

/* Each block the parser reads gets one array of its exact size, in order; statements added
 * afterwards (as passes do) still go in. */
static void blocks_are_read_at_their_exact_size(void **state)
{
    (void)state;
    const char *text = "%HostIrContainer { (T0_g_float[iS0{8}]) -> () :\n"
                       "  FOR streamIdx in istreamIdx6{8}:\n"
                       "    SetCurrentStream to Stream ( streamIdx % numberOfStreams )\n"
                       "    IF Manual ( streamIdx == rank ):\n"
                       "      Synchronize Stream 0\n"
                       "    ELSE:\n"
                       "      Synchronize Stream 1\n"
                       "      SetCurrentStream to Stream 2\n"
                       "    SetCurrentStream to Stream 0\n"
                       "  SetCurrentStream to Stream 0\n"
                       "} // %HostIrContainer\n";
    parsed t;
    parse_text(&t, "blocks.hir", text);
    hir_program *p = t.p;
    expect_exact(&p->body, 2);
    hir_stmt *loop = hir_block_at(&p->body, 0);
    assert_int_equal(loop->op, HIR_OP_FOR);
    expect_exact(&loop->body, 3);
    hir_stmt *cond = hir_block_at(&loop->body, 1);
    assert_int_equal(cond->op, HIR_OP_IF);
    expect_exact(&cond->body, 1);
    expect_exact(&cond->else_body, 2);
    assert_int_equal(hir_block_at(&cond->else_body, 1)->op, HIR_OP_SET_STREAM);
    assert_int_equal(hir_block_at(&cond->else_body, 1)->u.stream.number, 2);
    assert_int_equal(hir_block_at(&loop->body, 2)->op, HIR_OP_SET_STREAM);
    for (int i = 0; i < 5; i++)
        hir_block_append(p, &cond->body, hir_block_at(&loop->body, 0));
    assert_int_equal(hir_block_size(&cond->body), 6);
    assert_int_equal(hir_block_at(&cond->body, 0)->op, HIR_OP_SYNC_STREAM);
    parsed_fini(&t);
}

/* An unnamed expression spelled again is the same value (parser_actions.c, hirp_anon_value);
 * different ones, and the same operator on other operands, are not. */
static void equal_unnamed_expressions_are_one_value(void **state)
{
    (void)state;
    const char *text = "\n%HostIrContainer { () -> () :\n"
                       "  SetCurrentStream to Stream ( rank % 2 )\n"
                       "  SetCurrentStream to Stream ( rank % 2 )\n"
                       "  SetCurrentStream to Stream ( rank % 3 )\n"
                       "  SetCurrentStream to Stream ( 2 % rank )\n"
                       "  SetCurrentStream to Stream ( ( rank % 2 ) + 1 )\n"
                       "  SetCurrentStream to Stream ( ( rank % 2 ) + 1 )\n"
                       "  SetCurrentStream to Stream ( -rank )\n"
                       "  SetCurrentStream to Stream ( -rank )\n"
                       "} // %HostIrContainer\n\n";
    parsed t;
    parse_text(&t, "anon.hir", text);
    hir_program *p = t.p;
    size_t len = strlen(text);
    const hir_scalar *v[8];
    for (int i = 0; i < 8; i++) {
        const hir_stmt *s = hir_block_at(&p->body, i);
        assert_int_equal(s->op, HIR_OP_SET_STREAM);
        v[i] = s->u.stream.index;
        assert_non_null(v[i]);
        assert_int_equal(v[i]->kind, HIR_SC_ANON);
    }
    assert_ptr_equal(v[0], v[1]);
    assert_ptr_not_equal(v[0], v[2]);
    assert_ptr_not_equal(v[0], v[3]);
    assert_ptr_not_equal(v[2], v[3]);
    assert_ptr_equal(v[4], v[5]);
    assert_ptr_equal(v[4]->def->args[0], v[0]);
    assert_ptr_equal(v[6], v[7]);
    assert_ptr_not_equal(v[6], v[0]);
    FILE *f = tmpfile();
    assert_non_null(f);
    hir_program_print(p, f);
    long n = ftell(f);   /* printed back as read */
    assert_int_equal(n, (long)len);
    char *back = calloc(1, len + 1);
    assert_non_null(back);
    rewind(f);
    assert_int_equal(fread(back, 1, len, f), len);
    assert_memory_equal(back, text, len);
    free(back);
    fclose(f);
    parsed_fini(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_program_is_the_input),
        cmocka_unit_test(text_around_is_left_out),
        cmocka_unit_test(prefixes_are_removed_and_kept_for_locations),
        cmocka_unit_test(timestamps_differ_line_by_line),
        cmocka_unit_test(interleaved_programs_are_told_apart),
        cmocka_unit_test(several_programs_and_a_trailer),
        cmocka_unit_test(a_program_without_footer_ends_at_the_next),
        cmocka_unit_test(a_blank_line_ends_a_prefixed_trailer),
        cmocka_unit_test(no_program),
        cmocka_unit_test(percent_signs_before_the_footer),
        cmocka_unit_test(blocks_are_read_at_their_exact_size),
        cmocka_unit_test(equal_unnamed_expressions_are_one_value),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
