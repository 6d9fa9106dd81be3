#!/usr/bin/env python3
"""pass_scaling.py — how each hir-opt pass scales with the size of its input program.

    python3 bench/pass_scaling.py [--build DIR] [--sizes 10000,100000,1000000] [--repeat 3]
                                  [--out DIR] [--only NAME,...]

For every size N (statements of the pass's input, nested ones included) it generates an input
of realistic shape with bench/gen_large.py (lowered inputs are made by running hir-opt's own
--stream-parallel over generated blocks), runs `hir-opt --no-verify-each --timing
--pass-statistics PASS INPUT -o /dev/null` --repeat times and keeps the best wall time of the
pass (the --timing line of the pass, so parsing and printing are not counted; the verifier
is its "Verifier" line; --print-form, which has no line of its own, is the "Rest" line; until
2026-12-04 Rest also held reading the file and freeing the program, which are now the "Input"
and "Free" lines) and the peak RSS of the whole process (/usr/bin/time %M) of that
run. It fits the growth exponent k of time ~ N^k by least squares over the sizes (1: linear,
2: quadratic) and writes, under --out (default bench/results/pass_scaling):
results.json, table.md (the Markdown table of docs/benchmarks.md) and pass_scaling.png (one
log-log panel per pass, matplotlib).

Timing is only measured here, never asserted by a test; the work itself is pinned by the
ctest passes.linear_work (statements visited per pass, counted).
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GEN = os.path.join(ROOT, "bench", "gen_large.py")

# name, input kind, hir-opt arguments, --timing line
CASES = [
    ("verify", "spc", [], "Verifier"),
    ("print-form=2026", "spc", ["--print-form=2026"], "Rest"),
    ("canonicalize", "spc", ["--canonicalize"], "canonicalize"),
    ("backend=nccl", "spc", ["--backend=nccl"], "backend"),
    ("backend=auto", "spc", ["--pass-pipeline=backend{kind=auto nodes=2}"], "backend"),
    ("backend=cuda", "spn", ["--backend=cuda"], "backend"),
    ("hoist-handle-exchange", "spc", ["--hoist-handle-exchange"], "hoist-handle-exchange"),
    ("defer-send-wait", "spc", ["--defer-send-wait"], "defer-send-wait"),
    ("strip-communication", "spc", ["--strip-communication"], "strip-communication"),
    ("convert-to-communication", "blocks", ["--convert-to-communication"], "convert-to-communication"),
    ("pipeline-fallback", "blocks", ["--pipeline-fallback"], "pipeline-fallback"),
    ("stream-parallel", "blocks", ["--stream-parallel=nccl"], "stream-parallel"),
    ("stream-parallel (one long loop)", "chain", ["--stream-parallel=cuda"], "stream-parallel"),
]

# statements of the pass's input per generated unit
PER_UNIT = {"blocks": 3, "chain": 1, "spc": 22, "spn": 22}


def make_input(kind, n, hir_opt, work):
    path = os.path.join(work, "%s-%d.hir" % (kind, n))
    if os.path.exists(path):
        return path
    units = max(1, round(n / PER_UNIT[kind]))
    if kind in ("blocks", "chain"):
        subprocess.run([sys.executable, GEN, kind, str(units), "-o", path], check=True)
    else:
        src = os.path.join(work, "src-%s-%d.hir" % (kind, n))
        subprocess.run([sys.executable, GEN, "blocks", str(units), "-o", src], check=True)
        backend = "cuda" if kind == "spc" else "nccl"
        subprocess.run([hir_opt, "--no-verify-each", "--stream-parallel=" + backend, src, "-o", path],
                       check=True)
        os.remove(src)
    return path


def run_once(hir_opt, args, path, line):
    cmd = ["/usr/bin/time", "-f", "RSS_KB %M", hir_opt, "--no-verify-each", "--timing",
           "--pass-statistics"] + args + [path, "-o", "/dev/null"]
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode:
        raise RuntimeError("%s failed:\n%s" % (" ".join(cmd), r.stderr[-2000:]))
    err = r.stderr
    m = re.search(r"^\s+([0-9.]+) \(\s*[0-9.]+%\)\s+" + re.escape(line) + r"\s*$", err, re.M)
    if not m:
        raise RuntimeError("no '%s' line in the --timing report of %s" % (line, " ".join(cmd)))
    secs = float(m.group(1))
    rss = int(re.search(r"RSS_KB (\d+)", err).group(1))
    st = re.search(r"^  \S+\s+\d+\s+(\d+)\s+(\d+)\s+[0-9.]+\s*$", err, re.M)
    stmts = int(st.group(1)) if st else None
    return secs, rss, stmts


def fit(ns, ts):
    pts = [(math.log(n), math.log(t)) for n, t in zip(ns, ts) if t > 0]
    if len(pts) < 2:
        return float("nan")
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    return sum((x - mx) * (y - my) for x, y in pts) / sxx if sxx else float("nan")


def plot(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    k = len(results)
    cols = 4
    rows = (k + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3.2 * rows), squeeze=False)
    for ax, r in zip([a for row in axes for a in row], results):
        ns = [p["stmts"] for p in r["points"]]
        ts = [p["seconds"] * 1e3 for p in r["points"]]
        ax.loglog(ns, ts, "o-", label="measured")
        if ts and ts[0] > 0:
            ax.loglog(ns, [ts[0] * n / ns[0] for n in ns], "--", color="grey", label="linear")
        ax.set_title("%s (k = %.2f)" % (r["name"], r["exponent"]), fontsize=9)
        ax.set_xlabel("statements", fontsize=8)
        ax.set_ylabel("ms", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=7)
    for ax in [a for row in axes for a in row][k:]:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(path, dpi=90)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="build directory (default build/)")
    ap.add_argument("--sizes", default="10000,100000,1000000", help="statements per input, comma separated")
    ap.add_argument("--repeat", type=int, default=3, help="runs per point; the best is kept (default 3)")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "pass_scaling"))
    ap.add_argument("--only", help="comma separated case names")
    a = ap.parse_args()
    hir_opt = os.path.join(a.build, "tools", "hir-opt")
    if not os.access(hir_opt, os.X_OK):
        print("pass_scaling.py: error: %s not found (build first: scripts/setup)" % hir_opt, file=sys.stderr)
        return 1
    try:
        sizes = [int(s) for s in a.sizes.split(",")]
    except ValueError:
        print("pass_scaling.py: error: --sizes takes integers, not '%s'" % a.sizes, file=sys.stderr)
        return 2
    cases = CASES
    if a.only:
        want = a.only.split(",")
        cases = [c for c in CASES if c[0] in want]
        if len(cases) != len(want):
            print("pass_scaling.py: error: unknown case in --only (cases: %s)" %
                  ", ".join(c[0] for c in CASES), file=sys.stderr)
            return 2
    os.makedirs(a.out, exist_ok=True)
    results = []
    with tempfile.TemporaryDirectory(prefix="hir-passes.") as work:
        stmts_of = {}
        for name, kind, args, line in cases:
            points = []
            for n in sizes:
                path = make_input(kind, n, hir_opt, work)
                best = None
                for _ in range(a.repeat):
                    secs, rss, stmts = run_once(hir_opt, args, path, line)
                    if best is None or secs < best[0]:
                        best = (secs, rss, stmts)
                stmts = best[2] if best[2] is not None else stmts_of.get(path)
                if stmts is None:   # verify / print-form: count with a pass that changes nothing
                    stmts = run_once(hir_opt, ["--defer-send-wait"] if kind != "blocks" else
                                     ["--canonicalize"], path, "Parser")[2]
                stmts_of[path] = stmts
                points.append({"target": n, "stmts": stmts, "seconds": best[0], "rss_kb": best[1]})
                print("%-32s %9d stmts %10.2f ms %8.1f MB" % (name, stmts, best[0] * 1e3, best[1] / 1024.0),
                      flush=True)
            k = fit([p["stmts"] for p in points], [p["seconds"] for p in points])
            results.append({"name": name, "args": args, "input": kind, "points": points, "exponent": k})
            # after every case, so that a run stopped early keeps what it measured
            with open(os.path.join(a.out, "results.json"), "w") as f:
                json.dump({"sizes": sizes, "repeat": a.repeat, "results": results}, f, indent=1)
    head = "| pass (input) | " + " | ".join("%s stmts: ms, MB" % format(n, ",") for n in sizes) + " | exponent k |"
    rows = [head, "|" + "---|" * (len(sizes) + 2)]
    for r in results:
        cells = ["%.1f, %.0f" % (p["seconds"] * 1e3, p["rss_kb"] / 1024.0) for p in r["points"]]
        rows.append("| %s (%s) | %s | %.2f |" % (r["name"], r["input"], " | ".join(cells), r["exponent"]))
    table = "\n".join(rows) + "\n"
    with open(os.path.join(a.out, "table.md"), "w") as f:
        f.write(table)
    print(table)
    try:
        plot(results, os.path.join(a.out, "pass_scaling.png"))
    except ImportError:
        print("pass_scaling.py: matplotlib missing: no plot (scripts/setup installs it)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
