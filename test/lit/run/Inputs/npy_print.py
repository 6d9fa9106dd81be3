#!/usr/bin/env python3
"""Prints the shape and the values of .npy files (float32/int64, C order) in plain Python:
   npy_print.py FILE...  ->  "FILE: shape (3, 4): 0 2 4 ..." (values with %g)."""
import ast
import os
import struct
import sys

CODES = {"<f4": "f", "<i8": "q", "<f8": "d"}
for path in sys.argv[1:]:
    with open(path, "rb") as f:
        data = f.read()
    hl, off = (struct.unpack("<H", data[8:10])[0], 10) if data[6] == 1 else \
        (struct.unpack("<I", data[8:12])[0], 12)
    h = ast.literal_eval(data[off:off + hl].decode())
    n = 1
    for d in h["shape"]:
        n *= d
    vals = struct.unpack_from("<%d%s" % (n, CODES[h["descr"]]), data, off + hl)
    print("%s: shape %s: %s" % (os.path.basename(path), tuple(h["shape"]),
                                " ".join("%g" % v for v in vals)))
