/* hir-run — run a %HostIrContainer program on one or more ranks (runner/job/job.h does the work):
 * parses flags, starts ranks (-np N through the system mpirun), and turns the job's outcome
 * into an exit code. A rank that fails while its peers may wait on it takes the job down. */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dialect/hir.h"
#include "runner/boot/boot.h"
#include "runner/job/job.h"
#include "runner/registry/registry.h"
#include "tools/cli.h"
#include "tools/common.h"
#include "tools/opts.h"
#include "tools/share.h"

static const char usage[] =
    "usage: hir-run [options] PROGRAM.hir\n"
    "       mpirun -np N hir-run [options] PROGRAM.hir\n"
    "\n"
    "Runs a %HostIrContainer program, one rank per process (see docs/runner.md), and on\n"
    "success ends with one summary line on stderr (backend, ranks, devices, runs, wall time,\n"
    "outputs saved and checked). Options take their value as --opt=V or --opt V (--check and\n"
    "--bench only after '='); -- ends the options.\n"
    "\n"
    "  -np N                  start N ranks through the system mpirun\n"
    "  --device=cpu|cuda      backend (default: cuda when a GPU is visible, else cpu)\n"
    "  --streams=N            value of numberOfStreams (default 4)\n"
    "  --topology             print each rank's node, local rank, host and GPU, and exit\n"
    "                         (no PROGRAM needed)\n"
    "  --simulate-nodes=N     count N blocks of consecutive ranks as N nodes (testing on one\n"
    "                         node; N must divide the number of ranks)\n"
    "  --timeout=SEC          longest wait on a peer before the job fails (default 300);\n"
    "                         it does not bound a rank computing on its own\n"
    "  --max-loop-work=N      refuse a loop whose trips times those of the loops around it\n"
    "                         exceed N, before its first iteration (default 2^30)\n"
    "  --inputs=KIND|DIR      random (default), zeros, ones, arange, or a directory of .npy\n"
    "                         files T0.npy (global) or T0.rank<r>.npy (this rank's shard)\n"
    "  --seed=S               seed of --inputs=random (default 0)\n"
    "  --bind NAME=V          value of a free scalar (symbolic extent, scalar input)\n"
    "  --container=N          PROGRAM is a log: run its N-th %HostIrContainer (1-based);\n"
    "                         without it the log must hold exactly one\n"
    "  --save-outputs=DIR     write each output as DIR/T<n>.rank<r>.npy\n"
    "  --raw-bf16             save bf16 as raw uint16 bits instead of float32\n"
    "  --check[=REF.hir]      rerun REF (default: the program) on the CPU backend with the\n"
    "                         same inputs and compare every output; prints check: PASS|FAIL\n"
    "  --check-mode=M         auto (default): GEMMs of at least 2^30 FLOP are verified by a\n"
    "                         randomized product check (Freivalds), smaller ones computed;\n"
    "                         full: compute every GEMM; randomized: verify every GEMM\n"
    "  --check-vectors=N      random vectors per randomized check (1-8, default 2)\n"
    "  --vary-inputs          alternate the inputs and the inputs x 2 run to run and fill the\n"
    "                         outputs with NaN before each run (untimed, in place), so --check\n"
    "                         verifies the last run and nothing left from an earlier one\n"
    "  --iters=N              run the program N times back to back (default 1); with\n"
    "                         --bench, the number of timed iterations (default 50)\n"
    "  --p2p-protocol=get|put CUDA-IPC P2P protocol (default get)\n"
    "  --nccl-p2p=nccl|host-staged  how the CUDA device runs P2P with backend=NCCL: through\n"
    "                         NCCL (default), or host-staged: copy to host, send over MPI,\n"
    "                         copy back (for ranks sharing one GPU, which NCCL refuses)\n"
    "  --gemm-tune=off|on|FILE  CUDA device: off (default) takes cuBLASLt's first heuristic\n"
    "                         choice; on times up to 16 candidates on the real buffers at a\n"
    "                         GEMM shape's first use and keeps the fastest; FILE (a path with\n"
    "                         a '/' or a '.') also reads winners from FILE and appends new ones\n"
    "  --comm-priority=default|high  CUDA device: high runs communication on streams of the\n"
    "                         device's greatest priority, so that NCCL's kernels get SMs\n"
    "                         ahead of the GEMMs (default: on the program's own streams)\n"
    "  --ipc-copy=memcpy|overlap  CUDA device: how CUDA-IPC transfers copy: cudaMemcpyAsync\n"
    "                         (default), or a batched copy with the driver's hint to\n"
    "                         overlap with compute (leave the SMs to the GEMMs beside it;\n"
    "                         not with --graph, which cannot capture it)\n"
    "  --kernel GROUP=FILE    kernel for LaunchKernel group GROUP (--device=cuda)\n"
    "  --bench                time the program: --warmup runs, then --iters timed ones, a\n"
    "                         barrier and CUDA events (clock on cpu) around each; reports\n"
    "                         the slowest rank's mean/min/max/stddev, TFLOP/s of the GEMMs\n"
    "                         and host time per statement (docs/benchmarks.md)\n"
    "  --warmup=N             untimed runs before the timed ones (default 5)\n"
    "  --bench-json=FILE      also write the --bench results as JSON (implies --bench)\n"
    "  --bench-plot=FILE.png|FILE.svg  also draw them (share/hir/plot_bench.py, matplotlib;\n"
    "                         implies --bench)\n"
    "  --graph                with --bench: capture one run in a CUDA graph and time its\n"
    "                         replays (falls back to eager runs, saying why)\n"
    "  --bench-bare           with --bench (eager): also time a loop that replays, with bare\n"
    "                         cuLaunchKernel calls, the kernel launches of one recorded run\n"
    "                         (same warm-ups and iterations); reports eager / bare\n"
    "  --no-preresolve        resolve every element-wise statement on every execution (the\n"
    "                         CUDA backend otherwise keeps each one's launch; for measuring)\n"
    "  --trace=FILE.json      Chrome/Perfetto trace of the last run: one track per (rank,\n"
    "                         stream); open in ui.perfetto.dev or chrome://tracing\n"
    "  --verbose, -v          trace every statement to stderr: each rank's lines together,\n"
    "                         in rank order, at the end of the run\n"
    "  --progress=auto|always|never  a progress line on stderr (ranks, iteration, elapsed)\n"
    "                         once a run has taken 2 s (auto: when stderr is a terminal)\n"
    "  --progress-after=SEC   show it after SEC seconds instead of 2\n"
    "  --color=auto|always|never  colour diagnostics (auto: stderr is a terminal, TERM is\n"
    "                         not 'dumb' and NO_COLOR is unset)\n"
    "  --quiet, -q            no summary line at the end of a run that went well, no note\n"
    "                         of ranks time-sliced on a shared GPU without MPS\n"
    "  --completion=bash|zsh  print a shell completion script for hir-run\n"
    "  --version, --help, -h\n";

/* --bench-plot: python3 share/hir/plot_bench.py JSON -o FILE (rank 0, after the run; the
 * script is found next to this executable, tools/share.h). 0, or -1 after saying why on
 * stderr. */
static int draw_plot(const char *json, const char *plot)
{
    char script[PATH_MAX + 64];
    if (hir_tool_share_path("plot_bench.py", script, sizeof script) != 0) {
        fprintf(stderr, "hir-run: --bench-plot: the plot script %s is missing (hir-run looks "
                "for it in share/hir next to its own folder, where `cmake --install` puts it)\n",
                script[0] ? script : "plot_bench.py");
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "hir-run: --bench-plot: fork: %s\n", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        execlp("python3", "python3", script, json, "-o", plot, (char *)NULL);
        fprintf(stderr, "hir-run: --bench-plot: cannot run python3: %s\n", strerror(errno));
        _exit(127);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "hir-run: --bench-plot: %s could not draw %s (see above)\n",
                script, plot);
        return -1;
    }
    printf("bench: plot %s\n", plot);
    return 0;
}

/* A bad command line: one line on stderr, exit status 2 (tools/common.c) */
/* the index of x in the NULL-ended list words, or -1 */
static int word_index(const char *x, const char *const *words)
{
    for (int k = 0; words[k]; k++)
        if (!strcmp(x, words[k]))
            return k;
    return -1;
}

static int bad(const char *what, const char *arg)
{
    if (!*arg)
        return hir_tool_usage_error("hir-run", "%s", what);
    return hir_tool_usage_error("hir-run", "%s: '%s'", what, arg);
}

/* --device naming no backend the registry knows */
static int bad_device(const char *dev)
{
    char names[128] = "--device is ";
    size_t at = strlen(names);
    hir_registry_names(names + at, sizeof names - at);
    return bad(names, dev);
}

/* the devices the backend of --device (or the default one) sees; 0 on the host */
static int devices_seen(const char *dev)
{
    return hir_registry_device_count(dev ? hir_registry_find(dev) : hir_registry_default());
}

/* a numeric value outside its range (tools/opts.c says which range) */
static int bad_num(const char *opt, const char *arg, const char *why)
{
    return hir_tool_usage_error("hir-run", "%s needs %s: '%s'", opt, why, arg);
}

enum {
    OPT_NP = 1, OPT_TOPOLOGY, OPT_SIM_NODES, OPT_DEVICE, OPT_TIMEOUT, OPT_VERBOSE, OPT_STREAMS,
    OPT_SEED, OPT_INPUTS, OPT_BIND, OPT_CONTAINER, OPT_SAVE, OPT_RAW_BF16, OPT_ITERS, OPT_KERNEL,
    OPT_CHECK, OPT_P2P, OPT_NCCL_P2P, OPT_GEMM_TUNE, OPT_CHECK_MODE, OPT_CHECK_VECTORS,
    OPT_VARY, OPT_BENCH_JSON, OPT_BENCH_PLOT, OPT_BENCH, OPT_GRAPH, OPT_BENCH_BARE,
    OPT_NO_RESOLVE, OPT_WARMUP, OPT_TRACE, OPT_COLOR, OPT_PROGRESS, OPT_PROGRESS_AFTER,
    OPT_QUIET, OPT_HELP, OPT_VERSION, OPT_COMPLETION, OPT_COMM_PRIORITY, OPT_IPC_COPY,
    OPT_MAX_LOOP_WORK,
};

/* hir-run's options (tools/cli.h: --opt=V or --opt V, -- ends them; --check and --bench take
 * their optional value only after '='). -np N is mpirun's spelling, kept with --np. */
static const hir_cli_option run_opts[] = {
    {"-np", "--np", HIR_CLI_VALUE, OPT_NP, NULL},
    {"--device", NULL, HIR_CLI_VALUE, OPT_DEVICE, "cpu cuda"},
    {"--streams", NULL, HIR_CLI_VALUE, OPT_STREAMS, NULL},
    {"--topology", NULL, HIR_CLI_FLAG, OPT_TOPOLOGY, NULL},
    {"--simulate-nodes", NULL, HIR_CLI_VALUE, OPT_SIM_NODES, NULL},
    {"--timeout", NULL, HIR_CLI_VALUE, OPT_TIMEOUT, NULL},
    {"--max-loop-work", NULL, HIR_CLI_VALUE, OPT_MAX_LOOP_WORK, NULL},
    {"--inputs", NULL, HIR_CLI_VALUE, OPT_INPUTS, "random zeros ones arange"},
    {"--seed", NULL, HIR_CLI_VALUE, OPT_SEED, NULL},
    {"--bind", NULL, HIR_CLI_VALUE, OPT_BIND, NULL},
    {"--container", NULL, HIR_CLI_VALUE, OPT_CONTAINER, NULL},
    {"--save-outputs", NULL, HIR_CLI_VALUE, OPT_SAVE, "@dir"},
    {"--raw-bf16", NULL, HIR_CLI_FLAG, OPT_RAW_BF16, NULL},
    {"--check", NULL, HIR_CLI_OPTIONAL, OPT_CHECK, "@file"},
    {"--check-mode", NULL, HIR_CLI_VALUE, OPT_CHECK_MODE, "auto full randomized"},
    {"--check-vectors", NULL, HIR_CLI_VALUE, OPT_CHECK_VECTORS, NULL},
    {"--vary-inputs", NULL, HIR_CLI_FLAG, OPT_VARY, NULL},
    {"--iters", NULL, HIR_CLI_VALUE, OPT_ITERS, NULL},
    {"--p2p-protocol", NULL, HIR_CLI_VALUE, OPT_P2P, "get put"},
    {"--nccl-p2p", NULL, HIR_CLI_VALUE, OPT_NCCL_P2P, "nccl host-staged"},
    {"--gemm-tune", NULL, HIR_CLI_VALUE, OPT_GEMM_TUNE, "off on"},
    {"--comm-priority", NULL, HIR_CLI_VALUE, OPT_COMM_PRIORITY, "default high"},
    {"--ipc-copy", NULL, HIR_CLI_VALUE, OPT_IPC_COPY, "memcpy overlap"},
    {"--kernel", NULL, HIR_CLI_VALUE, OPT_KERNEL, NULL},
    {"--bench", NULL, HIR_CLI_OPTIONAL, OPT_BENCH, NULL},
    {"--warmup", NULL, HIR_CLI_VALUE, OPT_WARMUP, NULL},
    {"--bench-json", NULL, HIR_CLI_VALUE, OPT_BENCH_JSON, "@file"},
    {"--bench-plot", NULL, HIR_CLI_VALUE, OPT_BENCH_PLOT, "@file"},
    {"--graph", NULL, HIR_CLI_FLAG, OPT_GRAPH, NULL},
    {"--bench-bare", NULL, HIR_CLI_FLAG, OPT_BENCH_BARE, NULL},
    {"--no-preresolve", NULL, HIR_CLI_FLAG, OPT_NO_RESOLVE, NULL},
    {"--trace", NULL, HIR_CLI_VALUE, OPT_TRACE, "@file"},
    {"--verbose", "-v", HIR_CLI_FLAG, OPT_VERBOSE, NULL},
    {"--quiet", "-q", HIR_CLI_FLAG, OPT_QUIET, NULL},
    {"--progress", NULL, HIR_CLI_VALUE, OPT_PROGRESS, "auto always never"},
    {"--progress-after", NULL, HIR_CLI_VALUE, OPT_PROGRESS_AFTER, NULL},
    {"--color", NULL, HIR_CLI_VALUE, OPT_COLOR, "auto always never"},
    {"--help", "-h", HIR_CLI_FLAG, OPT_HELP, NULL},
    {"--version", NULL, HIR_CLI_FLAG, OPT_VERSION, NULL},
    {"--completion", NULL, HIR_CLI_VALUE, OPT_COMPLETION, "bash zsh"},
    {NULL, NULL, 0, 0, NULL},
};

/* What the command line asked for, beyond hir_run_options (which points into it). */
typedef struct cli {
    hir_run_options o;
    hir_run_binding binds[64];
    char bind_names[64][128];   /* the names of --bind, owned here: nothing to free */
    const char *kernels[64];
    long long np, sim_nodes;
    int bench, iters_given, warmup_given, topology, progress, quiet;
    const char *bench_plot;
    hir_color_mode color;
} cli;

/* The options of one family each: -1 when `id` is not theirs, 0 when taken, else the exit
 * code of a usage error. x is the option's value (NULL for a flag). */
static int flag_launch(cli *c, int id, const char *x)
{
    char why[128];
    switch (id) {
    case OPT_NP:
        return hir_opt_int(x, 1, 1 << 20, &c->np, why, sizeof why) ? bad_num("-np", x, why) : 0;
    case OPT_TOPOLOGY:
        c->topology = 1;
        return 0;
    case OPT_SIM_NODES:
        return hir_opt_int(x, 1, 1 << 20, &c->sim_nodes, why, sizeof why)
                   ? bad_num("--simulate-nodes", x, why) : 0;
    case OPT_DEVICE:
        c->o.device = x;
        return 0;
    case OPT_TIMEOUT:
        return hir_opt_double(x, 0, 1e7, &c->o.timeout, why, sizeof why)
                   ? bad_num("--timeout", x, why) : 0;
    case OPT_VERBOSE:
        c->o.verbose = 1;
        return 0;
    case OPT_QUIET:
        c->quiet = 1;
        c->o.quiet = 1;
        return 0;
    default:
        return -1;
    }
}

static int flag_bind(cli *c, const char *x)
{
    hir_run_options *o = &c->o;
    long long v;
    char why[128];
    const char *eq = strchr(x, '=');
    if (!eq || eq == x || hir_opt_int(eq + 1, LLONG_MIN, LLONG_MAX, &v, why, sizeof why) ||
        o->nbinds == 64 || eq - x >= (ptrdiff_t)sizeof c->bind_names[0])
        return bad("--bind needs NAME=INTEGER", x);
    snprintf(c->bind_names[o->nbinds], sizeof c->bind_names[0], "%.*s", (int)(eq - x), x);
    for (int k = 0; k < o->nbinds; k++)
        if (!strcmp(c->bind_names[k], c->bind_names[o->nbinds]))
            return bad("--bind gives this name a second value", x);
    c->binds[o->nbinds].name = c->bind_names[o->nbinds];
    c->binds[o->nbinds++].value = v;
    return 0;
}

/* an integer option in lo..hi into *out (the name for the message from the table) */
static int int_opt(int id, const char *x, long long lo, long long hi, long long *out)
{
    char why[128];
    if (hir_opt_int(x, lo, hi, out, why, sizeof why))
        return bad_num(hir_cli_find(run_opts, id)->name, x, why);
    return 0;
}

static int flag_program(cli *c, int id, const char *x)
{
    hir_run_options *o = &c->o;
    long long v;
    switch (id) {
    case OPT_STREAMS:
        if (int_opt(id, x, 1, INT_MAX, &v))
            return 2;
        o->num_streams = (int)v;
        return 0;
    case OPT_MAX_LOOP_WORK:
        if (int_opt(id, x, 1, LLONG_MAX, &v))
            return 2;
        o->max_loop_work = (int64_t)v;
        return 0;
    case OPT_SEED:
        if (int_opt(id, x, 0, LLONG_MAX, &v))
            return 2;
        o->seed = (uint64_t)v;
        return 0;
    case OPT_INPUTS:
        if (hir_data_kind_lookup(x, &o->data) == 0) {
            o->inputs = HIR_INPUTS_GENERATED;
        } else {
            o->inputs = HIR_INPUTS_DIR;
            o->inputs_dir = x;
        }
        return 0;
    case OPT_BIND:
        return flag_bind(c, x);
    case OPT_CONTAINER:
        if (int_opt(id, x, 1, INT_MAX, &v))
            return 2;
        o->container = (int)v;
        return 0;
    case OPT_SAVE:
        o->save_dir = x;
        return 0;
    case OPT_RAW_BF16:
        o->raw_bf16 = 1;
        return 0;
    case OPT_ITERS:
        if (int_opt(id, x, 1, INT_MAX, &v))
            return 2;
        o->iters = (int)v;
        c->iters_given = 1;
        return 0;
    case OPT_KERNEL:
        if (o->nkernels == 64)
            return bad("too many --kernel", x);
        c->kernels[o->nkernels++] = x;
        return 0;
    default:
        return -1;
    }
}

/* --gemm-tune=off|on|FILE */
static int flag_gemm_tune(cli *c, const char *x)
{
    hir_diag ge = {0};
    if (hir_gemm_tune_check(x, &ge)) {
        int rc = hir_tool_usage_error("hir-run", "%s", hir_diag_last_error(&ge));
        hir_diag_fini(&ge);
        return rc;
    }
    c->o.gemm_tune = x;
    return 0;
}

static int flag_check(cli *c, int id, const char *x)
{
    hir_run_options *o = &c->o;
    long long v;
    char why[128];
    int k;
    switch (id) {
    case OPT_CHECK:
        o->check = 1;
        o->check_ref = x;     /* NULL: the program itself */
        return 0;
    case OPT_P2P:
        if ((k = word_index(x, (const char *const[]){"get", "put", NULL})) < 0)
            return bad("--p2p-protocol is get or put", x);
        o->p2p_protocol = k ? HIR_P2P_PUT : HIR_P2P_GET;
        return 0;
    case OPT_NCCL_P2P:
        if ((o->p2p_host_staged = word_index(x, (const char *const[]){"nccl", "host-staged",
                                                                       NULL})) < 0)
            return bad("--nccl-p2p is nccl or host-staged", x);
        return 0;
    case OPT_GEMM_TUNE:
        return flag_gemm_tune(c, x);
    case OPT_COMM_PRIORITY:
        if ((o->comm_priority = word_index(x, (const char *const[]){"default", "high",
                                                                    NULL})) < 0)
            return bad("--comm-priority is default or high", x);
        return 0;
    case OPT_IPC_COPY:
        if ((o->ipc_copy_overlap = word_index(x, (const char *const[]){"memcpy", "overlap",
                                                                       NULL})) < 0)
            return bad("--ipc-copy is memcpy or overlap", x);
        return 0;
    case OPT_CHECK_MODE:
        /* in the order of hir_run_options.check_mode: auto, full, randomized */
        if ((k = word_index(x, (const char *const[]){"auto", "full", "randomized", NULL})) < 0)
            return bad("--check-mode is auto, full or randomized", x);
        o->check_mode = k;
        return 0;
    case OPT_CHECK_VECTORS:
        if (hir_opt_int(x, 1, 8, &v, why, sizeof why))
            return bad("--check-vectors needs a count from 1 to 8", x);
        o->check_vectors = (int)v;
        return 0;
    case OPT_VARY:
        o->vary_inputs = 1;
        return 0;
    default:
        return -1;
    }
}

static int flag_bench(cli *c, int id, const char *x)
{
    hir_run_options *o = &c->o;
    long long v;
    switch (id) {
    case OPT_BENCH_JSON:
        o->bench_json = x;
        return 0;
    case OPT_BENCH_PLOT: {
        size_t n = strlen(x);
        if (n < 5 || (strcmp(x + n - 4, ".png") && strcmp(x + n - 4, ".svg")))
            return bad("--bench-plot needs a FILE.png or FILE.svg", x);
        c->bench_plot = x;
        return 0;
    }
    case OPT_BENCH:         /* --bench=N: N timed iterations */
        if (!x) {
            c->bench = 1;
            return 0;
        }
        if (int_opt(id, x, 1, INT_MAX, &v))
            return 2;
        o->bench = (int)v;
        return 0;
    case OPT_GRAPH:
        o->graph = 1;
        return 0;
    case OPT_BENCH_BARE:
        o->bench_bare = 1;
        return 0;
    case OPT_NO_RESOLVE:
        o->no_resolve = 1;
        return 0;
    case OPT_WARMUP:
        if (int_opt(id, x, 0, INT_MAX, &v))
            return 2;
        o->warmup = (int)v;
        c->warmup_given = 1;
        return 0;
    case OPT_TRACE:
        o->trace_json = x;
        return 0;
    default:
        return -1;
    }
}

static int flag_output(cli *c, int id, const char *x)
{
    char why[128];
    hir_color_mode m;
    int k;
    switch (id) {
    case OPT_COLOR:
        if (hir_tool_color_parse(x, &m))
            return bad("--color takes auto, always or never", x);
        c->color = m;
        return 0;
    case OPT_PROGRESS:
        if ((k = word_index(x, (const char *const[]){"never", "always", "auto", NULL})) < 0)
            return bad("--progress takes auto, always or never", x);
        c->progress = k == 2 ? -1 : k;
        return 0;
    case OPT_PROGRESS_AFTER:
        return hir_opt_double(x, 0, 1e7, &c->o.progress_after, why, sizeof why)
                   ? bad_num("--progress-after", x, why) : 0;
    case OPT_HELP:
        fputs(usage, stdout);
        return 0;
    case OPT_VERSION:
        hir_tool_version(stdout, "hir-run");
        return 0;
    case OPT_COMPLETION:
        if (hir_cli_completion(stdout, "hir-run", run_opts, NULL, "@file", x))
            return bad("--completion takes bash or zsh", x);
        return 0;
    default:
        return -1;
    }
}

/* The command line into c: -1 to go on, else the exit code (0 after --help, --version or
 * --completion). */
static int parse_args(cli *c, int argc, char **argv)
{
    static int (*const families[])(cli *, int, const char *) = {
        flag_launch, flag_program, flag_check, flag_bench, flag_output,
    };
    hir_cli cl;
    hir_cli_init(&cl, "hir-run", run_opts, argc, argv);
    const char *x;
    int id;
    while ((id = hir_cli_next(&cl, &x)) != HIR_CLI_END) {
        if (id == HIR_CLI_USAGE)
            return 2;
        if (id == HIR_CLI_OPERAND) {
            if (c->o.program)
                return bad("more than one program given", x);
            c->o.program = x;
            continue;
        }
        int rc = -1;
        for (size_t f = 0; rc < 0 && f < sizeof families / sizeof families[0]; f++)
            rc = families[f](c, id, x);
        if (rc > 0 || id == OPT_HELP || id == OPT_VERSION || id == OPT_COMPLETION)
            return rc;
    }
    return -1;
}

/* What the flags imply for one another, once all are read: -1 to go on, else the exit code. */
static int finish_args(cli *c)
{
    hir_run_options *o = &c->o;
    if (!o->program && !c->topology)
        return bad("no program given", "");
    if (c->topology && o->device && !hir_registry_find(o->device))
        return bad_device(o->device);
    /* standard input can be read once, by one rank (job_load refuses it under mpirun too) */
    bool prog_stdin = o->program && !strcmp(o->program, "-");
    bool ref_stdin = o->check_ref && !strcmp(o->check_ref, "-");
    if (prog_stdin && ref_stdin)
        return bad("the program and --check=- cannot both be read from standard input: give "
                   "one of them as a file", "");
    if (c->np > 1 && (prog_stdin || ref_stdin))
        return bad(prog_stdin ? "-np: the ranks cannot all read the program from standard "
                   "input ('-'): give it as a file"
                   : "-np: the ranks cannot all read --check=- from standard input: give the "
                   "reference as a file", "");
    if (o->graph && o->ipc_copy_overlap)
        return bad("--ipc-copy=overlap cannot be used with --graph: a CUDA graph cannot capture "
                   "the batched copy it issues (use --ipc-copy=memcpy)", "");
    if ((c->bench || o->bench_json || c->bench_plot || o->graph || o->bench_bare) && !o->bench)
        o->bench = c->iters_given ? o->iters : 50;
    if (o->bench && !c->warmup_given)
        o->warmup = 5;
    o->color = hir_tool_use_color(c->color, stderr);
    /* auto: stderr is a terminal here, or was one for the hir-run -np that started us */
    o->progress = c->progress >= 0 ? c->progress
                  : isatty(2) || (hir_launch_is_child() && getenv(HIR_LAUNCH_TTY));
    o->binds = c->binds;
    o->kernels = c->kernels;
    return -1;
}

/* The ranks: under -np this process starts the launcher and returns its exit code (else -1 to
 * go on); then the bootstrap, checked against -np and --simulate-nodes. */
static int start_ranks(cli *c, int *argc, char ***argv, hir_boot **boot, hir_diag *e)
{
    if (c->np) {
        int code = 0;
        int rc = hir_launch_local((int)c->np, *argc, *argv, &code, e);
        if (rc == 0) {
            /* 1: a rank said why; else what mpirun's report (hidden by --quiet) would say */
            if (code > 128)
                hir_tool_error("hir-run", "a rank was killed by signal %d (%s)", code - 128,
                               strsignal(code - 128));
            else if (code > 1)
                hir_tool_error("hir-run", "a rank ended with exit status %d", code);
            return code;
        }
        if (rc < 0) {
            hir_diag_flush(e);
            return 1;
        }
    }
    if (hir_boot_init(argc, argv, c->o.timeout, boot, e)) {
        hir_diag_flush(e);
        return 1;
    }
    int rank = hir_boot_rank(*boot), size = hir_boot_size(*boot);
    if (c->np && c->np != size) {
        if (rank == 0)
            fprintf(stderr, "hir-run: -np %lld, but the launcher started %d rank%s\n", c->np,
                    size, size == 1 ? "" : "s");
        hir_boot_fini(*boot);
        return 1;
    }
    if (c->sim_nodes && hir_boot_simulate_nodes(*boot, (int)c->sim_nodes, e)) {
        if (rank == 0)          /* every rank comes to the same verdict */
            hir_diag_flush(e);
        hir_boot_fini(*boot);
        return 1;
    }
    return -1;
}

/* --topology: print where every rank runs, then end. */
static int print_topology(cli *c, hir_boot *boot, hir_diag *e)
{
    /* the GPU hir_run_job would pick: local rank modulo the GPUs this rank sees */
    int ngpu = devices_seen(c->o.device);
    int gpu = ngpu > 0 ? hir_boot_local_rank(boot) % ngpu : -1;
    int rc = hir_boot_print_topology(boot, gpu, stdout, e);
    if (rc) {
        hir_diag_set_origin(e->last, "rank %d", hir_boot_rank(boot));
        hir_diag_flush(e);
    }
    hir_boot_fini(boot);
    return rc ? 1 : 0;
}

/* --bench-plot without --bench-json: the timings go through a temporary file on rank 0. */
static void plot_tempfile(cli *c, char *plot_json, size_t n)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(plot_json, n, "%s/hir-run-bench.XXXXXX",
             tmp && *tmp && strlen(tmp) < 40 ? tmp : "/tmp");
    int fd = mkstemp(plot_json);
    if (fd < 0) {
        fprintf(stderr, "hir-run: --bench-plot: cannot make a temporary file: %s\n",
                strerror(errno));
        plot_json[0] = 0;
    } else {
        close(fd);
        c->o.bench_json = plot_json;
    }
}

/* The exit code of a job's outcome; a failed rank of several takes the job down. The job has
 * printed its messages (hir_run_job). */
static int job_exit(hir_run_status st, hir_boot *boot)
{
    int size = hir_boot_size(boot);
    switch (st) {
    case HIR_RUN_OK:
        hir_boot_fini(boot);
        return 0;
    case HIR_RUN_CHECK_FAILED:
        hir_boot_fini(boot);
        return 1;
    case HIR_RUN_REFUSED:
        /* every rank reached the same conclusion: rank 0 said it, clean exit */
        hir_boot_fini(boot);
        return 1;
    case HIR_RUN_FAILED:
    default:
        fflush(stderr);
        if (size > 1)
            hir_boot_abort(boot, 1);
        hir_boot_fini(boot);
        return 1;
    }
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The summary of a job that ended well, one line on rank 0's stderr (stdout holds the report
 * that scripts read: check:, bench:, --topology): backend, ranks, devices, runs, wall time
 * and what became of the outputs. --quiet leaves it out. */
static void print_summary(const cli *c, const hir_run_report *r, hir_boot *boot, double secs)
{
    const hir_run_options *o = &c->o;
    int size = hir_boot_size(boot), nodes = hir_boot_node_count(boot);
    char devices[64] = "host", runs[64], outputs[256];
    if (!r->is_host) {
        /* each rank takes GPU (local rank mod GPUs seen), so a node uses at most this many */
        int ngpu = hir_registry_device_count(hir_registry_find(r->backend));
        int used = ngpu < hir_boot_local_size(boot) ? ngpu : hir_boot_local_size(boot);
        snprintf(devices, sizeof devices, "%d GPU%s%s", used, used == 1 ? "" : "s",
                 nodes > 1 ? " a node" : "");
    }
    if (o->bench)
        snprintf(runs, sizeof runs, "%d timed + %d warm-up runs", o->bench, o->warmup);
    else
        snprintf(runs, sizeof runs, "%d run%s", o->iters, o->iters == 1 ? "" : "s");
    int n = snprintf(outputs, sizeof outputs, "%d output%s", r->outputs,
                     r->outputs == 1 ? "" : "s");
    if (o->save_dir && n < (int)sizeof outputs)
        n += snprintf(outputs + n, sizeof outputs - (size_t)n, ", saved to %s", o->save_dir);
    if (r->checked && n < (int)sizeof outputs)
        snprintf(outputs + n, sizeof outputs - (size_t)n, ", %d checked: PASS", r->checked);
    fprintf(stderr, "hir-run: done: %s backend, %d rank%s%s, %s, %s, %.3f s; %s\n", r->backend,
            size, size == 1 ? "" : "s", nodes > 1 ? " on several nodes" : "", devices, runs,
            secs, outputs);
    /* a benchmark's wall time is mostly not the timed runs at large shapes: say where it went */
    if (o->bench) {
        const double *p = r->phase_s;
        fprintf(stderr, "hir-run: time on rank 0: setup %.3f s, inputs %.3f s, runs %.3f s, "
                        "outputs %.3f s, check %.3f s\n",
                p[HIR_RUN_PHASE_SETUP], p[HIR_RUN_PHASE_INPUTS], p[HIR_RUN_PHASE_RUNS],
                p[HIR_RUN_PHASE_OUTPUTS], p[HIR_RUN_PHASE_CHECK]);
    }
}

/* The job on this rank, --bench-plot after it; the exit code. */
static int run(cli *c, hir_boot *boot, hir_diag *e, double t0)
{
    int rank = hir_boot_rank(boot);
    char plot_json[64] = "";   /* --bench-plot without --bench-json: a temporary file */
    if (c->bench_plot && !c->o.bench_json && rank == 0)
        plot_tempfile(c, plot_json, sizeof plot_json);
    hir_run_report report = {0};
    c->o.report = &report;
    hir_run_status st = hir_run_job(&c->o, boot, e);
    fflush(stdout);
    if (c->bench_plot && rank == 0 && (st == HIR_RUN_OK || st == HIR_RUN_CHECK_FAILED) &&
        (!c->o.bench_json || draw_plot(c->o.bench_json, c->bench_plot)))
        st = st == HIR_RUN_OK ? HIR_RUN_CHECK_FAILED : st;   /* exit 1, the job ended cleanly */
    if (plot_json[0])
        unlink(plot_json);
    if (st == HIR_RUN_OK && rank == 0 && !c->quiet && report.backend) {
        fflush(stdout);
        print_summary(c, &report, boot, mono_s() - t0);
    }
    return job_exit(st, boot);
}

int main(int argc, char **argv)
{
    double t0 = mono_s();
    cli c;
    memset(&c, 0, sizeof c);
    hir_run_options_init(&c.o);
    c.progress = -1;
    c.color = HIR_COLOR_AUTO;
    int code = parse_args(&c, argc, argv);
    if (code < 0)
        code = finish_args(&c);
    if (code >= 0)
        return code;
    /* the runner's messages: "hir-run: [rank R: ]message", located ones with the source line
     * and a caret (support/diag.h) */
    hir_diag e;
    hir_diag_init(&e, stderr);
    hir_diag_set_prefix(&e, "hir-run");
    e.status_lines = true;
    e.color = c.o.color;
    hir_boot *boot = NULL;
    if ((code = start_ranks(&c, &argc, &argv, &boot, &e)) < 0)
        code = c.topology ? print_topology(&c, boot, &e) : run(&c, boot, &e, t0);
    hir_diag_fini(&e);
    return code;
}
