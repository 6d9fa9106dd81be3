/* form.c — the two generations of nvFuser's printer (docs/language.md §8): which one a program
 * is written in, the address a 2026 print shows for a stream object that has none, and the
 * conversion of every statement to one generation (hir-opt --print-form). What each statement
 * kind can be spelled as is the forms column of dialect/defs/ops.def; the printer writes a
 * statement in the spelling its `form` names. This file only changes that field and the few
 * values whose text differs between the generations (stream objects, Communication roots) and
 * rewrites the one 2026 statement that has a 2025 equivalent (a top-level short ALLOCATE). */
#include "dialect/hir.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ the program's form */

static bool any_2026(hir_stmt *s, int depth, void *ctx)
{
    (void)depth;
    if (s->form == HIR_FORM_2026) {
        *(bool *)ctx = true;
        return false;
    }
    return true;
}

hir_form hir_program_form(const hir_program *p)
{
    bool found = false;
    hir_block_walk((hir_block *)&p->body, 0, any_2026, &found);
    return found ? HIR_FORM_2026 : HIR_FORM_2025;
}

/* ------------------------------------------------------------------ stream addresses */

uint64_t hir_stream_invented_addr(int64_t number)
{
    if (number >= 0 && number < HIR_FORM_STREAM_SMALL)
        return HIR_FORM_STREAM_ADDR + 16 * (uint64_t)number;
    return (uint64_t)number;
}

/* The 2025 number an address stands for: the inverse of hir_stream_invented_addr, or the
 * address's value itself when that fits in a non-negative int64; -1 otherwise. */
static int64_t addr_number(const char *addr)
{
    if (strncmp(addr, "0x", 2) || !addr[2] || strlen(addr) > 18)
        return -1;
    char *end = NULL;
    unsigned long long v = strtoull(addr + 2, &end, 16);
    if (*end)
        return -1;
    if (v >= HIR_FORM_STREAM_ADDR && v < HIR_FORM_STREAM_ADDR + 16ULL * HIR_FORM_STREAM_SMALL &&
        (v - HIR_FORM_STREAM_ADDR) % 16 == 0)
        return (int64_t)((v - HIR_FORM_STREAM_ADDR) / 16);
    return v <= (unsigned long long)INT64_MAX ? (int64_t)v : -1;
}

/* ------------------------------------------------------------------ conversion */

typedef struct conv {
    hir_program *p;
    hir_form from, to;
    hir_diag *d;
    int errors;
    bool oom;
    hir_map numbers_2025;        /* 2025 object numbers in use -> 1 */
    hir_map addr_to_number;      /* interned address -> 1 + its 2025 number */
    hir_map addrs;               /* interned address text -> 1 (the 2026 names in use) */
    int64_t next_free;           /* a number above every one in use */
} conv;

static void conv_error(conv *c, const hir_stmt *s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void conv_error(conv *c, const hir_stmt *s, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char what[96];
    const char *kw = hir_ops[s->op].keyword ? hir_ops[s->op].keyword : "this statement";
    if (s->op == HIR_OP_COMMUNICATION || s->op == HIR_OP_CPERM)
        snprintf(what, sizeof what, "%s %" PRId64, kw, s->u.comm->number);
    else if (s->op == HIR_OP_DISPATCH || s->op == HIR_OP_COMBINE)
        snprintf(what, sizeof what, "%s %" PRId64, kw, s->u.moe->number);
    else
        snprintf(what, sizeof what, "%s", kw);
    hir_diag_emit(c->d, HIR_ERROR, s->loc, "%s cannot be written in the %s form: %s", what,
                  c->to == HIR_FORM_2026 ? "2026" : "2025", msg);
    c->errors++;
}

static bool collect_streams(hir_stmt *s, int depth, void *ctx)
{
    (void)depth;
    conv *c = ctx;
    if (!(hir_ops[s->op].flags & HIR_OPF_STREAM) || s->u.stream.index)
        return true;
    const hir_stream_ref *r = &s->u.stream;
    if (r->addr) {
        hir_map_put(&c->addrs, (uint64_t)(uintptr_t)r->addr, (void *)1);
    } else if (r->number >= 0) {
        hir_map_put(&c->numbers_2025, (uint64_t)r->number, (void *)1);
        if (r->number >= c->next_free)
            c->next_free = r->number == INT64_MAX ? INT64_MAX : r->number + 1;
    }
    return true;
}

/* A 2025 number no stream has yet. */
static int64_t fresh_number(conv *c)
{
    int64_t n = c->next_free;
    if (n == INT64_MAX || hir_map_get(&c->numbers_2025, (uint64_t)n))
        for (n = 0; hir_map_get(&c->numbers_2025, (uint64_t)n); n++)
            ;                     /* the top is taken (INT64_MAX): the first hole from 0 */
    return n;
}

/* Every stream object of a 2025 statement has a number; a 2026 object gets the number its
 * address stands for unless another object has it already. */
static void stream_to_2025(conv *c, hir_stmt *s)
{
    hir_stream_ref *r = &s->u.stream;
    if (!r->addr) {
        if (r->index && r->index->kind == HIR_SC_INT)
            conv_error(c, s, "'Stream %" PRId64 "' is a stream index, and the 2025 form reads a "
                       "bare number as a stream object", r->index->ival);
        return;
    }
    uint64_t key = (uint64_t)(uintptr_t)r->addr;
    void *known = hir_map_get(&c->addr_to_number, key);
    int64_t n;
    if (known) {
        n = (int64_t)(uintptr_t)known - 1;
    } else {
        n = addr_number(r->addr);
        if (n < 0 || n == INT64_MAX || hir_map_get(&c->numbers_2025, (uint64_t)n))
            n = fresh_number(c);
        hir_map_put(&c->numbers_2025, (uint64_t)n, (void *)1);
        hir_map_put(&c->addr_to_number, key, (void *)(uintptr_t)(n + 1));
        if (n >= c->next_free)
            c->next_free = n == INT64_MAX ? INT64_MAX : n + 1;
    }
    r->number = n;
    r->addr = NULL;
}

/* A 2025 stream object gets the address hir_stream_invented_addr gives its number, unless
 * that text already names another object of the program. */
static void stream_to_2026(conv *c, hir_stmt *s)
{
    hir_stream_ref *r = &s->u.stream;
    if (r->addr || r->index || r->number < 0)
        return;
    uint64_t key = (uint64_t)r->number | (UINT64_C(1) << 63);   /* apart from address keys */
    void *known = r->number == INT64_MAX ? NULL : hir_map_get(&c->addr_to_number, key);
    if (known) {
        r->addr = known;
        return;
    }
    uint64_t a = hir_stream_invented_addr(r->number);
    const char *text;
    for (;;) {
        char buf[24];
        snprintf(buf, sizeof buf, "0x%" PRIx64, a);
        text = hir_program_intern(c->p, buf);
        if (!hir_map_get(&c->addrs, (uint64_t)(uintptr_t)text))
            break;
        a += 16;             /* taken by an object of its own: the next free one */
    }
    hir_map_put(&c->addrs, (uint64_t)(uintptr_t)text, (void *)1);
    if (r->number != INT64_MAX)
        hir_map_put(&c->addr_to_number, key, (void *)text);
    r->addr = text;
}

static bool team_is_identity(const hir_comm *m)
{
    if (m->team_truncated)
        return false;
    for (int i = 0; i < m->nteam; i++)
        if (m->team[i] != i)
            return false;
    return true;
}

/* A root is a device id in 2025 and a position in the team in 2026 (they agree for teams
 * (0 1 … n-1)). A constant root is carried across; any other needs such a team. */
static void convert_root(conv *c, hir_stmt *s)
{
    hir_comm *m = s->u.comm;
    if (!m->root || c->from == c->to || team_is_identity(m))
        return;
    int64_t v;
    if (!hir_scalar_const(m->root, &v)) {
        conv_error(c, s, "its root is not a constant and its team is not (0 1 … n-1), so the "
                   "root would change meaning (a device id in 2025, a team position in 2026)");
        return;
    }
    if (c->to == HIR_FORM_2026) {
        int pos = -1;
        for (int i = 0; i < m->nteam && pos < 0; i++)
            if (m->team[i] == v)
                pos = i;
        if (pos < 0) {
            conv_error(c, s, "root=%" PRId64 " is not a member of its team", v);
            return;
        }
        m->root = hir_scalar_int(c->p, pos);
    } else {
        if (v < 0 || v >= m->nteam) {
            conv_error(c, s, "root=%" PRId64 " is not a position in its team of %d", v, m->nteam);
            return;
        }
        m->root = hir_scalar_int(c->p, m->team[v]);
    }
}

/* The size= of a long ALLOCATE: the product of the tensor's non-reduction extents, constants
 * folded into one factor in front. NULL when a constant product overflows. */
static hir_scalar *alloc_size(hir_program *p, const hir_tensor *t)
{
    int64_t k = 1;
    hir_scalar *sym = NULL;
    for (int i = 0; i < t->nloop; i++) {
        const hir_iterdomain *id = t->loop[i];
        if (id->itype == HIR_IT_REDUCTION || !id->extent)
            continue;
        int64_t v;
        if (hir_scalar_const(id->extent, &v)) {
            if (__builtin_mul_overflow(k, v, &k))
                return NULL;
        } else {
            sym = sym ? hir_scalar_anon(p, hir_sexpr_binary(p, HIR_BIN_MUL, sym, id->extent))
                      : id->extent;
        }
    }
    if (!sym)
        return hir_scalar_int(p, k);
    if (k == 1)
        return sym;
    return hir_scalar_anon(p, hir_sexpr_binary(p, HIR_BIN_MUL, hir_scalar_int(p, k), sym));
}

static void convert_stmt(conv *c, hir_stmt *s, int loops)
{
    const hir_opinfo *info = &hir_ops[s->op];
    if (info->forms == HIR_FORMS_NEW && c->to == HIR_FORM_2025) {
        if (s->op == HIR_OP_HIR_ALLOCATE && loops == 0) {
            hir_scalar *size = alloc_size(c->p, s->out);
            if (!size) {
                conv_error(c, s, "the size of the tensor does not fit in 64 bits");
                return;
            }
            s->op = HIR_OP_ALLOCATE;
            s->u.alloc.size = size;
            s->u.alloc.resets_to_zero = false;
            s->u.alloc.alias = NULL;
            s->form = HIR_FORM_2025;
            return;
        }
        if (s->op == HIR_OP_HIR_ALLOCATE)
            conv_error(c, s, "a fresh allocation inside a loop gets a new buffer every "
                       "iteration; the 2025 ALLOCATE would reuse one buffer");
        else
            conv_error(c, s, "nvFuser's 2025 printer has no such statement");
        return;
    }
    if (s->op == HIR_OP_COMMUNICATION) {
        if (c->to == HIR_FORM_2025 && s->u.comm->type == HIR_COMM_ALLTOALL)
            conv_error(c, s, "type=AllToAll exists only in the 2026 form");
        convert_root(c, s);
    }
    if (s->op == HIR_OP_SDPA && c->to == HIR_FORM_2025 && (s->u.sdpa->has_bias || s->u.sdpa->has_mask))
        conv_error(c, s, "bias= and mask= exist only in the 2026 form");
    if (info->flags & HIR_OPF_STREAM) {
        if (c->to == HIR_FORM_2025)
            stream_to_2025(c, s);
        else
            stream_to_2026(c, s);
    }
    s->form = c->to;
}

/* loops: the number of FOR statements around b */
static void convert_block(conv *c, hir_block *b, int loops)
{
    for (int i = 0; i < hir_block_size(b); i++) {
        hir_stmt *s = hir_block_at(b, i);
        convert_stmt(c, s, loops);
        int inner = loops + (s->op == HIR_OP_FOR || s->op == HIR_OP_HOST_FOR);
        convert_block(c, &s->body, inner);
        convert_block(c, &s->else_body, inner);
    }
}

int hir_program_convert_form(hir_program *p, hir_form to, hir_diag *d)
{
    conv c = {0};
    c.p = p;
    c.from = hir_program_form(p);
    c.to = to;
    c.d = d;
    hir_map_init_in(&c.numbers_2025, p->arena);
    hir_map_init_in(&c.addr_to_number, p->arena);
    hir_map_init_in(&c.addrs, p->arena);
    hir_block_walk(&p->body, 0, collect_streams, &c);
    convert_block(&c, &p->body, 0);
    hir_map_fini(&c.numbers_2025);
    hir_map_fini(&c.addr_to_number);
    hir_map_fini(&c.addrs);
    p->form = to;
    return c.errors;
}
