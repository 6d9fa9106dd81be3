#!/usr/bin/env python3
"""Valid inputs for the MoE Dispatch/Combine programs, and an independent check of what hir-run
saved. Plain Python (no NumPy): .npy files are read and written by the small codec below.

  moe.py gen DIR --ranks N --tokens T --hidden H --experts E [--seed S]
      writes DIR/T0.rank<r>.npy ([T, H] float32 tokens), DIR/T1.rank<r>.npy ([T, 1] int64
      expert ids in [0, E)) and DIR/T2.rank<r>.npy ([T, 1] float32 weights) for every rank r.
  moe.py check IN OUT --ranks N --experts E
      recomputes top-1 routing (expert e on rank e // (E / N); each sender's tokens sorted by
      expert, stably; received in sender-rank order) from the inputs in IN and compares the
      outputs hir-run saved in OUT (--save-outputs): T3 received tokens, T5 their weights,
      T6 their source rows, T9 the combined result (= the tokens). Prints "moe: OK" or fails.
"""
import argparse
import ast
import os
import random
import struct
import sys

CODES = {"<f4": "f", "<i8": "q"}


def save(path, descr, shape, values):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join("%d, " % d for d in shape) if len(shape) > 1 else "%d," % shape[0])
    pad = 64 - (10 + len(header) + 1) % 64
    header += " " * pad + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%d%s" % (len(values), CODES[descr]), *values))


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        sys.exit("moe: %s is not a .npy file" % path)
    major = data[6]
    hl, off = (struct.unpack("<H", data[8:10])[0], 10) if major == 1 else \
        (struct.unpack("<I", data[8:12])[0], 12)
    h = ast.literal_eval(data[off:off + hl].decode())
    n = 1
    for d in h["shape"]:
        n *= d
    vals = struct.unpack_from("<%d%s" % (n, CODES[h["descr"]]), data, off + hl)
    return tuple(h["shape"]), list(vals)


def gen(a):
    rng = random.Random(a.seed)
    os.makedirs(a.dir, exist_ok=True)
    for r in range(a.ranks):
        p = lambda n: os.path.join(a.dir, "%s.rank%d.npy" % (n, r))
        save(p("T0"), "<f4", (a.tokens, a.hidden),
             [rng.uniform(-1, 1) for _ in range(a.tokens * a.hidden)])
        save(p("T1"), "<i8", (a.tokens, 1), [rng.randrange(a.experts) for _ in range(a.tokens)])
        save(p("T2"), "<f4", (a.tokens, 1), [rng.random() for _ in range(a.tokens)])


def check(a):
    ld = lambda d, n, r: load(os.path.join(d, "%s.rank%d.npy" % (n, r)))
    per = a.experts // a.ranks
    rows, idx, w = [], [], []
    for r in range(a.ranks):
        (t, h), xv = ld(a.inp, "T0", r)
        rows.append([xv[i * h:(i + 1) * h] for i in range(t)])
        idx.append(ld(a.inp, "T1", r)[1])
        w.append(ld(a.inp, "T2", r)[1])
    f32 = lambda v: struct.unpack("<f", struct.pack("<f", v))[0]
    bad = 0
    for dst in range(a.ranks):
        want_x, want_w, want_src = [], [], []
        for src in range(a.ranks):
            order = sorted(range(len(idx[src])), key=lambda t: idx[src][t])   # stable
            for t in order:
                if idx[src][t] // per == dst:
                    want_x += rows[src][t]
                    want_w.append(w[src][t])
                    want_src.append(t)
        got = {n: ld(a.out, n, dst)[1] for n in ("T3", "T5", "T6", "T9")}
        want_t9 = [v for row in rows[dst] for v in row]
        for name, g, want in (("T3 received tokens", got["T3"], want_x),
                              ("T5 received weights", got["T5"], want_w),
                              ("T6 source rows", got["T6"], want_src),
                              ("T9 combined", got["T9"], want_t9)):
            if [f32(v) if isinstance(v, float) else v for v in g] != \
               [f32(v) if isinstance(v, float) else v for v in want]:
                print("moe: rank %d: %s differ (%d values, %d expected)" %
                      (dst, name, len(g), len(want)))
                bad += 1
    if bad:
        sys.exit(1)
    print("moe: OK")


p = argparse.ArgumentParser()
sub = p.add_subparsers(dest="cmd", required=True)
g = sub.add_parser("gen")
g.add_argument("dir")
c = sub.add_parser("check")
c.add_argument("inp")
c.add_argument("out")
for q in (g, c):
    q.add_argument("--ranks", type=int, required=True)
    q.add_argument("--experts", type=int, required=True)
g.add_argument("--tokens", type=int, required=True)
g.add_argument("--hidden", type=int, required=True)
g.add_argument("--seed", type=int, default=0)
a = p.parse_args()
gen(a) if a.cmd == "gen" else check(a)
