/* print.c — writes the IR exactly as nvFuser's container printer does: indentation of two
 * spaces per level, the fixed-width continuation lines of linear/matmul, the trailing ", "
 * of ShareMemHandles entries, the footer and the Index-definitions trailer. */
#include "dialect/hir.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Output is collected in a buffer (`out`) and handed to stdio in large blocks: the printer
 * writes every byte of a round trip, and per-call stdio costs (locking, format parsing, strlen)
 * dominated the profiles. A whole program is printed through a large buffer on the heap, whose
 * blocks stdio passes straight to the file (no second copy); the other public functions use a
 * small one on the stack. Every tensor of a program prints its mesh: the text of the last mesh
 * printed is kept and copied (meshes are interned, so the pointer names the text). A program
 * prints most tensors several times (an ALLOCATE names its buffer twice, a weight appears in
 * every linear): the whole-program printer keeps the text of recent tensors, and of scalar
 * expressions printed inline (shared by every statement that names them), in a small
 * direct-mapped cache keyed by the object (nothing changes the IR while it prints). */
enum { OUT_SMALL = 1 << 12, OUT_LARGE = 1 << 18, MESH_TEXT = 240, TENSOR_TEXT = 240, TENSOR_SLOTS = 256 };

typedef struct tensor_text {
    const void *t;               /* the tensor or scalar whose text this is; NULL: empty */
    size_t len;
    char text[TENSOR_TEXT];
} tensor_text;

typedef struct out {
    FILE *f;
    size_t n, cap;
    size_t flushes;              /* times the buffer was handed to stdio */
    const hir_mesh *mesh;        /* the mesh whose text is in mesh_text, or NULL */
    size_t mesh_len;
    char mesh_text[MESH_TEXT];
    tensor_text *tensors;        /* TENSOR_SLOTS entries, or NULL (no cache) */
    char buf[];                  /* cap bytes */
} out;

typedef struct out_small {       /* an `out` with OUT_SMALL bytes, for the stack */
    out o;
    char room[OUT_SMALL];
} out_small;

static void o_flush(out *o)
{
    if (o->n)
        fwrite(o->buf, 1, o->n, o->f);
    o->n = 0;
    o->flushes++;
}

static inline void o_mem(out *o, const char *s, size_t n)
{
    if (o->n + n > o->cap) {
        o_flush(o);
        if (n > o->cap) {
            fwrite(s, 1, n, o->f);
            return;
        }
    }
    memcpy(o->buf + o->n, s, n);
    o->n += n;
}

static inline void o_c(out *o, char c)
{
    if (o->n == o->cap)
        o_flush(o);
    o->buf[o->n++] = c;
}

#define PUT(o, lit) o_mem((o), (lit), sizeof(lit) - 1)

/* Direct writes: o_room makes room for k bytes (k <= OUT_SMALL) and returns where they go;
 * the w_* helpers write there and return the end, which o_done records. Pieces of known size
 * (a number, a table's name, fixed punctuation) take one capacity check between them. */
static inline char *o_room(out *o, size_t k)
{
    if (o->cap - o->n < k)
        o_flush(o);
    return o->buf + o->n;
}

static inline void o_done(out *o, char *p) { o->n = (size_t)(p - o->buf); }

static inline char *w_mem(char *p, const char *s, size_t n)
{
    memcpy(p, s, n);
    return p + n;
}

/* The strings printed are names and keywords of a few to a few dozen bytes: measured and
 * copied as a block (a byte loop costs several instructions per byte). */
static void put_str(out *f, const char *s) { o_mem(f, s, strlen(s)); }

static const char digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

enum { W_INT_MAX = 20 };         /* "-9223372036854775808" */

/* Decimal, two digits per division, written in place (at most W_INT_MAX bytes). */
static inline char *w_int(char *p, long long v)
{
    unsigned long long u = (unsigned long long)v;
    if (v < 0) {
        *p++ = '-';
        u = 0ULL - u;
    }
    if (u < 10) {
        *p++ = (char)('0' + u);
        return p;
    }
    if (u < 100) {
        memcpy(p, digit_pairs + 2 * u, 2);
        return p + 2;
    }
    if (u < 10000) {             /* extents and numbers of most programs: 32-bit arithmetic */
        unsigned x = (unsigned)u, hi = x / 100, lo = x % 100;
        if (hi < 10)
            *p++ = (char)('0' + hi);
        else {
            memcpy(p, digit_pairs + 2 * hi, 2);
            p += 2;
        }
        memcpy(p, digit_pairs + 2 * lo, 2);
        return p + 2;
    }
    int nd;                      /* the digit count: comparisons in 32 bits, divisions above */
    if (u <= 0xffffffffu) {
        unsigned x = (unsigned)u;
        nd = x < 100000 ? 5 : x < 1000000 ? 6 : x < 10000000 ? 7 : x < 100000000 ? 8
           : x < 1000000000 ? 9 : 10;
    } else {
        nd = 10;
        for (unsigned long long t = u / 10000000000ULL; t; t /= 10)
            nd++;
    }
    char *e = p + nd, *q = e;
    while (u > 0xffffffffu) {    /* two digits at a time from the right, in 64 bits ... */
        unsigned d = (unsigned)(u % 100);
        u /= 100;
        q -= 2;
        memcpy(q, digit_pairs + 2 * d, 2);
    }
    unsigned x = (unsigned)u;    /* ... then in 32 (numbers of large programs stay here) */
    while (x >= 100) {
        unsigned d = x % 100;
        x /= 100;
        q -= 2;
        memcpy(q, digit_pairs + 2 * d, 2);
    }
    if (x >= 10)
        memcpy(q - 2, digit_pairs + 2 * x, 2);
    else
        q[-1] = (char)('0' + x);
    return e;
}

static void put_int(out *f, long long v) { o_done(f, w_int(o_room(f, W_INT_MAX), v)); }

static void o_printf(out *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void o_printf(out *f, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof buf) {
        o_mem(f, buf, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    va_start(ap, fmt);
    if (!big) {                   /* no memory for the text: let stdio format it */
        o_flush(f);
        vfprintf(f->f, fmt, ap);
        va_end(ap);
        return;
    }
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    o_mem(f, big, (size_t)n);
    free(big);
}

static void o_scalar_print_inline(const hir_scalar *s, out *f);
static void o_stmt_print(const hir_stmt *s, int level, out *f);

static const char blanks[] = "                                                                ";

static void indent(out *f, int level)
{
    size_t k = 2 * (size_t)(level > 0 ? level : 0);
    for (; k > sizeof blanks - 1; k -= sizeof blanks - 1)
        o_mem(f, blanks, sizeof blanks - 1);
    o_mem(f, blanks, k);
}

static void spaces(out *f, int n)
{
    size_t k = (size_t)(n > 0 ? n : 0);
    for (; k > sizeof blanks - 1; k -= sizeof blanks - 1)
        o_mem(f, blanks, sizeof blanks - 1);
    o_mem(f, blanks, k);
}

static void mesh_print_text(const hir_mesh *m, out *f)
{
    PUT(f, "DeviceMesh");
    /* one brace level per dimension; elements separated by single spaces */
    int64_t idx = 0;
    int nd = m->ndims ? m->ndims : 1;
    int64_t inner = m->ndims ? m->dims[m->ndims - 1] : m->ndevices;
    if (nd == 1) {
        o_c(f, '{');
        for (int64_t i = 0; i < inner; i++)
            { if (i) o_c(f, ' '); put_int(f, m->devices[i]); }
        o_c(f, '}');
        return;
    }
    int64_t counters[16] = {0};
    o_c(f, '{');
    for (int d = 1; d < nd; d++)
        o_c(f, '{');
    for (;;) {
        for (int64_t i = 0; i < inner; i++, idx++)
            { if (i) o_c(f, ' '); put_int(f, m->devices[idx]); }
        o_c(f, '}');
        int d = nd - 2;
        for (; d >= 0; d--) {
            if (++counters[d] < m->dims[d])
                break;
            counters[d] = 0;
            o_c(f, '}');
        }
        if (d < 0)
            return;
        for (int k = d + 1; k < nd; k++)
            o_c(f, '{');
    }
}

/* The mesh's text, from the copy of the last one printed when it is this mesh: printed once
 * into the buffer, it is copied aside when it is short enough (and the buffer did not flush
 * in between). */
static void mesh_print(const hir_mesh *m, out *f)
{
    if (m == f->mesh) {
        o_mem(f, f->mesh_text, f->mesh_len);
        return;
    }
    size_t at = f->n, flushes = f->flushes;
    mesh_print_text(m, f);
    f->mesh = NULL;
    if (f->flushes == flushes && f->n - at <= MESH_TEXT) {
        f->mesh_len = f->n - at;
        memcpy(f->mesh_text, f->buf + at, f->mesh_len);
        f->mesh = m;
    }
}

static void o_scalar_print_ref(const hir_scalar *s, out *f)
{
    switch (s->kind) {
    case HIR_SC_NAMED:
        put_str(f, s->name);
        return;
    case HIR_SC_SYMBOL:
        put_str(f, s->name);
        put_int(f, s->number);
        return;
    case HIR_SC_INT:
        put_int(f, s->ival);
        return;
    case HIR_SC_BOOL:
        put_str(f, s->ival ? "true" : "false");
        return;
    case HIR_SC_FLOAT:
        if (s->name)
            put_str(f, s->name);
        else
            o_printf(f, "%s(%.17g)", hir_dtype_name(s->dtype), s->fval);
        return;
    case HIR_SC_ANON:
        o_scalar_print_inline(s, f);
        return;
    }
}

/* The text of x (a tensor, or a scalar expression printed inline) from the cache when it is
 * there, else printed by fn and kept when it fits. Keys are the objects themselves: a tensor
 * and a scalar are never the same object, so both kinds share the slots. */
static void o_cached(out *f, const void *x, void (*fn)(const void *, out *))
{
    if (!f->tensors) {
        fn(x, f);
        return;
    }
    uintptr_t k = (uintptr_t)x;
    tensor_text *e = &f->tensors[((k >> 4) ^ (k >> 12)) & (TENSOR_SLOTS - 1)];
    if (e->t == x) {
        o_mem(f, e->text, e->len);
        return;
    }
    size_t at = f->n, flushes = f->flushes;
    fn(x, f);
    if (f->flushes == flushes && f->n - at <= TENSOR_TEXT) {
        e->t = x;
        e->len = f->n - at;
        memcpy(e->text, f->buf + at, e->len);
    }
}

static void sexpr_print(const hir_sexpr *e, out *f, bool inline_args)
{
    void (*arg)(const hir_scalar *, out *) = inline_args ? o_scalar_print_inline : o_scalar_print_ref;
    if (e->kind == HIR_SX_BINARY && e->infix) {
        arg(e->args[0], f);
        o_c(f, ' ');
        put_str(f, hir_binary_infix(e->op));
        o_c(f, ' ');
        arg(e->args[1], f);
    } else if (e->kind == HIR_SX_UNARY && e->infix) {
        /* a bare operand ("d10 = double(4);") is a SET with no prefix */
        if (hir_unary_prefix(e->op))
            put_str(f, hir_unary_prefix(e->op));
        arg(e->args[0], f);
    } else {
        put_str(f, e->fn);
        o_c(f, '(');
        for (int i = 0; i < e->nargs; i++) {
            if (i)
                PUT(f, ", ");
            arg(e->args[i], f);
        }
        o_c(f, ')');
    }
}

static void scalar_expr_text(const void *x, out *f)
{
    PUT(f, "( ");
    sexpr_print(((const hir_scalar *)x)->def, f, true);
    PUT(f, " )");
}

static void o_scalar_print_inline(const hir_scalar *s, out *f)
{
    if (s->def && (s->kind == HIR_SC_ANON || s->inline_expand)) {
        o_cached(f, s, scalar_expr_text);   /* expressions are shared: one text per scalar */
    } else if (s->kind == HIR_SC_ANON) {
        PUT(f, "( ? )");
    } else {
        o_scalar_print_ref(s, f);
    }
}

static void o_sexpr_print_def(const hir_sexpr *e, out *f) { sexpr_print(e, f, false); }

static void id_flags_print(const hir_iterdomain *id, out *f)
{
    if (id->flags & HIR_ID_RFACTOR)
        PUT(f, "rf");
    if (id->flags & HIR_ID_PADDED)
        PUT(f, "_p");
    if (id->flags & HIR_ID_CLUSTERED)
        PUT(f, "_c");
}

static void o_iterdomain_print(const hir_iterdomain *id, out *f)
{
    size_t pl = hir_ptype_name_len(id->ptype);     /* at most a dozen bytes */
    char *p = o_room(f, pl + W_INT_MAX + 2);
    *p++ = hir_itype_letter(id->itype);
    p = w_mem(p, hir_ptype_name(id->ptype), pl);
    p = w_int(p, id->number);
    *p++ = '{';
    o_done(f, p);
    const hir_scalar *x = id->extent;
    if (!id->range && x && x->kind == HIR_SC_INT && !(x->def && x->inline_expand)) {
        /* the common IterDomain: a literal extent, no range */
        p = o_room(f, W_INT_MAX + 1);
        p = w_int(p, x->ival);
        *p++ = '}';
        o_done(f, p);
        if (id->flags)
            id_flags_print(id, f);
        return;
    }
    if (hir_id_start(id)) {
        o_scalar_print_inline(hir_id_start(id), f);
        PUT(f, " : ");
    }
    if (hir_id_stop(id)) {
        o_scalar_print_inline(hir_id_stop(id), f);
        PUT(f, " : ");
    }
    if (id->extent)
        o_scalar_print_inline(id->extent, f);
    if (hir_id_expanded(id)) {
        PUT(f, " ex ");
        o_scalar_print_inline(hir_id_expanded(id), f);
    }
    o_c(f, '}');
    id_flags_print(id, f);
}

static void tensor_print_text(const hir_tensor *t, out *f)
{
    size_t ml = hir_mem_letter_len(t->mem), dl = hir_dtype_name_len(t->dtype);
    char *p = o_room(f, W_INT_MAX + ml + dl + 4);    /* names of a few dozen bytes */
    *p++ = 'T';
    p = w_int(p, t->number);
    *p++ = '_';
    p = w_mem(p, hir_mem_letter(t->mem), ml);
    *p++ = '_';
    p = w_mem(p, hir_dtype_name(t->dtype), dl);
    *p++ = '[';
    o_done(f, p);
    for (int i = 0; i < t->nloop; i++) {
        if (i)
            PUT(f, ", ");
        o_iterdomain_print(t->loop[i], f);
    }
    o_c(f, ']');
    if (t->annotations)
        put_str(f, t->annotations);
    if (t->mesh) {
        PUT(f, " (");
        mesh_print(t->mesh, f);
        o_c(f, ')');
    }
}

static void tensor_text_fn(const void *t, out *f) { tensor_print_text(t, f); }

static void o_tensor_print(const hir_tensor *t, out *f) { o_cached(f, t, tensor_text_fn); }

static void value_print(const hir_value *v, out *f)
{
    if (v->kind == HIR_VAL_TENSOR)
        o_tensor_print((const hir_tensor *)v, f);
    else
        o_scalar_print_ref((const hir_scalar *)v, f);
}

/* In the 2026 form a bare number is a stream index: an object without an address of its own
 * (a 2025 number, or a stream a pass made) shows the address hir_stream_invented_addr gives. */
static void stream_print(const hir_stream_ref *r, hir_form form, out *f)
{
    PUT(f, "Stream ");
    if (r->addr)
        put_str(f, r->addr);
    else if (r->index)
        o_scalar_print_inline(r->index, f);
    else if (form == HIR_FORM_2026)
        o_printf(f, "0x%llx", (unsigned long long)hir_stream_invented_addr(r->number));
    else
        put_int(f, r->number);
}

/* ", backend=X", unless the communication was read without it and is still NCCL */
static void comm_backend(const hir_comm *c, out *f)
{
    if (c->backend_unprinted && c->backend == HIR_BK_NCCL)
        return;
    PUT(f, ", backend=");
    put_str(f, hir_backend_kind_name(c->backend));
}

static void p2p_inline(const hir_comm *c, out *f)
{
    PUT(f, "P2PCommunication ");
    put_int(f, c->number);
    if (c->is_send)
        PUT(f, " (type=send, buffer=");
    else
        PUT(f, " (type=recv, buffer=");
    o_tensor_print(c->buffer, f);
    PUT(f, ", peer=");
    o_scalar_print_ref(c->peer, f);
    comm_backend(c, f);
    o_c(f, ')');
}

static void comm_inline(const hir_comm *c, out *f)
{
    o_printf(f, "Communication %lld (type=%s, team=(", (long long)c->number, hir_comm_type_name(c->type));
    for (int i = 0; i < c->nteam; i++)
        { if (i) o_c(f, ' '); put_int(f, c->team[i]); }
    if (c->team_truncated)
        PUT(f, " ...");
    o_c(f, ')');
    if (c->root) {
        PUT(f, ", root=");
        o_scalar_print_inline(c->root, f);
    }
    if (c->input) {
        PUT(f, ", input=");
        o_tensor_print(c->input, f);
    }
    if (c->output) {
        PUT(f, ", output=");
        o_tensor_print(c->output, f);
    }
    comm_backend(c, f);
    o_c(f, ')');
}

static void block_print(const hir_block *b, int level, out *f)
{
    for (int i = 0; i < b->stmts.n; i++)
        o_stmt_print(b->stmts.items[i], level, f);
}

/* "IND(L) T\nIND(L+1) = " — the two-line head shared by most tensor statements */
static void out_head(const hir_stmt *s, int level, out *f)
{
    indent(f, level);
    o_tensor_print(s->out, f);
    o_c(f, '\n');
    indent(f, level + 1);
    PUT(f, " = ");
}

static hir_tensor *in_tensor(const hir_stmt *s, int i) { return hir_value_tensor(s->in[i]); }

/* One printer per statement format (the format column of dialect/defs/ops.def). */
static void p_allocate(const hir_stmt *s, int level, out *f, const hir_opinfo *info)
{
    indent(f, level);
    o_tensor_print(s->out, f);
    PUT(f, " = ALLOCATE(buffer=");
    o_tensor_print(s->out, f);
    PUT(f, ", mem_type=");
    put_str(f, hir_mem_name(s->u.alloc.mem));
    PUT(f, ", size=");
    o_scalar_print_inline(s->u.alloc.size, f);
    if (s->u.alloc.zero_init)
        PUT(f, ", zero_init=true");
    else
        PUT(f, ", zero_init=false");
    if (s->u.alloc.resets_to_zero)
        PUT(f, ", resets_to_zero=true)\n");
    else
        PUT(f, ", resets_to_zero=false)\n");
    if (s->u.alloc.alias) {
        indent(f, level);
        PUT(f, "  .alias=");
        o_tensor_print(s->u.alloc.alias, f);
        o_c(f, '\n');
    }
}

static void p_stream(const hir_stmt *s, int level, out *f, const hir_opinfo *info)
{
    indent(f, level);
    if (s->form == HIR_FORM_2026) {   /* "Stream 0x… = GetCurrentStream()", "Synchronize(Stream S)" */
        if (s->op == HIR_OP_GET_STREAM) {
            stream_print(&s->u.stream, s->form, f);
            PUT(f, " = ");
            put_str(f, info->keyword);
            PUT(f, "()\n");
        } else {
            put_str(f, info->keyword);
            o_c(f, '(');
            stream_print(&s->u.stream, s->form, f);
            PUT(f, ")\n");
        }
        return;
    }
    put_str(f, info->keyword);
    put_str(f, s->op == HIR_OP_GET_STREAM ? " into " : s->op == HIR_OP_SET_STREAM ? " to " : " ");
    stream_print(&s->u.stream, s->form, f);
    o_c(f, '\n');
}

static void p_for(const hir_stmt *s, int level, out *f, const hir_opinfo *info)
{
    indent(f, level);
    PUT(f, "FOR ");
    o_scalar_print_ref(s->u.kfor.index, f);
    PUT(f, " in ");
    o_iterdomain_print(s->u.kfor.id, f);
    PUT(f, ":\n");
    block_print(&s->body, level + 1, f);
}

static void p_host_for(const hir_stmt *s, int level, out *f, const hir_opinfo *info)
{
    indent(f, level);
    PUT(f, "FOR ");
    o_scalar_print_ref(s->u.hfor.index, f);
    PUT(f, " from ");
    o_scalar_print_inline(s->u.hfor.start, f);
    PUT(f, " to ");
    o_scalar_print_inline(s->u.hfor.stop, f);
    PUT(f, ":\n");
    block_print(&s->body, level + 1, f);
}

static void p_if(const hir_stmt *s, int level, out *f, const hir_opinfo *info)
{
    indent(f, level);
    PUT(f, "IF ");
    put_str(f, s->u.cond.pred_type);
    o_c(f, ' ');
    o_scalar_print_inline(s->u.cond.pred, f);
    PUT(f, ":\n");
    block_print(&s->body, level + 1, f);
    if (s->else_body.stmts.n) {
        indent(f, level);
        PUT(f, "ELSE:\n");
        block_print(&s->else_body, level + 1, f);
    }
}

static void p_alias_select(const hir_stmt *s, int level, out *f, const hir_opinfo *info)
{
    out_head(s, level, f);
    put_str(f, info->keyword);
    PUT(f, "( ");
    o_tensor_print(in_tensor(s, 0), f);
    PUT(f, ", axis = ");
    o_iterdomain_print(s->u.sel.axis, f);
    PUT(f, ", index = ");
    o_scalar_print_ref(s->u.sel.index, f);
    PUT(f, " )\n");
}

static void p_shard(const hir_stmt *s, int level, out *f, const hir_opinfo *info)
{
    indent(f, level);
    o_tensor_print(s->out, f);
    PUT(f, " = ShardByStream(");
    o_tensor_print(in_tensor(s, 0), f);
    put_str(f, s->form == HIR_FORM_2026 ? ", stream_index=" : ", stream_index = ");
    o_scalar_print_ref(s->u.stream_index, f);
    PUT(f, ")\n");
}

static void p_symview(const hir_stmt *s, int level, out *f, const hir_opinfo *info)
{
    indent(f, level);
    o_tensor_print(s->out, f);
    PUT(f, " = SymmetricContiguousView(");
    o_tensor_print(in_tensor(s, 0), f);
    PUT(f, ")\n");
}

static void p_loadstore(const hir_stmt *s, int level, out *f, const hir_opinfo *info)
{
    out_head(s, level, f);
    put_str(f, info->keyword);
    if (s->u.ls.permute)
        PUT(f, ".Permute");
    PUT(f, "( ");
    value_print(s->in[0], f);
    if (s->u.ls.cache_op)
        o_printf(f, ", cache_op=%s", s->u.ls.cache_op);
    PUT(f, " )\n");
}

static void p_linear(const hir_stmt *s, int level, out *f, const hir_opinfo *info)
{
    out_head(s, level, f);
    PUT(f, "linear(");
    value_print(s->in[0], f);
    PUT(f, ",\n");
    indent(f, level + 1);
    spaces(f, 10);
    value_print(s->in[1], f);
    if (s->nin > 2) {
        indent(f, level + 1);
        PUT(f, ",\n");
        spaces(f, 10);
        value_print(s->in[2], f);
    }
    indent(f, level + 1);
    PUT(f, ")\n");
}

static void p_matmul(const hir_stmt *s, int level, out *f, const hir_opinfo *info)
{
    out_head(s, level, f);
    PUT(f, "matmul(");
    value_print(s->in[0], f);
    PUT(f, ",\n");
    indent(f, level + 1);
    spaces(f, 10);
    value_print(s->in[1], f);
    PUT(f, ")\n");
}

static void p_unary(const hir_stmt *s, int level, out *f, const hir_opinfo *info)
{
    out_head(s, level, f);
    if (s->u.ew.infix) {
        put_str(f, hir_unary_prefix(s->u.ew.op));
        value_print(s->in[0], f);
    } else {
        o_printf(f, "%s(", s->u.ew.fn);
        value_print(s->in[0], f);
        o_c(f, ')');
    }
    PUT(f, ";\n");
}

static void p_binary(const hir_stmt *s, int level, out *f, const hir_opinfo *info)
{
    out_head(s, level, f);
    if (s->u.ew.infix) {
        value_print(s->in[0], f);
        o_c(f, '\n');
        indent(f, level + 1);
        o_printf(f, " %s ", hir_binary_infix(s->u.ew.op));
        value_print(s->in[1], f);
    } else {
        o_printf(f, "%s(", s->u.ew.fn);
        value_print(s->in[0], f);
        o_c(f, '\n');
        indent(f, level + 1);
        PUT(f, ", ");
        value_print(s->in[1], f);
        o_c(f, ')');
    }
    PUT(f, ";\n");
}

static void p_ternary(const hir_stmt *s, int level, out *f, const hir_opinfo *info)
{
    out_head(s, level, f);
    o_printf(f, "%s(", s->u.ew.fn);
    for (int i = 0; i < 3; i++) {
        if (i) {
            o_c(f, '\n');
            indent(f, level + 1);
            PUT(f, ", ");
        }
        value_print(s->in[i], f);
    }
    PUT(f, ");\n");
}

static void p_reduction(const hir_stmt *s, int level, out *f, const hir_opinfo *info)
{
    indent(f, level);
    o_tensor_print(s->out, f);
    o_c(f, '\n');
    indent(f, level);
    PUT(f, "   = reduction( ");
    o_tensor_print(in_tensor(s, 0), f);
    o_printf(f, ", op = %s, initial value = ", s->u.red.op_name);
    o_scalar_print_ref(s->u.red.init, f);
    o_printf(f, ", allreduce = %s )\n", s->u.red.allreduce ? "true" : "false");
}

static void p_slice(const hir_stmt *s, int level, out *f, const hir_opinfo *info)
{
    indent(f, level);
    o_tensor_print(s->out, f);
    o_c(f, '\n');
    indent(f, level);
    PUT(f, "   = slice( ");
    o_tensor_print(in_tensor(s, 0), f);
    PUT(f, ", {");
    for (int i = 0; i < s->u.slice.nranges; i++) {
        const hir_slice_range *r = &s->u.slice.ranges[i];
        PUT(f, " {");
        o_scalar_print_ref(r->start, f);
        PUT(f, ", ");
        o_scalar_print_ref(r->stop, f);
        PUT(f, ", ");
        o_scalar_print_ref(r->step, f);
        o_c(f, '}');
    }
    PUT(f, " } )\n");
}

static void p_view(const hir_stmt *s, int level, out *f, const hir_opinfo *info)
{
    indent(f, level);
    o_tensor_print(s->out, f);
    PUT(f, " = ");
    put_str(f, s->form == HIR_FORM_2026 && info->keyword2026 ? info->keyword2026 : info->keyword);
    PUT(f, "( ");
    o_tensor_print(in_tensor(s, 0), f);
    PUT(f, " )\n");
}

/* FullOp::toString: "{" extents "}" then ", " and the value (no ", " when there is no extent) */
static void p_full(const hir_stmt *s, int level, out *f, const hir_opinfo *info)
{
    indent(f, level);
    o_tensor_print(s->out, f);
    o_c(f, '\n');
    indent(f, level + 1);
    PUT(f, " = full({");
    for (int i = 0; i + 1 < s->nin; i++) {
        if (i)
            PUT(f, ", ");
        value_print(s->in[i], f);
    }
    put_str(f, s->nin > 1 ? "}, " : "}");
    value_print(s->in[s->nin - 1], f);
    PUT(f, ");\n");
}

static void p_grouped_mma(const hir_stmt *s, int level, out *f, const hir_opinfo *info)
{
    indent(f, level);
    o_tensor_print(s->out, f);
    PUT(f, " = GroupedMmaOp(mat1=");
    value_print(s->in[0], f);
    PUT(f, ", mat2=");
    value_print(s->in[1], f);
    PUT(f, ", offsets=");
    value_print(s->in[2], f);
    PUT(f, ")\n");
}

static void p_flags(const hir_stmt *s, int level, out *f, const hir_opinfo *info)
{
    indent(f, level);
    o_tensor_print(s->out, f);
    o_c(f, '\n');
    indent(f, level);
    o_printf(f, "   = %s( ", info->keyword);
    o_tensor_print(in_tensor(s, 0), f);
    PUT(f, ", flags = {");
    for (int i = 0; i < s->u.flags.nflags; i++)
        o_printf(f, i ? ", %s" : "%s", s->u.flags.flags[i] ? "true" : "false");
    PUT(f, "} )\n");
}

static void p_comm(const hir_stmt *s, int level, out *f, const hir_opinfo *info)
{
    indent(f, level);
    comm_inline(s->u.comm, f);
    o_c(f, '\n');
}

static void p_p2p(const hir_stmt *s, int level, out *f, const hir_opinfo *info)
{
    indent(f, level);
    p2p_inline(s->u.comm, f);
    o_c(f, '\n');
}

static void p_wait(const hir_stmt *s, int level, out *f, const hir_opinfo *info)
{
    indent(f, level);
    if (s->form == HIR_FORM_2026) {
        PUT(f, "Wait(Communication ");
        put_int(f, s->u.wait.number);
        PUT(f, ")\n");
        return;
    }
    PUT(f, "Wait Communication ");
    put_int(f, s->u.wait.number);
    o_c(f, '\n');
}

static void p_startcoal(const hir_stmt *s, int level, out *f, const hir_opinfo *info)
{
    indent(f, level);
    PUT(f, "StartCoalescing\n");
}

static void p_endcoal(const hir_stmt *s, int level, out *f, const hir_opinfo *info)
{
    indent(f, level);
    if (s->u.comm && s->u.comm->number_unprinted) {
        PUT(f, "EndCoalescing\n");
        return;
    }
    PUT(f, "EndCoalescing ");
    put_int(f, s->u.comm->number);
    o_c(f, '\n');
}

static void p_share(const hir_stmt *s, int level, out *f, const hir_opinfo *info)
{
    indent(f, level);
    PUT(f, "ShareMemHandles(");
    for (int i = 0; i < s->u.share.n; i++) {
        p2p_inline(s->u.share.comms[i], f);
        PUT(f, ", ");
    }
    o_c(f, '\n');
}

static void p_post(const hir_stmt *s, int level, out *f, const hir_opinfo *info)
{
    indent(f, level);
    o_printf(f, "PostOnStream (HostUnit%lld, Inputs:{", (long long)s->u.kernel.number);
    for (int i = 0; i < s->u.kernel.ninputs; i++) {
        value_print(s->in[i], f);
        PUT(f, ", ");
    }
    PUT(f, "}, Outputs:{");
    for (int i = s->u.kernel.ninputs; i < s->nin; i++) {
        value_print(s->in[i], f);
        PUT(f, ", ");
    }
    PUT(f, "})\n");
}

static void p_launch(const hir_stmt *s, int level, out *f, const hir_opinfo *info)
{
    indent(f, level);
    if (s->u.kernel.layout == HIR_LAUNCH_ONE_LINE) {
        /* the first layout: every value followed by ", ", no group index */
        PUT(f, "LaunchKernel(Inputs: {");
        for (int i = 0; i < s->nin; i++) {
            if (i == s->u.kernel.ninputs)
                PUT(f, "}, Outputs: {");
            value_print(s->in[i], f);
            PUT(f, ", ");
        }
        if (s->u.kernel.ninputs == s->nin)
            PUT(f, "}, Outputs: {");
        PUT(f, "})\n");
        return;
    }
    PUT(f, "LaunchKernel(\n");
    indent(f, level + 1);
    o_printf(f, "%s: %lld,\n", s->u.kernel.layout == HIR_LAUNCH_INDEX ? "Index" : "Group ID",
             (long long)s->u.kernel.number);
    indent(f, level + 1);
    PUT(f, "Inputs: {");
    for (int i = 0; i < s->u.kernel.ninputs; i++) {
        if (i)
            PUT(f, ", ");
        value_print(s->in[i], f);
    }
    PUT(f, "},\n");
    indent(f, level + 1);
    PUT(f, "Outputs: {");
    for (int i = s->u.kernel.ninputs; i < s->nin; i++) {
        if (i > s->u.kernel.ninputs)
            PUT(f, ", ");
        value_print(s->in[i], f);
    }
    PUT(f, "},\n");
    indent(f, level);
    PUT(f, ")\n");
}

static void p_dealloc(const hir_stmt *s, int level, out *f, const hir_opinfo *info)
{
    indent(f, level);
    PUT(f, "Deallocate {\n");
    indent(f, level + 1);
    o_tensor_print(in_tensor(s, 0), f);
    o_c(f, '\n');
    indent(f, level);
    PUT(f, "}\n");
}

static void p_hiralloc(const hir_stmt *s, int level, out *f, const hir_opinfo *info)
{
    indent(f, level);
    o_tensor_print(s->out, f);
    PUT(f, " = ALLOCATE(mem_type=");
    put_str(f, hir_mem_name(s->u.alloc.mem));
    put_str(f, s->u.alloc.zero_init ? ", zero_init=true)\n" : ", zero_init=false)\n");
}

static void p_cperm(const hir_stmt *s, int level, out *f, const hir_opinfo *info)
{
    const hir_comm *c = s->u.comm;
    indent(f, level);
    o_printf(f, "CollectivePermute %lld (team=(", (long long)c->number);
    for (int i = 0; i < c->nteam; i++)
        { if (i) o_c(f, ' '); put_int(f, c->team[i]); }
    PUT(f, "), send_peer=");
    o_scalar_print_inline(c->send_peer, f);
    PUT(f, ", recv_peer=");
    o_scalar_print_inline(c->recv_peer, f);
    PUT(f, ", input=");
    o_tensor_print(c->input, f);
    PUT(f, ", output=");
    o_tensor_print(c->output, f);
    PUT(f, ", backend=");
    put_str(f, hir_backend_kind_name(c->backend));
    PUT(f, ")\n");
}

static void p_dispatch(const hir_stmt *s, int level, out *f, const hir_opinfo *info)
{
    indent(f, level);
    o_printf(f, "Dispatch %lld (num_experts=%lld, backend=%s, in=", (long long)s->u.moe->number,
             (long long)s->u.moe->num_experts, hir_backend_kind_name(s->u.moe->backend));
    o_tensor_print(in_tensor(s, 0), f);
    PUT(f, ", topk_idx=");
    o_tensor_print(in_tensor(s, 1), f);
    PUT(f, ", topk_weights=");
    o_tensor_print(in_tensor(s, 2), f);
    PUT(f, ", out=");
    o_tensor_print(s->out, f);
    PUT(f, ")\n");
}

static void p_combine(const hir_stmt *s, int level, out *f, const hir_opinfo *info)
{
    indent(f, level);
    o_printf(f, "Combine %lld (backend=%s, in=", (long long)s->u.moe->number,
             hir_backend_kind_name(s->u.moe->backend));
    o_tensor_print(in_tensor(s, 0), f);
    PUT(f, ", topk_weights=");
    o_tensor_print(in_tensor(s, 1), f);
    PUT(f, ", src_idx=");
    o_tensor_print(in_tensor(s, 2), f);
    PUT(f, ", out=");
    o_tensor_print(s->out, f);
    PUT(f, ")\n");
}

/* sdpa: four output lines at `level`, the arguments at level + 1 (docs/language.md, "sdpa") */
static void p_sdpa(const hir_stmt *s, int level, out *f, const hir_opinfo *info)
{
    /* four output lines at `level`, the arguments at level + 1 (docs/language.md, "sdpa") */
    const hir_tensor *outs[4] = {s->out, s->u.sdpa->extra[0], s->u.sdpa->extra[1],
                                 s->u.sdpa->extra[2]};
    for (int i = 0; i < 4; i++) {
        indent(f, level);
        o_tensor_print(outs[i], f);
        if (i < 3)
            o_c(f, ',');
        o_c(f, '\n');
    }
    indent(f, level + 1);
    PUT(f, " = sdpa(");
    value_print(s->in[0], f);
    PUT(f, ",\n");
    int k = 1;
    for (; k < 3 + s->u.sdpa->has_bias + s->u.sdpa->has_mask; k++) {
        indent(f, level + 1);
        spaces(f, 10);
        if (k == 3)
            put_str(f, s->u.sdpa->has_bias ? "bias=" : "mask=");
        else if (k == 4)
            PUT(f, "mask=");
        value_print(s->in[k], f);
        PUT(f, ",\n");
    }
    bool y26 = s->form == HIR_FORM_2026;
    indent(f, level + 1);
    spaces(f, 10);
    PUT(f, "dropout_p = ");
    value_print(s->in[k++], f);
    PUT(f, ",\n");
    indent(f, level + 1);
    spaces(f, 10);
    put_str(f, y26 ? "is_causal=" : "is_causal = ");
    value_print(s->in[k++], f);
    if (y26) {
        PUT(f, ",\n");
        if (s->u.sdpa->has_scale) {
            indent(f, level + 1);
            spaces(f, 10);
            PUT(f, "scale=");
            value_print(s->in[k], f);
            PUT(f, ",\n");
        }
    } else if (s->u.sdpa->has_scale) {
        indent(f, level + 1);
        PUT(f, ",\n");
        spaces(f, 10);
        PUT(f, "scale = ");
        value_print(s->in[k], f);
    }
    indent(f, level + 1);
    PUT(f, ")\n");
}

/* SdpaBwdOp::toString: three output lines, the arguments at level + 1 with ten more spaces;
 * after philox_offset a line holding ',', then the scale (if any) with no indentation of the
 * level, and ')' after the level's indentation */
static void p_sdpa_bwd(const hir_stmt *s, int level, out *f, const hir_opinfo *info)
{
    static const char *const names[5] = {"logsum_exp = ", "dropout_p = ", "is_causal = ",
                                         "philox_seed = ", "philox_offset = "};
    const hir_tensor *outs[3] = {s->out, s->u.sdpa->extra[0], s->u.sdpa->extra[1]};
    for (int i = 0; i < 3; i++) {
        indent(f, level);
        o_tensor_print(outs[i], f);
        put_str(f, i < 2 ? ",\n" : "\n");
    }
    indent(f, level + 1);
    PUT(f, " = sdpa_bwd(");
    for (int i = 0; i < 10; i++) {
        if (i) {
            indent(f, level + 1);
            spaces(f, 10);
        }
        if (i >= 5)
            put_str(f, names[i - 5]);
        value_print(s->in[i], f);
        PUT(f, ",\n");
    }
    if (s->u.sdpa->has_scale) {
        indent(f, level + 1);
        PUT(f, ",\n");
        spaces(f, 10);
        PUT(f, "scale = ");
        value_print(s->in[10], f);
    }
    indent(f, level + 1);
    PUT(f, ")\n");
}

static void p_scalardef(const hir_stmt *s, int level, out *f, const hir_opinfo *info)
{
    indent(f, level);
    o_scalar_print_ref(s->u.sdef.out, f);
    PUT(f, " = ");
    o_sexpr_print_def(s->u.sdef.def, f);
    PUT(f, ";\n");
}

typedef void (*stmt_printer)(const hir_stmt *s, int level, out *f, const hir_opinfo *info);

static const stmt_printer print_by_fmt[HIR_FMT_COUNT] = {
    [HIR_FMT_ALLOCATE] = p_allocate,
    [HIR_FMT_STREAM] = p_stream,
    [HIR_FMT_FOR] = p_for,
    [HIR_FMT_HOST_FOR] = p_host_for,
    [HIR_FMT_IF] = p_if,
    [HIR_FMT_ALIAS_SELECT] = p_alias_select,
    [HIR_FMT_SELECT] = p_alias_select,
    [HIR_FMT_SHARD] = p_shard,
    [HIR_FMT_SYMVIEW] = p_symview,
    [HIR_FMT_LOADSTORE] = p_loadstore,
    [HIR_FMT_LINEAR] = p_linear,
    [HIR_FMT_MATMUL] = p_matmul,
    [HIR_FMT_UNARY] = p_unary,
    [HIR_FMT_BINARY] = p_binary,
    [HIR_FMT_TERNARY] = p_ternary,
    [HIR_FMT_REDUCTION] = p_reduction,
    [HIR_FMT_SLICE] = p_slice,
    [HIR_FMT_VIEW] = p_view,
    [HIR_FMT_FULL] = p_full,
    [HIR_FMT_GROUPEDMMA] = p_grouped_mma,
    [HIR_FMT_FLAGS] = p_flags,
    [HIR_FMT_COMM] = p_comm,
    [HIR_FMT_P2P] = p_p2p,
    [HIR_FMT_WAIT] = p_wait,
    [HIR_FMT_STARTCOAL] = p_startcoal,
    [HIR_FMT_ENDCOAL] = p_endcoal,
    [HIR_FMT_SHARE] = p_share,
    [HIR_FMT_POST] = p_post,
    [HIR_FMT_LAUNCH] = p_launch,
    [HIR_FMT_DEALLOC] = p_dealloc,
    [HIR_FMT_HIRALLOC] = p_hiralloc,
    [HIR_FMT_CPERM] = p_cperm,
    [HIR_FMT_DISPATCH] = p_dispatch,
    [HIR_FMT_COMBINE] = p_combine,
    [HIR_FMT_SDPA] = p_sdpa,
    [HIR_FMT_SDPABWD] = p_sdpa_bwd,
    [HIR_FMT_SCALARDEF] = p_scalardef,
};

static void o_stmt_print(const hir_stmt *s, int level, out *f)
{
    const hir_opinfo *info = &hir_ops[s->op];
    if ((unsigned)info->fmt >= HIR_FMT_COUNT || !print_by_fmt[info->fmt])
        hir_panic(__FILE__, __LINE__, "unknown statement format");
    print_by_fmt[info->fmt](s, level, f, info);
}

static void o_program_print(const hir_program *p, out *f)
{
    PUT(f, "\n%HostIrContainer { (");
    for (int i = 0; i < p->inputs.n; i++) {
        if (i)
            PUT(f, ", ");
        value_print(p->inputs.items[i], f);
    }
    PUT(f, ") -> (");
    for (int i = 0; i < p->outputs.n; i++) {
        if (i)
            PUT(f, ", ");
        value_print(p->outputs.items[i], f);
    }
    PUT(f, ") :\n");
    block_print(&p->body, 1, f);
    for (int i = 0; i < p->hostunits.n; i++) {
        const hir_hostunit *h = p->hostunits.items[i];
        o_c(f, '\n');
        o_mem(f, h->text, h->len);
    }
    PUT(f, "} // %HostIrContainer\n\n");
    if (p->has_index_defs) {
        PUT(f, "Index definitions:\n");
        for (int i = 0; i < p->index_defs.n; i++) {
            const hir_scalar *s = p->index_defs.items[i];
            PUT(f, "  ");
            o_scalar_print_ref(s, f);
            PUT(f, " = ");
            o_sexpr_print_def(s->def, f);
            PUT(f, ";\n");
        }
        o_c(f, '\n');
    }
}

/* ---- public entry points: FILE* in, buffered inside ---- */

#define WRAP(call)                    \
    do {                              \
        out_small s_;                 \
        out *o_ = &s_.o;              \
        o_->f = f;                    \
        o_->n = 0;                    \
        o_->cap = OUT_SMALL;          \
        o_->mesh = NULL;              \
        o_->tensors = NULL;           \
        o_->flushes = 0;              \
        call;                         \
        o_flush(o_);                  \
    } while (0)

void hir_scalar_print_inline(const hir_scalar *s, FILE *f) { WRAP(o_scalar_print_inline(s, o_)); }
void hir_tensor_print(const hir_tensor *t, FILE *f) { WRAP(o_tensor_print(t, o_)); }
void hir_stmt_print(const hir_stmt *s, int level, FILE *f) { WRAP(o_stmt_print(s, level, o_)); }
void hir_program_print(const hir_program *p, FILE *f)
{
    out *o = malloc(sizeof *o + OUT_LARGE);   /* large: keep it off the stack */
    tensor_text *tensors = calloc(TENSOR_SLOTS, sizeof *tensors);
    if (!o || !tensors) {         /* out of memory: the stack will do (WRAP uses it too) */
        free(o);
        free(tensors);
        WRAP(o_program_print(p, o_));
        return;
    }
    o->f = f;
    o->n = 0;
    o->cap = OUT_LARGE;
    o->mesh = NULL;
    o->flushes = 0;
    o->tensors = tensors;
    o_program_print(p, o);
    o_flush(o);
    free(tensors);
    free(o);
}

static char *to_string(void (*fn)(const void *, FILE *), const void *x)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    fn(x, f);
    if (fclose(f)) {              /* the stream could not grow */
        free(buf);
        return NULL;
    }
    return buf;
}

char *hir_tensor_str(const hir_tensor *t) { return to_string((void (*)(const void *, FILE *))hir_tensor_print, t); }
char *hir_scalar_str_inline(const hir_scalar *s)
{
    return to_string((void (*)(const void *, FILE *))hir_scalar_print_inline, s);
}
