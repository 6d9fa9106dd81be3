/* tables.c — the one name array per table of dialect/defs/ and the lookups over them. Nothing
 * else in hir spells an operator, collective, transport, memory type or parallel type. */
#include "dialect/tables.h"

#include <stdint.h>
#include <string.h>

/* ------------------------------------------------------------------ element-wise */

#define HIR_UNARY(E, N, S) {N, S},
static const struct { const char *name, *sym; } unary_ops[] = {
#include "dialect/defs/ewise.def"
};
#define HIR_BINARY(E, N, S) {N, S},
static const struct { const char *name, *sym; } binary_ops[] = {
#include "dialect/defs/ewise.def"
};
#define HIR_TERNARY(E, N, S) N,
static const char *const ternary_names[] = {
#include "dialect/defs/ewise.def"
};
#define HIR_REDUCE(E, N, S) N,
static const char *const reduce_names[] = {
#include "dialect/defs/ewise.def"
};

const char *hir_unary_op_name(hir_unary_op op) { return (unsigned)op < HIR_UN_COUNT ? unary_ops[op].name : "?"; }
const char *hir_unary_prefix(int op) { return (unsigned)op < HIR_UN_COUNT ? unary_ops[op].sym : NULL; }
const char *hir_binary_op_name(hir_binary_op op) { return (unsigned)op < HIR_BIN_COUNT ? binary_ops[op].name : "?"; }
const char *hir_binary_infix(int op) { return (unsigned)op < HIR_BIN_COUNT ? binary_ops[op].sym : NULL; }
const char *hir_ternary_op_name(hir_ternary_op op) { return (unsigned)op < HIR_TER_COUNT ? ternary_names[op] : "?"; }
const char *hir_reduce_op_name(hir_reduce_op op) { return (unsigned)op < HIR_RED_COUNT ? reduce_names[op] : "?"; }

static bool same(const char *a, const char *s, size_t n) { return a && strlen(a) == n && !memcmp(a, s, n); }

/* n bytes equal: the spellings compared are a few bytes long, shorter than a memcmp call */
static bool same_bytes(const char *a, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i] != s[i])
            return false;
    return true;
}

bool hir_unary_op_lookup(const char *name, hir_unary_op *out)
{
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < HIR_UN_COUNT; i++)
            if (same(pass ? unary_ops[i].sym : unary_ops[i].name, name, strlen(name))) {
                *out = (hir_unary_op)i;
                return true;
            }
    return false;
}

bool hir_binary_op_lookup(const char *name, hir_binary_op *out)
{
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < HIR_BIN_COUNT; i++)
            if (same(pass ? binary_ops[i].sym : binary_ops[i].name, name, strlen(name))) {
                *out = (hir_binary_op)i;
                return true;
            }
    return false;
}

bool hir_ternary_op_lookup(const char *name, hir_ternary_op *out)
{
    for (int i = 0; i < HIR_TER_COUNT; i++)
        if (!strcmp(ternary_names[i], name)) {
            *out = (hir_ternary_op)i;
            return true;
        }
    return false;
}

bool hir_reduce_op_lookup(const char *name, hir_reduce_op *out)
{
    for (int i = 0; i < HIR_RED_COUNT; i++)
        if (!strcmp(reduce_names[i], name)) {
            *out = (hir_reduce_op)i;
            return true;
        }
    return false;
}

bool hir_ewise_fn_lookup(const char *s, int nargs, int *op)
{
    size_t n = strlen(s);
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            if (n < 2 || s[n - 1] != 'f')
                break;
            n--;
        }
        if (nargs == 2)
            for (int i = 0; i < HIR_BIN_COUNT; i++)
                if (same(binary_ops[i].name, s, n)) {
                    *op = i;
                    return true;
                }
        if (nargs == 1)
            for (int i = 0; i < HIR_UN_COUNT; i++)
                if (same(unary_ops[i].name, s, n)) {
                    *op = i;
                    return true;
                }
        if (nargs == 3)
            for (int i = 0; i < HIR_TER_COUNT; i++)
                if (same(ternary_names[i], s, n)) {
                    *op = i;
                    return true;
                }
    }
    return false;
}

bool hir_ewise_is_cast(const char *name)
{
    /* every conversion nvFuser prints (csrc/type.cpp, supported_casts2string) is spelled
     * "__<from>2<to>", "__to_<to>" or "__real_then_…"; no other function starts with "__" */
    return name && name[0] == '_' && name[1] == '_' && name[2] != 0;
}

/* ------------------------------------------------------------------ collectives, transports */

static const struct { const char *name; bool root, reduces; } comm_types[] = {
#define X(E, N, ROOT, RED) {N, ROOT, RED},
#include "dialect/defs/comm.def"
#undef X
};
const char *hir_comm_type_name(hir_comm_type t) { return (unsigned)t < HIR_COMM_COUNT ? comm_types[t].name : "?"; }
bool hir_comm_type_has_root(hir_comm_type t) { return (unsigned)t < HIR_COMM_COUNT && comm_types[t].root; }
bool hir_comm_type_reduces(hir_comm_type t) { return (unsigned)t < HIR_COMM_COUNT && comm_types[t].reduces; }
bool hir_comm_type_lookup(const char *name, hir_comm_type *out)
{
    for (int i = 0; i < HIR_COMM_COUNT; i++)
        if (!strcmp(comm_types[i].name, name)) {
            *out = (hir_comm_type)i;
            return true;
        }
    return false;
}

static const char *const transport_names[] = {
#define X(E, N) N,
#include "dialect/defs/transport.def"
#undef X
};
const char *hir_backend_kind_name(hir_backend_kind b) { return (unsigned)b < HIR_BK_COUNT ? transport_names[b] : "?"; }
bool hir_backend_kind_lookup(const char *name, hir_backend_kind *out)
{
    for (int i = 0; i < HIR_BK_COUNT; i++)
        if (!strcmp(transport_names[i], name)) {
            *out = (hir_backend_kind)i;
            return true;
        }
    return false;
}

/* ------------------------------------------------------------------ memory types */

static const struct { const char *letter, *name; size_t letter_len; } mems[] = {
#define X(E, L, N) {L, N, sizeof(L) - 1},
#include "dialect/defs/mem.def"
#undef X
};
const char *hir_mem_letter(hir_mem m) { return (unsigned)m < HIR_MEM_COUNT ? mems[m].letter : "?"; }
size_t hir_mem_letter_len(hir_mem m) { return (unsigned)m < HIR_MEM_COUNT ? mems[m].letter_len : 1; }
const char *hir_mem_name(hir_mem m) { return (unsigned)m < HIR_MEM_COUNT ? mems[m].name : "?"; }
bool hir_mem_lookup_letter(const char *s, size_t n, hir_mem *out)
{
    for (int i = 0; i < HIR_MEM_COUNT; i++)
        if (mems[i].letter_len == n && same_bytes(mems[i].letter, s, n)) {
            *out = (hir_mem)i;
            return true;
        }
    return false;
}
bool hir_mem_lookup_name(const char *name, hir_mem *out)
{
    for (int i = 0; i < HIR_MEM_COUNT; i++)
        if (!strcmp(mems[i].name, name)) {
            *out = (hir_mem)i;
            return true;
        }
    return false;
}

/* ------------------------------------------------------------------ IterDomains */

static const char itype_letters[] = {
#define X(E, C) C,
#include "dialect/defs/itype.def"
#undef X
};
char hir_itype_letter(hir_itype t) { return (unsigned)t < HIR_IT_COUNT ? itype_letters[t] : '?'; }
bool hir_itype_lookup(char c, hir_itype *out)
{
    for (int i = 0; i < HIR_IT_COUNT; i++)
        if (itype_letters[i] == c) {
            *out = (hir_itype)i;
            return true;
        }
    return false;
}

static const char *const ptype_names[] = {
#define X(E, S) S,
#include "dialect/defs/ptype.def"
#undef X
};
static const uint8_t ptype_lens[] = {
#define X(E, S) sizeof(S) - 1,
#include "dialect/defs/ptype.def"
#undef X
};
const char *hir_ptype_name(hir_ptype p) { return (unsigned)p < HIR_PT_COUNT ? ptype_names[p] : "?"; }
size_t hir_ptype_name_len(hir_ptype p) { return (unsigned)p < HIR_PT_COUNT ? ptype_lens[p] : 1; }
bool hir_ptype_lookup(const char *s, size_t n, hir_ptype *out)
{
    for (int i = 0; i < HIR_PT_COUNT; i++)
        if (ptype_lens[i] == n && same_bytes(ptype_names[i], s, n)) {
            *out = (hir_ptype)i;
            return true;
        }
    return false;
}
bool hir_ptype_is_stream(hir_ptype p)
{
    return p == HIR_PT_STREAM || p == HIR_PT_STREAM_OLD1 || p == HIR_PT_STREAM_OLD0;
}
bool hir_ptype_is_device(hir_ptype p)
{
    return p == HIR_PT_DIDX || p == HIR_PT_DIDY || p == HIR_PT_DIDZ;
}

/* ------------------------------------------------------------------ statements */

const hir_opinfo hir_ops[HIR_OP_COUNT] = {
#define X(E, KW, TOK, FMT, NMIN, NMAX, OUT, FL, FORMS, KW26) {KW, HIR_FMT_##FMT, NMIN, NMAX, OUT, FL, #E, HIR_FORMS_##FORMS, KW26},
#include "dialect/defs/ops.def"
#undef X
};

bool hir_op_lookup(const char *kw, size_t n, hir_op *out)
{
    for (int i = 0; i < HIR_OP_COUNT; i++)
        if (same(hir_ops[i].keyword, kw, n)) {
            *out = (hir_op)i;
            return true;
        }
    return false;
}
