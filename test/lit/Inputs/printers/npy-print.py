"""Print the values of a .npy file (float32, float64, int64, bool) on one line, without numpy:
npy-print.py FILE -> "shape (8, 4): 0 1 2 ..." (floats with %g)."""
import ast
import struct
import sys

b = open(sys.argv[1], "rb").read()
n = struct.unpack("<H", b[8:10])[0]
hdr = ast.literal_eval(b[10:10 + n].decode())
data = b[10 + n:]
fmt = {"<f4": "f", "<f8": "d", "<i8": "q", "|b1": "?"}[hdr["descr"]]
vals = struct.unpack("<%d%s" % (len(data) // struct.calcsize(fmt), fmt), data)
print("shape %s: %s" % (tuple(hdr["shape"]), " ".join("%g" % v for v in vals)))
