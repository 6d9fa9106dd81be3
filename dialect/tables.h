/* tables.h — the enums and name lookups generated from the X-macro tables of dialect/defs/:
 * statement kinds, element-wise and reduction operators, collective kinds, transports, memory
 * types, IterDomain and parallel types. Every name the text format spells is written once, in
 * defs/; this header and tables.c derive the enums, the one name array per table and the
 * lookups. It needs nothing else of the dialect, so backends may include it. */
#ifndef HIR_TABLES_H
#define HIR_TABLES_H

#include <stdbool.h>
#include <stddef.h>

/* ------------------------------------------------------------------ element-wise (ewise.def) */

#define HIR_UNARY(E, N, S) HIR_UN_##E,
typedef enum hir_unary_op {
#include "dialect/defs/ewise.def"
    HIR_UN_COUNT
} hir_unary_op;
#define HIR_BINARY(E, N, S) HIR_BIN_##E,
typedef enum hir_binary_op {
#include "dialect/defs/ewise.def"
    HIR_BIN_COUNT
} hir_binary_op;
#define HIR_TERNARY(E, N, S) HIR_TER_##E,
typedef enum hir_ternary_op {
#include "dialect/defs/ewise.def"
    HIR_TER_COUNT
} hir_ternary_op;
#define HIR_REDUCE(E, N, S) HIR_RED_##E,
typedef enum hir_reduce_op {
#include "dialect/defs/ewise.def"
    HIR_RED_COUNT
} hir_reduce_op;

/* name = nvFuser's spelling ("add"; "?" out of range); infix/prefix = the operator spelling or
 * NULL. The lookups accept the name or the operator spelling; false when neither matches. */
const char *hir_unary_op_name(hir_unary_op op);
const char *hir_unary_prefix(int op);
const char *hir_binary_op_name(hir_binary_op op);
const char *hir_binary_infix(int op);
const char *hir_ternary_op_name(hir_ternary_op op);
const char *hir_reduce_op_name(hir_reduce_op op);
bool hir_unary_op_lookup(const char *name, hir_unary_op *out);
bool hir_binary_op_lookup(const char *name, hir_binary_op *out);
bool hir_ternary_op_lookup(const char *name, hir_ternary_op *out);
bool hir_reduce_op_lookup(const char *name, hir_reduce_op *out);

/* Function-style names of scalar expressions, by argument count: binary first (max/min are
 * binary), then unary, then ternary. A trailing 'f' (fmaxf, powf) names the same op. nargs
 * picks the family (1 unary, 2 binary, 3 ternary); *op is the op of that family. */
bool hir_ewise_fn_lookup(const char *name, int nargs, int *op);
/* true when a one-argument function that is no row of ewise.def is one of nvFuser's casts
 * ("__float2half", "__to_int64"); any other such function has no meaning hir knows */
bool hir_ewise_is_cast(const char *name);

/* ------------------------------------------------------------------ collectives (comm.def) */

typedef enum hir_comm_type {
#define X(E, N, ROOT, RED) HIR_COMM_##E,
#include "dialect/defs/comm.def"
#undef X
    HIR_COMM_COUNT
} hir_comm_type;
const char *hir_comm_type_name(hir_comm_type t);
bool hir_comm_type_has_root(hir_comm_type t);
bool hir_comm_type_reduces(hir_comm_type t);
bool hir_comm_type_lookup(const char *name, hir_comm_type *out);

/* ------------------------------------------------------------------ transports (transport.def) */

typedef enum hir_backend_kind {
#define X(E, N) HIR_BK_##E,
#include "dialect/defs/transport.def"
#undef X
    HIR_BK_COUNT
} hir_backend_kind;
const char *hir_backend_kind_name(hir_backend_kind b);
bool hir_backend_kind_lookup(const char *name, hir_backend_kind *out);

/* ------------------------------------------------------------------ memory types (mem.def) */

typedef enum hir_mem {
#define X(E, L, N) HIR_MEM_##E,
#include "dialect/defs/mem.def"
#undef X
    HIR_MEM_COUNT
} hir_mem;
const char *hir_mem_letter(hir_mem m);        /* "g", "l", "s", "t", "sym" */
size_t hir_mem_letter_len(hir_mem m);         /* strlen(hir_mem_letter(m)) */
const char *hir_mem_name(hir_mem m);          /* "global", "register", ... (ALLOCATE mem_type) */
bool hir_mem_lookup_letter(const char *s, size_t n, hir_mem *out);
bool hir_mem_lookup_name(const char *name, hir_mem *out);

/* ------------------------------------------------------------------ IterDomains (itype.def, ptype.def) */

typedef enum hir_itype {
#define X(E, C) HIR_IT_##E,
#include "dialect/defs/itype.def"
#undef X
    HIR_IT_COUNT
} hir_itype;
char hir_itype_letter(hir_itype t);
bool hir_itype_lookup(char c, hir_itype *out);

typedef enum hir_ptype {
#define X(E, S) HIR_PT_##E,
#include "dialect/defs/ptype.def"
#undef X
    HIR_PT_COUNT
} hir_ptype;
const char *hir_ptype_name(hir_ptype p);
size_t hir_ptype_name_len(hir_ptype p);       /* strlen(hir_ptype_name(p)) */
bool hir_ptype_lookup(const char *s, size_t n, hir_ptype *out);
bool hir_ptype_is_stream(hir_ptype p);
bool hir_ptype_is_device(hir_ptype p);

/* ------------------------------------------------------------------ statements (ops.def) */

typedef enum hir_op {
#define X(E, KW, TOK, FMT, NMIN, NMAX, OUT, FL, FORMS, KW26) HIR_OP_##E,
#include "dialect/defs/ops.def"
#undef X
    HIR_OP_COUNT
} hir_op;

typedef enum hir_fmt {
    HIR_FMT_ALLOCATE, HIR_FMT_STREAM, HIR_FMT_FOR, HIR_FMT_HOST_FOR, HIR_FMT_IF,
    HIR_FMT_ALIAS_SELECT, HIR_FMT_SHARD, HIR_FMT_SYMVIEW, HIR_FMT_LOADSTORE, HIR_FMT_LINEAR,
    HIR_FMT_MATMUL, HIR_FMT_UNARY, HIR_FMT_BINARY, HIR_FMT_TERNARY, HIR_FMT_REDUCTION,
    HIR_FMT_SELECT, HIR_FMT_SLICE, HIR_FMT_VIEW, HIR_FMT_FLAGS, HIR_FMT_COMM, HIR_FMT_P2P,
    HIR_FMT_WAIT, HIR_FMT_STARTCOAL, HIR_FMT_ENDCOAL, HIR_FMT_SHARE, HIR_FMT_POST,
    HIR_FMT_LAUNCH, HIR_FMT_DEALLOC, HIR_FMT_SCALARDEF, HIR_FMT_HIRALLOC, HIR_FMT_CPERM,
    HIR_FMT_DISPATCH, HIR_FMT_COMBINE, HIR_FMT_SDPA, HIR_FMT_FULL,
    HIR_FMT_GROUPEDMMA, HIR_FMT_SDPABWD,
    HIR_FMT_COUNT   /* not a format: the number of them (dispatch tables are this long) */
} hir_fmt;

enum {
    HIR_OPF_ALLOC = 1, HIR_OPF_STREAM = 2, HIR_OPF_REGION = 4, HIR_OPF_VIEW = 8,
    HIR_OPF_COMPUTE = 16, HIR_OPF_COMM = 32, HIR_OPF_KERNEL = 64,
};

/* Which generations of nvFuser's printer spell a statement (the forms column of ops.def). */
typedef enum hir_forms {
    HIR_FORMS_SAME,              /* one spelling, the same in 2025 and 2026 */
    HIR_FORMS_EACH,              /* a spelling per generation, chosen by hir_stmt.form */
    HIR_FORMS_NEW,               /* 2026 only: no 2025 spelling */
} hir_forms;

typedef struct hir_opinfo {
    const char *keyword;
    hir_fmt fmt;
    int nin_min, nin_max;
    int has_out;
    unsigned flags;
    const char *enum_name;
    hir_forms forms;
    const char *keyword2026;     /* the 2026 keyword where it differs from keyword, or NULL */
} hir_opinfo;
extern const hir_opinfo hir_ops[HIR_OP_COUNT];     /* the op table (const data) */
/* Keyword lookup for statements written "T.. = KEYWORD(...)" or starting a line. */
bool hir_op_lookup(const char *kw, size_t n, hir_op *out);

#endif
