"""gemm_why.py - why does torch's default bf16 F.linear beat hir's cuBLASLt GEMM? (issue 28)

For each m (k=16384, n=8192, bf16, no bias, one rank) this runs, each in its own process:
  torch default      F.linear (torch picks cuBLAS or cuBLASLt itself)
  torch cublaslt     the same with torch.backends.cuda.preferred_blas_library("cublaslt")
  hir                hir-cuda-selftest --bench-gemm (cuBLASLt, the heuristic's first choice)
timing each the same way (CUDA events around back-to-back GEMMs after warm-ups, median of
rounds), and records the kernel each one launches: cuBLASLt's own trace (CUBLASLT_LOG_LEVEL=2
prints the algorithm of every matmul it runs) and, for torch, the kernel names from
torch.profiler. Usage:
  python3 bench/gemm_why.py --selftest BIN/hir-cuda-selftest --out DIR [--m 4096,8192,32768]
Writes DIR/gemm-why.log (everything) and prints a summary.
"""
import argparse
import os
import re
import subprocess
import sys

TORCH_CHILD = r"""
import os, sys, statistics, torch, torch.nn.functional as F
m, k, n, mode, iters = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
if mode == "cublaslt":
    torch.backends.cuda.preferred_blas_library("cublaslt")
torch.manual_seed(0)
a = (torch.rand(m, k, device="cuda") * 2 - 1).to(torch.bfloat16)
w = (torch.rand(n, k, device="cuda") * 2 - 1).to(torch.bfloat16)
for _ in range(3):
    F.linear(a, w)
torch.cuda.synchronize()
ms = []
for r in range(5):
    s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(iters):
        F.linear(a, w)
    e.record(); torch.cuda.synchronize()
    ms.append(s.elapsed_time(e) / iters)
print("TIMES", mode, m, " ".join(f"{x:.4f}" for x in ms), flush=True)
from torch.profiler import profile, ProfilerActivity
with profile(activities=[ProfilerActivity.CUDA]) as prof:
    F.linear(a, w); torch.cuda.synchronize()
for ev in prof.events():
    if ev.device_type.name == "CUDA" or "gemm" in ev.name.lower() or "sm90" in ev.name:
        print("KERNEL", mode, m, ev.name, flush=True)
print("BLAS", mode, torch.backends.cuda.preferred_blas_library(), flush=True)
"""


def run(cmd, env, log, tag):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    out = p.stdout + p.stderr
    with open(log, "a") as f:
        f.write(f"==== {tag}: {' '.join(cmd[:6])} (rc={p.returncode})\n{out}\n")
    return out


def algo_lines(text):
    keep = []
    for line in text.splitlines():
        if "cublasLtMatmul" in line and ("algo" in line.lower() or "tile" in line.lower()):
            keep.append(line.strip())
    # the same call repeats: keep distinct lines
    seen, uniq = set(), []
    for line in keep:
        key = re.sub(r"\[\d{4}-[^\]]*\]|\b0x[0-9a-f]+\b", "", line)
        if key not in seen:
            seen.add(key)
            uniq.append(line)
    return uniq[:6]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--selftest", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--m", default="4096,8192,32768")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    log = os.path.join(args.out, "gemm-why.log")
    open(log, "w").close()
    k, n = 16384, 8192
    for m in [int(x) for x in args.m.split(",")]:
        iters = max(10, int(200 * 4096 / m))
        for mode in ("default", "cublaslt"):
            env = dict(os.environ)
            out = run([sys.executable, "-c", TORCH_CHILD, str(m), str(k), str(n), mode,
                       str(iters)], env, log, f"torch {mode} m={m}")
            for line in out.splitlines():
                if line.startswith(("TIMES", "KERNEL", "BLAS")):
                    print(line, flush=True)
            env["CUBLASLT_LOG_LEVEL"] = "2"
            out = run([sys.executable, "-c", TORCH_CHILD, str(m), str(k), str(n), mode, "1"],
                      env, log, f"torch {mode} m={m} lt-log")
            for line in algo_lines(out):
                print(f"LTALGO torch-{mode} {m} {line[:400]}", flush=True)
        env = dict(os.environ)
        out = run([args.selftest, "--bench-gemm", str(m), str(k), str(n), "--rounds", "5",
                   "--iters", str(iters)], env, log, f"hir m={m}")
        for line in out.splitlines():
            if line.startswith("gemm-bench"):
                print("HIR", m, line, flush=True)
        env["CUBLASLT_LOG_LEVEL"] = "2"
        out = run([args.selftest, "--bench-gemm", str(m), str(k), str(n), "--rounds", "1",
                   "--iters", "1"], env, log, f"hir m={m} lt-log")
        for line in algo_lines(out):
            print(f"LTALGO hir {m} {line[:400]}", flush=True)


if __name__ == "__main__":
    main()
