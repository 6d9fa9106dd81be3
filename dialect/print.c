/* print.c — writes the IR exactly as nvFuser's container printer does: indentation of two
 * spaces per level, the fixed-width continuation lines of linear/matmul, the trailing ", "
 * of ShareMemHandles entries, the footer and the Index-definitions trailer. */
#include "dialect/hir.h"

#include <stdlib.h>
#include <string.h>

/* Output goes through unlocked stdio with known lengths: the printer writes every byte of a
 * round trip, so fprintf's format parsing and fputs's strlen showed up in profiles. */
#define PUT(f, lit) fwrite_unlocked((lit), 1, sizeof(lit) - 1, (f))

static void put_str(FILE *f, const char *s) { fwrite_unlocked(s, 1, strlen(s), f); }

static void put_int(FILE *f, long long v)
{
    char buf[24], *e = buf + sizeof buf, *p = e;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--p = '-';
    fwrite_unlocked(p, 1, (size_t)(e - p), f);
}

static void indent(FILE *f, int level)
{
    for (int i = 0; i < level; i++)
        PUT(f, "  ");
}

static void spaces(FILE *f, int n)
{
    for (int i = 0; i < n; i++)
        putc_unlocked(' ', f);
}

static const char itype_chars[] = {'i', 'r', 'b', 's', 'n', 'v', '?'};

static void mesh_print(const hir_mesh *m, FILE *f)
{
    PUT(f, "DeviceMesh");
    /* one brace level per dimension; elements separated by single spaces */
    int64_t idx = 0;
    int nd = m->ndims ? m->ndims : 1;
    int64_t inner = m->ndims ? m->dims[m->ndims - 1] : m->ndevices;
    if (nd == 1) {
        putc_unlocked('{', f);
        for (int64_t i = 0; i < inner; i++)
            { if (i) putc_unlocked(' ', f); put_int(f, m->devices[i]); }
        putc_unlocked('}', f);
        return;
    }
    int64_t counters[16] = {0};
    putc_unlocked('{', f);
    for (int d = 1; d < nd; d++)
        putc_unlocked('{', f);
    for (;;) {
        for (int64_t i = 0; i < inner; i++, idx++)
            { if (i) putc_unlocked(' ', f); put_int(f, m->devices[idx]); }
        putc_unlocked('}', f);
        int d = nd - 2;
        for (; d >= 0; d--) {
            if (++counters[d] < m->dims[d])
                break;
            counters[d] = 0;
            putc_unlocked('}', f);
        }
        if (d < 0)
            return;
        for (int k = d + 1; k < nd; k++)
            putc_unlocked('{', f);
    }
}

void hir_scalar_print_ref(const hir_scalar *s, FILE *f)
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
            fprintf(f, "%s(%.17g)", hir_dtype_name(s->dtype), s->fval);
        return;
    case HIR_SC_ANON:
        hir_scalar_print_inline(s, f);
        return;
    }
}

static void sexpr_print(const hir_sexpr *e, FILE *f, bool inline_args)
{
    void (*arg)(const hir_scalar *, FILE *) = inline_args ? hir_scalar_print_inline : hir_scalar_print_ref;
    if (e->kind == HIR_SX_BINARY && e->infix) {
        arg(e->args[0], f);
        putc_unlocked(' ', f);
        put_str(f, hir_binary_infix(e->op));
        putc_unlocked(' ', f);
        arg(e->args[1], f);
    } else if (e->kind == HIR_SX_UNARY && e->infix) {
        put_str(f, hir_unary_prefix(e->op));
        arg(e->args[0], f);
    } else {
        put_str(f, e->fn);
        putc_unlocked('(', f);
        for (int i = 0; i < e->nargs; i++) {
            if (i)
                PUT(f, ", ");
            arg(e->args[i], f);
        }
        putc_unlocked(')', f);
    }
}

void hir_scalar_print_inline(const hir_scalar *s, FILE *f)
{
    if (s->def && (s->kind == HIR_SC_ANON || s->inline_expand)) {
        PUT(f, "( ");
        sexpr_print(s->def, f, true);
        PUT(f, " )");
    } else if (s->kind == HIR_SC_ANON) {
        PUT(f, "( ? )");
    } else {
        hir_scalar_print_ref(s, f);
    }
}

void hir_sexpr_print_def(const hir_sexpr *e, FILE *f) { sexpr_print(e, f, false); }

void hir_iterdomain_print(const hir_iterdomain *id, FILE *f)
{
    putc_unlocked(itype_chars[id->itype], f);
    put_str(f, hir_ptype_name(id->ptype));
    put_int(f, id->number);
    putc_unlocked('{', f);
    if (id->start) {
        hir_scalar_print_inline(id->start, f);
        PUT(f, " : ");
    }
    if (id->stop) {
        hir_scalar_print_inline(id->stop, f);
        PUT(f, " : ");
    }
    if (id->extent)
        hir_scalar_print_inline(id->extent, f);
    if (id->expanded) {
        PUT(f, " ex ");
        hir_scalar_print_inline(id->expanded, f);
    }
    putc_unlocked('}', f);
    if (id->flags & HIR_ID_RFACTOR)
        PUT(f, "rf");
    if (id->flags & HIR_ID_PADDED)
        PUT(f, "_p");
    if (id->flags & HIR_ID_CLUSTERED)
        PUT(f, "_c");
}

void hir_tensor_print(const hir_tensor *t, FILE *f)
{
    putc_unlocked('T', f);
    put_int(f, t->number);
    putc_unlocked('_', f);
    put_str(f, hir_mem_letter(t->mem));
    putc_unlocked('_', f);
    put_str(f, hir_dtype_name(t->dtype));
    putc_unlocked('[', f);
    for (int i = 0; i < t->nloop; i++) {
        if (i)
            PUT(f, ", ");
        hir_iterdomain_print(t->loop[i], f);
    }
    putc_unlocked(']', f);
    if (t->annotations)
        put_str(f, t->annotations);
    if (t->mesh) {
        PUT(f, " (");
        mesh_print(t->mesh, f);
        putc_unlocked(')', f);
    }
}

static void value_print(const hir_value *v, FILE *f)
{
    if (v->kind == HIR_VAL_TENSOR)
        hir_tensor_print((const hir_tensor *)v, f);
    else
        hir_scalar_print_ref((const hir_scalar *)v, f);
}

static void stream_print(const hir_stream_ref *r, FILE *f)
{
    PUT(f, "Stream ");
    if (r->index)
        hir_scalar_print_inline(r->index, f);
    else
        put_int(f, r->number);
}

static void p2p_inline(const hir_comm *c, FILE *f)
{
    PUT(f, "P2PCommunication ");
    put_int(f, c->number);
    if (c->is_send)
        PUT(f, " (type=send, buffer=");
    else
        PUT(f, " (type=recv, buffer=");
    hir_tensor_print(c->buffer, f);
    PUT(f, ", peer=");
    hir_scalar_print_ref(c->peer, f);
    PUT(f, ", backend=");
    put_str(f, hir_backend_kind_name(c->backend));
    putc_unlocked(')', f);
}

static void comm_inline(const hir_comm *c, FILE *f)
{
    fprintf(f, "Communication %lld (type=%s, team=(", (long long)c->number, hir_comm_type_name(c->type));
    for (int i = 0; i < c->nteam; i++)
        { if (i) putc_unlocked(' ', f); put_int(f, c->team[i]); }
    if (c->team_truncated)
        PUT(f, " ...");
    putc_unlocked(')', f);
    if (c->root) {
        PUT(f, ", root=");
        hir_scalar_print_inline(c->root, f);
    }
    if (c->input) {
        PUT(f, ", input=");
        hir_tensor_print(c->input, f);
    }
    if (c->output) {
        PUT(f, ", output=");
        hir_tensor_print(c->output, f);
    }
    PUT(f, ", backend=");
    put_str(f, hir_backend_kind_name(c->backend));
    putc_unlocked(')', f);
}

static void block_print(const hir_block *b, int level, FILE *f)
{
    for (int i = 0; i < b->stmts.n; i++)
        hir_stmt_print(b->stmts.items[i], level, f);
}

/* "IND(L) T\nIND(L+1) = " — the two-line head shared by most tensor statements */
static void out_head(const hir_stmt *s, int level, FILE *f)
{
    indent(f, level);
    hir_tensor_print(s->out, f);
    putc_unlocked('\n', f);
    indent(f, level + 1);
    PUT(f, " = ");
}

static hir_tensor *in_tensor(const hir_stmt *s, int i) { return hir_value_tensor(s->in[i]); }

void hir_stmt_print(const hir_stmt *s, int level, FILE *f)
{
    const hir_opinfo *info = &hir_ops[s->op];
    switch (info->fmt) {
    case HIR_FMT_ALLOCATE:
        indent(f, level);
        hir_tensor_print(s->out, f);
        PUT(f, " = ALLOCATE(buffer=");
        hir_tensor_print(s->out, f);
        PUT(f, ", mem_type=");
        put_str(f, hir_mem_name(s->u.alloc.mem));
        PUT(f, ", size=");
        hir_scalar_print_inline(s->u.alloc.size, f);
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
            hir_tensor_print(s->u.alloc.alias, f);
            putc_unlocked('\n', f);
        }
        return;
    case HIR_FMT_STREAM:
        indent(f, level);
        put_str(f, info->keyword);
        put_str(f, s->op == HIR_OP_GET_STREAM ? " into " : s->op == HIR_OP_SET_STREAM ? " to " : " ");
        stream_print(&s->u.stream, f);
        putc_unlocked('\n', f);
        return;
    case HIR_FMT_FOR:
        indent(f, level);
        PUT(f, "FOR ");
        hir_scalar_print_ref(s->u.kfor.index, f);
        PUT(f, " in ");
        hir_iterdomain_print(s->u.kfor.id, f);
        PUT(f, ":\n");
        block_print(&s->body, level + 1, f);
        return;
    case HIR_FMT_HOST_FOR:
        indent(f, level);
        PUT(f, "FOR ");
        hir_scalar_print_ref(s->u.hfor.index, f);
        PUT(f, " from ");
        hir_scalar_print_inline(s->u.hfor.start, f);
        PUT(f, " to ");
        hir_scalar_print_inline(s->u.hfor.stop, f);
        PUT(f, ":\n");
        block_print(&s->body, level + 1, f);
        return;
    case HIR_FMT_IF:
        indent(f, level);
        PUT(f, "IF ");
        put_str(f, s->u.cond.pred_type);
        putc_unlocked(' ', f);
        hir_scalar_print_inline(s->u.cond.pred, f);
        PUT(f, ":\n");
        block_print(&s->body, level + 1, f);
        if (s->else_body.stmts.n) {
            indent(f, level);
            PUT(f, "ELSE:\n");
            block_print(&s->else_body, level + 1, f);
        }
        return;
    case HIR_FMT_ALIAS_SELECT:
    case HIR_FMT_SELECT:
        out_head(s, level, f);
        put_str(f, info->keyword);
        PUT(f, "( ");
        hir_tensor_print(in_tensor(s, 0), f);
        PUT(f, ", axis = ");
        hir_iterdomain_print(s->u.sel.axis, f);
        PUT(f, ", index = ");
        hir_scalar_print_ref(s->u.sel.index, f);
        PUT(f, " )\n");
        return;
    case HIR_FMT_SHARD:
        indent(f, level);
        hir_tensor_print(s->out, f);
        PUT(f, " = ShardByStream(");
        hir_tensor_print(in_tensor(s, 0), f);
        PUT(f, ", stream_index = ");
        hir_scalar_print_ref(s->u.stream_index, f);
        PUT(f, ")\n");
        return;
    case HIR_FMT_SYMVIEW:
        indent(f, level);
        hir_tensor_print(s->out, f);
        PUT(f, " = SymmetricContiguousView(");
        hir_tensor_print(in_tensor(s, 0), f);
        PUT(f, ")\n");
        return;
    case HIR_FMT_LOADSTORE:
        out_head(s, level, f);
        put_str(f, info->keyword);
        if (s->u.ls.permute)
            PUT(f, ".Permute");
        PUT(f, "( ");
        value_print(s->in[0], f);
        if (s->u.ls.cache_op)
            fprintf(f, ", cache_op=%s", s->u.ls.cache_op);
        PUT(f, " )\n");
        return;
    case HIR_FMT_LINEAR:
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
        return;
    case HIR_FMT_MATMUL:
        out_head(s, level, f);
        PUT(f, "matmul(");
        value_print(s->in[0], f);
        PUT(f, ",\n");
        indent(f, level + 1);
        spaces(f, 10);
        value_print(s->in[1], f);
        PUT(f, ")\n");
        return;
    case HIR_FMT_UNARY:
        out_head(s, level, f);
        if (s->u.ew.infix) {
            put_str(f, hir_unary_prefix(s->u.ew.op));
            value_print(s->in[0], f);
        } else {
            fprintf(f, "%s(", s->u.ew.fn);
            value_print(s->in[0], f);
            putc_unlocked(')', f);
        }
        PUT(f, ";\n");
        return;
    case HIR_FMT_BINARY:
        out_head(s, level, f);
        if (s->u.ew.infix) {
            value_print(s->in[0], f);
            putc_unlocked('\n', f);
            indent(f, level + 1);
            fprintf(f, " %s ", hir_binary_infix(s->u.ew.op));
            value_print(s->in[1], f);
        } else {
            fprintf(f, "%s(", s->u.ew.fn);
            value_print(s->in[0], f);
            putc_unlocked('\n', f);
            indent(f, level + 1);
            PUT(f, ", ");
            value_print(s->in[1], f);
            putc_unlocked(')', f);
        }
        PUT(f, ";\n");
        return;
    case HIR_FMT_TERNARY:
        out_head(s, level, f);
        fprintf(f, "%s(", s->u.ew.fn);
        for (int i = 0; i < 3; i++) {
            if (i) {
                putc_unlocked('\n', f);
                indent(f, level + 1);
                PUT(f, ", ");
            }
            value_print(s->in[i], f);
        }
        PUT(f, ");\n");
        return;
    case HIR_FMT_REDUCTION:
        indent(f, level);
        hir_tensor_print(s->out, f);
        putc_unlocked('\n', f);
        indent(f, level);
        PUT(f, "   = reduction( ");
        hir_tensor_print(in_tensor(s, 0), f);
        fprintf(f, ", op = %s, initial value = ", s->u.red.op_name);
        hir_scalar_print_ref(s->u.red.init, f);
        fprintf(f, ", allreduce = %s )\n", s->u.red.allreduce ? "true" : "false");
        return;
    case HIR_FMT_SLICE:
        indent(f, level);
        hir_tensor_print(s->out, f);
        putc_unlocked('\n', f);
        indent(f, level);
        PUT(f, "   = slice( ");
        hir_tensor_print(in_tensor(s, 0), f);
        PUT(f, ", {");
        for (int i = 0; i < s->u.slice.nranges; i++) {
            const hir_slice_range *r = &s->u.slice.ranges[i];
            PUT(f, " {");
            hir_scalar_print_ref(r->start, f);
            PUT(f, ", ");
            hir_scalar_print_ref(r->stop, f);
            PUT(f, ", ");
            hir_scalar_print_ref(r->step, f);
            putc_unlocked('}', f);
        }
        PUT(f, " } )\n");
        return;
    case HIR_FMT_VIEW:
        indent(f, level);
        hir_tensor_print(s->out, f);
        PUT(f, " = view( ");
        hir_tensor_print(in_tensor(s, 0), f);
        PUT(f, " )\n");
        return;
    case HIR_FMT_FLAGS:
        indent(f, level);
        hir_tensor_print(s->out, f);
        putc_unlocked('\n', f);
        indent(f, level);
        fprintf(f, "   = %s( ", info->keyword);
        hir_tensor_print(in_tensor(s, 0), f);
        PUT(f, ", flags = {");
        for (int i = 0; i < s->u.flags.nflags; i++)
            fprintf(f, i ? ", %s" : "%s", s->u.flags.flags[i] ? "true" : "false");
        PUT(f, "} )\n");
        return;
    case HIR_FMT_COMM:
        indent(f, level);
        comm_inline(s->u.comm, f);
        putc_unlocked('\n', f);
        return;
    case HIR_FMT_P2P:
        indent(f, level);
        p2p_inline(s->u.comm, f);
        putc_unlocked('\n', f);
        return;
    case HIR_FMT_WAIT:
        indent(f, level);
        PUT(f, "Wait Communication ");
        put_int(f, s->u.wait.number);
        putc_unlocked('\n', f);
        return;
    case HIR_FMT_STARTCOAL:
        indent(f, level);
        PUT(f, "StartCoalescing\n");
        return;
    case HIR_FMT_ENDCOAL:
        indent(f, level);
        PUT(f, "EndCoalescing ");
        put_int(f, s->u.comm->number);
        putc_unlocked('\n', f);
        return;
    case HIR_FMT_SHARE:
        indent(f, level);
        PUT(f, "ShareMemHandles(");
        for (int i = 0; i < s->u.share.n; i++) {
            p2p_inline(s->u.share.comms[i], f);
            PUT(f, ", ");
        }
        putc_unlocked('\n', f);
        return;
    case HIR_FMT_POST:
        indent(f, level);
        fprintf(f, "PostOnStream (HostUnit%lld, Inputs:{", (long long)s->u.kernel.number);
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
        return;
    case HIR_FMT_LAUNCH:
        indent(f, level);
        PUT(f, "LaunchKernel(\n");
        indent(f, level + 1);
        fprintf(f, "Group ID: %lld,\n", (long long)s->u.kernel.number);
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
        return;
    case HIR_FMT_DEALLOC:
        indent(f, level);
        PUT(f, "Deallocate {\n");
        indent(f, level + 1);
        hir_tensor_print(in_tensor(s, 0), f);
        putc_unlocked('\n', f);
        indent(f, level);
        PUT(f, "}\n");
        return;
    case HIR_FMT_SCALARDEF:
        indent(f, level);
        hir_scalar_print_ref(s->sout, f);
        PUT(f, " = ");
        hir_sexpr_print_def(s->u.sdef.def, f);
        PUT(f, ";\n");
        return;
    }
    hir_panic(__FILE__, __LINE__, "unknown statement format");
}

void hir_program_print(const hir_program *p, FILE *f)
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
        putc_unlocked('\n', f);
        fwrite(h->text, 1, h->len, f);
    }
    PUT(f, "} // %HostIrContainer\n\n");
    if (p->has_index_defs) {
        PUT(f, "Index definitions:\n");
        for (int i = 0; i < p->index_defs.n; i++) {
            const hir_scalar *s = p->index_defs.items[i];
            PUT(f, "  ");
            hir_scalar_print_ref(s, f);
            PUT(f, " = ");
            hir_sexpr_print_def(s->def, f);
            PUT(f, ";\n");
        }
        putc_unlocked('\n', f);
    }
}

static char *to_string(void (*fn)(const void *, FILE *), const void *x)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        hir_panic(__FILE__, __LINE__, "out of memory");
    fn(x, f);
    fclose(f);
    return buf;
}

char *hir_tensor_str(const hir_tensor *t) { return to_string((void (*)(const void *, FILE *))hir_tensor_print, t); }
char *hir_scalar_str_inline(const hir_scalar *s)
{
    return to_string((void (*)(const void *, FILE *))hir_scalar_print_inline, s);
}
