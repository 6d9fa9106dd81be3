#!/usr/bin/env python3
"""fuzz_runner.py — fuzzes hir-opt's passes and hir-run on the CPU backend with mutated
programs (issue 14: fuzzing beyond the parser).

Seeds are the small programs of test/corpus and of the Inputs folders under test/lit. Each input
is one seed changed by 1 to 4 mutations (mostly one), token-level (a number replaced by a boundary
value, the number in a name changed, a name replaced by another name of the file, a keyword by
another keyword, a token deleted, doubled or swapped with its neighbour), structural (a line deleted, doubled, moved, swapped, indented
deeper or shallower, a line spliced in from another seed, the file cut after a line) or a rank
disagreement (issue 31: a root or peer that depends on the rank, a communication under
IF Manual ( rank == R ), a communication's buffer replaced by another tensor of the file). Input i
comes from random.Random("SEED:i") alone, so a seed and an index name one input on any machine.

Every input goes through hir-opt with a random pipeline of passes, and hir-opt's output (when
it accepts the input) through hir-opt again, which must accept it: the printed result of the
passes must read back. Inputs hir-opt accepts, and one in ten that it refuses, then go through
hir-run --device=cpu --check on 1 to 3 ranks (the ranks the meshes name, when at most 3) with
random inputs, streams and iterations, and a --bind for each symbol the program reads without
defining it (most of the time). Each run has a wall-time bound (a hang is a finding) and
a memory bound (fuzzlib.py); fuzzlib.judge says what counts as a finding. Findings are kept
under OUT/findings (the input and a .txt with the command and output); the exit status is 1
when there is any.

usage: fuzz_runner.py [--seed S] [--inputs N] [--time SEC] [--jobs J] [--tools DIR] [--out DIR]
                      [--timeout SEC] [--mem-mb MB] [--verbose]
"""
import argparse
import concurrent.futures
import glob
import os
import random
import re
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fuzzlib  # noqa: E402

ROOT = fuzzlib.ROOT

NUMBERS = ["0", "1", "-1", "2", "3", "4", "7", "8", "16", "64", "1023", "1024", "65536",
           "2147483647", "2147483648", "4294967295", "4294967296", "16777216", "16777217",
           "4611686018427387903", "4611686018427387904", "9223372036854775807",
           "-9223372036854775808", "99999999999999999999", "0.5", "-0.0", "1e308", "1e-320"]

PASS_PIPELINES = [[], ["--canonicalize"], ["--stream-parallel"], ["--stream-parallel=cuda"],
                  ["--convert-to-communication"], ["--backend=cuda"], ["--backend=nccl"],
                  ["--stream-parallel", "--canonicalize"], ["--hoist-handle-exchange"],
                  ["--defer-send-wait"], ["--strip-communication"], ["--forward-local-shard"],
                  ["--pipeline-fallback=cuda"], ["--print-form=2026"], ["--print-form=2025"],
                  ["--stream-parallel=cuda", "--hoist-handle-exchange", "--defer-send-wait"]]

TOKEN = re.compile(r"\s+|[A-Za-z_%][A-Za-z0-9_.]*|\d+(?:\.\d+)?(?:e[+-]?\d+)?|.", re.S)


def load_seeds():
    files = sorted(glob.glob(os.path.join(ROOT, "test", "corpus", "**", "*.hir"), recursive=True) +
                   glob.glob(os.path.join(ROOT, "test", "lit", "**", "Inputs", "**", "*.hir"),
                             recursive=True))
    seeds = []
    for f in files:
        if os.path.getsize(f) > 24000:
            continue
        with open(f, "rb") as fh:
            text = fh.read().decode("utf-8", errors="replace")
        if "%HostIrContainer" in text:
            seeds.append((os.path.relpath(f, ROOT), text))
    return seeds


def keywords():
    words = []
    with open(os.path.join(ROOT, "test", "fuzz", "hir.dict")) as f:
        for line in f:
            m = re.match(r'^"(.*)"$', line.strip())
            if m and "\\" not in m.group(1):
                words.append(m.group(1))
    return words


def mutate_tokens(rng, text, words):
    toks = TOKEN.findall(text)
    idx = [i for i, t in enumerate(toks) if not t.isspace()]
    if not idx:
        return text
    op = rng.choices(["number", "name-number", "name", "keyword", "delete", "double", "swap"],
                     [40, 15, 12, 5, 12, 8, 8])[0]
    nums = [k for k in idx if re.match(r"\d", toks[k])]
    names = [k for k in idx if re.match(r"[A-Za-z_]", toks[k])]
    if op == "number" and nums:                    # an extent, size, rank...: a boundary value
        toks[rng.choice(nums)] = rng.choice(NUMBERS)
    elif op == "name-number" and names:            # T3 -> T7, iS3 -> iS0: another object
        i = rng.choice(names)
        toks[i] = re.sub(r"\d+", lambda m: str(rng.choice([0, 1, 2, 3, 5, 8, 100, int(m.group(0)) + 1])),
                         toks[i], count=1)
    elif op == "name" and names:                   # a name: another name of the file
        toks[rng.choice(names)] = toks[rng.choice(names)]
    elif op == "keyword":
        toks[rng.choice(idx)] = rng.choice(words)
    elif op == "delete":
        del toks[rng.choice(idx)]
    elif op == "double":
        i = rng.choice(idx)
        toks.insert(i, toks[i])
    elif op == "swap":
        i = rng.choice(idx)
        j = min(i + 2, len(toks) - 1)              # the next token past the space between
        toks[i], toks[j] = toks[j], toks[i]
    return "".join(toks)


def mutate_lines(rng, text, seeds):
    lines = text.split("\n")
    if len(lines) < 2:
        return text
    body = [i for i, l in enumerate(lines) if l.startswith("  ")] or list(range(len(lines)))
    i = rng.choice(body)
    op = rng.randrange(7)
    if op == 0:
        del lines[i]
    elif op == 1:
        lines.insert(i, lines[i])
    elif op == 2:
        j = rng.choice(body)
        lines[i], lines[j] = lines[j], lines[i]
    elif op == 3:
        line = lines.pop(i)
        lines.insert(rng.choice(body) if body else 0, line)
    elif op == 4:
        lines[i] = ("  " + lines[i]) if rng.random() < 0.5 else lines[i][2:]
    elif op == 5:
        other = rng.choice(seeds)[1].split("\n")
        cand = [l for l in other if l.startswith("  ")]
        if cand:
            lines.insert(i, rng.choice(cand))
    else:
        lines = lines[:i + 1]
    return "\n".join(lines)


COMM_LINE = re.compile(r"^(\s*)((?:P2P)?Communication \d+ \(.*)$", re.M)
TENSOR = re.compile(r"T\d+_[gl]_\w+\[[^\]]*\](?: \(DeviceMesh\{[^}]*\}\))?")


def mutate_ranks(rng, text):
    """Rank disagreement (issue 31): the ranks evaluate one communication differently -- a root
    or a peer that depends on the rank, a communication only some ranks post, a receive into
    another buffer than its send's (size, dtype). hir-run must stop every rank with an error
    (the agreement, a P2P header, a timeout naming the peer), never finish with each rank's
    own data."""
    comms = list(COMM_LINE.finditer(text))
    if not comms:
        return text
    m = rng.choice(comms)
    ind, line = m.group(1), m.group(2)
    op = rng.randrange(4)
    if op == 0 and "root=" in line:
        line = re.sub(r"root=[^,)]+", rng.choice(["root=rank", "root=( rank % 2 )",
                                                   "root=( 1 - rank )"]), line, count=1)
    elif op == 1 and "peer=" in line:
        line = re.sub(r"peer=[^,)]+", rng.choice(["peer=rank", "peer=( rank + 1 )",
                                                   "peer=( 1 - rank )"]), line, count=1)
    elif op == 2:
        line = "IF Manual ( rank == %d ):\n%s  %s" % (rng.randrange(2), ind, line)
    else:
        tensors = sorted(set(TENSOR.findall(text)))
        bufs = list(TENSOR.finditer(line))
        if tensors and bufs:
            b = rng.choice(bufs)
            line = line[:b.start()] + rng.choice(tensors) + line[b.end():]
    return text[:m.start(2)] + line + text[m.end(2):]


def make_input(seed, i, seeds, words):
    rng = random.Random("%d:%d" % (seed, i))
    name, text = rng.choice(seeds)
    for _ in range(rng.choices([1, 2, 3, 4], [55, 25, 12, 8])[0]):
        r = rng.random()
        if r < 0.15:
            text = mutate_ranks(rng, text)
        elif r < 0.7:
            text = mutate_tokens(rng, text, words)
        else:
            text = mutate_lines(rng, text, seeds)
    return rng, name, text


def free_scalars(text):
    """Symbols the program reads without defining them (symbolic extents, scalar inputs):
    hir-run needs a --bind for each. Loop indices and defined symbols are left out."""
    used = set(re.findall(r"\b([ibd]\d+)\b", text))
    defined = set(re.findall(r"^\s*([ibd]\d+)\s*=", text, re.M))
    loops = set(re.findall(r"\bFOR\s+(\w+)\s+(?:in|from)\b", text))
    return sorted(used - defined - loops)[:8]


def ranks_named(text):
    devs = [int(d) for m in re.finditer(r"DeviceMesh\{([^}]*)\}", text)
            for d in re.findall(r"\d+", m.group(1)) if len(d) < 6]
    return max(devs) + 1 if devs else 1


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.inputs = self.opt_runs = self.run_runs = 0
        self.outcomes = {}
        self.findings = []

    def add(self, key):
        with self.lock:
            self.outcomes[key] = self.outcomes.get(key, 0) + 1


def one(i, a, seeds, words, env, stats):
    rng, name, text = make_input(a.seed, i, seeds, words)
    work = os.path.join(a.out, "work", "w%d" % (i % (a.jobs * 4)))
    os.makedirs(work, exist_ok=True)
    prog = os.path.join(work, "in%d.hir" % i)
    with open(prog, "w") as f:
        f.write(text)
    tools = a.tools
    found = []

    def finding(kind, r, tool):
        path = fuzzlib.save_finding(a.out, "%s-%s" % (tool, kind), text, r.argv, r)
        found.append((kind, tool, name, path))

    # hir-opt with passes, and its output read back
    passes = rng.choice(PASS_PIPELINES)
    outp = os.path.join(work, "out%d.hir" % i)
    argv = [os.path.join(tools, "hir-opt"), prog] + passes + ["-o", outp]
    opt_env = fuzzlib.env_for(env, "hir-opt")
    r = fuzzlib.run(argv, opt_env, a.timeout, a.mem_mb, a.asan)
    with stats.lock:
        stats.opt_runs += 1
    bad = fuzzlib.judge(r, "hir-opt")
    stats.add("hir-opt exit %s" % r.rc)
    if bad:
        finding(bad, r, "hir-opt")
    accepted = r.rc == 0 and not bad
    if accepted and passes:
        r2 = fuzzlib.run([os.path.join(tools, "hir-opt"), outp, "-o", os.devnull], opt_env,
                         a.timeout, a.mem_mb, a.asan)
        with stats.lock:
            stats.opt_runs += 1
        bad = fuzzlib.judge(r2, "hir-opt")
        if bad or r2.rc != 0:
            finding(bad or "passes-output-refused", r2, "hir-opt")
    # hir-run on the CPU backend
    if accepted or rng.random() < 0.1:
        np = ranks_named(text)
        if np > 3 or rng.random() < 0.3:
            np = rng.randint(1, 3)
        argv = [os.path.join(tools, "hir-run"), "--device=cpu", "--timeout=%d" % a.rank_timeout,
                "--check", "--inputs=" + rng.choice(["random", "ones", "arange", "zeros"]),
                "--iters=%d" % rng.randint(1, 2), "--streams=%d" % rng.choice([1, 2, 4])]
        if np > 1:
            argv[1:1] = ["-np", str(np)]
        for name in free_scalars(text):
            if rng.random() < 0.85:
                argv.append("--bind=%s=%d" % (name, rng.choice([0, 1, 2, 3, 4, 6, 8])))
        argv.append(prog)
        r = fuzzlib.run(argv, env, a.timeout, a.mem_mb, a.asan)
        with stats.lock:
            stats.run_runs += 1
        bad = fuzzlib.judge(r, "hir-run", check=True)
        stats.add("hir-run exit %s" % r.rc)
        if bad:
            finding(bad, r, "hir-run")
    for f in (prog, outp):
        try:
            os.unlink(f)
        except OSError:
            pass
    with stats.lock:
        stats.inputs += 1
        stats.findings += found
    if a.verbose or found:
        for kind, tool, seedname, path in found:
            print("fuzz_runner: input %d (from %s): %s %s -> %s" % (i, seedname, tool, kind, path),
                  flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--inputs", type=int, default=100000, help="inputs to try at most")
    ap.add_argument("--time", type=float, default=90, help="seconds; no input starts after")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--tools", default=os.path.join(ROOT, "build", "tools"))
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "fuzz-runner"))
    ap.add_argument("--timeout", type=float, default=60, help="wall-time bound of one run")
    ap.add_argument("--rank-timeout", type=int, default=10, help="hir-run --timeout")
    ap.add_argument("--mem-mb", type=int, default=4096, help="memory bound of one run")
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    a.tools = os.path.abspath(a.tools)
    a.out = os.path.abspath(a.out)
    os.makedirs(a.out, exist_ok=True)
    a.asan = fuzzlib.is_asan_build(a.tools)
    env = fuzzlib.environment(a.out, a.asan, a.mem_mb)
    seeds = load_seeds()
    words = keywords()
    stats = Stats()
    t0 = time.monotonic()
    print("fuzz_runner: %d seed programs, seed %d, at most %d inputs in %g s, %d jobs, tools %s%s"
          % (len(seeds), a.seed, a.inputs, a.time, a.jobs, a.tools,
             " (ASan build)" if a.asan else ""), flush=True)
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        pending = set()
        i = 0
        while i < a.inputs and time.monotonic() - t0 < a.time:
            while len(pending) >= a.jobs:
                done, pending = concurrent.futures.wait(
                    pending, return_when=concurrent.futures.FIRST_COMPLETED)
                for d in done:
                    d.result()
            if time.monotonic() - t0 >= a.time:
                break
            pending.add(ex.submit(one, i, a, seeds, words, env, stats))
            i += 1
        for d in concurrent.futures.as_completed(pending):
            d.result()
    secs = time.monotonic() - t0
    outs = ", ".join("%s: %d" % kv for kv in sorted(stats.outcomes.items()))
    print("fuzz_runner: %d inputs (0..%d of seed %d) in %.0f s: %d hir-opt runs, %d hir-run runs "
          "(%s); %d finding%s" % (stats.inputs, stats.inputs - 1, a.seed, secs, stats.opt_runs,
                                  stats.run_runs, outs, len(stats.findings),
                                  "" if len(stats.findings) == 1 else "s"), flush=True)
    return 1 if stats.findings else 0


if __name__ == "__main__":
    sys.exit(main())
