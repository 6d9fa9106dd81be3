#!/usr/bin/env python3
"""agree_cost.py - what the cross-rank agreement (issue 31, docs/reliability.md) costs on the
CPU backend: a program of N small collectives (Allreduce of [S] floats over every rank, each
waited at once) run with hir-run --bench by two builds, interleaved round by round, so a busy
machine slows both alike. The difference of the medians, divided by N, is the cost per
collective of what the newer build adds (the signature exchange before each collective).

  python3 bench/agree_cost.py --base BIN_DIR --new BIN_DIR --out OUT
        [--ranks 2] [--colls 100] [--size 16] [--rounds 7] [--iters 50] [--p2p]

BIN_DIR holds hir-run. --p2p: N P2P round trips between ranks 0 and 1 instead (each send
carries its 16-byte header on the newer build). Writes OUT/agree_cost.json and prints one
table row per build and the difference. The medians of a shared machine are noisy: say so
with every figure (docs/reliability.md).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys


def program(ranks, colls, size, p2p):
    team = " ".join(str(i) for i in range(ranks))
    mesh = "DeviceMesh{%s}" % team
    t0 = "T0_g_float[iS0{%d}] (%s)" % (size, mesh)
    t1 = "T1_g_float[iS1{%d}] (%s)" % (size, mesh)
    out = ["%%HostIrContainer { (%s) -> (%s) :" % (t0, t1),
           "  %s = ALLOCATE(buffer=%s, mem_type=global, size=%d, zero_init=false, "
           "resets_to_zero=false)" % (t1, t1, size)]
    if not p2p:
        for k in range(colls):
            out.append("  Communication %d (type=Allreduce, team=(%s), input=%s, output=%s, "
                       "backend=NCCL)" % (k, team, t0, t1))
            out.append("  Wait Communication %d" % k)
    else:
        # rank 0 sends T0 and receives T1; rank 1 receives into T1 and sends it back
        out.append("  IF Manual ( rank == 0 ):")
        for k in range(colls):
            out.append("    P2PCommunication %d (type=send, buffer=%s, peer=1, backend=NCCL)" % (2 * k, t0))
            out.append("    Wait Communication %d" % (2 * k))
            out.append("    P2PCommunication %d (type=recv, buffer=%s, peer=1, backend=NCCL)" % (2 * k + 1, t1))
            out.append("    Wait Communication %d" % (2 * k + 1))
        out.append("  ELSE:")
        for k in range(colls):
            out.append("    P2PCommunication %d (type=recv, buffer=%s, peer=0, backend=NCCL)" % (2 * colls + 2 * k, t1))
            out.append("    Wait Communication %d" % (2 * colls + 2 * k))
            out.append("    P2PCommunication %d (type=send, buffer=%s, peer=0, backend=NCCL)" % (2 * colls + 2 * k + 1, t1))
            out.append("    Wait Communication %d" % (2 * colls + 2 * k + 1))
    out.append("} // %HostIrContainer")
    return "\n".join(out) + "\n"


def run(bin_dir, prog, ranks, iters):
    cmd = [os.path.join(bin_dir, "hir-run"), "-np", str(ranks), "--device=cpu",
           "--bench=%d" % iters, "--warmup=5", "--timeout=60", prog]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if p.returncode:
        sys.exit("agree_cost: %s failed:\n%s%s" % (" ".join(cmd), p.stdout, p.stderr))
    m = re.search(r"time/iter\s+mean\s+([\d.]+) ms\s+median\s+([\d.]+)", p.stdout)
    if not m:
        sys.exit("agree_cost: no time/iter line in:\n" + p.stdout)
    return float(m.group(2))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--colls", type=int, default=100)
    ap.add_argument("--size", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--p2p", action="store_true")
    a = ap.parse_args()
    if a.p2p and a.ranks != 2:
        sys.exit("agree_cost: --p2p runs on 2 ranks")
    os.makedirs(a.out, exist_ok=True)
    prog = os.path.join(a.out, "agree-%s.hir" % ("p2p" if a.p2p else "allreduce"))
    with open(prog, "w") as f:
        f.write(program(a.ranks, a.colls, a.size, a.p2p))
    t = {"base": [], "new": []}
    for r in range(a.rounds):
        for name in ("base", "new") if r % 2 == 0 else ("new", "base"):
            t[name].append(run(getattr(a, name), prog, a.ranks, a.iters))
    med = {k: statistics.median(v) for k, v in t.items()}
    per = (med["new"] - med["base"]) / a.colls * 1000.0
    what = "P2P round trips" if a.p2p else "Allreduce"
    res = {"ranks": a.ranks, "statements": a.colls, "kind": what, "size": a.size,
           "rounds": a.rounds, "iters": a.iters, "median_ms_per_run": t,
           "median_of_medians_ms": med, "difference_us_per_statement": per}
    with open(os.path.join(a.out, "agree_cost.json"), "w") as f:
        json.dump(res, f, indent=1)
    for k in ("base", "new"):
        print("| %s | %d x %s of %d floats, %d ranks | %s | %.3f ms |" % (
            k, a.colls, what, a.size, a.ranks, " ".join("%.3f" % x for x in t[k]), med[k]))
    print("difference: %+.2f us per statement (median of %d rounds of --bench=%d medians)"
          % (per, a.rounds, a.iters))


if __name__ == "__main__":
    main()
