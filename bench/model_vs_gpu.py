#!/usr/bin/env python3
"""model_vs_gpu.py - the scale model (bench/scale_model.py) against what ONE GPU can measure.

Two measurements, each next to the model's PREDICTION for it and the ratio measured/predicted:

1. The chunked GEMM: one GEMM of m/K rows (K = 1, 2, 4, ..., 64 by default) against all of W
   (k x n, bf16), the step GEMM of a pipeline of K chunks. The model predicts
   max(2.M.n.k / R, bytes / B_hbm) + t_fixed; small chunks read all of W and turn memory-bound.
   Timed by `hir-cuda-selftest --bench-gemm M k n` (CUDA events around back-to-back GEMMs,
   median of rounds, output checked; --gemm-tool selftest, the default on cuda) or by
   `hir-run --bench` on `hir-gen linear` (--gemm-tool hir-run: the only one on --device cpu).
2. bench/schedule_gpu.sh's runs (d ranks sharing the GPU, every schedule variant): each
   variant's compute-only program (--strip-communication) against the model's time for the
   same GEMMs (every rank's GEMMs, from the run's gemm_shapes, back to back on one GPU), and
   the measured pipeline / compute-only next to the model's PREDICTED efficiency of that
   schedule on d separate GPUs (a different machine: shown for orientation, not a validation).

The model's inputs are read as bench/scale_model.py reads them (the GEMM rate and fixed cost
from bench/results, nominal links; every flag of scale_model.py is taken here too). Nothing
here is a multi-GPU measurement.

  python3 bench/model_vs_gpu.py --bin BIN --out OUT            # GPU machine: measure, render
  python3 bench/model_vs_gpu.py --bin BIN --out OUT --schedules # ... and run schedule_gpu.sh
  python3 bench/model_vs_gpu.py --render OUT                   # the table again from OUT
  python3 bench/model_vs_gpu.py --bin BIN --out OUT --device cpu --gemm-tool hir-run ...
                                   # the script's own test on the CPU backend (no timings)
Writes OUT/gemm/*.log|*.json (one per K), OUT/schedule/ (schedule_gpu.sh's output),
OUT/model_vs_gpu.md and OUT/model_vs_gpu.json. The captions say "MPS: on/off": whether a CUDA
MPS daemon answered when the run began (bench/mps_state.py), and for the schedules what
schedule_gpu.sh's log records (MPS=1 in the environment gives it a daemon of its own;
docs/benchmarks.md, "Ranks sharing one GPU").
"""
import argparse
import datetime
import glob
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mps_state  # noqa: E402
import scale_model as sm  # noqa: E402

SELFTEST_LINE = re.compile(r"^gemm-bench variant=(\S+) m=(\d+) k=(\d+) n=(\d+) check=(\S+) "
                           r"rounds_ms=([0-9.,]+)\s*$")
TAG = re.compile(r"^d(\d+)-(ring|local-first)-k(\d+)-n(\d+)$")


def median(xs):
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def parse_selftest(text):
    """the `gemm-bench variant=untuned ...` line of hir-cuda-selftest --bench-gemm: {m, k, n,
    check, ms (median of the rounds' per-GEMM times), rounds_ms}, or None"""
    for line in text.splitlines():
        g = SELFTEST_LINE.match(line.strip())
        if g and g.group(1) == "untuned":
            rounds = [float(x) for x in g.group(6).split(",") if x]
            if not rounds:
                return None
            return {"m": int(g.group(2)), "k": int(g.group(3)), "n": int(g.group(4)),
                    "check": g.group(5), "ms": median(rounds), "rounds_ms": rounds}
    return None


def parse_bench_json(path):
    """hir-run --bench-json: {ms (median), check, ranks, streams, gemm_shapes}"""
    with open(path) as f:
        j = json.load(f)
    return {"ms": j["time_ms"]["median"], "check": j.get("check"), "ranks": j["ranks"],
            "ranks_per_device": j.get("ranks_per_device", j["ranks"]),
            "streams": j.get("streams"), "gemm_shapes": j.get("gemm_shapes", []),
            "backend": j.get("backend")}


def model_of(args):
    """scale_model's Model with the inputs the script derives (flags override them)"""
    measured = sm.load_measured(args.results)
    return sm.model_from_args(args, measured), measured


def gemm_model(base, m, k, n):
    """base's rate, fixed cost and HBM at another shape"""
    return sm.Model(m=m, k=k, n=n, tflops=base.R / 1e12, gemm_fixed_us=base.t_fixed * 1e6,
                    gpus_per_node=base.g, hbm_gbs=base.B_hbm / 1e9,
                    nvlink_gbs=base.B_nvl / 1e9, ib_gbs=base.B_ib / 1e9,
                    nvlink_latency_us=base.lat_nvl * 1e6, ib_latency_us=base.lat_ib * 1e6)


def regime(mo, rows):
    return "memory" if 2.0 * rows * mo.n * mo.k / mo.R < \
        mo.elem * (rows * mo.k + mo.n * mo.k + rows * mo.n) / mo.B_hbm else "compute"


# ---- measuring

def run(cmd, log, timeout):
    with open(log, "w") as f:
        f.write("$ " + " ".join(cmd) + "\n")
        f.flush()
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=timeout)
        f.write(p.stdout)
    return p.returncode, p.stdout


def measure_gemms(a):
    out = os.path.join(a.out, "gemm")
    os.makedirs(out, exist_ok=True)
    for K in a.chunks:
        rows = a.m // K
        tag = os.path.join(out, "K%d" % K)
        if a.gemm_tool == "selftest":
            run([os.path.join(a.bin, "hir-cuda-selftest"), "--bench-gemm", str(rows), str(a.k),
                 str(a.n), "--rounds", str(a.rounds), "--iters", str(a.iters)], tag + ".log",
                a.timeout)
        else:
            src = tag + ".hir"
            run([os.path.join(a.bin, "hir-gen"), "linear", "--m", str(rows), "--k", str(a.k),
                 "--n", str(a.n), "--no-bias", "-o", src], tag + ".gen.log", a.timeout)
            run([os.path.join(a.bin, "hir-run"), "--device=" + a.device, "--check",
                 "--bench=%d" % a.iters, "--warmup=3", "--bench-json=" + tag + ".json", src],
                tag + ".log", a.timeout)


def run_schedules(a):
    env = dict(os.environ, DS=a.ds, M=str(a.sched_m), K=str(a.sched_k), N=str(a.sched_n),
               STREAMS=str(a.streams), ITERS=str(a.sched_iters), DEVICE=a.device)
    with open(os.path.join(a.out, "schedule_gpu.out"), "w") as f:
        subprocess.run(["bash", os.path.join(HERE, "schedule_gpu.sh"), a.bin,
                        os.path.join(a.out, "schedule")], env=env, stdout=f,
                       stderr=subprocess.STDOUT, timeout=a.timeout * 40)


# ---- reading back and comparing

def gemm_rows(out, mo_base, m_default, k, n):
    rows = []
    for path in sorted(glob.glob(os.path.join(out, "gemm", "K*.log")),
                       key=lambda p: int(re.sub(r"\D", "", os.path.basename(p).split(".")[0]))):
        if path.endswith(".gen.log"):
            continue
        K = int(os.path.basename(path)[1:].split(".")[0])
        js = path[:-4] + ".json"
        if os.path.exists(js):
            b = parse_bench_json(js)
            sh = (b["gemm_shapes"] or [{}])[0]
            r = {"K": K, "m": sh.get("m"), "k": sh.get("k"), "n": sh.get("n"), "ms": b["ms"],
                 "check": b["check"], "tool": "hir-run --bench (%s)" % b["backend"]}
        else:
            with open(path) as f:
                p = parse_selftest(f.read())
            if not p:
                rows.append({"K": K, "status": "no result (see %s)" % os.path.relpath(path, out)})
                continue
            r = dict(p, K=K, tool="hir-cuda-selftest --bench-gemm")
        if r["m"] is None:
            rows.append({"K": K, "status": "no GEMM in the run"})
            continue
        mo = gemm_model(mo_base, r["m"] * K, r["k"], r["n"])
        r["predicted_ms"] = mo.gemm(r["m"]) * 1e3
        r["ratio"] = r["ms"] / r["predicted_ms"]
        r["regime"] = regime(mo, r["m"])
        r["status"] = "ok"
        rows.append(r)
    return rows


def schedule_rows(out, mo_base):
    rows = []
    d_ = os.path.join(out, "schedule")
    for path in sorted(glob.glob(os.path.join(d_, "d*.json"))):
        tag = os.path.basename(path)[:-5]
        g = TAG.match(tag)
        if not g:
            continue
        d, order, chunks, nodes = int(g.group(1)), g.group(2), int(g.group(3)), int(g.group(4))
        r = {"tag": tag, "d": d, "order": order, "chunks": chunks, "nodes": nodes}
        pipe = parse_bench_json(path)
        r["pipeline_ms"] = pipe["ms"]
        strip = os.path.join(d_, tag + "-strip.json")
        if os.path.exists(strip):
            co = parse_bench_json(strip)
            r["compute_ms"] = co["ms"]
            shapes = co["gemm_shapes"]
            if shapes:
                # a step's GEMM has m / chunks rows (G shards, or a piece of one)
                mo = gemm_model(mo_base, shapes[0]["m"] * chunks, shapes[0]["k"], shapes[0]["n"])
                # every rank's GEMMs, back to back on the one GPU the ranks share
                r["compute_predicted_ms"] = co["ranks_per_device"] * sum(
                    s.get("per_iter", 1) * mo.gemm(s["m"]) for s in shapes) * 1e3
                r["compute_ratio"] = r["compute_ms"] / r["compute_predicted_ms"]
                r["pipeline_over_compute"] = r["compute_ms"] / r["pipeline_ms"]
                mo.g = d // nodes
                # schedule_gpu.sh runs the CUDA form: exchanges on the worker streams
                e = mo.efficiency(d, chunks, pipe["streams"] or 4, order, transport=False)
                r["predicted_efficiency_d_gpus"] = e
        check = os.path.join(d_, "schedule_gpu.log")
        if os.path.exists(check):
            with open(check) as f:
                m = re.search(r"^%s check rc=\d+ (.*)$" % re.escape(tag), f.read(), re.M)
            r["check"] = "PASS" if m and "check: PASS" in m.group(1) else "FAIL"
        rows.append(r)
    rows.sort(key=lambda r: (r["d"], r["order"], r["chunks"]))
    return rows


def schedule_mps(out):
    """MPS: on/off as schedule_gpu.sh's log header records it"""
    try:
        with open(os.path.join(out, "schedule", "schedule_gpu.log")) as f:
            m = re.search(r"MPS: (on|off)", f.readline())
    except OSError:
        m = None
    return m.group(1) if m else "not recorded"


def f3(v):
    return "-" if v is None else "%.3f" % v


def render(a):
    mo, measured = model_of(a)
    meta = {}
    mp = os.path.join(a.out, "meta.json")
    if os.path.exists(mp):
        with open(mp) as f:
            meta = json.load(f)
    gm = gemm_rows(a.out, mo, meta.get("m", a.m), meta.get("k", a.k), meta.get("n", a.n))
    sc = schedule_rows(a.out, mo)
    g = measured["gemm"]
    L = ["Measured on ONE device next to the scale model's PREDICTIONS (bench/model_vs_gpu.py)."]
    if meta:
        L.append("Measured %s on %s, MPS: %s, `%s`." % (meta["date"], meta["device"],
                                                         meta.get("mps", "not recorded"),
                                                         meta["command"]))
        if meta["device"] == "cpu backend":
            L.append("On the CPU backend: the script's own test; its timings mean nothing.")
    L.append("PREDICTED with GEMM %.1f TFLOP/s (hir, measured %s, %s) + %.1f us per GEMM, HBM "
             "%.0f GB/s (nominal), as bench/scale_model.py derives them; ratio = measured / "
             "PREDICTED." % (mo.R / 1e12, g["date"], g["gpu"], mo.t_fixed * 1e6, mo.B_hbm / 1e9))
    L += ["", "Chunked GEMM (one GEMM of m/K rows against all of W):", "",
          "| K | rows | k | n | measured ms | PREDICTED ms | measured / PREDICTED | model's "
          "regime | check | tool |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in gm:
        if r["status"] != "ok":
            L.append("| %d | %s | | | | | | | | |" % (r["K"], r["status"]))
            continue
        L.append("| %d | %d | %d | %d | %.4f | %.4f | %.3f | %s-bound | %s | %s |" % (
            r["K"], r["m"], r["k"], r["n"], r["ms"], r["predicted_ms"], r["ratio"], r["regime"],
            r["check"], r["tool"]))
    L += ["", "schedule_gpu.sh's runs (d ranks sharing the device, MPS: %s; PREDICTED efficiency "
          "is of d separate GPUs: orientation, not a validation):" % schedule_mps(a.out), "",
          "| schedule | check | compute-only measured ms | compute-only PREDICTED ms | measured "
          "/ PREDICTED | pipeline measured ms | measured pipeline ÷ compute-only | PREDICTED "
          "efficiency, d GPUs |", "|---|---|---|---|---|---|---|---|"]
    for r in sc:
        L.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["tag"], r.get("check", "?"), f3(r.get("compute_ms")),
            f3(r.get("compute_predicted_ms")), f3(r.get("compute_ratio")), f3(r["pipeline_ms"]),
            f3(r.get("pipeline_over_compute")), f3(r.get("predicted_efficiency_d_gpus"))))
    if not sc:
        L.append("| (no schedule_gpu.sh runs in %s) | | | | | | | |" %
                 os.path.join(a.out, "schedule"))
    md = "\n".join(L) + "\n"
    with open(os.path.join(a.out, "model_vs_gpu.md"), "w") as f:
        f.write(md)
    with open(os.path.join(a.out, "model_vs_gpu.json"), "w") as f:
        json.dump({"kind": "measured vs PREDICTED", "meta": meta, "gemm": gm, "schedules": sc},
                  f, indent=1)
    return md


def ints(text, what):
    try:
        v = [int(x) for x in text.replace(" ", ",").split(",") if x]
    except ValueError:
        raise argparse.ArgumentTypeError("%s takes integers: %r" % (what, text))
    if not v or any(x < 1 for x in v):
        raise argparse.ArgumentTypeError("%s takes positive integers: %r" % (what, text))
    return v


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", help="directory of hir-gen, hir-opt, hir-run, hir-cuda-selftest")
    ap.add_argument("--out", help="output directory")
    ap.add_argument("--render", metavar="OUT", help="only write the table of OUT again")
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--gemm-tool", choices=("selftest", "hir-run"),
                    help="default: selftest on cuda, hir-run on cpu")
    ap.add_argument("--chunks", type=lambda t: ints(t, "--chunks"),
                    default=[1, 2, 4, 8, 16, 32, 64])
    ap.add_argument("--m", type=int, default=32768)
    ap.add_argument("--k", type=int, default=16384)
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--timeout", type=int, default=300, help="seconds per command")
    ap.add_argument("--schedules", action="store_true", help="run bench/schedule_gpu.sh too")
    ap.add_argument("--ds", default="4 8", help="schedule_gpu.sh's DS")
    ap.add_argument("--sched-m", type=int, default=8192)
    ap.add_argument("--sched-k", type=int, default=4096)
    ap.add_argument("--sched-n", type=int, default=4096)
    ap.add_argument("--sched-iters", type=int, default=5)
    ap.add_argument("--streams", type=int, default=4)
    # the model's inputs, as bench/scale_model.py takes them
    ap.add_argument("--results", default=sm.RESULTS)
    ap.add_argument("--tflops", type=float)
    ap.add_argument("--gemm-fixed-us", type=float)
    ap.add_argument("--gpus-per-node", type=int, default=8)
    for key, v in sm.NOMINAL.items():
        ap.add_argument("--" + key.replace("_", "-"), type=float, default=v)
    a = ap.parse_args(argv)
    if a.render:
        a.out = a.render
        print(render(a), end="")
        return 0
    if not a.bin or not a.out:
        ap.error("--bin and --out are needed (or --render OUT)")
    if a.m < 1 or a.k < 1 or a.n < 1 or any(a.m % K for K in a.chunks):
        ap.error("--m --k --n positive, and every --chunks count must divide m")
    a.gemm_tool = a.gemm_tool or ("selftest" if a.device == "cuda" else "hir-run")
    if a.gemm_tool == "selftest" and a.device == "cpu":
        ap.error("hir-cuda-selftest needs --device cuda (use --gemm-tool hir-run)")
    a.bin = os.path.abspath(a.bin)
    os.makedirs(a.out, exist_ok=True)
    dev = "cpu backend"
    if a.device == "cuda":
        p = subprocess.run("nvidia-smi --query-gpu=name,driver_version,clocks.max.sm "
                           "--format=csv,noheader", shell=True, capture_output=True, text=True)
        dev = (p.stdout.strip().splitlines() or ["nvidia-smi: none"])[0]
    with open(os.path.join(a.out, "meta.json"), "w") as f:
        json.dump({"date": datetime.datetime.now(datetime.timezone.utc).strftime(
            "%Y-%m-%d %H:%M UTC"), "device": dev, "mps": mps_state.state(), "m": a.m, "k": a.k,
            "n": a.n,
            "command": "python3 bench/model_vs_gpu.py " + " ".join(sys.argv[1:] if argv is None
                                                                   else argv)}, f, indent=1)
    measure_gemms(a)
    if a.schedules:
        run_schedules(a)
    print(render(a), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
