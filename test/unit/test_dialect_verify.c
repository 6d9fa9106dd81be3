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

/* hir_scalar_eval_quick answers only where the memo answers the same (dialect/expr.c). */
static hir_scalar *add(hir_program *p, hir_scalar *a, hir_scalar *b)
{
    return hir_scalar_anon(p, hir_sexpr_binary(p, HIR_BIN_ADD, a, b));
}

static void quick_eval_agrees_with_memo(void **state)
{
    hir_program *p = hir_program_new();
    hir_scalar *big = hir_scalar_int(p, INT64_MAX), *one = hir_scalar_int(p, 1);
    hir_scalar *rank = hir_scalar_named(p, "rank");
    int64_t v = 0;
    char why[128];
    /* a value */
    assert_int_equal(hir_scalar_eval_quick(add(p, hir_scalar_int(p, 3), one), &v), 0);
    assert_int_equal(v, 4);
    /* a free value reached first: the overflow after it is never evaluated, by either */
    hir_scalar *free_first = add(p, rank, add(p, big, one));
    assert_int_equal(hir_scalar_eval_quick(free_first, &v), HIR_EVAL_FREE);
    assert_int_equal(hir_scalar_eval(free_first, NULL, &v, why, sizeof why), -1);
    assert_string_equal(why, "unbound value 'rank'");
    /* an overflow reached first: the memo decides (and says overflow) */
    hir_scalar *over_first = add(p, add(p, big, one), rank);
    assert_int_equal(hir_scalar_eval_quick(over_first, &v), HIR_EVAL_UNSURE);
    assert_int_equal(hir_scalar_eval(over_first, NULL, &v, why, sizeof why), -1);
    assert_string_equal(why, "integer overflow in index expression");
    /* a named definition: its memo record may say more */
    hir_scalar *i5 = hir_scalar_symbol(p, "i", 5);
    i5->def = hir_sexpr_binary(p, HIR_BIN_ADD, one, one);
    assert_int_equal(hir_scalar_eval_quick(add(p, i5, one), &v), HIR_EVAL_UNSURE);
    /* a float leaf, and a tree deeper than the quick path goes */
    assert_int_equal(hir_scalar_eval_quick(add(p, hir_scalar_float(p, HIR_DT_DOUBLE, 2.0, "2.0"), one), &v),
                     HIR_EVAL_UNSURE);
    hir_scalar *deep = one;
    for (int i = 0; i < 40; i++)
        deep = add(p, deep, one);
    assert_int_equal(hir_scalar_eval_quick(deep, &v), HIR_EVAL_UNSURE);
    assert_int_equal(hir_scalar_eval(deep, NULL, &v, why, sizeof why), 0);
    assert_int_equal(v, 41);
    hir_program_free(p);
}

/* The verifier resolves every Wait's target in its walk, also in blocks it does not check. */
static void waits_resolved_in_unchecked_blocks(void **state)
{
    hir_program *p = hir_program_new();
    hir_diag d;
    hir_diag_init(&d, NULL);
    hir_comm *c7 = hir_comm_create(p, 7, HIR_OP_END_COAL), *c8 = hir_comm_create(p, 8, HIR_OP_END_COAL);
    hir_stmt *loop = hir_stmt_new(p, HIR_OP_FOR);   /* no IterDomain: refused, body unchecked */
    hir_stmt *w = hir_stmt_new(p, HIR_OP_WAIT);
    w->u.wait.number = 7;
    w->u.wait.target = c8;                           /* stale: a pass renumbered */
    hir_block_append(p, &loop->body, w);
    hir_block_append(p, &p->body, loop);
    hir_stmt *w2 = hir_stmt_new(p, HIR_OP_WAIT);     /* checked */
    w2->u.wait.number = 8;
    w2->u.wait.target = c7;
    hir_block_append(p, &p->body, w2);
    hir_verify_opts o = {.undefined_is_error = true};
    assert_true(hir_program_verify(p, &o, &d) > 0);
    assert_string_equal(d.first->msg, "FOR without an IterDomain extent");
    assert_ptr_equal(w->u.wait.target, c7);
    assert_ptr_equal(w2->u.wait.target, c8);
    hir_diag_fini(&d);
    hir_program_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(undefined_is_warning_or_error),
        cmocka_unit_test(defined_through_trailer),
        cmocka_unit_test(pass_made_ir_without_locations),
        cmocka_unit_test(corpus_shapes_verify),
        cmocka_unit_test(quick_eval_agrees_with_memo),
        cmocka_unit_test(waits_resolved_in_unchecked_blocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
