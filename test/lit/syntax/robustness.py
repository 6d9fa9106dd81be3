#!/usr/bin/env python3
"""Feeds hir-opt damaged inputs and checks that each run ends with exit status 0 or 1, within a
time limit, and that every failure is reported as `file:line:col: error: ...`.

usage: robustness.py HIR_OPT WORKDIR [--stride N] [--random N] FILES...
  every FILE is cut at every N-th byte offset (and at each line end); --random N adds N samples of
  random bytes and N samples of the corpus with random bytes overwritten."""
import os, random, re, subprocess, sys

def main():
    args = sys.argv[1:]
    hir_opt, work = args[0], args[1]
    stride, nrandom, files = 1, 0, []
    i = 2
    while i < len(args):
        if args[i] == "--stride":
            stride = int(args[i + 1]); i += 2
        elif args[i] == "--random":
            nrandom = int(args[i + 1]); i += 2
        else:
            files.append(args[i]); i += 1
    os.makedirs(work, exist_ok=True)
    rng = random.Random(1234)          # deterministic: failures are reproducible
    cases = []
    for f in files:
        data = open(f, "rb").read()
        cuts = set(range(0, len(data), stride)) | {k + 1 for k, c in enumerate(data) if c == 10}
        for k in sorted(cuts):
            cases.append(("%s@%d" % (os.path.basename(f), k), data[:k]))
        for n in range(nrandom):
            b = bytearray(data)
            for _ in range(rng.randint(1, 8)):
                b[rng.randrange(len(b))] = rng.randrange(256)
            cases.append(("%s~%d" % (os.path.basename(f), n), bytes(b)))
    for n in range(nrandom):
        cases.append(("random~%d" % n, bytes(rng.randrange(256) for _ in range(rng.randint(0, 4096)))))
    located = re.compile(rb"^[^:\n]+:\d+:\d+: error: ", re.M)
    bad = 0
    path = os.path.join(work, "case.hir")
    for name, data in cases:
        with open(path, "wb") as f:
            f.write(data)
        try:
            p = subprocess.run([hir_opt, path, "-o", os.devnull], stderr=subprocess.PIPE, timeout=30)
        except subprocess.TimeoutExpired:
            print("TIMEOUT", name); bad += 1; continue
        if p.returncode not in (0, 1):
            print("CRASH rc=%d" % p.returncode, name); bad += 1
        elif p.returncode == 1 and not located.search(p.stderr):
            print("UNLOCATED", name, p.stderr[:200]); bad += 1
    print("cases: %d, failures: %d" % (len(cases), bad))
    return 1 if bad else 0

sys.exit(main())
