"""Summarise a hir-run --trace file for FileCheck: ranks, track names, device spans per category."""
import json
import sys

ev = json.load(open(sys.argv[1]))["traceEvents"]
ranks = sorted({e["pid"] for e in ev})
print("ranks", *ranks)
for r in ranks:
    names = {e["tid"]: e["args"]["name"] for e in ev
             if e["pid"] == r and e.get("name") == "thread_name"}
    print(f"rank {r} tracks:", ", ".join(names[t] for t in sorted(names)))
    dev = [e for e in ev if e["pid"] == r and e["ph"] == "X" and e["tid"] > 0]
    cats = {}
    for e in dev:
        cats[e["cat"]] = cats.get(e["cat"], 0) + 1
    idx = sorted({e["args"]["i"] for e in dev if "i" in e["args"]})
    if r == 0:
        print(f"rank {r}", " ".join(f"{c} {cats.get(c, 0)}" for c in ("gemm", "ipc", "copy", "wait")),
              "indices", *idx)
    assert all(e["dur"] >= 0 for e in dev)
