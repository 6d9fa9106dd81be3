/* hir.h — the Host IR dialect: arena, interning, sources and diagnostics, values (tensors,
 * iteration domains, meshes, scalars, streams), statements and programs, printer, verifier.
 * One header for the whole dialect, grouped by the file that defines each part. */
#ifndef HIR_H
#define HIR_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dialect/dtype.h"
#include "runner/types.h"   /* operator tables shared by the dialect and the runner */

#define HIR_VERSION "0.1.0"
#define HIR_MAX_NESTING 256          /* deeper bodies are refused with a diagnostic */
/* hir-run refuses a loop of more iterations (docs/runner.md): a host loop runs over streams,
 * devices or chunks, and an extent near 2^63 would otherwise run for ever. */
#define HIR_MAX_LOOP_TRIPS (INT64_C(1) << 24)

/* Broken invariants abort with file and line; user mistakes never get here. */
#define hir_assert(c) ((c) ? (void)0 : hir_panic(__FILE__, __LINE__, #c))
_Noreturn void hir_panic(const char *file, int line, const char *what);

/* ------------------------------------------------------------------ arena.c */

/* Out of memory. IR is built by many small allocations with no error path of their own, so
 * an arena that cannot grow does not return NULL: it jumps (longjmp) to the recovery point
 * that the library entry point using it installed with hir_arena_on_oom (hir_parse,
 * hir_program_verify, hir_pipeline_run, hir_gen_program). That entry point then frees what it
 * allocated, the arena included, and returns HIR_ENOMEM; the tool prints "out of memory" and
 * exits 1. The recovery point lives in the entry point's frame, never in a global. With no
 * recovery point installed, running out of memory is an internal error (hir_panic).
 * hir_arena_try_alloc never jumps: NULL on failure. hir_arena_new returns NULL on failure. */
#define HIR_ENOMEM (-2)
typedef struct hir_arena hir_arena;
hir_arena *hir_arena_new(void);
void       hir_arena_free(hir_arena *a);
jmp_buf   *hir_arena_on_oom(hir_arena *a, jmp_buf *jb);   /* installs jb; returns the previous */
_Noreturn void hir_arena_oom(hir_arena *a);               /* jump to the recovery point */
bool       hir_arena_failed(const hir_arena *a);           /* an allocation has failed */
void      *hir_arena_try_alloc(hir_arena *a, size_t size);
void      *hir_arena_alloc(hir_arena *a, size_t size);            /* zeroed, 16-aligned */
void      *hir_arena_grow(hir_arena *a, void *old, size_t old_size, size_t new_size);
char      *hir_arena_strndup(hir_arena *a, const char *s, size_t n);
size_t     hir_arena_bytes(const hir_arena *a);

/* Growable array of pointers living in an arena. */
typedef struct hir_ptrvec {
    void **items;
    int n, cap;
} hir_ptrvec;
void hir_ptrvec_push(hir_arena *a, hir_ptrvec *v, void *item);
void hir_ptrvec_insert(hir_arena *a, hir_ptrvec *v, int at, void *item);
void hir_ptrvec_remove(hir_ptrvec *v, int at);

/* ------------------------------------------------------------------ map.c */

/* Open-addressing map from uint64 keys to pointers (its tables are malloc'd, not in an
 * arena). A map made by hir_map_init_in reports a failed growth through that arena's recovery
 * point (hir_arena_oom); hir_map_try_put returns -1 instead, leaving the map as it was. */
typedef struct hir_map {
    uint64_t *keys;
    void **vals;
    size_t cap, n;
    hir_arena *oom;              /* where a failed growth goes (NULL: hir_panic) */
} hir_map;
void  hir_map_init(hir_map *m);
void  hir_map_init_in(hir_map *m, hir_arena *oom);
int   hir_map_try_put(hir_map *m, uint64_t key, void *val);
void  hir_map_fini(hir_map *m);
void *hir_map_get(const hir_map *m, uint64_t key);
void  hir_map_put(hir_map *m, uint64_t key, void *val);
void  hir_map_del(hir_map *m, uint64_t key);
uint64_t hir_hash_bytes(const void *p, size_t n);

/* Interned strings: equal strings share one pointer for the life of the table. */
typedef struct hir_strtab {
    hir_arena *arena;
    hir_map map;                 /* hash -> chain of entries */
} hir_strtab;
void        hir_strtab_init(hir_strtab *t, hir_arena *a);
void        hir_strtab_fini(hir_strtab *t);
const char *hir_intern(hir_strtab *t, const char *s, size_t n);

/* ------------------------------------------------------------------ diag.c */

/* A source buffer; locations are byte offsets into it, turned into line:col when printed. */
typedef struct hir_source {
    const char *name;            /* file name as given ("-" for stdin, "<generated>") */
    const char *text;
    size_t len;
    size_t *line_starts;         /* computed lazily */
    size_t nlines;
    int line_base;               /* lines before this text in its file (--split-input-file) */
} hir_source;

typedef struct hir_loc {
    const hir_source *src;       /* NULL for IR made by passes */
    uint32_t begin, end;         /* [begin, end) byte offsets */
} hir_loc;

typedef enum hir_severity { HIR_NOTE, HIR_WARNING, HIR_ERROR } hir_severity;

typedef struct hir_diag_entry {
    hir_severity sev;
    hir_loc loc;
    char *msg;
    struct hir_diag_entry *notes;   /* linked notes */
    struct hir_diag_entry *next;
    bool printed;
} hir_diag_entry;

/* Collects diagnostics; prints them MLIR-style or keeps them for --verify-diagnostics. */
typedef struct hir_diag {
    FILE *out;                   /* where to print (NULL: keep only) */
    bool keep;                   /* keep entries for later inspection */
    hir_diag_entry *first, *last;
    int errors, warnings;
    int max_errors;              /* stop recording after this many (0: unlimited) */
    int lost;                    /* diagnostics counted but not kept: no memory for them */
    bool color;                  /* ANSI colours as clang prints them (the tools' --color);
                                  * false: plain text, byte for byte what lit tests expect */
} hir_diag;

void hir_source_init(hir_source *s, const char *name, const char *text, size_t len);
void hir_source_fini(hir_source *s);
void hir_source_linecol(hir_source *s, size_t off, int *line, int *col);
/* Emits a diagnostic; returns the entry so notes can be attached with hir_diag_note. */
hir_diag_entry *hir_diag_emit(hir_diag *d, hir_severity sev, hir_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
hir_diag_entry *hir_diag_vemit(hir_diag *d, hir_severity sev, hir_loc loc, const char *fmt,
                               va_list ap);
/* hir_diag_emit returns NULL (the diagnostic counted in errors/warnings and in lost) when
 * there is no memory to keep it; hir_diag_note ignores a NULL parent. */
void hir_diag_note(hir_diag *d, hir_diag_entry *parent, hir_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void hir_diag_init(hir_diag *d, FILE *out);
void hir_diag_flush(hir_diag *d);
void hir_diag_fini(hir_diag *d);
void hir_diag_print_entry(FILE *f, const hir_diag_entry *e);
/* --verify-diagnostics: match kept entries against `// expected-error@+1 {{...}}` comments
 * in src; reports mismatches to `out`; returns 0 when everything matched. */
int hir_diag_verify(hir_diag *d, hir_source *src, FILE *out);

/* ------------------------------------------------------------------ values (ir.c) */

typedef struct hir_program hir_program;
typedef struct hir_scalar hir_scalar;
typedef struct hir_stmt hir_stmt;

typedef enum hir_value_kind { HIR_VAL_TENSOR, HIR_VAL_SCALAR } hir_value_kind;

/* Common head of tensors and scalars, so operand lists can hold either. */
typedef struct hir_value {
    hir_value_kind kind;
} hir_value;

typedef enum hir_mem {
    HIR_MEM_GLOBAL, HIR_MEM_LOCAL, HIR_MEM_SHARED, HIR_MEM_TENSOR, HIR_MEM_SYMMETRIC,
    HIR_MEM_COUNT
} hir_mem;
const char *hir_mem_letter(hir_mem m);        /* "g", "l", "s", "t", "sym" */
const char *hir_mem_name(hir_mem m);          /* "global", "register", ... (ALLOCATE mem_type) */

typedef enum hir_itype {
    HIR_IT_ITER, HIR_IT_REDUCTION, HIR_IT_BROADCAST, HIR_IT_STRIDE, HIR_IT_GATHER,
    HIR_IT_VECTOR, HIR_IT_SYMBOLIC
} hir_itype;

/* Parallel types; the spelling table keeps the older stream spellings distinct so that old
 * dumps print back as they were read. */
#define HIR_PTYPES(X) \
    X(SERIAL, "S") X(DIDX, "deviceIdx.x") X(DIDY, "deviceIdx.y") X(DIDZ, "deviceIdx.z") \
    X(STREAM, "streamIdx") X(STREAM_OLD1, "StreamIdx") X(STREAM_OLD0, "Stream") \
    X(BIDX, "blockIdx.x") X(BIDY, "blockIdx.y") X(BIDZ, "blockIdx.z") \
    X(TIDX, "threadIdx.x") X(TIDY, "threadIdx.y") X(TIDZ, "threadIdx.z") \
    X(VECTORIZE, "V") X(UNROLL, "UR") X(UNSWITCH, "US") X(MMA, "MMA") X(GROUP, "G") \
    X(BULK, "B")
typedef enum hir_ptype {
#define X(E, S) HIR_PT_##E,
    HIR_PTYPES(X)
#undef X
    HIR_PT_COUNT
} hir_ptype;
const char *hir_ptype_name(hir_ptype p);
bool hir_ptype_is_stream(hir_ptype p);
bool hir_ptype_is_device(hir_ptype p);

enum { HIR_ID_RFACTOR = 1, HIR_ID_PADDED = 2, HIR_ID_CLUSTERED = 4 };

typedef struct hir_iterdomain {
    int64_t number;
    hir_itype itype;
    hir_ptype ptype;
    hir_scalar *start;           /* NULL when 0 (not printed) */
    hir_scalar *stop;            /* NULL when it is the extent (not printed) */
    hir_scalar *extent;
    hir_scalar *expanded;        /* NULL unless an expanded broadcast (" ex E") */
    unsigned flags;              /* HIR_ID_* */
    hir_loc loc;                 /* first place it was spelled */
} hir_iterdomain;

/* An N-d device mesh, interned per program (equal meshes are the same pointer). */
typedef struct hir_mesh {
    int ndims;
    int64_t *dims;               /* extent of each dimension */
    int64_t *devices;            /* row-major, product(dims) entries */
    int64_t ndevices;
} hir_mesh;

typedef struct hir_tensor {
    hir_value head;
    int64_t number;
    hir_mem mem;
    hir_dtype dtype;
    int nloop;
    hir_iterdomain **loop;       /* loop domain as printed */
    hir_iterdomain **logical;    /* logical order: loop sorted by IterDomain number */
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

/* Scalar expression operators: the runner's binary/unary/ternary tables plus casts. */
typedef enum hir_sexpr_kind { HIR_SX_UNARY, HIR_SX_BINARY, HIR_SX_TERNARY, HIR_SX_CALL } hir_sexpr_kind;

typedef struct hir_sexpr {
    hir_sexpr_kind kind;
    int op;                      /* hir_unary_op / hir_binary_op / hir_ternary_op */
    bool infix;                  /* printed "a + b" / "-a" rather than "add(a, b)" */
    const char *fn;              /* function name as printed (interned) for non-infix */
    int nargs;
    hir_scalar *args[3];
} hir_sexpr;

struct hir_scalar {
    hir_value head;
    hir_scalar_kind kind;
    hir_dtype dtype;             /* Index for i-symbols; bool for b; ... */
    int64_t number;              /* SYMBOL */
    const char *name;            /* NAMED: the name; SYMBOL: the prefix; FLOAT: the spelling */
    int64_t ival;                /* INT, BOOL */
    double fval;                 /* FLOAT */
    hir_sexpr *def;              /* defining expression, or NULL */
    hir_loc def_loc;             /* where the definition was read */
    bool inline_expand;          /* SYMBOL with def: print "( def )" in inline positions */
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

/* ------------------------------------------------------------------ statements (ir.c) */

typedef enum hir_op {
#define X(E, KW, FMT, NMIN, NMAX, OUT, FL) HIR_OP_##E,
#include "dialect/ops.def"
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
    HIR_FMT_DISPATCH, HIR_FMT_COMBINE,
} hir_fmt;

enum {
    HIR_OPF_ALLOC = 1, HIR_OPF_STREAM = 2, HIR_OPF_REGION = 4, HIR_OPF_VIEW = 8,
    HIR_OPF_COMPUTE = 16, HIR_OPF_COMM = 32, HIR_OPF_KERNEL = 64,
};

typedef struct hir_opinfo {
    const char *keyword;
    hir_fmt fmt;
    int nin_min, nin_max;
    int has_out;
    unsigned flags;
    const char *enum_name;
} hir_opinfo;
extern const hir_opinfo hir_ops[HIR_OP_COUNT];     /* the op table (const data) */
/* Keyword lookup for statements written "T.. = KEYWORD(...)" or starting a line. */
bool hir_op_lookup(const char *kw, size_t n, hir_op *out);

typedef struct hir_block {
    hir_ptrvec stmts;            /* hir_stmt* */
} hir_block;

typedef enum hir_comm_type {
    HIR_COMM_GATHER, HIR_COMM_ALLGATHER, HIR_COMM_SCATTER, HIR_COMM_REDUCE,
    HIR_COMM_ALLREDUCE, HIR_COMM_REDUCESCATTER, HIR_COMM_BROADCAST, HIR_COMM_SENDRECV,
    HIR_COMM_COUNT
} hir_comm_type;
const char *hir_comm_type_name(hir_comm_type t);
bool hir_comm_type_has_root(hir_comm_type t);

typedef enum hir_backend_kind { HIR_BK_NCCL, HIR_BK_UCC, HIR_BK_CUDA, HIR_BK_COUNT } hir_backend_kind;
const char *hir_backend_kind_name(hir_backend_kind b);

/* A Communication / P2PCommunication / EndCoalescing expression, numbered in the shared
 * expression counter. P2P expressions can be named by ShareMemHandles before their own
 * statement, so they live apart from the statement that executes them. */
typedef struct hir_comm {
    int64_t number;
    hir_op op;                   /* COMMUNICATION, P2P, END_COAL or CPERM */
    /* Communication */
    hir_comm_type type;
    int64_t *team;
    int nteam;
    bool team_truncated;         /* printed with " ..." (more than 100 members) */
    hir_scalar *root;            /* NULL when not printed */
    hir_tensor *input, *output;  /* NULL when not printed */
    hir_reduce_op red_op;        /* reductions: not printed by nvFuser; sum */
    /* P2P */
    bool is_send;
    hir_tensor *buffer;
    hir_scalar *peer;
    /* CollectivePermute (team, input, output and backend as above) */
    hir_scalar *send_peer, *recv_peer;
    hir_backend_kind backend;
    hir_stmt *stmt;              /* the statement that executes it (NULL until seen) */
    hir_loc loc;                 /* first mention */
} hir_comm;

typedef struct hir_slice_range { hir_scalar *start, *stop, *step; } hir_slice_range;

struct hir_stmt {
    hir_op op;
    hir_form form;               /* the spelling it was read in (2025 unless parsed as 2026) */
    hir_loc loc;
    hir_tensor *out;             /* output tensor (tensor-producing statements) */
    hir_scalar *sout;            /* output scalar (SCALAR_DEF) */
    int nin;
    hir_value **in;              /* inputs, in printed order (tensors or scalars) */
    hir_loc out_loc;             /* where the output was spelled (parsed programs) */
    hir_loc *in_loc;             /* where each input was spelled (parsed programs) */
    union {
        struct {                 /* ALLOCATE */
            hir_mem mem;
            hir_scalar *size;
            bool zero_init, resets_to_zero;
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
            hir_reduce_op op;
            hir_scalar *init;
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
            int64_t number;      /* HostUnit number / Group ID */
            int ninputs;         /* inputs are in[0..ninputs), outputs in[ninputs..nin) */
        } kernel;
        struct {                 /* SCALAR_DEF */
            hir_sexpr *def;
        } sdef;
        struct {                 /* Dispatch / Combine: in[] = in, topk_idx|topk_weights, ... */
            int64_t number;      /* expression number */
            int64_t num_experts; /* Dispatch */
            hir_backend_kind backend;
            /* Dispatch: the outputs nvFuser does not print, named by a later Combine
             * (received topk_weights, src_idx); NULL until one does */
            hir_tensor *hidden[2];
            hir_stmt *dispatch;  /* Combine: the Dispatch whose out= is its in= */
        } moe;
    } u;
    hir_block body;              /* FOR bodies, IF then-body */
    hir_block else_body;         /* IF else-body */
};

/* Raw HostUnit trailer block (the embedded fusion is opaque to host IR). */
typedef struct hir_hostunit {
    int64_t number;
    const char *text;            /* verbatim, from "HostUnit" through "} // %kernel\n" */
    size_t len;
} hir_hostunit;

struct hir_program {
    hir_arena *arena;
    hir_strtab strings;
    hir_ptrvec inputs, outputs;  /* hir_value* */
    hir_block body;
    hir_ptrvec hostunits;        /* hir_hostunit* */
    bool has_index_defs;         /* print the "Index definitions:" trailer */
    hir_ptrvec index_defs;       /* hir_scalar* in trailer order */
    /* lookup tables */
    hir_map tensors;             /* number -> hir_tensor* */
    hir_map iterdomains;         /* number -> hir_iterdomain* */
    hir_map symbols;             /* number -> hir_scalar* */
    hir_map named;               /* interned name ptr -> hir_scalar* */
    hir_map comms;               /* expression number -> hir_comm* */
    hir_map meshes;              /* hash -> chain of hir_mesh* (see ir.c) */
    hir_map literals;            /* (kind,value) hash -> hir_scalar* */
    /* counters for values created by passes (one past the highest number seen) */
    int64_t next_tensor, next_iterdomain, next_scalar, next_expr, next_stream;
    hir_source *src;             /* the text it was parsed from, if any */
    /* Communication backend chosen by a --backend pass for passes that run after it
     * (0: none chosen; otherwise 1 + hir_backend_kind). Not printed. */
    int pass_backend;
    bool pass_p2p_put;           /* --backend=cuda{protocol=put}: CUDA exchanges post recv first */
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
hir_iterdomain *hir_iterdomain_create(hir_program *p, int64_t number, hir_itype it,
                                      hir_ptype pt, hir_scalar *extent);
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
/* Operator spellings (from the runner's X-macro tables) */
const char *hir_binary_infix(int op);     /* "+" or NULL */
const char *hir_binary_fn(int op);        /* "add" */
const char *hir_unary_prefix(int op);     /* "-" or NULL */
const char *hir_unary_fn(int op);
bool hir_binary_lookup_infix(const char *s, size_t n, int *op);
bool hir_unary_lookup_prefix(const char *s, size_t n, int *op);
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
int  hir_tensor_logical_pos(const hir_tensor *t, const hir_iterdomain *id);   /* -1 absent */
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
 * see dialect/intops.h). On failure fills msg. Linear in the definitions reached. */
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
} hir_scalar_memo;
void hir_scalar_memo_init(hir_scalar_memo *m);
void hir_scalar_memo_fini(hir_scalar_memo *m);
int  hir_scalar_eval_memo(const hir_scalar *s, const hir_scalar_env *env, hir_scalar_memo *m,
                          int64_t *out, char *msg, size_t msglen);
/* Folds s to a constant if it depends on no free value. */
bool hir_scalar_const(const hir_scalar *s, int64_t *out);
bool hir_scalar_is_literal(const hir_scalar *s);
/* Structural equality of scalar expressions (names, numbers, ops). */
bool hir_scalar_equal(const hir_scalar *a, const hir_scalar *b);
/* Does s depend on the named scalar / symbol `leaf`? */
bool hir_scalar_depends_on(const hir_scalar *s, const hir_scalar *leaf);

/* ------------------------------------------------------------------ print.c */

/* Writes the program exactly as nvFuser prints it. */
void hir_program_print(const hir_program *p, FILE *f);
void hir_stmt_print(const hir_stmt *s, int level, FILE *f);
void hir_tensor_print(const hir_tensor *t, FILE *f);
void hir_iterdomain_print(const hir_iterdomain *id, FILE *f);
void hir_scalar_print_ref(const hir_scalar *s, FILE *f);      /* by name / value */
void hir_scalar_print_inline(const hir_scalar *s, FILE *f);   /* "( a + b )" */
void hir_sexpr_print_def(const hir_sexpr *e, FILE *f);        /* "a + b", "ceilDiv(a, b)" */
/* Into a malloc'd string (caller frees); NULL when out of memory. */
char *hir_tensor_str(const hir_tensor *t);
char *hir_scalar_str_inline(const hir_scalar *s);

/* ------------------------------------------------------------------ verify.c */

typedef struct hir_verify_opts {
    bool undefined_is_error;     /* undefined symbols: error (runner) or warning (hir-opt) */
    /* free scalars the user bound (--bind NAME=V): defined everywhere, like an input */
    const char *const *bound;
    int nbound;
} hir_verify_opts;
/* Returns the number of errors found (diagnostics go to d). */
int hir_program_verify(hir_program *p, const hir_verify_opts *o, hir_diag *d);
/* Resolves Wait targets; called by the parser and by passes that add Waits. */
void hir_program_resolve_waits(hir_program *p);

/* ------------------------------------------------------------------ walk helpers (ir.c) */

typedef bool (*hir_stmt_visit)(hir_stmt *s, int depth, void *ctx);   /* false: stop */
bool hir_block_walk(hir_block *b, int depth, hir_stmt_visit fn, void *ctx);

#endif
