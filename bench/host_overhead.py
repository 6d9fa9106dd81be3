#!/usr/bin/env python3
"""host_overhead.py - host time per statement: hir-run interpreting a program of many small
statements, against PyTorch eager issuing the same operations, in the same run.

The program (generated here) is a chain of N small element-wise statements on [S] float
tensors, alternating add and mul, written into two buffers ALLOCATEd once (so every run after
the first reuses them, as the allocation cache does for real programs):

    T2 = T0 + T1;  T3 = T2 * T1;  T2 = T3 + T0;  T3 = T2 * T1; ...

Measured (5 warm-ups, 50 timed iterations, as --bench does everywhere):
  hir eager    hir-run --bench --bench-bare: host time to issue one run, divided by the
               statements run (each element-wise statement pre-resolved on its first run)
  bare launch  the same hir-run call: the kernel launches of one recorded eager run replayed by
               a loop of bare cuLaunchKernel calls (same kernels, grids, blocks, arguments,
               stream), same warm-ups, iterations and host interval; eager / bare is the goal
               ratio (<= 1.2)
  hir eager, not pre-resolved   hir-run --no-preresolve: every statement resolved every time
  hir graph    hir-run --bench --graph: the run captured once into a CUDA graph and replayed
  torch eager  torch.add/torch.mul(..., out=) in a Python loop (the same kernels, no allocation)
  torch alloc  x = x + a / x = x * b (PyTorch's caching allocator)
  torch graph  the out= loop captured with torch.cuda.graph and replayed

  python3 bench/host_overhead.py --bin .dev/bin --out OUT [--stmts 1024] [--size 1024]
  python3 bench/host_overhead.py --gen-only --stmts 1024 > prog.hir
  python3 bench/host_overhead.py --render OUT/host_overhead.json --docs docs/benchmarks.md
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
WARMUP, ITERS = 5, 50


def tv(n, idn, size):
    return f"T{n}_g_float[iS{idn}{{{size}}}]"


def generate(stmts, size):
    """The program text: two inputs, two ALLOCATEd buffers, `stmts` element-wise statements."""
    ids = {0: 0, 1: 1, 2: 2, 3: 3}
    t = {k: tv(k, ids[k], size) for k in ids}
    last = 2 if stmts % 2 else 3
    lines = [f"%HostIrContainer {{ ({t[0]}, {t[1]}) -> ({t[last]}) :"]
    for k in (2, 3):
        lines.append(f"  {t[k]} = ALLOCATE(buffer={t[k]}, mem_type=global, size={size}, "
                     "zero_init=false, resets_to_zero=false)")
    for i in range(stmts):
        out, (a, b, op) = (2, (3 if i else 0, 0 if i % 4 == 2 else 1, "+")) if i % 2 == 0 \
            else (3, (2, 1, "*"))
        lines.append(f"  {t[out]}\n     = {t[a]}\n     {op} {t[b]};")
    lines.append("} // %HostIrContainer")
    return "\n".join(lines) + "\n"


def torch_side(stmts, size):
    import torch
    a = torch.randn(size, device="cuda")
    b = torch.randn(size, device="cuda")
    t2 = torch.empty(size, device="cuda")
    t3 = torch.empty(size, device="cuda")

    def loop_out():
        for i in range(stmts):
            if i % 2 == 0:
                torch.add(t3 if i else a, a if i % 4 == 2 else b, out=t2)
            else:
                torch.mul(t2, b, out=t3)

    def loop_alloc():
        x = a
        for i in range(stmts):
            x = x + (a if i % 4 == 2 else b) if i % 2 == 0 else x * b
        return x

    res = {}
    for name, fn in (("torch_eager", loop_out), ("torch_alloc", loop_alloc)):
        host, dev = [], []
        st, en = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        for it in range(WARMUP + ITERS):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            st.record()
            fn()
            t1 = time.perf_counter()
            en.record()
            torch.cuda.synchronize()
            if it >= WARMUP:
                host.append((t1 - t0) * 1e6)
                dev.append(st.elapsed_time(en))
        res[name] = summarize(host, dev, stmts)
    try:
        g = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            loop_out()
        torch.cuda.current_stream().wait_stream(s)
        with torch.cuda.graph(g):
            loop_out()
        host, dev = [], []
        st, en = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        for it in range(WARMUP + ITERS):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            st.record()
            g.replay()
            t1 = time.perf_counter()
            en.record()
            torch.cuda.synchronize()
            if it >= WARMUP:
                host.append((t1 - t0) * 1e6)
                dev.append(st.elapsed_time(en))
        res["torch_graph"] = summarize(host, dev, stmts)
    except Exception as ex:  # noqa: BLE001
        res["torch_graph"] = {"status": f"failed: {ex}"[:200]}
    return res


def summarize(host_us, dev_ms, stmts):
    h = sum(host_us) / len(host_us)
    d = sum(dev_ms) / len(dev_ms)
    return {"status": "ok", "host_us_per_iter": h, "host_us_per_stmt": h / stmts,
            "host_us_per_iter_min": min(host_us), "device_ms_per_iter": d,
            "device_us_per_stmt": d * 1e3 / stmts, "stmts": stmts}


def hir_side(bindir, work, stmts, size, timeout):
    os.makedirs(work, exist_ok=True)
    prog = os.path.join(work, f"host_overhead_{stmts}.hir")
    with open(prog, "w") as f:
        f.write(generate(stmts, size))
    res = {}
    for name, extra in (("hir_eager", ["--bench-bare"]),
                        ("hir_unresolved", ["--no-preresolve", "--bench-bare"]),
                        ("hir_graph", ["--graph"])):
        js = os.path.join(work, f"{name}.json")
        if os.path.exists(js):
            os.unlink(js)
        cmd = [os.path.join(bindir, "hir-run"), "--device=cuda", "--bench",
               f"--warmup={WARMUP}", f"--iters={ITERS}", f"--bench-json={js}", *extra, prog]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        if p.returncode or not os.path.exists(js):
            res[name] = {"status": "failed: " + (p.stderr.strip().splitlines() or ["?"])[-1][:200]}
            continue
        r = json.load(open(js))
        # the two ALLOCATEs count as statements too
        n = r.get("stmts_per_iter") or stmts
        res[name] = {"status": "ok", "mode": r.get("mode"),
                     "host_us_per_iter": r["host_us_per_iter"],
                     "host_us_per_stmt": r["host_us_per_iter"] / n,
                     "host_us_per_iter_min": r.get("host_us_per_iter_min"),
                     "device_ms_per_iter": r["time_ms"]["mean"],
                     "device_us_per_stmt": r["time_ms"]["mean"] * 1e3 / n, "stmts": n,
                     "command": " ".join(shlex.quote(c) for c in cmd), "stdout": p.stdout[-900:]}
        bare = r.get("bare_launch")
        if bare is None:
            continue
        key = "hir_bare" if name == "hir_eager" else name + "_bare"
        if "not_measured" in bare:
            res[key] = {"status": "not measured: " + bare["not_measured"][:200]}
            continue
        res[key] = {"status": "ok", "mode": "bare cuLaunchKernel replay of one eager run",
                    "host_us_per_iter": bare["host_us_per_iter"],
                    "host_us_per_stmt": bare["host_us_per_iter"] / n,
                    "host_us_per_iter_min": bare["host_us_per_iter_min"],
                    "launches": bare["launches_per_iter"],
                    "other_device_calls": bare["other_device_calls"],
                    "eager_over_bare": bare["eager_over_bare"], "stmts": n}
    return res


METHOD = """The program is generated by the script: N element-wise statements (alternating add and
mul) on [S] float tensors, written into two buffers ALLOCATEd once, so every run after the first
reuses them. `hir-run --bench` times the host side of each run: the time from the start of the
run until the interpreter has issued its last statement (the GPU may still be busy), divided by
the statements executed (the two ALLOCATEs included); the device column is the CUDA-event time of
the whole run. `--graph` captures one run into a CUDA graph after an eager first run and times
replays: the host issues one graph launch per run. PyTorch issues the same kernels from a Python
loop (`torch.add/torch.mul(..., out=)`), allocating (`x = x + a`), and replays a captured
`torch.cuda.CUDAGraph`, with the same timing. The bare-launch row comes from the same `hir-run
--bench-bare` call as the eager row: after the eager timing, one eager run is recorded (every
kernel launch the CUDA backend issues: function, grid, block, shared bytes, stream, argument
bytes) and a loop that replays exactly those launches with `cuLaunchKernel` and nothing else is
timed with the same warm-ups, iterations and host interval, divided by the same statement count.
This program has no GEMM, copy or communication (the report counts such device calls, which the
bare loop would leave out). `--no-preresolve` is the interpreter without pre-resolved
statements (every statement re-resolved every time), for comparison. Goal (issue 17): eager host
time per statement at most 1.2× the bare loop's.
"""


ROWS = [("hir_eager", "hir-run (interpreter, pre-resolved)"),
        ("hir_bare", "bare cuLaunchKernel loop, same launches (same run)"),
        ("hir_unresolved", "hir-run --no-preresolve"),
        ("hir_unresolved_bare", "bare cuLaunchKernel loop (the --no-preresolve run)"),
        ("hir_graph", "hir-run --graph (CUDA graph replay)"),
        ("torch_eager", "PyTorch eager, out="), ("torch_alloc", "PyTorch eager, allocating"),
        ("torch_graph", "PyTorch CUDA graph replay")]


def markdown(res):
    L = [f"Measured {res['date']} on {res.get('gpu', '?')}, torch {res.get('torch', '?')}: "
         f"{res['stmts']} element-wise statements on [{res['size']}] float tensors, "
         f"{WARMUP} warm-ups + {ITERS} timed iterations.", "",
         f"Command: `{res['command']}`", "",
         "| implementation | host µs / statement | host µs / iteration | device ms / iteration |",
         "|---|---|---|---|"]
    for key, name in ROWS:
        r = res.get(key, {})
        if r.get("status") != "ok":
            L.append(f"| {name} | {r.get('status', 'not run')} | | |")
        else:
            dev = r.get("device_ms_per_iter")
            L.append(f"| {name} | {r['host_us_per_stmt']:.2f} | {r['host_us_per_iter']:.0f} | "
                     + (f"{dev:.3f} |" if dev is not None else "(host loop only) |"))
    L.append("")
    for key, bkey in (("hir_eager", "hir_bare"), ("hir_unresolved", "hir_unresolved_bare")):
        e, b = res.get(key, {}), res.get(bkey, {})
        if e.get("status") == "ok" and b.get("status") == "ok" and b["host_us_per_iter"] > 0:
            ratio = e["host_us_per_iter"] / b["host_us_per_iter"]
            L.append(f"- {dict(ROWS)[key]}: eager ÷ bare = {ratio:.2f}× "
                     f"({b['launches']} launches replayed per run, "
                     f"{b['other_device_calls']} other device calls) — goal ≤ 1.2×: "
                     + ("**met**" if ratio <= 1.2 else "**not met**"))
    return "\n".join(L) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="build/tools")
    ap.add_argument("--out", default="out/host_overhead")
    ap.add_argument("--work", default="/tmp/host_overhead_work")
    ap.add_argument("--stmts", type=int, default=1024)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("--gen-only", action="store_true", help="print the program and stop")
    ap.add_argument("--render")
    ap.add_argument("--docs")
    ap.add_argument("--notes", help="with --docs: markdown appended to the section")
    a = ap.parse_args()
    if a.gen_only:
        sys.stdout.write(generate(a.stmts, a.size))
        return 0
    if a.render:
        res = json.load(open(a.render))
    else:
        import datetime
        res = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
               "stmts": a.stmts, "size": a.size,
               "command": "python3 bench/host_overhead.py " + " ".join(shlex.quote(x) for x in sys.argv[1:])}
        res.update(hir_side(a.bin, a.work, a.stmts, a.size, a.timeout))
        try:
            import torch
            res["torch"] = torch.__version__
            res["gpu"] = torch.cuda.get_device_name()
            res.update(torch_side(a.stmts, a.size))
        except Exception as ex:  # noqa: BLE001
            res["torch_eager"] = {"status": f"failed: {ex}"[:200]}
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "host_overhead.json"), "w") as f:
            json.dump(res, f, indent=1)
    md = markdown(res)
    print(md)
    if a.docs:
        from ag_gemm import update_section
        update_section(a.docs, "## Host overhead",
                       "Produced by `bench/host_overhead.py`; re-run it to reproduce.\n\n"
                       + METHOD + "\n" + md
                       + (("\n" + open(a.notes).read().strip() + "\n") if a.notes else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
