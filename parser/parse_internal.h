/* parse_internal.h — what the scanner and the grammar share: the parse context, the scanner
 * state, and the generated token definitions. Not part of the public API. */
#ifndef HIR_PARSE_INTERNAL_H
#define HIR_PARSE_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dialect/hir.h"
#include "parser/parser.h"

#define HIR_MAX_BRACKETS 1024

#include "parser.tab.h"

typedef struct hir_parse_ctx {
    hir_program *prog;
    hir_diag *diag;
    hir_source *src;
    bool lex_failed;             /* the scanner already reported the problem */
    bool failed;                 /* a semantic error was reported */
} hir_parse_ctx;

struct hir_lexstate {
    hir_parse_ctx *ctx;
    size_t offset;               /* byte offset of the next character */
    int level;                   /* indentation level of the current statement */
    int pending_dedents;
    int depth;                   /* open brackets */
    uint32_t bracket_at[HIR_MAX_BRACKETS];
    uint32_t raw_begin;          /* start of a HostUnit block */
    bool need_newline;           /* a token was returned since the last NEWLINE */
    bool at_eof;
    hir_yyltype dedent_loc;
};

hir_loc hir_parse_loc(hir_parse_ctx *ctx, uint32_t begin, uint32_t end);
int hir_keyword_token(const char *s, size_t n, int64_t *aux);

int  hir_lex_init(struct hir_lexstate *st, char *buf, size_t len, yyscan_t *out);
void hir_lex_fini(yyscan_t sc);
int  hir_yylex(YYSTYPE *v, YYLTYPE *l, yyscan_t sc);

#endif
