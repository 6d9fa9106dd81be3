#!/usr/bin/env python3
"""check_schedule_port.py - the C port of the scale model (passes/schedule_model.c, reached through
`hir-opt --explain-schedule`) against bench/scale_model.py, the model's one reference.

For each case it generates the headline-shape program (hir-gen; text only, nothing runs), lowers
it with stream-parallel{order= nodes= chunks=} (and, for the "auto" cases, backend{kind=auto
nodes=}), asks hir-opt for the predicted efficiency, and compares it with
scale_model.Model.efficiency for the same d, chunks, streams and order (where the lowered
schedule has the script's split: the ring of one shard a step, and local-first). The form
decides what waits on what: the CUDA form runs each exchange on its step's worker stream (the
script's transport=False); kind=auto runs local-first's exchanges on a stream per transport
(the script's transport=None: what kind=auto emits, Model.transport_streams), and the report
must say which of the two it modelled.
It also checks that the C defaults are the inputs the script derives from bench/results.
Usage: check_schedule_port.py [TOOLS_DIR] (default: hir-opt's directory on PATH; prints one line
per case, exits 1 on a mismatch).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import scale_model as sm  # noqa: E402

# (d, nodes, chunks, streams, order[, form]); form "cuda" (default) or "auto"
CASES = [
    (8, 1, 8, 4, "ring"), (8, 1, 8, 2, "ring"),
    (16, 2, 16, 4, "ring"), (16, 2, 16, 8, "local-first"), (16, 2, 8, 3, "local-first"),
    (32, 4, 16, 8, "local-first"), (32, 4, 32, 4, "ring"), (32, 4, 4, 2, "local-first"),
    (64, 8, 16, 3, "local-first"), (64, 8, 64, 4, "ring"), (128, 16, 16, 2, "local-first"),
    # chunks > d: every shard split into chunks/d pieces
    (8, 1, 16, 2, "ring"), (16, 2, 32, 8, "local-first"), (16, 2, 64, 4, "ring"), (32, 4, 64, 8, "local-first"),
    # backend{kind=auto}: local-first on a stream per transport, the ring on its worker streams
    (16, 2, 16, 1, "local-first", "auto"), (16, 2, 16, 4, "local-first", "auto"),
    (16, 2, 8, 2, "local-first", "auto"), (16, 2, 16, 4, "ring", "auto"),
    (32, 4, 32, 2, "local-first", "auto"), (32, 4, 16, 8, "local-first", "auto"),
    (32, 4, 32, 4, "ring", "auto"), (64, 8, 16, 3, "local-first", "auto"),
    (16, 2, 32, 2, "local-first", "auto"), (8, 1, 8, 2, "ring", "auto"),
]
# Not compared: the ring with several shards a step. The script's ring takes the interval of
# shards after the rank's own; the lowering takes aligned blocks of shards (so that one GEMM
# reads them contiguously), which splits near and far rows differently: there the report's
# figures (from the program's own peers) are the C port's alone.


def script_model():
    measured = sm.load_measured()
    args = argparse.Namespace(gemm_fixed_us=None, tflops=None, gpus_per_node=8,
                              **{k: v for k, v in sm.NOMINAL.items()})
    return sm.model_from_args(args, measured)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tools", nargs="?", help="directory of hir-gen and hir-opt (default: PATH's)")
    a = ap.parse_args(argv)
    if not a.tools:
        found = shutil.which("hir-opt")
        if not found:
            ap.error("no hir-opt on PATH: give the tools directory")
        a.tools = os.path.dirname(found)
    gen, opt = os.path.join(a.tools, "hir-gen"), os.path.join(a.tools, "hir-opt")
    mo = script_model()
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for case in CASES:
            d, nodes, chunks, streams, order = case[:5]
            form = case[5] if len(case) > 5 else "cuda"
            src = os.path.join(tmp, "in%d.hir" % d)
            if not os.path.exists(src):
                subprocess.run([gen, "ag-linear", "--m", "32768", "--k", "16384", "--n", "8192",
                                "--d", str(d), "--no-bias", "-o", src], check=True)
            pipeline = "stream-parallel{backend=cuda order=%s nodes=%d chunks=%d}" % (
                order, nodes, chunks)
            if form == "auto":
                pipeline += ",backend{kind=auto nodes=%d}" % nodes
            low = subprocess.run([opt, "--pass-pipeline=" + pipeline, src],
                                 check=True, capture_output=True, text=True).stdout
            rep = subprocess.run([opt, "--explain-schedule=nodes=%d,streams=%d" % (nodes, streams),
                                  "-"], input=low, check=True, capture_output=True, text=True).stdout
            m = re.search(r"efficiency (\d+\.\d+)\n", rep)
            c_eff = float(m.group(1)) if m else None
            c_transport = "exchanges: a stream per transport" in rep
            mo.g = d // nodes
            transport = mo.transport_streams(d, chunks, order) if form == "auto" else False
            py = mo.efficiency(d, chunks, streams, order, transport)
            ok = c_eff is not None and abs(c_eff - py) < 6e-5 and c_transport == transport
            bad += not ok
            print("%s d=%d nodes=%d chunks=%d streams=%d %s%s (%s): C port %s, scale_model.py %.4f" % (
                "ok" if ok else "MISMATCH", d, nodes, chunks, streams, order,
                ", kind=auto" if form == "auto" else "",
                "a stream per transport" if transport else "worker streams", c_eff, py))
        # the C defaults are the script's derived inputs
        rep = subprocess.run([opt, "--explain-schedule", "-"], input=low, check=True,
                             capture_output=True, text=True).stdout
        m = re.search(r"GEMM (\d+\.\d+) TFLOP/s \+ (\d+\.\d+) us", rep)
        ok = m and abs(float(m.group(1)) - mo.R / 1e12) < 1e-3 and \
            abs(float(m.group(2)) - mo.t_fixed * 1e6) < 0.01
        bad += not ok
        print("%s inputs: C port %s, scale_model.py %.3f TFLOP/s + %.2f us" % (
            "ok" if ok else "MISMATCH", m.groups() if m else None, mo.R / 1e12, mo.t_fixed * 1e6))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
