/* test_dialect_verify.c — the verifier on parsed programs and on IR built without locations:
 * severities (undefined values are errors for the runner), counts, and messages that stand on
 * their own when there is no source to point at. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dialect/hir.h"
#include "parser/parser.h"

typedef struct parsed {
    hir_source src;
    char *text;
    hir_diag d;
    hir_program *p;
} parsed;

static parsed *parse(const char *text)
{
    parsed *r = calloc(1, sizeof *r);
    size_t n = strlen(text);
    r->text = calloc(1, n + 2);
    memcpy(r->text, text, n);
    hir_source_init(&r->src, "t.hir", r->text, n);
    hir_diag_init(&r->d, NULL);
    assert_int_equal(hir_parse(&r->src, &r->d, &r->p), 0);
    return r;
}

static void release(parsed *r)
{
    hir_program_free(r->p);
    hir_diag_fini(&r->d);
    hir_source_fini(&r->src);
    free(r->text);
    free(r);
}

static const char *const corpus_like =
    "\n%HostIrContainer { (T0_g___bfloat[ideviceIdx.x0{8}, iS1{128}, iS2{1024}]) -> () :\n"
    "  FOR streamIdx in istreamIdx10{8}:\n"
    "    T6_l___bfloat[iS15{128}, iS16{1024}]\n"
    "       = HirAliasSelect( T0_g___bfloat[ideviceIdx.x0{8}, iS1{128}, iS2{1024}], axis = ideviceIdx.x0{8}, index = i84 )\n"
    "} // %HostIrContainer\n\n";

static void undefined_is_warning_or_error(void **state)
{
    parsed *r = parse(corpus_like);
    hir_verify_opts warn = {.undefined_is_error = false}, err = {.undefined_is_error = true};
    assert_int_equal(hir_program_verify(r->p, &warn, &r->d), 0);
    assert_int_equal(r->d.warnings, 1);
    assert_int_equal(r->d.errors, 0);
    assert_string_equal(r->d.first->msg, "use of undefined value 'i84'");
    int line, col;
    hir_source_linecol(&r->src, r->d.first->loc.begin, &line, &col);
    assert_int_equal(line, 5);
    assert_int_equal(col, 113);
    assert_int_equal(hir_program_verify(r->p, &err, &r->d), 1);
    assert_int_equal(r->d.errors, 1);
    assert_int_equal(r->d.last->sev, HIR_ERROR);
    release(r);
}

static void defined_through_trailer(void **state)
{
    char buf[2048];
    snprintf(buf, sizeof buf, "%sIndex definitions:\n  i84 = i82 %% 8;\n  i82 = rank + streamIdx;\n\n", corpus_like);
    parsed *r = parse(buf);
    hir_verify_opts err = {.undefined_is_error = true};
    assert_int_equal(hir_program_verify(r->p, &err, &r->d), 0);
    assert_int_equal(r->d.warnings + r->d.errors, 0);
    release(r);
}

static void pass_made_ir_without_locations(void **state)
{
    hir_program *p = hir_program_new();
    hir_diag d;
    hir_diag_init(&d, NULL);
    hir_stmt *w = hir_stmt_new(p, HIR_OP_WAIT);
    w->u.wait.number = 12;
    hir_block_append(p, &p->body, w);
    hir_stmt *e = hir_stmt_new(p, HIR_OP_END_COAL);
    e->u.comm = hir_comm_create(p, 13, HIR_OP_END_COAL);
    e->u.comm->stmt = e;
    hir_block_append(p, &p->body, e);
    hir_stmt *s = hir_stmt_new(p, HIR_OP_SET_STREAM);
    s->u.stream.number = -1;
    s->u.stream.index = hir_scalar_symbol(p, "i", 4);
    hir_block_append(p, &p->body, s);
    hir_verify_opts o = {.undefined_is_error = true};
    assert_int_equal(hir_program_verify(p, &o, &d), 3);
    const hir_diag_entry *x = d.first;
    assert_null(x->loc.src);
    assert_string_equal(x->msg, "Wait refers to expression 12, which is not a Communication, P2PCommunication or EndCoalescing");
    x = x->next;
    assert_string_equal(x->msg, "EndCoalescing 13 without a preceding StartCoalescing in the same block");
    x = x->next;
    assert_string_equal(x->msg, "use of undefined value 'i4' (a free value such as a symbolic extent: give it with --bind i4=N)");
    /* arity comes from the op table */
    hir_stmt *bad = hir_stmt_new(p, HIR_OP_MATMUL);
    hir_value *one[1] = {(hir_value *)hir_scalar_int(p, 1)};
    hir_stmt_set_inputs(p, bad, 1, one);
    p->body.stmts.n = 0;
    hir_block_append(p, &p->body, bad);
    hir_diag_fini(&d);
    hir_diag_init(&d, NULL);
    assert_int_equal(hir_program_verify(p, &o, &d), 1);
    assert_string_equal(d.first->msg, "matmul takes 2 operands, not 1");
    hir_diag_fini(&d);
    hir_program_free(p);
}

static void corpus_shapes_verify(void **state)
{
    const char *text =
        "\n%HostIrContainer { (T0_g___bfloat[iS0{128}, iS1{1024}], T1_g___bfloat[iS2{512}, iS3{1024}]) -> () :\n"
        "  T3_g___bfloat[iS5{128}, iS6{512}, rS7{1024}]\n"
        "     = linear(T0_g___bfloat[iS0{128}, iS1{1024}],\n"
        "              T1_g___bfloat[iS2{512}, iS3{1024}]    )\n"
        "  T4_g___bfloat[iS8{i9}, iS10{512}, rS11{1024}]\n"
        "     = linear(T0_g___bfloat[iS0{128}, iS1{1024}],\n"
        "              T1_g___bfloat[iS2{512}, iS3{1024}]    )\n"
        "} // %HostIrContainer\n\n";
    parsed *r = parse(text);
    hir_verify_opts o = {.undefined_is_error = true};
    /* a symbolic extent is not compared; constant ones agree */
    assert_int_equal(hir_program_verify(r->p, &o, &r->d), 0);
    release(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(undefined_is_warning_or_error),
        cmocka_unit_test(defined_through_trailer),
        cmocka_unit_test(pass_made_ir_without_locations),
        cmocka_unit_test(corpus_shapes_verify),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
