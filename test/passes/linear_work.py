#!/usr/bin/env python3
"""Every pass does work linear in its input: counted, not timed.

For each pass (and the verifier, --print-form, and the pipeline's re-reading after a pass,
pu_as_printed) it makes two inputs of the shape bench/pass_scaling.py measures, the second
8 times the statements of the first, runs `hir-opt --no-verify-each PASS INPUT` under
callgrind with only the pass's function collected (--toggle-collect), and compares the
instructions executed: their ratio may exceed the ratio of statements by at most SLACK.

The calls into support/map.c's hash map (MAP_FNS) are charged at the small run's cost per call
of each function, as long as a call of the large run costs at most PROBE_SLACK times that: the
cost of one look-up depends on where its key and its neighbours fall in the table, and a table
of 8 times the keys is another lottery. A few keys looked up once per statement make that a
term of the whole count: stream-parallel's axis map asks for the roots of its classes (T0's
IterDomains 0 and 1, which are not in the map) on every query, and they probe 1 and 4 slots
in the small table, 8 and 12 in the large one, so stream-parallel read 1.16 x linear in a Debug
build (1.10 in RelWithDebInfo) with the calls and their number exactly 8 times as many. More
than PROBE_SLACK times the cost per call (a table that degenerates, every key in one chain)
is charged as it is. Charging per call still counts a quadratic number of look-ups.

At these small sizes a quadratic term is still a small part of the work: the passes as they
were on 2026-12-04 (main 54dac6b) show, RelWithDebInfo / Debug, 4.93 / 5.63
(strip-communication), 3.18 / 3.78 and 1.92 / 2.50 (stream-parallel), 1.52 / 1.41
(convert-to-communication), 1.51 / 1.39 (pipeline-fallback), 1.28 / 1.64 and 1.19 / 1.48
(backend), 1.49 / 1.25 (hoist-handle-exchange) and fail here; the linear passes show 0.97 to
1.02. hoist-handle-exchange's input has twice the units of the other lowered inputs: at 40 its
old quadratic insertion read 1.13 in a Debug build, where the pass's own code is slower next to
the memmove that grows with the block. On 10^5 statements the same passes ran 10 to 80 times
longer than linear (docs/benchmarks.md, "Pass scaling").

Instruction counts of one binary on one input are deterministic, so this test does not
depend on the machine's load. It needs valgrind (CMake registers it only where valgrind is
found, and not in the sanitizer builds).

usage: linear_work.py BUILD_TOOLS_DIR SOURCE_DIR [NAME...]
"""
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

SLACK = 1.15
FACTOR = 8
# support/map.c's functions whose cost per call depends on where the keys fall in the table
PROBE_SLACK = 3.0
MAP_FNS = ("hir_map_get", "hir_map_try_put", "hir_map_put", "hir_map_del")

# name, input kind, units of the small input, hir-opt arguments, collected function
CASES = [
    ("verify", "spc", 40, [], "hir_program_verify"),
    ("print-form", "spc", 40, ["--print-form=2026"], "hir_program_convert_form"),
    ("as-printed", "spc", 40, ["--defer-send-wait"], "pu_as_printed"),
    ("canonicalize", "spc", 40, ["--canonicalize"], "hir_run_canonicalize"),
    ("backend-nccl", "spc", 40, ["--backend=nccl"], "hir_run_backend"),
    ("backend-auto", "spc", 40, ["--pass-pipeline=backend{kind=auto nodes=2}"], "hir_run_backend"),
    ("backend-cuda", "spn", 40, ["--backend=cuda"], "hir_run_backend"),
    ("hoist-handle-exchange", "spc", 80, ["--hoist-handle-exchange"], "hir_run_hoist_handle_exchange"),
    ("defer-send-wait", "spc", 40, ["--defer-send-wait"], "hir_run_defer_send_wait"),
    ("strip-communication", "spc", 40, ["--strip-communication"], "hir_run_strip_communication"),
    ("forward-local-shard", "spc", 40, ["--forward-local-shard"], "hir_run_forward_local_shard"),
    ("convert-to-communication", "blocks", 200, ["--convert-to-communication"],
     "hir_run_convert_to_communication"),
    ("pipeline-fallback", "blocks", 200, ["--pipeline-fallback"], "hir_run_pipeline_fallback"),
    ("stream-parallel", "blocks", 200, ["--stream-parallel=nccl"], "hir_run_stream_parallel"),
    ("stream-parallel-long-loop", "chain", 400, ["--stream-parallel=cuda"], "hir_run_stream_parallel"),
]


def make(tools, src, work, kind, units):
    path = os.path.join(work, "%s-%d.hir" % (kind, units))
    if os.path.exists(path):
        return path
    gen = [sys.executable, os.path.join(src, "bench", "gen_large.py")]
    if kind in ("blocks", "chain"):
        subprocess.run(gen + [kind, str(units), "-o", path], check=True)
    else:
        raw = path + ".in"
        subprocess.run(gen + ["blocks", str(units), "-o", raw], check=True)
        sp = "--stream-parallel=" + ("cuda" if kind == "spc" else "nccl")
        subprocess.run([os.path.join(tools, "hir-opt"), sp, raw, "-o", path], check=True)
    return path


def stmts(tools, path):
    # a pass that changes nothing in these inputs, for its statement count
    r = subprocess.run([os.path.join(tools, "hir-opt"), "--no-verify-each", "--pass-statistics",
                        "--canonicalize",
                        path, "-o", os.devnull], capture_output=True, text=True, check=True)
    return int(re.search(r"^  \S+\s+\d+\s+(\d+)\s", r.stderr, re.M).group(1))


def work(tools, path, args, fn, out):
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out, "--collect-atstart=no",
           "--toggle-collect=" + fn, os.path.join(tools, "hir-opt"), "--no-verify-each"] + args + \
          [path, "-o", os.devnull]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError("%s failed:\n%s" % (" ".join(cmd), r.stderr[-3000:]))
    m = re.search(r"Collected : (\d+)", r.stderr)
    n = int(m.group(1)) if m else 0
    if n == 0:
        raise RuntimeError("%s: nothing collected for %s (renamed or inlined?)" % (" ".join(cmd), fn))
    return n, map_calls(out)


def map_calls(path):
    """{map function: [calls, instructions inside them]} over the calls into support/map.c's
    probing functions from outside them, read from a callgrind output file (name compression:
    "(id) name" the first time, "(id)" after; the line after calls= holds the call's inclusive
    cost)."""
    names, res = {}, {}
    caller = callee = None
    pending = 0
    with open(path) as f:
        for line in f:
            if pending:
                pending_calls, pending = pending, 0
                if callee in MAP_FNS and caller not in MAP_FNS:
                    e = res.setdefault(callee, [0, 0])
                    e[0] += pending_calls
                    e[1] += int(line.split()[1])
                continue
            key, _, val = line.partition("=")
            if key in ("fn", "cfn", "cfni"):
                m = re.match(r"\((\d+)\)(?: (.*))?", val.strip())
                name = names.setdefault(m.group(1), m.group(2)) if m else val.strip()
                name = name.split("'")[0]     # callgrind marks recursion depth as name'2
                if key == "fn":
                    caller = name
                else:
                    callee = name
            elif key == "calls":
                pending = int(val.split()[0])
    return res


def charged(small, large):
    """The large run's instructions, with its hash-map calls charged at the small run's cost
    per call of each map function, unless a call costs more than PROBE_SLACK times as much
    (then at what they cost)."""
    total, maps = large
    for fn, (calls, cost) in maps.items():
        c0, i0 = small[1].get(fn, (0, 0))
        if c0 and calls:
            nominal = calls * (i0 / c0)
            if cost <= PROBE_SLACK * nominal:
                total += nominal - cost
    return total


def main():
    if len(sys.argv) < 3:
        print(__doc__.split("usage: ")[1].strip(), file=sys.stderr)
        return 2
    tools, src = sys.argv[1], sys.argv[2]
    cases = [c for c in CASES if len(sys.argv) == 3 or c[0] in sys.argv[3:]]
    with tempfile.TemporaryDirectory(prefix="hir-linear.") as tmp:
        # inputs first (serially: cases share them)
        plan = []
        for name, kind, units, args, fn in cases:
            small = make(tools, src, tmp, kind, units)
            large = make(tools, src, tmp, kind, units * FACTOR)
            plan.append((name, args, fn, small, large))
        counts = {}
        for p in set(x for _, _, _, s, l in plan for x in (s, l)):
            counts[p] = stmts(tools, p)

        def one(i_item):
            i, (name, args, fn, small, large) = i_item
            a = work(tools, small, args, fn, os.path.join(tmp, "cg-%d-a" % i))
            b = work(tools, large, args, fn, os.path.join(tmp, "cg-%d-b" % i))
            return name, a, b, counts[small], counts[large]

        with ThreadPoolExecutor(max_workers=2) as ex:
            results = list(ex.map(one, enumerate(plan)))
    bad = 0
    for name, a, b, na, nb in results:
        raw = (b[0] / a[0]) / (nb / na)
        growth = (charged(a, b) / a[0]) / (nb / na)
        ok = growth <= SLACK
        bad += not ok
        print("%-28s %7d -> %7d statements: %11d -> %11d instructions, %.2f x linear "
              "(%.2f before the map's probes are charged per call) %s" %
              (name, na, nb, a[0], b[0], growth, raw, "ok" if ok else "SUPER-LINEAR"))
    if bad:
        print("%d pass(es) do more than linear work (limit %.2f x linear)" % (bad, SLACK))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
