"""Inputs and an independent reference for grouped-mma.hir (torch._grouped_mm's 2-D x 3-D case
written out as loops; no numpy).

  check-grouped-mma.py inputs DIR     write DIR/T0.npy [6, 4], T1.npy [3, 4, 5] (float32) and
                                      T2.npy [3] (int32 offsets 2 2 5: an empty group, and a
                                      last row that no group covers)
  check-grouped-mma.py check FILE     compare FILE (T3, [6, 5] float32) with the reference"""
import struct
import sys

M, K, G, N = 6, 4, 3, 5
OFFS = [2, 2, 5]
A = [[(i * K + k) % 7 - 3 for k in range(K)] for i in range(M)]
B = [[[(g * 31 + k * N + n) % 5 - 2 for n in range(N)] for k in range(K)] for g in range(G)]


def write_npy(path, descr, shape, fmt, vals):
    hdr = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    hdr += " " * (64 - (10 + len(hdr) + 1) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode())
        f.write(struct.pack("<%d%s" % (len(vals), fmt), *vals))


def reference():
    out = [[0.0] * N for _ in range(M)]
    start = 0
    for g, end in enumerate(OFFS):
        for i in range(start, end):
            for n in range(N):
                out[i][n] = float(sum(A[i][k] * B[g][k][n] for k in range(K)))
        start = end
    return out


if sys.argv[1] == "inputs":
    d = sys.argv[2]
    write_npy(d + "/T0.npy", "<f4", (M, K), "f", [x for r in A for x in r])
    write_npy(d + "/T1.npy", "<f4", (G, K, N), "f", [x for m in B for r in m for x in r])
    write_npy(d + "/T2.npy", "<i4", (G,), "i", OFFS)
    sys.exit(0)
b = open(sys.argv[2], "rb").read()
n = struct.unpack("<H", b[8:10])[0]
got = struct.unpack("<%df" % (M * N), b[10 + n:])
ref = [x for r in reference() for x in r]
bad = [i for i in range(M * N) if abs(got[i] - ref[i]) > 1e-4]
print("grouped mma: %d of %d values differ" % (len(bad), M * N))
sys.exit(1 if bad else 0)
