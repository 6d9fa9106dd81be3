/* parser.y — pure bison grammar for the %HostIrContainer text; actions build the IR directly
 * into the program's arena. The first syntax error ends the parse (one precise diagnostic,
 * like MLIR); semantic problems (a tensor spelled two ways, a redefinition) are reported
 * with notes and parsing goes on so that several can be seen at once. */
%code requires {
#include <stdbool.h>
#include <stdint.h>
#include "dialect/hir.h"
#ifndef YY_TYPEDEF_YY_SCANNER_T
#define YY_TYPEDEF_YY_SCANNER_T
typedef void *yyscan_t;
#endif
typedef struct hir_yyltype { uint32_t begin, end; } hir_yyltype;
struct hir_parse_ctx;
struct hir_mnode;
struct hir_fields;
struct hir_idparts { hir_scalar *a, *b, *c, *ex; int n; };
}

%code {
#include "parser/parse_internal.h"

/* The parse stack grows on the C stack, not with malloc: running out of memory leaves yyparse
 * by longjmp (hir_parse), which must leak nothing. Depth is bounded by the scanner's limits. */
#define YYSTACK_USE_ALLOCA 1

#define YYLLOC_DEFAULT(Cur, Rhs, N)                         \
    do {                                                    \
        if (N) {                                            \
            (Cur).begin = YYRHSLOC(Rhs, 1).begin;           \
            (Cur).end = YYRHSLOC(Rhs, N).end;               \
        } else {                                            \
            (Cur).begin = (Cur).end = YYRHSLOC(Rhs, 0).end; \
        }                                                   \
    } while (0)

static void yyerror(hir_yyltype *loc, yyscan_t sc, hir_parse_ctx *ctx, const char *msg);
#define yylex hir_yylex

/* The actions' C side is parser_actions.c and fast_build.c (parse_internal.h, hirp_*); sdpa's
 * is parser/sdpa_actions.inc, included after the grammar */
static void *sdpa_arg(hir_parse_ctx *ctx, const char *name, hir_yyltype nl, hir_value *v, hir_yyltype vl);
static hir_stmt *sdpa_bwd_stmt(hir_parse_ctx *ctx, hir_yyltype at, hir_tensor **outs, hir_yyltype *ol,
                               hir_tensor **ins, hir_yyltype *il, hir_ptrvec *args, hir_yyltype close);
static hir_stmt *sdpa_stmt(hir_parse_ctx *ctx, hir_yyltype at, hir_tensor **outs, hir_yyltype *ol,
                           hir_tensor **qkv, hir_yyltype *ql, hir_ptrvec *args, hir_yyltype close);
}

%define api.pure full
%define api.location.type {hir_yyltype}
%define parse.error custom
%locations
%param {yyscan_t scanner}
%parse-param {struct hir_parse_ctx *ctx}
%expect 0

%union {
    int64_t ival;
    bool b;
    const char *str;
    struct { int64_t number; int mem; hir_dtype dtype; } th;
    struct { int64_t number; int itype; int ptype; } idh;
    struct { char prefix[8]; int64_t number; } sym;
    struct { double value; hir_dtype dtype; } flt;
    struct { uint32_t begin, end; } raw;
    hir_tensor *tensor;
    hir_iterdomain *id;
    hir_scalar *scalar;
    hir_value *value;
    hir_mesh *mesh;
    hir_stmt *stmt;
    hir_sexpr *sexpr;
    hir_ptrvec *vec;
    struct hir_mnode *mnode;
    struct hir_fields *fields;
    struct hir_idparts *idparts;   /* the parse context's scratch: the union stays 16 bytes */
    const struct hir_fast_tensor *fast;   /* in the scanner's ring (parse_internal.h) */
    const struct hir_fast_stmt *fstmt;    /* the same for whole statements (fast_scan.c) */
    struct hir_pairval pair;              /* a FOR or IF line read in one go: what it made */
    struct hir_ewrhs *ew;
    hir_ptrvec blk;                /* a closed block: its statements, exact size */
    int op;
}

%code requires {
struct hir_ewrhs { int kind; int op; bool infix; const char *fn; int n; hir_value *v[3]; hir_yyltype l[3]; };
struct hir_pairval { void *a, *b; };
}

%token <ival> INT "integer" HOSTUNIT_REF "HostUnit reference" ID_CLOSE_FLAGS "'}'"
%token <ival> LOADSTORE "Set-like operation" FLAGSOP "broadcast/squeeze"
%token <str> IDENT "identifier"
%token <th> TENSOR_HEAD "tensor"
%token <tensor> TENSOR_REF "tensor "
%token <fast> TENSOR_FAST "tensor  "
%token <id> ID_REF "IterDomain "
%token <mesh> MESH_REF "'DeviceMesh' "
%token <idh> ID_HEAD "IterDomain"
%token <sym> SYMBOL "symbol"
%token <flt> FLOAT_LIT "floating-point literal"
%token <raw> HOSTUNIT_BLOCK "HostUnit block"
%token NEWLINE "end of line" INDENT "indentation" DEDENT "end of block" LEXERROR "invalid token"
%token HEADER "'%HostIrContainer {'" FOOTER "'} // %HostIrContainer'" INDEX_DEFS "'Index definitions:'"
%token SHARE_OPEN "'ShareMemHandles('" DEVICEMESH "'DeviceMesh'" ARROW "'->'" ELLIPSIS "'...'"
%token SHL "'<<'" SHR "'>>'" EQEQ "'=='" NEQ "'!='" LEQ "'<='" GEQ "'>='" ANDAND "'&&'" OROR "'||'"
%token KW_FOR "'FOR'" KW_IN "'in'" KW_FROM "'from'" KW_TO "'to'" KW_IF "'IF'" KW_ELSE "'ELSE'"
%token KW_STREAM "'Stream'" KW_GETSTREAM "'GetCurrentStream'" KW_INTO "'into'"
%token KW_SETSTREAM "'SetCurrentStream'" KW_SYNC "'Synchronize'"
%token KW_ALLOCATE "'ALLOCATE'" KW_BUFFER "'buffer'" KW_MEMTYPE "'mem_type'" KW_SIZE "'size'"
%token KW_ZEROINIT "'zero_init'" KW_RESETS "'resets_to_zero'" KW_ALIAS "'.alias'"
%token KW_ALIASSELECT "'HirAliasSelect'" KW_AXIS "'axis'" KW_INDEX "'index'"
%token KW_SHARD "'ShardByStream'" KW_STREAMINDEX "'stream_index'" KW_SYMVIEW "'SymmetricContiguousView'"
%token KW_CACHEOP "'cache_op'" KW_LINEAR "'linear'" KW_MATMUL "'matmul'"
%token KW_REDUCTION "'reduction'" KW_OP "'op'" KW_INITIAL "'initial'" KW_VALUE "'value'"
%token KW_ALLREDUCE "'allreduce'" KW_SELECT "'select'" KW_SLICE "'slice'" KW_VIEW "'view'"
%token KW_FLAGS "'flags'" KW_COMMUNICATION "'Communication'" KW_P2P "'P2PCommunication'"
%token KW_TYPE "'type'" KW_TEAM "'team'" KW_ROOT "'root'" KW_INPUT "'input'" KW_OUTPUT "'output'"
%token KW_BACKEND "'backend'" KW_PEER "'peer'" KW_WAIT "'Wait'" KW_STARTCOAL "'StartCoalescing'"
%token KW_ENDCOAL "'EndCoalescing'" KW_POST "'PostOnStream'" KW_INPUTS "'Inputs'" KW_OUTPUTS "'Outputs'"
%token KW_EXPAND "'expand'" KW_FULL "'full'" KW_GROUPEDMMA "'GroupedMmaOp'"
%token KW_LAUNCH "'LaunchKernel'" KW_GROUP "'Group'" KW_ID "'ID'" KW_INDEXCAP "'Index'" KW_DEALLOC "'Deallocate'"
%token KW_TRUE "'true'" KW_FALSE "'false'" KW_EX "'ex'"
%token KW_CPERM "'CollectivePermute'" KW_DISPATCH "'Dispatch'" KW_COMBINE "'Combine'" KW_RESHAPE "'reshape'"
%token KW_SDPA "'sdpa'" KW_SDPABWD "'sdpa_bwd'"
%token <str> HEXPTR "address"
%token <fstmt> STMT_FAST "statement" FOR_FAST "'FOR' " IF_FAST "'IF' "

%type <tensor> tensor
%type <id> iterdomain
%type <idparts> id_inner
%type <scalar> scalar_ref inline
%type <sexpr> inline_body
%type <value> operand value_ref
%type <vec> id_list opt_id_list inline_args int_list value_list
%type <ival> stmts
%type <blk> opt_block opt_else
%type <vec> opt_value_list trailing_values share_list mesh_groups slice_ranges bool_list
%type <vec> index_def_list opt_index_defs sdpa_args
%type <mesh> opt_mesh mesh
%type <mnode> mesh_items mesh_group
%type <stmt> stmt
%type <pair> for_fast if_fast
%type <str> opt_annotations annotation annotations
%type <b> bool
%type <op> binop prefixop
%type <fields> comm_fields
%type <ew> ew_rhs
%type <ival> id_close

%start program

%%

program
    : HEADER '(' opt_value_list ')' ARROW '(' opt_value_list ')' ':' NEWLINE opt_block hostunits FOOTER NEWLINE opt_index_defs
      {
          for (int i = 0; $3 && i < $3->n; i++) hir_ptrvec_push(P->arena, &P->inputs, $3->items[i]);
          for (int i = 0; $7 && i < $7->n; i++) hir_ptrvec_push(P->arena, &P->outputs, $7->items[i]);
          P->body.stmts = $11;
          for (int i = 0; i < ctx->bare_endcoal.n; i++) {
              hir_stmt *s = ctx->bare_endcoal.items[i];
              hir_comm *c = hir_comm_new(P, HIR_OP_END_COAL);
              c->number_unprinted = true;
              c->loc = s->loc;
              c->stmt = s;
              s->u.comm = c;
          }
      }
    ;

hostunits
    : %empty
    | hostunits HOSTUNIT_BLOCK
      {
          hir_hostunit *h = hir_arena_alloc(P->arena, sizeof *h);
          h->text = ctx->src->text + $2.begin;
          h->len = $2.end - $2.begin;
          h->number = strtoll(h->text + 8, NULL, 10);
          hir_ptrvec_push(P->arena, &P->hostunits, h);
      }
    ;

opt_index_defs
    : %empty                                   { $$ = NULL; }
    | INDEX_DEFS NEWLINE                        { P->has_index_defs = true; $$ = NULL; }
    | INDEX_DEFS NEWLINE INDENT index_def_list DEDENT { P->has_index_defs = true; $$ = $4; }
    ;

index_def_list
    : SYMBOL '=' ew_rhs ';' NEWLINE
      {
          hir_scalar *s = hirp_symbol_ref(ctx, @1, $1.prefix, $1.number);
          hir_stmt *tmp = hirp_ew_stmt(ctx, @$, (hir_value *)s, @1, $3);
          if (tmp) hirp_define_scalar(ctx, @$, s, tmp->u.sdef.def);
          hir_ptrvec_push(P->arena, &P->index_defs, s);
          $$ = NULL;
      }
    | index_def_list SYMBOL '=' ew_rhs ';' NEWLINE
      {
          hir_scalar *s = hirp_symbol_ref(ctx, @2, $2.prefix, $2.number);
          hir_yyltype l = {@2.begin, @5.end};
          hir_stmt *tmp = hirp_ew_stmt(ctx, l, (hir_value *)s, @2, $4);
          if (tmp) hirp_define_scalar(ctx, l, s, tmp->u.sdef.def);
          hir_ptrvec_push(P->arena, &P->index_defs, s);
          $$ = NULL;
      }
    ;

opt_block
    : %empty                    { $$ = (hir_ptrvec){0}; }
    | INDENT stmts DEDENT       { $$ = hirp_block_close(ctx, (size_t)$2); }
    ;

/* the statements of an open block are on the parse context's stack from $$ on */
stmts
    : stmt                      { $$ = (int64_t)ctx->nstk; hirp_block_push(ctx, $1); }
    | stmts stmt                { $$ = $1; hirp_block_push(ctx, $2); }
    ;

/* a FOR or IF line read in one go (fast_scan.c): its values are made here, before the block's */
for_fast
    : FOR_FAST                  { $$ = hirp_fast_head(ctx, $1); }
    ;

if_fast
    : IF_FAST                   { $$ = hirp_fast_head(ctx, $1); }
    ;

opt_else
    : %empty                                  { $$ = (hir_ptrvec){0}; }
    | KW_ELSE ':' NEWLINE opt_block           { $$ = $4; }
    ;

stmt
    : tensor '=' KW_ALLOCATE '(' KW_BUFFER '=' tensor ',' KW_MEMTYPE '=' IDENT ',' KW_SIZE '=' inline ',' KW_ZEROINIT '=' bool ',' KW_RESETS '=' bool ')' NEWLINE
      {
          hir_stmt *s = hirp_alloc_stmt(ctx, @$, $1, @1, $7, @7, $11, @11, $15, $19, $23);
          $$ = s;
      }
    | tensor '=' KW_ALLOCATE '(' KW_BUFFER '=' tensor ',' KW_MEMTYPE '=' IDENT ',' KW_SIZE '=' inline ',' KW_ZEROINIT '=' bool ',' KW_RESETS '=' bool ')' KW_ALIAS '=' tensor NEWLINE
      {
          hir_stmt *s = hirp_alloc_stmt(ctx, @$, $1, @1, $7, @7, $11, @11, $15, $19, $23);
          s->u.alloc.alias = $27;
          $$ = s;
      }
    | KW_GETSTREAM KW_INTO KW_STREAM scalar_ref NEWLINE
      {
          hir_stmt *s = hirp_stmt_new(ctx, HIR_OP_GET_STREAM, @$);
          if ($4->kind == HIR_SC_INT && $4->ival >= 0) { s->u.stream.number = $4->ival; }
          else { s->u.stream.number = -1; s->u.stream.index = $4; }
          $$ = s;
      }
    | KW_GETSTREAM KW_INTO KW_STREAM HEXPTR NEWLINE
      {
          $$ = hirp_stream_stmt(ctx, HIR_OP_GET_STREAM, @$, HIR_FORM_2025, $4, NULL);
      }
    | KW_STREAM HEXPTR '=' KW_GETSTREAM '(' ')' NEWLINE
      {
          $$ = hirp_stream_stmt(ctx, HIR_OP_GET_STREAM, @$, HIR_FORM_2026, $2, NULL);
      }
    | KW_STREAM inline '=' KW_GETSTREAM '(' ')' NEWLINE
      {
          $$ = hirp_stream_stmt(ctx, HIR_OP_GET_STREAM, @$, HIR_FORM_2026, NULL, $2);
      }
    | KW_SETSTREAM KW_TO KW_STREAM HEXPTR NEWLINE
      {
          $$ = hirp_stream_stmt(ctx, HIR_OP_SET_STREAM, @$, HIR_FORM_2025, $4, NULL);
      }
    | KW_SETSTREAM '(' KW_STREAM HEXPTR ')' NEWLINE
      {
          $$ = hirp_stream_stmt(ctx, HIR_OP_SET_STREAM, @$, HIR_FORM_2026, $4, NULL);
      }
    | KW_SETSTREAM '(' KW_STREAM inline ')' NEWLINE
      {
          $$ = hirp_stream_stmt(ctx, HIR_OP_SET_STREAM, @$, HIR_FORM_2026, NULL, $4);
      }
    | KW_SYNC KW_STREAM HEXPTR NEWLINE
      {
          $$ = hirp_stream_stmt(ctx, HIR_OP_SYNC_STREAM, @$, HIR_FORM_2025, $3, NULL);
      }
    | KW_SYNC '(' KW_STREAM HEXPTR ')' NEWLINE
      {
          $$ = hirp_stream_stmt(ctx, HIR_OP_SYNC_STREAM, @$, HIR_FORM_2026, $4, NULL);
      }
    | KW_SYNC '(' KW_STREAM inline ')' NEWLINE
      {
          $$ = hirp_stream_stmt(ctx, HIR_OP_SYNC_STREAM, @$, HIR_FORM_2026, NULL, $4);
      }
    | KW_WAIT '(' KW_COMMUNICATION INT ')' NEWLINE
      {
          $$ = hirp_wait_stmt(ctx, @$, $4, HIR_FORM_2026);
      }
    | tensor '=' KW_ALLOCATE '(' KW_MEMTYPE '=' IDENT ',' KW_ZEROINIT '=' bool ')' NEWLINE
      {
          hir_stmt *s = hirp_stmt_new(ctx, HIR_OP_HIR_ALLOCATE, @$);
          s->form = HIR_FORM_2026;
          s->out = $1; s->out_loc = hir_span_of(LOC(@1));
          int mem = -1;
          for (int i = 0; i < HIR_MEM_COUNT; i++) if (!strcmp(hir_mem_name((hir_mem)i), $7)) mem = i;
          if (mem < 0) hirp_semantic_error(ctx, @7, "unknown mem_type '%s' (expected register, shared, global, tensor or symmetric)", $7);
          s->u.alloc.mem = mem < 0 ? HIR_MEM_GLOBAL : (hir_mem)mem;
          s->u.alloc.zero_init = $11;
          $$ = s;
      }
    | tensor '=' KW_RESHAPE '(' tensor ')' NEWLINE
      {
          hir_stmt *s = hirp_stmt_new(ctx, HIR_OP_VIEW, @$);
          s->form = HIR_FORM_2026;
          s->out = $1; s->out_loc = hir_span_of(LOC(@1));
          hir_value *v[1] = {(hir_value *)$5}; hir_yyltype l[1] = {@5};
          hirp_stmt_inputs(ctx, s, 1, v, l);
          $$ = s;
      }
    | KW_CPERM INT '(' KW_TEAM '=' '(' int_list ')' ',' IDENT '=' inline ',' IDENT '=' inline ',' KW_INPUT '=' tensor ',' KW_OUTPUT '=' tensor ',' KW_BACKEND '=' IDENT ')' NEWLINE
      {
          $$ = hirp_cperm_stmt(ctx, @$, $2, @2, $7, $10, @10, $12, $14, @14, $16, $20, @20, $24, @24, $28, @28);
      }
    | KW_DISPATCH INT '(' IDENT '=' INT ',' KW_BACKEND '=' IDENT ',' KW_IN '=' tensor ',' IDENT '=' tensor ',' IDENT '=' tensor ',' IDENT '=' tensor ')' NEWLINE
      {
          hir_stmt *s = hirp_stmt_new(ctx, HIR_OP_DISPATCH, @$);
          s->form = HIR_FORM_2026;
          s->u.moe->number = $2;
          s->u.moe->num_experts = $6;
          hirp_expr_number_ok(ctx, $2, @2);
          hirp_field_is(ctx, $4, @4, "num_experts", "Dispatch");
          hirp_field_is(ctx, $16, @16, "topk_idx", "Dispatch");
          hirp_field_is(ctx, $20, @20, "topk_weights", "Dispatch");
          hirp_field_is(ctx, $24, @24, "out", "Dispatch");
          if ($6 <= 0) hirp_semantic_error(ctx, @6, "Dispatch: num_experts must be positive, not %lld", (long long)$6);
          hirp_backend_of(ctx, $10, @10, &s->u.moe->backend);
          s->out = $26; s->out_loc = hir_span_of(LOC(@26));
          hir_value *v[3] = {(hir_value *)$14, (hir_value *)$18, (hir_value *)$22};
          hir_yyltype l[3] = {@14, @18, @22};
          hirp_stmt_inputs(ctx, s, 3, v, l);
          hir_ptrvec_push(P->arena, &ctx->dispatches, s);
          $$ = s;
      }
    | tensor ',' tensor ',' tensor '=' KW_SDPABWD '(' tensor ',' tensor ',' tensor ',' tensor ',' tensor ',' sdpa_args ')' NEWLINE
      {
          hir_tensor *outs[3] = {$1, $3, $5};
          hir_yyltype ol[3] = {@1, @3, @5};
          hir_tensor *ins[5] = {$9, $11, $13, $15, $17};
          hir_yyltype il[5] = {@9, @11, @13, @15, @17};
          $$ = sdpa_bwd_stmt(ctx, @$, outs, ol, ins, il, $19, @20);
      }
    | tensor ',' tensor ',' tensor ',' tensor '=' KW_SDPA '(' tensor ',' tensor ',' tensor ',' sdpa_args ')' NEWLINE
      {
          hir_tensor *outs[4] = {$1, $3, $5, $7};
          hir_yyltype ol[4] = {@1, @3, @5, @7};
          hir_tensor *qkv[3] = {$11, $13, $15};
          hir_yyltype ql[3] = {@11, @13, @15};
          $$ = sdpa_stmt(ctx, @$, outs, ol, qkv, ql, $17, @18);
      }
    | KW_COMBINE INT '(' KW_BACKEND '=' IDENT ',' KW_IN '=' tensor ',' IDENT '=' tensor ',' IDENT '=' tensor ',' IDENT '=' tensor ')' NEWLINE
      {
          hir_stmt *s = hirp_stmt_new(ctx, HIR_OP_COMBINE, @$);
          s->form = HIR_FORM_2026;
          s->u.moe->number = $2;
          hirp_expr_number_ok(ctx, $2, @2);
          hirp_field_is(ctx, $12, @12, "topk_weights", "Combine");
          hirp_field_is(ctx, $16, @16, "src_idx", "Combine");
          hirp_field_is(ctx, $20, @20, "out", "Combine");
          hirp_backend_of(ctx, $6, @6, &s->u.moe->backend);
          s->out = $22; s->out_loc = hir_span_of(LOC(@22));
          hir_value *v[3] = {(hir_value *)$10, (hir_value *)$14, (hir_value *)$18};
          hir_yyltype l[3] = {@10, @14, @18};
          hirp_stmt_inputs(ctx, s, 3, v, l);
          /* nvFuser prints only one of the Dispatch's outputs: the Combine's topk_weights= and
           * src_idx= are the Dispatch's unprinted ones (the Dispatch whose out= is this in=) */
          for (int i = ctx->dispatches.n - 1; i >= 0; i--) {
              hir_stmt *d = ctx->dispatches.items[i];
              if (d->out == $10 && !d->u.moe->hidden[0]) {
                  d->u.moe->hidden[0] = $14;
                  d->u.moe->hidden[1] = $18;
                  s->u.moe->dispatch = d;
                  break;
              }
          }
          $$ = s;
      }
    | KW_SETSTREAM KW_TO KW_STREAM inline NEWLINE
      {
          $$ = hirp_stream_index_stmt(ctx, HIR_OP_SET_STREAM, @$, $4);
      }
    | KW_SYNC KW_STREAM inline NEWLINE
      {
          $$ = hirp_stream_index_stmt(ctx, HIR_OP_SYNC_STREAM, @$, $3);
      }
    | KW_FOR scalar_ref KW_IN iterdomain ':' NEWLINE opt_block
      {
          $$ = hirp_for_in_stmt(ctx, @$, @1, $2, @2, $4, $7);
      }
    | KW_FOR scalar_ref KW_FROM inline KW_TO inline ':' NEWLINE opt_block
      {
          hir_stmt *s = hirp_stmt_new(ctx, HIR_OP_HOST_FOR, @$);
          s->loc = LOC(@1);
          s->u.hfor.index = $2;
          s->u.hfor.start = $4;
          s->u.hfor.stop = $6;
          if (hir_scalar_is_literal($2))
              hirp_semantic_error(ctx, @2, "loop index must be a named scalar or a symbol, not a literal");
          s->body.stmts = $9;
          $$ = s;
      }
    | KW_IF IDENT inline ':' NEWLINE opt_block opt_else
      {
          $$ = hirp_if_stmt(ctx, @$, @1, $2, $3, $6, $7);
      }
    | STMT_FAST
      {
          $$ = hirp_fast_stmt_make(ctx, $1, @$);
      }
    | for_fast NEWLINE opt_block
      {
          $$ = hirp_for_in_stmt(ctx, @$, @1, $1.a, @1, $1.b, $3);
      }
    | if_fast NEWLINE opt_block opt_else
      {
          $$ = hirp_if_stmt(ctx, @$, @1, $1.a, $1.b, $3, $4);
      }
    | tensor '=' KW_ALIASSELECT '(' tensor ',' KW_AXIS '=' iterdomain ',' KW_INDEX '=' scalar_ref ')' NEWLINE
      {
          $$ = hirp_alias_select_stmt(ctx, @$, $1, @1, $5, @5, $9, $13);
      }
    | tensor '=' KW_SELECT '(' tensor ',' KW_AXIS '=' iterdomain ',' KW_INDEX '=' scalar_ref ')' NEWLINE
      {
          hir_stmt *s = hirp_stmt_new(ctx, HIR_OP_SELECT, @$);
          s->out = $1; s->out_loc = hir_span_of(LOC(@1));
          hir_value *v[1] = {(hir_value *)$5}; hir_yyltype l[1] = {@5};
          hirp_stmt_inputs(ctx, s, 1, v, l);
          s->u.sel.axis = $9; s->u.sel.index = $13;
          $$ = s;
      }
    | tensor '=' KW_SHARD '(' tensor ',' KW_STREAMINDEX '=' scalar_ref ')' NEWLINE
      {
          hir_stmt *s = hirp_stmt_new(ctx, HIR_OP_SHARD_BY_STREAM, @$);
          s->out = $1; s->out_loc = hir_span_of(LOC(@1));
          hir_value *v[1] = {(hir_value *)$5}; hir_yyltype l[1] = {@5};
          hirp_stmt_inputs(ctx, s, 1, v, l);
          s->u.stream_index = $9;
          /* ", stream_index = i5" (2025) or ", stream_index=i5" (2026) */
          s->form = ctx->src->text[@7.end] == ' ' ? HIR_FORM_2025 : HIR_FORM_2026;
          $$ = s;
      }
    | tensor '=' KW_SYMVIEW '(' tensor ')' NEWLINE
      {
          hir_stmt *s = hirp_stmt_new(ctx, HIR_OP_SYM_VIEW, @$);
          s->out = $1; s->out_loc = hir_span_of(LOC(@1));
          hir_value *v[1] = {(hir_value *)$5}; hir_yyltype l[1] = {@5};
          hirp_stmt_inputs(ctx, s, 1, v, l);
          $$ = s;
      }
    | tensor '=' KW_GROUPEDMMA '(' IDENT '=' tensor ',' IDENT '=' tensor ',' IDENT '=' tensor ')' NEWLINE
      {
          const char *names[3] = {$5, $9, $13};
          hir_yyltype nl[3] = {@5, @9, @13};
          hir_value *v[3] = {(hir_value *)$7, (hir_value *)$11, (hir_value *)$15};
          hir_yyltype l[3] = {@7, @11, @15};
          $$ = hirp_grouped_mma_stmt(ctx, @$, $1, @1, names, nl, v, l);
      }
    | tensor '=' KW_EXPAND '(' tensor ')' NEWLINE
      {
          hir_stmt *s = hirp_stmt_new(ctx, HIR_OP_EXPAND, @$);
          s->out = $1; s->out_loc = hir_span_of(LOC(@1));
          hir_value *v[1] = {(hir_value *)$5}; hir_yyltype l[1] = {@5};
          hirp_stmt_inputs(ctx, s, 1, v, l);
          $$ = s;
      }
    | tensor '=' KW_FULL '(' '{' inline_args '}' ',' inline ')' ';' NEWLINE
      { $$ = hirp_full_stmt(ctx, @$, $1, @1, $6, $9); }
    | tensor '=' KW_FULL '(' '{' '}' inline ')' ';' NEWLINE
      {
          /* a 0-dim FullOp: nvFuser's printer writes no ", " after the empty "{}" */
          $$ = hirp_full_stmt(ctx, @$, $1, @1, NULL, $7);
      }
    | tensor '=' KW_VIEW '(' tensor ')' NEWLINE
      {
          hir_stmt *s = hirp_stmt_new(ctx, HIR_OP_VIEW, @$);
          s->out = $1; s->out_loc = hir_span_of(LOC(@1));
          hir_value *v[1] = {(hir_value *)$5}; hir_yyltype l[1] = {@5};
          hirp_stmt_inputs(ctx, s, 1, v, l);
          $$ = s;
      }
    | tensor '=' LOADSTORE '(' operand ')' NEWLINE
      {
          hir_stmt *s = hirp_stmt_new(ctx, (hir_op)($3 & 0xffff), @$);
          s->out = $1; s->out_loc = hir_span_of(LOC(@1));
          hir_value *v[1] = {$5}; hir_yyltype l[1] = {@5};
          hirp_stmt_inputs(ctx, s, 1, v, l);
          s->u.ls.permute = ($3 >> 16) != 0;
          $$ = s;
      }
    | tensor '=' LOADSTORE '(' operand ',' KW_CACHEOP '=' IDENT ')' NEWLINE
      {
          hir_stmt *s = hirp_stmt_new(ctx, (hir_op)($3 & 0xffff), @$);
          s->out = $1; s->out_loc = hir_span_of(LOC(@1));
          hir_value *v[1] = {$5}; hir_yyltype l[1] = {@5};
          hirp_stmt_inputs(ctx, s, 1, v, l);
          s->u.ls.permute = ($3 >> 16) != 0;
          if (strcmp($9, "AllLevels") && strcmp($9, "Streaming") && strcmp($9, "Global"))
              hirp_semantic_error(ctx, @9, "unknown cache_op '%s' (expected AllLevels, Streaming or Global)", $9);
          s->u.ls.cache_op = $9;
          $$ = s;
      }
    | tensor '=' KW_LINEAR '(' operand ',' operand ')' NEWLINE
      {
          hir_value *v[2] = {$5, $7}; hir_yyltype l[2] = {@5, @7};
          $$ = hirp_linear_stmt(ctx, @$, $1, @1, 2, v, l);
      }
    | tensor '=' KW_LINEAR '(' operand ',' operand ',' operand ')' NEWLINE
      {
          hir_value *v[3] = {$5, $7, $9}; hir_yyltype l[3] = {@5, @7, @9};
          $$ = hirp_linear_stmt(ctx, @$, $1, @1, 3, v, l);
      }
    | tensor '=' KW_MATMUL '(' operand ',' operand ')' NEWLINE
      {
          hir_value *v[2] = {$5, $7}; hir_yyltype l[2] = {@5, @7};
          $$ = hirp_matmul_stmt(ctx, @$, $1, @1, v, l);
      }
    | tensor '=' KW_REDUCTION '(' tensor ',' KW_OP '=' IDENT ',' KW_INITIAL KW_VALUE '=' scalar_ref ',' KW_ALLREDUCE '=' bool ')' NEWLINE
      {
          hir_stmt *s = hirp_stmt_new(ctx, HIR_OP_REDUCTION, @$);
          s->out = $1; s->out_loc = hir_span_of(LOC(@1));
          hir_value *v[1] = {(hir_value *)$5}; hir_yyltype l[1] = {@5};
          hirp_stmt_inputs(ctx, s, 1, v, l);
          s->u.red.op_name = $9;
          if (!hir_reduce_op_lookup($9, &s->u.red.op))
              hirp_semantic_error(ctx, @9, "unknown reduction operator '%s'", $9);
          s->u.red.init = $14;
          s->u.red.allreduce = $18;
          $$ = s;
      }
    | tensor '=' KW_SLICE '(' tensor ',' '{' slice_ranges '}' ')' NEWLINE
      {
          hir_stmt *s = hirp_stmt_new(ctx, HIR_OP_SLICE, @$);
          s->out = $1; s->out_loc = hir_span_of(LOC(@1));
          hir_value *v[1] = {(hir_value *)$5}; hir_yyltype l[1] = {@5};
          hirp_stmt_inputs(ctx, s, 1, v, l);
          int n = $8 ? $8->n / 3 : 0;
          s->u.slice.nranges = n;
          s->u.slice.ranges = hir_arena_alloc(P->arena, sizeof(hir_slice_range) * (n ? n : 1));
          for (int i = 0; i < n; i++) {
              s->u.slice.ranges[i].start = $8->items[3 * i];
              s->u.slice.ranges[i].stop = $8->items[3 * i + 1];
              s->u.slice.ranges[i].step = $8->items[3 * i + 2];
          }
          $$ = s;
      }
    | tensor '=' FLAGSOP '(' tensor ',' KW_FLAGS '=' '{' bool_list '}' ')' NEWLINE
      {
          hir_stmt *s = hirp_stmt_new(ctx, (hir_op)$3, @$);
          s->out = $1; s->out_loc = hir_span_of(LOC(@1));
          hir_value *v[1] = {(hir_value *)$5}; hir_yyltype l[1] = {@5};
          hirp_stmt_inputs(ctx, s, 1, v, l);
          int n = $10 ? $10->n : 0;
          s->u.flags.nflags = n;
          s->u.flags.flags = hir_arena_alloc(P->arena, sizeof(bool) * (n ? n : 1));
          for (int i = 0; i < n; i++) s->u.flags.flags[i] = *(int64_t *)$10->items[i] != 0;
          $$ = s;
      }
    | tensor '=' ew_rhs ';' NEWLINE
      {
          $$ = hirp_ew_stmt(ctx, @$, (hir_value *)$1, @1, $3);
      }
    | scalar_ref '=' ew_rhs ';' NEWLINE
      {
          hir_stmt *s = NULL;
          if ($1->kind != HIR_SC_SYMBOL && $1->kind != HIR_SC_NAMED)
              hirp_semantic_error(ctx, @1, "only a symbol or a named scalar can be defined");
          else
              s = hirp_ew_stmt(ctx, @$, (hir_value *)$1, @1, $3);
          if (s && s->op == HIR_OP_SCALAR_DEF)
              hirp_define_scalar(ctx, @$, $1, s->u.sdef.def);
          $$ = s;
      }
    | KW_COMMUNICATION INT '(' comm_fields ')' NEWLINE
      {
          hir_stmt *s = hirp_stmt_new(ctx, HIR_OP_COMMUNICATION, @$);
          s->u.comm = hirp_comm_from_fields(ctx, @$, $2, $4, false);
          if (s->u.comm) {
              if (s->u.comm->stmt) {
                  hir_diag_entry *e = hir_diag_emit(ctx->diag, HIR_ERROR, LOC(@2),
                      "expression number %lld is already used", (long long)$2);
                  hir_diag_note(ctx->diag, e, s->u.comm->stmt->loc, "first used here");
                  ctx->failed = true;
              } else
                  s->u.comm->stmt = s;
          }
          $$ = s;
      }
    | KW_P2P INT '(' comm_fields ')' NEWLINE
      {
          $$ = hirp_p2p_stmt(ctx, @$, $2, @2, $4);
      }
    | KW_WAIT KW_COMMUNICATION INT NEWLINE
      {
          $$ = hirp_wait_stmt(ctx, @$, $3, HIR_FORM_2025);
      }
    | KW_STARTCOAL NEWLINE
      {
          $$ = hirp_stmt_new(ctx, HIR_OP_START_COAL, @$);
      }
    | KW_ENDCOAL NEWLINE
      {
          /* nvFuser's printer before 2025-06-03: no number. One is given after the whole
           * program is read, above every printed one (see the program rule). */
          hir_stmt *s = hirp_stmt_new(ctx, HIR_OP_END_COAL, @$);
          hir_ptrvec_push(P->arena, &ctx->bare_endcoal, s);
          $$ = s;
      }
    | KW_ENDCOAL INT NEWLINE
      {
          hir_stmt *s = hirp_stmt_new(ctx, HIR_OP_END_COAL, @$);
          hir_comm *c = hir_comm_get(P, $2);
          if ($2 >= HIR_MAX_NAME_NUMBER) {   /* see HIR_MAX_NAME_NUMBER (found by fuzzing) */
              hir_diag_emit(ctx->diag, HIR_ERROR, LOC(@2), "expression number %lld is too large (at most %lld)",
                            (long long)$2, (long long)(HIR_MAX_NAME_NUMBER - 1));
              ctx->failed = true;
          } else if ($2 < 0) {
              hirp_semantic_error(ctx, @2, "expression number %lld is negative", (long long)$2);
              c = NULL;
          } else if (c) {
              hir_diag_entry *e = hir_diag_emit(ctx->diag, HIR_ERROR, LOC(@2),
                  "expression number %lld is already used", (long long)$2);
              hir_diag_note(ctx->diag, e, c->loc, "first used here");
              ctx->failed = true;
          } else {
              c = hir_comm_create(P, $2, HIR_OP_END_COAL);
              c->loc = LOC(@$);
              c->stmt = s;
          }
          s->u.comm = c;
          $$ = s;
      }
    | SHARE_OPEN share_list NEWLINE
      {
          hir_stmt *s = hirp_stmt_new(ctx, HIR_OP_SHARE_HANDLES, @$);
          int n = $2 ? $2->n : 0;
          s->u.share.n = n;
          s->u.share.comms = hir_arena_alloc(P->arena, sizeof(hir_comm *) * (n ? n : 1));
          for (int i = 0; i < n; i++) s->u.share.comms[i] = $2->items[i];
          $$ = s;
      }
    | KW_POST '(' HOSTUNIT_REF ',' KW_INPUTS ':' '{' trailing_values '}' ',' KW_OUTPUTS ':' '{' trailing_values '}' ')' NEWLINE
      {
          hir_stmt *s = hirp_stmt_new(ctx, HIR_OP_POST_ON_STREAM, @$);
          int ni = $8 ? $8->n : 0, no = $14 ? $14->n : 0;
          hir_value **v = hir_arena_alloc(P->arena, sizeof(hir_value *) * (ni + no + 1));
          for (int i = 0; i < ni; i++) v[i] = $8->items[i];
          for (int i = 0; i < no; i++) v[ni + i] = $14->items[i];
          hirp_stmt_inputs(ctx, s, ni + no, v, NULL);
          s->u.kernel.number = $3;
          s->u.kernel.ninputs = ni;
          $$ = s;
      }
    | KW_LAUNCH '(' KW_GROUP KW_ID ':' INT ',' KW_INPUTS ':' '{' opt_value_list '}' ',' KW_OUTPUTS ':' '{' opt_value_list '}' ',' ')' NEWLINE
      { $$ = hirp_launch_stmt(ctx, @$, $6, HIR_LAUNCH_GROUP_ID, $11, $17); }
    | KW_LAUNCH '(' KW_INDEXCAP ':' INT ',' KW_INPUTS ':' '{' opt_value_list '}' ',' KW_OUTPUTS ':' '{' opt_value_list '}' ',' ')' NEWLINE
      { $$ = hirp_launch_stmt(ctx, @$, $5, HIR_LAUNCH_INDEX, $10, $16); }
    | KW_LAUNCH '(' KW_INPUTS ':' '{' trailing_values '}' ',' KW_OUTPUTS ':' '{' trailing_values '}' ')' NEWLINE
      { $$ = hirp_launch_stmt(ctx, @$, -1, HIR_LAUNCH_ONE_LINE, $6, $12); }
    | KW_DEALLOC '{' tensor '}' NEWLINE
      {
          hir_stmt *s = hirp_stmt_new(ctx, HIR_OP_DEALLOCATE, @$);
          hir_value *v[1] = {(hir_value *)$3}; hir_yyltype l[1] = {@3};
          hirp_stmt_inputs(ctx, s, 1, v, l);
          $$ = s;
      }
    ;

ew_rhs
    : FLOAT_LIT
      {
          /* "d10 = double(4);" is how the cast of a number prints, and the scanner reads
           * "double(4)" as one literal (found by fuzzing): keep it as that call */
          const char *t = ctx->src->text + @1.begin;
          const char *o = memchr(t, '(', @1.end - @1.begin);
          struct hir_ewrhs *r = hirp_ewrhs_start(ctx);
          r->kind = -1; r->n = 1; r->l[0] = @1;
          r->fn = hir_intern(&P->strings, t, (size_t)(o - t));
          r->v[0] = (hir_value *)hir_scalar_float(P, $1.dtype, $1.value,
              hir_arena_strndup(P->arena, o + 1, (size_t)(ctx->src->text + @1.end - 1 - (o + 1))));
          $$ = r;
      }
    | operand binop operand
      {
          struct hir_ewrhs *r = hirp_ewrhs_start(ctx);
          r->kind = HIR_SX_BINARY; r->op = $2; r->infix = true; r->n = 2;
          r->v[0] = $1; r->v[1] = $3; r->l[0] = @1; r->l[1] = @3;
          $$ = r;
      }
    | prefixop operand
      {
          struct hir_ewrhs *r = hirp_ewrhs_start(ctx);
          r->kind = HIR_SX_UNARY; r->op = $1; r->infix = true; r->n = 1;
          r->v[0] = $2; r->l[0] = @2;
          $$ = r;
      }
    | INT
      {
          /* "i21 = -42;" is how nvFuser (and hir's printer) writes neg(42): the scanner reads
           * "-42" as one literal, and a bare literal is never a definition, so a signed one here
           * is the unary minus (found by fuzzing: the printer's own text was refused). */
          /* the scanner caps literals at INT64_MAX, so -$1 cannot overflow */
          struct hir_ewrhs *r = hirp_ewrhs_start(ctx);
          hir_yyltype l = {@1.begin + 1, @1.end};
          r->kind = HIR_SX_UNARY; r->op = HIR_UN_NEG; r->infix = true; r->n = 1;
          r->v[0] = (hir_value *)hir_scalar_int(P, -$1);
          r->l[0] = l;
          if (ctx->src->text[@1.begin] != '-')
              hirp_semantic_error(ctx, @1, "a definition needs an operator or a function, not the bare literal %lld", (long long)$1);
          $$ = r;
      }
    | IDENT '(' operand ')'
      {
          struct hir_ewrhs *r = hirp_ewrhs_start(ctx);
          r->fn = $1; r->n = 1; r->v[0] = $3; r->l[0] = @3; r->kind = -1;
          $$ = r;
      }
    | IDENT '(' operand ',' operand ')'
      {
          struct hir_ewrhs *r = hirp_ewrhs_start(ctx);
          r->fn = $1; r->n = 2; r->v[0] = $3; r->v[1] = $5; r->l[0] = @3; r->l[1] = @5; r->kind = -1;
          $$ = r;
      }
    | IDENT '(' operand ',' operand ',' operand ')'
      {
          struct hir_ewrhs *r = hirp_ewrhs_start(ctx);
          r->fn = $1; r->n = 3; r->v[0] = $3; r->v[1] = $5; r->v[2] = $7;
          r->l[0] = @3; r->l[1] = @5; r->l[2] = @7; r->kind = -1;
          $$ = r;
      }
    ;

operand
    : tensor        { $$ = (hir_value *)$1; }
    | inline        { $$ = (hir_value *)$1; }
    ;

value_ref
    : tensor        { $$ = (hir_value *)$1; }
    | scalar_ref    { $$ = (hir_value *)$1; }
    ;

opt_value_list
    : %empty        { $$ = NULL; }
    | value_list    { $$ = $1; }
    ;

value_list
    : value_ref                     { $$ = hirp_vec1(ctx, $1); }
    | value_list ',' value_ref      { $$ = hirp_vecpush(ctx, $1, $3); }
    ;

trailing_values
    : %empty                        { $$ = NULL; }
    | trailing_values value_ref ',' { $$ = hirp_vecpush(ctx, $1, $2); }
    ;

share_list
    : %empty                        { $$ = NULL; }
    | share_list KW_P2P INT '(' comm_fields ')' ','
      {
          hir_comm *c = hirp_comm_from_fields(ctx, @$, $3, $5, true);
          $$ = c ? hirp_vecpush(ctx, $1, c) : $1;
      }
    ;

comm_fields
    : KW_TYPE '=' IDENT                        { $$ = hirp_fields_start(ctx, @3); $$->type = $3; $$->type_loc = @3; }
    | comm_fields ',' KW_TEAM '=' '(' int_list ')'
      {
          $$ = $1; hirp_fields_add(ctx, &$$, F_TEAM, @6);
          $$->has_team = true;
          $$->nteam = $6 ? $6->n : 0;
          $$->team = hir_arena_alloc(P->arena, sizeof(int64_t) * ($$->nteam ? $$->nteam : 1));
          for (int i = 0; i < $$->nteam; i++) $$->team[i] = *(int64_t *)$6->items[i];
      }
    | comm_fields ',' KW_TEAM '=' '(' int_list ELLIPSIS ')'
      {
          $$ = $1; hirp_fields_add(ctx, &$$, F_TEAM, @6);
          $$->has_team = true;
          $$->truncated = true;
          $$->nteam = $6 ? $6->n : 0;
          $$->team = hir_arena_alloc(P->arena, sizeof(int64_t) * ($$->nteam ? $$->nteam : 1));
          for (int i = 0; i < $$->nteam; i++) $$->team[i] = *(int64_t *)$6->items[i];
      }
    | comm_fields ',' KW_ROOT '=' inline       { $$ = $1; hirp_fields_add(ctx, &$$, F_ROOT, @5); $$->root = $5; }
    | comm_fields ',' KW_INPUT '=' tensor      { $$ = $1; hirp_fields_add(ctx, &$$, F_INPUT, @5); $$->input = $5; $$->input_loc = @5; }
    | comm_fields ',' KW_OUTPUT '=' tensor     { $$ = $1; hirp_fields_add(ctx, &$$, F_OUTPUT, @5); $$->output = $5; $$->output_loc = @5; }
    | comm_fields ',' KW_BUFFER '=' tensor     { $$ = $1; hirp_fields_add(ctx, &$$, F_BUFFER, @5); $$->buffer = $5; $$->buffer_loc = @5; }
    | comm_fields ',' KW_PEER '=' scalar_ref   { $$ = $1; hirp_fields_add(ctx, &$$, F_PEER, @5); $$->peer = $5; }
    | comm_fields ',' KW_BACKEND '=' IDENT     { $$ = $1; hirp_fields_add(ctx, &$$, F_BACKEND, @5); $$->backend = $5; $$->backend_loc = @5; }
    ;

int_list
    : %empty            { $$ = NULL; }
    | int_list INT      { $$ = hirp_vecpush(ctx, $1, hirp_box_int(ctx, $2)); }
    ;

bool_list
    : bool                  { $$ = hirp_vec1(ctx, hirp_box_int(ctx, $1)); }
    | bool_list ',' bool    { $$ = hirp_vecpush(ctx, $1, hirp_box_int(ctx, $3)); }
    ;

slice_ranges
    : %empty                { $$ = NULL; }
    | slice_ranges '{' scalar_ref ',' scalar_ref ',' scalar_ref '}'
      {
          $$ = hirp_vecpush(ctx, $1, $3); hirp_vecpush(ctx, $$, $5); hirp_vecpush(ctx, $$, $7);
      }
    ;

/* sdpa's named arguments after q, k, v (parser/sdpa_actions.inc checks names and order); a
 * trailing ',' before ')' is the 2026 spelling, and is recorded as a NULL item */
sdpa_args
    : IDENT '=' operand                 { $$ = hirp_vec1(ctx, sdpa_arg(ctx, $1, @1, $3, @3)); }
    | sdpa_args ',' IDENT '=' operand   { $$ = hirp_vecpush(ctx, $1, sdpa_arg(ctx, $3, @3, $5, @5)); }
    | sdpa_args ','                     { $$ = hirp_vecpush(ctx, $1, NULL); }
    ;

bool
    : KW_TRUE       { $$ = true; }
    | KW_FALSE      { $$ = false; }
    ;

/* ---- tensors, IterDomains, meshes ---- */

tensor
    : TENSOR_HEAD opt_id_list ']' opt_annotations opt_mesh
      {
          $$ = hirp_tensor_ref(ctx, @$, $1.number, $1.mem, $1.dtype, $2, $4, $5);
      }
    | TENSOR_REF        { $$ = $1; }   /* spelled exactly as its first mention (scanner fast path) */
    | TENSOR_FAST       { $$ = hirp_fast_tensor(ctx, @1, $1); }   /* a first mention, common shape */
    ;

opt_id_list
    : %empty            { $$ = NULL; }
    | id_list           { $$ = $1; }
    ;

id_list
    : iterdomain                { $$ = hirp_vec1(ctx, $1); }
    | id_list ',' iterdomain    { $$ = hirp_vecpush(ctx, $1, $3); }
    ;

iterdomain
    : ID_HEAD id_inner id_close
      {
          $$ = hirp_iterdomain_ref(ctx, @$, $1.number, $1.itype, $1.ptype, $2, (unsigned)$3);
      }
    | ID_REF            { $$ = $1; }   /* "iS15{128}": read by the scanner in one go */
    ;

id_close
    : '}'               { $$ = 0; }
    | ID_CLOSE_FLAGS    { $$ = $1; }
    ;

id_inner
    : inline                                { ctx->idparts = (struct hir_idparts){$1, NULL, NULL, NULL, 1}; $$ = &ctx->idparts; }
    | inline ':' inline                     { ctx->idparts = (struct hir_idparts){$1, $3, NULL, NULL, 2}; $$ = &ctx->idparts; }
    | inline ':' inline ':' inline          { ctx->idparts = (struct hir_idparts){$1, $3, $5, NULL, 3}; $$ = &ctx->idparts; }
    | inline KW_EX inline                   { ctx->idparts = (struct hir_idparts){$1, NULL, NULL, $3, 1}; $$ = &ctx->idparts; }
    | inline ':' inline KW_EX inline        { ctx->idparts = (struct hir_idparts){$1, $3, NULL, $5, 2}; $$ = &ctx->idparts; }
    | inline ':' inline ':' inline KW_EX inline { ctx->idparts = (struct hir_idparts){$1, $3, $5, $7, 3}; $$ = &ctx->idparts; }
    ;

opt_annotations
    : %empty            { $$ = NULL; }
    | annotations       { $$ = $1; }
    ;

annotations
    : annotation                { $$ = $1; }
    | annotations annotation
      {
          size_t a = strlen($1), b = strlen($2);
          char *s = hir_arena_alloc(P->arena, a + b + 1);
          memcpy(s, $1, a); memcpy(s + a, $2, b + 1);
          $$ = s;
      }
    ;

annotation
    : IDENT '(' INT ')'
      {
          if (strcmp($1, "ca_pos") && strcmp($1, "produce_pos") && strcmp($1, "maybe_produce_pos") && strcmp($1, "compute_with"))
              hirp_semantic_error(ctx, @1, "unknown tensor annotation '%s'", $1);
          char buf[128];
          snprintf(buf, sizeof buf, " %s( %lld )", $1, (long long)$3);
          $$ = hir_program_intern(P, buf);
      }
    ;

opt_mesh
    : %empty                { $$ = NULL; }
    | '(' mesh ')'          { $$ = $2; }
    ;

mesh
    : DEVICEMESH '{' mesh_items '}'
      {
          $$ = hirp_mesh_from(ctx, @$, $3);
          if ($$) {   /* remember its spelling for the scanner's fast path */
              struct hir_lexstate *st = hirl_get_extra(scanner);
              st->mesh_begin = @$.begin;
              st->mesh_end = @$.end;
              st->mesh = $$;
          }
      }
    | MESH_REF          { $$ = $1; }
    ;

mesh_items
    : int_list          { $$ = hirp_mnode_leaf(ctx, $1); }
    | mesh_groups       { $$ = hirp_mnode_group(ctx, @1, $1); }
    ;

mesh_groups
    : mesh_group                { $$ = hirp_vec1(ctx, $1); }
    | mesh_groups mesh_group    { $$ = hirp_vecpush(ctx, $1, $2); }
    ;

mesh_group
    : '{' mesh_items '}'        { $$ = $2; }
    ;

/* ---- scalars ---- */

scalar_ref
    : SYMBOL        { $$ = hirp_symbol_ref(ctx, @1, $1.prefix, $1.number); }
    | IDENT         { $$ = hirp_named_ref(ctx, @1, $1); }
    | INT           { $$ = hir_scalar_int(P, $1); }
    | KW_TRUE       { $$ = hir_scalar_bool(P, true); }
    | KW_FALSE      { $$ = hir_scalar_bool(P, false); }
    | FLOAT_LIT
      {
          char *sp = hir_arena_strndup(P->arena, ctx->src->text + @1.begin, @1.end - @1.begin);
          $$ = hir_scalar_float(P, $1.dtype, $1.value, sp);
      }
    ;

inline
    : scalar_ref                { $$ = $1; }
    | '(' inline_body ')'
      {
          $$ = hirp_anon_value(ctx, $2, @$);
      }
    ;

inline_body
    : inline binop inline
      {
          $$ = hirp_anon_binary(ctx, (hir_binary_op)$2, $1, $3);
      }
    | prefixop inline
      {
          $$ = hirp_anon_unary(ctx, (hir_unary_op)$1, $2);
      }
    | IDENT '(' inline_args ')'
      {
          $$ = hirp_make_call(ctx, @$, $1, $3);
      }
    | FLOAT_LIT
      {
          /* "( double(4) )": the cast of a number, which the scanner reads as one literal;
           * kept as the call it was written as so that it prints back the same way */
          const char *t = ctx->src->text + @1.begin;
          const char *o = memchr(t, '(', @1.end - @1.begin);
          hir_ptrvec *args = hirp_vec1(ctx, hir_scalar_float(P, $1.dtype, $1.value,
              hir_arena_strndup(P->arena, o + 1, (size_t)(ctx->src->text + @1.end - 1 - (o + 1)))));
          $$ = hirp_make_call(ctx, @$, hir_intern(&P->strings, t, (size_t)(o - t)), args);
      }
    | INT
      {
          /* "( -44 )" is the negation of 44 as the printer writes it, but the scanner reads
           * "-44" as one literal: take it back apart so that printing is a fixed point */
          if (ctx->src->text[@1.begin] != '-')
              hirp_semantic_error(ctx, @1, "a parenthesized value must be an expression; write %lld without parentheses",
                                  (long long)$1);
          $$ = hirp_anon_unary(ctx, HIR_UN_NEG, hir_scalar_int(P, -$1));
      }
    ;

inline_args
    : inline                    { $$ = hirp_vec1(ctx, $1); }
    | inline_args ',' inline    { $$ = hirp_vecpush(ctx, $1, $3); }
    ;

binop
    : '+' { $$ = HIR_BIN_ADD; } | '-' { $$ = HIR_BIN_SUB; } | '*' { $$ = HIR_BIN_MUL; }
    | '/' { $$ = HIR_BIN_DIV; } | '%' { $$ = HIR_BIN_MOD; } | SHL { $$ = HIR_BIN_SHL; }
    | SHR { $$ = HIR_BIN_SHR; } | EQEQ { $$ = HIR_BIN_EQ; } | NEQ { $$ = HIR_BIN_NE; }
    | '<' { $$ = HIR_BIN_LT; } | LEQ { $$ = HIR_BIN_LE; } | '>' { $$ = HIR_BIN_GT; }
    | GEQ { $$ = HIR_BIN_GE; } | ANDAND { $$ = HIR_BIN_AND; } | OROR { $$ = HIR_BIN_OR; }
    | '&' { $$ = HIR_BIN_BITAND; } | '|' { $$ = HIR_BIN_BITOR; } | '^' { $$ = HIR_BIN_XOR; }
    ;

prefixop
    : '-' { $$ = HIR_UN_NEG; } | '!' { $$ = HIR_UN_NOT; } | '~' { $$ = HIR_UN_BITNOT; }
    ;

%%

/* bison calls yyerror only when its stack cannot grow (parse.error custom sends every syntax
 * error to yyreport_syntax_error below). */
static void yyerror(hir_yyltype *loc, yyscan_t sc, hir_parse_ctx *ctx, const char *msg)
{
    (void)sc;
    (void)msg;
    ctx->failed = true;
    hir_diag_emit(ctx->diag, HIR_ERROR, LOC(*loc), "input is nested too deeply to parse");
}

/* Up to this many expected tokens are listed; beyond it only the token found is named. */
enum { HIR_MAX_EXPECTED = 4 };

/* A syntax error: "expected X, Y or Z, found W" from the parser's state, the names being the
 * token aliases of parser.y. An unknown word at the start of a statement and a file with no
 * program get messages of their own; a bracket left open on an earlier line gets a note. */
static int yyreport_syntax_error(const yypcontext_t *pc, yyscan_t sc, hir_parse_ctx *ctx)
{
    if (ctx->lex_failed)
        return 0;   /* the scanner reported the real problem */
    ctx->failed = true;
    struct hir_lexstate *st = hirl_get_extra(sc);
    const hir_yyltype *loc = yypcontext_location(pc);
    yysymbol_kind_t found = yypcontext_token(pc);
    if (st->stmt_begin < loc->begin && st->level > 0 && hirp_unknown_statement(ctx, st->stmt_begin))
        return 0;
    yysymbol_kind_t exp[HIR_MAX_EXPECTED];
    int n = yypcontext_expected_tokens(pc, exp, HIR_MAX_EXPECTED);
    if (found == YYSYMBOL_YYEOF && n == 1 && exp[0] == YYSYMBOL_HEADER) {
        hir_diag_emit(ctx->diag, HIR_ERROR, LOC(*loc),
                      "expected a program starting with '%%HostIrContainer {', found only %s",
                      ctx->src->len ? "blank lines and comments" : "an empty input");
        return 0;
    }
    /* bison answers 0 both when nothing could follow and when more than HIR_MAX_EXPECTED could */
    /* the aliases of a head and a reference differ in a trailing space ("tensor", "tensor "):
     * the reader sees one word, listed once */
    const char *names[HIR_MAX_EXPECTED];
    int lens[HIR_MAX_EXPECTED], k = 0;
    for (int i = 0; i < n; i++) {
        const char *nm = yysymbol_name(exp[i]);
        int len = (int)strlen(nm);
        while (len > 0 && nm[len - 1] == ' ')
            len--;
        bool dup = false;
        for (int j = 0; j < k; j++)
            dup = dup || (lens[j] == len && !memcmp(names[j], nm, (size_t)len));
        if (!dup) {
            names[k] = nm;
            lens[k++] = len;
        }
    }
    char list[512];
    size_t used = 0;
    list[0] = 0;
    for (int i = 0; i < k && used < sizeof list; i++) {
        const char *sep = i == 0 ? "" : i == k - 1 ? " or " : ", ";
        int w = snprintf(list + used, sizeof list - used, "%s%.*s", sep, lens[i], names[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    const char *what = yysymbol_name(found);
    hir_yyltype at_fast;
    if (found == YYSYMBOL_TENSOR_FAST && st->last_fast) {
        /* what the grammar path reports at this point: its first token, "T12_l___bfloat[" (and
         * no note, that token's '[' being the innermost open bracket there) */
        what = "tensor";
        at_fast = (hir_yyltype){loc->begin, st->last_fast->head_end};
        loc = &at_fast;
    }
    hir_diag_entry *e = n > 0 ? hir_diag_emit(ctx->diag, HIR_ERROR, LOC(*loc),
                                              "expected %s, found %s", list, what)
                              : hir_diag_emit(ctx->diag, HIR_ERROR, LOC(*loc),
                                              "unexpected %s", what);
    uint32_t at = st->depth > 0 ? st->bracket_at[st->depth - 1] : 0;
    if (st->depth > 0 && at < loc->begin && found != YYSYMBOL_TENSOR_FAST && memchr(ctx->src->text + at, '\n', loc->begin - at)) {
        hir_diag_note(ctx->diag, e, hir_parse_loc(ctx, at, at + 1), "'%c' opened here is not closed",
                      ctx->src->text[at]);
    }
    return 0;
}

#include "parser/sdpa_actions.inc"
