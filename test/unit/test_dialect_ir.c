/* test_dialect_ir.c — building IR through the API (as passes do), evaluating and comparing
 * scalar expressions, and printing constructed IR in nvFuser's form. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dialect/hir.h"

static int setup(void **state)
{
    *state = hir_program_new();
    return 0;
}

static int teardown(void **state)
{
    hir_program_free(*state);
    return 0;
}

static char *print_stmt(const hir_stmt *s, int level)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    hir_stmt_print(s, level, f);
    fclose(f);
    return buf;
}

static void tensors_and_iterdomains(void **state)
{
    hir_program *p = *state;
    hir_iterdomain *a = hir_iterdomain_create(p, 7, HIR_IT_ITER, HIR_PT_STREAM, hir_scalar_int(p, 8));
    hir_iterdomain *b = hir_iterdomain_create(p, 3, HIR_IT_ITER, HIR_PT_SERIAL, hir_scalar_int(p, 128));
    assert_ptr_equal(hir_iterdomain_get(p, 7), a);
    assert_null(hir_iterdomain_get(p, 4));
    assert_null(hir_iterdomain_get(p, -1));
    /* clones are numbered after every IterDomain seen so far */
    hir_iterdomain *c = hir_iterdomain_clone(p, a);
    assert_int_equal(c->number, 8);
    assert_int_equal(c->ptype, HIR_PT_STREAM);
    assert_ptr_equal(c->extent, a->extent);
    hir_iterdomain_create(p, 20, HIR_IT_REDUCTION, HIR_PT_SERIAL, hir_scalar_int(p, 4));
    assert_int_equal(hir_iterdomain_clone(p, b)->number, 21);

    hir_iterdomain *loop[2] = {a, b};   /* loop order: stream axis first */
    hir_tensor *t = hir_tensor_create(p, 4, HIR_MEM_GLOBAL, HIR_DT_BFLOAT, 2, loop, NULL);
    assert_ptr_equal(hir_tensor_get(p, 4), t);
    /* a stream axis is decided with the program (shape.c): 8 is not T4's, so istreamIdx7 is
     * not a split outer and goes back among the axes by its number, after iS3 */
    assert_int_equal(t->shape.state, HIR_SHAPE_OPEN);
    hir_diag d;
    hir_diag_init(&d, stderr);
    assert_int_equal(hir_program_shapes(p, NULL, 0, &d), 0);
    hir_diag_fini(&d);
    assert_int_equal(t->shape.state, HIR_SHAPE_DECIDED);
    assert_ptr_equal(t->shape.ids[0], b);
    assert_ptr_equal(t->shape.ids[1], a);
    assert_int_equal(hir_tensor_logical_pos(t, a), 1);
    assert_int_equal(hir_tensor_logical_pos(t, c), -1);
    assert_int_equal(hir_tensor_stream_axis(t), 0);
    hir_tensor *u = hir_tensor_new(p, HIR_MEM_LOCAL, HIR_DT_FLOAT, 0, NULL, NULL);
    assert_int_equal(u->number, 5);
    assert_false(hir_tensor_same_type(t, u));
    assert_true(hir_tensor_same_type(t, t));
    char *s = hir_tensor_str(t);
    assert_string_equal(s, "T4_g___bfloat[istreamIdx7{8}, iS3{128}]");
    free(s);
    s = hir_tensor_str(u);
    assert_string_equal(s, "T5_l_float[]");
    free(s);
}

static void meshes_are_interned(void **state)
{
    hir_program *p = *state;
    int64_t d1[] = {8}, dev[] = {0, 1, 2, 3, 4, 5, 6, 7};
    int64_t d2[] = {2, 4};
    hir_mesh *m1 = hir_mesh_intern(p, 1, d1, dev);
    hir_mesh *m2 = hir_mesh_intern(p, 1, d1, dev);
    hir_mesh *m3 = hir_mesh_intern(p, 2, d2, dev);
    assert_ptr_equal(m1, m2);
    assert_ptr_not_equal(m1, m3);
    assert_int_equal(m3->ndevices, 8);
    int64_t other[] = {0, 1, 2, 3, 4, 5, 7, 6};
    assert_ptr_not_equal(hir_mesh_intern(p, 1, d1, other), m1);
    hir_iterdomain *id = hir_iterdomain_create(p, 0, HIR_IT_ITER, HIR_PT_DIDY, hir_scalar_int(p, 2));
    hir_tensor *t = hir_tensor_create(p, 0, HIR_MEM_GLOBAL, HIR_DT_FLOAT, 1, &id, m3);
    char *s = hir_tensor_str(t);
    assert_string_equal(s, "T0_g_float[ideviceIdx.y0{2}] (DeviceMesh{{0 1 2 3}{4 5 6 7}})");
    free(s);
}

static void scalars(void **state)
{
    hir_program *p = *state;
    assert_ptr_equal(hir_scalar_named(p, "rank"), hir_scalar_named(p, "rank"));
    assert_int_equal(hir_scalar_named(p, "rank")->dtype, HIR_DT_INT64);
    assert_int_equal(hir_scalar_named(p, "streamIdx")->dtype, HIR_DT_INDEX);
    hir_scalar *i5 = hir_scalar_symbol(p, "i", 5);
    assert_ptr_equal(hir_scalar_symbol(p, "i", 5), i5);
    assert_int_equal(hir_scalar_symbol(p, "b", 9)->dtype, HIR_DT_BOOL);
    assert_int_equal(hir_scalar_symbol(p, "d", 10)->dtype, HIR_DT_DOUBLE);
    assert_ptr_equal(hir_scalar_int(p, 8), hir_scalar_int(p, 8));
    assert_ptr_not_equal(hir_scalar_int(p, 8), hir_scalar_int(p, 9));
    assert_ptr_equal(hir_scalar_bool(p, true), hir_scalar_bool(p, true));
    assert_true(hir_scalar_is_literal(hir_scalar_float(p, HIR_DT_FLOAT, 0, "float(0)")));
    /* a new index symbol is numbered after the others and prints inline */
    hir_scalar *n = hir_scalar_new_index(p, hir_sexpr_binary(p, HIR_BIN_MOD, hir_scalar_named(p, "streamIdx"),
                                                               hir_scalar_named(p, "numberOfStreams")));
    assert_int_equal(n->number, 11);
    char *s = hir_scalar_str_inline(n);
    assert_string_equal(s, "( streamIdx % numberOfStreams )");
    free(s);
    assert_true(hir_scalar_depends_on(n, hir_scalar_named(p, "streamIdx")));
    assert_false(hir_scalar_depends_on(n, hir_scalar_named(p, "rank")));
}

static void comms(void **state)
{
    hir_program *p = *state;
    hir_comm *c = hir_comm_create(p, 37, HIR_OP_P2P);
    assert_ptr_equal(hir_comm_get(p, 37), c);
    hir_comm *e = hir_comm_new(p, HIR_OP_END_COAL);
    assert_int_equal(e->number, 38);
    assert_null(hir_comm_get(p, 39));
    assert_string_equal(hir_comm_type_name(HIR_COMM_REDUCESCATTER), "ReduceScatter");
    assert_true(hir_comm_type_has_root(HIR_COMM_BROADCAST));
    assert_false(hir_comm_type_has_root(HIR_COMM_ALLGATHER));
    assert_string_equal(hir_backend_kind_name(HIR_BK_CUDA), "CUDA");
    hir_op op;
    assert_true(hir_op_lookup("HirAliasSelect", 14, &op));
    assert_int_equal(op, HIR_OP_ALIAS_SELECT);
    assert_false(hir_op_lookup("Frobnicate", 10, &op));
    assert_int_equal(hir_ops[HIR_OP_LINEAR].nin_min, 2);
    assert_int_equal(hir_ops[HIR_OP_LINEAR].nin_max, 3);
}

static int lookup_streamidx(void *ctx, const hir_scalar *s, int64_t *v)
{
    if (s->kind == HIR_SC_NAMED && !strcmp(s->name, "streamIdx")) {
        *v = *(int64_t *)ctx;
        return 0;
    }
    if (s->kind == HIR_SC_NAMED && !strcmp(s->name, "rank")) {
        *v = 3;
        return 0;
    }
    return -1;
}

static hir_scalar *bin(hir_program *p, hir_binary_op op, hir_scalar *a, hir_scalar *b)
{
    return hir_scalar_anon(p, hir_sexpr_binary(p, op, a, b));
}

static void evaluation(void **state)
{
    hir_program *p = *state;
    int64_t v;
    char msg[128];
    /* C semantics: truncating division and remainder */
    assert_true(hir_scalar_const(bin(p, HIR_BIN_MOD, hir_scalar_int(p, -7), hir_scalar_int(p, 3)), &v));
    assert_int_equal(v, -1);
    assert_true(hir_scalar_const(bin(p, HIR_BIN_DIV, hir_scalar_int(p, -7), hir_scalar_int(p, 2)), &v));
    assert_int_equal(v, -3);
    assert_true(hir_scalar_const(bin(p, HIR_BIN_MOD, hir_scalar_int(p, 7), hir_scalar_int(p, -3)), &v));
    assert_int_equal(v, 1);
    /* ceilDiv */
    hir_sexpr_kind k;
    int op;
    assert_true(hir_fn_lookup("ceilDiv", 2, &k, &op));
    assert_true(hir_scalar_const(bin(p, op, hir_scalar_int(p, 7), hir_scalar_int(p, 3)), &v));
    assert_int_equal(v, 3);
    assert_true(hir_scalar_const(bin(p, op, hir_scalar_int(p, 6), hir_scalar_int(p, 3)), &v));
    assert_int_equal(v, 2);
    assert_true(hir_scalar_const(bin(p, op, hir_scalar_int(p, -7), hir_scalar_int(p, 3)), &v));
    assert_int_equal(v, -2);
    /* overflow is an error, never undefined behaviour nor a wrapped value (dialect/intops.h) */
    assert_int_equal(hir_scalar_eval(bin(p, HIR_BIN_ADD, hir_scalar_int(p, INT64_MAX), hir_scalar_int(p, 1)),
                                     NULL, &v, msg, sizeof msg), -1);
    assert_string_equal(msg, "integer overflow in index expression");
    assert_false(hir_scalar_const(bin(p, HIR_BIN_MUL, hir_scalar_int(p, INT64_MAX), hir_scalar_int(p, 2)), &v));
    assert_false(hir_scalar_const(bin(p, HIR_BIN_SUB, hir_scalar_int(p, INT64_MIN), hir_scalar_int(p, 1)), &v));
    assert_int_equal(hir_scalar_eval(bin(p, HIR_BIN_DIV, hir_scalar_int(p, INT64_MIN), hir_scalar_int(p, -1)),
                                     NULL, &v, msg, sizeof msg), -1);
    assert_string_equal(msg, "integer overflow in index expression");
    assert_int_equal(hir_scalar_eval(bin(p, HIR_BIN_MOD, hir_scalar_int(p, 1), hir_scalar_int(p, 0)),
                                     NULL, &v, msg, sizeof msg), -1);
    assert_string_equal(msg, "division by zero in index expression");
    assert_true(hir_scalar_const(bin(p, HIR_BIN_SHL, hir_scalar_int(p, 1), hir_scalar_int(p, 70)), &v));
    assert_int_equal(v, 0);
    assert_false(hir_scalar_const(hir_scalar_anon(p, hir_sexpr_unary(p, HIR_UN_NEG, hir_scalar_int(p, INT64_MIN))), &v));
    assert_int_equal(hir_scalar_eval(hir_scalar_anon(p, hir_sexpr_unary(p, HIR_UN_ABS, hir_scalar_int(p, INT64_MIN))),
                                     NULL, &v, msg, sizeof msg), -1);
    assert_string_equal(msg, "integer overflow in index expression");
    assert_true(hir_scalar_const(hir_scalar_anon(p, hir_sexpr_unary(p, HIR_UN_ABS, hir_scalar_int(p, INT64_MIN + 1))), &v));
    assert_int_equal(v, INT64_MAX);
    assert_false(hir_scalar_const(bin(p, HIR_BIN_POW, hir_scalar_int(p, 2), hir_scalar_int(p, 63)), &v));
    assert_true(hir_scalar_const(bin(p, HIR_BIN_POW, hir_scalar_int(p, 2), hir_scalar_int(p, 62)), &v));
    assert_int_equal(v, INT64_C(1) << 62);
    assert_true(hir_scalar_const(bin(p, HIR_BIN_POW, hir_scalar_int(p, -1), hir_scalar_int(p, 65)), &v));
    assert_int_equal(v, -1);
    assert_false(hir_scalar_const(bin(p, HIR_BIN_GCD, hir_scalar_int(p, INT64_MIN), hir_scalar_int(p, 0)), &v));
    /* the stream pass's peer: ( 8 + ( rank - streamIdx ) ) % 8 */
    hir_scalar *peer = bin(p, HIR_BIN_MOD,
                           bin(p, HIR_BIN_ADD, hir_scalar_int(p, 8),
                               bin(p, HIR_BIN_SUB, hir_scalar_named(p, "rank"), hir_scalar_named(p, "streamIdx"))),
                           hir_scalar_int(p, 8));
    int64_t idx = 5;
    hir_scalar_env env = {lookup_streamidx, &idx};
    assert_int_equal(hir_scalar_eval(peer, &env, &v, msg, sizeof msg), 0);
    assert_int_equal(v, 6);
    assert_false(hir_scalar_const(peer, &v));
    /* unbound values report their name */
    assert_int_equal(hir_scalar_eval(peer, NULL, &v, msg, sizeof msg), -1);
    assert_string_equal(msg, "unbound value 'rank'");
    hir_scalar *i84 = hir_scalar_symbol(p, "i", 84);
    assert_int_equal(hir_scalar_eval(bin(p, HIR_BIN_ADD, hir_scalar_int(p, 1), i84), &env, &v, msg, sizeof msg), -1);
    assert_string_equal(msg, "unbound value 'i84'");
    /* a symbol with a definition evaluates through it */
    i84->def = hir_sexpr_binary(p, HIR_BIN_ADD, hir_scalar_named(p, "rank"), hir_scalar_named(p, "streamIdx"));
    assert_int_equal(hir_scalar_eval(i84, &env, &v, msg, sizeof msg), 0);
    assert_int_equal(v, 8);
}

static void structural_equality(void **state)
{
    hir_program *p = *state;
    hir_scalar *r = hir_scalar_named(p, "rank"), *s = hir_scalar_named(p, "streamIdx");
    hir_scalar *a = bin(p, HIR_BIN_ADD, r, s), *b = bin(p, HIR_BIN_ADD, r, s);
    hir_scalar *c = bin(p, HIR_BIN_ADD, s, r), *d = bin(p, HIR_BIN_SUB, r, s);
    assert_true(hir_scalar_equal(a, b));
    assert_false(hir_scalar_equal(a, c));   /* structural, not algebraic */
    assert_false(hir_scalar_equal(a, d));
    assert_true(hir_scalar_equal(hir_scalar_int(p, 3), hir_scalar_int(p, 3)));
    assert_false(hir_scalar_equal(hir_scalar_int(p, 3), hir_scalar_int(p, 4)));
    assert_false(hir_scalar_equal(hir_scalar_symbol(p, "i", 1), hir_scalar_symbol(p, "i", 2)));
    assert_false(hir_scalar_equal(a, NULL));
    assert_true(hir_scalar_equal(NULL, NULL));
    /* a defined symbol equals an inline expression with the same definition */
    hir_scalar *i9 = hir_scalar_symbol(p, "i", 9);
    i9->def = a->def;
    assert_true(hir_scalar_equal(i9, b));
}

/* Integers print as printf's %lld does, at every digit-count boundary and at the extremes
 * (the printer writes digits in place, by pairs, with shortcuts below 10000). */
static void printing_integers(void **state)
{
    hir_program *p = *state;
    int64_t vals[] = {0, 1, 9, 10, 42, 99, 100, 101, 999, 1000, 1024, 9999, 10000, 10001, 99999,
                      100000, 999999, 1000000, 4294967295LL, 4294967296LL, 999999999999999999LL,
                      1000000000000000000LL, INT64_MAX, -1, -9, -10, -99, -100, -9999, -10000,
                      -123456789, INT64_MIN + 1, INT64_MIN};
    for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) {
        char want[32];
        snprintf(want, sizeof want, "%lld", (long long)vals[i]);
        char *got = hir_scalar_str_inline(hir_scalar_int(p, vals[i]));
        assert_string_equal(got, want);
        free(got);
    }
    for (int64_t v = -1100; v <= 11000; v++) {
        char want[32];
        snprintf(want, sizeof want, "%lld", (long long)v);
        char *got = hir_scalar_str_inline(hir_scalar_int(p, v));
        assert_string_equal(got, want);
        free(got);
    }
}

static void printing(void **state)
{
    hir_program *p = *state;
    hir_iterdomain *ids[3] = {
        hir_iterdomain_create(p, 15, HIR_IT_ITER, HIR_PT_SERIAL, hir_scalar_int(p, 128)),
        hir_iterdomain_create(p, 16, HIR_IT_ITER, HIR_PT_SERIAL, hir_scalar_int(p, 1024)),
        hir_iterdomain_create(p, 17, HIR_IT_REDUCTION, HIR_PT_SERIAL, hir_scalar_int(p, 1024)),
    };
    hir_tensor *a = hir_tensor_create(p, 6, HIR_MEM_LOCAL, HIR_DT_BFLOAT, 2, ids, NULL);
    hir_tensor *o = hir_tensor_create(p, 7, HIR_MEM_LOCAL, HIR_DT_BFLOAT, 3, ids, NULL);
    hir_tensor *w = hir_tensor_create(p, 1, HIR_MEM_GLOBAL, HIR_DT_BFLOAT, 2, ids + 1, NULL);
    hir_stmt *lin = hir_stmt_new(p, HIR_OP_LINEAR);
    hir_value *in[2] = {(hir_value *)a, (hir_value *)w};
    hir_stmt_set_inputs(p, lin, 2, in);
    lin->out = o;
    char *s = print_stmt(lin, 2);
    assert_string_equal(s,
        "    T7_l___bfloat[iS15{128}, iS16{1024}, rS17{1024}]\n"
        "       = linear(T6_l___bfloat[iS15{128}, iS16{1024}],\n"
        "                T1_g___bfloat[iS16{1024}, rS17{1024}]      )\n");
    free(s);

    hir_stmt *loop = hir_stmt_new(p, HIR_OP_FOR);
    hir_iterdomain *sid = hir_iterdomain_create(p, 10, HIR_IT_ITER, HIR_PT_STREAM, hir_scalar_int(p, 8));
    loop->u.kfor.index = hir_scalar_named(p, "streamIdx");
    loop->u.kfor.id = sid;
    hir_stmt *set = hir_stmt_new(p, HIR_OP_SET_STREAM);
    set->u.stream.number = -1;
    set->u.stream.index = bin(p, HIR_BIN_MOD, hir_scalar_named(p, "streamIdx"), hir_scalar_named(p, "numberOfStreams"));
    hir_block_append(p, &loop->body, set);
    hir_stmt *wait = hir_stmt_new(p, HIR_OP_WAIT);
    wait->u.wait.number = 35;
    hir_block_append(p, &loop->body, wait);
    hir_block_append(p, &p->body, loop);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    hir_program_print(p, f);
    fclose(f);
    assert_string_equal(buf,
        "\n%HostIrContainer { () -> () :\n"
        "  FOR streamIdx in istreamIdx10{8}:\n"
        "    SetCurrentStream to Stream ( streamIdx % numberOfStreams )\n"
        "    Wait Communication 35\n"
        "} // %HostIrContainer\n\n");
    free(buf);
}

/* The whole-program printer (a large buffer, a cache of tensor and mesh texts) prints what the
 * statement printer (a small buffer, no cache) prints, across many flushes of its buffer, for
 * tensors and meshes whose text fits the cache and for ones too long for it. */
static void program_print_equals_statement_prints(void **state)
{
    hir_program *p = *state;
    int64_t d1[1] = {8}, d2[2] = {2, 64}, dev[128];
    for (int i = 0; i < 128; i++)
        dev[i] = i;
    hir_mesh *small = hir_mesh_intern(p, 1, d1, dev), *large = hir_mesh_intern(p, 2, d2, dev);
    hir_iterdomain *ids[24];
    for (int i = 0; i < 24; i++)
        ids[i] = hir_iterdomain_create(p, 100 + i, HIR_IT_ITER, HIR_PT_SERIAL, hir_scalar_int(p, 1000 + i));
    hir_tensor *t[600];               /* more than the cache has slots: they collide */
    for (int i = 0; i < 600; i++)   /* short, long (24 axes), and with the long mesh */
        t[i] = hir_tensor_create(p, 10 + i, HIR_MEM_GLOBAL, HIR_DT_BFLOAT, i % 3 == 1 ? 24 : 2, ids,
                                 i % 3 == 2 ? large : small);
    for (int i = 0; i < 6000; i++) {
        hir_stmt *s = hir_stmt_new(p, i % 2 ? HIR_OP_DEALLOCATE : HIR_OP_SYM_VIEW);
        hir_value *in[1] = {(hir_value *)t[(i * 7) % 600]};
        hir_stmt_set_inputs(p, s, 1, in);
        if (!(i % 2))
            s->out = t[(i * 13 + 5) % 600];
        hir_block_append(p, &p->body, s);
    }
    char *whole = NULL, *parts = NULL;
    size_t wlen = 0, plen = 0;
    FILE *f = open_memstream(&whole, &wlen);
    hir_program_print(p, f);
    fclose(f);
    f = open_memstream(&parts, &plen);
    fputs("\n%HostIrContainer { () -> () :\n", f);
    for (int i = 0; i < p->body.stmts.n; i++)
        hir_stmt_print(p->body.stmts.items[i], 1, f);
    fputs("} // %HostIrContainer\n\n", f);
    fclose(f);
    assert_true(wlen > (1 << 20));   /* several flushes of the printer's buffer */
    assert_int_equal(wlen, plen);
    assert_memory_equal(whole, parts, wlen);
    free(whole);
    free(parts);
}

/* hir_iterdomain_next visits every IterDomain once: the dense array's and the far numbers the
 * map holds (a walk of the map alone missed the ordinary ones: passes/ir_util.c before
 * 8979817). */
/* The logical view (shape.c): a stream split proven by its ceilDiv inner extent is one axis
 * of two parts whose global extent is X; an axis numbered above a constant pair makes the pair
 * two axes; a pair nothing decides is refused, and a reading given for it is kept. */
static void logical_views(void **state)
{
    hir_program *p = *state;
    hir_scalar *i0 = hir_scalar_symbol(p, "i", 0), *i1 = hir_scalar_symbol(p, "i", 1);
    hir_scalar *cd = hir_scalar_anon(p, hir_sexpr_binary(p, HIR_BIN_CEILDIV, i0, hir_scalar_int(p, 3)));
    hir_iterdomain *a[3] = {
        hir_iterdomain_create(p, 2, HIR_IT_ITER, HIR_PT_STREAM, hir_scalar_int(p, 3)),
        hir_iterdomain_create(p, 3, HIR_IT_ITER, HIR_PT_SERIAL, cd),
        hir_iterdomain_create(p, 1, HIR_IT_ITER, HIR_PT_SERIAL, i1)};
    hir_tensor *t = hir_tensor_create(p, 0, HIR_MEM_GLOBAL, HIR_DT_FLOAT, 3, a, NULL);
    hir_iterdomain *b[3] = {
        hir_iterdomain_create(p, 10, HIR_IT_ITER, HIR_PT_DIDX, hir_scalar_int(p, 2)),
        hir_iterdomain_create(p, 11, HIR_IT_ITER, HIR_PT_SERIAL, hir_scalar_int(p, 4)),
        hir_iterdomain_create(p, 12, HIR_IT_ITER, HIR_PT_SERIAL, hir_scalar_int(p, 5))};
    hir_tensor *u = hir_tensor_create(p, 1, HIR_MEM_GLOBAL, HIR_DT_FLOAT, 3, b, NULL);
    hir_iterdomain *c[2] = {
        hir_iterdomain_create(p, 20, HIR_IT_ITER, HIR_PT_DIDX, hir_scalar_int(p, 2)),
        hir_iterdomain_create(p, 21, HIR_IT_ITER, HIR_PT_SERIAL, hir_scalar_int(p, 4))};
    hir_tensor *w = hir_tensor_create(p, 2, HIR_MEM_GLOBAL, HIR_DT_FLOAT, 2, c, NULL);
    hir_diag d;
    hir_diag_init(&d, NULL);
    d.keep = true;
    assert_int_equal(hir_shape_read_as(p, "T2=20,21*", &d), 1);   /* no number after '*' */
    assert_int_equal(hir_program_shapes(p, NULL, 0, &d), 1);       /* T2 only */
    assert_int_equal(t->shape.state, HIR_SHAPE_DECIDED);
    assert_int_equal(t->shape.naxes, 2);
    hir_shape_axis ax;
    hir_shape_axis_get(t, 0, &ax);
    assert_int_equal(ax.nparts, 2);
    assert_ptr_equal(ax.outer, a[0]);
    assert_ptr_equal(ax.inner, a[1]);
    assert_ptr_equal(ax.extent, i0);          /* X of ( ceilDiv(i0, 3) ) */
    assert_int_equal(ax.global, -1);
    hir_shape_axis_get(t, 1, &ax);
    assert_ptr_equal(ax.inner, a[2]);
    assert_int_equal(u->shape.naxes, 3);      /* iS12 is a logical axis numbered above 10 */
    hir_shape_axis_get(u, 0, &ax);
    assert_true(ax.device);
    assert_int_equal(ax.global, 2);
    assert_int_equal(ax.local, 1);
    assert_int_equal(w->shape.state, HIR_SHAPE_REFUSED);
    assert_int_equal(hir_shape_read_as(p, "T2=20*21", &d), 0);
    assert_int_equal(w->shape.naxes, 1);
    hir_shape_axis_get(w, 0, &ax);
    assert_int_equal(ax.global, 8);
    assert_int_equal(ax.local, 4);
    int perm[3];
    assert_int_equal(hir_shape_permutation(t, w, perm), -1);   /* different ranks */
    hir_diag_fini(&d);
}

static void every_iterdomain_is_visited(void **state)
{
    hir_program *p = *state;
    int64_t numbers[] = {0, 5, 4000, INT64_C(1000000000000)};
    for (int i = 0; i < 4; i++)
        hir_iterdomain_create(p, numbers[i], HIR_IT_ITER, HIR_PT_SERIAL, hir_scalar_int(p, 8));
    int seen[4] = {0}, n = 0;
    size_t at;
    for (hir_iterdomain *id = NULL; (id = hir_iterdomain_next(p, id, &at)); n++)
        for (int i = 0; i < 4; i++)
            if (id->number == numbers[i])
                seen[i]++;
    assert_int_equal(n, 4);
    for (int i = 0; i < 4; i++)
        assert_int_equal(seen[i], 1);
}

/* Communications by number: near numbers in the dense array, far ones in the map; both are
 * found again and hir_comm_next visits each once (the backend pass walks them all). */
static void every_comm_is_visited(void **state)
{
    hir_program *p = *state;
    int64_t numbers[] = {0, 7, 3000, INT64_C(1000000000000)};
    hir_comm *made[4];
    for (int i = 0; i < 4; i++)
        made[i] = hir_comm_create(p, numbers[i], HIR_OP_COMMUNICATION);
    for (int i = 0; i < 4; i++)
        assert_ptr_equal(hir_comm_get(p, numbers[i]), made[i]);
    assert_null(hir_comm_get(p, 8));
    assert_null(hir_comm_get(p, -1));
    int seen[4] = {0}, n = 0;
    size_t at;
    for (hir_comm *c = NULL; (c = hir_comm_next(p, c, &at)); n++)
        for (int i = 0; i < 4; i++)
            if (c == made[i])
                seen[i]++;
    assert_int_equal(n, 4);
    for (int i = 0; i < 4; i++)
        assert_int_equal(seen[i], 1);
}

/* A number freed for reuse (pu_as_printed sets next_scalar below a dropped symbol's number)
 * gives new index symbols, each numbered after the last: taking the dropped symbol over left
 * next_scalar behind, so the next new symbol was the same object and its definition named
 * itself (`--backend=nccl --backend=cuda` on a CUDA program read from text crashed printing it). */
static void new_index_after_freed_numbers(void **state)
{
    hir_program *p = *state;
    hir_scalar *old1 = hir_scalar_symbol(p, "i", 1), *old2 = hir_scalar_symbol(p, "b", 2);
    p->next_scalar = 1;
    hir_scalar *rank = hir_scalar_named(p, "rank");
    hir_scalar *a = hir_scalar_new_index(p, hir_sexpr_binary(p, HIR_BIN_ADD, rank, hir_scalar_int(p, 1)));
    hir_scalar *b = hir_scalar_new_index(p, hir_sexpr_binary(p, HIR_BIN_MOD, a, hir_scalar_int(p, 4)));
    assert_ptr_not_equal(a, b);
    assert_ptr_not_equal(a, old1);
    assert_ptr_not_equal(b, old2);
    assert_int_equal(a->number, 1);
    assert_int_equal(b->number, 2);
    assert_int_equal(b->dtype, HIR_DT_INDEX);      /* not the dropped bool symbol b2's */
    assert_int_equal(p->next_scalar, 3);
    assert_ptr_equal(b->def->args[0], a);
    assert_ptr_equal(hir_scalar_symbol(p, "i", 2), b);   /* the number now names the new one */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(tensors_and_iterdomains, setup, teardown),
        cmocka_unit_test_setup_teardown(every_iterdomain_is_visited, setup, teardown),
        cmocka_unit_test_setup_teardown(logical_views, setup, teardown),
        cmocka_unit_test_setup_teardown(every_comm_is_visited, setup, teardown),
        cmocka_unit_test_setup_teardown(meshes_are_interned, setup, teardown),
        cmocka_unit_test_setup_teardown(scalars, setup, teardown),
        cmocka_unit_test_setup_teardown(new_index_after_freed_numbers, setup, teardown),
        cmocka_unit_test_setup_teardown(comms, setup, teardown),
        cmocka_unit_test_setup_teardown(evaluation, setup, teardown),
        cmocka_unit_test_setup_teardown(structural_equality, setup, teardown),
        cmocka_unit_test_setup_teardown(printing_integers, setup, teardown),
        cmocka_unit_test_setup_teardown(printing, setup, teardown),
        cmocka_unit_test_setup_teardown(program_print_equals_statement_prints, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
