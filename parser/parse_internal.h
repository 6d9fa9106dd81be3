/* parse_internal.h — what the scanner and the grammar share: the parse context, the scanner
 * state, and the generated token definitions. Not part of the public API. */
#ifndef HIR_PARSE_INTERNAL_H
#define HIR_PARSE_INTERNAL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dialect/hir.h"
#include "parser/parser.h"

#define HIR_MAX_BRACKETS HIR_MAX_NESTING
/* One statement (with its continuation lines) may not exceed this: it bounds the memory that a
 * single runaway line (a 100 MB team list, say) can make the parser allocate. */
#define HIR_MAX_STMT_BYTES (1u << 20)
/* Numbers in names (T<n>, iS<n>, i<n>, Communication <n>) stay below this so that the next
 * free number (n + 1, and those passes hand out after it) always fits in int64 (found by
 * fuzzing: T9223372036854775807 overflowed the program's counters). */
#define HIR_MAX_NAME_NUMBER (INT64_C(1) << 62)

#include "parser.tab.h"

#define HIR_KW_SLOTS 512             /* slots of the scanner's keyword index (a power of two) */

/* "type=..., team=(...), ..." of a Communication or P2PCommunication (parser.y, comm_fields) */
struct hir_fields {
    hir_yyltype loc;
    const char *type; hir_yyltype type_loc;
    int64_t *team; int nteam; bool truncated; bool has_team;
    hir_scalar *root; hir_tensor *input, *output, *buffer; hir_scalar *peer;
    const char *backend; hir_yyltype backend_loc;
    int order[8]; int n;    /* keys in the order written */
    hir_yyltype input_loc, output_loc, buffer_loc;
};

typedef struct hir_parse_ctx {
    hir_program *prog;
    hir_diag *diag;
    hir_source *src;
    bool lex_failed;             /* the scanner already reported the problem */
    bool failed;                 /* a semantic error was reported */
    bool saw_2026;               /* a statement put in a block is in the 2026 form: the
                                  * program's form (hir_program_form, without its walk) */
    hir_map mismatches;          /* tensors/IterDomains already reported as respelled */
    /* For the note on the older host lowering: IterDomain number -> the respelling error
     * reported for it (hir_diag_entry *), and -> a HirAliasSelect output that spelled it first
     * (hir_tensor *). */
    hir_map respelled, select_ids;
    /* Unnamed expressions read so far, by a hash of their operator and operands: an
     * expression spelled again ("( streamIdx % numberOfStreams )" in every loop) is the same
     * value (parser.y, inline; parser_actions.c, anon_value). Freed by hir_parse. */
    hir_map anon;
    struct hir_idparts idparts;  /* the inside of the IterDomain being read */
    hir_ptrvec dispatches;       /* Dispatch statements read so far (a Combine names one) */
    hir_ptrvec stream_addrs;     /* "0x…" stream addresses (interned), in order of appearance */
    hir_ptrvec bare_endcoal;     /* EndCoalescing statements printed without a number */
    /* The statements of the blocks being read, innermost last (malloc'd, freed by hir_parse):
     * a block gets one array of its exact size when it closes (parser.y, block_close), so no
     * growing array is left behind in the program's arena. */
    void **stk;
    size_t nstk, capstk;
    /* The fields of the Communication being read: one at a time, each consumed by its statement
     * before the next begins (parser.y, comm_fields), so they cost the program nothing */
    struct hir_fields fields;
    struct hir_ewrhs ewrhs;      /* the same for the right-hand side of "x = a + b;" (ew_rhs) */
} hir_parse_ctx;

/* The first mention of a tensor in its common shape, read by the scanner in one go (lexer.l,
 * first_tensor) and made by the grammar's action for TENSOR_FAST, where the grammar path would
 * make it: nothing is made for a token that is a syntax error. */
enum { HIR_FAST_IDS = 16, HIR_FAST_RING = 4 };
struct hir_fast_id {
    uint32_t begin, end;
    int64_t number, extent;
    hir_itype itype;
    hir_ptype ptype;
    unsigned flags;
};
struct hir_fast_tensor {
    int64_t number;
    hir_mem mem;
    hir_dtype dtype;
    uint32_t head_end;           /* end of "T12_l___bfloat[": the grammar path's first token */
    int n;
    hir_mesh *mesh;
    struct hir_fast_id ids[HIR_FAST_IDS];
};

/* A whole statement of a common shape read by the scanner in one go (parser/fast_scan.c) and
 * made by the grammar's action for STMT_FAST / FOR_FAST / IF_FAST (parser/fast_build.c) with
 * the same functions, in the same order and with the same locations as the token path would.
 * Its values are listed in the order the grammar makes them (operands of an expression
 * before the expression). Anything the scanner is not sure of goes the token path. */
enum hir_fs_kind {
    HIR_FS_ALLOCATE, HIR_FS_ALIAS_SELECT, HIR_FS_LINEAR, HIR_FS_P2P, HIR_FS_WAIT,
    HIR_FS_SET_STREAM, HIR_FS_SYNC_STREAM, HIR_FS_FOR, HIR_FS_IF, HIR_FS_MATMUL
};
enum hir_fv_kind {
    HIR_FV_TENSOR_REF,       /* a tensor spelled as its first mention before this statement */
    HIR_FV_TENSOR_AGAIN,     /* ... as a mention made earlier in this statement (aux: its value) */
    HIR_FV_TENSOR_FAST,      /* a first mention (aux: its entry in tensors[]) */
    HIR_FV_ID,               /* an IterDomain with a constant extent */
    HIR_FV_INT, HIR_FV_BOOL, HIR_FV_NAME, HIR_FV_SYMBOL,
    HIR_FV_FLAG,             /* true/false where the grammar reads a flag, not a scalar */
    HIR_FV_WORD,             /* an identifier used as a word (type=recv, backend=NCCL) */
    HIR_FV_BINARY,           /* "( a op b )" of the two values before it (aux: the operator;
                              * flags: 1 + its entry in the expression table, or 0) */
    HIR_FV_EXPR,             /* an expression spelled as one made before (u.scalar) */
    HIR_FV_ADDR              /* a stream's address "0x1c1e0b80" (u.str: interned) */
};
struct hir_fv {
    uint8_t kind, aux;
    uint8_t itype, ptype, flags;   /* HIR_FV_ID */
    uint32_t begin, end;
    int64_t number;                /* INT and BOOL value; symbol, IterDomain number */
    union { hir_tensor *tensor; int64_t extent; const char *str; hir_scalar *scalar; } u;
};
/* Identifiers the one-token path read before, by spelling (a small table indexed by a hash of
 * length and end bytes): their interned spelling, and once made the named scalar, so that a
 * name repeated in every statement is looked up with one comparison. */
enum { HIR_WORD_CACHE = 64, HIR_EXPR_CACHE = 16, HIR_EXPR_TEXT = 64 };
/* Parenthesized expressions the one-token path read before, by spelling: the value they made.
 * The same spelling makes the same value (names, symbols and literals are one scalar each, and
 * an unnamed expression of the same operator and operands is the one read before:
 * parser_actions.c, anon_value), so it is not read and made again. */
struct hir_expr_memo {
    char text[HIR_EXPR_TEXT];
    uint32_t len;
    hir_scalar *value;           /* NULL until fast_build.c made it */
};
struct hir_word {
    const char *interned;
    hir_scalar *named;           /* named_ref's scalar for it, once fast_build.c made it */
    size_t len;
};
enum { HIR_FS_VALS = 24, HIR_FS_TENSORS = 4, HIR_FS_RING = 2 };
enum { HIR_FAST_NEWLINE = 1, HIR_FAST_BOL = 2 };
struct hir_fast_stmt {
    int kind, nv, nt;
    bool form_2026;                /* Wait(...), SetCurrentStream(...), Synchronize(...) */
    uint32_t begin, end;           /* the statement, up to its line break */
    uint32_t kw_end;               /* FOR / IF: end of the keyword (the statement's location) */
    int64_t number;                /* P2PCommunication and Wait: the expression number */
    uint32_t number_begin, number_end;
    struct hir_word *words;        /* the scanner's table (NAME values: aux is the entry) */
    struct hir_expr_memo *exprs;   /* the scanner's expression table */
    struct hir_fv v[HIR_FS_VALS];
    struct hir_fast_tensor t[HIR_FS_TENSORS];
};

struct hir_lexstate {
    hir_parse_ctx *ctx;
    size_t offset;               /* byte offset of the next character */
    int level;                   /* indentation level of the current statement */
    int pending_dedents;
    int depth;                   /* open brackets */
    uint32_t bracket_at[HIR_MAX_BRACKETS];
    uint32_t raw_begin;          /* start of a HostUnit block */
    uint32_t stmt_begin;         /* first byte of the current statement (after indentation) */
    uint32_t mesh_begin, mesh_end;   /* spelling of the last mesh read (fast path) */
    hir_mesh *mesh;
    /* TENSOR_FAST values: the parser holds at most the token it reduces and one lookahead */
    struct hir_fast_tensor fast[HIR_FAST_RING];
    unsigned fast_next;
    const struct hir_fast_tensor *last_fast;   /* of the last TENSOR_FAST returned */
    bool need_newline;           /* a token was returned since the last NEWLINE */
    int last_token;              /* the last token returned */
    bool outputs_open;           /* the statement so far is tensors and ',' (sdpa's output
                                  * lines): a line ending in ',' continues it */
    bool at_eof;
    hir_yyltype dedent_loc;
    uint16_t kw_slots[HIR_KW_SLOTS];   /* hir_keyword_index */
    jmp_buf *fatal;              /* hir_lex_init: where flex's YY_FATAL_ERROR (out of memory) goes */
    size_t released;             /* a mapped input: text before this was given back (lexer.l) */
    bool in_body;                /* between the header and the footer of a container */
    bool try_fast;               /* a statement starts at the next byte (after INDENT/DEDENT) */
    /* After a statement read in one go, its line break and the next line's indentation are
     * read here too (lexer.l, fast_next): flex is left where it was ("detached", having
     * put back the byte it held) until a line needs it, so that it writes nothing into the
     * text in between and a mapped input's pages are only read. */
    bool detached;
    uint8_t fast_pending;        /* HIR_FAST_NEWLINE, HIR_FAST_BOL or 0 */
    struct hir_fast_stmt fstmt[HIR_FS_RING];   /* STMT_FAST values (fast_scan.c) */
    struct hir_word words[HIR_WORD_CACHE];
    struct hir_expr_memo exprs[HIR_EXPR_CACHE];
    unsigned fstmt_next;
};

hir_loc hir_parse_loc(hir_parse_ctx *ctx, uint32_t begin, uint32_t end);
int hir_keyword_token(const char *s, size_t n, int64_t *aux);
/* The keyword index the scanner looks words up in (built once per parse, no global). */
void hir_keyword_index(uint16_t *slots);
int  hir_keyword_find(const uint16_t *slots, const char *s, size_t n, int64_t *aux);

int  hir_lex_init(struct hir_lexstate *st, char *buf, size_t len, yyscan_t *out);
void hir_lex_fini(yyscan_t sc);
int  hir_yylex(YYSTYPE *v, YYLTYPE *l, yyscan_t sc);
struct hir_lexstate *hirl_get_extra(yyscan_t sc);   /* generated by flex */
/* An IterDomain with a constant extent read by the scanner in one go (checked like any other). */
hir_iterdomain *hir_parse_simple_iterdomain(hir_parse_ctx *ctx, uint32_t begin, uint32_t end,
                                            int64_t number, int itype, int ptype, int64_t extent,
                                            unsigned flags);



/* ---- The grammar's actions, their C side (parser_actions.c) and the one-token path's
 * (fast_build.c): what parser.y's actions call. hirp_ is the parser's private prefix. ---- */
#define P (ctx->prog)                                          /* in an action or a builder */
#define LOC(l) hir_parse_loc(ctx, (l).begin, (l).end)
/* a mesh as read, before its shape is checked (mesh_from) */
struct hir_mnode { int ndims; int64_t dims[16]; hir_ptrvec vals; bool bad; };
/* the keys of a Communication's fields (fields_add) */
enum { F_TYPE = 1, F_TEAM, F_ROOT, F_INPUT, F_OUTPUT, F_BUFFER, F_PEER, F_BACKEND };

/* parser_actions.c */
hir_stmt *hirp_alias_select_stmt(hir_parse_ctx *ctx, hir_yyltype loc, hir_tensor *out,
                                 hir_yyltype oloc, hir_tensor *in, hir_yyltype inloc,
                                 hir_iterdomain *axis, hir_scalar *index);
hir_stmt *hirp_alloc_stmt(hir_parse_ctx *ctx, hir_yyltype loc, hir_tensor *out, hir_yyltype oloc,
                          hir_tensor *buf, hir_yyltype bloc, const char *mem, hir_yyltype mloc,
                          hir_scalar *size, bool zero_init, bool resets);
hir_sexpr *hirp_anon_binary(hir_parse_ctx *ctx, hir_binary_op op, hir_scalar *a, hir_scalar *b);
hir_sexpr *hirp_anon_unary(hir_parse_ctx *ctx, hir_unary_op op, hir_scalar *a);
hir_scalar *hirp_anon_value(hir_parse_ctx *ctx, hir_sexpr *e, hir_yyltype loc);
bool hirp_backend_of(hir_parse_ctx *ctx, const char *name, hir_yyltype l, hir_backend_kind *out);
hir_ptrvec hirp_block_close(hir_parse_ctx *ctx, size_t mark);
void hirp_block_push(hir_parse_ctx *ctx, hir_stmt *s);
void *hirp_box_int(hir_parse_ctx *ctx, int64_t v);
hir_comm *hirp_comm_from_fields(hir_parse_ctx *ctx, hir_yyltype loc, int64_t number,
                                struct hir_fields *f, bool p2p);
hir_stmt *hirp_cperm_stmt(hir_parse_ctx *ctx, hir_yyltype loc, int64_t number, hir_yyltype nloc,
                          hir_ptrvec *team, const char *k1, hir_yyltype l1, hir_scalar *send,
                          const char *k2, hir_yyltype l2, hir_scalar *recv, hir_tensor *in,
                          hir_yyltype inl, hir_tensor *out, hir_yyltype outl, const char *bk,
                          hir_yyltype bkl);
void hirp_define_scalar(hir_parse_ctx *ctx, hir_yyltype loc, hir_scalar *s, hir_sexpr *def);
hir_stmt *hirp_ew_stmt(hir_parse_ctx *ctx, hir_yyltype loc, hir_value *out, hir_yyltype oloc,
                       struct hir_ewrhs *r);
struct hir_ewrhs *hirp_ewrhs_start(hir_parse_ctx *ctx);
bool hirp_expr_number_ok(hir_parse_ctx *ctx, int64_t number, hir_yyltype l);
hir_tensor *hirp_fast_tensor(hir_parse_ctx *ctx, hir_yyltype loc, const struct hir_fast_tensor *f);
bool hirp_field_is(hir_parse_ctx *ctx, const char *got, hir_yyltype l, const char *want,
                   const char *stmt);
void hirp_fields_add(hir_parse_ctx *ctx, struct hir_fields **fp, int key, hir_yyltype loc);
struct hir_fields *hirp_fields_start(hir_parse_ctx *ctx, hir_yyltype loc);
hir_stmt *hirp_for_in_stmt(hir_parse_ctx *ctx, hir_yyltype loc, hir_yyltype kwloc, hir_scalar *index,
                           hir_yyltype iloc, hir_iterdomain *id, hir_ptrvec body);
hir_stmt *hirp_full_stmt(hir_parse_ctx *ctx, hir_yyltype loc, hir_tensor *out,
                         hir_yyltype oloc, hir_ptrvec *extents, hir_scalar *value);
hir_stmt *hirp_grouped_mma_stmt(hir_parse_ctx *ctx, hir_yyltype loc, hir_tensor *out,
                                hir_yyltype oloc, const char **names, hir_yyltype *nl,
                                hir_value **v, hir_yyltype *l);
hir_stmt *hirp_if_stmt(hir_parse_ctx *ctx, hir_yyltype loc, hir_yyltype kwloc, const char *pred_type,
                       hir_scalar *pred, hir_ptrvec body, hir_ptrvec else_body);
hir_iterdomain *hirp_iterdomain_ref(hir_parse_ctx *ctx, hir_yyltype loc, int64_t number,
                                    int itype, int ptype, struct hir_idparts *parts,
                                    unsigned flags);
hir_stmt *hirp_launch_stmt(hir_parse_ctx *ctx, hir_yyltype loc, int64_t number,
                           hir_launch_layout layout, hir_ptrvec *ins, hir_ptrvec *outs);
hir_stmt *hirp_linear_stmt(hir_parse_ctx *ctx, hir_yyltype loc, hir_tensor *out, hir_yyltype oloc,
                           int n, hir_value **v, hir_yyltype *l);
hir_sexpr *hirp_make_call(hir_parse_ctx *ctx, hir_yyltype loc, const char *fn, hir_ptrvec *args);
hir_stmt *hirp_matmul_stmt(hir_parse_ctx *ctx, hir_yyltype loc, hir_tensor *out, hir_yyltype oloc,
                           hir_value **v, hir_yyltype *l);
hir_mesh *hirp_mesh_from(hir_parse_ctx *ctx, hir_yyltype loc, struct hir_mnode *n);
struct hir_mnode *hirp_mnode_group(hir_parse_ctx *ctx, hir_yyltype loc, hir_ptrvec *children);
struct hir_mnode *hirp_mnode_leaf(hir_parse_ctx *ctx, hir_ptrvec *ints);
hir_scalar *hirp_named_ref(hir_parse_ctx *ctx, hir_yyltype loc, const char *name);
hir_stmt *hirp_p2p_stmt(hir_parse_ctx *ctx, hir_yyltype loc, int64_t number, hir_yyltype nloc,
                        struct hir_fields *f);
void hirp_semantic_error(hir_parse_ctx *ctx, hir_yyltype loc, const char *fmt, ...);
void hirp_stmt_inputs(hir_parse_ctx *ctx, hir_stmt *s, int n, hir_value **v, hir_yyltype *l);
hir_stmt *hirp_stmt_new(hir_parse_ctx *ctx, hir_op op, hir_yyltype loc);
hir_stmt *hirp_stream_index_stmt(hir_parse_ctx *ctx, hir_op op, hir_yyltype loc, hir_scalar *index);
hir_stmt *hirp_stream_stmt(hir_parse_ctx *ctx, hir_op op, hir_yyltype loc, hir_form form,
                           const char *addr, hir_scalar *index);
hir_scalar *hirp_symbol_ref(hir_parse_ctx *ctx, hir_yyltype loc, const char *prefix,
                            int64_t number);
hir_tensor *hirp_tensor_ref(hir_parse_ctx *ctx, hir_yyltype loc, int64_t number, int mem,
                            hir_dtype dt, hir_ptrvec *ids, const char *annot, hir_mesh *mesh);
bool hirp_unknown_statement(hir_parse_ctx *ctx, uint32_t at);
hir_ptrvec *hirp_vec1(hir_parse_ctx *ctx, void *item);
hir_ptrvec *hirp_vecpush(hir_parse_ctx *ctx, hir_ptrvec *v, void *item);
hir_stmt *hirp_wait_stmt(hir_parse_ctx *ctx, hir_yyltype loc, int64_t number, hir_form form);

/* fast_build.c: the statement (STMT_FAST) and the FOR/IF line (FOR_FAST, IF_FAST) read in one go */
struct hir_pairval hirp_fast_head(hir_parse_ctx *ctx, const struct hir_fast_stmt *r);
hir_stmt *hirp_fast_stmt_make(hir_parse_ctx *ctx, const struct hir_fast_stmt *r, hir_yyltype loc);

/* ---- The one-token path (fast_scan.c) and what it shares with the scanner (lexer.l) ---- */

/* The statement at st->offset in one go (fast_scan.c): see there. */
bool hir_fast_scan(struct hir_lexstate *st, struct hir_fast_stmt *r, size_t *end);

/* Text tests that lexer.l's rules and fast_scan.c both make, the same way: static inline, as
 * they run for most tokens (in one translation unit before, inlined there). */
/* After a line break and the next line's indentation, c0 being the next byte and `after` the
 * text from it (left bytes): whether that line continues the statement (starts with "=", an
 * infix operator, "," or ".alias="). The "\n[ ]*" rule and fast_scan.c's fs_line_ends ask. */
static inline bool line_continues(char c0, const char *after, size_t left)
{
    switch (left > 0 ? c0 : 0) {
    case '=': case '+': case '*': case '%': case '<': case '>': case '&': case '|': case '^':
    case ',': case '!': case '~': case '-':
        return true;
    case '/':
        return left > 1 && after[1] != '/';
    case '.':
        return left >= 7 && !memcmp(after + 1, "alias=", 6);
    default:
        return false;
    }
}

/* The spelling t[first_begin, first_end) again at `at` (the text intact there): its end, or 0.
 * A tensor's must not be extended by what follows (annotations, a mesh). Read by the scanner's
 * fast paths (lexer.l) and by fast_scan.c. */
static inline size_t spelled_again(const char *t, size_t len, size_t at, uint32_t first_begin,
                            uint32_t first_end, bool tensor)
{
    size_t n = first_end - first_begin, k = at + n;
    if (first_begin == at || at + n > len || memcmp(t + at, t + first_begin, n))
        return 0;
    if (tensor) {
        while (k < len && t[k] == ' ')
            k++;
        if (k < len && (t[k] == '(' || t[k] == '[' || (t[k] >= 'a' && t[k] <= 'z') || t[k] == '_'))
            return 0;
    }
    return at + n;
}

/* Reads "iS15{128}rf_p_c" at t[i..] (every read bounded by len) into *id: the spelling that
 * the IterDomain rule and simple_iterdomain accept; the index past it, or 0 when it is not
 * that (the grammar then reads it, with its diagnostics). */
static inline size_t fast_iterdomain(const char *t, size_t len, size_t i, struct hir_fast_id *id)
{
    /* t[len] and t[len + 1] are NULs (the scanner's buffer ends so; hir_lex_init), which no
     * class below takes: the loops stop there without a bound check */
    if (i >= len || !((t[i] >= 'a' && t[i] <= 'z') || t[i] == '?') || !hir_itype_lookup(t[i], &id->itype))
        return 0;   /* the IterDomain rule's [a-z?] */
    size_t p = i + 1, q = p;
    while ((t[q] >= 'A' && t[q] <= 'Z') || (t[q] >= 'a' && t[q] <= 'z') || t[q] == '.')
        q++;
    if (q == p || !hir_ptype_lookup(t + p, q - p, &id->ptype))
        return 0;
    size_t d = q;
    int64_t number = 0;
    while (t[d] >= '0' && t[d] <= '9' && d - q < 18)   /* a 19th digit is not '{': not fast */
        number = number * 10 + (t[d++] - '0');
    if (d == q || t[d] != '{' || number >= HIR_MAX_NAME_NUMBER)
        return 0;
    size_t x = d + 1, e = x;
    int64_t extent = 0;
    while (t[e] >= '0' && t[e] <= '9' && e - x < 18)
        extent = extent * 10 + (t[e++] - '0');
    if (e == x || t[e] != '}')
        return 0;
    e++;
    unsigned flags = 0;
    if (t[e] == 'r' && t[e + 1] == 'f') {
        flags |= HIR_ID_RFACTOR;
        e += 2;
    }
    if (t[e] == '_' && t[e + 1] == 'p') {
        flags |= HIR_ID_PADDED;
        e += 2;
    }
    if (t[e] == '_' && t[e + 1] == 'c') {
        flags |= HIR_ID_CLUSTERED;
        e += 2;
    }
    id->begin = (uint32_t)i;
    id->end = (uint32_t)e;
    id->number = number;
    id->extent = extent;
    id->flags = flags;
    return e;
}

/* The list "iS13{128}, iS14{1024}]" at t[i..] (every read bounded by len) into ids, *n of
 * them: the index past its ']', or 0 when it is not of that shape. */
static inline size_t fast_id_list(const char *t, size_t len, size_t i, struct hir_fast_id *ids, int *n)
{
    *n = 0;
    if (i < len && t[i] == ']')
        return i + 1;
    for (;;) {
        if (*n == HIR_FAST_IDS)
            return 0;
        size_t e = fast_iterdomain(t, len, i, &ids[*n]);
        if (!e)
            return 0;
        ++*n;
        if (e < len && t[e] == ']')
            return e + 1;
        if (e + 1 >= len || t[e] != ',' || t[e + 1] != ' ')
            return 0;
        i = e + 2;
    }
}

/* After a tensor's ']' at t[i..]: the end of the value when what follows is the last mesh
 * spelled again " (DeviceMesh{...})" (*mesh set) or a byte that cannot extend the value
 * (annotations and other meshes, or a line break inside brackets, go to the grammar); 0 else. */
static inline size_t fast_tensor_tail(const struct hir_lexstate *st, const char *t, size_t len, size_t i,
                               int depth, hir_mesh **mesh)
{
    size_t k = i;
    while (k < len && t[k] == ' ')
        k++;
    *mesh = NULL;
    if (k < len && t[k] == '(') {
        size_t mn = st->mesh ? st->mesh_end - st->mesh_begin : 0;
        if (!mn || k + 1 + mn >= len || memcmp(t + k + 1, t + st->mesh_begin, mn) || t[k + 1 + mn] != ')')
            return 0;
        *mesh = st->mesh;
        return k + mn + 2;
    }
    /* (a ')' that closes nothing, or a line break inside brackets, is the grammar's to read:
     * the scanner reports the one, the other may bring a mesh on the next line) */
    if (k < len && (t[k] == ',' || t[k] == '=' || (t[k] == ')' && depth > 0) ||
                    (t[k] == '\n' && depth == 0)))
        return i;
    return 0;
}

#endif
