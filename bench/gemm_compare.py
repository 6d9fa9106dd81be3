"""gemm_compare.py - the same-method GEMM comparison of bench/gemm_compare.sh (run that).

Per shape (bf16 linear out = A @ W^T, A [m, k], W [n, k], no bias, data uniform in [-1, 1)),
ROUNDS rounds, each round in this order:
  hir      hir-cuda-selftest --bench-gemm M K N --tune --rounds 1 --iters I: a fresh process;
           "untuned" and "tuned" (GEMM tuning on: candidates timed at the first GEMM, untimed)
           interleaved in it; each variant's output checked against the host (a FAIL makes the
           row FAILED: an unchecked figure is no result)
  torch    F.linear, TunableOp off
  tunable  F.linear, TunableOp on (torch.cuda.tunable; tuned at its first call in round 1,
           untimed, reused after)
Every variant: 3 warm-ups, then CUDA events around I back-to-back GEMMs, time per GEMM. The
table gives the median over rounds, min-max, TFLOP/s, percent of the device's dense bf16 peak
and the ratio to torch default.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

SHAPES = [(4096, 16384, 8192), (8192, 16384, 8192), (32768, 16384, 8192)]
# dense bf16 tensor-core peak, TFLOP/s (vendor datasheets, without sparsity)
PEAKS = [("H200", 989.0), ("H100 PCIe", 756.0), ("H100 NVL", 835.0), ("H100", 989.0),
         ("A100", 312.0)]


def log(f, line):
    print(line, flush=True)
    f.write(line + "\n")
    f.flush()


def device_lines():
    q = "name,clocks.sm,clocks.max.sm,clocks.mem,power.limit,driver_version"
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={q}", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as exc:
        out = f"nvidia-smi failed: {exc}"
    return out.splitlines()[:1] or ["nvidia-smi: no output"]


def peak_of(name):
    for key, peak in PEAKS:
        if key in name:
            return peak
    return None


def iters_for(m, k, n):
    """Back-to-back GEMMs per timed block: about 0.2 s at 700 TFLOP/s, 10 to 100."""
    est = 2.0 * m * k * n / 7e14
    return max(10, min(100, int(0.2 / est)))


def run_hir(selftest, m, k, n, iters, f):
    cmd = [selftest, "--bench-gemm", str(m), str(k), str(n), "--tune", "--rounds", "1",
           "--iters", str(iters)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    for line in (p.stdout + p.stderr).splitlines():
        log(f, "  hir| " + line)
    res = {}
    for line in p.stdout.splitlines():
        mt = re.match(r"gemm-bench variant=(\w+) .* check=(\w+) rounds_ms=([\d.,]+)", line)
        if mt:
            res[mt.group(1)] = (float(mt.group(3).split(",")[0]), mt.group(2) == "PASS")
        mt = re.match(r"gemm-tune: (.*)", line)
        if mt:
            res["tune"] = mt.group(1)
    if p.returncode != 0 and not res:
        raise RuntimeError(f"{' '.join(cmd)} failed with {p.returncode}")
    return res


def time_torch(torch, F, a, w, iters):
    for _ in range(3):
        F.linear(a, w)
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        F.linear(a, w)
    stop.record()
    torch.cuda.synchronize()
    return start.elapsed_time(stop) / iters


def shape_rounds(args, torch, F, m, k, n, f):
    """{variant: [ms per round]}, {variant: all checks passed}, tune notes."""
    iters = iters_for(m, k, n)
    log(f, f"shape m={m} k={k} n={n}: {args.rounds} rounds x {iters} GEMMs")
    a = torch.rand(m, k, device="cuda", dtype=torch.bfloat16) * 2 - 1
    w = torch.rand(n, k, device="cuda", dtype=torch.bfloat16) * 2 - 1
    times = {"hir untuned": [], "hir tuned": [], "torch": [], "torch TunableOp": []}
    checked = {"hir untuned": True, "hir tuned": True}
    notes = []
    tunable = torch.cuda.tunable
    for r in range(args.rounds):
        torch.cuda.synchronize()
        res = run_hir(args.selftest, m, k, n, iters, f)
        for var, key in (("hir untuned", "untuned"), ("hir tuned", "tuned")):
            if key in res:
                times[var].append(res[key][0])
                checked[var] = checked[var] and res[key][1]
            else:
                checked[var] = False
        if "tune" in res:
            notes.append(res["tune"])
        tunable.enable(False)
        times["torch"].append(time_torch(torch, F, a, w, iters))
        tunable.enable(True)
        tunable.tuning_enable(True)
        if r == 0:
            t0 = time.time()
            F.linear(a, w)      # TunableOp tunes this shape here, untimed
            torch.cuda.synchronize()
            notes.append(f"TunableOp tuning {1e3 * (time.time() - t0):.0f} ms")
        times["torch TunableOp"].append(time_torch(torch, F, a, w, iters))
        tunable.enable(False)
        log(f, f"  round {r + 1}: " + ", ".join(
            f"{v} {t[-1]:.4f} ms" for v, t in times.items() if t))
    del a, w
    torch.cuda.empty_cache()
    return times, checked, notes


def table(rows, peak):
    head = ("| m | variant | median ms | min-max ms | TFLOP/s | % of peak | / torch default "
            "| check |\n|---|---|---|---|---|---|---|---|")
    out = [head]
    for (m, k, n), times, checked in rows:
        flop = 2.0 * m * k * n
        base = statistics.median(times["torch"]) if times["torch"] else None
        for var, t in times.items():
            if not t:
                out.append(f"| {m} | {var} | - | - | - | - | - | no result |")
                continue
            med = statistics.median(t)
            tf = flop / (med * 1e-3) / 1e12
            pct = f"{100 * tf / peak:.1f}" if peak else "?"
            ratio = f"{base / med:.3f}" if base else "-"
            chk = ("PASS" if checked[var] else "**FAILED**") if var in checked else "(torch)"
            out.append(f"| {m} | {var} | {med:.4f} | {min(t):.4f}-{max(t):.4f} | {tf:.1f} "
                       f"| {pct} | {ratio} | {chk} |")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--selftest", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    import torch
    import torch.nn.functional as F
    torch.backends.cuda.matmul.allow_tf32 = False
    os.makedirs(args.out, exist_ok=True)
    # TunableOp's results file goes with the outputs, not into the working directory
    torch.cuda.tunable.set_filename(os.path.join(os.path.abspath(args.out),
                                                 "tunableop_results.csv"))
    with open(os.path.join(args.out, "gemm-compare.log"), "w") as f:
        smi = device_lines()
        name = torch.cuda.get_device_name()
        peak = peak_of(name)
        log(f, f"date {time.strftime('%Y-%m-%d %H:%M:%S %Z')}")
        log(f, f"nvidia-smi (name, SM clock, max SM clock, memory clock, power limit, driver): "
               f"{smi[0]}")
        log(f, f"torch {torch.__version__}, CUDA {torch.version.cuda}, device {name}, dense "
               f"bf16 peak {peak if peak else 'unknown'} TFLOP/s")
        rows, notes = [], []
        t0 = time.time()
        for m, k, n in SHAPES:
            times, checked, nt = shape_rounds(args, torch, F, m, k, n, f)
            rows.append(((m, k, n), times, checked))
            notes.append(f"m={m}: " + "; ".join(dict.fromkeys(nt)))
        log(f, f"total {time.time() - t0:.0f} s")
        md = (f"# GEMM, same method (bench/gemm_compare.sh)\n\n"
              f"{time.strftime('%Y-%m-%d')}, {name} (nvidia-smi: {smi[0]}), torch "
              f"{torch.__version__}, CUDA {torch.version.cuda}; bf16 linear k=16384 n=8192, "
              f"no bias, one rank; dense bf16 peak {peak if peak else 'unknown'} TFLOP/s. "
              f"Each figure: median over {args.rounds} interleaved rounds of CUDA events "
              f"around back-to-back GEMMs after 3 warm-ups. hir checked in every round "
              f"(hir-cuda-selftest, row-wise Freivalds against the host).\n\n"
              + table(rows, peak) + "\n\nTuning cost per process: " + " / ".join(notes) + "\n")
        with open(os.path.join(args.out, "gemm-compare.md"), "w") as g:
            g.write(md)
        print(md)
        bad = any(not all(c.values()) for _, _, c in rows)
        return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
