/* hir-gen — prints generated %HostIrContainer programs: the allgather+GEMM inputs of the
 * stream pass for given sizes, and single GEMMs for benchmarks. A thin driver over
 * passes/gen.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dialect/hir.h"
#include "passes/gen.h"
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
          "  -o FILE         write to FILE instead of stdout\n",
          f);
}

static int parse_int(const char *opt, const char *s, int64_t *v)
{
    char why[128];
    long long x;
    if (hir_opt_int(s, INT64_MIN, INT64_MAX, &x, why, sizeof why)) {
        hir_tool_error("hir-gen", "%s needs an integer, not '%s' (%s)", opt, s, why);
        return -1;
    }
    *v = x;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        hir_tool_error("hir-gen", "no kind given (see hir-gen --help)");
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        hir_tool_version(stdout, "hir-gen");
        return 0;
    }
    hir_gen_params g = {0};
    g.d = 1;
    g.dtype = HIR_DT_BFLOAT;
    g.bias = true;
    if (hir_gen_kind_parse(argv[1], &g.kind)) {
        hir_tool_error("hir-gen", "unknown kind '%s' (expected ag-linear, ag-matmul, linear, matmul, linear-rs, matmul-rs, linear-rs-ref, matmul-rs-ref or tp-mlp)", argv[1]);
        return 2;
    }
    bool have[3] = {false, false, false};
    const char *output = NULL;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        int64_t *dst = !strcmp(a, "--m") ? &g.m : !strcmp(a, "--k") ? &g.k : !strcmp(a, "--n") ? &g.n
                     : !strcmp(a, "--d") ? &g.d : NULL;
        if (dst || !strcmp(a, "--dtype") || !strcmp(a, "-o")) {
            if (i + 1 == argc) {
                hir_tool_error("hir-gen", "%s needs a value", a);
                return 2;
            }
            const char *v = argv[++i];
            if (dst) {
                if (parse_int(a, v, dst))
                    return 2;   /* a usage error */
                if (dst == &g.m) have[0] = true;
                if (dst == &g.k) have[1] = true;
                if (dst == &g.n) have[2] = true;
            } else if (!strcmp(a, "-o")) {
                output = v;
            } else if (!strcmp(v, "bf16")) {
                g.dtype = HIR_DT_BFLOAT;
            } else if (!strcmp(v, "fp16")) {
                g.dtype = HIR_DT_HALF;
            } else if (!strcmp(v, "fp32")) {
                g.dtype = HIR_DT_FLOAT;
            } else {
                hir_tool_error("hir-gen", "unknown --dtype '%s' (expected bf16, fp16 or fp32)", v);
                return 2;
            }
        } else if (!strcmp(a, "--no-bias")) {
            g.bias = false;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else {
            hir_tool_error("hir-gen", "unknown option '%s' (see --help)", a);
            return 2;
        }
    }
    if (!have[0] || !have[1] || !have[2]) {
        hir_tool_error("hir-gen", "--m, --k and --n are required");
        return 2;
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
