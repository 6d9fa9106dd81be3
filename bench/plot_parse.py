#!/usr/bin/env python3
"""plot_parse.py — draw the table bench/parse_throughput.sh prints (saved to a file).

    python3 bench/plot_parse.py RESULT.txt -o FILE.png|FILE.svg

Left: MB/s of hir-opt and mlir-opt against the input size (from CPU time, user+sys, which is
steadier than wall time on a shared machine, and from wall time, dashed). Right: peak RSS as a
multiple of the input, with the goal of 2x drawn."""
import argparse
import sys


def read_rows(path):
    rows = []
    with open(path) as f:
        for line in f:
            if line.startswith("#") or "|" not in line or line.startswith("statements"):
                continue
            cols = line.replace("|", " ").replace("x", " ").split()
            # statements MB hir_s hir_cpu hir_MB/s hir_RSS hir_xin mlir_s mlir_cpu mlir_MB/s
            # mlir_RSS mlir_xin ratio_wall ratio_cpu
            if len(cols) != 14:
                continue
            v = [float(c) for c in cols]
            rows.append({"mb": v[1], "hir_s": v[2], "hir_cpu": v[3], "hir_xin": v[6],
                         "mlir_s": v[7], "mlir_cpu": v[8], "mlir_xin": v[11]})
    return rows


def main():
    ap = argparse.ArgumentParser(description="Plot bench/parse_throughput.sh's table.")
    ap.add_argument("table", help="the saved output of bench/parse_throughput.sh")
    ap.add_argument("-o", "--output", required=True, help="FILE.png or FILE.svg")
    a = ap.parse_args()
    try:
        rows = read_rows(a.table)
    except OSError as e:
        print("plot_parse.py: error: %s" % e, file=sys.stderr)
        return 1
    if not rows:
        print("plot_parse.py: error: %s: no rows of bench/parse_throughput.sh" % a.table,
              file=sys.stderr)
        return 1
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    mb = [r["mb"] for r in rows]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    for tool, colour in (("hir", "tab:blue"), ("mlir", "tab:orange")):
        name = tool + "-opt"
        ax1.plot(mb, [r["mb"] / max(r[tool + "_cpu"], 1e-3) for r in rows], "o-", color=colour,
                 label=name + " (CPU time)")
        ax1.plot(mb, [r["mb"] / max(r[tool + "_s"], 1e-3) for r in rows], "o--", color=colour,
                 alpha=0.5, label=name + " (wall time)")
        ax2.plot(mb, [r[tool + "_xin"] for r in rows], "o-", color=colour, label=name)
    ax1.set_xscale("log")
    ax1.set_xlabel("input MB")
    ax1.set_ylabel("MB/s (round trip: parse, verify, print)")
    ax1.legend(fontsize=8)
    ax1.grid(alpha=0.3)
    ax2.axhline(2.0, color="grey", linestyle=":", label="goal: 2x the input")
    ax2.set_xscale("log")
    ax2.set_xlabel("input MB")
    ax2.set_ylabel("peak RSS / input size")
    ax2.legend(fontsize=8)
    ax2.grid(alpha=0.3)
    fig.suptitle("hir-opt vs mlir-opt-14, bench/parse_throughput.sh")
    fig.tight_layout()
    fig.savefig(a.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
