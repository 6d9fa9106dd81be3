#!/usr/bin/env python3
"""fuzz_options.py — fuzzes the command lines of hir-run, hir-opt, hir-gen and hir-reduce with
random and hostile option values (issue 14: option fuzzing).

Each tool's options are read from its --help. An input is a command line of 0 to 6 items:
`--opt=VALUE`, `--opt VALUE`, `--opt` alone, a program path, or a stray word, with values drawn
from boundary numbers (0, -1, 2^31, 2^63, 1e309, nan, inf, 0x10, " 5", "+5", ...), empty and
100 KB strings, control bytes, printf directives, NAME=INTEGER forms, and paths: a small program,
an empty file, random bytes, a directory, a FIFO nobody writes or reads, /dev/full, /dev/zero,
a missing folder, a path under a regular file. Values that are in range but would make a run
long on purpose (--iters=2147483647, -np 1000) are left out: a long run is then what was asked
for, not a hang. Command line i comes from random.Random("options:SEED:i"), and runs in a
scratch folder of its own, holding fresh copies of the files it may name.

fuzzlib.judge decides: exit 0, 1 or 2 only; a usage error (2) is exactly one line `TOOL: ...`;
an error (1) says `TOOL: ...` or gives a location; no signal, sanitizer report or panic; no
run past the time bound. Findings go to OUT/findings (the command line as a shell-quoted .sh
file and a .txt with the output); the exit status is 1 when there is any.

usage: fuzz_options.py [--seed S] [--inputs N] [--time SEC] [--jobs J] [--tools DIR] [--out DIR]
                       [--timeout SEC] [--mem-mb MB] [--verbose]
"""
import argparse
import concurrent.futures
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fuzzlib  # noqa: E402

ROOT = fuzzlib.ROOT
PROGRAM = os.path.join(ROOT, "test", "lit", "Inputs", "run-identity-global.hir")
SYMBOLIC = os.path.join(ROOT, "test", "lit", "Inputs", "run-bind-symbolic.hir")

NUMBERS = ["0", "1", "2", "3", "-1", "-0", "+5", " 5", "5 ", "0x10", "010", "1.5", "1e3", "1e309",
           "-1e309", "nan", "NaN", "inf", "-inf", "2147483647", "2147483648", "-2147483649",
           "4294967296", "4294967297", "9223372036854775807", "9223372036854775808",
           "-9223372036854775809", "99999999999999999999", "1e-320", "0.0000001", "١٢"]
WORDS = ["", " ", "=", "==", "-", "--", "cpu", "cuda", "gpu", "random", "zeros", "ones", "arange",
         "auto", "always", "never", "get", "put", "full", "randomized", "bf16", "fp16", "fp32",
         "fp8", "2025", "2026", "%s%s%s%n", "%x%x%x", "\x01\x02\x7f", "a\nb", "\x1b[31mred",
         "linear", "matmul", "ag-linear", "ag-matmul", "stream-parallel", "canonicalize",
         "stream-parallel,backend=cuda", "stream-parallel{backend=cuda", "backend{kind=x}",
         "i0=3", "i0=", "=3", "i0=3=4", "i0=x", "rank=1", "numberOfStreams=2", "streamIdx=0",
         "1=k.cubin", "x" * 5000, "é", "\udcff"]
# options whose in-range values are counts of work: only small or invalid values are given
COUNTS = {"--iters", "--warmup", "--bench", "-np", "--np", "--simulate-nodes", "--max-tests",
          "--check-vectors", "--streams", "--timeout", "--progress-after", "--m", "--k", "--n",
          "--d", "--container"}
SMALL = ["1", "2", "3"]


def options_of(tool, tools, env):
    """The options a tool's --help names (and -np, -o, -v, -h where it names them)."""
    p = subprocess.run([os.path.join(tools, tool), "--help"], capture_output=True, text=True,
                       env=env, timeout=60)
    opts = sorted(set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*|-np|-o|-v|-h)\b", p.stdout)))
    return opts or ["--help"]


def make_files(d):
    """The files a command line may name, made fresh in d."""
    os.makedirs(os.path.join(d, "dir"), exist_ok=True)
    shutil.copy(PROGRAM, os.path.join(d, "p.hir"))
    shutil.copy(SYMBOLIC, os.path.join(d, "sym.hir"))
    open(os.path.join(d, "empty.hir"), "w").close()
    with open(os.path.join(d, "file"), "w") as f:
        f.write("not a directory\n")
    with open(os.path.join(d, "bin.hir"), "wb") as f:
        f.write(bytes(random.Random(7).randrange(256) for _ in range(4096)))
    if not os.path.exists(os.path.join(d, "fifo")):
        os.mkfifo(os.path.join(d, "fifo"))


PATHS = ["p.hir", "sym.hir", "empty.hir", "bin.hir", "dir", "fifo", "file/x", "nodir/x",
         "/dev/full", "/dev/null", "/dev/zero", "out.hir", "out", "-", ".", "file"]


def value(rng, opt):
    r = rng.random()
    if opt in COUNTS:
        pool = SMALL + [v for v in NUMBERS if not re.fullmatch(r"\s*\+?\d+(\.\d+)?\s*", v)
                        or v in ("0", "-0")]
        return rng.choice(pool) if r < 0.85 else rng.choice(WORDS)
    if r < 0.35:
        return rng.choice(PATHS)
    if r < 0.6:
        return rng.choice(NUMBERS)
    if r < 0.97:
        return rng.choice(WORDS)
    return "y" * 100000   # a long argument (one argument may hold at most 128 KiB)


def make_cmdline(seed, i, tools_opts):
    rng = random.Random("options:%d:%d" % (seed, i))
    tool = rng.choice(sorted(tools_opts))
    opts = tools_opts[tool]
    args = []
    if tool == "hir-gen" and rng.random() < 0.9:
        args.append(rng.choice(["linear", "matmul", "ag-linear", "ag-matmul", "conv", ""]))
    for _ in range(rng.randint(0, 6)):
        r = rng.random()
        opt = rng.choice(opts)
        if opt in ("--help", "-h", "--version") and rng.random() < 0.8:
            continue
        if r < 0.45:
            args.append("%s=%s" % (opt, value(rng, opt)))
        elif r < 0.75:
            args += [opt, value(rng, opt)]
        elif r < 0.85:
            args.append(opt)
        elif r < 0.95:
            args.append(rng.choice(PATHS))
        else:
            args.append(rng.choice(WORDS + NUMBERS))
    if tool == "hir-gen" and rng.random() < 0.7:
        for o in ("--m", "--k", "--n"):
            if o not in args:
                args += [o, rng.choice(SMALL + ["8", "16"])]
    if tool in ("hir-opt", "hir-run") and rng.random() < 0.7:
        args.append(rng.choice(["p.hir", "p.hir", "sym.hir"] + PATHS))
    if tool == "hir-run" and not any(a.startswith("--device") for a in args) and rng.random() < 0.9:
        args.insert(0, "--device=cpu")
    if tool == "hir-reduce":
        if rng.random() < 0.8:
            args += ["--max-tests=%s" % rng.choice(SMALL)]
        args += [rng.choice(["p.hir", "sym.hir"] + PATHS)]
        args += rng.choice([["true"], ["false"], ["/nonexistent/cmd"], [], ["sh", "-c", "exit 3"]])
    return tool, args


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.runs = 0
        self.outcomes = {}
        self.findings = []


def one(i, a, tools_opts, env, stats):
    tool, args = make_cmdline(a.seed, i, tools_opts)
    d = os.path.join(a.out, "work", "w%d" % (i % (a.jobs * 4)))
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    make_files(d)
    # a value that is not valid UTF-8 (a lone surrogate) goes through as the byte it stood for
    argv = [os.path.join(a.tools, tool)] + [x.encode("utf-8", "surrogateescape") for x in args]
    r = fuzzlib.run(argv, fuzzlib.env_for(env, tool), a.timeout, a.mem_mb, a.asan, cwd=d)
    bad = fuzzlib.judge(r, tool, check="--check" in " ".join(args))
    with stats.lock:
        stats.runs += 1
        k = "%s exit %s" % (tool, r.rc)
        stats.outcomes[k] = stats.outcomes.get(k, 0) + 1
    if bad:
        line = "cd SCRATCH && %s %s\n" % (tool, " ".join(shlex.quote(x) for x in args))
        r.argv = [tool] + args
        path = fuzzlib.save_finding(a.out, "%s-%s" % (tool, bad), line, r.argv, r, ext=".sh")
        with stats.lock:
            stats.findings.append(path)
        print("fuzz_options: command line %d: %s %s -> %s" % (i, tool, bad, path), flush=True)
    elif a.verbose:
        print("fuzz_options: %d: exit %s %s %s" % (i, r.rc, tool, " ".join(map(repr, args)))[:300])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--inputs", type=int, default=100000, help="command lines to try at most")
    ap.add_argument("--time", type=float, default=90, help="seconds; no run starts after")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--tools", default=os.path.join(ROOT, "build", "tools"))
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "fuzz-options"))
    ap.add_argument("--timeout", type=float, default=60, help="wall-time bound of one run")
    ap.add_argument("--mem-mb", type=int, default=4096, help="memory bound of one run")
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    a.tools = os.path.abspath(a.tools)
    a.out = os.path.abspath(a.out)
    os.makedirs(a.out, exist_ok=True)
    a.asan = fuzzlib.is_asan_build(a.tools)
    env = fuzzlib.environment(a.out, a.asan, a.mem_mb)
    tools_opts = {t: options_of(t, a.tools, env) for t in ("hir-run", "hir-opt", "hir-gen",
                                                           "hir-reduce")
                  if os.path.exists(os.path.join(a.tools, t))}
    stats = Stats()
    t0 = time.monotonic()
    print("fuzz_options: %s; seed %d, at most %d command lines in %g s, %d jobs%s" %
          (", ".join("%s (%d options)" % (t, len(o)) for t, o in sorted(tools_opts.items())),
           a.seed, a.inputs, a.time, a.jobs, " (ASan build)" if a.asan else ""), flush=True)
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        pending = set()
        i = 0
        while i < a.inputs and time.monotonic() - t0 < a.time:
            while len(pending) >= a.jobs:
                done, pending = concurrent.futures.wait(
                    pending, return_when=concurrent.futures.FIRST_COMPLETED)
                for x in done:
                    x.result()
            if time.monotonic() - t0 >= a.time:
                break
            pending.add(ex.submit(one, i, a, tools_opts, env, stats))
            i += 1
        for x in concurrent.futures.as_completed(pending):
            x.result()
    secs = time.monotonic() - t0
    outs = ", ".join("%s: %d" % kv for kv in sorted(stats.outcomes.items()))
    print("fuzz_options: %d command lines (0..%d of seed %d) in %.0f s (%s); %d finding%s" %
          (stats.runs, stats.runs - 1, a.seed, secs, outs, len(stats.findings),
           "" if len(stats.findings) == 1 else "s"), flush=True)
    return 1 if stats.findings else 0


if __name__ == "__main__":
    sys.exit(main())
