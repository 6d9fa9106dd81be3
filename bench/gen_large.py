#!/usr/bin/env python3
"""gen_large.py — large %HostIrContainer programs of realistic shape for bench/pass_scaling.sh.

    python3 bench/gen_large.py SHAPE COUNT [-d D] [-o FILE]

Shapes (the text is what hir-opt prints back byte for byte):

  blocks  COUNT independent all-gather + linear blocks, the input nvFuser hands the stream pass
          per layer: A_j [deviceIdx.x{d}, 16, 64] (a sharded copy of the container input X)
          gathered by a Set into a stream-parallel [streamIdx{d}, 16, 64], then linear with the
          shared W [32, 64] and bias [32] into O_j [streamIdx{d}, 16, 32, r64] (the last one is
          the container output: inputs and outputs stay few, as in nvFuser). 3 statements per block;
          every pass has work in it directly (--stream-parallel, --convert-to-communication,
          --pipeline-fallback) or after one of those (the lowered forms: many loops,
          P2P exchanges, Communications, Waits and index definitions).
  chain   one all-gather followed by COUNT stream-parallel Sets X_{i+1} = Set(X_i): after
          --stream-parallel one loop whose body holds every statement (a long loop body).

Tensors and IterDomains are numbered as nvFuser numbers them: container inputs, then outputs,
then intermediates; IterDomains in order of first appearance.
"""
import argparse
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("shape", choices=["blocks", "chain"])
    ap.add_argument("count", type=int, help="blocks (blocks) or chained Sets (chain), >= 1")
    ap.add_argument("-d", type=int, default=4, help="devices (default 4)")
    ap.add_argument("-o", "--output", help="write to FILE instead of stdout")
    a = ap.parse_args()
    if a.count < 1 or a.d < 1:
        print("gen_large.py: error: COUNT and -d must be positive", file=sys.stderr)
        return 2
    out = open(a.output, "w", buffering=1 << 20) if a.output else sys.stdout
    d = a.d
    mesh = " (DeviceMesh{%s})" % " ".join(str(i) for i in range(d))
    nid = [0]

    def ids(spec):
        """spec: list of (prefix, extent) -> "iS1{16}, ..." with fresh numbers"""
        parts = []
        for pre, ext in spec:
            parts.append("%s%d{%d}" % (pre, nid[0], ext))
            nid[0] += 1
        return ", ".join(parts)

    def tensor(num, spec):
        return "T%d_g___bfloat[%s]%s" % (num, ids(spec), mesh)

    A_SPEC = [("ideviceIdx.x", d), ("iS", 16), ("iS", 64)]
    G_SPEC = [("istreamIdx", d), ("iS", 16), ("iS", 64)]
    if a.shape == "blocks":
        n = a.count
        X = tensor(0, A_SPEC)
        W = tensor(1, [("iS", 32), ("iS", 64)])
        b = tensor(2, [("iS", 32)])
        last = tensor(3, [("istreamIdx", d), ("iS", 16), ("iS", 32), ("rS", 64)])
        out.write("\n%%HostIrContainer { (%s, %s, %s) -> (%s) :\n" % (X, W, b, last))
        for j in range(n):
            A = tensor(4 + 3 * j, A_SPEC)
            G = tensor(5 + 3 * j, G_SPEC)
            O = last if j == n - 1 else tensor(6 + 3 * j, [("istreamIdx", d), ("iS", 16), ("iS", 32), ("rS", 64)])
            out.write("  %s\n     = Set( %s, cache_op=Streaming )\n" % (A, X))
            out.write("  %s\n     = Set( %s, cache_op=Streaming )\n" % (G, A))
            out.write("  %s\n     = linear(%s,\n              %s    ,\n          %s    )\n" % (O, G, W, b))
    else:
        n = a.count
        A = tensor(0, A_SPEC)
        last = tensor(1, G_SPEC)
        out.write("\n%%HostIrContainer { (%s) -> (%s) :\n" % (A, last))
        prev = tensor(2, G_SPEC)
        out.write("  %s\n     = Set( %s, cache_op=Streaming )\n" % (prev, A))
        for i in range(n):
            cur = last if i == n - 1 else tensor(3 + i, G_SPEC)
            out.write("  %s\n     = Set( %s, cache_op=Streaming )\n" % (cur, prev))
            prev = cur
    out.write("} // %HostIrContainer\n\n")
    if out is not sys.stdout:
        out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
