#!/usr/bin/env python3
"""The silent-transposition guard of test/lit/run/logical-shapes.test: NumPy computes what each
program must give from the same .npy inputs, independently of hir (scripts/setup installs NumPy
for /usr/bin/python3).

  shapes_np.py gen CASE DIR             writes CASE's inputs (global, logical shapes) to DIR
  shapes_np.py check CASE DIR OUT RANKS compares OUT/<output>.rank<r>.npy (r < RANKS) with
                                        NumPy's result; prints "numpy: CASE: ok [shape]" or
                                        the first mismatch, and exits 1 on a mismatch

Every extent of a *-square case is equal, so a wrong axis order changes no shape: only the
values tell."""
import sys

import numpy as np


def rnd(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


# CASE: (inputs as {name: shape}, expected(inputs) -> {output name: global array, or
#        (global array, axis its device split shards over the ranks)})
def permute(x):
    t1 = np.transpose(x["T0"], (1, 2, 0))
    return {"T2": t1 + t1}


def reshape_matmul(x):
    t1 = x["T0"].reshape(-1, x["T0"].shape[2], x["T0"].shape[3])
    return {"T3": np.matmul(t1, x["T2"])}


def stream_weight(x):
    # T0 [M, K] @ T1 [K, N]: the weight's N is split by stream, the loop makes one chunk of
    # columns per iteration into the ALLOCATEd [M, N]
    return {"T2": x["T0"] @ x["T1"]}


def fec_rows(x):
    # T0 [i0, K] chunked by rows, each chunk times the weight T1 [N, K] (linear)
    return {"T2": x["T0"] @ x["T1"].T}


def alltoall(x):
    # two AllToAlls only reshard: T1 is T0 split on its second axis, T8 on its first
    return {"T1": (x["T0"], 1), "T8": (x["T0"], 0)}


def nested(x):
    # T0 [12, 4] split by stream (3 chunks of 4 rows), each chunk split by device (2 blocks of
    # 2 rows): rank r holds rows 4 s + 2 r + j (s < 3, j < 2), and the program copies them
    return {"T2": (x["T0"], 0, (2, 4))}


# test/lit/shapes/{permute,reshape,alltoall}.hir: each print's outputs from its inputs
def perm2(x):
    return {"T1": x["T0"].T}


def perm3(x):
    return {"T1": np.transpose(x["T0"], (2, 0, 1))}


def perm4_matmul(x):
    return {"T3": np.matmul(np.transpose(x["T0"], (1, 3, 0, 2)), x["T2"])}


def reshape_first(x):
    return {"T3": np.matmul(x["T0"].reshape(8, 16, 8), x["T2"])}


def reshape_middle(x):
    return {"T1": x["T0"].reshape(4, 2, 16, 8)}


def reshape_last(x):
    return {"T2": x["T0"].reshape(4, 16)}


def alltoall_set(x):
    return {"T1": (x["T0"], 1), "T2": x["T0"]}


def linear_3d(x):
    # nvFuser's linear with a weight [D, N, K] whose leading axis is device-parallel: rank r
    # computes T0 @ T1[r].T (+ T3[r]), the output [D, M, N] sharded on its leading axis
    t1, t3 = x["T1"], x["T3"]
    plain = np.stack([x["T0"] @ t1[r].T for r in range(t1.shape[0])])
    return {"T2": (plain, 0), "T4": (plain + t3[:, None, :], 0)}


CASES = {
    "permute": ({"T0": (4, 3, 2)}, permute),
    "permute-square": ({"T0": (4, 4, 4)}, permute),
    "reshape-matmul": ({"T0": (2, 4, 16, 8), "T2": (8, 32)}, reshape_matmul),
    "reshape-matmul-square": ({"T0": (2, 2, 4, 4), "T2": (4, 4)}, reshape_matmul),
    "stream-weight": ({"T0": (5, 4), "T1": (4, 6)}, stream_weight),
    "stream-weight-square": ({"T0": (6, 6), "T1": (6, 6)}, stream_weight),
    "fec-rows": ({"T0": (6, 4), "T1": (5, 4)}, fec_rows),
    "fec-rows-square": ({"T0": (6, 6), "T1": (6, 6)}, fec_rows),
    "alltoall": ({"T0": (4, 12)}, alltoall),
    "alltoall-square": ({"T0": (4, 4)}, alltoall),
    "nested": ({"T0": (12, 4)}, nested),
    "print-permute-2": ({"T0": (5, 16)}, perm2),
    "print-permute-3": ({"T0": (2, 3, 5)}, perm3),
    "print-permute-4": ({"T0": (2, 3, 5, 7), "T2": (5, 4)}, perm4_matmul),
    "print-reshape-first": ({"T0": (2, 4, 16, 8), "T2": (8, 32)}, reshape_first),
    "print-reshape-middle": ({"T0": (4, 32, 8)}, reshape_middle),
    "print-reshape-last": ({"T0": (4, 8, 2)}, reshape_last),
    "print-alltoall": ({"T0": (4, 12)}, alltoall_set),
    "linear-3d-weight": ({"T0": (3, 4), "T1": (2, 5, 4), "T3": (2, 5)}, linear_3d),
}


def main():
    cmd, case, d = sys.argv[1], sys.argv[2], sys.argv[3]
    shapes, fn = CASES[case]
    if cmd == "gen":
        rng = np.random.default_rng(27)
        for name, shape in shapes.items():
            np.save("%s/%s.npy" % (d, name), rnd(rng, *shape))
        return 0
    out, ranks = sys.argv[4], int(sys.argv[5])
    x = {name: np.load("%s/%s.npy" % (d, name)) for name in shapes}
    for name, want in fn(x).items():
        axis, blocks = None, None
        if isinstance(want, tuple):
            blocks = want[2] if len(want) > 2 else None
            want, axis = want[0], want[1]
        glob = want
        for r in range(ranks):
            if blocks is not None:   # a block of b in every period p, the rank's at r * b
                b, p = blocks
                rows = [q * p + r * b + j for q in range(glob.shape[axis] // p) for j in range(b)]
                want = np.take(glob, rows, axis=axis)
            elif axis is not None:   # rank r's block of a device-split axis
                w = glob.shape[axis] // ranks
                want = np.take(glob, range(r * w, (r + 1) * w), axis=axis)
            got = np.load("%s/%s.rank%d.npy" % (out, name, r))
            if got.shape != want.shape:
                print("numpy: %s: %s rank %d has shape %s, NumPy %s" %
                      (case, name, r, list(got.shape), list(want.shape)))
                return 1
            if not np.allclose(got, want, rtol=1e-4, atol=1e-4):
                i = np.unravel_index(np.argmax(np.abs(got - want)), want.shape)
                print("numpy: %s: %s rank %d differs at %s: %g, NumPy %g" %
                      (case, name, r, list(i), got[i], want[i]))
                return 1
        print("numpy: %s: ok %s %s" % (case, name, list(want.shape)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
