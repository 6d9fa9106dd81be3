#!/usr/bin/env python3
"""ag_gemm.py - AG+GEMM (all-gather A, then C = A·Wᵀ) measured three ways through hir, side by
side with PyTorch, in one run:

  hir gather-then-GEMM   hir-gen ag-linear | hir-opt --convert-to-communication
  hir pipeline, NCCL     hir-opt --stream-parallel --backend=nccl
  hir pipeline, CUDA-IPC hir-opt --stream-parallel --backend=cuda
  hir GEMM alone         hir-gen linear (the same GEMM with no communication)
  torch GEMM alone       F.linear on the gathered shape (the ceiling, with hir's GEMM alone)
  torch eager            all_gather_into_tensor + F.linear
  torch symm-mem         torch.ops.symm_mem.fused_all_gather_matmul (2+ GPUs)

Every hir figure comes from `hir-run --bench --bench-json` (5 warm-ups, 50 timed iterations,
barrier before each, CUDA events, slowest rank); the PyTorch ones from bench/torch_baselines.py
with the same protocol. Overlap efficiency = TFLOP/s ÷ the better GEMM-alone TFLOP/s of the
same shape, same run.

With G GPUs, d = G ranks everywhere. With one GPU: the NCCL variants run with one rank (NCCL
refuses two ranks on one GPU); the CUDA-IPC pipeline runs with --ipc-ranks ranks sharing the
GPU, so their GEMMs serialize: its figure is the aggregate rate of all ranks and shows the
pipeline's overhead, not overlap.

  python3 bench/ag_gemm.py --bin .dev/bin --out OUT            # measure (on the GPU machine)
  python3 bench/ag_gemm.py --render OUT/ag_gemm.json --docs docs/benchmarks.md   # update docs
"""
import argparse
import datetime
import json
import os
import platform
import re
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

HEADLINE = (32768, 16384, 8192)
SWEEP = [(1024, 4096, 4096), (4096, 8192, 8192), (8192, 16384, 8192), (16384, 16384, 8192),
         HEADLINE]
LOG = []


def log(msg):
    print(msg, flush=True)
    LOG.append(msg)


def sh(cmd, timeout=300, env=None, capture=True):
    t0 = time.time()
    p = subprocess.run(cmd, shell=isinstance(cmd, str), capture_output=capture, text=True,
                       timeout=timeout, env=env)
    dt = time.time() - t0
    cmdtxt = cmd if isinstance(cmd, str) else " ".join(shlex.quote(c) for c in cmd)
    LOG.append(f"$ {cmdtxt}  [rc={p.returncode}, {dt:.1f} s]")
    if capture:
        out = (p.stdout or "") + (p.stderr or "")
        if out.strip():
            LOG.append(out.rstrip()[-4000:])
    return p


class Hir:
    def __init__(self, bindir, workdir, warmup, iters, timeout, device="cuda", deadline=None):
        self.gen = os.path.join(bindir, "hir-gen")
        self.opt = os.path.join(bindir, "hir-opt")
        self.run_ = os.path.join(bindir, "hir-run")
        self.work = workdir
        self.warmup, self.iters, self.timeout = warmup, iters, timeout
        self.device, self.deadline = device, deadline
        os.makedirs(workdir, exist_ok=True)

    def generate(self, kind, m, k, n, d, bias, tag):
        path = os.path.join(self.work, f"{tag}.hir")
        cmd = [self.gen, kind, "--m", str(m), "--k", str(k), "--n", str(n)]
        if kind == "ag-linear":
            cmd += ["--d", str(d)]
        cmd += ["--dtype", "bf16"] + ([] if bias else ["--no-bias"])
        p = sh(cmd)
        if p.returncode:
            raise RuntimeError(f"hir-gen failed: {p.stderr.strip()[-300:]}")
        with open(path, "w") as f:
            f.write(p.stdout)
        return path

    def preallocate(self, path):
        """ALLOCATE the program's outputs up front (as the lowered AG programs do), so a run
        writes into cached buffers instead of allocating them inside the timed iteration."""
        text = open(path).read()
        m = re.search(r"\) -> \((.*)\) :\n", text)
        outs = re.findall(r"(T\d+_\w+?\[[^\]]*\](?: \(DeviceMesh\{[^}]*\}\))?)",
                          m.group(1)) if m else []
        lines = []
        for t in outs:
            ext = re.findall(r"(?<![rb])S\d+\{(\d+)\}", t.split("(DeviceMesh")[0])
            size = 1
            for e in ext:
                size *= int(e)
            lines.append(f"  {t} = ALLOCATE(buffer={t}, mem_type=global, size={size}, "
                         "zero_init=false, resets_to_zero=false)\n")
        if m and lines:
            text = text[:m.end()] + "".join(lines) + text[m.end():]
            with open(path, "w") as f:
                f.write(text)
        return path

    def lower(self, src, passes, tag):
        path = os.path.join(self.work, f"{tag}.hir")
        p = sh([self.opt] + passes + [src, "-o", path])
        if p.returncode:
            raise RuntimeError(f"hir-opt {' '.join(passes)} failed: {p.stderr.strip()[-300:]}")
        return path

    def bench(self, prog, np_, tag, extra=()):
        js = os.path.join(self.work, f"{tag}.bench.json")
        if os.path.exists(js):
            os.unlink(js)
        if self.deadline and time.time() > self.deadline:
            return {"status": "not run: session time limit"}
        cmd = [self.run_, "-np", str(np_), f"--device={self.device}", "--bench",
               f"--warmup={self.warmup}", f"--iters={self.iters}", f"--bench-json={js}",
               *extra, prog]
        try:
            p = sh(cmd, timeout=self.timeout)
        except subprocess.TimeoutExpired:
            return {"status": f"not run: timed out after {self.timeout} s"}
        if p.returncode or not os.path.exists(js):
            err = (p.stderr or p.stdout or "").strip().splitlines()
            return {"status": "failed: " + (err[-1] if err else f"rc={p.returncode}")[:240]}
        with open(js) as f:
            r = json.load(f)
        r["status"] = "ok"
        r["command"] = " ".join(shlex.quote(c) for c in cmd)
        return r


def gpu_count():
    try:
        import torch
        return torch.cuda.device_count()
    except Exception:  # noqa: BLE001
        p = subprocess.run("nvidia-smi -L", shell=True, capture_output=True, text=True)
        return len([l for l in p.stdout.splitlines() if l.startswith("GPU")])


def machine_info():
    info = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "host": platform.node(), "cpu_count": os.cpu_count()}
    p = subprocess.run("nvidia-smi --query-gpu=name,driver_version,memory.total "
                       "--format=csv,noheader", shell=True, capture_output=True, text=True)
    info["gpus"] = [l.strip() for l in p.stdout.splitlines() if l.strip()]
    p = subprocess.run("mpirun --version", shell=True, capture_output=True, text=True)
    info["mpi"] = (p.stdout.splitlines() or ["?"])[0]
    p = subprocess.run("nvcc --version", shell=True, capture_output=True, text=True)
    m = re.search(r"release ([0-9.]+)", p.stdout)
    info["nvcc"] = m.group(1) if m else "?"
    try:
        import torch_baselines
        info.update(torch_baselines.versions())
    except Exception as ex:  # noqa: BLE001
        info["torch"] = f"unavailable ({ex})"
    return info


def measure(a):
    import torch_baselines as tb
    ngpu = gpu_count()
    shapes = tb.parse_shapes(a.shapes) if a.shapes else ([HEADLINE] if a.quick else SWEEP)
    d = ngpu if ngpu > 1 else 1
    d_ipc = ngpu if ngpu > 1 else a.ipc_ranks
    hir = Hir(a.bin, a.work, a.warmup, a.iters, a.timeout, a.device,
              time.time() + a.budget if a.budget else None)
    res = {"machine": machine_info(), "ngpu": ngpu, "d": d, "d_ipc": d_ipc,
           "shared_gpu": ngpu < d_ipc, "bias": a.bias, "warmup": a.warmup, "iters": a.iters,
           "check_shape": a.check_shape,
           "command": "python3 bench/ag_gemm.py " + " ".join(shlex.quote(x) for x in sys.argv[1:]),
           "rows": []}
    log(f"# {res['machine'].get('gpus')}; {ngpu} GPU(s); d={d}, CUDA-IPC ranks={d_ipc}")
    if a.check_shape and "x" in a.check_shape:
        res["checks"] = checks(hir, a, d, d_ipc)
    # the headline first, so a session that runs out of time still has it
    shapes = sorted(shapes, key=lambda s: (s != HEADLINE, s[0] * s[1] * s[2]))
    try:
        dist_rows = tb.distributed(shapes, d, a.bias)
    except Exception as ex:  # noqa: BLE001
        dist_rows = [{"eager": {"status": f"failed: {ex}"[:200]}} for _ in shapes]
    for (m, k, n), dr in zip(shapes, dist_rows):
        row = {"m": m, "k": k, "n": n, "flops": 2.0 * m * n * k}
        tag = f"m{m}_k{k}_n{n}"
        try:
            row["torch_gemm"] = tb.gemm_alone(m, k, n, a.bias)
        except Exception as ex:  # noqa: BLE001
            row["torch_gemm"] = {"status": f"failed: {type(ex).__name__}: {ex}"[:200]}
        row["torch_eager"] = dr.get("eager", {"status": "not run"})
        row["torch_symm_mem"] = dr.get("symm_mem", {"status": "not run: needs 2+ GPUs"})
        try:
            lin = hir.generate("linear", m, k, n, 1, a.bias, f"{tag}_linear")
            if not a.gemm_allocates:
                hir.preallocate(lin)
            row["hir_gemm"] = hir.bench(lin, 1, f"{tag}_linear")
        except Exception as ex:  # noqa: BLE001
            row["hir_gemm"] = {"status": f"failed: {ex}"[:240]}
        # the CUDA-IPC pipeline first: it is the figure this benchmark exists for
        for (key, passes, ranks) in (
                ("hir_pipe_ipc", ["--stream-parallel", "--backend=cuda"], d_ipc),
                ("hir_gather_gemm", ["--convert-to-communication"], d),
                ("hir_pipe_nccl", ["--stream-parallel", "--backend=nccl"], d)):
            try:
                if m % ranks:
                    raise RuntimeError(f"m={m} not divisible by {ranks} ranks")
                src = hir.generate("ag-linear", m, k, n, ranks, a.bias, f"{tag}_d{ranks}")
                prog = hir.lower(src, passes, f"{tag}_d{ranks}_{key}")
                row[key] = hir.bench(prog, ranks, f"{tag}_{key}")
                row[key]["ranks"] = ranks
            except Exception as ex:  # noqa: BLE001
                row[key] = {"status": f"failed: {ex}"[:240], "ranks": ranks}
        if d_ipc > ngpu:
            # the reference for ranks sharing one GPU: every rank runs the whole GEMM alone
            # (the program without its one-device mesh runs replicated on all ranks)
            try:
                rep = os.path.join(hir.work, f"{tag}_linear_replicated.hir")
                with open(lin) as f, open(rep, "w") as g:
                    g.write(re.sub(r" \(DeviceMesh\{0\}\)", "", f.read()))
                row["hir_gemm_shared"] = hir.bench(rep, d_ipc, f"{tag}_linear_shared")
                row["hir_gemm_shared"]["ranks"] = d_ipc
            except Exception as ex:  # noqa: BLE001
                row["hir_gemm_shared"] = {"status": f"failed: {ex}"[:240], "ranks": d_ipc}
        res["rows"].append(row)
        log(summary_line(row, res))
        if a.trace and "trace" not in res:     # right after the headline: it is what matters
            res["trace"] = trace_run(hir, a, d_ipc)
            log(f"trace: {res['trace'].get('status')}")
    return res


def checks(hir, a, d, d_ipc):
    """Each lowering, at a small shape, against the unlowered program on the CPU backend."""
    m, k, n = [int(x) for x in a.check_shape.split("x")]
    out = {}
    for (key, passes, ranks) in (
            ("hir_gather_gemm", ["--convert-to-communication"], d),
            ("hir_pipe_nccl", ["--stream-parallel", "--backend=nccl"], d),
            ("hir_pipe_ipc", ["--stream-parallel", "--backend=cuda"], d_ipc)):
        try:
            src = hir.generate("ag-linear", m, k, n, ranks, a.bias, f"check_d{ranks}")
            prog = hir.lower(src, passes, f"check_d{ranks}_{key}")
            p = sh([hir.run_, "-np", str(ranks), f"--device={hir.device}", f"--check={src}", prog],
                   timeout=hir.timeout)
            ok = p.returncode == 0 and "check: PASS" in p.stdout
            last = [l for l in p.stdout.splitlines() if l.startswith("check: output")]
            out[key] = {"status": "PASS" if ok else "FAIL", "ranks": ranks,
                        "detail": (last[-1] if last else (p.stderr or "").strip()[-200:])}
        except Exception as ex:  # noqa: BLE001
            out[key] = {"status": f"FAIL: {ex}"[:200], "ranks": ranks}
        log(f"check {key} ({m}x{k}x{n}, {ranks} ranks): {out[key]['status']}")
    return out


def trace_run(hir, a, d_ipc):
    """A trace of the CUDA-IPC pipeline (the last run after warm-ups) and what it shows."""
    m, k, n = [int(x) for x in a.trace_shape.split("x")]
    tag = f"trace_m{m}_k{k}_n{n}_d{d_ipc}"
    try:
        src = hir.generate("ag-linear", m, k, n, d_ipc, a.bias, tag)
        prog = hir.lower(src, ["--stream-parallel", "--backend=cuda"], tag + "_ipc")
        path = os.path.join(a.out, "trace_ipc.json")
        p = sh([hir.run_, "-np", str(d_ipc), f"--device={hir.device}", "--iters=3", f"--trace={path}",
                prog], timeout=hir.timeout)
        if p.returncode or not os.path.exists(path):
            return {"status": f"failed: rc={p.returncode} {(p.stderr or '')[-200:]}"}
        return dict(status="ok", file="trace_ipc.json", shape=[m, k, n], ranks=d_ipc,
                    **overlap_of_trace(path))
    except Exception as ex:  # noqa: BLE001
        return {"status": f"failed: {ex}"[:240]}


def overlap_of_trace(path):
    """Per rank: device time of copies/communication, and how much of it ran while a GEMM
    of the same rank ran on another stream."""
    import trace_summary
    with open(path) as f:
        ev = json.load(f)["traceEvents"]
    dev = [e for e in ev if e.get("ph") == "X" and e.get("tid", 0) > 0]
    out = {"per_rank": {}}
    for pid in sorted({e["pid"] for e in dev}):
        mine = [e for e in dev if e["pid"] == pid]
        gemms = [(e["ts"], e["ts"] + e["dur"], e["tid"]) for e in mine if e.get("cat") == "gemm"]
        comm = [(e["ts"], e["ts"] + e["dur"], e["tid"]) for e in mine
                if e.get("cat") in ("ipc", "nccl", "copy")]
        tot = sum(b - a for a, b, _ in comm)
        over = 0.0
        for a, b, tid in comm:
            # union of the GEMM intervals of other streams inside [a, b)
            over += trace_summary.union([(max(a, g0), min(b, g1)) for g0, g1, gt in gemms
                                         if gt != tid and g0 < b and g1 > a])
        # a recv span is semaphore wait, then the copy: when it ends inside a GEMM running on
        # another stream, at least the end of its copy ran under that GEMM
        recvs = [e for e in mine if e.get("cat") == "ipc" and e["name"].startswith("recv")]
        ends_under = sum(1 for e in recvs if any(g0 < e["ts"] + e["dur"] < g1 and gt != e["tid"]
                                                 for g0, g1, gt in gemms))
        span = (max(e["ts"] + e["dur"] for e in mine) - min(e["ts"] for e in mine)) if mine else 0
        out["per_rank"][str(pid)] = {"comm_us": round(tot, 1), "comm_under_gemm_us": round(over, 1),
                                  "gemm_us": round(sum(b - a for a, b, _ in gemms), 1),
                                  "gemms": len(gemms), "comm_ops": len(comm),
                                  "streams": len({e["tid"] for e in mine}),
                                  "recvs": len(recvs), "recv_ends_under_gemm": ends_under,
                                  "span_us": round(span, 1)}
    return out


# ---------------------------------------------------------------- reporting

IMPLS = [("torch_gemm", "torch GEMM alone"), ("hir_gemm", "hir GEMM alone"),
         ("hir_gemm_shared", "hir GEMM alone, ranks sharing the GPU"),
         ("hir_gather_gemm", "hir gather-then-GEMM"), ("hir_pipe_nccl", "hir pipeline NCCL"),
         ("hir_pipe_ipc", "hir pipeline CUDA-IPC"), ("torch_eager", "torch eager AG+linear"),
         ("torch_symm_mem", "torch symm-mem fused")]


def rate(r, shared_ranks=1):
    """TFLOP/s of one result; for ranks sharing one GPU, the aggregate of all ranks."""
    if not r or r.get("status") != "ok":
        return None
    return r["tflops"] * shared_ranks


def ceiling(row):
    vals = [v for v in (rate(row.get("torch_gemm")), rate(row.get("hir_gemm"))) if v]
    return max(vals) if vals else None


def shared(res, key, row):
    if not res.get("shared_gpu"):
        return 1
    r = row.get(key) or {}
    return r.get("ranks", 1) if key in ("hir_pipe_ipc", "hir_gemm_shared") else 1


def cell(res, row, key):
    r = row.get(key) or {"status": "not run"}
    v = rate(r, shared(res, key, row))
    if v is None:
        return r.get("status", "not run").replace("|", "/")
    c = ceiling(row)
    eff = f" ({v / c:.2f})" if c and key not in ("torch_gemm", "hir_gemm") else ""
    if key == "hir_pipe_ipc" and res.get("shared_gpu"):
        ref = rate(row.get("hir_gemm_shared"), shared(res, "hir_gemm_shared", row))
        if ref:
            eff = f" ({v / c:.2f}; {v / ref:.2f} of shared)" if c else f" ({v / ref:.2f} of shared)"
    mark = "†" if shared(res, key, row) > 1 else ""
    num = f"{v:.0f}" if v >= 10 else f"{v:.3g}"
    return f"{num}{mark}{eff}"


def summary_line(row, res):
    return (f"m={row['m']} k={row['k']} n={row['n']}: "
            + "; ".join(f"{name} {cell(res, row, key)}" for key, name in IMPLS))


def rates_of(res, key):
    return [r for r in res["rows"] if rate(r.get(key))]


def crossover(res):
    """The smallest FLOP count from which each pipeline beats gather-then-GEMM at every
    larger measured shape (None when it never does)."""
    out = {}
    for key in ("hir_pipe_nccl", "hir_pipe_ipc"):
        rows = sorted(res["rows"], key=lambda r: r["flops"])
        wins = []
        for r in rows:
            p, g = rate(r.get(key), shared(res, key, r)), rate(r.get("hir_gather_gemm"))
            if key == "hir_pipe_ipc" and res.get("shared_gpu"):
                # ranks share the GPU: compare with the same ranks running the GEMM alone
                g = rate(r.get("hir_gemm_shared"), shared(res, "hir_gemm_shared", r))
                wins.append((r["flops"], p is not None and g is not None and p >= 0.95 * g))
            else:
                wins.append((r["flops"], p is not None and g is not None and p >= g))
        first = None
        if len(rates_of(res, key)) < 2:
            out[key] = "not measured (needs the pipeline at two or more shapes)"
            continue
        for i, (fl, ok) in enumerate(wins):
            if ok and all(w for _, w in wins[i:]):
                first = fl
                break
        out[key] = first
    return out


def markdown(res):
    m = res["machine"]
    L = []
    L.append(f"Measured {m['date']} on {', '.join(m.get('gpus', [])) or '?'} "
             f"({res['ngpu']} GPU{'s' if res['ngpu'] != 1 else ''}), "
             f"torch {m.get('torch', '?')} (CUDA {m.get('cuda', '?')}, NCCL {m.get('nccl', '?')}), "
             f"nvcc {m.get('nvcc')}, {m.get('mpi')}. bf16, "
             f"{'with' if res['bias'] else 'no'} bias, {res['warmup']} warm-ups + "
             f"{res['iters']} timed iterations, barrier before each, CUDA events, slowest rank.")
    L.append("")
    L.append("Command: `" + res["command"] + "`")
    L.append("")
    L.append("TFLOP/s per GPU (overlap efficiency = ÷ the better GEMM alone of the same shape, "
             "same run):")
    L.append("")
    hdr = "| m, k, n | " + " | ".join(name for _, name in IMPLS) + " |"
    L.append(hdr)
    L.append("|" + "---|" * (len(IMPLS) + 1))
    for row in sorted(res["rows"], key=lambda r: r["flops"]):
        L.append(f"| {row['m']}, {row['k']}, {row['n']} | "
                 + " | ".join(cell(res, row, key) for key, _ in IMPLS) + " |")
    L.append("")
    L.append(f"Ranks: NCCL variants and torch eager d={res['d']}; CUDA-IPC pipeline "
             f"d={res['d_ipc']}.")
    if res.get("shared_gpu"):
        L.append(f"† {res['d_ipc']} ranks share one GPU, so their GEMMs serialize: the figure is "
                 "the aggregate rate of all ranks (per-rank rate × ranks) and shows the "
                 "pipeline's overhead (chunked GEMMs, semaphores, stream switches), not overlap; "
                 "'of shared' compares it with the same ranks each running the whole GEMM alone "
                 "on the shared GPU. "
                 "With one rank the NCCL gather is a local copy.")
    L.append("")
    if res.get("checks"):
        L.append("Correctness (each lowering at " + a_check_shape(res) + " against the unlowered "
                 "program on the CPU backend, `hir-run --check`): "
                 + "; ".join(f"{k} ({v.get('ranks')} ranks) {v['status']}"
                             for k, v in res["checks"].items()))
        L.append("")
    co = crossover(res)
    L.append("Crossover (smallest measured FLOP count from which the pipeline keeps up with its "
             "reference at every larger shape): "
             + "; ".join(f"{k}: " + (v if isinstance(v, str) else ('%.3g FLOP' % v) if v
                                     else "not reached") for k, v in co.items()))
    tr = res.get("trace")
    if tr:
        L.append("")
        if tr.get("status") == "ok":
            L.append(f"Trace of the CUDA-IPC pipeline ({', '.join(map(str, tr['shape']))}, "
                     f"{tr['ranks']} ranks): `{tr['file']}`.")
            L.append("")
            L.append("| rank | streams | GEMMs | GEMM µs | copies/comm | comm µs | comm under a GEMM µs | recvs ending under a GEMM | span µs |")
            L.append("|---|---|---|---|---|---|---|---|---|")
            for rk, v in tr["per_rank"].items():
                L.append(f"| {rk} | {v['streams']} | {v['gemms']} | {v['gemm_us']} | "
                         f"{v['comm_ops']} | {v['comm_us']} | {v['comm_under_gemm_us']} | "
                         f"{v.get('recv_ends_under_gemm', '?')} of {v.get('recvs', '?')} | "
                         f"{v['span_us']} |")
        else:
            L.append(f"Trace: {tr.get('status')}")
    return "\n".join(L) + "\n"


def gemm_markdown(res):
    """hir's linear against torch's F.linear on every measured shape (goal: >= 0.98)."""
    m = res["machine"]
    L = [f"Measured {m['date']} on {', '.join(m.get('gpus', [])) or '?'}, in the AG+GEMM run "
         "above (same command): bf16 `linear` [m, k] x [n, k]^T, "
         f"{res['warmup']} warm-ups + {res['iters']} timed iterations, CUDA events per iteration.",
         "", "| m, k, n | hir (cuBLASLt) ms | TFLOP/s | torch F.linear ms | TFLOP/s | hir ÷ torch |",
         "|---|---|---|---|---|---|"]
    for row in sorted(res["rows"], key=lambda r: r["flops"]):
        h, t = row.get("hir_gemm") or {}, row.get("torch_gemm") or {}
        if h.get("status") == "ok" and t.get("status") == "ok":
            L.append(f"| {row['m']}, {row['k']}, {row['n']} | {h['time_ms']['mean']:.3f} | "
                     f"{h['tflops']:.0f} | {t['mean_ms']:.3f} | {t['tflops']:.0f} | "
                     f"{h['tflops'] / t['tflops']:.3f} |")
        else:
            def part(r, ms_key):
                if r.get("status") != "ok":
                    return f"{r.get('status', 'not run')} | "
                ms = r["time_ms"]["mean"] if ms_key == "time_ms" else r["mean_ms"]
                return f"{ms:.3f} | {r['tflops']:.0f}"
            L.append(f"| {row['m']}, {row['k']}, {row['n']} | {part(h, 'time_ms')} | "
                     f"{part(t, 'mean_ms')} | |")
    return "\n".join(L) + "\n"


TRACES = """`hir-run --trace=FILE.json PROGRAM` records the last run (with `--bench`, one extra run after
the timed ones) as a Chrome trace: one process per rank, one track per stream of that rank (named
after the program's stream: `main stream`, `stream 0`, `stream 1`, ...) and a `host` track. Every
statement that queues device work gets a pair of CUDA events on its stream, resolved after the
run's synchronize, so device spans show when the GPU really ran it: GEMMs (`gemm`), local copies
(`copy`), NCCL operations (`nccl`), CUDA-IPC sends and receives (`ipc`; a receive span is the
semaphore wait followed by the copy-engine copy), `Wait` statements (`wait`, the sender's
semaphore wait) and element-wise kernels. The host track holds every statement, control flow
included, with its source line and loop index (`args.line`, `args.i`). Rank 0 gathers the other
ranks' records over the MPI bootstrap; rank clocks are aligned at a barrier just before the run.
Open the file in https://ui.perfetto.dev (drag and drop) or in chrome://tracing (Load).
"""


def traces_markdown(res, committed=None):
    tr = res.get("trace") or {}
    L = [TRACES]
    if tr.get("status") != "ok":
        L.append(f"Trace in the last run: {tr.get('status', 'not recorded')}.")
        return "\n".join(L) + "\n"
    m, k, n = tr["shape"]
    L.append(f"Recorded {res['machine']['date']} by `bench/ag_gemm.py --trace` (command in the "
             f"AG+GEMM section): the CUDA-IPC pipeline at m={m}, k={k}, n={n} with {tr['ranks']} "
             + ("ranks sharing one GPU" if res.get("shared_gpu") else "ranks")
             + (f", committed as `{committed}`." if committed else "."))
    L.append("")
    L.append("| rank | streams | GEMMs | GEMM µs | copies/comm | comm µs | comm under a GEMM of another stream µs | receives ending under a GEMM | span µs |")
    L.append("|---|---|---|---|---|---|---|---|---|")
    for rk, v in tr["per_rank"].items():
        L.append(f"| {rk} | {v['streams']} | {v['gemms']} | {v['gemm_us']} | {v['comm_ops']} | "
                 f"{v['comm_us']} | {v['comm_under_gemm_us']} | "
                 f"{v.get('recv_ends_under_gemm', '?')} of {v.get('recvs', '?')} | {v['span_us']} |")
    return "\n".join(L) + "\n"


def a_check_shape(res):
    return res.get("check_shape", "?")


def chart(res, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as ex:  # noqa: BLE001
        log(f"no chart: {ex}")
        return False
    rows = sorted(res["rows"], key=lambda r: r["flops"])
    labels = [f"{r['m']}\n{r['k']}\n{r['n']}" for r in rows]
    fig, ax = plt.subplots(figsize=(11, 5.5))
    width = 0.8 / len(IMPLS)
    for i, (key, name) in enumerate(IMPLS):
        vals = [rate(r.get(key), shared(res, key, r)) or 0 for r in rows]
        if not any(vals):
            continue
        xs = [j + (i - len(IMPLS) / 2) * width + width / 2 for j in range(len(rows))]
        ax.bar(xs, vals, width, label=name + (" †" if key == "hir_pipe_ipc" and res.get("shared_gpu") else ""))
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_xlabel("m, k, n")
    ax.set_ylabel("TFLOP/s per GPU")
    g = ", ".join(res["machine"].get("gpus", [])[:1])
    ax.set_title(f"AG+GEMM, bf16, {res['ngpu']}× {g.split(',')[0]}, d={res['d']} "
                 f"(CUDA-IPC d={res['d_ipc']}{', ranks share the GPU' if res.get('shared_gpu') else ''})",
                 fontsize=10)
    ax.legend(fontsize=8, ncol=2)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


SECTION = "## AG+GEMM"


def update_section(docs, title, body):
    """Replace the section `title` ("## Name", up to the next "## ") of docs with body, keeping
    every other section (docs/benchmarks.md is shared with other benchmarks)."""
    text = open(docs).read() if os.path.exists(docs) else "# Benchmarks\n"
    block = f"{title}\n\n{body.rstrip()}\n\n"
    i = text.find(title + "\n")
    if i < 0:
        text = text.rstrip("\n") + "\n\n" + block
    else:
        j = text.find("\n## ", i + len(title))
        text = text[:i] + block + (text[j + 1:] if j >= 0 else "")
    with open(docs, "w") as f:
        f.write(text.rstrip("\n") + "\n")


METHOD = """All-gather A ([m, k], rows sharded over d ranks), then C = A·Wᵀ with W [n, k] on every
rank (performance.md). Each hir variant is generated by `hir-gen ag-linear`, lowered by `hir-opt`
and timed by `hir-run --bench --bench-json`: 5 warm-ups, 50 timed iterations, before each a device
synchronize and a barrier across ranks, CUDA events from the start of the iteration on the main
stream to its end on every stream that got work, the slowest rank's time per iteration, mean over
iterations; TFLOP/s = 2·m·n·k per rank ÷ that time (the FLOPs are counted from the linear
statements actually executed, so a pipeline's per-chunk GEMMs add up to the full GEMM). The
PyTorch baselines (`bench/torch_baselines.py`) use the same protocol in the same run. Overlap
efficiency (in parentheses) = TFLOP/s ÷ the better of hir's and PyTorch's GEMM alone on the
gathered shape. Each lowering is first checked against the unlowered program on the CPU backend
(`hir-run --check`) at a small shape.
"""


def read_notes(path):
    return ("\n" + open(path).read().strip() + "\n") if path else ""


def update_docs(docs, md, png_rel, notes=None):
    body = ("Produced by `bench/ag_gemm.py` (the command below); re-run it to reproduce.\n\n"
            + METHOD + "\n" + md + read_notes(notes)
            + (f"\n![AG+GEMM]({png_rel})\n" if png_rel else "")
            + "\n### 8 GPUs\n\n(Not measured yet: this place is for the 8-GPU run of the same "
            "command on `nvidia-h200-x8`, where every variant runs with d=8, one GPU per rank.)\n")
    update_section(docs, SECTION, body)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__)
    ap.add_argument("--bin", default="build/tools", help="directory of hir-gen, hir-opt, hir-run")
    ap.add_argument("--out", default="out/ag_gemm", help="results, tables and chart go here")
    ap.add_argument("--work", default="/tmp/ag_gemm_work", help="generated programs, raw JSON")
    ap.add_argument("--shapes", help="MxKxN[,MxKxN...] (default: a sweep ending at the headline)")
    ap.add_argument("--quick", action="store_true", help="the headline shape only")
    ap.add_argument("--ipc-ranks", type=int, default=8,
                    help="ranks of the CUDA-IPC pipeline when there is a single GPU")
    ap.add_argument("--bias", action="store_true")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--timeout", type=int, default=120, help="seconds per hir-run")
    ap.add_argument("--trace", action="store_true", help="also trace the CUDA-IPC pipeline")
    ap.add_argument("--device", default="cuda", help="hir-run backend (cpu: a dry run)")
    ap.add_argument("--gemm-allocates", action="store_true",
                    help="time hir's GEMM alone as hir-gen prints it (output allocated every "
                         "run; the 2026-12-02 table did) instead of with an ALLOCATEd output")
    ap.add_argument("--budget", type=float, default=0,
                    help="seconds: hir runs not started by then are recorded as not run")
    ap.add_argument("--check-shape", default="1024x512x512",
                    help="each lowering is first checked against the CPU backend at this shape")
    ap.add_argument("--trace-shape", default="x".join(map(str, HEADLINE)))
    ap.add_argument("--render", help="results JSON to render instead of measuring")
    ap.add_argument("--docs", help="rewrite this file's AG+GEMM section with the results")
    ap.add_argument("--png", default="ag_gemm.png", help="chart file name, next to the docs")
    ap.add_argument("--trace-doc", help="with --docs: where the trace was committed (docs path)")
    ap.add_argument("--notes", help="with --docs: markdown appended to the AG+GEMM section")
    ap.add_argument("--gemm-notes", help="with --docs: markdown appended to the GEMM section")
    ap.add_argument("--trace-notes", help="with --docs: markdown appended to the Traces section")
    a = ap.parse_args()

    if a.render:
        with open(a.render) as f:
            res = json.load(f)
    else:
        os.makedirs(a.out, exist_ok=True)
        res = measure(a)
        with open(os.path.join(a.out, "ag_gemm.json"), "w") as f:
            json.dump(res, f, indent=1)
        chart(res, os.path.join(a.out, a.png))
        with open(os.path.join(a.out, "ag_gemm.log"), "w") as f:
            f.write("\n".join(LOG) + "\n")
    if a.trace_doc and (res.get("trace") or {}).get("status") == "ok":
        res["trace"]["file"] = a.trace_doc
    md = markdown(res)
    if not a.render:
        with open(os.path.join(a.out, "ag_gemm.md"), "w") as f:
            f.write(md)
    print(md)
    if a.docs:
        update_docs(a.docs, md, a.png, a.notes)
        update_section(a.docs, "## GEMM", gemm_markdown(res) + read_notes(a.gemm_notes))
        update_section(a.docs, "## Traces",
                       traces_markdown(res, a.trace_doc) + read_notes(a.trace_notes))


if __name__ == "__main__":
    sys.exit(main())
