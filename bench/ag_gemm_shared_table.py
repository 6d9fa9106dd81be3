#!/usr/bin/env python3
"""ag_gemm_shared_table.py OUT_DIR [--rs] - the table of bench/ag_gemm_shared.sh from its JSON
files: per d, TFLOP/s per device (all ranks sharing the GPU) of the pipeline, the
--defer-send-wait pipeline, the compute-only program, gather-then-GEMM and PyTorch, the
pipeline / compute-only ratio, the check verdicts, and the device's peak. With --rs, the table
of bench/rs_gemm_shared.sh (GEMM + reduce-scatter): its "gather" files hold the ring on one
stream (no overlap of a rank's GEMMs with its own exchanges). The caption says whether the
ranks ran under CUDA MPS (OUT_DIR/mps.txt, written by shared_gpu.sh: "MPS: on/off")."""
import glob
import json
import os
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def load_text(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def main():
    out = sys.argv[1]
    ds = sorted({int(os.path.basename(p)[7:-5]) for p in glob.glob(os.path.join(out, "strip-d*.json"))})
    rows = []
    peak = None
    dev = None
    for d in ds:
        r = {k: load(os.path.join(out, f"{k}-d{d}.json")) for k in ("pipe", "defer", "strip", "gather", "torch")}
        def tf(x):
            return x.get("tflops_per_device") if x else None
        for x in (r["pipe"], r["strip"]):
            if x and x.get("peak_tflops"):
                peak = x["peak_tflops"]
                dev = x.get("device", {})
        best = max([v for v in (tf(r["pipe"]), tf(r["defer"])) if v] or [0])
        ratio = best / tf(r["strip"]) if tf(r["strip"]) and best else None
        rows.append((d, r, ratio))
    third = ("ring on one stream (CUDA IPC)" if "--rs" in sys.argv[2:]
             else "gather-then-GEMM (CUDA IPC)")
    print("| ranks sharing the GPU | pipeline | pipeline, deferred send wait | compute-only | "
          f"{third} | PyTorch, same GEMMs | best pipeline / compute-only | checks |")
    print("|---|---|---|---|---|---|---|---|")
    for d, r, ratio in rows:
        def cell(x):
            if not x:
                return "not run"
            v = x.get("tflops_per_device")
            t = x.get("time_ms")
            ms = t.get("mean") if isinstance(t, dict) else x.get("mean_ms")
            return f"{v:.0f} ({ms:.1f} ms)" if v is not None and ms else "?"
        checks = ", ".join(f"{k} {r[k].get('check')}" for k in ("pipe", "defer", "gather") if r[k])
        rt = f"{ratio:.3f}" if ratio else "?"
        print(f"| {d} | {cell(r['pipe'])} | {cell(r['defer'])} | {cell(r['strip'])} | "
              f"{cell(r['gather'])} | {cell(r['torch'])} | {rt} | {checks} |")
    mps = (load_text(os.path.join(out, "mps.txt")) or "not recorded").strip()
    print(f"\nMPS: {mps} (without MPS the GPU time-slices the ranks' processes; "
          "docs/benchmarks.md, \"Ranks sharing one GPU\").")
    if peak:
        print(f"\nTFLOP/s per device (the sum over the ranks sharing it) and mean time per iteration; "
              f"device peak {peak:.0f} TFLOP/s ({dev.get('name')}, {dev.get('sm_count')} SMs at "
              f"{dev.get('sm_clock_mhz')} MHz, dense bf16).")


if __name__ == "__main__":
    main()
