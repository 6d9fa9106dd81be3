/* hir.h — the Host IR dialect: values (tensors, iteration domains, meshes, scalars, streams),
 * statements and programs, printer, verifier. One header for the whole dialect, grouped by the
 * file that defines each part; it builds on support/ (arena, maps, interning, diagnostics). */
#ifndef HIR_H
#define HIR_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dialect/dtype.h"
#include "dialect/tables.h"   /* enums and names generated from dialect/defs/ */
#include "support/diag.h"
#include "support/support.h"

/* HIR_VERSION ("0.1.0") is the top-level CMakeLists.txt's project(VERSION), given to every
 * file by the compiler */
#ifndef HIR_VERSION
#error "HIR_VERSION comes from CMake: project(VERSION) in the top-level CMakeLists.txt"
#endif
#define HIR_MAX_NESTING 256          /* deeper bodies are refused with a diagnostic */
/* hir-run refuses a loop of more iterations (docs/runner.md): a host loop runs over streams,
 * devices or chunks, and an extent near 2^63 would otherwise run for ever. */
#define HIR_MAX_LOOP_TRIPS (INT64_C(1) << 24)

/* ------------------------------------------------------------------ values (ir.c) */

typedef struct hir_program hir_program;
typedef struct hir_scalar hir_scalar;
typedef struct hir_stmt hir_stmt;

typedef enum hir_value_kind { HIR_VAL_TENSOR, HIR_VAL_SCALAR } hir_value_kind;

/* Common head of tensors and scalars, so operand lists can hold either. */
typedef struct hir_value {
    hir_value_kind kind;
} hir_value;

enum { HIR_ID_RFACTOR = 1, HIR_ID_PADDED = 2, HIR_ID_CLUSTERED = 4 };

/* The rare parts of an IterDomain, out of line (most have none of them). */
typedef struct hir_iterdomain_range {
    hir_scalar *start;           /* NULL when 0 (not printed) */
    hir_scalar *stop;            /* NULL when it is the extent (not printed) */
    hir_scalar *expanded;        /* NULL unless an expanded broadcast (" ex E") */
} hir_iterdomain_range;

typedef struct hir_iterdomain {
    int64_t number;
    hir_scalar *extent;
    hir_iterdomain_range *range; /* NULL when start, stop and expanded are all NULL; one per
                                    IterDomain (never shared), set by hir_iterdomain_set_range */
    hir_itype itype : 8;
    hir_ptype ptype : 8;
    unsigned flags : 8;          /* HIR_ID_* */
    hir_loc loc;                 /* first place it was spelled */
} hir_iterdomain;

static inline hir_scalar *hir_id_start(const hir_iterdomain *id) { return id->range ? id->range->start : NULL; }
static inline hir_scalar *hir_id_stop(const hir_iterdomain *id) { return id->range ? id->range->stop : NULL; }
static inline hir_scalar *hir_id_expanded(const hir_iterdomain *id) { return id->range ? id->range->expanded : NULL; }

/* An N-d device mesh, interned per program (equal meshes are the same pointer). */
typedef struct hir_mesh {
    int ndims;
    int64_t *dims;               /* extent of each dimension */
    int64_t *devices;            /* row-major, product(dims) entries */
    int64_t ndevices;
} hir_mesh;

/* A tensor's logical view (shape.c, docs/language.md "How hir decides a shape"): the logical
 * axes the print stands for and where each lives in the loop-ordered buffer. A logical axis is
 * one loop IterDomain, or the parts of a split (a device or stream outer axis, then the inner,
 * or three parts for a nested split), outer to inner. Made by hir_tensor_create from the
 * tensor's own print (open while a split is in question), decided once per program by
 * hir_program_shapes (which the verifier calls) from the whole text and its operations. */
enum { HIR_SHAPE_OPEN = 0, HIR_SHAPE_DECIDED = 1, HIR_SHAPE_REFUSED = 2 };
typedef struct hir_shape {
    hir_iterdomain **ids;        /* the nloop loop IterDomains in logical order, each axis's
                                    parts together; the loop array itself when in printed order */
    unsigned char *parts;        /* naxes entries: loop IterDomains of each logical axis; NULL
                                    when every axis is one IterDomain */
    int naxes;
    unsigned char state;         /* HIR_SHAPE_* */
    const char *how;             /* how it was decided (hir-opt --print-shapes), or NULL */
} hir_shape;

typedef struct hir_tensor {
    hir_value head;
    hir_mem mem : 8;
    hir_dtype dtype : 8;
    int nloop;
    int64_t number;
    hir_iterdomain **loop;       /* loop domain as printed */
    hir_shape shape;             /* the logical view (shape.c) */
    const char *annotations;     /* " ca_pos( 2 )" etc. verbatim, or NULL */
    hir_mesh *mesh;              /* NULL when printed without one */
    hir_loc loc;                 /* first use */
} hir_tensor;

typedef enum hir_scalar_kind {
    HIR_SC_NAMED,                /* rank, streamIdx, numberOfStreams, threadIdx.x, ... */
    HIR_SC_SYMBOL,               /* i84, b3, f4x2_7: numbered */
    HIR_SC_ANON,                 /* an unnamed value with a definition, printed inline */
    HIR_SC_INT, HIR_SC_BOOL, HIR_SC_FLOAT,   /* literals */
} hir_scalar_kind;

/* Scalar expression operators: the element-wise tables of dialect/defs/ewise.def. */
typedef enum hir_sexpr_kind { HIR_SX_UNARY, HIR_SX_BINARY, HIR_SX_TERNARY, HIR_SX_CALL } hir_sexpr_kind;

typedef struct hir_sexpr {
    hir_sexpr_kind kind : 8;
    bool infix;                  /* printed "a + b" / "-a" rather than "add(a, b)" */
    unsigned char nargs;         /* 1 to 3 */
    int op;                      /* hir_unary_op / hir_binary_op / hir_ternary_op */
    const char *fn;              /* function name as printed (interned) for non-infix */
    hir_scalar *args[3];
} hir_sexpr;

struct hir_scalar {
    hir_value head;
    hir_scalar_kind kind : 8;
    hir_dtype dtype : 8;         /* Index for i-symbols; bool for b; ... */
    bool inline_expand;          /* SYMBOL with def: print "( def )" in inline positions */
    int64_t number;              /* SYMBOL */
    const char *name;            /* NAMED: the name; SYMBOL: the prefix; FLOAT: the spelling */
    union {                      /* by kind: read only the one the kind has */
        int64_t ival;            /* INT, BOOL */
        double fval;             /* FLOAT */
    };
    hir_sexpr *def;              /* defining expression, or NULL */
    hir_loc def_loc;             /* where the definition was read */
    hir_loc loc;                 /* first use */
};

/* Streams: "Stream N" objects (by number), "Stream 0x1c1e0b80" objects (by the address
 * nvFuser printed, 2026) or "Stream <index expression>". An addressed stream gets an object
 * number of its own (HIR_STREAM_ADDR_BASE + order of first appearance), so the runner keys
 * every object the same way; the address is kept to print it back. */
#define HIR_STREAM_ADDR_BASE ((int64_t)1 << 40)
typedef struct hir_stream_ref {
    int64_t number;              /* >= 0 for an object, -1 when indexed */
    hir_scalar *index;           /* indexed streams */
    const char *addr;            /* "0x…" (interned) for an addressed object, else NULL */
} hir_stream_ref;

/* The generation of nvFuser's printer a statement was spelled in (docs/language.md): set by
 * the parser per statement and used by the printer; --print-form rewrites it. Statements made
 * by passes are 2025 unless a pass copies the form of the statement it replaces. */
typedef enum hir_form { HIR_FORM_2025 = 0, HIR_FORM_2026 = 1 } hir_form;
/* A 2025 stream object (a number) printed in the 2026 form shows an invented address:
 * HIR_FORM_STREAM_ADDR + 16 x number for numbers below HIR_FORM_STREAM_SMALL, the number
 * itself (in hex) above; --print-form=2025 reads such an address back as the number, and a real
 * address as its value (docs/language.md §8). */
#define HIR_FORM_STREAM_ADDR UINT64_C(0x7e570000)
#define HIR_FORM_STREAM_SMALL 4096

/* ------------------------------------------------------------------ statements (ir.c) */

typedef struct hir_block {
    hir_ptrvec stmts;            /* hir_stmt* */
} hir_block;

/* A Communication / P2PCommunication / EndCoalescing expression, numbered in the shared
 * expression counter. P2P expressions can be named by ShareMemHandles before their own
 * statement, so they live apart from the statement that executes them. */
typedef struct hir_comm {
    int64_t number;
    hir_op op : 8;               /* COMMUNICATION, P2P, END_COAL or CPERM */
    /* the narrow fields of every part, together (8-bit enums: checked in ir.c) */
    hir_comm_type type : 8;      /* Communication */
    hir_reduce_op red_op : 8;    /* reductions: not printed by nvFuser; sum */
    hir_backend_kind backend : 8;
    bool team_truncated;         /* printed with " ..." (more than 100 members) */
    bool is_send;                /* P2P */
    bool backend_unprinted;      /* read without "backend=" (nvFuser before 2025-02-21, whose
                                    default was NCCL): printed without it while still NCCL */
    bool number_unprinted;       /* EndCoalescing read without its number (nvFuser before
                                    2025-06-03): the number is hir's, nothing can Wait on it */
    int nteam;
    /* Communication */
    int64_t *team;
    hir_scalar *root;            /* NULL when not printed */
    hir_tensor *input, *output;  /* NULL when not printed */
    /* P2P */
    hir_tensor *buffer;
    hir_scalar *peer;
    /* CollectivePermute (team, input, output and backend as above) */
    hir_scalar *send_peer, *recv_peer;
    hir_stmt *stmt;              /* the statement that executes it (NULL until seen) */
    hir_loc loc;                 /* first mention */
} hir_comm;

typedef struct hir_slice_range { hir_scalar *start, *stop, *step; } hir_slice_range;

/* The three layouts nvFuser's LaunchKernel::toString has had (csrc/host_ir/ir.cpp); all are
 * 2025 or later, so they are a property of the statement, not of its generation. */
typedef enum hir_launch_layout {
    HIR_LAUNCH_GROUP_ID = 0,   /* "LaunchKernel(" / "  Group ID: 0," / ... (2025-05-16 on) */
    HIR_LAUNCH_INDEX,          /* "  Index: 0," in place of Group ID (2025-05-15) */
    HIR_LAUNCH_ONE_LINE,       /* "LaunchKernel(Inputs: {T0, }, Outputs: {T1, })" (2025-01) */
} hir_launch_layout;

/* The rare, large parts of a statement live out of line, behind one pointer of the union:
 * hir_stmt_new allocates the part its op needs (sdpa, sdpa_bwd: hir_stmt_sdpa; Dispatch,
 * Combine: hir_stmt_moe), so the common statement stays small. */
typedef struct hir_stmt_moe {    /* Dispatch / Combine: in[] = in, topk_idx|topk_weights, ... */
    int64_t number;              /* expression number */
    int64_t num_experts;         /* Dispatch */
    hir_backend_kind backend;
    /* Dispatch: the outputs nvFuser does not print, named by a later Combine (received
     * topk_weights, src_idx); NULL until one does */
    hir_tensor *hidden[2];
    hir_stmt *dispatch;          /* Combine: the Dispatch whose out= is its in= */
} hir_stmt_moe;

typedef struct hir_stmt_sdpa {   /* sdpa: out = attention output; in[] = q, k, v, [bias], [mask],
                                  * dropout_p, is_causal, [scale] */
    hir_tensor *extra[3];        /* logsumexp, philox seed, philox offset */
    hir_loc extra_loc[3];
    bool has_bias, has_mask, has_scale;
} hir_stmt_sdpa;

/* A place in the statement's own source (s->loc.src), half the size of a hir_loc: every place a
 * parsed statement records lies in the text its statement was read from. end 0: none (no
 * spelled token ends at offset 0, which a container's header precedes). */
typedef struct hir_span {
    uint32_t begin, end;
} hir_span;
static inline hir_span hir_span_of(hir_loc l)
{
    hir_span r = {l.src ? l.begin : 0, l.src ? l.end : 0};
    return r;
}

struct hir_stmt {
    hir_op op : 8;               /* narrow: HIR_OP_COUNT <= 256 (checked in ir.c) */
    hir_form form : 8;           /* the spelling it was read in (2025 unless parsed as 2026) */
    int nin;
    hir_loc loc;
    hir_tensor *out;             /* output tensor (tensor-producing statements) */
    hir_value **in;              /* inputs, in printed order (tensors or scalars) */
    hir_span *in_loc;            /* where each input was spelled (parsed programs; hir_stmt_loc) */
    hir_span out_loc;            /* where the output was spelled (parsed programs; hir_stmt_loc) */
    union {
        struct {                 /* ALLOCATE */
            hir_mem mem;
            bool zero_init, resets_to_zero;
            hir_scalar *size;
            hir_tensor *alias;   /* ".alias=" line, or NULL */
        } alloc;
        hir_stream_ref stream;   /* Get/Set/Synchronize */
        struct {                 /* FOR (kernel IR) */
            hir_scalar *index;
            hir_iterdomain *id;
        } kfor;
        struct {                 /* FOR (host) */
            hir_scalar *index, *start, *stop;
        } hfor;
        struct {                 /* IF */
            const char *pred_type;   /* "Manual" ... (interned) */
            hir_scalar *pred;
            bool has_else;
        } cond;
        struct {                 /* HirAliasSelect, select */
            hir_iterdomain *axis;
            hir_scalar *index;
        } sel;
        hir_scalar *stream_index;     /* ShardByStream */
        struct {                 /* Set & co */
            bool permute;
            const char *cache_op;     /* NULL when not printed */
        } ls;
        struct {                 /* UNARY/BINARY/TERNARY */
            int op;
            bool infix;
            const char *fn;
        } ew;
        struct {                 /* reduction */
            const char *op_name;
            hir_scalar *init;
            hir_reduce_op op;
            bool allreduce;
        } red;
        struct {                 /* slice */
            int nranges;
            hir_slice_range *ranges;
        } slice;
        struct {                 /* broadcast / squeeze */
            int nflags;
            bool *flags;
        } flags;
        hir_comm *comm;          /* COMMUNICATION, P2P, END_COAL */
        struct {                 /* Wait */
            int64_t number;
            hir_comm *target;    /* resolved by the verifier / after parsing */
        } wait;
        struct {                 /* ShareMemHandles */
            int n;
            hir_comm **comms;
        } share;
        struct {                 /* PostOnStream, LaunchKernel */
            int64_t number;      /* HostUnit number / Group ID (-1: not printed) */
            int ninputs;         /* inputs are in[0..ninputs), outputs in[ninputs..nin) */
            hir_launch_layout layout;   /* LaunchKernel: which of its printed layouts */
        } kernel;
        struct {                 /* SCALAR_DEF */
            hir_sexpr *def;
            hir_scalar *out;     /* the scalar it defines (hir_stmt_sout) */
        } sdef;
        hir_stmt_moe *moe;       /* Dispatch / Combine (out of line) */
        hir_stmt_sdpa *sdpa;     /* sdpa, sdpa_bwd (out of line) */
    } u;
    hir_block body;              /* FOR bodies, IF then-body */
    hir_block else_body;         /* IF else-body */
};

/* A span of s as a location: in s's source; src NULL when the span is none. */
static inline hir_loc hir_stmt_loc(const hir_stmt *s, hir_span r)
{
    hir_loc l = {r.end ? s->loc.src : NULL, r.end ? r.begin : 0, r.end};
    return l;
}

/* The output scalar of a SCALAR_DEF, NULL for every other statement. */
static inline hir_scalar *hir_stmt_sout(const hir_stmt *s)
{
    return s->op == HIR_OP_SCALAR_DEF ? s->u.sdef.out : NULL;
}

/* Raw HostUnit trailer block (the embedded fusion is opaque to host IR). */
typedef struct hir_hostunit {
    int64_t number;
    const char *text;            /* verbatim, from "HostUnit" through "} // %kernel\n" */
    size_t len;
} hir_hostunit;

/* Number -> pointer, for numbers below cap (malloc'd; see ir.c). */
typedef struct hir_dense {
    void **items;
    size_t cap, n;               /* n: non-NULL entries */
} hir_dense;

struct hir_program {
    hir_arena *arena;
    hir_strtab strings;
    hir_ptrvec inputs, outputs;  /* hir_value* */
    hir_block body;
    hir_ptrvec hostunits;        /* hir_hostunit* */
    bool has_index_defs;         /* print the "Index definitions:" trailer */
    hir_ptrvec index_defs;       /* hir_scalar* in trailer order */
    /* lookup tables; tensors and IterDomains by number: a dense array (programs number densely)
     * with the map for numbers far past it (ir.c), so a huge number allocates nothing big */
    hir_dense dtensors, diterdomains, dcomms;   /* dcomms: Communications by expression number */
    hir_map tensors;             /* number -> hir_tensor*, numbers outside dtensors */
    hir_map iterdomains;         /* number -> hir_iterdomain*, numbers outside diterdomains */
    hir_scalar *small_ints[2048]; /* hir_scalar_int(v) for 0 <= v < 2048, ahead of literals */
    hir_map symbols;             /* number -> hir_scalar* */
    hir_map named;               /* interned name ptr -> hir_scalar* */
    hir_map comms;               /* expression number -> hir_comm*, numbers outside dcomms */
    hir_map meshes;              /* hash -> chain of hir_mesh* (see ir.c) */
    hir_map literals;            /* (kind,value) hash -> hir_scalar* */
    /* counters for values created by passes (one past the highest number seen) */
    int64_t next_tensor, next_iterdomain, next_scalar, next_expr, next_stream;
    hir_source *src;             /* the text it was parsed from, if any */
    /* The form of the statements hir_stmt_new makes (the program's form, docs/language.md §8):
     * 2025 while parsing, then the form of what was read (the parser notes a 2026 statement as
     * it puts it in a block: hir_program_form without the walk); --print-form sets it. */
    hir_form form;
};

/* Program lifetime; hir_program_new returns NULL when out of memory. */
hir_program *hir_program_new(void);
void         hir_program_free(hir_program *p);

/* Value construction and lookup. Getters create on first use. */
hir_tensor     *hir_tensor_get(hir_program *p, int64_t number);   /* NULL if absent */
hir_tensor     *hir_tensor_create(hir_program *p, int64_t number, hir_mem mem, hir_dtype dt,
                                  int nloop, hir_iterdomain **loop, hir_mesh *mesh);
/* A new tensor numbered after every existing one (for passes). */
hir_tensor     *hir_tensor_new(hir_program *p, hir_mem mem, hir_dtype dt, int nloop,
                               hir_iterdomain **loop, hir_mesh *mesh);
hir_iterdomain *hir_iterdomain_get(hir_program *p, int64_t number);
/* Every IterDomain of p, one per call, NULL after the last: those in the dense array, then
 * those in the map of far numbers (a number is in one of the two). Start with prev NULL; *at
 * is the cursor. */
hir_iterdomain *hir_iterdomain_next(const hir_program *p, const hir_iterdomain *prev, size_t *at);
/* Every Communication of the program, as hir_iterdomain_next walks IterDomains */
hir_comm *hir_comm_next(const hir_program *p, const hir_comm *prev, size_t *at);
hir_iterdomain *hir_iterdomain_create(hir_program *p, int64_t number, hir_itype it,
                                      hir_ptype pt, hir_scalar *extent);
/* Sets start, stop and expanded (each may be NULL); allocates the out-of-line part only when
 * one is not NULL. */
void            hir_iterdomain_set_range(hir_program *p, hir_iterdomain *id, hir_scalar *start,
                                         hir_scalar *stop, hir_scalar *expanded);
/* A fresh IterDomain cloned from `from` with a new number (for passes). */
hir_iterdomain *hir_iterdomain_clone(hir_program *p, const hir_iterdomain *from);
hir_mesh       *hir_mesh_intern(hir_program *p, int ndims, const int64_t *dims,
                                const int64_t *devices);
hir_scalar     *hir_scalar_named(hir_program *p, const char *name);
hir_scalar     *hir_scalar_symbol(hir_program *p, const char *prefix, int64_t number);
hir_scalar     *hir_scalar_int(hir_program *p, int64_t v);
hir_scalar     *hir_scalar_bool(hir_program *p, bool v);
hir_scalar     *hir_scalar_float(hir_program *p, hir_dtype dt, double v, const char *spelling);
hir_scalar     *hir_scalar_anon(hir_program *p, hir_sexpr *def);
/* A new numbered Index symbol with a definition (for passes; printed inline expanded). */
hir_scalar     *hir_scalar_new_index(hir_program *p, hir_sexpr *def);
hir_sexpr      *hir_sexpr_binary(hir_program *p, hir_binary_op op, hir_scalar *a, hir_scalar *b);
hir_sexpr      *hir_sexpr_unary(hir_program *p, hir_unary_op op, hir_scalar *a);
/* Function-style operator names (binary, unary, ternary by nargs; see hir_ewise_fn_lookup). */
bool hir_fn_lookup(const char *name, int nargs, hir_sexpr_kind *kind, int *op);
hir_comm       *hir_comm_get(hir_program *p, int64_t number);
hir_comm       *hir_comm_create(hir_program *p, int64_t number, hir_op op);
hir_comm       *hir_comm_new(hir_program *p, hir_op op);            /* next number */
const char     *hir_program_intern(hir_program *p, const char *s);

/* Statements and blocks */
hir_stmt *hir_stmt_new(hir_program *p, hir_op op);
void      hir_stmt_set_inputs(hir_program *p, hir_stmt *s, int n, hir_value **vals);
void      hir_block_append(hir_program *p, hir_block *b, hir_stmt *s);
void      hir_block_insert(hir_program *p, hir_block *b, int at, hir_stmt *s);
static inline int       hir_block_size(const hir_block *b) { return b->stmts.n; }
static inline hir_stmt *hir_block_at(const hir_block *b, int i) { return (hir_stmt *)b->stmts.items[i]; }
static inline hir_tensor *hir_value_tensor(hir_value *v) { return v && v->kind == HIR_VAL_TENSOR ? (hir_tensor *)v : NULL; }
static inline hir_scalar *hir_value_scalar(hir_value *v) { return v && v->kind == HIR_VAL_SCALAR ? (hir_scalar *)v : NULL; }

/* Tensor helpers */
/* Position of id in t's view order (t->shape.ids), -1 when absent. */
int  hir_tensor_logical_pos(const hir_tensor *t, const hir_iterdomain *id);
/* The loop IterDomains of t in logical order (t->nloop entries; t->shape.ids). */
static inline hir_iterdomain *const *hir_tensor_axes(const hir_tensor *t) { return t->shape.ids; }
/* Every tensor of p, as hir_iterdomain_next walks IterDomains. */
hir_tensor *hir_tensor_next(const hir_program *p, const hir_tensor *prev, size_t *at);
bool hir_tensor_same_type(const hir_tensor *a, const hir_tensor *b);
int  hir_tensor_stream_axis(const hir_tensor *t);   /* loop position of the stream axis, -1 */

/* ------------------------------------------------------------------ expr.c */

/* Scalar evaluation over a binding environment supplied by the caller. */
typedef struct hir_scalar_env {
    /* returns 0 and sets *v when `s` (NAMED or SYMBOL without definition) is bound */
    int (*lookup)(void *ctx, const hir_scalar *s, int64_t *v);
    void *ctx;
} hir_scalar_env;
/* Evaluates s (int/bool semantics on int64, C truncating % and /; an overflow is an error,
 * see dialect/intops.h). On failure fills msg and returns -1, or HIR_ENOMEM when its tables
 * could not grow (out of memory). Linear in the definitions reached. */
int hir_scalar_eval(const hir_scalar *s, const hir_scalar_env *env, int64_t *out,
                    char *msg, size_t msglen);
/* Evaluation of many scalars of one program: every definition reached is evaluated once and
 * remembered (value or failure), so the cost is linear in the definitions, however they are
 * shared. Valid while the program's definitions and the env's bindings do not change. */
typedef struct hir_scalar_memo {
    hir_map at;                       /* scalar pointer -> 1 + index into rec */
    struct hir_scalar_memo_rec *rec;
    size_t n, cap;
    struct hir_eval_frame *stack;     /* explicit evaluation stack (no recursion) */
    size_t sn, scap;
    const hir_scalar *failed_at;      /* after a failure: the innermost named definition */
    hir_arena *oom;                   /* NULL, or where running out of memory jumps */
} hir_scalar_memo;
/* hir_scalar_eval_memo returns HIR_ENOMEM when the memo's tables cannot grow; a memo made by
 * hir_scalar_memo_init_in jumps to that arena's recovery point instead (hir_arena_oom). A
 * failed growth leaves no record half made: the same call can be tried again. */
void hir_scalar_memo_init(hir_scalar_memo *m);
void hir_scalar_memo_init_in(hir_scalar_memo *m, hir_arena *oom);
void hir_scalar_memo_fini(hir_scalar_memo *m);
int  hir_scalar_eval_memo(const hir_scalar *s, const hir_scalar_env *env, hir_scalar_memo *m,
                          int64_t *out, char *msg, size_t msglen);
/* Without a memo, for the many small unnamed expressions of a program: 0 with *out set when s
 * evaluates (env NULL); HIR_EVAL_FREE when evaluation stops at a value with no definition
 * before anything else fails; HIR_EVAL_UNSURE otherwise (a named definition reached, another
 * failure, a large expression): then hir_scalar_eval_memo decides. Allocates nothing. */
enum { HIR_EVAL_FREE = 1, HIR_EVAL_UNSURE = 2 };
int  hir_scalar_eval_quick(const hir_scalar *s, int64_t *out);
/* Folds s to a constant if it depends on no free value (false also when out of memory; a
 * caller that must tell the two apart uses hir_scalar_eval). */
bool hir_scalar_const(const hir_scalar *s, int64_t *out);
bool hir_scalar_is_literal(const hir_scalar *s);
/* Structural equality of scalar expressions (names, numbers, ops). Out of memory for its
 * stack of pairs, it answers false ("not shown equal"), never aborts. */
bool hir_scalar_equal(const hir_scalar *a, const hir_scalar *b);
/* Does s depend on the named scalar / symbol `leaf`? Out of memory: true ("may depend"). */
bool hir_scalar_depends_on(const hir_scalar *s, const hir_scalar *leaf);

/* ------------------------------------------------------------------ print.c */

/* Writes the program exactly as nvFuser prints it. */
void hir_program_print(const hir_program *p, FILE *f);
void hir_stmt_print(const hir_stmt *s, int level, FILE *f);
void hir_tensor_print(const hir_tensor *t, FILE *f);
void hir_scalar_print_inline(const hir_scalar *s, FILE *f);   /* "( a + b )" */
/* Into a malloc'd string (caller frees); NULL when out of memory. */
char *hir_tensor_str(const hir_tensor *t);
char *hir_scalar_str_inline(const hir_scalar *s);

/* ------------------------------------------------------------------ form.c */

/* The program's generation: 2026 when any statement is spelled in a 2026 form, else 2025.
 * It decides what a Communication's root means (a device id in 2025, a team position in
 * 2026) and the form of statements passes add. */
hir_form hir_program_form(const hir_program *p);
/* Writes every statement in generation `to` where that form can express it; each one that
 * cannot gets a located error in d. Returns the number of errors (the program is then only
 * partly converted: print it only when 0). Sets p->form. */
int hir_program_convert_form(hir_program *p, hir_form to, hir_diag *d);
/* The address the 2026 form shows for 2025 stream object `number` (see HIR_FORM_STREAM_ADDR). */
uint64_t hir_stream_invented_addr(int64_t number);

/* ------------------------------------------------------------------ shape.c */

/* One logical axis of a tensor's view. */
typedef struct hir_shape_axis {
    int first, nparts;           /* its IterDomains: t->shape.ids[first .. first + nparts) */
    const hir_iterdomain *outer; /* the first part (the parallel axis of a split) */
    const hir_iterdomain *inner; /* the last part (the axis itself when unsplit) */
    hir_scalar *extent;          /* the global extent as one printed value: the IterDomain's
                                    extent, or X of an inner ( ceilDiv(X, k) ); else NULL */
    int64_t global, local;       /* constant extents (local: device parts as 1), -1 unknown */
    bool reduction;              /* a reduction or stride axis (no runtime dimension) */
    bool device;                 /* an unsplit device axis, or a split with a device part */
    bool rf;                     /* an rfactor product (printed "rf") */
    bool dim;                    /* a runtime dimension, which a rank counts: neither a reduction
                                    nor a device axis of its own marked rf (a rank's part of a
                                    reduction, size 1 on every rank) */
} hir_shape_axis;

/* The view's axis i (0 <= i < t->shape.naxes). */
void hir_shape_axis_get(const hir_tensor *t, int i, hir_shape_axis *a);
/* Decides the view of every tensor that is still open, from the whole program: the print's
 * invariants (split pairs, ceilDiv extents, numbering, rf), the operations (matmul, linear,
 * Set and its kin, communications, ShardByStream, HirAliasSelect), and the user's readings
 * `logical` ("T1=2,11*12": T1's logical axes in order, the IterDomain numbers of each axis,
 * '*' between the parts of a split). A tensor that none of them decides gets a located error
 * naming its readings and the option; so does a malformed or impossible reading. Returns the
 * number of errors; decided views are kept (calling it again only looks at open tensors). */
int  hir_program_shapes(hir_program *p, const char *const *logical, int nlogical, hir_diag *d);
/* Reads one tensor as the user says ("T1=2,11*12", as above) and decides nothing else: 0, 1
 * after a located error, HIR_ENOMEM. A reading given so is kept by hir_program_shapes. */
int  hir_shape_read_as(hir_program *p, const char *reading, hir_diag *d);
/* One line per tensor, in number order: "T8: [8, 16, 8] (as printed; rf axis iS26)". */
void hir_program_print_shapes(const hir_program *p, FILE *f);
/* A Set.Permute's permutation from its numbers: perm[i] is the input axis (view order) that
 * output axis i comes from. Returns 0, or -1 when the numbers do not carry one. */
int  hir_shape_permutation(const hir_tensor *in, const hir_tensor *out, int *perm);

/* ------------------------------------------------------------------ verify.c */

typedef struct hir_verify_opts {
    bool undefined_is_error;     /* undefined symbols: error (runner) or warning (hir-opt) */
    /* free scalars the user bound (--bind NAME=V): defined everywhere, like an input */
    const char *const *bound;
    int nbound;
} hir_verify_opts;
/* Returns the number of errors found (diagnostics go to d). It first decides the views still
 * open (hir_program_shapes without readings: a caller with the user's readings calls that
 * first). */
int hir_program_verify(hir_program *p, const hir_verify_opts *o, hir_diag *d);
/* Resolves Wait targets; called by the parser and by passes that add Waits. */
void hir_program_resolve_waits(hir_program *p);

/* ------------------------------------------------------------------ walk helpers (ir.c) */

typedef bool (*hir_stmt_visit)(hir_stmt *s, int depth, void *ctx);   /* false: stop */
bool hir_block_walk(hir_block *b, int depth, hir_stmt_visit fn, void *ctx);

#endif
