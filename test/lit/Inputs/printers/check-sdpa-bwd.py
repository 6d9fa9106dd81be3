"""Inputs and an independent reference for sdpa-bwd*.hir: the gradients of
loss = sum(grad_attn * attention(q, k, v)) with respect to q, k and v by central finite
differences of a plain forward attention (no numpy, no backward formula).

  check-sdpa-bwd.py inputs DIR CAUSAL SCALE   write T0..T7.npy: grad_attn, q, k, v (float32),
                                              the forward's attn_out and logsumexp computed
                                              here, philox seed/offset (uint64 zeros)
  check-sdpa-bwd.py check DIR OUT CAUSAL SCALE compare OUT/T8..T10.rank0.npy with the reference
CAUSAL is 0 or 1; SCALE is a number or "default" (1/sqrt(E))."""
import math
import struct
import sys

N, H, L, S, E, EV = 1, 2, 3, 4, 3, 2


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def values(n, seed):
    return [f32(((i * 37 + seed * 11) % 23) / 23.0 - 0.5) for i in range(n)]


def write_npy(path, descr, shape, fmt, vals):
    hdr = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    hdr += " " * (64 - (10 + len(hdr) + 1) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode())
        f.write(struct.pack("<%d%s" % (len(vals), fmt), *vals))


def read_f32(path):
    b = open(path, "rb").read()
    n = struct.unpack("<H", b[8:10])[0]
    return list(struct.unpack("<%df" % ((len(b) - 10 - n) // 4), b[10 + n:]))


def forward(q, k, v, causal, scale):
    """attention output [N, H, L, EV] and logsumexp [N, H, L], flat lists, in double"""
    out, lse = [0.0] * (N * H * L * EV), [0.0] * (N * H * L)
    for nh in range(N * H):
        for i in range(L):
            sc = []
            for j in range(S):
                s = sum(q[(nh * L + i) * E + c] * k[(nh * S + j) * E + c] for c in range(E)) * scale
                sc.append(-math.inf if causal and j > i else s)
            m = max(sc)
            z = sum(math.exp(x - m) for x in sc)
            lse[nh * L + i] = m + math.log(z)
            for c in range(EV):
                out[(nh * L + i) * EV + c] = sum(math.exp(sc[j] - m) / z * v[(nh * S + j) * EV + c]
                                                 for j in range(S))
    return out, lse


def setup(causal, scale_arg):
    dout, q = values(N * H * L * EV, 1), values(N * H * L * E, 2)
    k, v = values(N * H * S * E, 3), values(N * H * S * EV, 4)
    scale = 1 / math.sqrt(E) if scale_arg == "default" else float(scale_arg)
    return dout, q, k, v, causal == "1", scale


def main():
    mode, d = sys.argv[1], sys.argv[2]
    if mode == "inputs":
        dout, q, k, v, causal, scale = setup(sys.argv[3], sys.argv[4])
        out, lse = forward(q, k, v, causal, scale)
        for t, shape, vals in [(0, (N, H, L, EV), dout), (1, (N, H, L, E), q), (2, (N, H, S, E), k),
                               (3, (N, H, S, EV), v), (4, (N, H, L, EV), out), (5, (N, H, L), lse)]:
            write_npy("%s/T%d.npy" % (d, t), "<f4", shape, "f", vals)
        write_npy(d + "/T6.npy", "<u8", (2,), "Q", [0, 0])
        write_npy(d + "/T7.npy", "<u8", (), "Q", [0])
        return 0
    outdir = sys.argv[3]
    dout, q, k, v, causal, scale = setup(sys.argv[4], sys.argv[5])

    def loss(q_, k_, v_):
        o, _ = forward(q_, k_, v_, causal, scale)
        return sum(a * b for a, b in zip(dout, o))

    bad = 0
    for name, t, which in [("grad_q", 8, 0), ("grad_k", 9, 1), ("grad_v", 10, 2)]:
        got = read_f32("%s/T%d.rank0.npy" % (outdir, t))
        args = [q, k, v]
        for idx in range(len(args[which])):
            h = 1e-6
            plus = [list(a) for a in args]
            minus = [list(a) for a in args]
            plus[which][idx] += h
            minus[which][idx] -= h
            ref = (loss(*plus) - loss(*minus)) / (2 * h)
            if abs(got[idx] - ref) > 1e-4 * max(1.0, abs(ref)):
                print("%s[%d] = %r, finite difference %r" % (name, idx, got[idx], ref))
                bad += 1
        print("%s: %d values checked" % (name, len(got)))
    print("sdpa_bwd: %d mismatches" % bad)
    return 1 if bad else 0


sys.exit(main())
