/* fast_scan.c — whole statements of the common shapes read in one go (hir_fast_scan, called
 * by lexer.l's fast_stmt, which keeps flex's side: the byte it holds, detaching it).
 *
 * Most of a printed program is a handful of statements spelled exactly as nvFuser's printer
 * spells them: ALLOCATE, HirAliasSelect, linear, P2PCommunication, Wait, SetCurrentStream,
 * Synchronize, and the FOR and IF lines that open blocks. At the start of a statement the
 * scanner tries to read the whole statement here, byte by byte, without making anything: when
 * it has exactly one of these shapes, with the printer's spacing, and ends where the token path
 * would end it, the scanner returns one token (STMT_FAST, FOR_FAST or IF_FAST) whose value lists
 * what the token path would have made, in the order it would have made it (parse_internal.h,
 * struct hir_fast_stmt); the grammar's action makes them with the same functions
 * (fast_build.c). Anything else, however small the difference (another spacing, a comment, a
 * keyword where a name was expected, a tensor that neither repeats a spelling nor has the fast
 * shape), changes nothing and the statement goes the token path, with its diagnostics.
 *
 * Every decision below mirrors a rule of lexer.l: the word classes (keyword, symbol, name), the
 * tensor head, the IterDomain head, the repeated spelling of a tensor (spelled_again), the first
 * mention in the fast shape (first_tensor), and the line break that ends a statement. */

#include "parser/parse_internal.h"

struct fs_scan {
    struct hir_lexstate *st;
    const char *t;
    size_t len, i;               /* the text and the next byte */
    int depth;                   /* brackets open within the statement */
    struct hir_fast_stmt *r;
};

/* The literal L next (its length known here, so that the compiler compares it inline) */
#define FS_LIT(s, L)                                                                   \
    ((s)->i + (sizeof(L) - 1) <= (s)->len && !memcmp((s)->t + (s)->i, (L), sizeof(L) - 1) && \
     ((s)->i += sizeof(L) - 1, true))

static struct hir_fv *fs_push(struct fs_scan *s, int kind, size_t begin, size_t end)
{
    if (s->r->nv == HIR_FS_VALS)
        return NULL;
    struct hir_fv *v = &s->r->v[s->r->nv++];
    memset(v, 0, sizeof *v);
    v->kind = (uint8_t)kind;
    v->begin = (uint32_t)begin;
    v->end = (uint32_t)end;
    return v;
}

static bool fs_digit(char c) { return c >= '0' && c <= '9'; }
static bool fs_lower(char c) { return c >= 'a' && c <= 'z'; }
static bool fs_alpha(char c) { return fs_lower(c) || (c >= 'A' && c <= 'Z'); }

/* After a word or a number: a byte that no rule of the scanner would take into it (a '.', '(',
 * '{' or '[' would make another token: a dotted name, a call or cast, an IterDomain) */
static bool fs_delim(const struct fs_scan *s, size_t k)
{
    return k < s->len && (s->t[k] == ' ' || s->t[k] == ')' || s->t[k] == ',' || s->t[k] == '\n' ||
                          s->t[k] == ':');
}

/* Digits at k (at most 18, so no overflow and no diagnostic) ending at a delimiter: their
 * value, and *end; false else (the INT rule then reads them, with its diagnostics). */
static bool fs_uint(const struct fs_scan *s, size_t k, int64_t *value, size_t *end)
{
    size_t e = k;
    while (e < s->len && fs_digit(s->t[e]))
        e++;
    if (e == k || e - k > 18 || !fs_delim(s, e))
        return false;
    int64_t v = 0;
    for (size_t j = k; j < e; j++)
        v = v * 10 + (s->t[j] - '0');
    *value = v;
    *end = e;
    return true;
}

/* The word [A-Za-z_][A-Za-z0-9_]* at k ending at a delimiter: its length, 0 else */
static size_t fs_word(const struct fs_scan *s, size_t k)
{
    if (k >= s->len || !(fs_alpha(s->t[k]) || s->t[k] == '_'))
        return 0;
    size_t e = k + 1;
    while (e < s->len && (fs_alpha(s->t[e]) || fs_digit(s->t[e]) || s->t[e] == '_'))
        e++;
    if (e - k > 64 || !fs_delim(s, e))
        return 0;
    return e - k;
}

/* The rule [a-z][a-z0-9]*_?{D}+ (a scalar symbol such as i84) matches the whole word w[0..n):
 * the number of its trailing digits, 0 when it does not match. */
static size_t fs_symbol_digits(const char *w, size_t n)
{
    size_t d = 0;
    while (d < n && fs_digit(w[n - 1 - d]))
        d++;
    if (d == 0 || d == n || !fs_lower(w[0]))
        return 0;
    size_t body = n - d;             /* w[1..body) is [a-z0-9]* with an optional final '_' */
    for (size_t j = 1; j < body; j++)
        if (!(fs_lower(w[j]) || fs_digit(w[j]) || (w[j] == '_' && j == body - 1)))
            return 0;
    return d;
}

/* A scalar reference as the scanner and scalar_ref read it: a number, true/false, a symbol or a
 * name (an identifier that is no keyword). `word`: an identifier only (HIR_FV_WORD). */
static bool fs_scalar_ref(struct fs_scan *s, bool word)
{
    size_t k = s->i, end;
    int64_t v;
    if (!word && fs_digit(s->t[k])) {
        if (!fs_uint(s, k, &v, &end))
            return false;
        struct hir_fv *f = fs_push(s, HIR_FV_INT, k, end);
        if (!f)
            return false;
        f->number = v;
        s->i = end;
        return true;
    }
    size_t n = fs_word(s, k);
    if (!n || (n >= 8 && !memcmp(s->t + k, "HostUnit", 8)))
        return false;
    const char *w = s->t + k;
    size_t d = fs_symbol_digits(w, n);
    hir_dtype dt;
    if (d && n - d < 8 && hir_dtype_of_symbol_prefix(w, n - d, &dt)) {
        if (word || d > 18)
            return false;
        int64_t num = 0;
        for (size_t j = n - d; j < n; j++)
            num = num * 10 + (w[j] - '0');
        if (num >= HIR_MAX_NAME_NUMBER)
            return false;
        struct hir_fv *f = fs_push(s, HIR_FV_SYMBOL, k, k + n);
        if (!f)
            return false;
        f->aux = (uint8_t)(n - d);
        f->number = num;
        s->i = k + n;
        return true;
    }
    unsigned h = (unsigned)(n * 7 + (unsigned char)w[0] * 3 + (unsigned char)w[n - 1]) % HIR_WORD_CACHE;
    struct hir_word *c = &s->st->words[h];
    const char *in = NULL;
    int kw = 0;
    if (c->interned && c->len == n && !memcmp(c->interned, w, n))
        in = c->interned;        /* an identifier read before (no keyword is kept here) */
    else {
        int64_t aux;
        kw = hir_keyword_find(s->st->kw_slots, w, n, &aux);
        if (kw && (word || (kw != KW_TRUE && kw != KW_FALSE)))
            return false;
        if (!kw) {               /* word_token interns every identifier it reads, as here */
            in = hir_intern(&s->st->ctx->prog->strings, w, n);
            *c = (struct hir_word){in, NULL, n};
        }
    }
    struct hir_fv *f = fs_push(s, kw ? HIR_FV_BOOL : word ? HIR_FV_WORD : HIR_FV_NAME, k, k + n);
    if (!f)
        return false;
    f->number = kw == KW_TRUE;
    f->u.str = in;
    f->aux = (uint8_t)h;
    s->i = k + n;
    return true;
}

/* true or false where the grammar reads its `bool` (no scalar is made) */
static bool fs_flag(struct fs_scan *s)
{
    if (!fs_scalar_ref(s, false) || s->r->v[s->r->nv - 1].kind != HIR_FV_BOOL)
        return false;
    s->r->v[s->r->nv - 1].kind = HIR_FV_FLAG;
    return true;
}

/* A binary operator followed by a space: its hir_binary_op, -1 else */
static int fs_binop(struct fs_scan *s)
{
    static const struct { char text[3]; uint8_t len, op; } ops[] = {
        {"<<", 2, HIR_BIN_SHL}, {">>", 2, HIR_BIN_SHR}, {"==", 2, HIR_BIN_EQ}, {"!=", 2, HIR_BIN_NE},
        {"<=", 2, HIR_BIN_LE}, {">=", 2, HIR_BIN_GE}, {"&&", 2, HIR_BIN_AND}, {"||", 2, HIR_BIN_OR},
        {"+", 1, HIR_BIN_ADD}, {"-", 1, HIR_BIN_SUB}, {"*", 1, HIR_BIN_MUL}, {"/", 1, HIR_BIN_DIV},
        {"%", 1, HIR_BIN_MOD}, {"<", 1, HIR_BIN_LT}, {">", 1, HIR_BIN_GT}, {"&", 1, HIR_BIN_BITAND},
        {"|", 1, HIR_BIN_BITOR}, {"^", 1, HIR_BIN_XOR},
    };
    for (size_t j = 0; j < sizeof ops / sizeof ops[0]; j++) {
        size_t n = ops[j].len;
        if (s->i + n < s->len && s->t[s->i] == ops[j].text[0] && (n == 1 || s->t[s->i + 1] == ops[j].text[1]) &&
            s->t[s->i + n] == ' ') {
            s->i += n + 1;
            return ops[j].op;
        }
    }
    return -1;
}

/* The end of the parenthesized text at i (the byte after its ')'), if it is 9 to HIR_EXPR_TEXT
 * bytes on one line; 0 else */
static size_t fs_paren_end(const struct fs_scan *s, size_t i)
{
    int depth = 0;
    for (size_t k = i; k < s->len && k - i < HIR_EXPR_TEXT; k++) {
        char c = s->t[k];
        if (c == '(')
            depth++;
        else if (c == ')' && --depth == 0)
            return k + 1 - i >= 9 ? k + 1 : 0;   /* "( a + b )" at least */
        else if (c == '\n')
            return 0;
    }
    return 0;
}

/* The table entry of an expression, from its first 8 bytes (it has at least 9): a spelling
 * that starts with a whole remembered expression is that expression, so the lookup need not
 * find the end first */
static unsigned fs_memo_slot(const char *t)
{
    uint64_t w;
    memcpy(&w, t, 8);
    w *= UINT64_C(0x9e3779b97f4a7c15);
    return (unsigned)(w >> 59) % HIR_EXPR_CACHE;
}

/* An inline scalar: a scalar reference, or "( a op b )" as the printer spaces it */
static bool fs_inline(struct fs_scan *s, int nest)
{
    if (s->i >= s->len)
        return false;
    if (s->t[s->i] != '(')
        return fs_scalar_ref(s, false);
    size_t pend = 0;
    unsigned slot = 0;
    if (nest == 0 && s->i + 8 <= s->len) {   /* spelled as an expression made before: its value */
        slot = fs_memo_slot(s->t + s->i);
        struct hir_expr_memo *m = &s->st->exprs[slot];
        if (m->value && s->i + m->len <= s->len && !memcmp(m->text, s->t + s->i, m->len)) {
            struct hir_fv *f = fs_push(s, HIR_FV_EXPR, s->i, s->i + m->len);
            if (!f)
                return false;
            f->u.scalar = m->value;
            s->i += m->len;
            return true;
        }
        pend = fs_paren_end(s, s->i);
    }
    size_t begin = s->i;
    if (nest >= 8 || !FS_LIT(s, "( "))
        return false;
    s->depth++;
    if (!fs_inline(s, nest + 1) || !FS_LIT(s, " "))
        return false;
    int op = fs_binop(s);
    if (op < 0 || !fs_inline(s, nest + 1) || !FS_LIT(s, " )"))
        return false;
    s->depth--;
    struct hir_fv *f = fs_push(s, HIR_FV_BINARY, begin, s->i);
    if (!f)
        return false;
    f->aux = (uint8_t)op;
    if (pend == s->i) {          /* remembered once made (fast_build.c) */
        struct hir_expr_memo *m = &s->st->exprs[slot];
        memcpy(m->text, s->t + begin, pend - begin);
        m->len = (uint32_t)(pend - begin);
        m->value = NULL;
        f->flags = (uint8_t)(slot + 1);
    }
    return true;
}

/* "istreamIdx6{8}" (lexer.l fast_iterdomain: the IterDomain rule and simple_iterdomain) */
static bool fs_iterdomain(struct fs_scan *s)
{
    struct hir_fast_id id;
    size_t e = fast_iterdomain(s->t, s->len, s->i, &id);
    if (!e)
        return false;
    struct hir_fv *f = fs_push(s, HIR_FV_ID, s->i, e);
    if (!f)
        return false;
    f->number = id.number;
    f->u.extent = id.extent;
    f->itype = (uint8_t)id.itype;
    f->ptype = (uint8_t)id.ptype;
    f->flags = (uint8_t)id.flags;
    s->i = e;
    return true;
}

/* A byte that ends the data type in a tensor head: {DTNAME} is [^\[\]\n ,(){}]* */
static bool fs_dtname_end(char c)
{
    static const bool end[256] = {['['] = 1, [']'] = 1, ['\n'] = 1, [' '] = 1, [','] = 1,
                                  ['('] = 1, [')'] = 1, ['{'] = 1, ['}'] = 1};
    return end[(unsigned char)c];
}

/* A tensor as the scanner reads it: its head "T12_l___bfloat[" (the tensor rule), then the
 * spelling of its first mention again (TENSOR_REF: before this statement, or earlier in it),
 * else a first mention in the fast shape (TENSOR_FAST). */
/* The head "T12_l___bfloat[" at s->i (lexer.l's tensor rule: "T"{D}+"_"[a-z]+"_"{DTNAME}"["):
 * its number, and where its memory letters [m, u) and data type [u + 1, b) are; b is the '['. */
struct fs_head { int64_t number; size_t m, u, b; };

static bool fs_tensor_head(const struct fs_scan *s, struct fs_head *h)
{
    const char *t = s->t;
    size_t at = s->i, k = at + 1, d = k;
    if (at >= s->len || t[at] != 'T')
        return false;
    while (d < s->len && fs_digit(t[d]))
        d++;
    if (d == k || d - k > 18 || d >= s->len || t[d] != '_')
        return false;
    h->number = 0;
    for (size_t j = k; j < d; j++)
        h->number = h->number * 10 + (t[j] - '0');
    h->m = h->u = d + 1;
    while (h->u < s->len && fs_lower(t[h->u]))
        h->u++;
    if (h->u == h->m || h->u >= s->len || t[h->u] != '_')
        return false;
    h->b = h->u + 1;
    while (h->b < s->len && !fs_dtname_end(t[h->b]))
        h->b++;
    return h->b < s->len && t[h->b] == '[' && h->number < HIR_MAX_NAME_NUMBER;
}

static bool fs_tensor(struct fs_scan *s)
{
    const char *t = s->t;
    struct fs_head h;
    if (!fs_tensor_head(s, &h))
        return false;
    size_t at = s->i, m = h.m, u = h.u, b = h.b, dt0 = u + 1;
    int64_t number = h.number;
    /* the tensor rule's action: a repeated spelling first, then the names in the head */
    size_t head_end = b + 1, end;
    hir_parse_ctx *ctx = s->st->ctx;
    hir_tensor *x = hir_tensor_get(ctx->prog, number);
    if (x && x->loc.src == ctx->src && (end = spelled_again(s->t, s->len, at, x->loc.begin, x->loc.end, true))) {
        struct hir_fv *f = fs_push(s, HIR_FV_TENSOR_REF, at, end);
        if (!f)
            return false;
        f->u.tensor = x;
        s->i = end;
        return true;
    }
    hir_mem mem;
    hir_dtype dt;
    if (!hir_mem_lookup_letter(t + m, u - m, &mem) || b == dt0 ||
        hir_dtype_match(t + dt0, b - dt0, &dt) != b - dt0)
        return false;
    if (!x) {   /* made by a mention earlier in this statement: the first such is its spelling */
        for (int j = 0; j < s->r->nv; j++) {
            const struct hir_fv *e = &s->r->v[j];
            if (e->kind != HIR_FV_TENSOR_FAST || s->r->t[e->aux].number != number)
                continue;
            if (!(end = spelled_again(s->t, s->len, at, e->begin, e->end, true)))
                break;
            struct hir_fv *f = fs_push(s, HIR_FV_TENSOR_AGAIN, at, end);
            if (!f)
                return false;
            f->aux = (uint8_t)j;
            s->i = end;
            return true;
        }
    }
    if (s->r->nt == HIR_FS_TENSORS || s->st->depth + s->depth + 2 > HIR_MAX_BRACKETS)
        return false;
    struct hir_fast_tensor *ft = &s->r->t[s->r->nt];
    end = fast_id_list(t, s->len, head_end, ft->ids, &ft->n);
    if (end)
        end = fast_tensor_tail(s->st, t, s->len, end, s->depth, &ft->mesh);
    if (!end)
        return false;
    struct hir_fv *f = fs_push(s, HIR_FV_TENSOR_FAST, at, end);
    if (!f)
        return false;
    ft->number = number;
    ft->mem = mem;
    ft->dtype = dt;
    ft->head_end = (uint32_t)head_end;
    f->aux = (uint8_t)s->r->nt++;
    s->i = end;
    return true;
}

/* Spaces, and inside brackets line breaks with the next line's indentation (lexer.l skips them
 * there); at least one byte when `need` */
static bool fs_space(struct fs_scan *s, bool need)
{
    size_t k = s->i;
    while (k < s->len && (s->t[k] == ' ' || (s->t[k] == '\n' && s->depth > 0)))
        k++;
    if (need && k == s->i)
        return false;
    s->i = k;
    return true;
}

/* A line break that ends the statement: lexer.l's "\n[ ]*" rule at depth 0, the next line not
 * continuing this one */
static bool fs_line_ends(const struct fs_scan *s)
{
    const char *t = s->t;
    size_t i = s->i;
    if (s->depth != 0 || i >= s->len || t[i] != '\n')
        return false;
    size_t k = i + 1;
    while (k < s->len && t[k] == ' ')
        k++;
    return !line_continues(k < s->len ? t[k] : 0, t + k, s->len - k);
}

/* "T = ALLOCATE(buffer=T, mem_type=global, size=1048576, zero_init=false, resets_to_zero=false)" */
static bool fs_allocate(struct fs_scan *s)
{
    s->depth++;
    if (!fs_tensor(s) || !FS_LIT(s, ", mem_type=") || !fs_scalar_ref(s, true) ||
        !FS_LIT(s, ", size=") || !fs_inline(s, 0) || !FS_LIT(s, ", zero_init=") || !fs_flag(s) ||
        !FS_LIT(s, ", resets_to_zero=") || !fs_flag(s) || !FS_LIT(s, ")"))
        return false;
    s->depth--;
    s->r->kind = HIR_FS_ALLOCATE;
    return true;
}

/* "T\n   = HirAliasSelect( T, axis = istreamIdx10{8}, index = streamIdx )" */
static bool fs_alias_select(struct fs_scan *s)
{
    s->depth++;
    if (!fs_tensor(s) || !FS_LIT(s, ", axis = ") || !fs_iterdomain(s) || !FS_LIT(s, ", index = ") ||
        !fs_scalar_ref(s, false) || !FS_LIT(s, " )"))
        return false;
    s->depth--;
    s->r->kind = HIR_FS_ALIAS_SELECT;
    return true;
}

/* "T\n   = linear(T,\n   T   ,\n   T   )": two or three tensor operands; matmul: two */
static bool fs_linear(struct fs_scan *s, int kind)
{
    s->depth++;
    int n = 0;
    for (;;) {
        if (!fs_tensor(s))
            return false;
        n++;
        fs_space(s, false);
        if (FS_LIT(s, ")"))
            break;
        if (n == (kind == HIR_FS_MATMUL ? 2 : 3) || !FS_LIT(s, ",") || !fs_space(s, false))
            return false;
    }
    s->depth--;
    if (n < 2)
        return false;
    s->r->kind = kind;
    return true;
}

/* A statement that starts with its output tensor */
static bool fs_tensor_stmt(struct fs_scan *s)
{
    if (!fs_tensor(s))
        return false;
    if (FS_LIT(s, " = ALLOCATE(buffer="))
        return fs_allocate(s);
    if (!FS_LIT(s, "\n"))
        return false;
    fs_space(s, false);
    if (FS_LIT(s, "= HirAliasSelect( "))
        return fs_alias_select(s);
    if (FS_LIT(s, "= linear("))
        return fs_linear(s, HIR_FS_LINEAR);
    if (FS_LIT(s, "= matmul("))
        return fs_linear(s, HIR_FS_MATMUL);
    return false;
}

/* A number after a keyword: the expression number of P2PCommunication and Wait */
static bool fs_stmt_number(struct fs_scan *s)
{
    size_t end;
    if (s->i >= s->len || !fs_digit(s->t[s->i]) || !fs_uint(s, s->i, &s->r->number, &end))
        return false;
    s->r->number_begin = (uint32_t)s->i;
    s->r->number_end = (uint32_t)end;
    s->i = end;
    return true;
}

/* "P2PCommunication 33 (type=recv, buffer=T, peer=streamIdx, backend=NCCL)" */
static bool fs_p2p(struct fs_scan *s)
{
    if (!fs_stmt_number(s) || !FS_LIT(s, " (type="))
        return false;
    s->depth++;
    if (!fs_scalar_ref(s, true) || !FS_LIT(s, ", buffer=") || !fs_tensor(s) || !FS_LIT(s, ", peer=") ||
        !fs_scalar_ref(s, false) || !FS_LIT(s, ", backend=") || !fs_scalar_ref(s, true) ||
        !FS_LIT(s, ")"))
        return false;
    s->depth--;
    s->r->kind = HIR_FS_P2P;
    return true;
}

/* The 2026 "(Stream X)" after SetCurrentStream or Synchronize, its '(' read: an address
 * "0x1c1e0b80" (the scanner's address rule: at most 16 hex digits) or an index */
static bool fs_stream_2026(struct fs_scan *s)
{
    s->r->form_2026 = true;
    s->depth++;
    const char *t = s->t;
    size_t k = s->i;
    if (k + 2 < s->len && t[k] == '0' && t[k + 1] == 'x') {
        size_t e = k + 2;
        while (e < s->len && ((t[e] >= '0' && t[e] <= '9') || (t[e] >= 'a' && t[e] <= 'f')))
            e++;
        if (e == k + 2 || e - k > 18 || e >= s->len || t[e] != ')')
            return false;
        struct hir_fv *f = fs_push(s, HIR_FV_ADDR, k, e);
        if (!f)
            return false;
        f->u.str = hir_intern(&s->st->ctx->prog->strings, t + k, e - k);   /* as the rule does */
        s->i = e;
    } else if (!fs_inline(s, 0))
        return false;
    if (!FS_LIT(s, ")"))
        return false;
    s->depth--;
    return true;
}

/* The statements that start with a keyword */
static bool fs_keyword_stmt(struct fs_scan *s)
{
    struct hir_fast_stmt *r = s->r;
    switch (s->t[s->i]) {
    case 'W':
        r->kind = HIR_FS_WAIT;
        if (FS_LIT(s, "Wait(Communication ")) {   /* 2026 */
            r->form_2026 = true;
            return fs_stmt_number(s) && FS_LIT(s, ")");
        }
        return FS_LIT(s, "Wait Communication ") && fs_stmt_number(s);
    case 'S':
        if (FS_LIT(s, "SetCurrentStream to Stream ")) {
            r->kind = HIR_FS_SET_STREAM;
            return fs_inline(s, 0);
        }
        if (FS_LIT(s, "SetCurrentStream(Stream ")) {
            r->kind = HIR_FS_SET_STREAM;
            return fs_stream_2026(s);
        }
        r->kind = HIR_FS_SYNC_STREAM;
        if (FS_LIT(s, "Synchronize(Stream "))
            return fs_stream_2026(s);
        return FS_LIT(s, "Synchronize Stream ") && fs_inline(s, 0);
    case 'P':
        return FS_LIT(s, "P2PCommunication ") && fs_p2p(s);
    case 'F':
        r->kind = HIR_FS_FOR;
        r->kw_end = (uint32_t)s->i + 3;
        /* the loop index is a name or a symbol (a literal is an error the grammar reports) */
        return FS_LIT(s, "FOR ") && fs_scalar_ref(s, false) &&
               (r->v[0].kind == HIR_FV_NAME || r->v[0].kind == HIR_FV_SYMBOL) &&
               FS_LIT(s, " in ") && fs_iterdomain(s) && FS_LIT(s, ":");
    case 'I':
        r->kind = HIR_FS_IF;
        r->kw_end = (uint32_t)s->i + 2;
        return FS_LIT(s, "IF ") && fs_scalar_ref(s, true) && FS_LIT(s, " ") && fs_inline(s, 0) &&
               FS_LIT(s, ":");
    default:
        return false;
    }
}

/* The statement at st->offset (its first byte) read into r, whose begin, words and exprs the
 * caller set and whose nv, nt and form_2026 it cleared: true with *end at the statement's line
 * break; false when it is not one of the shapes above (r is then scratch). The text must be
 * intact from st->offset on (lexer.l's fast_stmt puts back the byte flex holds). */
bool hir_fast_scan(struct hir_lexstate *st, struct hir_fast_stmt *r, size_t *end)
{
    struct fs_scan s = {st, st->ctx->src->text, st->ctx->src->len, st->offset, 0, r};
    bool ok = s.i < s.len && (s.t[s.i] == 'T' ? fs_tensor_stmt(&s) : fs_keyword_stmt(&s)) &&
              fs_line_ends(&s) && s.i + 1 - r->begin <= HIR_MAX_STMT_BYTES;
    *end = s.i;
    return ok;
}
