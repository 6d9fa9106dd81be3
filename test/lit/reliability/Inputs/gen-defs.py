#!/usr/bin/env python3
"""usage: gen-defs.py SHAPE N [USE] — writes a program whose "Index definitions:" trailer holds
N definitions of one shape, for the tests of long and shared definitions (docs/reliability.md,
issue 14). USE is a statement that uses them (default: none, every definition is dead); its
'%' is the last definition's name.
  cycle        i0 = i1 + 1; ... i<N-1> = i0 + 1;         one cycle through all N
  chain        i0 = rank + 1; i<k> = i<k-1> + 1;          each depends on the one before
  independent  i<k> = rank + <k>;                          no two alike, none depends on another
  dag          i0 = rank * 0; i<k> = i<k-1> + i<k-1>;     each used twice: 2^N paths, N nodes
"""
import sys

shape, n = sys.argv[1], int(sys.argv[2])
use = sys.argv[3] if len(sys.argv) > 3 else None
last = "i%d" % (n - 1)
out = ["", "%HostIrContainer { () -> () :"]
if use:
    out.append("  " + use.replace("%", last))
out += ["} // %HostIrContainer", "", "Index definitions:"]
for k in range(n):
    if shape == "cycle":
        rhs = "i%d + 1" % ((k + 1) % n)
    elif shape == "chain":
        rhs = "rank + 1" if k == 0 else "i%d + 1" % (k - 1)
    elif shape == "independent":
        rhs = "rank + %d" % k
    elif shape == "dag":
        rhs = "rank * 0" if k == 0 else "i%d + i%d" % (k - 1, k - 1)
    else:
        sys.exit("gen-defs.py: unknown shape " + shape)
    out.append("  i%d = %s;" % (k, rhs))
sys.stdout.write("\n".join(out) + "\n\n")   # as the printer ends it
