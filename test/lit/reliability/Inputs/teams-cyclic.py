"""Inputs and the NumPy check of teams-cyclic-order.test (issue 31): three ranks, each with its
own T0, T1, T2 of 4 floats; T0 is summed over team (0 1), T1 over (1 2), T2 over (0 2), and a
rank outside a team keeps its own tensor.
  teams-cyclic.py gen DIR        writes DIR/T<t>.rank<r>.npy
  teams-cyclic.py check IN OUT   compares OUT/T<t>.rank<r>.npy with the sums of IN's"""
import sys

import numpy as np

TEAMS = {0: (0, 1), 1: (1, 2), 2: (0, 2)}


def data(t, r):
    return (np.arange(4, dtype=np.float32) + 1) * (10 ** r) + 100 * t


if sys.argv[1] == "gen":
    for t in TEAMS:
        for r in range(3):
            np.save("%s/T%d.rank%d.npy" % (sys.argv[2], t, r), data(t, r))
else:
    n = 0
    for t, team in TEAMS.items():
        for r in range(3):
            ins = {q: np.load("%s/T%d.rank%d.npy" % (sys.argv[2], t, q)) for q in range(3)}
            want = sum(ins[q] for q in team) if r in team else ins[r]
            got = np.load("%s/T%d.rank%d.npy" % (sys.argv[3], t, r))
            if not np.array_equal(got, want):
                print("numpy: teams-cyclic: T%d rank %d: got %s, want %s" % (t, r, got, want))
                sys.exit(1)
            n += 1
    print("numpy: teams-cyclic: ok %d shards" % n)
