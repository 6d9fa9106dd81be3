/* print.c — writes the IR exactly as nvFuser's container printer does: indentation of two
 * spaces per level, the fixed-width continuation lines of linear/matmul, the trailing ", "
 * of ShareMemHandles entries, the footer and the Index-definitions trailer. */
#include "dialect/hir.h"

#include <stdlib.h>
#include <string.h>

static void indent(FILE *f, int level)
{
    for (int i = 0; i < level; i++)
        fputs("  ", f);
}

static void spaces(FILE *f, int n)
{
    for (int i = 0; i < n; i++)
        fputc(' ', f);
}

static const char itype_chars[] = {'i', 'r', 'b', 's', 'n', 'v', '?'};

static void mesh_print(const hir_mesh *m, FILE *f)
{
    fputs("DeviceMesh", f);
    /* one brace level per dimension; elements separated by single spaces */
    int64_t idx = 0;
    int nd = m->ndims ? m->ndims : 1;
    int64_t inner = m->ndims ? m->dims[m->ndims - 1] : m->ndevices;
    if (nd == 1) {
        fputc('{', f);
        for (int64_t i = 0; i < inner; i++)
            fprintf(f, i ? " %lld" : "%lld", (long long)m->devices[i]);
        fputc('}', f);
        return;
    }
    int64_t counters[16] = {0};
    fputc('{', f);
    for (int d = 1; d < nd; d++)
        fputc('{', f);
    for (;;) {
        for (int64_t i = 0; i < inner; i++, idx++)
            fprintf(f, i ? " %lld" : "%lld", (long long)m->devices[idx]);
        fputc('}', f);
        int d = nd - 2;
        for (; d >= 0; d--) {
            if (++counters[d] < m->dims[d])
                break;
            counters[d] = 0;
            fputc('}', f);
        }
        if (d < 0)
            return;
        for (int k = d + 1; k < nd; k++)
            fputc('{', f);
    }
}

void hir_scalar_print_ref(const hir_scalar *s, FILE *f)
{
    switch (s->kind) {
    case HIR_SC_NAMED:
        fputs(s->name, f);
        return;
    case HIR_SC_SYMBOL:
        fprintf(f, "%s%lld", s->name, (long long)s->number);
        return;
    case HIR_SC_INT:
        fprintf(f, "%lld", (long long)s->ival);
        return;
    case HIR_SC_BOOL:
        fputs(s->ival ? "true" : "false", f);
        return;
    case HIR_SC_FLOAT:
        if (s->name)
            fputs(s->name, f);
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
        fprintf(f, " %s ", hir_binary_infix(e->op));
        arg(e->args[1], f);
    } else if (e->kind == HIR_SX_UNARY && e->infix) {
        fputs(hir_unary_prefix(e->op), f);
        arg(e->args[0], f);
    } else {
        fputs(e->fn, f);
        fputc('(', f);
        for (int i = 0; i < e->nargs; i++) {
            if (i)
                fputs(", ", f);
            arg(e->args[i], f);
        }
        fputc(')', f);
    }
}

void hir_scalar_print_inline(const hir_scalar *s, FILE *f)
{
    if (s->def && (s->kind == HIR_SC_ANON || s->inline_expand)) {
        fputs("( ", f);
        sexpr_print(s->def, f, true);
        fputs(" )", f);
    } else if (s->kind == HIR_SC_ANON) {
        fputs("( ? )", f);
    } else {
        hir_scalar_print_ref(s, f);
    }
}

void hir_sexpr_print_def(const hir_sexpr *e, FILE *f) { sexpr_print(e, f, false); }

void hir_iterdomain_print(const hir_iterdomain *id, FILE *f)
{
    fprintf(f, "%c%s%lld{", itype_chars[id->itype], hir_ptype_name(id->ptype), (long long)id->number);
    if (id->start) {
        hir_scalar_print_inline(id->start, f);
        fputs(" : ", f);
    }
    if (id->stop) {
        hir_scalar_print_inline(id->stop, f);
        fputs(" : ", f);
    }
    if (id->extent)
        hir_scalar_print_inline(id->extent, f);
    if (id->expanded) {
        fputs(" ex ", f);
        hir_scalar_print_inline(id->expanded, f);
    }
    fputc('}', f);
    if (id->flags & HIR_ID_RFACTOR)
        fputs("rf", f);
    if (id->flags & HIR_ID_PADDED)
        fputs("_p", f);
    if (id->flags & HIR_ID_CLUSTERED)
        fputs("_c", f);
}

void hir_tensor_print(const hir_tensor *t, FILE *f)
{
    fprintf(f, "T%lld_%s_%s[", (long long)t->number, hir_mem_letter(t->mem), hir_dtype_name(t->dtype));
    for (int i = 0; i < t->nloop; i++) {
        if (i)
            fputs(", ", f);
        hir_iterdomain_print(t->loop[i], f);
    }
    fputc(']', f);
    if (t->annotations)
        fputs(t->annotations, f);
    if (t->mesh) {
        fputs(" (", f);
        mesh_print(t->mesh, f);
        fputc(')', f);
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
    fputs("Stream ", f);
    if (r->index)
        hir_scalar_print_inline(r->index, f);
    else
        fprintf(f, "%lld", (long long)r->number);
}

static void p2p_inline(const hir_comm *c, FILE *f)
{
    fprintf(f, "P2PCommunication %lld (type=%s, buffer=", (long long)c->number,
            c->is_send ? "send" : "recv");
    hir_tensor_print(c->buffer, f);
    fputs(", peer=", f);
    hir_scalar_print_ref(c->peer, f);
    fprintf(f, ", backend=%s)", hir_backend_kind_name(c->backend));
}

static void comm_inline(const hir_comm *c, FILE *f)
{
    fprintf(f, "Communication %lld (type=%s, team=(", (long long)c->number, hir_comm_type_name(c->type));
    for (int i = 0; i < c->nteam; i++)
        fprintf(f, i ? " %lld" : "%lld", (long long)c->team[i]);
    if (c->team_truncated)
        fputs(" ...", f);
    fputc(')', f);
    if (c->root) {
        fputs(", root=", f);
        hir_scalar_print_inline(c->root, f);
    }
    if (c->input) {
        fputs(", input=", f);
        hir_tensor_print(c->input, f);
    }
    if (c->output) {
        fputs(", output=", f);
        hir_tensor_print(c->output, f);
    }
    fprintf(f, ", backend=%s)", hir_backend_kind_name(c->backend));
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
    fputc('\n', f);
    indent(f, level + 1);
    fputs(" = ", f);
}

static hir_tensor *in_tensor(const hir_stmt *s, int i) { return hir_value_tensor(s->in[i]); }

void hir_stmt_print(const hir_stmt *s, int level, FILE *f)
{
    const hir_opinfo *info = &hir_ops[s->op];
    switch (info->fmt) {
    case HIR_FMT_ALLOCATE:
        indent(f, level);
        hir_tensor_print(s->out, f);
        fputs(" = ALLOCATE(buffer=", f);
        hir_tensor_print(s->out, f);
        fprintf(f, ", mem_type=%s, size=", hir_mem_name(s->u.alloc.mem));
        hir_scalar_print_inline(s->u.alloc.size, f);
        fprintf(f, ", zero_init=%s, resets_to_zero=%s)\n", s->u.alloc.zero_init ? "true" : "false",
                s->u.alloc.resets_to_zero ? "true" : "false");
        if (s->u.alloc.alias) {
            indent(f, level);
            fputs("  .alias=", f);
            hir_tensor_print(s->u.alloc.alias, f);
            fputc('\n', f);
        }
        return;
    case HIR_FMT_STREAM:
        indent(f, level);
        fputs(info->keyword, f);
        fputs(s->op == HIR_OP_GET_STREAM ? " into " : s->op == HIR_OP_SET_STREAM ? " to " : " ", f);
        stream_print(&s->u.stream, f);
        fputc('\n', f);
        return;
    case HIR_FMT_FOR:
        indent(f, level);
        fputs("FOR ", f);
        hir_scalar_print_ref(s->u.kfor.index, f);
        fputs(" in ", f);
        hir_iterdomain_print(s->u.kfor.id, f);
        fputs(":\n", f);
        block_print(&s->body, level + 1, f);
        return;
    case HIR_FMT_HOST_FOR:
        indent(f, level);
        fputs("FOR ", f);
        hir_scalar_print_ref(s->u.hfor.index, f);
        fputs(" from ", f);
        hir_scalar_print_inline(s->u.hfor.start, f);
        fputs(" to ", f);
        hir_scalar_print_inline(s->u.hfor.stop, f);
        fputs(":\n", f);
        block_print(&s->body, level + 1, f);
        return;
    case HIR_FMT_IF:
        indent(f, level);
        fprintf(f, "IF %s ", s->u.cond.pred_type);
        hir_scalar_print_inline(s->u.cond.pred, f);
        fputs(":\n", f);
        block_print(&s->body, level + 1, f);
        if (s->else_body.stmts.n) {
            indent(f, level);
            fputs("ELSE:\n", f);
            block_print(&s->else_body, level + 1, f);
        }
        return;
    case HIR_FMT_ALIAS_SELECT:
    case HIR_FMT_SELECT:
        out_head(s, level, f);
        fprintf(f, "%s( ", info->keyword);
        hir_tensor_print(in_tensor(s, 0), f);
        fputs(", axis = ", f);
        hir_iterdomain_print(s->u.sel.axis, f);
        fputs(", index = ", f);
        hir_scalar_print_ref(s->u.sel.index, f);
        fputs(" )\n", f);
        return;
    case HIR_FMT_SHARD:
        indent(f, level);
        hir_tensor_print(s->out, f);
        fputs(" = ShardByStream(", f);
        hir_tensor_print(in_tensor(s, 0), f);
        fputs(", stream_index = ", f);
        hir_scalar_print_ref(s->u.stream_index, f);
        fputs(")\n", f);
        return;
    case HIR_FMT_SYMVIEW:
        indent(f, level);
        hir_tensor_print(s->out, f);
        fputs(" = SymmetricContiguousView(", f);
        hir_tensor_print(in_tensor(s, 0), f);
        fputs(")\n", f);
        return;
    case HIR_FMT_LOADSTORE:
        out_head(s, level, f);
        fputs(info->keyword, f);
        if (s->u.ls.permute)
            fputs(".Permute", f);
        fputs("( ", f);
        value_print(s->in[0], f);
        if (s->u.ls.cache_op)
            fprintf(f, ", cache_op=%s", s->u.ls.cache_op);
        fputs(" )\n", f);
        return;
    case HIR_FMT_LINEAR:
        out_head(s, level, f);
        fputs("linear(", f);
        value_print(s->in[0], f);
        fputs(",\n", f);
        indent(f, level + 1);
        spaces(f, 10);
        value_print(s->in[1], f);
        if (s->nin > 2) {
            indent(f, level + 1);
            fputs(",\n", f);
            spaces(f, 10);
            value_print(s->in[2], f);
        }
        indent(f, level + 1);
        fputs(")\n", f);
        return;
    case HIR_FMT_MATMUL:
        out_head(s, level, f);
        fputs("matmul(", f);
        value_print(s->in[0], f);
        fputs(",\n", f);
        indent(f, level + 1);
        spaces(f, 10);
        value_print(s->in[1], f);
        fputs(")\n", f);
        return;
    case HIR_FMT_UNARY:
        out_head(s, level, f);
        if (s->u.ew.infix) {
            fputs(hir_unary_prefix(s->u.ew.op), f);
            value_print(s->in[0], f);
        } else {
            fprintf(f, "%s(", s->u.ew.fn);
            value_print(s->in[0], f);
            fputc(')', f);
        }
        fputs(";\n", f);
        return;
    case HIR_FMT_BINARY:
        out_head(s, level, f);
        if (s->u.ew.infix) {
            value_print(s->in[0], f);
            fputc('\n', f);
            indent(f, level + 1);
            fprintf(f, " %s ", hir_binary_infix(s->u.ew.op));
            value_print(s->in[1], f);
        } else {
            fprintf(f, "%s(", s->u.ew.fn);
            value_print(s->in[0], f);
            fputc('\n', f);
            indent(f, level + 1);
            fputs(", ", f);
            value_print(s->in[1], f);
            fputc(')', f);
        }
        fputs(";\n", f);
        return;
    case HIR_FMT_TERNARY:
        out_head(s, level, f);
        fprintf(f, "%s(", s->u.ew.fn);
        for (int i = 0; i < 3; i++) {
            if (i) {
                fputc('\n', f);
                indent(f, level + 1);
                fputs(", ", f);
            }
            value_print(s->in[i], f);
        }
        fputs(");\n", f);
        return;
    case HIR_FMT_REDUCTION:
        indent(f, level);
        hir_tensor_print(s->out, f);
        fputc('\n', f);
        indent(f, level);
        fputs("   = reduction( ", f);
        hir_tensor_print(in_tensor(s, 0), f);
        fprintf(f, ", op = %s, initial value = ", s->u.red.op_name);
        hir_scalar_print_ref(s->u.red.init, f);
        fprintf(f, ", allreduce = %s )\n", s->u.red.allreduce ? "true" : "false");
        return;
    case HIR_FMT_SLICE:
        indent(f, level);
        hir_tensor_print(s->out, f);
        fputc('\n', f);
        indent(f, level);
        fputs("   = slice( ", f);
        hir_tensor_print(in_tensor(s, 0), f);
        fputs(", {", f);
        for (int i = 0; i < s->u.slice.nranges; i++) {
            const hir_slice_range *r = &s->u.slice.ranges[i];
            fputs(" {", f);
            hir_scalar_print_ref(r->start, f);
            fputs(", ", f);
            hir_scalar_print_ref(r->stop, f);
            fputs(", ", f);
            hir_scalar_print_ref(r->step, f);
            fputc('}', f);
        }
        fputs(" } )\n", f);
        return;
    case HIR_FMT_VIEW:
        indent(f, level);
        hir_tensor_print(s->out, f);
        fputs(" = view( ", f);
        hir_tensor_print(in_tensor(s, 0), f);
        fputs(" )\n", f);
        return;
    case HIR_FMT_FLAGS:
        indent(f, level);
        hir_tensor_print(s->out, f);
        fputc('\n', f);
        indent(f, level);
        fprintf(f, "   = %s( ", info->keyword);
        hir_tensor_print(in_tensor(s, 0), f);
        fputs(", flags = {", f);
        for (int i = 0; i < s->u.flags.nflags; i++)
            fprintf(f, i ? ", %s" : "%s", s->u.flags.flags[i] ? "true" : "false");
        fputs("} )\n", f);
        return;
    case HIR_FMT_COMM:
        indent(f, level);
        comm_inline(s->u.comm, f);
        fputc('\n', f);
        return;
    case HIR_FMT_P2P:
        indent(f, level);
        p2p_inline(s->u.comm, f);
        fputc('\n', f);
        return;
    case HIR_FMT_WAIT:
        indent(f, level);
        fprintf(f, "Wait Communication %lld\n", (long long)s->u.wait.number);
        return;
    case HIR_FMT_STARTCOAL:
        indent(f, level);
        fputs("StartCoalescing\n", f);
        return;
    case HIR_FMT_ENDCOAL:
        indent(f, level);
        fprintf(f, "EndCoalescing %lld\n", (long long)s->u.comm->number);
        return;
    case HIR_FMT_SHARE:
        indent(f, level);
        fputs("ShareMemHandles(", f);
        for (int i = 0; i < s->u.share.n; i++) {
            p2p_inline(s->u.share.comms[i], f);
            fputs(", ", f);
        }
        fputc('\n', f);
        return;
    case HIR_FMT_POST:
        indent(f, level);
        fprintf(f, "PostOnStream (HostUnit%lld, Inputs:{", (long long)s->u.kernel.number);
        for (int i = 0; i < s->u.kernel.ninputs; i++) {
            value_print(s->in[i], f);
            fputs(", ", f);
        }
        fputs("}, Outputs:{", f);
        for (int i = s->u.kernel.ninputs; i < s->nin; i++) {
            value_print(s->in[i], f);
            fputs(", ", f);
        }
        fputs("})\n", f);
        return;
    case HIR_FMT_LAUNCH:
        indent(f, level);
        fputs("LaunchKernel(\n", f);
        indent(f, level + 1);
        fprintf(f, "Group ID: %lld,\n", (long long)s->u.kernel.number);
        indent(f, level + 1);
        fputs("Inputs: {", f);
        for (int i = 0; i < s->u.kernel.ninputs; i++) {
            if (i)
                fputs(", ", f);
            value_print(s->in[i], f);
        }
        fputs("},\n", f);
        indent(f, level + 1);
        fputs("Outputs: {", f);
        for (int i = s->u.kernel.ninputs; i < s->nin; i++) {
            if (i > s->u.kernel.ninputs)
                fputs(", ", f);
            value_print(s->in[i], f);
        }
        fputs("},\n", f);
        indent(f, level);
        fputs(")\n", f);
        return;
    case HIR_FMT_DEALLOC:
        indent(f, level);
        fputs("Deallocate {\n", f);
        indent(f, level + 1);
        hir_tensor_print(in_tensor(s, 0), f);
        fputc('\n', f);
        indent(f, level);
        fputs("}\n", f);
        return;
    case HIR_FMT_SCALARDEF:
        indent(f, level);
        hir_scalar_print_ref(s->sout, f);
        fputs(" = ", f);
        hir_sexpr_print_def(s->u.sdef.def, f);
        fputs(";\n", f);
        return;
    }
    hir_panic(__FILE__, __LINE__, "unknown statement format");
}

void hir_program_print(const hir_program *p, FILE *f)
{
    fputs("\n%HostIrContainer { (", f);
    for (int i = 0; i < p->inputs.n; i++) {
        if (i)
            fputs(", ", f);
        value_print(p->inputs.items[i], f);
    }
    fputs(") -> (", f);
    for (int i = 0; i < p->outputs.n; i++) {
        if (i)
            fputs(", ", f);
        value_print(p->outputs.items[i], f);
    }
    fputs(") :\n", f);
    block_print(&p->body, 1, f);
    for (int i = 0; i < p->hostunits.n; i++) {
        const hir_hostunit *h = p->hostunits.items[i];
        fputc('\n', f);
        fwrite(h->text, 1, h->len, f);
    }
    fputs("} // %HostIrContainer\n\n", f);
    if (p->has_index_defs) {
        fputs("Index definitions:\n", f);
        for (int i = 0; i < p->index_defs.n; i++) {
            const hir_scalar *s = p->index_defs.items[i];
            fputs("  ", f);
            hir_scalar_print_ref(s, f);
            fputs(" = ", f);
            hir_sexpr_print_def(s->def, f);
            fputs(";\n", f);
        }
        fputc('\n', f);
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
