/* parser_actions.c — the C side of the grammar's actions (parser.y calls the hirp_ functions,
 * declared in parse_internal.h): value lookup with consistency checks, keyword table,
 * statement builders, error reporting and the public entry points. bison's side of the error
 * reporting (yyerror, yyreport_syntax_error) is in parser.y, after the grammar. */

#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include "parser/parse_internal.h"

hir_loc hir_parse_loc(hir_parse_ctx *ctx, uint32_t begin, uint32_t end)
{
    hir_loc l = {ctx->src, begin, end > begin ? end : begin + 1};
    return l;
}

static bool same_line(hir_parse_ctx *ctx, uint32_t a, uint32_t b)
{
    if (a > b) {
        uint32_t t = a;
        a = b;
        b = t;
    }
    return !memchr(ctx->src->text + a, '\n', b - a);
}

/* A value spelled twice on one line (ALLOCATE's output and buffer=) gives one message. */
void hirp_semantic_error(hir_parse_ctx *ctx, hir_yyltype loc, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ctx->failed = true;
    const hir_diag_entry *last = ctx->diag->last;
    if (last && last->loc.src == ctx->src && last->sev == HIR_ERROR && !strcmp(last->msg, msg) &&
        same_line(ctx, last->loc.begin, loc.begin))
        return;
    hir_diag_emit(ctx->diag, HIR_ERROR, LOC(loc), "%s", msg);
}

/* ---- unnamed expressions: one value per distinct expression
 *
 * An unnamed expression is a pure function of its operator and operands (themselves shared:
 * named scalars and symbols by name, literals interned, unnamed operands by this table);
 * nothing changes one after it is made, and nothing reads the location of an unnamed value
 * for a diagnostic (statements carry their own). So "( streamIdx % numberOfStreams )" read in
 * every loop of a program is one hir_scalar and one hir_sexpr, not one per spelling. The
 * verifier's evaluation memo forgets the failures of unnamed values (dialect/expr.c), so a
 * shared expression that overflows is still reported at every statement that uses it. */
static uint64_t anon_key(int kind, int op, int nargs, hir_scalar *const *args)
{
    uint64_t h = ((uint64_t)(unsigned)kind << 40) ^ ((uint64_t)(unsigned)op << 8) ^ (uint64_t)nargs;
    for (int i = 0; i < nargs; i++)
        h = (h ^ (uint64_t)(uintptr_t)args[i]) * UINT64_C(0x9e3779b97f4a7c15);
    return (h ^ (h >> 29)) & ~(UINT64_C(1) << 63);   /* never the map's empty key */
}

static bool anon_same(const hir_sexpr *e, int kind, int op, bool infix, const char *fn, int nargs,
                      hir_scalar *const *args)
{
    if ((int)e->kind != kind || e->op != op || e->infix != infix || e->fn != fn || e->nargs != nargs)
        return false;
    for (int i = 0; i < nargs; i++)
        if (e->args[i] != args[i])
            return false;
    return true;
}

/* The definition of an unnamed value already read as "a op b" / "op a", else a new one (made
 * as hir_sexpr_binary / hir_sexpr_unary make it, which is what anon_same compares with). */
hir_sexpr *hirp_anon_binary(hir_parse_ctx *ctx, hir_binary_op op, hir_scalar *a, hir_scalar *b)
{
    hir_scalar *args[2] = {a, b};
    const hir_scalar *s = hir_map_get(&ctx->anon, anon_key(HIR_SX_BINARY, (int)op, 2, args));
    if (s) {
        bool infix = hir_binary_infix(op) != NULL;
        const char *fn = infix ? NULL : hir_program_intern(P, hir_binary_op_name(op));
        if (anon_same(s->def, HIR_SX_BINARY, (int)op, infix, fn, 2, args))
            return s->def;
    }
    return hir_sexpr_binary(P, op, a, b);
}

hir_sexpr *hirp_anon_unary(hir_parse_ctx *ctx, hir_unary_op op, hir_scalar *a)
{
    hir_scalar *args[1] = {a};
    const hir_scalar *s = hir_map_get(&ctx->anon, anon_key(HIR_SX_UNARY, (int)op, 1, args));
    if (s) {
        bool infix = hir_unary_prefix(op) != NULL;
        const char *fn = infix ? NULL : hir_program_intern(P, hir_unary_op_name(op));
        if (anon_same(s->def, HIR_SX_UNARY, (int)op, infix, fn, 1, args))
            return s->def;
    }
    return hir_sexpr_unary(P, op, a);
}

/* "( e )": the unnamed value defined by e, the one read before when it was spelled before. */
hir_scalar *hirp_anon_value(hir_parse_ctx *ctx, hir_sexpr *e, hir_yyltype loc)
{
    uint64_t k = anon_key((int)e->kind, e->op, e->nargs, e->args);
    hir_scalar *s = hir_map_get(&ctx->anon, k);
    if (s && (s->def == e || anon_same(s->def, (int)e->kind, e->op, e->infix, e->fn, e->nargs, e->args)))
        return s;
    s = hir_scalar_anon(P, e);
    s->loc = LOC(loc);
    if (!hir_map_get(&ctx->anon, k))   /* another expression with the same hash keeps its slot */
        hir_map_put(&ctx->anon, k, s);
    return s;
}

/* Reports a respelled tensor (kind 1) or IterDomain (kind 2) once. */
static bool first_mismatch(hir_parse_ctx *ctx, int kind, int64_t number)
{
    uint64_t k = ((uint64_t)kind << 61) | ((uint64_t)number & ((UINT64_C(1) << 61) - 1));
    if (hir_map_get(&ctx->mismatches, k))
        return false;
    hir_map_put(&ctx->mismatches, k, ctx);
    return true;
}

/* The note for a respelled IterDomain one of whose spellings is a HirAliasSelect output's. */
static void older_lowering_note(hir_parse_ctx *ctx, hir_diag_entry *e, const hir_tensor *out)
{
    hir_diag_note(ctx->diag, e, out->loc,
                  "T%lld is a HirAliasSelect output: nvFuser's older host lowering (HostIrLower::lower)"
                  " numbers the IterDomains it makes for one from its own counter, which can repeat a"
                  " number the fusion printed; hir keeps one IterDomain per number and cannot read such"
                  " a print (give the output's IterDomains numbers of their own to run it)",
                  (long long)out->number);
}

static bool ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* A line that starts with a word the grammar does not know (and is not "name = ...") gets
 * "unknown statement 'Foo'" instead of bison's token-level complaint. */
bool hirp_unknown_statement(hir_parse_ctx *ctx, uint32_t at)
{
    const char *t = ctx->src->text;
    size_t n = ctx->src->len, i = at, j = at;
    if (i >= n || !((t[i] >= 'a' && t[i] <= 'z') || (t[i] >= 'A' && t[i] <= 'Z') || t[i] == '_'))
        return false;
    while (j < n && ident_char(t[j]))
        j++;
    int64_t aux;
    if (hir_keyword_token(t + i, j - i, &aux))
        return false;
    if (t[i] == 'T' && j > i + 1 && t[i + 1] >= '0' && t[i + 1] <= '9')
        return false;   /* a tensor */
    size_t k = j;
    while (k < n && t[k] == ' ')
        k++;
    if (k < n && t[k] == '=')
        return false;   /* a scalar definition: the problem is elsewhere */
    if (j - i > 64) {
        hir_diag_emit(ctx->diag, HIR_ERROR, LOC(((hir_yyltype){(uint32_t)i, (uint32_t)j})),
                      "unknown statement '%.*s...'", 64, t + i);
        return true;
    }
    hir_diag_emit(ctx->diag, HIR_ERROR, LOC(((hir_yyltype){(uint32_t)i, (uint32_t)j})),
                  "unknown statement '%.*s'", (int)(j - i), t + i);
    return true;
}

/* The words of the format come from dialect/defs/: statement keywords from the keyword and
 * token columns of ops.def (aux = the op), the other words from keywords.def. */
static const struct { const char *kw; uint8_t len; int tok; int aux; } keywords[] = {
#define X(TOK, KW) {KW, sizeof(KW) - 1, TOK, 0},
#include "dialect/defs/keywords.def"
#undef X
#define X(E, KW, TOK, FMT, NMIN, NMAX, OUT, FL, FORMS, KW26) {KW, sizeof(KW) - 1, TOK, HIR_OP_##E},
#include "dialect/defs/ops.def"
#undef X
};
#define NKEYWORDS (sizeof keywords / sizeof keywords[0])
_Static_assert(NKEYWORDS < HIR_KW_SLOTS / 2, "keyword index too small for the keyword tables");

/* The spelling a keyword is matched against: "Set.Permute" is Set-like with the permutation
 * flag (aux bit 16). Returns the length of the base word and sets *permute. */
static size_t keyword_base(const char *s, size_t n, int *permute)
{
    *permute = n > 8 && !memcmp(s + n - 8, ".Permute", 8);
    return *permute ? n - 8 : n;
}

static int keyword_result(size_t i, int permute, int64_t *aux)
{
    if (permute && keywords[i].tok != LOADSTORE)
        return 0;
    *aux = (int64_t)keywords[i].aux | ((int64_t)permute << 16);
    return keywords[i].tok;
}

/* The index's hash: the length and the first and last four bytes (all three bytes of a
 * shorter word), multiplied; the keywords spread over the slots with short probes, and a word
 * is never hashed whole (most words looked up are names, not keywords). */
static uint32_t keyword_hash(const char *s, size_t n)
{
    uint32_t a = 0, b = 0;
    if (n >= 4) {
        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
    } else if (n) {
        a = (uint32_t)(unsigned char)s[0] | (uint32_t)(unsigned char)s[n / 2] << 8 |
            (uint32_t)(unsigned char)s[n - 1] << 16;
    }
    uint64_t x = ((uint64_t)a << 32 | b) ^ ((uint64_t)n * 0x9e3779b97f4a7c15ULL);
    x ^= x >> 31;
    return (uint32_t)((x * 0xff51afd7ed558ccdULL) >> 40) & (HIR_KW_SLOTS - 1);
}

/* The scanner's keyword index (per parse, in its state): slot -> 1 + the keyword's row, 0 empty;
 * open addressing. Rows that share a spelling keep the first, as the linear search did. */
void hir_keyword_index(uint16_t *slots)
{
    memset(slots, 0, HIR_KW_SLOTS * sizeof *slots);
    for (size_t i = 0; i < NKEYWORDS; i++) {
        if (!keywords[i].tok)
            continue;
        uint32_t h = keyword_hash(keywords[i].kw, keywords[i].len);
        bool dup = false;
        for (; slots[h]; h = (h + 1) & (HIR_KW_SLOTS - 1)) {
            size_t j = slots[h] - 1u;
            if (keywords[j].len == keywords[i].len && !memcmp(keywords[j].kw, keywords[i].kw, keywords[i].len))
                dup = true;
        }
        if (!dup)
            slots[h] = (uint16_t)(i + 1);
    }
}

int hir_keyword_find(const uint16_t *slots, const char *s, size_t n, int64_t *aux)
{
    int permute;
    size_t base = keyword_base(s, n, &permute);
    for (uint32_t h = keyword_hash(s, base); slots[h]; h = (h + 1) & (HIR_KW_SLOTS - 1)) {
        size_t i = slots[h] - 1u;
        if (keywords[i].len == base && !memcmp(keywords[i].kw, s, base))
            return keyword_result(i, permute, aux);
    }
    return 0;
}

/* The same without an index (diagnostics) */
int hir_keyword_token(const char *s, size_t n, int64_t *aux)
{
    int permute;
    size_t base = keyword_base(s, n, &permute);
    for (size_t i = 0; i < NKEYWORDS; i++) {
        if (!keywords[i].tok || keywords[i].len != base || memcmp(keywords[i].kw, s, base))
            continue;
        return keyword_result(i, permute, aux);
    }
    return 0;
}

hir_ptrvec *hirp_vec1(hir_parse_ctx *ctx, void *item)
{
    hir_ptrvec *v = hir_arena_alloc(ctx->prog->arena, sizeof *v);
    hir_ptrvec_push(ctx->prog->arena, v, item);
    return v;
}

hir_ptrvec *hirp_vecpush(hir_parse_ctx *ctx, hir_ptrvec *v, void *item)
{
    if (!v)
        v = hir_arena_alloc(ctx->prog->arena, sizeof *v);
    hir_ptrvec_push(ctx->prog->arena, v, item);
    return v;
}

void *hirp_box_int(hir_parse_ctx *ctx, int64_t v)
{
    int64_t *p = hir_arena_alloc(ctx->prog->arena, sizeof *p);
    *p = v;
    return p;
}

/* A short printed form for messages (long tensors are cut). */
static char *short_str(char *s)
{
    if (s && strlen(s) > 160)
        strcpy(s + 150, " ...");
    return s;
}

hir_tensor *hirp_tensor_ref(hir_parse_ctx *ctx, hir_yyltype loc, int64_t number, int mem,
                            hir_dtype dt, hir_ptrvec *ids, const char *annot, hir_mesh *mesh)
{
    int n = ids ? ids->n : 0;
    hir_tensor *t = hir_tensor_get(P, number);
    if (t) {
        bool same = t->mem == (hir_mem)mem && t->dtype == dt && t->nloop == n && t->mesh == mesh &&
                    (t->annotations == annot ||
                     (t->annotations && annot && !strcmp(t->annotations, annot)));
        for (int i = 0; same && i < n; i++)
            same = t->loop[i] == ids->items[i];
        if (!same && first_mismatch(ctx, 1, number)) {
            hir_tensor tmp = {.head = {HIR_VAL_TENSOR}, .number = number, .mem = (hir_mem)mem,
                              .dtype = dt, .nloop = n,
                              .loop = (hir_iterdomain **)(ids ? ids->items : NULL),
                              .annotations = annot, .mesh = mesh};
            char *here = short_str(hir_tensor_str(&tmp));
            char *before = short_str(hir_tensor_str(t));
            if (!here || !before) {
                free(here);
                free(before);
                hir_arena_oom(P->arena);   /* back to hir_parse */
            }
            hir_diag_entry *e = hir_diag_emit(ctx->diag, HIR_ERROR, LOC(loc),
                "T%lld is used with a different type than before: '%s' here, '%s' before",
                (long long)number, here, before);
            hir_diag_note(ctx->diag, e, t->loc, "T%lld was first used here", (long long)number);
            free(here);
            free(before);
            ctx->failed = true;
        } else if (!same)
            ctx->failed = true;
        return t;
    }
    t = hir_tensor_create(P, number, (hir_mem)mem, dt, n, (hir_iterdomain **)(ids ? ids->items : NULL), mesh);
    t->annotations = annot;
    t->loc = LOC(loc);
    return t;
}

static bool same_opt(const hir_scalar *a, const hir_scalar *b)
{
    return (!a && !b) || (a && b && hir_scalar_equal(a, b));
}

hir_iterdomain *hirp_iterdomain_ref(hir_parse_ctx *ctx, hir_yyltype loc, int64_t number,
                                    int itype, int ptype, struct hir_idparts *parts,
                                    unsigned flags)
{
    hir_scalar *start = NULL, *stop = NULL, *extent = NULL;
    /* "{a}" extent; "{a : b}" start (or stop) and extent; "{a : b : c}" start, stop, extent */
    if (parts->n == 1)
        extent = parts->a;
    else if (parts->n == 2) {
        start = parts->a;
        extent = parts->b;
    } else {
        start = parts->a;
        stop = parts->b;
        extent = parts->c;
    }
    hir_iterdomain *id = hir_iterdomain_get(P, number);
    if (id) {
        if (id->itype != (hir_itype)itype || id->ptype != (hir_ptype)ptype || id->flags != flags ||
            !same_opt(hir_id_start(id), start) || !same_opt(hir_id_stop(id), stop) ||
            !same_opt(id->extent, extent) || !same_opt(hir_id_expanded(id), parts->ex)) {
            if (!first_mismatch(ctx, 2, number)) {
                ctx->failed = true;
                return id;
            }
            hir_diag_entry *e = hir_diag_emit(ctx->diag, HIR_ERROR, LOC(loc),
                "IterDomain %lld is spelled differently than before", (long long)number);
            hir_diag_note(ctx->diag, e, id->loc, "IterDomain %lld was first spelled here",
                          (long long)number);
            const hir_tensor *sel = hir_map_get(&ctx->select_ids, (uint64_t)number);
            if (sel)
                older_lowering_note(ctx, e, sel);
            else if (e)
                hir_map_put(&ctx->respelled, (uint64_t)number, e);
            ctx->failed = true;
        }
        return id;
    }
    id = hir_iterdomain_create(P, number, (hir_itype)itype, (hir_ptype)ptype, extent);
    hir_iterdomain_set_range(P, id, start, stop, parts->ex);
    id->flags = flags;
    id->loc = LOC(loc);
    return id;
}

hir_iterdomain *hir_parse_simple_iterdomain(hir_parse_ctx *ctx, uint32_t begin, uint32_t end,
                                            int64_t number, int itype, int ptype, int64_t extent,
                                            unsigned flags)
{
    struct hir_idparts parts = {hir_scalar_int(P, extent), NULL, NULL, NULL, 1};
    hir_yyltype loc = {begin, end};
    return hirp_iterdomain_ref(ctx, loc, number, itype, ptype, &parts, flags);
}

/* A TENSOR_FAST token made as the grammar path makes "T<n>[ids] (mesh)": its IterDomains in
 * order, then the tensor, with the same locations. */
hir_tensor *hirp_fast_tensor(hir_parse_ctx *ctx, hir_yyltype loc, const struct hir_fast_tensor *f)
{
    hir_iterdomain *made[HIR_FAST_IDS];
    for (int j = 0; j < f->n; j++) {
        const struct hir_fast_id *d = &f->ids[j];
        made[j] = hir_parse_simple_iterdomain(ctx, d->begin, d->end, d->number, (int)d->itype,
                                              (int)d->ptype, d->extent, d->flags);
    }
    hir_ptrvec v = {(void **)made, f->n, f->n};
    return hirp_tensor_ref(ctx, loc, f->number, (int)f->mem, f->dtype, f->n ? &v : NULL, NULL, f->mesh);
}

hir_scalar *hirp_symbol_ref(hir_parse_ctx *ctx, hir_yyltype loc, const char *prefix,
                            int64_t number)
{
    hir_scalar *s = hir_map_get(&P->symbols, (uint64_t)number);
    if (s) {
        if (strcmp(s->name, prefix)) {
            hir_diag_entry *e = hir_diag_emit(ctx->diag, HIR_ERROR, LOC(loc),
                "value number %lld is used as '%s%lld' here but as '%s%lld' before",
                (long long)number, prefix, (long long)number, s->name, (long long)number);
            hir_diag_note(ctx->diag, e, s->loc, "first used here");
            ctx->failed = true;
        }
        return s;
    }
    s = hir_scalar_symbol(P, prefix, number);
    s->loc = LOC(loc);
    return s;
}

hir_scalar *hirp_named_ref(hir_parse_ctx *ctx, hir_yyltype loc, const char *name)
{
    hir_scalar *s = hir_scalar_named(P, name);
    if (!s->loc.src)
        s->loc = LOC(loc);
    return s;
}

hir_sexpr *hirp_make_call(hir_parse_ctx *ctx, hir_yyltype loc, const char *fn, hir_ptrvec *args)
{
    hir_sexpr *e = hir_arena_alloc(P->arena, sizeof *e);
    int n = args ? args->n : 0;
    if (n > 3) {
        hirp_semantic_error(ctx, loc, "function '%s' takes at most 3 arguments here, got %d", fn, n);
        n = 3;
    }
    e->nargs = n;
    for (int i = 0; i < n; i++)
        e->args[i] = args->items[i];
    e->fn = fn;
    e->infix = false;
    hir_sexpr_kind k;
    int op;
    if (hir_fn_lookup(fn, n, &k, &op)) {
        e->kind = k;
        e->op = op;
    } else {
        e->kind = HIR_SX_CALL;
        e->op = -1;
    }
    return e;
}

hir_stmt *hirp_stmt_new(hir_parse_ctx *ctx, hir_op op, hir_yyltype loc)
{
    hir_stmt *s = hir_stmt_new(P, op);
    s->loc = LOC(loc);
    return s;
}

void hirp_stmt_inputs(hir_parse_ctx *ctx, hir_stmt *s, int n, hir_value **v, hir_yyltype *l)
{
    hir_stmt_set_inputs(P, s, n, v);
    for (int i = 0; i < n; i++)
        s->in_loc[i] = hir_span_of(l ? LOC(l[i]) : s->loc);
}

/* FullOp: the output's extents, then the fill value, all inputs of the statement */
hir_stmt *hirp_full_stmt(hir_parse_ctx *ctx, hir_yyltype loc, hir_tensor *out,
                         hir_yyltype oloc, hir_ptrvec *extents, hir_scalar *value)
{
    hir_stmt *s = hirp_stmt_new(ctx, HIR_OP_FULL, loc);
    s->out = out;
    s->out_loc = hir_span_of(LOC(oloc));
    int n = extents ? extents->n : 0;
    hir_value **v = hir_arena_alloc(P->arena, sizeof(hir_value *) * (size_t)(n + 1));
    for (int i = 0; i < n; i++)
        v[i] = extents->items[i];
    v[n] = (hir_value *)value;
    hirp_stmt_inputs(ctx, s, n + 1, v, NULL);
    return s;
}

/* GroupedMmaOp(mat1=A, mat2=B, offsets=O): the field names are fixed, in this order */
hir_stmt *hirp_grouped_mma_stmt(hir_parse_ctx *ctx, hir_yyltype loc, hir_tensor *out,
                                hir_yyltype oloc, const char **names, hir_yyltype *nl,
                                hir_value **v, hir_yyltype *l)
{
    static const char *const want[3] = {"mat1", "mat2", "offsets"};
    for (int i = 0; i < 3; i++)
        if (strcmp(names[i], want[i])) {
            hirp_semantic_error(ctx, nl[i], "GroupedMmaOp: expected '%s=', found '%s=' (the scaled and"
                           " biased forms are not read yet)", want[i], names[i]);
            return NULL;
        }
    hir_stmt *s = hirp_stmt_new(ctx, HIR_OP_GROUPED_MMA, loc);
    s->out = out;
    s->out_loc = hir_span_of(LOC(oloc));
    hirp_stmt_inputs(ctx, s, 3, v, l);
    return s;
}

/* LaunchKernel in any of its three layouts: inputs then outputs in in[] */
hir_stmt *hirp_launch_stmt(hir_parse_ctx *ctx, hir_yyltype loc, int64_t number,
                           hir_launch_layout layout, hir_ptrvec *ins, hir_ptrvec *outs)
{
    hir_stmt *s = hirp_stmt_new(ctx, HIR_OP_LAUNCH_KERNEL, loc);
    int ni = ins ? ins->n : 0, no = outs ? outs->n : 0;
    hir_value **v = hir_arena_alloc(P->arena, sizeof(hir_value *) * (ni + no + 1));
    for (int i = 0; i < ni; i++) v[i] = ins->items[i];
    for (int i = 0; i < no; i++) v[ni + i] = outs->items[i];
    hirp_stmt_inputs(ctx, s, ni + no, v, NULL);
    s->u.kernel.number = number;
    s->u.kernel.ninputs = ni;
    s->u.kernel.layout = layout;
    return s;
}

/* Every statement of the program goes onto the stack of open blocks here: the program's form
 * is 2026 when one of them is (what hir_program_form finds by walking them all afterwards). */
void hirp_block_push(hir_parse_ctx *ctx, hir_stmt *s)
{
    ctx->saw_2026 |= s && s->form == HIR_FORM_2026;   /* NULL after an error */
    if (ctx->nstk == ctx->capstk) {
        size_t cap = ctx->capstk ? 2 * ctx->capstk : 256;
        void **n = cap <= SIZE_MAX / sizeof *n ? realloc(ctx->stk, cap * sizeof *n) : NULL;
        if (!n)
            hir_arena_oom(P->arena);   /* back to hir_parse, which frees ctx->stk */
        ctx->stk = n;
        ctx->capstk = cap;
    }
    ctx->stk[ctx->nstk++] = s;
}

/* The block whose statements are on the stack from mark on closes: one array of its exact size
 * in the program's arena (passes that add statements later grow it as usual). */
hir_ptrvec hirp_block_close(hir_parse_ctx *ctx, size_t mark)
{
    size_t n = ctx->nstk - mark;
    hir_ptrvec v = {NULL, 0, 0};
    /* the input is below 4 GiB (hir_parse) and a statement is more than 2 bytes */
    hir_assert(n > 0 && n <= INT32_MAX);
    v.items = hir_arena_alloc(P->arena, sizeof(void *) * n);
    memcpy(v.items, ctx->stk + mark, sizeof(void *) * n);
    v.n = v.cap = (int)n;
    ctx->nstk = mark;
    return v;
}

void hirp_define_scalar(hir_parse_ctx *ctx, hir_yyltype loc, hir_scalar *s, hir_sexpr *def)
{
    if (s->def) {
        hir_scalar tmp = *s;
        tmp.def = def;
        tmp.kind = HIR_SC_ANON;
        hir_scalar old = *s;
        old.kind = HIR_SC_ANON;
        if (!hir_scalar_equal(&tmp, &old)) {
            hir_diag_entry *e = hir_diag_emit(ctx->diag, HIR_ERROR, LOC(loc),
                                              "redefinition of '%s%lld'", s->name, (long long)s->number);
            hir_diag_note(ctx->diag, e, s->def_loc, "previous definition is here");
            ctx->failed = true;
        }
        return;
    }
    s->def = def;
    s->def_loc = LOC(loc);
}

/* "out = a + b;", "out = -a;", "out = fn(a[, b[, c]]);" for tensors (element-wise statements)
 * and scalars (SCALAR_DEF, also the Index-definitions lines). */
hir_stmt *hirp_ew_stmt(hir_parse_ctx *ctx, hir_yyltype loc, hir_value *out, hir_yyltype oloc,
                       struct hir_ewrhs *r)
{
    int kind = r->kind, op = r->op;
    if (kind < 0) {
        hir_sexpr_kind k;
        if (hir_fn_lookup(r->fn, r->n, &k, &op))
            kind = k;
        else {
            kind = HIR_SX_CALL;
            op = -1;
        }
    }
    if (out->kind == HIR_VAL_SCALAR) {
        hir_sexpr *e = hir_arena_alloc(P->arena, sizeof *e);
        e->kind = (hir_sexpr_kind)kind;
        e->op = op;
        e->infix = r->infix;
        e->fn = r->fn;
        e->nargs = r->n;
        for (int i = 0; i < r->n; i++) {
            if (r->v[i]->kind != HIR_VAL_SCALAR) {
                hirp_semantic_error(ctx, r->l[i], "a scalar definition cannot use a tensor operand");
                return NULL;
            }
            e->args[i] = (hir_scalar *)r->v[i];
        }
        hir_stmt *s = hirp_stmt_new(ctx, HIR_OP_SCALAR_DEF, loc);
        s->u.sdef.out = (hir_scalar *)out;
        s->out_loc = hir_span_of(LOC(oloc));
        s->u.sdef.def = e;
        hirp_stmt_inputs(ctx, s, r->n, r->v, r->l);
        return s;
    }
    hir_op sop;
    switch (kind) {
    case HIR_SX_UNARY: sop = HIR_OP_UNARY; break;
    case HIR_SX_BINARY: sop = HIR_OP_BINARY; break;
    case HIR_SX_TERNARY: sop = HIR_OP_TERNARY; break;
    default:
        /* unknown one-argument functions are casts ("__bfloat2float"); others are errors */
        if (r->n != 1) {
            hirp_semantic_error(ctx, loc, "unknown element-wise function '%s' with %d operands", r->fn, r->n);
            return NULL;
        }
        sop = HIR_OP_UNARY;
        op = -1;
        break;
    }
    hir_stmt *s = hirp_stmt_new(ctx, sop, loc);
    s->out = (hir_tensor *)out;
    s->out_loc = hir_span_of(LOC(oloc));
    s->u.ew.op = op;
    s->u.ew.infix = r->infix;
    s->u.ew.fn = r->fn ? r->fn : NULL;
    hirp_stmt_inputs(ctx, s, r->n, r->v, r->l);
    return s;
}

/* The right-hand side of an element-wise statement or a scalar definition: consumed by its
 * statement before another can begin */
struct hir_ewrhs *hirp_ewrhs_start(hir_parse_ctx *ctx)
{
    ctx->ewrhs = (struct hir_ewrhs){0};
    return &ctx->ewrhs;
}

/* The first field ("type=") starts the parse context's fields afresh */
struct hir_fields *hirp_fields_start(hir_parse_ctx *ctx, hir_yyltype loc)
{
    struct hir_fields *f = &ctx->fields;
    *f = (struct hir_fields){.loc = loc};
    hirp_fields_add(ctx, &f, F_TYPE, loc);
    return f;
}

void hirp_fields_add(hir_parse_ctx *ctx, struct hir_fields **fp, int key, hir_yyltype loc)
{
    struct hir_fields *f = *fp;
    for (int i = 0; i < f->n; i++)
        if (f->order[i] == key) {
            hirp_semantic_error(ctx, loc, "field given twice");
            return;
        }
    if (f->n < 8)
        f->order[f->n++] = key;
}

static const char *field_name(int k)
{
    static const char *n[] = {"", "type", "team", "root", "input", "output", "buffer", "peer", "backend"};
    return n[k];
}

hir_comm *hirp_comm_from_fields(hir_parse_ctx *ctx, hir_yyltype loc, int64_t number,
                                struct hir_fields *f, bool p2p)
{
    static const int p2p_order[] = {F_TYPE, F_BUFFER, F_PEER, F_BACKEND};
    static const int comm_order[] = {F_TYPE, F_TEAM, F_ROOT, F_INPUT, F_OUTPUT, F_BACKEND};
    if (number < 0) {
        /* numbers name expressions; a negative one would also collide with the maps' empty key */
        hirp_semantic_error(ctx, loc, "expression number %lld is negative", (long long)number);
        return NULL;
    }
    const int *order = p2p ? p2p_order : comm_order;
    int norder = p2p ? 4 : 6;
    /* bounded like the numbers in names (HIR_MAX_NAME_NUMBER; found by fuzzing) */
    if (number >= HIR_MAX_NAME_NUMBER) {
        hirp_semantic_error(ctx, loc, "expression number %lld is too large (at most %lld)",
                            (long long)number, (long long)(HIR_MAX_NAME_NUMBER - 1));
        return NULL;
    }
    /* the written keys must be a subsequence of the canonical order */
    int j = 0;
    for (int i = 0; i < f->n; i++) {
        while (j < norder && order[j] != f->order[i])
            j++;
        if (j == norder) {
            hirp_semantic_error(ctx, f->loc, "%s: unexpected or out-of-order field '%s'",
                                p2p ? "P2PCommunication" : "Communication", field_name(f->order[i]));
            return NULL;
        }
    }
    /* no "backend=": nvFuser's printers before February 2025 (Communication 2025-02-25,
     * P2PCommunication 2025-02-21) did not write it; the backend then was NCCL */
    hir_backend_kind bk = HIR_BK_NCCL;
    if (f->backend && !hirp_backend_of(ctx, f->backend, f->backend_loc, &bk))
        return NULL;
    hir_comm tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.number = number;
    tmp.backend = bk;
    tmp.backend_unprinted = !f->backend;
    if (p2p) {
        tmp.op = HIR_OP_P2P;
        if (!strcmp(f->type, "send"))
            tmp.is_send = true;
        else if (strcmp(f->type, "recv")) {
            hirp_semantic_error(ctx, f->type_loc, "P2PCommunication type must be send or recv, not '%s'", f->type);
            return NULL;
        }
        if (!f->buffer || !f->peer) {
            hirp_semantic_error(ctx, loc, "P2PCommunication needs 'buffer=' and 'peer=' fields");
            return NULL;
        }
        tmp.buffer = f->buffer;
        tmp.peer = f->peer;
    } else {
        tmp.op = HIR_OP_COMMUNICATION;
        hir_comm_type t;
        if (!hir_comm_type_lookup(f->type, &t)) {
            hirp_semantic_error(ctx, f->type_loc, "unknown communication type '%s'", f->type);
            return NULL;
        }
        tmp.type = t;
        if (!f->has_team) {
            hirp_semantic_error(ctx, loc, "Communication needs a 'team=' field");
            return NULL;
        }
        if (f->root && !hir_comm_type_has_root(tmp.type)) {
            hirp_semantic_error(ctx, loc, "%s takes no 'root='", f->type);
            return NULL;
        }
        if (!f->root && hir_comm_type_has_root(tmp.type)) {
            hirp_semantic_error(ctx, loc, "%s needs a 'root=' field", f->type);
            return NULL;
        }
        tmp.team = f->team;
        tmp.nteam = f->nteam;
        tmp.team_truncated = f->truncated;
        tmp.root = f->root;
        tmp.input = f->input;
        tmp.output = f->output;
    }
    hir_comm *c = hir_comm_get(P, number);
    if (c) {
        bool same = c->op == tmp.op && c->backend == tmp.backend;
        if (same && p2p)
            same = c->is_send == tmp.is_send && c->buffer == tmp.buffer && hir_scalar_equal(c->peer, tmp.peer);
        else if (same)
            same = c->type == tmp.type && c->nteam == tmp.nteam && c->input == tmp.input &&
                   c->output == tmp.output && same_opt(c->root, tmp.root) &&
                   !memcmp(c->team, tmp.team, sizeof(int64_t) * tmp.nteam);
        if (!same) {
            hir_diag_entry *e = hir_diag_emit(ctx->diag, HIR_ERROR, LOC(loc),
                "expression %lld is spelled differently than before", (long long)number);
            hir_diag_note(ctx->diag, e, c->loc, "expression %lld was first spelled here", (long long)number);
            ctx->failed = true;
        }
        return c;
    }
    c = hir_comm_create(P, number, tmp.op);
    hir_comm *keep = c;
    *c = tmp;
    c->loc = LOC(loc);
    c->red_op = HIR_RED_SUM;
    return keep;
}

/* ---- 2026 statements ---- */

/* ---- statements made by both the token path (parser.y) and the one-token path
 * (fast_build.c): one function each, so that both make the same thing ---- */

hir_stmt *hirp_alloc_stmt(hir_parse_ctx *ctx, hir_yyltype loc, hir_tensor *out, hir_yyltype oloc,
                          hir_tensor *buf, hir_yyltype bloc, const char *mem, hir_yyltype mloc,
                          hir_scalar *size, bool zero_init, bool resets)
{
    hir_stmt *s = hirp_stmt_new(ctx, HIR_OP_ALLOCATE, loc);
    s->out = out;
    s->out_loc = hir_span_of(LOC(oloc));
    if (buf != out)
        hirp_semantic_error(ctx, bloc, "ALLOCATE of T%lld names buffer T%lld; they must be the same tensor",
                            (long long)out->number, (long long)buf->number);
    int m = -1;
    for (int i = 0; i < HIR_MEM_COUNT; i++)
        if (!strcmp(hir_mem_name((hir_mem)i), mem))
            m = i;
    if (m < 0)
        hirp_semantic_error(ctx, mloc, "unknown mem_type '%s' (expected register, shared, global, tensor or symmetric)", mem);
    s->u.alloc.mem = m < 0 ? HIR_MEM_GLOBAL : (hir_mem)m;
    s->u.alloc.size = size;
    s->u.alloc.zero_init = zero_init;
    s->u.alloc.resets_to_zero = resets;
    return s;
}

hir_stmt *hirp_alias_select_stmt(hir_parse_ctx *ctx, hir_yyltype loc, hir_tensor *out,
                                 hir_yyltype oloc, hir_tensor *in, hir_yyltype inloc,
                                 hir_iterdomain *axis, hir_scalar *index)
{
    hir_stmt *s = hirp_stmt_new(ctx, HIR_OP_ALIAS_SELECT, loc);
    /* an IterDomain of the output respelled here, or spelled here first and respelled later:
     * the older host lowering's numbers (older_lowering_note) */
    for (int i = 0; out && i < out->nloop; i++) {
        uint64_t k = (uint64_t)out->loop[i]->number;
        hir_diag_entry *e = hir_map_get(&ctx->respelled, k);
        if (e) {
            older_lowering_note(ctx, e, out);
            hir_map_del(&ctx->respelled, k);
        } else if (!hir_map_get(&ctx->select_ids, k)) {
            hir_map_put(&ctx->select_ids, k, out);
        }
    }
    s->out = out;
    s->out_loc = hir_span_of(LOC(oloc));
    hir_value *v[1] = {(hir_value *)in};
    hirp_stmt_inputs(ctx, s, 1, v, &inloc);
    s->u.sel.axis = axis;
    s->u.sel.index = index;
    return s;
}

hir_stmt *hirp_linear_stmt(hir_parse_ctx *ctx, hir_yyltype loc, hir_tensor *out, hir_yyltype oloc,
                           int n, hir_value **v, hir_yyltype *l)
{
    hir_stmt *s = hirp_stmt_new(ctx, HIR_OP_LINEAR, loc);
    s->out = out;
    s->out_loc = hir_span_of(LOC(oloc));
    hirp_stmt_inputs(ctx, s, n, v, l);
    return s;
}

hir_stmt *hirp_p2p_stmt(hir_parse_ctx *ctx, hir_yyltype loc, int64_t number, hir_yyltype nloc,
                        struct hir_fields *f)
{
    hir_stmt *s = hirp_stmt_new(ctx, HIR_OP_P2P, loc);
    s->u.comm = hirp_comm_from_fields(ctx, loc, number, f, true);
    if (s->u.comm) {
        if (s->u.comm->stmt) {
            hir_diag_entry *e = hir_diag_emit(ctx->diag, HIR_ERROR, LOC(nloc),
                "expression number %lld is already used", (long long)number);
            hir_diag_note(ctx->diag, e, s->u.comm->stmt->loc, "first used here");
            ctx->failed = true;
        } else
            s->u.comm->stmt = s;
    }
    return s;
}

hir_stmt *hirp_wait_stmt(hir_parse_ctx *ctx, hir_yyltype loc, int64_t number, hir_form form)
{
    hir_stmt *s = hirp_stmt_new(ctx, HIR_OP_WAIT, loc);
    if (form == HIR_FORM_2026)   /* else the form stmt_new gave it, as before */
        s->form = form;
    s->u.wait.number = number;
    return s;
}

hir_stmt *hirp_matmul_stmt(hir_parse_ctx *ctx, hir_yyltype loc, hir_tensor *out, hir_yyltype oloc,
                           hir_value **v, hir_yyltype *l)
{
    hir_stmt *s = hirp_stmt_new(ctx, HIR_OP_MATMUL, loc);
    s->out = out;
    s->out_loc = hir_span_of(LOC(oloc));
    hirp_stmt_inputs(ctx, s, 2, v, l);
    return s;
}

/* SetCurrentStream / Synchronize (2025): a literal number names a stream, anything else
 * computes its index */
hir_stmt *hirp_stream_index_stmt(hir_parse_ctx *ctx, hir_op op, hir_yyltype loc, hir_scalar *index)
{
    hir_stmt *s = hirp_stmt_new(ctx, op, loc);
    if (index->kind == HIR_SC_INT && index->ival >= 0) {
        s->u.stream.number = index->ival;
    } else {
        s->u.stream.number = -1;
        s->u.stream.index = index;
    }
    return s;
}

hir_stmt *hirp_for_in_stmt(hir_parse_ctx *ctx, hir_yyltype loc, hir_yyltype kwloc, hir_scalar *index,
                           hir_yyltype iloc, hir_iterdomain *id, hir_ptrvec body)
{
    hir_stmt *s = hirp_stmt_new(ctx, HIR_OP_FOR, loc);
    s->loc = LOC(kwloc);
    s->u.kfor.index = index;
    s->u.kfor.id = id;
    if (hir_scalar_is_literal(index))
        hirp_semantic_error(ctx, iloc, "loop index must be a named scalar or a symbol, not a literal");
    s->body.stmts = body;
    return s;
}

hir_stmt *hirp_if_stmt(hir_parse_ctx *ctx, hir_yyltype loc, hir_yyltype kwloc, const char *pred_type,
                       hir_scalar *pred, hir_ptrvec body, hir_ptrvec else_body)
{
    hir_stmt *s = hirp_stmt_new(ctx, HIR_OP_IF, loc);
    s->loc = LOC(kwloc);
    s->u.cond.pred_type = pred_type;
    s->u.cond.pred = pred;
    s->body.stmts = body;
    s->else_body.stmts = else_body;
    return s;
}

/* Get/Set/Synchronize. An address names a stream object: equal text, same object, numbered
 * HIR_STREAM_ADDR_BASE + order of first appearance. In 2025 syntax a bare decimal is an
 * object's number; in 2026 syntax it is an index (docs/language.md). */
hir_stmt *hirp_stream_stmt(hir_parse_ctx *ctx, hir_op op, hir_yyltype loc, hir_form form,
                           const char *addr, hir_scalar *index)
{
    hir_stmt *s = hirp_stmt_new(ctx, op, loc);
    s->form = form;
    if (addr) {
        int i = 0;
        while (i < ctx->stream_addrs.n && ctx->stream_addrs.items[i] != addr)
            i++;
        if (i == ctx->stream_addrs.n)
            hir_ptrvec_push(P->arena, &ctx->stream_addrs, (void *)addr);
        s->u.stream.number = HIR_STREAM_ADDR_BASE + i;
        s->u.stream.addr = addr;
    } else {
        s->u.stream.number = -1;
        s->u.stream.index = index;
    }
    return s;
}

bool hirp_field_is(hir_parse_ctx *ctx, const char *got, hir_yyltype l, const char *want,
                   const char *stmt)
{
    if (!strcmp(got, want))
        return true;
    hirp_semantic_error(ctx, l, "%s: expected field '%s=' here, not '%s='", stmt, want, got);
    return false;
}

bool hirp_backend_of(hir_parse_ctx *ctx, const char *name, hir_yyltype l, hir_backend_kind *out)
{
    if (hir_backend_kind_lookup(name, out))
        return true;
    hirp_semantic_error(ctx, l, "unknown backend '%s' (expected NCCL, UCC or CUDA)", name);
    *out = HIR_BK_NCCL;
    return false;
}

bool hirp_expr_number_ok(hir_parse_ctx *ctx, int64_t number, hir_yyltype l)
{
    if (number < 0) {
        hirp_semantic_error(ctx, l, "expression number %lld is negative", (long long)number);
        return false;
    }
    if (number >= HIR_MAX_NAME_NUMBER) {
        hirp_semantic_error(ctx, l, "expression number %lld is too large (at most %lld)",
                            (long long)number, (long long)(HIR_MAX_NAME_NUMBER - 1));
        return false;
    }
    return true;
}

hir_stmt *hirp_cperm_stmt(hir_parse_ctx *ctx, hir_yyltype loc, int64_t number, hir_yyltype nloc,
                          hir_ptrvec *team, const char *k1, hir_yyltype l1, hir_scalar *send,
                          const char *k2, hir_yyltype l2, hir_scalar *recv, hir_tensor *in,
                          hir_yyltype inl, hir_tensor *out, hir_yyltype outl, const char *bk,
                          hir_yyltype bkl)
{
    hir_stmt *s = hirp_stmt_new(ctx, HIR_OP_CPERM, loc);
    s->form = HIR_FORM_2026;
    bool ok = hirp_field_is(ctx, k1, l1, "send_peer", "CollectivePermute");
    ok = hirp_field_is(ctx, k2, l2, "recv_peer", "CollectivePermute") && ok;
    hir_backend_kind b;
    ok = hirp_backend_of(ctx, bk, bkl, &b) && ok;
    hir_value *v[2] = {(hir_value *)in, (hir_value *)out};
    hir_yyltype l[2] = {inl, outl};
    hirp_stmt_inputs(ctx, s, 2, v, l);
    if (!ok || !hirp_expr_number_ok(ctx, number, nloc))
        return s;
    hir_comm *c = hir_comm_get(P, number);
    if (c) {
        hir_diag_entry *e = hir_diag_emit(ctx->diag, HIR_ERROR, LOC(nloc),
            "expression number %lld is already used", (long long)number);
        hir_diag_note(ctx->diag, e, c->loc, "first used here");
        ctx->failed = true;
        return s;
    }
    c = hir_comm_create(P, number, HIR_OP_CPERM);
    c->loc = LOC(loc);
    c->backend = b;
    c->nteam = team ? team->n : 0;
    c->team = hir_arena_alloc(P->arena, sizeof(int64_t) * (c->nteam ? c->nteam : 1));
    for (int i = 0; i < c->nteam; i++)
        c->team[i] = *(int64_t *)team->items[i];
    c->send_peer = send;
    c->recv_peer = recv;
    c->input = in;
    c->output = out;
    c->stmt = s;
    s->u.comm = c;
    return s;
}

struct hir_mnode *hirp_mnode_leaf(hir_parse_ctx *ctx, hir_ptrvec *ints)
{
    struct hir_mnode *m = hir_arena_alloc(P->arena, sizeof *m);
    m->ndims = 1;
    m->dims[0] = ints ? ints->n : 0;
    if (ints)
        m->vals = *ints;
    return m;
}

struct hir_mnode *hirp_mnode_group(hir_parse_ctx *ctx, hir_yyltype loc, hir_ptrvec *children)
{
    struct hir_mnode *m = hir_arena_alloc(P->arena, sizeof *m);
    struct hir_mnode *first = children->items[0];
    if (first->ndims >= 15) {
        hirp_semantic_error(ctx, loc, "device mesh has too many dimensions");
        m->bad = true;
        return m;
    }
    m->ndims = first->ndims + 1;
    m->dims[0] = children->n;
    memcpy(m->dims + 1, first->dims, sizeof(int64_t) * first->ndims);
    for (int i = 0; i < children->n; i++) {
        struct hir_mnode *c = children->items[i];
        if (c->bad || c->ndims != first->ndims ||
            memcmp(c->dims, first->dims, sizeof(int64_t) * first->ndims)) {
            if (!c->bad)
                hirp_semantic_error(ctx, loc, "device mesh is not rectangular: its rows differ in shape");
            m->bad = true;
            return m;
        }
        for (int k = 0; k < c->vals.n; k++)
            hir_ptrvec_push(P->arena, &m->vals, c->vals.items[k]);
    }
    return m;
}

hir_mesh *hirp_mesh_from(hir_parse_ctx *ctx, hir_yyltype loc, struct hir_mnode *n)
{
    if (n->bad)
        return NULL;
    int64_t *dev = hir_arena_alloc(P->arena, sizeof(int64_t) * (n->vals.n + 1));
    for (int i = 0; i < n->vals.n; i++)
        dev[i] = *(int64_t *)n->vals.items[i];
    for (int i = 0; i < n->vals.n; i++)
        for (int k = 0; k < i; k++)
            if (dev[i] == dev[k]) {
                hirp_semantic_error(ctx, loc, "device %lld appears twice in the mesh", (long long)dev[i]);
                return NULL;
            }
    return hir_mesh_intern(P, n->ndims, n->dims, dev);
}

/* Out of memory while parsing: the program's arena and maps jump back here (hir_arena_oom),
 * from a grammar action or a scanner rule. Everything the parse owns is reachable from the
 * heap objects below (never from automatic variables changed after setjmp): the scanner is
 * destroyed (which also puts back the byte flex holds in the caller's text), the program and
 * its arena are freed, and HIR_ENOMEM is returned with no diagnostic (making one might need
 * memory; the caller says "out of memory"). Bison's own stack lives on the C stack
 * (YYSTACK_USE_ALLOCA in parser.y), so the jump leaks nothing. */
int hir_parse(hir_source *src, hir_diag *d, hir_program **out)
{
    *out = NULL;
    if (src->len >= UINT32_MAX - 2) {
        hir_loc l = {src, 0, 1};
        hir_diag_emit(d, HIR_ERROR, l, "input is larger than 4 GiB");
        return -1;
    }
    hir_program *p = hir_program_new();
    hir_parse_ctx *ctx = p ? calloc(1, sizeof *ctx) : NULL;
    struct hir_lexstate *st = ctx ? calloc(1, sizeof *st) : NULL;
    if (!st) {
        free(ctx);
        hir_program_free(p);
        return HIR_ENOMEM;
    }
    p->src = src;
    *ctx = (hir_parse_ctx){.prog = p, .diag = d, .src = src};
    hir_map_init_in(&ctx->mismatches, p->arena);
    hir_map_init_in(&ctx->respelled, p->arena);
    hir_map_init_in(&ctx->select_ids, p->arena);
    hir_map_init_in(&ctx->anon, p->arena);
    st->ctx = ctx;
    yyscan_t sc;
    if (hir_lex_init(st, (char *)src->text, src->len, &sc)) {
        free(st);
        free(ctx);
        hir_program_free(p);
        return HIR_ENOMEM;        /* flex fails only to allocate its state */
    }
    jmp_buf oom;
    if (setjmp(oom)) {
        hir_lex_fini(sc);
        hir_map_fini(&ctx->mismatches);
        hir_map_fini(&ctx->respelled);
        hir_map_fini(&ctx->select_ids);
        hir_map_fini(&ctx->anon);
        free(ctx->stk);
        free(st);
        free(ctx);
        hir_program_free(p);
        return HIR_ENOMEM;
    }
    hir_arena_on_oom(p->arena, &oom);
    int rc = yyparse(sc, ctx);
    if (!rc && !ctx->failed && !ctx->lex_failed)
        hir_program_resolve_waits(p);
    hir_arena_on_oom(p->arena, NULL);
    hir_lex_fini(sc);
    /* every byte flex changed is back: the rest of a mapped input goes too (lexer.l) */
    hir_text_release(src->text, src->mapped, 0, src->len);
    hir_map_fini(&ctx->mismatches);
    hir_map_fini(&ctx->respelled);
    hir_map_fini(&ctx->select_ids);
    hir_map_fini(&ctx->anon);
    free(ctx->stk);
    free(st);
    bool failed = rc || ctx->failed || ctx->lex_failed;
    hir_form form = ctx->saw_2026 ? HIR_FORM_2026 : HIR_FORM_2025;
    free(ctx);
    if (failed) {
        if (!d->errors) {
            hir_loc l = {src, 0, 1};
            hir_diag_emit(d, HIR_ERROR, l, "cannot parse the input");
        }
        hir_program_free(p);
        return -1;
    }
    p->form = form;   /* statements passes add take the form of what was read */
    *out = p;
    return 0;
}
