/* fast_build.c — the grammar's actions for statements read in one go (parser.y calls
 * hirp_fast_stmt_make and hirp_fast_head).
 *
 * The scanner read the statement (fast_scan.c) and listed its values in the order the token
 * path makes them; here they are made with the token path's functions (fast_tensor,
 * hir_parse_simple_iterdomain, symbol_ref, named_ref, anon_binary, anon_value) and the
 * statement with the one its rule calls (alloc_stmt, p2p_stmt, ...), so that the program, its
 * locations and its diagnostics are the same whichever path read the statement. */

#include "parser/parse_internal.h"

enum { HIR_FS_STACK = HIR_FS_VALS };

/* The values r->v[from, to), made in order: made[i] for r->v[i] (a word: its interned spelling;
 * a flag: nothing). An expression takes the two values before it. */
static void fast_values(hir_parse_ctx *ctx, const struct hir_fast_stmt *r, void **made, int from, int to)
{
    const char *text = ctx->src->text;
    void *stack[HIR_FS_STACK];
    int top = 0;
    for (int i = from; i < to; i++) {
        const struct hir_fv *v = &r->v[i];
        hir_yyltype l = {v->begin, v->end};
        void *m = NULL;
        switch ((enum hir_fv_kind)v->kind) {
        case HIR_FV_TENSOR_REF:
            m = v->u.tensor;
            break;
        case HIR_FV_TENSOR_AGAIN:
            m = made[v->aux];
            break;
        case HIR_FV_TENSOR_FAST:
            m = hirp_fast_tensor(ctx, l, &r->t[v->aux]);
            break;
        case HIR_FV_ID:
            m = hir_parse_simple_iterdomain(ctx, v->begin, v->end, v->number, v->itype, v->ptype,
                                            v->u.extent, v->flags);
            break;
        case HIR_FV_INT:
            m = hir_scalar_int(P, v->number);
            break;
        case HIR_FV_BOOL:
            m = hir_scalar_bool(P, v->number != 0);
            break;
        case HIR_FV_FLAG:
            break;
        case HIR_FV_NAME: {
            /* named_ref sets the location of a name's scalar once: after that it only finds it */
            struct hir_word *c = &r->words[v->aux];
            if (c->interned == v->u.str && c->named)
                m = c->named;
            else {
                m = hirp_named_ref(ctx, l, v->u.str);
                if (c->interned == v->u.str)
                    c->named = m;
            }
            break;
        }
        case HIR_FV_SYMBOL: {
            char prefix[8];
            memcpy(prefix, text + v->begin, v->aux);
            prefix[v->aux] = 0;
            m = hirp_symbol_ref(ctx, l, prefix, v->number);
            break;
        }
        case HIR_FV_WORD:
            m = (void *)v->u.str;
            break;
        case HIR_FV_BINARY: {
            hir_assert(top >= 2);
            hir_scalar *b = stack[--top], *a = stack[--top];
            m = hirp_anon_value(ctx, hirp_anon_binary(ctx, (hir_binary_op)v->aux, a, b), l);
            if (v->flags) {      /* the scanner keeps its spelling: keep the value with it */
                struct hir_expr_memo *e = &r->exprs[v->flags - 1];
                if (e->len == v->end - v->begin && !memcmp(e->text, text + v->begin, e->len))
                    e->value = m;
            }
            break;
        }
        case HIR_FV_EXPR:
            m = v->u.scalar;
            break;
        case HIR_FV_ADDR:
            m = (void *)v->u.str;
            break;
        }
        made[i] = m;
        if (top < HIR_FS_STACK)
            stack[top++] = m;
    }
}

static hir_yyltype fv_loc(const struct hir_fast_stmt *r, int i)
{
    return (hir_yyltype){r->v[i].begin, r->v[i].end};
}

/* P2PCommunication: type, buffer, peer, backend, as comm_fields adds them */
static hir_stmt *fast_p2p(hir_parse_ctx *ctx, const struct hir_fast_stmt *r, hir_yyltype loc)
{
    void *made[HIR_FS_VALS] = {0};
    /* the values are made one field at a time, as the grammar reduces each: type, buffer, peer,
     * backend */
    struct hir_fields *f = hirp_fields_start(ctx, fv_loc(r, 0));
    f->type = r->v[0].u.str;
    f->type_loc = fv_loc(r, 0);
    int i = 1;
    fast_values(ctx, r, made, i, i + 1);
    hirp_fields_add(ctx, &f, F_BUFFER, fv_loc(r, i));
    f->buffer = made[i];
    f->buffer_loc = fv_loc(r, i);
    i++;
    fast_values(ctx, r, made, i, i + 1);
    hirp_fields_add(ctx, &f, F_PEER, fv_loc(r, i));
    f->peer = made[i];
    i++;
    hirp_fields_add(ctx, &f, F_BACKEND, fv_loc(r, i));
    f->backend = r->v[i].u.str;
    f->backend_loc = fv_loc(r, i);
    hir_yyltype nloc = {r->number_begin, r->number_end};
    return hirp_p2p_stmt(ctx, loc, r->number, nloc, f);
}

/* STMT_FAST (its line break included): loc spans the statement and its line break, as the
 * token path's @$ does (its last token being NEWLINE) */
hir_stmt *hirp_fast_stmt_make(hir_parse_ctx *ctx, const struct hir_fast_stmt *r, hir_yyltype loc)
{
    void *made[HIR_FS_VALS] = {0};
    int n = r->nv;
    switch ((enum hir_fs_kind)r->kind) {
    case HIR_FS_WAIT:
        return hirp_wait_stmt(ctx, loc, r->number, r->form_2026 ? HIR_FORM_2026 : HIR_FORM_2025);
    case HIR_FS_P2P:
        return fast_p2p(ctx, r, loc);
    default:
        break;
    }
    fast_values(ctx, r, made, 0, n);
    switch ((enum hir_fs_kind)r->kind) {
    case HIR_FS_SET_STREAM:
    case HIR_FS_SYNC_STREAM: {
        hir_op op = r->kind == HIR_FS_SET_STREAM ? HIR_OP_SET_STREAM : HIR_OP_SYNC_STREAM;
        if (!r->form_2026)
            return hirp_stream_index_stmt(ctx, op, loc, made[n - 1]);
        bool addr = r->v[n - 1].kind == HIR_FV_ADDR;   /* "(Stream 0x…)" or "(Stream index)" */
        return hirp_stream_stmt(ctx, op, loc, HIR_FORM_2026, addr ? made[n - 1] : NULL,
                                addr ? NULL : made[n - 1]);
    }
    case HIR_FS_ALLOCATE:
        /* out, buffer, mem_type, size..., zero_init, resets_to_zero */
        return hirp_alloc_stmt(ctx, loc, made[0], fv_loc(r, 0), made[1], fv_loc(r, 1), made[2],
                               fv_loc(r, 2), made[n - 3], r->v[n - 2].number != 0, r->v[n - 1].number != 0);
    case HIR_FS_ALIAS_SELECT: {
        /* out, in, axis, index */
        return hirp_alias_select_stmt(ctx, loc, made[0], fv_loc(r, 0), made[1], fv_loc(r, 1), made[2],
                                      made[3]);
    }
    case HIR_FS_LINEAR: {
        hir_value *v[3];
        hir_yyltype l[3];
        for (int i = 1; i < n; i++) {
            v[i - 1] = made[i];
            l[i - 1] = fv_loc(r, i);
        }
        return hirp_linear_stmt(ctx, loc, made[0], fv_loc(r, 0), n - 1, v, l);
    }
    case HIR_FS_MATMUL: {
        hir_value *v[2] = {made[1], made[2]};
        hir_yyltype l[2] = {fv_loc(r, 1), fv_loc(r, 2)};
        return hirp_matmul_stmt(ctx, loc, made[0], fv_loc(r, 0), v, l);
    }
    default:
        hir_assert(false);
        return NULL;
    }
}

/* FOR_FAST / IF_FAST: the line's values (the loop index and IterDomain; the predicate's kind
 * and value), made before the block's statements */
struct hir_pairval hirp_fast_head(hir_parse_ctx *ctx, const struct hir_fast_stmt *r)
{
    void *made[HIR_FS_VALS] = {0};
    fast_values(ctx, r, made, 0, r->nv);
    return (struct hir_pairval){made[0], made[r->nv - 1]};
}
