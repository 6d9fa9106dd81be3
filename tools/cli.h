/* cli.h — the one command-line convention of hir-opt, hir-run, hir-gen and hir-reduce: each
 * tool declares its options in one table, and this parser, the usage errors and the shell
 * completion scripts (--completion=bash|zsh) all come from that table.
 *
 * The convention (getopt_long's, without abbreviations):
 *   --opt=V and --opt V        an option that takes a value, either way
 *   --opt[=V]                  an option whose value is optional takes it only after '='
 *   -o FILE, -o=FILE           the short spellings a table lists (-o, -h, -v, -np) likewise
 *   --                         ends the options: every word after it is an operand
 *   -                          an operand (standard input where a tool reads one)
 * An option is spelt in full; a word that starts with '-' and is no option is a usage error
 * with the closest option suggested, unless the tool takes such words itself (hir-opt's
 * --PASS[=VALUE], HIR_CLI_OTHER). */
#ifndef HIR_TOOLS_CLI_H
#define HIR_TOOLS_CLI_H

#include <stdbool.h>
#include <stdio.h>

typedef enum hir_cli_arg {
    HIR_CLI_FLAG,                /* no value: --timing */
    HIR_CLI_VALUE,               /* a value, after '=' or as the next word: --seed=1, --seed 1 */
    HIR_CLI_OPTIONAL,            /* a value only after '=': --check, --check=REF.hir */
} hir_cli_arg;

typedef struct hir_cli_option {
    const char *name;            /* as typed: "--streams", "-o", "-np" */
    const char *alias;           /* another spelling ("--np", "-h"), or NULL */
    hir_cli_arg arg;
    int id;                      /* what hir_cli_next returns for it (> 0) */
    /* how a shell completes the value: "word word ..." (one of them), "@file", "@dir",
     * or NULL (anything the user types: a number, NAME=V) */
    const char *values;
} hir_cli_option;

/* What hir_cli_next returns besides an option's id. */
enum {
    HIR_CLI_END = 0,             /* no word left */
    HIR_CLI_OPERAND = -1,        /* a word that is no option (or any word after "--") */
    HIR_CLI_OTHER = -2,          /* "--word[=value]" the table does not have (only when the
                                  * parser was told to pass such words to the tool) */
    HIR_CLI_USAGE = -3,          /* a usage error, printed: exit status 2 */
};

typedef struct hir_cli {
    const char *tool;            /* "hir-run": the prefix of usage errors */
    const hir_cli_option *opts;  /* ended by an entry with name NULL */
    int argc;
    char **argv;
    int next;                    /* the index of the next word (starts at 1) */
    bool operands_only;          /* "--" seen */
    bool pass_other;             /* unknown "--word" goes back as HIR_CLI_OTHER */
    const char *word;            /* the word (or, for "--name V", the option word) just read */
} hir_cli;

void hir_cli_init(hir_cli *c, const char *tool, const hir_cli_option *opts, int argc,
                  char **argv);
/* The next option (its id, *value its value or NULL), operand (*value the word), HIR_CLI_OTHER
 * (*value the whole word), HIR_CLI_END, or HIR_CLI_USAGE after printing a one-line usage error
 * ("TOOL: error: unknown option '--x'; did you mean '--y'? (see TOOL --help)"). */
int hir_cli_next(hir_cli *c, const char **value);
/* The spelling of the table closest to the option word w ("--word" or "--word=value"), at
 * most two edits away, or NULL: the did-you-mean of an unknown option. */
const char *hir_cli_suggest(const hir_cli_option *opts, const char *w);
/* The option of `id` in the table (its name for messages), or NULL. */
const hir_cli_option *hir_cli_find(const hir_cli_option *opts, int id);

/* --completion=SHELL: a completion script for bash or zsh of `tool` from its table, written
 * to f. `extra` are further long options with no table entry (hir-opt's --PASS flags), or
 * NULL; `operands` is how operands complete: "@file", or "word word ..." for a first operand
 * that names a kind (hir-gen). 0, or -1 for another shell. "list" prints every option
 * spelling, one a line (tests hold --help to it). */
int hir_cli_completion(FILE *f, const char *tool, const hir_cli_option *opts,
                       const char *const *extra, const char *operands, const char *shell);

#endif
