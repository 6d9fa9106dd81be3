#!/usr/bin/env python3
"""plot_bench.py — draw a hir-run --bench result (the --bench-json file) with matplotlib.

    python3 bench/plot_bench.py RESULT.json -o FILE.png|FILE.svg

Left: the time of every timed iteration (slowest rank, wall clock barrier to barrier) with its
median. Right: each rank's device-event interval, median with a bar from min to max. The title
names the program, backend, ranks and mode, the mean and, with GEMMs, the TFLOP/s (and the
device peak when known). hir-run --bench-plot=FILE runs this script."""
import argparse
import json
import os
import sys


def main():
    ap = argparse.ArgumentParser(description="Plot a hir-run --bench-json result.")
    ap.add_argument("json", help="the file hir-run --bench-json wrote")
    ap.add_argument("-o", "--output", required=True, help="FILE.png or FILE.svg")
    a = ap.parse_args()
    ext = os.path.splitext(a.output)[1].lower()
    if ext not in (".png", ".svg"):
        print("plot_bench.py: error: %s: the plot is a .png or a .svg file" % a.output, file=sys.stderr)
        return 2
    try:
        with open(a.json) as f:
            r = json.load(f)
        iters = r["per_iter_ms"]
        ranks = r.get("per_rank", [])
    except (OSError, ValueError, KeyError) as e:
        print("plot_bench.py: error: %s: not a hir-run --bench-json result (%s)" % (a.json, e),
              file=sys.stderr)
        return 1
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_bench.py: error: matplotlib is not installed (Debian: apt-get install "
              "python3-matplotlib; scripts/setup installs it)", file=sys.stderr)
        return 1

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2), gridspec_kw={"width_ratios": [3, 2]})
    xs = list(range(len(iters)))
    left.plot(xs, iters, marker=".", linewidth=1, color="tab:blue", label="iteration")
    med = r.get("time_ms", {}).get("median")
    if med is not None:
        left.axhline(med, color="tab:orange", linestyle="--", linewidth=1, label="median %.4g ms" % med)
    left.set_xlabel("timed iteration")
    left.set_ylabel("ms (wall, barrier to barrier, slowest rank)")
    left.set_ylim(bottom=0)
    left.legend(loc="upper right", fontsize="small")
    left.grid(alpha=0.3)

    if ranks:
        q = [x["rank"] for x in ranks]
        medv = [x["device_ms"]["median"] for x in ranks]
        lo = [x["device_ms"]["median"] - x["device_ms"]["min"] for x in ranks]
        hi = [x["device_ms"]["max"] - x["device_ms"]["median"] for x in ranks]
        right.bar(q, medv, color="tab:green", alpha=0.7, label="median")
        right.errorbar(q, medv, yerr=[lo, hi], fmt="none", ecolor="black", capsize=3, label="min..max")
        right.set_xticks(q)
        right.legend(loc="upper right", fontsize="small")
    right.set_xlabel("rank")
    right.set_ylabel("ms (device events)")
    right.set_ylim(bottom=0)
    right.grid(alpha=0.3, axis="y")

    title = "%s — %s backend, %d rank%s, %s, %d timed iterations: mean %.4g ms" % (
        os.path.basename(r.get("program", "?")), r.get("backend", "?"), r.get("ranks", 0),
        "" if r.get("ranks") == 1 else "s", r.get("mode", "?"), r.get("iters", len(iters)),
        r.get("time_ms", {}).get("mean", float("nan")))
    if r.get("gemms"):
        title += ", %.1f TFLOP/s per device" % r.get("tflops_per_device", 0)
        if r.get("peak_tflops"):
            title += " of %.0f peak" % r["peak_tflops"]
    fig.suptitle(title, fontsize="medium")
    fig.tight_layout()
    try:
        fig.savefig(a.output)
    except OSError as e:
        print("plot_bench.py: error: cannot write %s: %s" % (a.output, e.strerror), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
