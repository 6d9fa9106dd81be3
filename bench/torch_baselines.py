"""torch_baselines.py - the PyTorch side of the AG+GEMM comparison, timed exactly like
`hir-run --bench` (performance.md): random bf16 data, 5 warm-ups and 50 timed iterations, before
each iteration a device synchronize and a barrier across ranks, CUDA events around the
iteration, the slowest rank's time per iteration (all-reduce MAX), mean over iterations.

Baselines (each returns a dict; a baseline that cannot run returns {"status": "not run: why"}):
  gemm       torch.nn.functional.linear on the gathered shape [m, k] x [n, k]^T: the ceiling
  eager      dist.all_gather_into_tensor of the [m/d, k] shards, then F.linear
  symm_mem   torch.ops.symm_mem.fused_all_gather_matmul (needs 2+ GPUs, one process per GPU)

Usage (also imported by bench/ag_gemm.py):
  python3 bench/torch_baselines.py --shapes 32768x16384x8192 [--d D] [--json out.json]
With one GPU the eager baseline runs as a one-rank process group (the gather is a local copy).
"""
import argparse
import json
import math
import os
import socket
import sys

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
os.environ.setdefault("NVSHMEM_DISABLE_NVLS", "1")

WARMUP, ITERS = 5, 50


def stats(times_ms, flops):
    n = len(times_ms)
    mean = sum(times_ms) / n
    var = sum((t - mean) ** 2 for t in times_ms) / (n - 1) if n > 1 else 0.0
    s = sorted(times_ms)
    med = s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])
    return {"status": "ok", "mean_ms": mean, "median_ms": med, "min_ms": s[0], "max_ms": s[-1],
            "stddev_ms": math.sqrt(var), "flops_per_rank": flops,
            "tflops": flops / (mean * 1e-3) / 1e12, "warmup": WARMUP, "iters": n}


def timed(fn, flops, dist=None, warmup=WARMUP, iters=ITERS):
    """Per-iteration timing with the hir-run --bench protocol."""
    import torch
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    times = []
    for i in range(warmup + iters):
        torch.cuda.synchronize()
        if dist is not None:
            dist.barrier()
            torch.cuda.synchronize()
        start.record()
        fn()
        stop.record()
        torch.cuda.synchronize()
        if i >= warmup:
            times.append(start.elapsed_time(stop))
    if dist is not None and dist.get_world_size() > 1:
        t = torch.tensor(times, device="cuda", dtype=torch.float64)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        times = t.tolist()
    return stats(times, flops)


def gemm_alone(m, k, n, bias=False):
    import torch
    import torch.nn.functional as F
    torch.backends.cuda.matmul.allow_tf32 = False
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, device="cuda", dtype=torch.bfloat16) if bias else None
    r = timed(lambda: F.linear(a, w, b), 2.0 * m * n * k)
    del a, w, b
    torch.cuda.empty_cache()
    return r


def _free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def _dist_worker(rank, world, port, shapes, bias, out_path):
    """One process per GPU: the eager and symmetric-memory baselines for every shape."""
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world, device_id=torch.device("cuda", rank))
    results = []
    for (m, k, n) in shapes:
        row = {"m": m, "k": k, "n": n, "d": world}
        if m % world:
            row["eager"] = {"status": f"not run: m={m} not divisible by {world} ranks"}
            results.append(row)
            continue
        g = torch.Generator(device="cuda").manual_seed(1234 + rank)
        a_shard = torch.randn(m // world, k, device="cuda", dtype=torch.bfloat16, generator=g)
        w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, device="cuda", dtype=torch.bfloat16) if bias else None
        a_full = torch.empty(m, k, device="cuda", dtype=torch.bfloat16)

        def eager():
            dist.all_gather_into_tensor(a_full, a_shard)
            return F.linear(a_full, w, b)
        try:
            row["eager"] = timed(eager, 2.0 * m * n * k, dist)
        except Exception as ex:  # noqa: BLE001 - recorded in the table
            row["eager"] = {"status": f"failed: {type(ex).__name__}: {ex}"[:300]}
        if world < 2:
            row["symm_mem"] = {"status": "not run: needs 2+ GPUs"}
        else:
            try:
                import torch.distributed._symmetric_memory as symm_mem
                group = dist.group.WORLD
                try:
                    symm_mem.enable_symm_mem_for_group(group.group_name)
                except Exception:  # noqa: BLE001 - newer releases need no enabling
                    pass
                wt = w.t()

                def fused():
                    return torch.ops.symm_mem.fused_all_gather_matmul(
                        a_shard, [wt], gather_dim=0, group_name=group.group_name)
                row["symm_mem"] = timed(fused, 2.0 * m * n * k, dist)
            except Exception as ex:  # noqa: BLE001
                row["symm_mem"] = {"status": f"failed: {type(ex).__name__}: {ex}"[:300]}
        results.append(row)
        del a_shard, w, b, a_full
        torch.cuda.empty_cache()
    if rank == 0:
        with open(out_path, "w") as f:
            json.dump(results, f)
    dist.barrier()
    dist.destroy_process_group()


def distributed(shapes, d, bias=False):
    """Eager and symmetric-memory baselines over min(d, GPUs) ranks, one process per GPU
    (one in-process rank when there is a single GPU). Returns one dict per shape."""
    import tempfile
    import torch
    ngpu = torch.cuda.device_count()
    world = max(1, min(d, ngpu))
    out = tempfile.NamedTemporaryFile(suffix=".json", delete=False).name
    port = _free_port()
    if world == 1:
        _dist_worker(0, 1, port, shapes, bias, out)
    else:
        import torch.multiprocessing as mp
        mp.spawn(_dist_worker, args=(world, port, shapes, bias, out), nprocs=world, join=True)
    with open(out) as f:
        res = json.load(f)
    os.unlink(out)
    return res


def versions():
    import torch
    v = {"torch": torch.__version__, "cuda": torch.version.cuda,
         "gpu": torch.cuda.get_device_name() if torch.cuda.is_available() else "none",
         "gpu_count": torch.cuda.device_count()}
    try:
        v["nccl"] = ".".join(str(x) for x in torch.cuda.nccl.version())
    except Exception:  # noqa: BLE001
        pass
    return v


def parse_shapes(text):
    return [tuple(int(x) for x in s.split("x")) for s in text.split(",") if s]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shapes", default="32768x16384x8192", help="MxKxN[,MxKxN...]")
    ap.add_argument("--d", type=int, default=8, help="ranks (capped at the GPUs present)")
    ap.add_argument("--bias", action="store_true")
    ap.add_argument("--json")
    a = ap.parse_args()
    shapes = parse_shapes(a.shapes)
    res = {"versions": versions(), "gemm": [], "dist": distributed(shapes, a.d, a.bias)}
    for (m, k, n) in shapes:
        r = gemm_alone(m, k, n, a.bias)
        res["gemm"].append(dict(m=m, k=k, n=n, **r))
        print(f"torch linear m={m} k={k} n={n}: {r['mean_ms']:.3f} ms {r['tflops']:.1f} TFLOP/s")
    for row in res["dist"]:
        for key in ("eager", "symm_mem"):
            r = row.get(key, {})
            print(f"torch {key} m={row['m']} d={row['d']}: "
                  + (f"{r['tflops']:.1f} TFLOP/s" if r.get("status") == "ok" else r.get("status", "")))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
