#!/usr/bin/env python3
"""tp_compare.py - the whole tensor-parallel AG+linear comparison in one run (issue 28, item 4):
every hir way and every PyTorch way at one shape, d ranks, timed the same way, interleaved in
rounds, one markdown table.

Layout: with G >= 2 GPUs every d <= G runs one rank per GPU (CUDA_VISIBLE_DEVICES = the first d
GPUs), and d = G is always among them; with one GPU (or --device=cpu) d ranks share it.
Rows per d:
  hir pipeline, get        hir-opt --stream-parallel --backend=cuda           --check
  hir pipeline, put        ... --pass-pipeline=backend{kind=cuda,protocol=put}  --check
  hir pipeline, deferred   ... --backend=cuda --defer-send-wait               --check
  hir pipeline, get, --comm-priority=high                                     --check
  hir pipeline, NCCL       hir-opt --stream-parallel --backend=nccl           --check
  hir gather-then-GEMM     hir-opt --convert-to-communication --backend=cuda  --check
  hir pipeline, forwarded  ... --backend=cuda --forward-local-shard (the own chunk's GEMM reads
                           the local shard, no copy into the gathered buffer)  --check
  hir pipeline, get / forwarded, --ipc-copy=overlap: the same two with every CUDA-IPC copy a
                           batched copy carrying the driver's overlap-with-compute hint --check
  hir compute-only         the get pipeline after --strip-communication       --check (itself)
  hir compute-only, fwd    the forwarded pipeline after --strip-communication (the GEMMs alone)
  PyTorch same GEMMs       bench/torch_shared.py --mode gemm  (no communication)
  PyTorch chunk GEMMs      --chunks d: the pipeline's d row-block GEMMs, no communication
  PyTorch chunks + copies  --chunks d --copies: the same GEMMs and, on a second stream with
                           nothing ordering the two, the d-1 shard copies a rank of the
                           CUDA-IPC all-gather makes (ranks sharing one GPU only): what the
                           copies cost the GEMMs on this GPU with no schedule at all (not a
                           ceiling: a pipeline that orders its copies can lose less, as the
                           --forward-local-shard pipeline did at d = 4 on an H100 on
                           2026-12-07); the table gives chunks / (chunks + copies) as its own
                           line
  PyTorch NCCL             --mode nccl: all_gather_into_tensor + F.linear
  PyTorch async-TP         --mode symm-mem: fused_all_gather_matmul, where torch has it
  hir schedule rows       with 2+ GPUs (or --simulate-nodes N on the CPU, or --rows ...,sched
                          with ranks sharing one GPU): the schedules of
                          stream-parallel{order= nodes= chunks=} (docs/passes.md, "Schedules
                          past one node"), order ring and local-first (across nodes only:
                          on one node it is the ring) x chunks d/2, d, 2d (other
                          multiples of d with --sched-chunks, e.g. 1/2,1,2,4),
                          nodes= from `hir-run --topology` (N when simulated), in the
                          backend{kind=auto nodes=} form                   --check
Rows that cannot run are printed as skipped with the reason (NCCL and symmetric memory need
one rank per GPU; no torch installed; m not divisible by d).

Timing, the same for every row: an iteration is rank 0's wall clock from leaving a barrier
(which every rank enters after synchronizing its device) to leaving the next barrier (hir-run
--bench's "wall, barrier to barrier"; torch_shared.py does the same with a gloo barrier).
Every hir run uses --vary-inputs, so its --check verifies the last timed run. Each round runs
every row once (the order rotates from round to round); a row's figure is the median of all
its iterations over all rounds, its spread the lowest and highest of its per-round medians.
TFLOP/s per GPU: the GEMM FLOP of all ranks on one GPU (d x 2mnk when d ranks share it, 2mnk
with one rank per GPU) / the median. Every figure stands beside the device's peak (dense bf16,
SMs x clock, from hir-run), a figure above it is marked as a bug. Ranks sharing one GPU also
get the ceiling of bench/shared_ceiling.py (copies' bytes at the copy bandwidth measured in
this run with torch, against the compute-only median). The device's name and clocks are read
with nvidia-smi before and after every round.

  python3 bench/tp_compare.py --bin BIN --out OUT [--ds 2,4,8] [--rounds 2]   (bench/tp_compare.sh)
  python3 bench/tp_compare.py --render OUT        # the table again from OUT/runs/*.json
Writes OUT/tp_compare.md (the table), OUT/tp_compare.json, OUT/tp_compare.log (every command),
OUT/runs/*.json (one per run).
"""
import argparse
import datetime
import fractions
import glob
import json
import os
import re
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ag_gemm  # noqa: E402 - Hir (hir-gen/hir-opt/hir-run --bench), sh, gpu_count
import mps_state  # noqa: E402 - MPS: on/off, hir-run's test
import shared_ceiling  # noqa: E402

# (key, label, hir-opt passes or None for torch, hir-run options)
HIR_ROWS = [
    ("pipe-get", "hir pipeline, get", ["--stream-parallel", "--backend=cuda"], []),
    ("pipe-put", "hir pipeline, put",
     ["--stream-parallel", "--pass-pipeline=backend{kind=cuda,protocol=put}"],
     ["--p2p-protocol=put"]),
    ("pipe-defer", "hir pipeline, deferred send wait",
     ["--stream-parallel", "--backend=cuda", "--defer-send-wait"], []),
    ("pipe-prio", "hir pipeline, get, --comm-priority=high",
     ["--stream-parallel", "--backend=cuda"], ["--comm-priority=high"]),
    ("pipe-nccl", "hir pipeline, NCCL", ["--stream-parallel", "--backend=nccl"], []),
    ("gather", "hir gather-then-GEMM (CUDA IPC)",
     ["--convert-to-communication", "--backend=cuda"], []),
    ("pipe-fwd", "hir pipeline, get, --forward-local-shard (no local copy)",
     ["--stream-parallel", "--backend=cuda", "--forward-local-shard"], []),
    ("pipe-ovl", "hir pipeline, get, --ipc-copy=overlap",
     ["--stream-parallel", "--backend=cuda"], ["--ipc-copy=overlap"]),
    ("pipe-fwd-ovl", "hir pipeline, get, --forward-local-shard --ipc-copy=overlap",
     ["--stream-parallel", "--backend=cuda", "--forward-local-shard"], ["--ipc-copy=overlap"]),
    ("compute", "hir compute-only (no communication)", None, []),
    ("compute-fwd", "hir compute-only of the --forward-local-shard pipeline (GEMMs alone)",
     None, []),
]
# (key, label, torch_shared.py --mode, further options; "{d}" stands for the ranks)
TORCH_ROWS = [("torch-gemm", "PyTorch, same GEMMs, no communication", "gemm", []),
              ("torch-chunks", "PyTorch, the pipeline's d chunk GEMMs, no communication", "gemm",
               ["--chunks", "{d}"]),
              ("torch-copies", "PyTorch, d chunk GEMMs + the gather's copies on a second stream, "
               "unordered (what unscheduled copies cost)", "gemm", ["--chunks", "{d}", "--copies"]),
              ("torch-nccl", "PyTorch NCCL all-gather + F.linear", "nccl", []),
              ("torch-symm", "PyTorch async-TP (symm_mem fused_all_gather_matmul)", "symm-mem", [])]


def torch_extra(key, d):
    """torch_shared.py options of a torch row beyond --mode"""
    return [o.format(d=d) for k, _, _, opts in TORCH_ROWS if k == key for o in opts]


def torch_status(r):
    """a torch row's status from torch_shared.py's JSON: its own, or a failed copy check"""
    if r.get("status") == "ok" and r.get("copies_equal") is False:
        return "check FAIL: a copied shard differs from its source"
    return r.get("status", "failed: no status")


# rows whose "÷ compute-only" is taken against the compute-only of their own form
BASE = {"pipe-fwd": "compute-fwd", "pipe-fwd-ovl": "compute-fwd"}
LABELS = {k: lab for k, lab, *_ in HIR_ROWS + TORCH_ROWS}
ORDER = [k for k, *_ in HIR_ROWS + TORCH_ROWS]
SCHED_ORDERS = ("ring", "local-first")


SCHED_FACTORS = (fractions.Fraction(1, 2), fractions.Fraction(1), fractions.Fraction(2))


def sched_factors(text):
    """--sched-chunks: the chunk counts as multiples of d, each a whole number or 1/N
    ("1/2,1,2,4"); ValueError with the reason otherwise"""
    out = []
    for t in text.split(","):
        try:
            f = fractions.Fraction(t.strip())
        except (ValueError, ZeroDivisionError):
            raise ValueError(f"{t!r} is not a number") from None
        if f <= 0 or (f.numerator != 1 and f.denominator != 1):
            raise ValueError(f"{t!r} is neither a whole number nor 1/N of d")
        out.append(f)
    return tuple(out)


def sched_factors_arg(text):
    """sched_factors for argparse: its reason in the usage error"""
    try:
        return sched_factors(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def sched_chunks(d, factors=SCHED_FACTORS):
    """the chunk counts of the schedule rows: d times each factor (default d/2: 2 shards a step,
    d, 2d: 2 pieces a shard), those that are whole and divide d or are a multiple of it"""
    counts = (f * d for f in factors)
    return sorted({int(c) for c in counts if c.denominator == 1 and c >= 1 and
                   (d % int(c) == 0 or int(c) % d == 0)})


def sched_key(order, chunks, nodes):
    return f"sched-{order}-k{chunks}-n{nodes}"


def sched_parse(key):
    """(order, chunks, nodes) of a schedule row's key, or None"""
    m = re.match(r"^sched-(ring|local-first)-k(\d+)-n(\d+)$", key)
    return (m.group(1), int(m.group(2)), int(m.group(3))) if m else None


def label(key):
    s = sched_parse(key)
    if s:
        return (f"hir schedule order={s[0]} chunks={s[1]} nodes={s[2]} "
                f"(backend{{kind=auto nodes={s[2]}}})")
    return LABELS[key]


def row_keys(keys):
    """the table's order: the fixed rows, then the schedule rows by order and chunks"""
    fixed = [k for k in ORDER if k in keys]
    sched = sorted((k for k in keys if sched_parse(k)),
                   key=lambda k: (SCHED_ORDERS.index(sched_parse(k)[0]), sched_parse(k)[1]))
    return fixed + sched


def topology_nodes(text):
    """N of `hir-run --topology`'s `for hir-opt: nodes=N`, or None"""
    m = re.search(r"for hir-opt: nodes=(\d+)", text)
    return int(m.group(1)) if m else None


def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def clocks():
    p = subprocess.run("nvidia-smi --query-gpu=index,name,clocks.sm,clocks.max.sm,clocks.mem,"
                       "temperature.gpu,power.draw --format=csv,noheader", shell=True,
                       capture_output=True, text=True)
    return [x.strip() for x in p.stdout.splitlines() if x.strip()] or ["nvidia-smi: none"]


def have_torch_cuda():
    try:
        import torch
        return torch.cuda.is_available(), torch.__version__
    except Exception as ex:  # noqa: BLE001
        return False, f"no torch ({type(ex).__name__})"


def median(xs):
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def plan(gpus, ds_text):
    """(one rank per GPU?, the ds to run): with 2+ GPUs the given ds up to the GPU count and
    the GPU count itself; else the given ds, sharing one device."""
    ds = [int(x) for x in ds_text.split(",") if x]
    if gpus >= 2:
        return True, sorted({d for d in ds if d <= gpus} | {gpus})
    return False, ds


def skip_reason(key, d, m, per_gpu, device, torch_ok, torch_version):
    """Why row `key` cannot run with d ranks, or None."""
    if m % d:
        return f"m={m} not divisible by {d} ranks"
    shared = not per_gpu and d > 1
    if key == "pipe-nccl" and shared and device == "cuda":
        return "NCCL refuses two ranks on one GPU (the ranks share it)"
    if key.startswith("torch"):
        if not torch_ok:
            return f"torch with CUDA unavailable ({torch_version})"
        if key == "torch-copies" and not shared:
            return ("it measures what device-to-device copies cost GEMMs on one shared GPU; "
                    "with one rank per GPU the copies cross the links (the NCCL and async-TP rows)")
        if key in ("torch-nccl", "torch-symm") and shared:
            return "NCCL and symmetric memory need one rank per GPU (the ranks share it)"
    return None


class Compare:
    def __init__(self, a):
        self.a = a
        self.runs = os.path.join(a.out, "runs")
        os.makedirs(self.runs, exist_ok=True)
        self.hir = ag_gemm.Hir(os.path.abspath(a.bin), os.path.join(a.out, "work"), a.warmup, a.iters, a.timeout,
                               a.device, time.time() + a.budget if a.budget else None)
        self.gpus = 0 if a.device == "cpu" else ag_gemm.gpu_count()
        self.per_gpu, self.ds = plan(self.gpus, a.ds)
        self.torch_ok, self.torch_version = (False, "--no-torch") if a.no_torch else \
            have_torch_cuda()
        self.progs = {}
        self.nodes = {}
        # the schedule rows: several GPUs, or nodes simulated on the CPU backend, or asked for
        # by name (--rows ...,sched) with ranks sharing one GPU (the finer chunks there)
        self.schedules = a.schedules and (self.per_gpu or bool(a.simulate_nodes) or
                                          "sched" in (a.rows or []))

    def topology(self, d):
        """nodes= for hir-opt, as `hir-run --topology` reports it for d ranks (1 when it says
        the layout is not blocks of consecutive ranks, or fails: recorded in the log)"""
        if d in self.nodes:
            return self.nodes[d]
        cmd = [self.hir.run_, "-np", str(d), f"--device={self.a.device}", "--topology"]
        if self.a.simulate_nodes:
            cmd.append(f"--simulate-nodes={self.a.simulate_nodes}")
        old = os.environ.get("CUDA_VISIBLE_DEVICES")
        if self.per_gpu:
            os.environ["CUDA_VISIBLE_DEVICES"] = self.env_for(d)["CUDA_VISIBLE_DEVICES"]
        try:
            p = ag_gemm.sh(cmd, timeout=self.a.timeout)
            n = topology_nodes(p.stdout or "")
        except subprocess.TimeoutExpired:
            n = None
        finally:
            if old is None:
                os.environ.pop("CUDA_VISIBLE_DEVICES", None)
            else:
                os.environ["CUDA_VISIBLE_DEVICES"] = old
        ag_gemm.log(f"topology d={d}: nodes={n if n else '? (using 1)'}")
        self.nodes[d] = n or 1
        return self.nodes[d]

    def keys(self, d):
        """every row of d: the fixed ones, then the schedule variants"""
        out = list(ORDER)
        if self.schedules and not self.a.m % d:
            n = self.topology(d)
            # one node: local-first is the ring
            orders = SCHED_ORDERS if n > 1 else SCHED_ORDERS[:1]
            out += [sched_key(o, c, n) for o in orders
                    for c in sched_chunks(d, self.a.sched_chunks)]
        if self.a.rows:
            out = [k for k in out if k in self.a.rows or (sched_parse(k) and "sched" in self.a.rows)]
        return out

    def skip_reason(self, key, d):
        return skip_reason(key, d, self.a.m, self.per_gpu, self.a.device, self.torch_ok,
                           self.torch_version)

    def programs(self, d):
        """hir-gen and hir-opt once per d: {key: (program, reference)}."""
        if d in self.progs:
            return self.progs[d]
        a, h = self.a, self.hir
        src = h.generate("ag-linear", a.m, a.k, a.n, d, False, f"in-d{d}")
        out = {}
        for key, _, passes, _ in HIR_ROWS:
            if passes is not None:
                out[key] = (h.lower(src, passes, f"{key}-d{d}"), src)
        out["compute"] = (h.lower(out["pipe-get"][0], ["--strip-communication"],
                                  f"compute-d{d}"), None)
        out["compute-fwd"] = (h.lower(out["pipe-fwd"][0], ["--strip-communication"],
                                      f"compute-fwd-d{d}"), None)
        for key in self.keys(d):
            s = sched_parse(key)
            if s:
                order, chunks, nodes = s
                try:
                    out[key] = (h.lower(src, [
                        f"--pass-pipeline=stream-parallel{{backend=cuda order={order} "
                        f"nodes={nodes} chunks={chunks}}},backend{{kind=auto nodes={nodes}}}"],
                        f"{key}-d{d}"), src)
                except RuntimeError as ex:      # recorded in the table as the row's status
                    out[key] = (None, str(ex))
        self.progs[d] = out
        return out

    def env_for(self, d):
        env = dict(os.environ)
        if self.per_gpu:
            env["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in range(d))
        return env

    def run_hir(self, key, d, rnd):
        a = self.a
        prog, ref = self.programs(d)[key]
        if prog is None:
            return {"status": f"failed: {ref}"[:240]}
        opts = dict((k, o) for k, _, _, o in HIR_ROWS).get(key, [])
        if self.a.simulate_nodes and sched_parse(key):
            # only the schedule rows: the CUDA-IPC rows refuse peers on another node
            opts = opts + [f"--simulate-nodes={self.a.simulate_nodes}"]
        extra = [f"--streams={a.streams}", "--timeout=120", "--vary-inputs",
                 f"--check={ref}" if ref else "--check"] + opts
        old = os.environ.get("CUDA_VISIBLE_DEVICES")
        if self.per_gpu:       # Hir.bench runs hir-run in this process's environment
            os.environ["CUDA_VISIBLE_DEVICES"] = self.env_for(d)["CUDA_VISIBLE_DEVICES"]
        try:
            r = self.hir.bench(prog, d, f"{key}-d{d}-r{rnd}", extra)
        finally:
            if old is None:
                os.environ.pop("CUDA_VISIBLE_DEVICES", None)
            else:
                os.environ["CUDA_VISIBLE_DEVICES"] = old
        if r.get("status") == "ok":
            r = {"status": "ok", "per_iter_ms": r.get("per_iter_ms", []),
                 "check": r.get("check"), "peak_tflops": r.get("peak_tflops"),
                 "device": r.get("device"), "clock": r.get("time_ms", {}).get("clock"),
                 "command": r.get("command")}
            if r["check"] != "PASS":
                r["status"] = f"check {r['check']}"
        return r

    def run_torch(self, key, d, rnd):
        a = self.a
        mode = dict((k, m) for k, _, m, _ in TORCH_ROWS)[key]
        js = os.path.join(self.hir.work, f"{key}-d{d}-r{rnd}.torch.json")
        cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(d), "python3",
               os.path.join(HERE, "torch_shared.py"), "--m", str(a.m), "--k", str(a.k),
               "--n", str(a.n), "--mode", mode, "--warmup", str(a.warmup), "--iters",
               str(a.iters), "--port", str(29533 + (10 * rnd + d + ORDER.index(key)) % 400),
               "--json", js] + torch_extra(key, d)
        if self.per_gpu:
            cmd.append("--per-gpu")
        try:
            p = ag_gemm.sh(cmd, timeout=a.timeout, env=self.env_for(d))
        except subprocess.TimeoutExpired:
            return {"status": f"not run: timed out after {a.timeout} s"}
        if p.returncode or not os.path.exists(js):
            err = (p.stderr or p.stdout or "").strip().splitlines()
            return {"status": "failed: " + (err[-1] if err else f"rc={p.returncode}")[:240]}
        with open(js) as f:
            r = json.load(f)
        r["status"] = torch_status(r)
        if r.get("status") == "ok":
            r["command"] = " ".join(shlex.quote(c) for c in cmd)
        return r

    def one(self, key, d, rnd):
        why = self.skip_reason(key, d)
        if why:
            r = {"status": f"skipped: {why}"}
        elif self.hir.deadline and time.time() > self.hir.deadline:
            r = {"status": "not run: --budget spent"}
        else:
            try:
                r = self.run_torch(key, d, rnd) if key.startswith("torch") else \
                    self.run_hir(key, d, rnd)
            except Exception as ex:  # noqa: BLE001 - recorded in the table
                r = {"status": f"failed: {type(ex).__name__}: {ex}"[:240]}
        if sched_parse(key):
            r["topology"] = "simulated" if self.a.simulate_nodes else "hir-run --topology"
        r.update(key=key, d=d, round=rnd, per_gpu=self.per_gpu, m=self.a.m, k=self.a.k,
                 n=self.a.n, date=now())
        with open(os.path.join(self.runs, f"{key}-d{d}-r{rnd}.json"), "w") as f:
            json.dump(r, f)
        ag_gemm.log(f"round {rnd} d={d} {key}: {r['status']}"
                    + (f", median {median(r['per_iter_ms']):.3f} ms" if r.get("per_iter_ms")
                       else ""))
        return r

    def copy_bandwidth(self):
        a = self.a
        if a.copy_gbps:
            return {"gbps": a.copy_gbps, "how": "given (--copy-gbps)"}
        if not self.torch_ok:
            return {"gbps": None, "how": f"not measured: {self.torch_version}"}
        chunk = a.m // max(self.ds) * a.k * 2
        try:
            g = shared_ceiling.measure_copy_gbps(chunk, per_gpu=self.per_gpu)
            return {"gbps": g, "how": f"torch copy_ of {chunk} bytes, "
                    + ("GPU 1 -> GPU 0" if self.per_gpu else "device to device on GPU 0")
                    + ", CUDA events around 20 copies"}
        except Exception as ex:  # noqa: BLE001
            return {"gbps": None, "how": f"not measured: {type(ex).__name__}: {ex}"[:200]}

    def measure(self):
        a = self.a
        meta = {"date": now(), "command": "python3 bench/tp_compare.py "
                + " ".join(shlex.quote(x) for x in sys.argv[1:]), "gpus": self.gpus,
                "per_gpu": self.per_gpu, "ds": self.ds, "m": a.m, "k": a.k, "n": a.n,
                "rounds": a.rounds, "warmup": a.warmup, "iters": a.iters, "streams": a.streams,
                "device": a.device, "torch": self.torch_version, "clocks": [],
                "mps": mps_state.state()}
        meta["copy"] = self.copy_bandwidth()
        ag_gemm.log(f"# {meta['date']}: {self.gpus} GPU(s), "
                    + ("one rank per GPU" if self.per_gpu else "ranks sharing one device")
                    + f", d in {self.ds}; MPS: {meta['mps']}; copy bandwidth {meta['copy']}")
        for rnd in range(a.rounds):
            meta["clocks"].append({"round": rnd, "before": clocks()})
            for d in self.ds:
                all_keys = self.keys(d)
                keys = all_keys[rnd % len(all_keys):] + all_keys[:rnd % len(all_keys)]
                for key in keys:
                    self.one(key, d, rnd)
            meta["clocks"][-1]["after"] = clocks()
        with open(os.path.join(a.out, "meta.json"), "w") as f:
            json.dump(meta, f, indent=1)
        return meta


def aggregate(out):
    """{(d, key): row} from OUT/runs/*.json."""
    rows = {}
    for p in sorted(glob.glob(os.path.join(out, "runs", "*.json"))):
        with open(p) as f:
            r = json.load(f)
        x = rows.setdefault((r["d"], r["key"]), {"runs": [], "statuses": set()})
        x["runs"].append(r)
        x["statuses"].add(r["status"])
        x.update(per_gpu=r.get("per_gpu"), m=r["m"], k=r["k"], n=r["n"])
    for x in rows.values():
        ok = [r for r in x["runs"] if r["status"] == "ok" and r.get("per_iter_ms")]
        x["ok_rounds"] = len(ok)
        if ok:
            x["median_ms"] = median([t for r in ok for t in r["per_iter_ms"]])
            meds = [median(r["per_iter_ms"]) for r in ok]
            x["round_ms"] = {r.get("round"): median(r["per_iter_ms"]) for r in ok}
            x["round_min_ms"], x["round_max_ms"] = min(meds), max(meds)
            x["checks"] = sorted({r.get("check") for r in ok if r.get("check")})
            peaks = [r.get("peak_tflops") for r in ok if r.get("peak_tflops")]
            x["peak"] = peaks[0] if peaks else None
            dev = [r.get("device") for r in ok if r.get("device")]
            x["device"] = dev[0] if dev else None
    return rows


def round_ratios(comp, x):
    """compute-only's median ÷ the row's, round by round (both measured in that round): the
    paired comparison, free of what drifts between rounds."""
    c, r = comp.get("round_ms") or {}, x.get("round_ms") or {}
    return [c[k] / r[k] for k in sorted(set(c) & set(r), key=str)]


def num(v):
    return f"{v:.0f}" if v >= 10 else f"{v:.3g}"


def render(out):
    meta = {}
    if os.path.exists(os.path.join(out, "meta.json")):
        with open(os.path.join(out, "meta.json")) as f:
            meta = json.load(f)
    rows = aggregate(out)
    ds = sorted({d for d, _ in rows})
    peak = next((x["peak"] for x in rows.values() if x.get("peak")), None)
    dev = next((x["device"] for x in rows.values() if x.get("device")), None)
    gbps = (meta.get("copy") or {}).get("gbps")
    L = []
    if meta:
        L.append(f"Measured {meta['date']} with `{meta['command']}`: m={meta['m']} "
                 f"k={meta['k']} n={meta['n']} bf16, "
                 + ("one rank per GPU" if meta["per_gpu"] else "d ranks sharing one device")
                 + f", {meta['rounds']} rounds x {meta['iters']} timed iterations "
                 f"({meta['warmup']} warm-ups) per row, --streams={meta['streams']}; "
                 f"{meta['torch']}; MPS: {meta.get('mps', 'not recorded')}.")
    if dev:
        L.append(f"Device: {dev.get('name')}, {dev.get('sm_count')} SMs, peak "
                 f"{peak:.0f} TFLOP/s dense bf16 at {dev.get('sm_clock_mhz')} MHz.")
    for c in meta.get("clocks", []):
        L.append(f"Round {c['round']} clocks (index, name, SM, max SM, memory, °C, W): before "
                 f"{'; '.join(c['before'])}; after {'; '.join(c.get('after', ['?']))}.")
    L.append("Timing for every row: rank 0's wall clock per iteration, barrier to barrier "
             "(each rank synchronizes its device before the barrier); median of all timed "
             "iterations of all rounds; spread = lowest-highest per-round median; rounds "
             "interleave the rows; ÷ compute-only in brackets: lowest-highest of the ratio "
             "taken round by round; \"of compute-fwd\": against the compute-only of the "
             "--forward-local-shard form, which has no local copy.")
    if meta and not meta["per_gpu"]:
        L.append("Ceiling (bench/shared_ceiling.py): max(compute-only, copies), copies = "
                 f"(d-1)·m·k·2 bytes at {gbps:.0f} GB/s ({meta['copy']['how']})." if gbps else
                 f"Ceiling: not computed, copy bandwidth {(meta.get('copy') or {}).get('how')}.")
    L += ["", "| d | row | TFLOP/s per GPU (median) | spread (round medians) | ms per iteration "
          "| ÷ compute-only | ÷ ceiling | % of peak | checked |", "|---|---|---|---|---|---|---|---|---|"]
    table = []
    for d in ds:
        comp = rows.get((d, "compute"), {})
        cmp_ms = comp.get("median_ms")
        ceil = None
        if meta and not meta.get("per_gpu") and gbps and cmp_ms:
            ceil = shared_ceiling.ceiling(meta["m"], meta["k"], meta["n"], d, gbps, cmp_ms)
        for key in row_keys({k for dd, k in rows if dd == d}):
            x = rows.get((d, key))
            if not x:
                continue
            if "median_ms" not in x:
                st = "; ".join(sorted(x["statuses"])).replace("|", "/")
                L.append(f"| {d} | {label(key)} | {st} | | | | | | |")
                continue
            gpus = d if x["per_gpu"] else 1
            fl = d * 2.0 * x["m"] * x["n"] * x["k"] / gpus
            tf = lambda ms: fl / (ms * 1e-3) / 1e12  # noqa: E731
            v = tf(x["median_ms"])
            pk = f"{100 * v / peak:.1f} %" if peak else "?"
            if peak and v > peak:
                pk += " **above peak: a bug**"
            # a row against the compute-only of its own form where the table has it
            bkey = BASE.get(key, "compute")
            if not rows.get((d, bkey), {}).get("median_ms"):
                bkey = "compute"
            base = rows.get((d, bkey), {})
            b_ms = base.get("median_ms")
            rc = f"{b_ms / x['median_ms']:.3f}" if b_ms else "?"
            paired = round_ratios(base, x) if key not in ("compute", bkey) else []
            if len(paired) > 1:
                rc += f" ({min(paired):.3f}–{max(paired):.3f})"
            if bkey != "compute":
                rc += f" of {bkey}"
            rl = f"{shared_ceiling.fraction(ceil, x['median_ms']):.3f}" if ceil else "—"
            chk = ", ".join(x.get("checks") or []) or ("spot row" if key.startswith("torch")
                                                       else "?")
            bad = len(x["runs"]) - x["ok_rounds"]
            if bad:
                chk += f"; {bad} round(s) not ok: " + "; ".join(
                    sorted(s for s in x["statuses"] if s != "ok")).replace("|", "/")
            L.append(f"| {d} | {label(key)} | {num(v)} | {num(tf(x['round_max_ms']))}–"
                     f"{num(tf(x['round_min_ms']))} | {x['median_ms']:.3f} | {rc} | {rl} | {pk} | "
                     f"{chk} |")
            table.append({"d": d, "key": key, "tflops_per_gpu": v, "median_ms": x["median_ms"],
                          "vs_compute": b_ms / x["median_ms"] if b_ms else None,
                          "vs_compute_base": bkey,
                          "vs_compute_rounds": paired,
                          "vs_ceiling": shared_ceiling.fraction(ceil, x["median_ms"])
                          if ceil else None})
        tc, tx = rows.get((d, "torch-chunks"), {}), rows.get((d, "torch-copies"), {})
        if tc.get("median_ms") and tx.get("median_ms"):
            L.append(f"| {d} | what the copies cost the GEMMs on this GPU, unordered: PyTorch "
                     f"chunks ÷ chunks + copies | | | | {tc['median_ms'] / tx['median_ms']:.3f} "
                     f"| | | |")
            table.append({"d": d, "key": "copies-cost",
                          "vs_compute": tc["median_ms"] / tx["median_ms"]})
        if ceil:
            L.append(f"| {d} | ceiling: max(compute-only, copies of {ceil['copy_bytes'] / 1e9:.3g} "
                     f"GB = {ceil['copy_ms']:.3g} ms) | {num(ceil['ceiling_tflops'])} | | "
                     f"{ceil['ceiling_ms']:.3f} | | 1.000 | | |")
            L.append(f"| {d} | no overlap: compute-only + copies | {num(ceil['no_overlap_tflops'])} "
                     f"| | {ceil['no_overlap_ms']:.3f} | | "
                     f"{shared_ceiling.fraction(ceil, ceil['no_overlap_ms']):.3f} | | |")
    md = "\n".join(L) + "\n"
    with open(os.path.join(out, "tp_compare.md"), "w") as f:
        f.write(md)
    with open(os.path.join(out, "tp_compare.json"), "w") as f:
        json.dump({"meta": meta, "rows": table}, f, indent=1)
    return md


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", help="directory of hir-gen, hir-opt, hir-run")
    ap.add_argument("--out", help="output directory")
    ap.add_argument("--render", metavar="OUT", help="only write the table of OUT again")
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                    help="cpu: the script's own test on small shapes, no GPU")
    ap.add_argument("--m", type=int, default=32768)
    ap.add_argument("--k", type=int, default=16384)
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--ds", default="2,4,8", help="ranks, comma-separated")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--streams", type=int, default=4)
    ap.add_argument("--timeout", type=int, default=400, help="seconds per run")
    ap.add_argument("--budget", type=float, default=0, help="start no run after S seconds")
    ap.add_argument("--copy-gbps", type=float, default=0, help="skip measuring it")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--no-schedules", dest="schedules", action="store_false",
                    help="leave out the schedule rows (run with 2+ GPUs or --simulate-nodes)")
    ap.add_argument("--simulate-nodes", type=int, default=0, metavar="N",
                    help="--device cpu: the schedule rows run on N simulated nodes (hir-run "
                    "--simulate-nodes; the other rows on one node, as CUDA IPC needs)")
    ap.add_argument("--sched-chunks", type=sched_factors_arg, default=SCHED_FACTORS,
                    metavar="F,...", help="the schedule rows' chunk counts as multiples of d, "
                    "each whole or 1/N (default 1/2,1,2); counts that are not whole or neither "
                    "divide d nor are a multiple of it are left out")
    ap.add_argument("--rows", type=lambda t: [x for x in t.split(",") if x], default=None,
                    metavar="KEY,...", help="run only these rows (keys: " + ", ".join(ORDER)
                    + ", sched for the schedule rows); the default is every row")
    a = ap.parse_args(argv)
    if a.rows:
        bad = [k for k in a.rows if k not in ORDER and k != "sched"]
        if bad:
            ap.error(f"--rows: unknown row {bad[0]!r} (keys: {', '.join(ORDER)}, sched)")
    if a.render:
        print(render(a.render), end="")
        return 0
    if not a.bin or not a.out:
        ap.error("--bin and --out are needed (or --render OUT)")
    if a.rounds < 1 or a.iters < 1 or a.warmup < 0:
        ap.error("--rounds and --iters >= 1, --warmup >= 0")
    if a.simulate_nodes and a.device != "cpu":
        ap.error("--simulate-nodes is for --device cpu (GPUs: the job's own nodes)")
    if a.simulate_nodes < 0:
        ap.error("--simulate-nodes N needs N >= 1")
    os.makedirs(a.out, exist_ok=True)
    c = Compare(a)
    c.measure()
    with open(os.path.join(a.out, "tp_compare.log"), "w") as f:
        f.write("\n".join(ag_gemm.LOG) + "\n")
    print(render(a.out), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
