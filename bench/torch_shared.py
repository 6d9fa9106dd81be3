#!/usr/bin/env python3
"""torch_shared.py - PyTorch's side of the AG+linear comparisons, timed the way `hir-run --bench`
times (one clock): before each iteration every process synchronizes its device and meets the
others at a barrier (gloo, on the host); the iteration's time is rank 0's wall clock from leaving
that barrier to leaving the barrier after every process has synchronized.

Modes (--mode):
  gemm      each process computes what one rank of the hir program computes, F.linear of the
            gathered [m, k] input with the [n, k] weight, with no communication (the default;
            bench/ag_gemm_shared.sh, bench/tp_compare.py)
  nccl      dist.all_gather_into_tensor of the [m/D, k] shards over NCCL, then F.linear
  symm-mem  torch.ops.symm_mem.fused_all_gather_matmul (PyTorch's async-TP) where the
            installed torch has it
In gemm mode, --chunks C computes the product as C GEMMs of m/C rows each (into row blocks of
one output, as a pipeline's per-chunk GEMMs do), and --copies adds, on a second stream and with
no dependency on the GEMMs, the copies a rank of the CUDA-IPC all-gather makes: D-1
device-to-device copies of an [m/D, k] shard (cudaMemcpyAsync), from a source of the process's
own. Timed together (the iteration ends when both streams are done) this is what copies and
GEMMs of that size cost each other on this GPU with nothing ordering them (bench/tp_compare.py's
"what unscheduled copies cost" row); not a ceiling: a schedule that orders its copies can lose
less to them. The JSON's
copies_equal says whether the last copy equals its source.
Processes share GPU 0 unless --per-gpu (process r uses GPU r). NCCL and symmetric memory need
one process per GPU: with processes sharing a GPU those modes write {"status": "skipped: ..."}
instead of running. Two input sets alternate (the second is the first x 2), as with hir-run
--vary-inputs, and one output row is compared with float64 at the end.

  mpirun -np D python3 bench/torch_shared.py --m 32768 --k 16384 --n 8192 --json out.json
"""
import argparse
import json
import os
import time


def symm_mem_fn():
    """The fused all-gather + matmul of the installed torch, or None."""
    import torch
    try:
        import torch.distributed._symmetric_memory  # noqa: F401 - registers the ops
    except Exception:  # noqa: BLE001
        return None
    ops = getattr(torch.ops, "symm_mem", None)
    try:
        return getattr(ops, "fused_all_gather_matmul") if ops is not None else None
    except (AttributeError, RuntimeError):
        return None


def gemm_step(a, size, dev, x):
    """F.linear of [m, k] x [n, k]^T, in --chunks row blocks, with --copies on a side stream."""
    import torch
    import torch.nn.functional as F
    if a.chunks == 1 and not a.copies:
        return lambda xi, wi: F.linear(xi, wi)
    out = torch.empty(a.m, a.n, device=dev, dtype=torch.bfloat16)
    rows = a.m // a.chunks
    side = torch.cuda.Stream(device=dev)
    shard = a.m // size
    src = x[:shard].clone() if a.copies else None
    dst = torch.empty(size, shard, a.k, device=dev, dtype=torch.bfloat16) if a.copies else None

    def step(xi, wi):
        if a.copies:
            side.wait_stream(torch.cuda.current_stream(dev))
            with torch.cuda.stream(side):
                for j in range(1, size):
                    dst[j].copy_(src)
        for c in range(a.chunks):
            torch.matmul(xi[c * rows:(c + 1) * rows], wi.t(), out=out[c * rows:(c + 1) * rows])
        if a.copies:
            torch.cuda.current_stream(dev).wait_stream(side)
        return out
    if a.copies and size > 1:
        step.copies_ok = lambda: bool(torch.equal(dst[size - 1], src))
    return step


def setup(a, rank, size):
    """The step function of the mode and the inputs; None and a reason when it cannot run."""
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    dev = torch.device("cuda", rank if a.per_gpu else 0)
    torch.cuda.set_device(dev)
    g = torch.Generator(device=dev).manual_seed(1234 + rank)
    rows = a.m if a.mode == "gemm" else a.m // size
    x = (torch.rand(rows, a.k, device=dev, generator=g) * 2 - 1).to(torch.bfloat16)
    w = (torch.rand(a.n, a.k, device=dev, generator=g) * 2 - 1).to(torch.bfloat16)
    sets = [(x, w), (x * 2, w * 2)]
    if a.mode == "gemm":
        return gemm_step(a, size, dev, x), sets, None
    if not a.per_gpu and size > 1:
        return None, None, ("skipped: %s needs one process per GPU (NCCL refuses two ranks on "
                            "one GPU)" % a.mode)
    nccl = dist.new_group(backend="nccl")
    if a.mode == "nccl":
        full = torch.empty(a.m, a.k, device=dev, dtype=torch.bfloat16)

        def step(xi, wi):
            dist.all_gather_into_tensor(full, xi, group=nccl)
            return F.linear(full, wi)
        return step, sets, None
    fused = symm_mem_fn()
    if fused is None:
        return None, None, "skipped: torch %s has no symm_mem.fused_all_gather_matmul" % (
            torch.__version__)
    import torch.distributed._symmetric_memory as symm_mem
    name = nccl.group_name
    try:
        symm_mem.enable_symm_mem_for_group(name)
    except Exception:  # noqa: BLE001 - newer releases need no enabling
        pass

    def step(xi, wi):
        _, outs = fused(xi, [wi.t()], gather_dim=0, group_name=name)
        return outs[0]
    return step, sets, None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--m", type=int, required=True)
    ap.add_argument("--k", type=int, required=True)
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--mode", choices=("gemm", "nccl", "symm-mem"), default="gemm")
    ap.add_argument("--per-gpu", action="store_true", help="process r on GPU r")
    ap.add_argument("--chunks", type=int, default=1, help="gemm mode: C row-block GEMMs")
    ap.add_argument("--copies", action="store_true",
                    help="gemm mode: the all-gather's D-1 shard copies on a second stream")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--port", type=int, default=29533)
    ap.add_argument("--json")
    a = ap.parse_args()
    import torch
    import torch.distributed as dist
    rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("RANK", 0)))
    size = int(os.environ.get("OMPI_COMM_WORLD_SIZE", os.environ.get("WORLD_SIZE", 1)))
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{a.port}", rank=rank,
                            world_size=size)
    base = {"ranks": size, "m": a.m, "k": a.k, "n": a.n, "mode": a.mode,
            "chunks": a.chunks, "copies": a.copies,
            "per_gpu": a.per_gpu, "torch": torch.__version__,
            "device": torch.cuda.get_device_name(0), "clock": "wall, barrier to barrier"}
    if (a.mode != "gemm" or a.copies) and a.m % size:
        step, sets, why = None, None, f"skipped: m={a.m} not divisible by {size} ranks"
    elif a.chunks < 1 or a.m % a.chunks or (a.mode != "gemm" and (a.chunks > 1 or a.copies)):
        step, sets, why = None, None, (f"skipped: --chunks {a.chunks} / --copies need gemm mode "
                                       f"and m={a.m} divisible by the chunks")
    else:
        step, sets, why = setup(a, rank, size)
    if step is None:
        r = dict(base, status=why)
    else:
        times = []
        for i in range(a.warmup + a.iters):
            xi, wi = sets[i % 2]
            torch.cuda.synchronize()
            dist.barrier()
            t0 = time.perf_counter()
            y = step(xi, wi)
            torch.cuda.synchronize()
            dist.barrier()
            t1 = time.perf_counter()
            if i >= a.warmup:
                times.append((t1 - t0) * 1e3)
        # a spot check that the product is a product: row 0 of this rank's output (in gemm
        # mode also the last row, so the first and the last chunk) against float64 (in the
        # gathering modes row 0 is rank 0's first row, which this rank has only through the
        # gather: its inputs are regenerated from rank 0's seed)
        pick = [0]
        if a.mode == "gemm":
            pick = [0, a.m - 1]
            x0 = xi[pick]
        else:
            g0 = torch.Generator(device=xi.device).manual_seed(1234)
            x0 = ((torch.rand(a.m // size, a.k, device=xi.device, generator=g0) * 2 - 1)
                  .to(torch.bfloat16)[:1]) * (2 if (a.warmup + a.iters - 1) % 2 else 1)
        ref = (x0.double() @ wi.double().t()).float()
        err = ((y[pick].float() - ref).abs().max() / ref.abs().max()).item()
        flops = 2.0 * a.m * a.n * a.k
        if hasattr(step, "copies_ok"):
            base["copies_equal"] = step.copies_ok()
        mean = sum(times) / len(times)
        s = sorted(times)
        gpus = size if a.per_gpu else 1
        r = dict(base, status="ok", mean_ms=mean, median_ms=s[len(s) // 2], min_ms=s[0],
                 max_ms=s[-1], per_iter_ms=times, flops_per_rank=flops,
                 tflops_per_rank=flops / (mean * 1e-3) / 1e12,
                 tflops_per_device=size * flops / gpus / (mean * 1e-3) / 1e12,
                 row0_rel_err=err)
    if rank == 0:
        print(json.dumps({k: v for k, v in r.items() if k != "per_iter_ms"}))
        if a.json:
            with open(a.json, "w") as f:
                json.dump(r, f, indent=1)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
