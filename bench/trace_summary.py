#!/usr/bin/env python3
"""trace_summary.py - where the time of a traced run goes, from a `hir-run --trace` file
(Chrome trace JSON: one process per rank, one track per stream, a `host` track; device spans
are CUDA event pairs around each statement, on one clock aligned at a barrier before the run).

Per rank and stream: device spans, busy time (the union of the stream's spans), idle time
inside the rank's device window, and busy time per category (gemm, ipc, nccl, copy, wait, ...).
Per rank: GEMM time (union over its streams), communication time (ipc, nccl, copy), the part of
it under none of the rank's GEMMs (exposed), and the window with nothing on any stream.
All ranks together (the ranks of one trace share one clock; when they share one GPU this is the
GPU's timeline): the window from the first device span to the last, split into time with a GEMM
of some rank, time with communication but no GEMM (exposed communication), and time with
nothing (idle); and the GEMM spans summed against their union (> 1: GEMMs of different streams
or ranks in flight together; on one shared GPU they time-slice, so a GEMM's span is longer
than its work). With --compute-ms (the compute-only time of the same GEMMs) the GEMM union is
set against it: the excess is what the GEMMs lost to the copies and to sharing.

A span is what the events bracket: a receive is its semaphore wait plus its copy, and a
stream that waits (an event, a semaphore) shows as busy in the span that waits. Read the
busy figures as upper bounds of work, the idle and exposed ones as lower bounds of loss.

  python3 bench/trace_summary.py TRACE.json [--compute-ms MS] [--json OUT.json]
"""
import argparse
import json
import sys

COMM = ("ipc", "nccl", "copy")


def union(iv):
    """Total length of the union of [a, b) intervals."""
    tot, cur = 0.0, None
    for a, b in sorted(iv):
        if cur and a <= cur[1]:
            cur[1] = max(cur[1], b)
        else:
            if cur:
                tot += cur[1] - cur[0]
            cur = [a, b]
    if cur:
        tot += cur[1] - cur[0]
    return tot


def merge(iv):
    out = []
    for a, b in sorted(iv):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def minus(iv, cover):
    """Length of the union of iv not covered by the union of cover."""
    cov = merge(cover)
    tot = 0.0
    for a, b in merge(iv):
        left = b - a
        for c0, c1 in cov:
            if c1 <= a or c0 >= b:
                continue
            left -= min(b, c1) - max(a, c0)
        tot += left
    return tot


def load(path):
    with open(path) as f:
        doc = json.load(f)
    ev = doc["traceEvents"] if isinstance(doc, dict) else doc
    names = {}
    for e in ev:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
    spans = [dict(e, ts=float(e["ts"]), dur=float(e["dur"])) for e in ev if e.get("ph") == "X"]
    return doc, names, spans


def summarize(path, compute_ms=None):
    doc, names, spans = load(path)
    dev = [e for e in spans if names.get((e["pid"], e["tid"]), "host") != "host"]
    host = [e for e in spans if names.get((e["pid"], e["tid"]), "host") == "host"]
    iv = lambda es: [(e["ts"], e["ts"] + e["dur"]) for e in es]  # noqa: E731
    res = {"file": path, "ranks": {}, "all": {}}
    for pid in sorted({e["pid"] for e in spans}):
        mine = [e for e in dev if e["pid"] == pid]
        hs = [e for e in host if e["pid"] == pid]
        r = {"streams": {}, "host_us": round(max((e["ts"] + e["dur"] for e in hs), default=0)
                                             - min((e["ts"] for e in hs), default=0), 1)}
        if mine:
            w0 = min(e["ts"] for e in mine)
            w1 = max(e["ts"] + e["dur"] for e in mine)
        else:
            w0 = w1 = 0.0
        for tid in sorted({e["tid"] for e in mine}):
            st = [e for e in mine if e["tid"] == tid]
            busy = union(iv(st))
            cats = {}
            for c in sorted({e.get("cat", "?") for e in st}):
                cats[c] = round(union(iv([e for e in st if e.get("cat", "?") == c])), 1)
            r["streams"][names.get((pid, tid), str(tid))] = {
                "spans": len(st), "busy_us": round(busy, 1), "idle_us": round(w1 - w0 - busy, 1),
                "by_cat_us": cats}
        gem = iv([e for e in mine if e.get("cat") == "gemm"])
        com = iv([e for e in mine if e.get("cat") in COMM])
        wt = iv([e for e in mine if e.get("cat") == "wait"])
        r.update(window_us=round(w1 - w0, 1), gemm_us=round(union(gem), 1),
                 wait_us=round(union(wt), 1), wait_no_gemm_us=round(minus(wt, gem), 1),
                 gemm_sum_us=round(sum(b - a for a, b in gem), 1), comm_us=round(union(com), 1),
                 comm_exposed_us=round(minus(com, gem), 1),
                 idle_us=round(w1 - w0 - union(iv(mine)), 1))
        res["ranks"][str(pid)] = r
    if dev:
        w0 = min(e["ts"] for e in dev)
        w1 = max(e["ts"] + e["dur"] for e in dev)
        gem = iv([e for e in dev if e.get("cat") == "gemm"])
        com = iv([e for e in dev if e.get("cat") in COMM])
        g, gs, ce = union(gem), sum(b - a for a, b in gem), minus(com, gem)
        idle = w1 - w0 - union(iv(dev))
        a = {"window_us": round(w1 - w0, 1), "gemm_us": round(g, 1), "gemm_sum_us": round(gs, 1),
             "comm_exposed_us": round(ce, 1), "idle_us": round(idle, 1),
             "other_us": round(max(0.0, w1 - w0 - g - ce - idle), 1),
             "gemm_concurrency": round(gs / g, 2) if g else 0.0}
        if compute_ms:
            a["compute_only_us"] = round(compute_ms * 1e3, 1)
            a["gemm_excess_us"] = round(g - compute_ms * 1e3, 1)
        res["all"] = a
    return res


def markdown(res):
    L = [f"Trace `{res['file']}`.", "",
         "| rank | stream | spans | busy µs | idle µs in the rank's window | busy by category µs |",
         "|---|---|---|---|---|---|"]
    for rk, r in res["ranks"].items():
        for name, s in r["streams"].items():
            cats = ", ".join(f"{c} {v}" for c, v in s["by_cat_us"].items())
            L.append(f"| {rk} | {name} | {s['spans']} | {s['busy_us']} | {s['idle_us']} | {cats} |")
    L += ["", "| rank | device window µs | GEMM µs (union) | GEMM µs (sum) | communication and copies µs | "
          "of it under no GEMM µs | Wait µs | of it under no GEMM µs | nothing running µs | "
          "host issue µs |", "|---|---|---|---|---|---|---|---|---|---|"]
    for rk, r in res["ranks"].items():
        L.append(f"| {rk} | {r['window_us']} | {r['gemm_us']} | {r['gemm_sum_us']} | "
                 f"{r['comm_us']} | {r['comm_exposed_us']} | {r['wait_us']} | {r['wait_no_gemm_us']} | "
                 f"{r['idle_us']} | {r['host_us']} |")
    a = res["all"]
    if a:
        L += ["", "All ranks on one clock (one GPU's timeline when the ranks share it):", "",
              "| window µs | with a GEMM µs | communication or copies, no GEMM µs | other work µs | "
              "nothing running µs | GEMM spans ÷ their union |", "|---|---|---|---|---|---|",
              f"| {a['window_us']} | {a['gemm_us']} | {a['comm_exposed_us']} | {a['other_us']} | "
              f"{a['idle_us']} | {a['gemm_concurrency']} |"]
        if "compute_only_us" in a:
            L += ["", f"GEMM union {a['gemm_us']} µs against compute-only {a['compute_only_us']} "
                  f"µs: {a['gemm_excess_us']} µs more."]
    return "\n".join(L)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--compute-ms", type=float)
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    try:
        res = summarize(a.trace, a.compute_ms)
    except (OSError, ValueError, KeyError, TypeError) as ex:
        print(f"trace_summary: {a.trace}: {type(ex).__name__}: {ex}", file=sys.stderr)
        return 1
    print(markdown(res))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
