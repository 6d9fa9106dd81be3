/* hir-gen — prints generated %HostIrContainer programs: the allgather+GEMM inputs of the
 * stream pass for given sizes, and single GEMMs for benchmarks. A thin driver over
 * passes/gen.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dialect/hir.h"
#include "passes/gen.h"
#include "tools/cli.h"
#include "tools/common.h"
#include "tools/opts.h"
#include "tools/outfile.h"

static void usage(FILE *f)
{
    fputs("usage: hir-gen KIND --m M --k K --n N [--d D] [--dtype bf16|fp16|fp32] [--no-bias] [-o FILE]\n"
          "\n"
          "Prints a %HostIrContainer program in the form the stream pass takes as input.\n"
          "\n"
          "kinds:\n"
          "  ag-linear   A [d, m/d, k] sharded on deviceIdx.x, gathered by a Set into a\n"
          "              stream-parallel [d, m/d, k], then linear with W [n, k] and bias [n]\n"
          "  ag-matmul   the same with matmul and B [k, n] (no bias)\n"
          "  linear      one linear [m, k] x [n, k]^T (+ [n]) on a one-device mesh (d = 1)\n"
          "  matmul      one matmul [m, k] x [k, n] on a one-device mesh (d = 1)\n"
          "  linear-rs   row-parallel linear: A [d, d (stream), m/d, k/d] and W [d, n, k/d] sharded on K\n"
          "              over deviceIdx.x, a stream-parallel partial linear [d, d, m/d, n], then\n"
          "              its sum over devices scattered over rows [d, m/d, n] (no bias)\n"
          "  matmul-rs   the same with matmul and B [d, 1, k/d, n]\n"
          "  linear-rs-ref, matmul-rs-ref\n"
          "              the same inputs and output, computed as A and W gathered and one GEMM\n"
          "              over the whole K per rank: a --check reference that the randomized\n"
          "              product check verifies at any size\n"
          "  tp-mlp      a tensor-parallel MLP block over m tokens, hidden size k, feed-forward\n"
          "              size n: X [d, m/d, k] gathered, linear with W1 [d, n/d, k], GELU, linear\n"
          "              with W2 [d, k, n/d], the partial sums reduce-scattered over rows\n"
          "\n"
          "options:\n"
          "  --version       print hir-gen's version and git commit\n"
          "  --m, --k, --n   GEMM sizes (positive; m divisible by d, k for the -rs kinds, n for tp-mlp)\n"
          "  --d             number of devices (default 1)\n"
          "  --dtype         element type: bf16 (default), fp16 or fp32\n"
          "  --no-bias       ag-linear and linear without the bias input (the -rs kinds have none)\n"
          "  -o FILE         write to FILE instead of stdout\n"
          "  --completion=bash|zsh  print a shell completion script for hir-gen\n"
          "  --help, -h\n"
          "\n"
          "Options take their value as --opt=V or --opt V; -- ends the options.\n",
          f);
}

enum { OPT_M = 1, OPT_K, OPT_N, OPT_D, OPT_DTYPE, OPT_NO_BIAS, OPT_OUTPUT, OPT_HELP, OPT_VERSION,
       OPT_COMPLETION };

/* hir-gen's options (tools/cli.h: --opt=V or --opt V, -- ends them) */
static const hir_cli_option gen_opts[] = {
    {"--m", NULL, HIR_CLI_VALUE, OPT_M, NULL},
    {"--k", NULL, HIR_CLI_VALUE, OPT_K, NULL},
    {"--n", NULL, HIR_CLI_VALUE, OPT_N, NULL},
    {"--d", NULL, HIR_CLI_VALUE, OPT_D, NULL},
    {"--dtype", NULL, HIR_CLI_VALUE, OPT_DTYPE, "bf16 fp16 fp32"},
    {"--no-bias", NULL, HIR_CLI_FLAG, OPT_NO_BIAS, NULL},
    {"-o", NULL, HIR_CLI_VALUE, OPT_OUTPUT, "@file"},
    {"--help", "-h", HIR_CLI_FLAG, OPT_HELP, NULL},
    {"--version", NULL, HIR_CLI_FLAG, OPT_VERSION, NULL},
    {"--completion", NULL, HIR_CLI_VALUE, OPT_COMPLETION, "bash zsh"},
    {NULL, NULL, 0, 0, NULL},
};
static const char gen_kinds[] = "ag-linear ag-matmul linear matmul linear-rs matmul-rs linear-rs-ref matmul-rs-ref tp-mlp";

static int parse_int(const char *opt, const char *s, int64_t *v)
{
    char why[128];
    long long x;
    if (hir_opt_int(s, INT64_MIN, INT64_MAX, &x, why, sizeof why)) {
        hir_tool_usage_error("hir-gen", "%s needs an integer, not '%s' (%s)", opt, s, why);
        return -1;
    }
    *v = x;
    return 0;
}

/* One option of the table with its value; -1 to go on, else the exit status. */
static int gen_option(int id, const char *v, hir_gen_params *g, bool have[3],
                      const char **output)
{
    int64_t *dst = id == OPT_M ? &g->m : id == OPT_K ? &g->k : id == OPT_N ? &g->n
                 : id == OPT_D ? &g->d : NULL;
    if (dst) {
        if (parse_int(hir_cli_find(gen_opts, id)->name, v, dst))
            return 2;
        if (id != OPT_D)
            have[id - OPT_M] = true;
    } else if (id == OPT_OUTPUT) {
        *output = v;
    } else if (id == OPT_DTYPE) {
        if (!strcmp(v, "bf16"))
            g->dtype = HIR_DT_BFLOAT;
        else if (!strcmp(v, "fp16"))
            g->dtype = HIR_DT_HALF;
        else if (!strcmp(v, "fp32"))
            g->dtype = HIR_DT_FLOAT;
        else
            return hir_tool_usage_error("hir-gen", "unknown --dtype '%s' (expected bf16, fp16 or fp32)", v);
    } else if (id == OPT_NO_BIAS) {
        g->bias = false;
    } else if (id == OPT_HELP) {
        usage(stdout);
        return 0;
    } else if (id == OPT_VERSION) {
        hir_tool_version(stdout, "hir-gen");
        return 0;
    } else if (id == OPT_COMPLETION) {
        if (hir_cli_completion(stdout, "hir-gen", gen_opts, NULL, gen_kinds, v))
            return hir_tool_usage_error("hir-gen", "--completion takes bash or zsh, not '%s'", v);
        return 0;
    }
    return -1;
}

/* The command line into g: -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, hir_gen_params *g, bool have[3], const char **output)
{
    hir_cli cl;
    hir_cli_init(&cl, "hir-gen", gen_opts, argc, argv);
    const char *kind = NULL, *v;
    int id, rc;
    while ((id = hir_cli_next(&cl, &v)) != HIR_CLI_END) {
        if (id == HIR_CLI_USAGE)
            return 2;
        if (id == HIR_CLI_OPERAND && kind)
            return hir_tool_usage_error("hir-gen", "more than one kind given ('%s' and '%s')", kind, v);
        if (id == HIR_CLI_OPERAND)
            kind = v;
        else if ((rc = gen_option(id, v, g, have, output)) >= 0)
            return rc;
    }
    if (!kind)
        return hir_tool_usage_error("hir-gen", "no kind given");
    if (hir_gen_kind_parse(kind, &g->kind))
        return hir_tool_usage_error("hir-gen", "unknown kind '%s' (expected ag-linear, ag-matmul, linear, matmul, linear-rs, matmul-rs, linear-rs-ref, matmul-rs-ref or tp-mlp)", kind);
    return -1;
}

int main(int argc, char **argv)
{
    hir_gen_params g = {0};
    g.d = 1;
    g.dtype = HIR_DT_BFLOAT;
    g.bias = true;
    bool have[3] = {false, false, false};
    const char *output = NULL;
    int code = parse_args(argc, argv, &g, have, &output);
    if (code >= 0)
        return code;
    if (!have[0] || !have[1] || !have[2]) {
        return hir_tool_usage_error("hir-gen", "--m, --k and --n are required");
    }
    /* matmul has no bias; a row-parallel linear adds its bias once, after the reduction, so
     * its partial GEMMs take none */
    if (g.kind != HIR_GEN_AG_LINEAR && g.kind != HIR_GEN_LINEAR)
        g.bias = false;
    hir_program *p;
    hir_diag tool;
    hir_diag_init(&tool, stderr);
    hir_diag_set_prefix(&tool, "hir-gen");
    int grc = hir_gen_program(&g, &p, &tool);
    hir_diag_fini(&tool);
    if (grc) {
        return grc == HIR_ENOMEM ? 1 : 2;   /* sizes the generator cannot make: a usage error */
    }
    /* printed into memory, then written with every byte checked; -o FILE is replaced only by
     * a complete output (tools/outfile.c) */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        hir_tool_error("hir-gen", "out of memory");
        hir_program_free(p);
        return 1;
    }
    hir_program_print(p, f);
    int rc = 0;
    char err[256];
    if (fclose(f)) {
        hir_tool_error("hir-gen", "out of memory");
        rc = 1;
    } else if (hir_tool_write_output(output, buf, len, err, sizeof err)) {
        hir_tool_error("hir-gen", "%s", err);
        rc = 1;
    }
    free(buf);
    hir_program_free(p);
    return rc;
}
