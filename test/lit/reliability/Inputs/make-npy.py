# make-npy.py PATH SHAPE [DATA_BYTES]: a little-endian float32 .npy whose header announces
# SHAPE (a Python tuple literal, written as is) followed by DATA_BYTES zero bytes.
import sys

path, shape = sys.argv[1], sys.argv[2]
n = int(sys.argv[3]) if len(sys.argv) > 3 else 64
d = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % shape
pad = (64 - (10 + len(d) + 1) % 64) % 64
h = d + " " * pad + "\n"
with open(path, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h.encode() + b"\0" * n)
