"""gemm_torch.py - torch.nn.functional.linear bf16 TFLOP/s, the reference the CUDA backend's
GEMM is held to (>= 0.98x). Same protocol as `hir-cuda-selftest --bench-gemm M K N`: random
data, 5 warm-ups, 50 timed iterations between two CUDA events, mean time per GEMM.
Usage: python3 bench/gemm_torch.py [M K N ...]   (default: the two shapes of docs/cuda-backend.md)
"""
import sys

import torch
import torch.nn.functional as F


def bench(m, k, n, warmup=5, iters=50):
    torch.backends.cuda.matmul.allow_tf32 = False
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    for _ in range(warmup):
        F.linear(a, w)
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        F.linear(a, w)
    stop.record()
    torch.cuda.synchronize()
    ms = start.elapsed_time(stop) / iters
    tflops = 2.0 * m * n * k / (ms * 1e-3) / 1e12
    print(f"torch linear bf16 m={m} k={k} n={n}: {ms:.3f} ms, {tflops:.1f} TFLOP/s", flush=True)
    return tflops


def main():
    args = [int(x) for x in sys.argv[1:]]
    shapes = [tuple(args[i:i + 3]) for i in range(0, len(args) - 2, 3)] or [
        (4096, 16384, 8192), (32768, 16384, 8192)]
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}", flush=True)
    for m, k, n in shapes:
        bench(m, k, n)


if __name__ == "__main__":
    main()
