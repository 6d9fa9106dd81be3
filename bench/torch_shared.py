#!/usr/bin/env python3
"""torch_shared.py - PyTorch doing the GEMMs of AG+linear in D processes that share one GPU,
timed the way `hir-run --bench` times (one clock): before each iteration every process
synchronizes its device and meets the others at a barrier; the iteration's time is rank 0's wall
clock from leaving that barrier to leaving the barrier after every process has synchronized.
Each process computes what one rank of the hir program computes: F.linear of the gathered
[m, k] input with the [n, k] weight (bf16), so D processes do D x 2·m·n·k FLOP per iteration.
Two input sets alternate (the second is the first x 2), as with hir-run --vary-inputs.

  mpirun -np D python3 bench/torch_shared.py --m 32768 --k 16384 --n 8192 --json out.json
"""
import argparse
import json
import os
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--m", type=int, required=True)
    ap.add_argument("--k", type=int, required=True)
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--port", type=int, default=29533)
    ap.add_argument("--json")
    a = ap.parse_args()
    rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("RANK", 0)))
    size = int(os.environ.get("OMPI_COMM_WORLD_SIZE", os.environ.get("WORLD_SIZE", 1)))
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{a.port}", rank=rank,
                            world_size=size)
    dev = torch.device("cuda", 0)
    g = torch.Generator(device=dev).manual_seed(1234 + rank)
    x = (torch.rand(a.m, a.k, device=dev, generator=g) * 2 - 1).to(torch.bfloat16)
    w = (torch.rand(a.n, a.k, device=dev, generator=g) * 2 - 1).to(torch.bfloat16)
    sets = [(x, w), (x * 2, w * 2)]
    times = []
    for i in range(a.warmup + a.iters):
        xi, wi = sets[i % 2]
        torch.cuda.synchronize()
        dist.barrier()
        t0 = time.perf_counter()
        y = F.linear(xi, wi)
        torch.cuda.synchronize()
        dist.barrier()
        t1 = time.perf_counter()
        if i >= a.warmup:
            times.append((t1 - t0) * 1e3)
    # a spot check that the product is a product (one row against float64)
    ref = (xi[:1].double() @ wi.double().t()).float()
    err = ((y[:1].float() - ref).abs().max() / ref.abs().max()).item()
    flops = 2.0 * a.m * a.n * a.k
    mean = sum(times) / len(times)
    s = sorted(times)
    if rank == 0:
        r = {"ranks": size, "m": a.m, "k": a.k, "n": a.n, "mean_ms": mean,
             "median_ms": s[len(s) // 2], "min_ms": s[0], "max_ms": s[-1],
             "flops_per_rank": flops, "tflops_per_rank": flops / (mean * 1e-3) / 1e12,
             "tflops_per_device": size * flops / (mean * 1e-3) / 1e12,
             "row0_rel_err": err, "torch": torch.__version__,
             "device": torch.cuda.get_device_name(0), "clock": "wall, barrier to barrier"}
        print(json.dumps(r))
        if a.json:
            with open(a.json, "w") as f:
                json.dump(r, f, indent=1)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
