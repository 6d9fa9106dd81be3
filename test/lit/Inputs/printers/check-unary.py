"""Inputs and independent reference for unary-ops.hir (nvFuser's unary operators as its printer
spells them for float outputs: acosf, log1pf, nearbyintf, ...; bool outputs: isnan, signbit).

  check-unary.py inputs DIR            write DIR/T0.npy and DIR/T1.npy (float32 [8])
  check-unary.py check DIR OUT NAMES   compare OUT/T<n>.rank0.npy with Python's math module

No numpy: the .npy files are read and written with struct. Prints one line per output and exits
1 on the first mismatch."""
import math
import struct
import sys

X = [-0.75, -0.25, 0.125, 0.5, 0.875, -math.inf, math.inf, math.nan]
ONE = [1.0, 1.5, 2.0, 3.0, 10.0, math.inf, 0.5, math.nan]


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def write_npy(path, vals):
    hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % len(vals)
    pad = 64 - (10 + len(hdr) + 1) % 64
    hdr = hdr + " " * pad + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode())
        f.write(struct.pack("<%df" % len(vals), *vals))


def read_npy(path):
    b = open(path, "rb").read()
    n = struct.unpack("<H", b[8:10])[0]
    hdr = b[10:10 + n].decode()
    data = b[10 + n:]
    if "'<f4'" in hdr:
        return list(struct.unpack("<%df" % (len(data) // 4), data))
    if "'|b1'" in hdr:
        return [bool(c) for c in data]
    raise SystemExit("%s: unexpected dtype in %s" % (path, hdr))


def safe(fn):
    def g(x):
        try:
            return fn(x)
        except ValueError:
            return math.nan
        except OverflowError:
            return math.copysign(math.inf, x)
    return g


def erfinv_ok(y, r):
    """r is erfinv(y) when erf(r) == y to float precision (Python has no erfinv)"""
    if math.isnan(y) or abs(y) > 1:
        return math.isnan(r)
    if abs(y) == 1:
        return r == math.copysign(math.inf, y)
    return abs(math.erf(r) - y) <= 1e-6 * max(1.0, abs(y))


REF = {
    "acosf": safe(math.acos), "asinf": safe(math.asin), "asinhf": safe(math.asinh),
    "atanf": safe(math.atan), "atanhf": safe(math.atanh), "coshf": safe(math.cosh),
    "sinhf": safe(math.sinh), "tanf": safe(math.tan), "exp2f": safe(lambda x: 2.0 ** x),
    "expm1f": safe(math.expm1), "erfcf": safe(math.erfc), "lgammaf": safe(math.lgamma),
    "log10f": safe(math.log10), "log1pf": safe(math.log1p), "log2f": safe(math.log2),
    "frac": lambda x: x - math.trunc(x) if math.isfinite(x) else math.nan,
    "nearbyintf": lambda x: float(round(x)) if math.isfinite(x) else x,
    "acoshf": safe(math.acosh),
    "signbit": lambda x: math.copysign(1.0, x) < 0, "isfinite": math.isfinite,
    "isinf": math.isinf, "isnan": math.isnan, "isneginf": lambda x: x == -math.inf,
    "isposinf": lambda x: x == math.inf, "isreal": lambda x: True,
    "threshold": lambda x: -1.0 if x <= 0.25 else x,
}


def same(a, b):
    if isinstance(b, bool):
        return a == b
    b = f32(b)
    if math.isnan(b):
        return math.isnan(a)
    if math.isinf(b):
        return a == b
    return abs(a - b) <= 1e-6 * max(1.0, abs(b))


def main():
    if sys.argv[1] == "inputs":
        write_npy(sys.argv[2] + "/T0.npy", X)
        write_npy(sys.argv[2] + "/T1.npy", ONE)
        return 0
    out, names = sys.argv[3], sys.argv[4]
    for line in open(names):
        name, t = line.split()
        got = read_npy("%s/%s.rank0.npy" % (out, t))
        xs = [f32(v) for v in (ONE if name == "acoshf" else X)]
        for x, g in zip(xs, got):
            if name in ("erfinvf", "erfcinvf"):
                y = x if name == "erfinvf" else 1.0 - x
                ok = erfinv_ok(y, g)
            else:
                ok = same(g, REF[name](x))
            if not ok:
                print("%s(%r) = %r: MISMATCH" % (name, x, g))
                return 1
        print("%s: %d values ok" % (name, len(got)))
    return 0


sys.exit(main())
