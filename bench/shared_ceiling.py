#!/usr/bin/env python3
"""shared_ceiling.py - the ceiling of an AG+linear pipeline from the bytes its copies move and
the copy bandwidth of the GPU, next to the compute-only time (issue 28, item 3).

The workload: global A [m, k] sharded by rows over d ranks, every rank gathers all of A and
computes A·Wᵀ ([m, n]); bf16 by default (--esize 2).
  ranks sharing one GPU (default): every rank copies the d-1 shards it lacks, so the GPU copies
      d·(d-1)·(m/d)·k·esize = (d-1)·m·k·esize bytes per iteration, device to device, and runs
      d GEMMs of 2·m·n·k FLOP.
  one rank per GPU (--per-gpu): every GPU receives (d-1)/d·m·k·esize bytes over the links and
      runs one GEMM of 2·m·n·k FLOP.
With copy bandwidth B (bytes copied per second, measured the way the pipeline copies) the copies
alone take t_copy = bytes / B. With t_comp the compute-only time of the same GEMMs (measured in
the same run: the program after --strip-communication), a pipeline can at best hide every copy
under the GEMMs and not slow them:
      ceiling time   = max(t_comp, t_copy)         (full overlap)
      no-overlap time = t_comp + t_copy            (copies and GEMMs one after the other)
A figure is reported as ceiling time / figure time (1.0 = at the ceiling). The model leaves
out what copies cost the GEMMs (HBM traffic; SMs if a copy is a kernel) and the first chunk a
pipeline cannot hide; a figure well below 1.0 with t_copy << t_comp says the loss is elsewhere
(the trace: bench/trace_summary.py).

  python3 bench/shared_ceiling.py --m 32768 --k 16384 --n 8192 --d 4 --compute-ms 52.7 \\
      --copy-gbps 1300 [--figure pipeline=57.4 --figure deferred=56.8]
  python3 bench/shared_ceiling.py ... --measure-copy      # B measured now with torch (GPU)
"""
import argparse
import sys


def copy_bytes(m, k, d, esize=2, per_gpu=False):
    """Bytes one GPU copies per iteration (see the module's docstring)."""
    if per_gpu:
        return (d - 1) * m * k * esize // d
    return (d - 1) * m * k * esize


def ceiling(m, k, n, d, copy_gbps, compute_ms, esize=2, per_gpu=False):
    b = copy_bytes(m, k, d, esize, per_gpu)
    t_copy = b / (copy_gbps * 1e9) * 1e3 if copy_gbps > 0 else float("inf")
    flops = 2.0 * m * n * k * (1 if per_gpu else d)       # per GPU per iteration
    top = max(compute_ms, t_copy)
    serial = compute_ms + t_copy
    return {"copy_bytes": b, "copy_gbps": copy_gbps, "copy_ms": t_copy,
            "compute_ms": compute_ms, "ceiling_ms": top, "no_overlap_ms": serial,
            "flops_per_gpu": flops,
            "ceiling_tflops": flops / (top * 1e-3) / 1e12,
            "no_overlap_tflops": flops / (serial * 1e-3) / 1e12}


def fraction(c, figure_ms):
    """The figure as a fraction of the ceiling (time ratio: 1.0 at the ceiling)."""
    return c["ceiling_ms"] / figure_ms if figure_ms > 0 else 0.0


def measure_copy_gbps(nbytes, per_gpu=False, iters=20, warmup=3):
    """Copy bandwidth in bytes copied per second / 1e9, measured with torch: a contiguous
    device-to-device copy_ of nbytes (cudaMemcpyAsync, the copy engines), CUDA events around
    `iters` back-to-back copies. per_gpu: GPU 1 -> GPU 0 (a peer copy)."""
    import torch
    src_dev = torch.device("cuda", 1 if per_gpu else 0)
    dst = torch.empty(nbytes, dtype=torch.uint8, device="cuda:0")
    src = torch.empty(nbytes, dtype=torch.uint8, device=src_dev).fill_(1)
    torch.cuda.synchronize(src_dev)
    for _ in range(warmup):
        dst.copy_(src)
    torch.cuda.synchronize()
    t0, t1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    t0.record()
    for _ in range(iters):
        dst.copy_(src)
    t1.record()
    torch.cuda.synchronize()
    ms = t0.elapsed_time(t1)
    del dst, src
    torch.cuda.empty_cache()
    return nbytes * iters / (ms * 1e-3) / 1e9


def markdown(c, figures):
    L = ["| figure | ms per iteration | TFLOP/s per GPU | ÷ ceiling |", "|---|---|---|---|"]
    L.append(f"| ceiling: max(compute-only, copies) | {c['ceiling_ms']:.3f} | "
             f"{c['ceiling_tflops']:.0f} | 1.000 |")
    L.append(f"| no overlap: compute-only + copies | {c['no_overlap_ms']:.3f} | "
             f"{c['no_overlap_tflops']:.0f} | {fraction(c, c['no_overlap_ms']):.3f} |")
    for name, ms in figures:
        L.append(f"| {name} | {ms:.3f} | {c['flops_per_gpu'] / (ms * 1e-3) / 1e12:.0f} | "
                 f"{fraction(c, ms):.3f} |")
    L.append("")
    L.append(f"Copies: {c['copy_bytes'] / 1e9:.3f} GB per GPU per iteration at "
             f"{c['copy_gbps']:.0f} GB/s = {c['copy_ms']:.3f} ms; compute-only "
             f"{c['compute_ms']:.3f} ms.")
    return "\n".join(L)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--m", type=int, required=True)
    ap.add_argument("--k", type=int, required=True)
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--d", type=int, required=True)
    ap.add_argument("--esize", type=int, default=2, help="bytes per element (bf16: 2)")
    ap.add_argument("--per-gpu", action="store_true", help="one rank per GPU")
    ap.add_argument("--compute-ms", type=float, required=True,
                    help="compute-only time per iteration, same run")
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--copy-gbps", type=float, help="measured copy bandwidth, GB/s")
    g.add_argument("--measure-copy", action="store_true", help="measure it now (torch, GPU)")
    ap.add_argument("--figure", action="append", default=[], metavar="NAME=MS")
    a = ap.parse_args(argv)
    if a.d < 1 or a.m % a.d or min(a.m, a.k, a.n, a.esize) < 1 or a.compute_ms <= 0:
        ap.error("need d >= 1 dividing m, positive m, k, n, esize and --compute-ms")
    figs = []
    for f in a.figure:
        name, _, ms = f.rpartition("=")
        try:
            figs.append((name, float(ms)))
        except ValueError:
            ap.error(f"--figure NAME=MS: '{f}'")
        if not name or figs[-1][1] <= 0:
            ap.error(f"--figure NAME=MS with MS > 0: '{f}'")
    gbps = a.copy_gbps
    if a.measure_copy:
        gbps = measure_copy_gbps(a.m // a.d * a.k * a.esize, a.per_gpu)
    elif gbps <= 0:
        ap.error("--copy-gbps must be > 0")
    c = ceiling(a.m, a.k, a.n, a.d, gbps, a.compute_ms, a.esize, a.per_gpu)
    print(markdown(c, figs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
