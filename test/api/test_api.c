/* test_api.c — the public C API (include/hir/hir.h) as a user sees it: statuses, the
 * diagnostics list (order, locations, notes, rendered text), parsing, printing, pipelines,
 * and one-rank runs with their buffer checks. Linked with libhir and libhir_runtime. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hir/hir.h"

static const char matmul[] =
    "%HostIrContainer { (T0_g_float[iS0{2}, iS1{3}] (DeviceMesh{0}), "
    "T1_g_float[iS2{3}, iS3{2}] (DeviceMesh{0})) -> "
    "(T2_g_float[iS4{2}, iS5{2}, rS6{3}] (DeviceMesh{0})) :\n"
    "  T2_g_float[iS4{2}, iS5{2}, rS6{3}] (DeviceMesh{0})\n"
    "     = matmul(T0_g_float[iS0{2}, iS1{3}] (DeviceMesh{0}),\n"
    "              T1_g_float[iS2{3}, iS3{2}] (DeviceMesh{0}))\n"
    "} // %HostIrContainer\n";

/* a Set whose output has another dtype: an error at the Set (line 3) with a note at line 2 */
static const char bad_set[] =
    "%HostIrContainer { (T0_g_float[iS0{4}, iS2{8}]) -> () :\n"
    "  T1_g_double[iS1{4}, iS3{8}]\n"
    "     = Set( T0_g_float[iS0{4}, iS2{8}], cache_op=Streaming )\n"
    "} // %HostIrContainer\n";

static hirc_program *parse_ok(const char *text, hirc_diagnostics *d)
{
    hirc_program *p = NULL;
    assert_int_equal(hirc_parse_string(text, strlen(text), "t.hir", d, &p), HIRC_OK);
    assert_non_null(p);
    return p;
}

/* a new diagnostics list, and TEXT parsed into it */
static hirc_program *parse_new(const char *text, hirc_diagnostics **d)
{
    assert_int_equal(hirc_diagnostics_create(d), HIRC_OK);
    return parse_ok(text, *d);
}

/* the first diagnostic says MSG; the list is cleared for the next check */
static void expect_message(hirc_diagnostics *d, const char *msg)
{
    hirc_diagnostic x;
    assert_int_equal(hirc_diagnostics_get(d, 0, &x), HIRC_OK);
    assert_string_equal(x.message, msg);
    hirc_diagnostics_clear(d);
}

static void null_arguments(void **state)
{
    (void)state;
    hirc_program *p = (hirc_program *)1;
    assert_int_equal(hirc_parse_string("x", 1, NULL, NULL, NULL), HIRC_ERR_INVALID_ARGUMENT);
    assert_int_equal(hirc_parse_string(NULL, 3, NULL, NULL, &p), HIRC_ERR_INVALID_ARGUMENT);
    assert_null(p);
    assert_int_equal(hirc_verify(NULL, NULL), HIRC_ERR_INVALID_ARGUMENT);
    assert_int_equal(hirc_run_pipeline(NULL, "canonicalize", NULL), HIRC_ERR_INVALID_ARGUMENT);
    char *text = NULL;
    assert_int_equal(hirc_print(NULL, &text, NULL), HIRC_ERR_INVALID_ARGUMENT);
    assert_int_equal(hirc_run(NULL, NULL, 0, NULL, 0, NULL, NULL), HIRC_ERR_INVALID_ARGUMENT);
    assert_int_equal(hirc_num_inputs(NULL), 0);
    hirc_diagnostic x;
    assert_int_equal(hirc_diagnostics_get(NULL, 0, &x), HIRC_ERR_INVALID_ARGUMENT);
    hirc_program_destroy(NULL);
    hirc_diagnostics_destroy(NULL);
    assert_string_equal(hirc_status_string(HIRC_ERR_PARSE), "parse error");
    assert_string_equal(hirc_dtype_name(HIRC_BFLOAT16), "bfloat16");
    assert_int_equal(hirc_dtype_size(HIRC_BFLOAT16), 2);
    assert_int_equal(hirc_dtype_size(HIRC_DTYPE_OTHER), 0);
}

static void parse_print_round_trip(void **state)
{
    (void)state;
    hirc_diagnostics *d;
    hirc_program *p = parse_new(matmul, &d);
    assert_int_equal(hirc_diagnostics_count(d), 0);
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(hirc_print(p, &text, &len), HIRC_OK);
    /* nvFuser's printer frames the program with a blank line before and after it */
    assert_int_equal(len, strlen(matmul) + 2);
    assert_int_equal(text[0], '\n');
    assert_memory_equal(text + 1, matmul, strlen(matmul));
    assert_string_equal(text + 1 + strlen(matmul), "\n");
    hirc_free(text);
    hirc_value_info vi;
    assert_int_equal(hirc_num_inputs(p), 2);
    assert_int_equal(hirc_num_outputs(p), 1);
    assert_int_equal(hirc_output_info(p, 0, &vi), HIRC_OK);
    assert_string_equal(vi.name, "T2");
    assert_int_equal(vi.ndim, 2);
    assert_int_equal(vi.dtype, HIRC_FLOAT32);
    assert_int_equal(hirc_input_info(p, 2, &vi), HIRC_ERR_INVALID_ARGUMENT);
    hirc_program_destroy(p);
    hirc_diagnostics_destroy(d);
}

static void parse_error_is_located(void **state)
{
    (void)state;
    hirc_diagnostics *d;
    assert_int_equal(hirc_diagnostics_create(&d), HIRC_OK);
    /* not NUL-terminated: the length is what counts */
    char text[] = "%HostIrContainer { () -> () :\n  junk\n} // %HostIrContainer\nXXXX";
    hirc_program *p = (hirc_program *)1;
    assert_int_equal(hirc_parse_string(text, strlen(text) - 4, "e.hir", d, &p), HIRC_ERR_PARSE);
    assert_null(p);
    assert_int_equal(hirc_diagnostics_error_count(d), 1);
    hirc_diagnostic x;
    assert_int_equal(hirc_diagnostics_get(d, 0, &x), HIRC_OK);
    assert_int_equal(x.severity, HIRC_ERROR);
    assert_string_equal(x.file, "e.hir");
    assert_int_equal(x.line, 2);
    assert_int_equal(x.column, 3);
    assert_string_equal(x.message, "unknown statement 'junk'");
    assert_string_equal(x.rendered, "e.hir:2:3: error: unknown statement 'junk'\n  junk\n  ^~~~\n");
    hirc_diagnostics_clear(d);
    assert_int_equal(hirc_diagnostics_count(d), 0);
    assert_int_equal(hirc_parse_file("/nonexistent/x.hir", d, &p), HIRC_ERR_IO);
    assert_int_equal(hirc_diagnostics_get(d, 0, &x), HIRC_OK);
    assert_non_null(strstr(x.message, "/nonexistent/x.hir"));
    assert_string_equal(x.file, "/nonexistent/x.hir");
    assert_int_equal(x.line, 0);
    hirc_diagnostics_destroy(d);
}

/* A tensor whose print allows two shapes: refused by hirc_verify with the readings, read as
 * the caller says with hirc_set_logical; a reading that does not fit is refused. */
static void ambiguous_shape(void **state)
{
    (void)state;
    static const char text[] =
        "%HostIrContainer { (T0_g_float[ideviceIdx.x2{2}, iS3{4}] (DeviceMesh{0 1})) -> () :\n"
        "} // %HostIrContainer\n";
    hirc_diagnostics *d;
    hirc_program *p = parse_new(text, &d);
    assert_int_equal(hirc_verify(p, d), HIRC_ERR_VERIFY);
    hirc_diagnostic e;
    assert_int_equal(hirc_diagnostics_get(d, 0, &e), HIRC_OK);
    assert_non_null(strstr(e.message, "reads as [8] (T0=2*3) or as [2, 4] (T0=2,3)"));
    assert_int_equal(e.line, 1);
    assert_int_equal(e.column, 21);
    hirc_program_destroy(p);
    hirc_diagnostics_clear(d);

    p = parse_ok(text, d);
    assert_int_equal(hirc_set_logical(p, "T0=2*2", d), HIRC_ERR_VERIFY);
    assert_int_equal(hirc_diagnostics_get(d, 0, &e), HIRC_OK);
    assert_non_null(strstr(e.message, "an IterDomain named twice"));
    assert_int_equal(hirc_set_logical(p, "T0=2*3", d), HIRC_OK);
    assert_int_equal(hirc_verify(p, d), HIRC_OK);
    assert_int_equal(hirc_set_logical(NULL, "T0=2*3", d), HIRC_ERR_INVALID_ARGUMENT);
    hirc_program_destroy(p);
    hirc_diagnostics_destroy(d);
}

static void verify_error_with_note(void **state)
{
    (void)state;
    hirc_diagnostics *d;
    hirc_program *p = parse_new(bad_set, &d);
    assert_int_equal(hirc_verify(p, d), HIRC_ERR_VERIFY);
    assert_int_equal(hirc_diagnostics_count(d), 2);
    hirc_diagnostic e, n;
    assert_int_equal(hirc_diagnostics_get(d, 0, &e), HIRC_OK);
    assert_int_equal(hirc_diagnostics_get(d, 1, &n), HIRC_OK);
    assert_int_equal(e.severity, HIRC_ERROR);
    assert_string_equal(e.message, "Set: T0 has dtype float but the output T1 has dtype double");
    assert_int_equal(e.line, 3);
    assert_int_equal(n.severity, HIRC_NOTE);
    assert_string_equal(n.message, "output T1 is here");
    assert_int_equal(n.line, 2);
    /* the error's rendered text carries its note; the note's, itself alone */
    assert_non_null(strstr(e.rendered, "t.hir:2:3: note: output T1 is here\n"));
    assert_memory_equal(n.rendered, "t.hir:2:3: note: ", 17);
    /* running verifies first */
    hirc_diagnostics_clear(d);
    assert_int_equal(hirc_run(p, NULL, 0, NULL, 0, NULL, d), HIRC_ERR_MISMATCH);
    float x[32];
    hirc_tensor in = {x, HIRC_FLOAT32, 2, {4, 8}};
    assert_int_equal(hirc_run(p, &in, 1, NULL, 0, NULL, d), HIRC_ERR_VERIFY);
    hirc_program_destroy(p);
    hirc_diagnostics_destroy(d);
}

static void pipeline_errors(void **state)
{
    (void)state;
    hirc_diagnostics *d;
    hirc_program *p = parse_new(matmul, &d);
    assert_int_equal(hirc_run_pipeline(p, "no-such-pass", d), HIRC_ERR_PIPELINE);
    hirc_diagnostic x;
    assert_int_equal(hirc_diagnostics_get(d, 0, &x), HIRC_OK);
    assert_non_null(strstr(x.message, "unknown pass 'no-such-pass'"));
    hirc_diagnostics_clear(d);
    /* a copy before the pipeline has the original text and name; after it, the printed text */
    hirc_program *q = NULL, *r = NULL;
    assert_int_equal(hirc_program_copy(p, d, &q), HIRC_OK);
    assert_int_equal(hirc_run_pipeline(p, "canonicalize", d), HIRC_OK);
    assert_int_equal(hirc_program_copy(p, d, &r), HIRC_OK);
    char *tp, *tq, *tr;
    assert_int_equal(hirc_print(p, &tp, NULL), HIRC_OK);
    assert_int_equal(hirc_print(q, &tq, NULL), HIRC_OK);
    assert_int_equal(hirc_print(r, &tr, NULL), HIRC_OK);
    assert_memory_equal(tq + 1, matmul, strlen(matmul));
    assert_string_equal(tp, tr);
    hirc_free(tp);
    hirc_free(tq);
    hirc_free(tr);
    hirc_diagnostics_clear(d);
    assert_int_equal(hirc_run(r, NULL, 0, NULL, 0, NULL, d), HIRC_ERR_MISMATCH);
    assert_int_equal(hirc_diagnostics_get(d, 0, &x), HIRC_OK);
    assert_string_equal(x.file, "t.hir (after passes)");
    hirc_program_destroy(q);
    hirc_program_destroy(r);
    hirc_program_destroy(p);
    hirc_diagnostics_destroy(d);
}

static void run_matmul(void **state)
{
    (void)state;
    hirc_diagnostics *d;
    hirc_program *p = parse_new(matmul, &d);
    float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 1, 1, 1}, c[4] = {-1, -1, -1, -1};
    hirc_tensor in[2] = {{a, HIRC_FLOAT32, 2, {2, 3}}, {b, HIRC_FLOAT32, 2, {3, 2}}};
    hirc_tensor shapes[1];
    assert_int_equal(hirc_output_shapes(p, in, 2, shapes, 1, NULL, d), HIRC_OK);
    assert_int_equal(shapes[0].dtype, HIRC_FLOAT32);
    assert_int_equal(shapes[0].ndim, 2);
    assert_int_equal(shapes[0].shape[0], 2);
    assert_int_equal(shapes[0].shape[1], 2);

    /* a wrong output shape: nothing runs, the output is untouched */
    hirc_tensor out = {c, HIRC_FLOAT32, 2, {4, 1}};
    assert_int_equal(hirc_run(p, in, 2, &out, 1, NULL, d), HIRC_ERR_MISMATCH);
    expect_message(d, "output T2: the program needs shape [2, 2], the buffer is [4, 1]");
    assert_true(c[0] == -1);
    /* a wrong input dtype */
    in[1].dtype = HIRC_INT32;
    out.shape[0] = 2;
    out.shape[1] = 2;
    assert_int_equal(hirc_run(p, in, 2, &out, 1, NULL, d), HIRC_ERR_MISMATCH);
    expect_message(d, "input T1: the program needs dtype float32 (float), the buffer is int32");
    in[1].dtype = HIRC_FLOAT32;

    assert_int_equal(hirc_run(p, in, 2, &out, 1, NULL, d), HIRC_OK);
    const float want[4] = {1 + 3, 2 + 3, 4 + 6, 5 + 6};
    for (int i = 0; i < 4; i++)
        assert_true(c[i] == want[i]);
    assert_true(a[0] == 1 && b[0] == 1);            /* inputs untouched */
    hirc_program_destroy(p);
    hirc_diagnostics_destroy(d);
}

/* an extent spelled as a bare symbol takes the input's extent; dimensions and extents are
 * checked before that */
static void run_symbolic_extent(void **state)
{
    (void)state;
    static const char copy[] =
        "%HostIrContainer { (T0_g_float[iS0{i0}, iS1{4}]) -> (T1_g_float[iS2{i0}, iS3{4}]) :\n"
        "  T1_g_float[iS2{i0}, iS3{4}] = ALLOCATE(buffer=T1_g_float[iS2{i0}, iS3{4}], "
        "mem_type=global, size=( i0 * 4 ), zero_init=false, resets_to_zero=false)\n"
        "  T1_g_float[iS2{i0}, iS3{4}]\n"
        "     = Set( T0_g_float[iS0{i0}, iS1{4}], cache_op=Streaming )\n"
        "} // %HostIrContainer\n";
    hirc_diagnostics *d;
    hirc_program *p = parse_new(copy, &d);
    float a[12], c[12] = {0};
    for (int i = 0; i < 12; i++)
        a[i] = (float)i;
    hirc_tensor in = {a, HIRC_FLOAT32, 2, {3, 4}}, out = {c, HIRC_FLOAT32, 2, {3, 4}};
    assert_int_equal(hirc_run(p, &in, 1, &out, 1, NULL, d), HIRC_OK);
    assert_memory_equal(a, c, sizeof a);
    in.ndim = 9;
    assert_int_equal(hirc_run(p, &in, 1, &out, 1, NULL, d), HIRC_ERR_MISMATCH);
    expect_message(d, "input T0: the program needs 2 dimension(s), the buffer has 9");
    in.ndim = 2;
    in.shape[0] = -1;
    assert_int_equal(hirc_run(p, &in, 1, &out, 1, NULL, d), HIRC_ERR_MISMATCH);
    expect_message(d, "input T0: negative extent in its shape");
    in.shape[0] = INT64_MAX;
    out.shape[0] = INT64_MAX;
    assert_int_equal(hirc_run(p, &in, 1, &out, 1, NULL, d), HIRC_ERR_MISMATCH);
    expect_message(d, "input T0: its size does not fit in 64 bits");
    assert_int_equal(hirc_output_shapes(p, &in, 1, &out, 1, NULL, d), HIRC_ERR_MISMATCH);
    hirc_program_destroy(p);
    hirc_diagnostics_destroy(d);
}

/* Buffers have the logical shape (issue 27): an input whose first axis is split by stream,
 * [istreamIdx2{3}, iS3{( ceilDiv(i0, 3) )}, iS1{4}], is [i0, 4]: ndim 2, i0 bound from the
 * caller's shape, the data in logical row-major order. */
static void run_logical_shapes(void **state)
{
    (void)state;
    static const char text[] =
        "%HostIrContainer { (T0_g_float[istreamIdx2{3}, iS3{( ceilDiv(i0, 3) )}, iS1{4}]) -> "
        "(T1_g_float[iS4{i0}, iS5{4}]) :\n"
        "  T1_g_float[iS4{i0}, iS5{4}]\n"
        "     = Set( T0_g_float[istreamIdx2{3}, iS3{( ceilDiv(i0, 3) )}, iS1{4}], "
        "cache_op=Streaming )\n"
        "} // %HostIrContainer\n";
    hirc_diagnostics *d;
    hirc_program *p = parse_new(text, &d);
    hirc_value_info vi;
    assert_int_equal(hirc_input_info(p, 0, &vi), HIRC_OK);
    assert_int_equal(vi.ndim, 2);
    assert_int_equal(hirc_output_info(p, 0, &vi), HIRC_OK);
    assert_int_equal(vi.ndim, 2);
    float a[24], c[24] = {0};
    for (int i = 0; i < 24; i++)
        a[i] = (float)i;
    hirc_tensor in = {a, HIRC_FLOAT32, 2, {6, 4}}, out = {c, HIRC_FLOAT32, 2, {6, 4}};
    assert_int_equal(hirc_run(p, &in, 1, &out, 1, NULL, d), HIRC_OK);
    assert_memory_equal(a, c, sizeof a);
    hirc_program_destroy(p);
    hirc_diagnostics_destroy(d);
}

/* Issue 31: a binding that disagrees with the extent an input's shape gives is refused (before:
 * the array's extent was used silently); the same value is accepted. */
static void run_binding_against_shape(void **state)
{
    (void)state;
    static const char text[] =
        "%HostIrContainer { (T0_g_float[iS0{i0}, iS1{4}]) -> (T1_g_float[iS2{i0}, iS3{4}]) :\n"
        "  T1_g_float[iS2{i0}, iS3{4}]\n"
        "     = Set( T0_g_float[iS0{i0}, iS1{4}], cache_op=Streaming )\n"
        "} // %HostIrContainer\n";
    hirc_diagnostics *d;
    hirc_program *p = parse_new(text, &d);
    float a[12] = {1, 2, 3}, c[12] = {0};
    hirc_tensor in = {a, HIRC_FLOAT32, 2, {3, 4}}, out = {c, HIRC_FLOAT32, 2, {3, 4}};
    hirc_binding five = {"i0", 5}, three = {"i0", 3};
    hirc_run_options o = {.bindings = &five, .nbindings = 1};
    assert_int_equal(hirc_run(p, &in, 1, &out, 1, &o, d), HIRC_ERR_MISMATCH);
    expect_message(d, "input T0: binding 'i0' is 5, but the buffer's shape gives 3 "
                      "(axis 0); give the same value or leave the binding out");
    o.bindings = &three;
    assert_int_equal(hirc_run(p, &in, 1, &out, 1, &o, d), HIRC_OK);
    assert_memory_equal(a, c, sizeof a);
    hirc_program_destroy(p);
    hirc_diagnostics_destroy(d);
}

static void run_refuses_other_ranks(void **state)
{
    (void)state;
    static const char two[] =
        "%HostIrContainer { (T0_g_float[iS0{4}] (DeviceMesh{0 1})) -> "
        "(T1_g_float[iS1{4}] (DeviceMesh{0 1})) :\n"
        "  T1_g_float[iS1{4}] (DeviceMesh{0 1})\n"
        "     = Set( T0_g_float[iS0{4}] (DeviceMesh{0 1}), cache_op=Streaming )\n"
        "} // %HostIrContainer\n";
    hirc_diagnostics *d;
    hirc_program *p = parse_new(two, &d);
    float a[4] = {0}, c[4];
    hirc_tensor in = {a, HIRC_FLOAT32, 1, {4}}, out = {c, HIRC_FLOAT32, 1, {4}};
    assert_int_equal(hirc_run(p, &in, 1, &out, 1, NULL, d), HIRC_ERR_RUN);
    hirc_diagnostic x;
    assert_int_equal(hirc_diagnostics_get(d, 0, &x), HIRC_OK);
    assert_non_null(strstr(x.message, "device 1"));
    hirc_program_destroy(p);
    hirc_diagnostics_destroy(d);
}

/* the argument checks of a run, a scalar input (an int64 of shape []), and bindings */
static void run_arguments_and_scalar_inputs(void **state)
{
    (void)state;
    static const char scal[] =
        "%HostIrContainer { (T0_g_float[iS0{4}], i5) -> (T1_g_float[iS1{4}]) :\n"
        "  T1_g_float[iS1{4}]\n"
        "     = Set( T0_g_float[iS0{4}], cache_op=Streaming )\n"
        "} // %HostIrContainer\n";
    hirc_diagnostics *d;
    hirc_program *p = parse_new(scal, &d);
    float a[4] = {1, 2, 3, 4}, c[4] = {0};
    int64_t five = 5;
    hirc_tensor in[2] = {{a, HIRC_FLOAT32, 1, {4}}, {&five, HIRC_INT64, 0, {0}}};
    hirc_tensor out = {c, HIRC_FLOAT32, 1, {4}};
    assert_int_equal(hirc_run(p, NULL, 2, &out, 1, NULL, d), HIRC_ERR_INVALID_ARGUMENT);
    expect_message(d, "NULL inputs");
    hirc_binding many[65];
    for (int i = 0; i < 65; i++)
        many[i] = (hirc_binding){"i9", i};
    hirc_run_options o = {.bindings = many, .nbindings = 65};
    assert_int_equal(hirc_run(p, in, 2, &out, 1, &o, d), HIRC_ERR_INVALID_ARGUMENT);
    expect_message(d, "more than 64 bindings");
    o.bindings = NULL;
    o.nbindings = 1;
    assert_int_equal(hirc_run(p, in, 2, &out, 1, &o, d), HIRC_ERR_INVALID_ARGUMENT);
    expect_message(d, "binding without a name");
    /* a scalar input must be an int64 */
    in[1].dtype = HIRC_FLOAT32;
    assert_int_equal(hirc_run(p, in, 2, &out, 1, NULL, d), HIRC_ERR_MISMATCH);
    expect_message(d, "input i5: the program needs dtype int64 (int64_t), the buffer is float32");
    in[1].dtype = HIRC_INT64;
    /* a binding must name a free scalar of the program (the interpreter refuses it) */
    o.bindings = many;
    o.nbindings = 1;
    o.num_streams = 2;
    assert_int_equal(hirc_run(p, in, 2, &out, 1, &o, d), HIRC_ERR_RUN);
    expect_message(d, "binding 'i9': the program has no scalar of that name");
    assert_int_equal(hirc_run(p, in, 2, &out, 1, NULL, d), HIRC_OK);
    assert_memory_equal(a, c, sizeof a);
    /* comm_priority is 0 or 1 (the CPU backend ignores it); anything else is refused */
    hirc_run_options q = {0};
    q.comm_priority = 2;
    assert_int_equal(hirc_run(p, in, 2, &out, 1, &q, d), HIRC_ERR_INVALID_ARGUMENT);
    expect_message(d, "comm_priority is 0 (default) or 1 (high): 2");
    q.comm_priority = 1;
    memset(c, 0, sizeof c);
    assert_int_equal(hirc_run(p, in, 2, &out, 1, &q, d), HIRC_OK);
    assert_memory_equal(a, c, sizeof a);
    hirc_program_destroy(p);
    hirc_diagnostics_destroy(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(null_arguments),
        cmocka_unit_test(parse_print_round_trip),
        cmocka_unit_test(parse_error_is_located),
        cmocka_unit_test(verify_error_with_note),
        cmocka_unit_test(ambiguous_shape),
        cmocka_unit_test(pipeline_errors),
        cmocka_unit_test(run_matmul),
        cmocka_unit_test(run_symbolic_extent),
        cmocka_unit_test(run_logical_shapes),
        cmocka_unit_test(run_binding_against_shape),
        cmocka_unit_test(run_refuses_other_ranks),
        cmocka_unit_test(run_arguments_and_scalar_inputs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
