#!/usr/bin/env python3
"""scale_model.py - an analytic model of the all-gather + GEMM pipeline past one node.

Predicts, for d GPUs (8 per node by default), how close the pipeline comes to the GEMM alone
at the headline shape (m=32768, k=16384, n=8192, bf16; A's m rows sharded over the d ranks,
W [n, k] on every rank, every rank computes C = allgather(A) . W^T), and picks the number of
chunks and streams. Every figure it prints is a PREDICTION from the inputs below; the measured
inputs are read from bench/results with their date.

The model (docs/benchmarks.md, "A model of scale", says the same in prose):

* GEMM of M rows:  t(M) = max(2.M.n.k / R, bytes(M) / B_hbm) + t_gemm, with R the measured
  single-GPU rate of hir's GEMM at the headline shape, bytes(M) = 2.(M.k + n.k + M.n) (A
  chunk, all of W, C chunk), B_hbm the HBM bandwidth and t_gemm a fixed cost per GEMM.
* Chunks: the gathered A is processed in K steps of m/K rows, in ring order from the rank's
  own shard (offset 0, peer rank - j at offset j). K < d groups d/K shards per step, K > d
  splits each shard in K/d pieces; K = 1 is gather-then-GEMM, K = d is what
  `hir-opt --stream-parallel` emits today.
* Transfers: a step's rows from peers on the rank's node cross NVLink (B_nvl per direction per
  GPU), rows from other nodes cross InfiniBand (B_ib per GPU); each link carries one transfer
  at a time, both links work at once, and each transfer costs a fixed latency. The rank's own
  rows are ready at the start.
* Streams: step i's GEMM runs on worker stream i mod s and starts when its data is in and the
  previous GEMM is done (GEMMs share the SMs). Its transfer starts after the previous transfer
  on the same link and, where the exchange runs on the worker stream too (the CUDA and NCCL
  forms, and backend{kind=auto}'s ring across nodes), after the GEMM of step i - s (the stream
  is in order). Where backend{kind=auto} runs each exchange on its transport's own stream
  (Stream 1 NVLink, Stream 2 InfiniBand: local-first across nodes), the transfer waits only
  for its link's earlier transfers and the GEMM's worker stream waits for the transfer
  (Model.transport_streams says which form a schedule gets; pipeline(transport=) overrides).
* The time of an iteration is that of the slowest rank (every position on a node is computed);
  efficiency = t(m) / that time: the GEMM alone over the pipeline, <= 1 by construction (the
  pipeline runs K GEMMs that each read all of W and pay t_gemm).

Not modelled: GEMMs slowed by copies sharing HBM, NCCL's own protocol costs, congestion in the
network beyond one NIC per GPU, clocks below the measured ones.
"""
import argparse
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")

# Nominal figures (not measured here); each can be changed on the command line.
NOMINAL = {
    # H200 NVLink 4: 18 links x 50 GB/s = 900 GB/s both directions, 450 GB/s each way per GPU
    # (NVIDIA H200 product brief); copy-engine peer copies reach ~370-400 GB/s in practice.
    "nvlink_gbs": 450.0,
    # InfiniBand NDR, one 400 Gb/s NIC per GPU (as in DGX H200): 50 GB/s per direction.
    "ib_gbs": 50.0,
    # H200 HBM3e, 4.8 TB/s (NVIDIA H200 product brief).
    "hbm_gbs": 4800.0,
    # assumptions, not measurements: one step's fixed cost on each link (semaphore handshake
    # or NCCL send/recv set-up plus the copy's launch)
    "nvlink_latency_us": 20.0,
    "ib_latency_us": 30.0,
}


def load_measured(results=RESULTS):
    """The measured inputs and comparison points, from bench/results (raises if absent)."""
    path = os.path.join(results, "ag_gemm-h200-2026-12-02.json")
    with open(path) as f:
        run = json.load(f)
    head = [r for r in run["rows"] if (r["m"], r["k"], r["n"]) == (32768, 16384, 8192)][0]
    hg = head["hir_gemm"]
    out = {
        "gemm": {
            "tflops": hg["tflops"], "mean_ms": hg["time_ms"]["mean"],
            "date": run["machine"]["date"], "gpu": run["machine"]["gpu"],
            "command": hg["command"], "source": os.path.relpath(path, HERE + "/.."),
        },
        # torch F.linear at a small shape: the fixed cost of a GEMM beyond the roofline
        "small_gemm": {
            "shape": [1024, 4096, 4096],
            "mean_ms": [r for r in run["rows"] if (r["m"], r["k"], r["n"]) ==
                        (1024, 4096, 4096)][0]["torch_gemm"]["mean_ms"],
            "date": run["machine"]["date"],
        },
        "shared": [],
        "single_gpu": [],
    }
    for r in run["rows"]:
        for key in ("hir_gemm", "torch_gemm", "hir_gather_gemm", "hir_pipe_nccl"):
            v = r.get(key, {})
            if v.get("status") == "ok" and v.get("tflops"):
                out["single_gpu"].append({"m": r["m"], "k": r["k"], "n": r["n"], "what": key,
                                          "tflops": v["tflops"],
                                          "mean_ms": 2.0 * r["m"] * r["n"] * r["k"] /
                                          v["tflops"] / 1e9})
    shared = os.path.join(results, "ag_shared-h200-2026-12-03")
    for d in sorted({int(p.split("-d")[-1][:-5]) for p in glob.glob(shared + "/pipe-d*.json")}):
        row = {"d": d}
        for v in ("pipe", "defer", "strip", "gather"):
            p = os.path.join(shared, "%s-d%d.json" % (v, d))
            if os.path.exists(p):
                with open(p) as f:
                    j = json.load(f)
                row[v] = {"mean_ms": j["time_ms"]["mean"], "streams": j.get("streams"),
                          "check": j.get("check")}
        out["shared"].append(row)
    out["shared_source"] = os.path.relpath(shared, HERE + "/..")
    return out


class Model:
    def __init__(self, m=32768, k=16384, n=8192, elem=2, tflops=None, gemm_fixed_us=None,
                 gpus_per_node=8, **kw):
        p = dict(NOMINAL)
        p.update({key: v for key, v in kw.items() if v is not None})
        self.m, self.k, self.n, self.elem = m, k, n, elem
        self.g = gpus_per_node
        self.R = tflops * 1e12
        self.t_fixed = gemm_fixed_us * 1e-6
        self.B_nvl = p["nvlink_gbs"] * 1e9
        self.B_ib = p["ib_gbs"] * 1e9
        self.B_hbm = p["hbm_gbs"] * 1e9
        self.lat_nvl = p["nvlink_latency_us"] * 1e-6
        self.lat_ib = p["ib_latency_us"] * 1e-6
        self.params = p

    def gemm(self, rows):
        """seconds for one GEMM of `rows` rows of A against all of W"""
        flops = 2.0 * rows * self.n * self.k
        bytes_ = self.elem * (rows * self.k + self.n * self.k + rows * self.n)
        return max(flops / self.R, bytes_ / self.B_hbm) + self.t_fixed

    def gemm_alone(self):
        return self.gemm(self.m)

    def _split(self, d, pos, a, b, order="ring"):
        """rows of the shard interval [a, b) (in shards, in the order's sequence) that are (own,
        same node, other node) for the rank at position pos of its node"""
        def overlap(lo, hi):
            return max(0.0, min(b, hi) - max(a, lo))
        own = overlap(0, 1)
        if d <= self.g:
            near = overlap(1, d)
        elif order == "local-first":
            near = overlap(1, self.g)          # the node's other ranks, then the other nodes
        else:
            # peers rank-1 .. rank-pos (offsets 1..pos) and rank+1 .. the node's last rank
            # (offsets d-(g-1-pos) .. d-1) share the node
            near = overlap(1, pos + 1) + overlap(d - (self.g - 1 - pos), d)
        far = (b - a) - own - near
        rows = self.m / d
        return own * rows, near * rows, max(0.0, far) * rows

    def transport_streams(self, d, chunks, order):
        """Does backend{kind=auto} put this schedule's exchanges on a stream per transport?
        It does where every rank at every step sends and receives over one transport, on
        1 < nodes < d: local-first across nodes with blocks smaller than a node (local-first
        of whole-node blocks, or on one node, is the ring). The ring across nodes mixes the
        two in a step and keeps its worker streams; on one node (or one rank a node) kind=auto
        prints the CUDA (NCCL) form, worker streams too."""
        shards = d // chunks if chunks < d else 1
        return order == "local-first" and self.g < d and self.g > 1 and shards < self.g

    def pipeline(self, d, chunks, streams, order="ring", transport=None):
        """seconds per iteration of the slowest rank, or None if the split is not whole.
        order: "ring" (peer rank - j at step j, what the stream pass emits) or "local-first"
        (own shard, then the node's other ranks, then the other nodes).
        transport: True when the exchanges run on a stream per transport (Stream 1 NVLink,
        Stream 2 InfiniBand: a transfer waits only for the earlier transfers of its link, and
        the step's GEMM on its worker stream waits for it); False when each step's exchange
        runs on its worker stream (a transfer also waits for the GEMM of step i - streams);
        None: what backend{kind=auto} emits for this schedule (transport_streams)."""
        if transport is None:
            transport = self.transport_streams(d, chunks, order)
        if chunks < 1 or streams < 1 or self.m % chunks or (chunks % d and d % chunks):
            return None
        if d > self.g and d % self.g:
            return None
        rows = self.m // chunks
        t_g = self.gemm(rows)
        row_bytes = self.k * self.elem
        worst = 0.0
        for pos in range(min(d, self.g)):
            link_free = {"nvl": 0.0, "ib": 0.0}
            gemm_end = []                      # end of the GEMM of each step
            prev_end = 0.0
            for i in range(chunks):
                a, b = i * d / chunks, (i + 1) * d / chunks
                _, near, far = self._split(d, pos, a, b, order)
                # the worker stream is free once the GEMM of step i - streams is done; a
                # transport stream only once its link's previous transfer is (link_free)
                stream_free = gemm_end[i - streams] if i >= streams else 0.0
                ready = stream_free
                if transport:
                    stream_free = 0.0
                if near > 0:
                    start = max(link_free["nvl"], stream_free)
                    link_free["nvl"] = start + self.lat_nvl + near * row_bytes / self.B_nvl
                    ready = max(ready, link_free["nvl"])
                if far > 0:
                    start = max(link_free["ib"], stream_free)
                    link_free["ib"] = start + self.lat_ib + far * row_bytes / self.B_ib
                    ready = max(ready, link_free["ib"])
                end = max(prev_end, ready) + t_g
                gemm_end.append(end)
                prev_end = end
            worst = max(worst, prev_end)
        return worst

    def efficiency(self, d, chunks, streams, order="ring", transport=None):
        t = self.pipeline(d, chunks, streams, order, transport)
        return None if t is None else self.gemm_alone() / t


STREAMS = (1, 2, 3, 4, 8)
ORDERS = ("ring", "local-first")


def chunk_choices(d, m):
    out, c = [], 1
    while c <= min(m, 8 * d, 4096):
        out.append(c)
        c *= 2
    return out


def best(model, d, streams=STREAMS, order="ring"):
    """(efficiency, chunks, streams) of the best choice for an order; ties go to fewer chunks,
    then fewer streams (less to launch and to hold)"""
    top = None
    for c in chunk_choices(d, model.m):
        # c GEMMs run one after another, so c * gemm(m / c) bounds the time from below and
        # grows with c: once it passes the best time, no larger c can win
        if top is not None and c * model.gemm(model.m // c) > model.gemm_alone() / top[0]:
            break
        for s in streams:
            e = model.efficiency(d, c, s, order)
            if e is not None and (top is None or e > top[0] + 1e-9):
                top = (e, c, s)
    return top


def model_from_args(args, measured):
    fixed = args.gemm_fixed_us
    if fixed is None:
        # the small-GEMM point: what the roofline misses there is the fixed cost per GEMM
        base = Model(tflops=measured["gemm"]["tflops"], gemm_fixed_us=0.0)
        sm = measured["small_gemm"]
        base.m, base.k, base.n = sm["shape"]
        fixed = max(0.0, sm["mean_ms"] * 1e3 - base.gemm(sm["shape"][0]) * 1e6)
    return Model(tflops=args.tflops or measured["gemm"]["tflops"], gemm_fixed_us=fixed,
                 gpus_per_node=args.gpus_per_node, nvlink_gbs=args.nvlink_gbs,
                 ib_gbs=args.ib_gbs, hbm_gbs=args.hbm_gbs,
                 nvlink_latency_us=args.nvlink_latency_us, ib_latency_us=args.ib_latency_us)


def predict(model, ds):
    rows = []
    for d in ds:
        r = {"d": d, "nodes": max(1, d // model.g), "gemm_alone_ms": model.gemm_alone() * 1e3}
        for order in ORDERS:
            e, c, s = best(model, d, order=order)
            r[order] = {"chunks": c, "streams": s, "rows_per_chunk": model.m // c,
                        "efficiency": e, "time_ms": model.pipeline(d, c, s, order) * 1e3}
        r["today"] = {"chunks": d, "streams": 4, "order": "ring",
                      "efficiency": model.efficiency(d, d, 4)}
        r["gather_then_gemm"] = {"efficiency": model.efficiency(d, 1, 1)}
        rows.append(r)
    return rows


def shared_compare(model, measured):
    """Measured points (d ranks sharing ONE GPU) next to the model: the compute-only program
    (d ranks x d chunk GEMMs of m/d rows on one GPU) is predicted directly; the pipeline's
    measured ratio to compute-only is shown next to the predicted efficiency of d GPUs of one
    node (a different machine: not a validation)."""
    out = []
    for row in measured["shared"]:
        d = row["d"]
        r = {"d": d}
        if "strip" in row:
            pred = d * d * model.gemm(model.m // d) * 1e3
            r["compute_only"] = {"measured_ms": row["strip"]["mean_ms"], "predicted_ms": pred}
        best_pipe = min((row[v]["mean_ms"] for v in ("pipe", "defer") if v in row),
                        default=None)
        if best_pipe and "strip" in row:
            r["measured_pipeline_over_compute_only"] = row["strip"]["mean_ms"] / best_pipe
        r["predicted_efficiency_d_gpus"] = model.efficiency(d, d, 4)
        out.append(r)
    return out


def single_gpu_compare(model, measured):
    """Every measured one-GPU point next to the model's time for it: the GEMM of that shape
    (for gather-then-GEMM and the one-chunk pipeline at d=1 the model adds nothing: the rank's
    own rows are ready, so their measured cost above the GEMM is the local copy it ignores)."""
    out = []
    for p in measured["single_gpu"]:
        mm = Model(tflops=model.R / 1e12, gemm_fixed_us=model.t_fixed * 1e6,
                   hbm_gbs=model.B_hbm / 1e9, m=p["m"], k=p["k"], n=p["n"])
        out.append(dict(p, predicted_ms=mm.gemm(p["m"]) * 1e3))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--json", action="store_true", help="print JSON instead of tables")
    ap.add_argument("--ds", default="8,16,32,64,128,256,512,1024",
                    help="GPU counts (default 8,16,...,1024)")
    ap.add_argument("--results", default=RESULTS, help="bench/results directory")
    ap.add_argument("--tflops", type=float, help="GEMM rate (default: measured, bench/results)")
    ap.add_argument("--gemm-fixed-us", type=float,
                    help="fixed cost per GEMM (default: fitted to the measured small GEMM)")
    ap.add_argument("--gpus-per-node", type=int, default=8)
    for key, v in NOMINAL.items():
        ap.add_argument("--" + key.replace("_", "-"), type=float, default=v)
    args = ap.parse_args(argv)
    try:
        ds = [int(x) for x in args.ds.split(",")]
    except ValueError:
        ap.error("--ds takes integers separated by commas: %r" % args.ds)
    if any(d < 1 for d in ds) or args.gpus_per_node < 1:
        ap.error("GPU counts must be positive")
    for d in ds:
        if d > args.gpus_per_node and d % args.gpus_per_node:
            ap.error("d=%d is not a whole number of %d-GPU nodes" % (d, args.gpus_per_node))
    if any(v <= 0 for v in (args.nvlink_gbs, args.ib_gbs, args.hbm_gbs)) or \
            args.nvlink_latency_us < 0 or args.ib_latency_us < 0 or \
            (args.tflops is not None and args.tflops <= 0) or \
            (args.gemm_fixed_us is not None and args.gemm_fixed_us < 0):
        ap.error("bandwidths and the GEMM rate must be positive, latencies not negative")
    try:
        measured = load_measured(args.results)
    except (OSError, KeyError, IndexError, ValueError) as e:
        print("scale_model.py: cannot read the measured inputs in %s: %s" % (args.results, e),
              file=sys.stderr)
        return 1
    model = model_from_args(args, measured)
    rows = predict(model, ds)
    shared = shared_compare(model, measured)
    single = single_gpu_compare(model, measured)
    inputs = {
        "shape": {"m": model.m, "k": model.k, "n": model.n, "dtype": "bf16"},
        "gemm_tflops": model.R / 1e12, "gemm_fixed_us": model.t_fixed * 1e6,
        "gpus_per_node": model.g, **model.params,
        "measured_gemm": measured["gemm"], "measured_small_gemm": measured["small_gemm"],
    }
    if args.json:
        json.dump({"kind": "prediction", "inputs": inputs, "predictions": rows,
                   "shared_gpu_comparison": shared, "shared_source": measured["shared_source"],
                   "single_gpu_comparison": single},
                  sys.stdout, indent=1)
        print()
        return 0
    g = measured["gemm"]
    print("PREDICTED by bench/scale_model.py (a model, not a measurement)")
    print("inputs: GEMM %.1f TFLOP/s (hir, measured %s, %s, %s), fixed %.1f us per GEMM;"
          % (model.R / 1e12, g["date"], g["gpu"], g["source"], model.t_fixed * 1e6))
    print("        NVLink %.0f GB/s + %.0f us per step, InfiniBand %.0f GB/s + %.0f us per step,"
          " HBM %.0f GB/s, %d GPUs per node (nominal/assumed)"
          % (model.B_nvl / 1e9, model.lat_nvl * 1e6, model.B_ib / 1e9, model.lat_ib * 1e6,
             model.B_hbm / 1e9, model.g))
    print("shape m=%d k=%d n=%d bf16; GEMM alone %.3f ms" % (model.m, model.k, model.n,
                                                           model.gemm_alone() * 1e3))
    print()
    print("| d | nodes | today: ring, K=d, 4 streams | best ring: chunks, streams, rows/chunk ->"
          " efficiency | best local-first (kind=auto: a stream per transport across nodes): chunks,"
          " streams, rows/chunk -> efficiency (ms) |"
          " gather-then-GEMM |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        cells = []
        for order in ORDERS:
            b = r[order]
            cells.append("%d, %d, %d -> **%.3f** (%.2f ms)" % (
                b["chunks"], b["streams"], b["rows_per_chunk"], b["efficiency"], b["time_ms"]))
        print("| %d | %d | %.3f | %s | %s | %.3f |"
              % (r["d"], r["nodes"], r["today"]["efficiency"], cells[0], cells[1],
                 r["gather_then_gemm"]["efficiency"]))
    print()
    print("Measured with d ranks SHARING ONE H200 (%s) next to the model:" %
          measured["shared_source"])
    print("| d | compute-only measured ms | compute-only predicted ms | measured pipeline ÷"
          " compute-only (one GPU) | predicted efficiency, d GPUs of one node (K=d, 4 streams) |")
    print("|---|---|---|---|---|")
    for r in shared:
        co = r.get("compute_only", {})
        print("| %d | %s | %s | %s | %.3f |" % (
            r["d"], "%.1f" % co["measured_ms"] if co else "-",
            "%.1f" % co["predicted_ms"] if co else "-",
            "%.3f" % r["measured_pipeline_over_compute_only"]
            if "measured_pipeline_over_compute_only" in r else "-",
            r["predicted_efficiency_d_gpus"]))
    print()
    print("Measured on one H200, one rank (%s) next to the model's GEMM time:" % g["source"])
    print("| m, k, n | what | measured ms | predicted ms |")
    print("|---|---|---|---|")
    for p in single:
        fit = [p["m"], p["k"], p["n"]] == measured["small_gemm"]["shape"] and \
            p["what"] == "torch_gemm" and args.gemm_fixed_us is None
        print("| %d, %d, %d | %s | %.3f | %.3f%s |" % (
            p["m"], p["k"], p["n"], p["what"], p["mean_ms"], p["predicted_ms"],
            " (the fixed cost per GEMM is fitted here: not a check)" if fit else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
