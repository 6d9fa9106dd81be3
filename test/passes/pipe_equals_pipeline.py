#!/usr/bin/env python3
"""Piping equals one pipeline, for every ordered pair of registered passes.

For each pass variant A and B (every pass of `hir-opt --list-passes`, plain and with each
value of its main option, plus a few option sets named below) and each input X:

    hir-opt A X | hir-opt B -      must print byte for byte what      hir-opt A B X   prints,

or both must fail with the same error messages (locations aside: the piped form reads
<stdin>). And `hir-opt --canonicalize X | hir-opt --canonicalize -` prints what
`hir-opt --canonicalize X` prints (idempotent across print and parse). A pass may read only its own options and the printed program, so a difference means
state travelled from A to B outside the text (docs/passes.md, "Options").

Inputs are batched with --split-input-file (one hir-opt process handles every input that A
accepts); a batch that fails is halved until each failing input is alone, to name it and
compare the messages. It also checks that docs/passes.md shows `--list-passes` as the tool prints it.
Exit status 0 when every pair agrees, 1 with the mismatches listed.

usage: pipe_equals_pipeline.py BUILD_TOOLS_DIR SOURCE_DIR
"""
import os
import re
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor

SPLIT = "// -----\n"

# Option sets beyond "plain" and "each value of the main option": protocol=put exists only
# with the CUDA backend; kind=auto needs nodes=; min-flops=0 makes --pipeline-fallback pipeline the small inputs;
# a schedule of stream-parallel (order=, nodes=, chunks=) that --backend must read back from the text.
EXTRA = [
    "--pass-pipeline=stream-parallel{backend=cuda protocol=put}",
    "--pass-pipeline=stream-parallel{backend=cuda order=local-first nodes=2 chunks=4}",
    "--pass-pipeline=backend{kind=cuda protocol=put}",
    "--pass-pipeline=backend{kind=auto nodes=2}",
    "--pass-pipeline=pipeline-fallback{min-flops=0}",
]

# Passes whose output, run through them again after a pipe, must come back unchanged.
IDEMPOTENT = ["--canonicalize"]

# Inputs: the corpus and lit inputs with communication, loops, regions and 2026 forms.
INPUTS = [
    "test/corpus/ag-linear-input.hir",
    "test/corpus/ag-linear-cuda.hir",
    "test/corpus/ag-linear-nccl.hir",
    "test/corpus/seed-pr5259.hir",
    "test/corpus/nvfuser-2026/collective-permute-fec.hir",
    "test/corpus/nvfuser-2026/mm-rs-reduce-mde.hir",
    "test/corpus/nvfuser-2026/moe-dispatch-combine.hir",
    "test/corpus/nvfuser-2026/row-parallel-allreduce-fec.hir",
    "test/lit/Inputs/passes-allgather-in-loop.hir",
    "test/lit/Inputs/passes-two-regions.hir",
    "test/lit/Inputs/passes-lowered-stream-input.hir",
    "test/lit/Inputs/passes-strip-view-read-after.hir",
    "test/lit/Inputs/passes-gather-after-pipeline.hir",
    "test/lit/passes/canonicalize.hir",
]


def run(args, stdin=None):
    p = subprocess.run(args, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout, p.stderr


def variants(opt):
    """Pass variants from --list-passes: --NAME, and --NAME=V for each value of its main
    option (a pass whose main option is required only with a value)."""
    rc, out, err = run([opt, "--list-passes"])
    if rc:
        sys.exit("hir-opt --list-passes failed: " + err.decode())
    names, choices, primary, required = [], {}, {}, set()
    cur = None
    for line in out.decode().splitlines():
        m = re.match(r"  --(\S+)\s", line)
        if m:
            cur = m.group(1)
            names.append(cur)
            continue
        m = re.match(r"      \(--(\S+)=VALUE sets (\S+)\)", line)
        if m:
            primary[m.group(1)] = m.group(2)
            continue
        m = re.match(r"      (\S+)=(\S+)\s+(.*)", line)
        if m and cur:
            choices[(cur, m.group(1))] = m.group(2).split("|")
            if "(required)" in m.group(3):
                required.add((cur, m.group(1)))
    vs = []
    for n in names:
        key = primary.get(n)
        if not key or (n, key) not in required:
            vs.append("--" + n)
        if key:
            for v in choices.get((n, key), []):
                if v != "NUMBER":
                    vs.append("--%s=%s" % (n, v))
    return names, vs + EXTRA


def errors(stderr):
    """The error messages, without file:line:col (the piped form reads <stdin>)."""
    msgs = []
    for line in stderr.decode(errors="replace").splitlines():
        m = re.match(r"(?:.*?:\d+:\d+: |hir-opt: )?error: (.*)", line)
        if m:
            msgs.append(m.group(1))
    return msgs


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    tools, src = sys.argv[1], sys.argv[2]
    opt = os.path.join(tools, "hir-opt")
    names, vs = variants(opt)
    inputs = [os.path.join(src, x) for x in INPUTS]
    texts = {x: open(x, "rb").read() for x in inputs}
    for x, t in texts.items():
        if b"\n// -----" in t:
            sys.exit("input %s has a split marker; it cannot be batched" % x)
    tmp = tempfile.mkdtemp(prefix="hir-pipe-")
    pool = ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2))

    def batch_file(a, xs):
        path = os.path.join(tmp, "batch-%d.hir" % abs(hash((a, tuple(xs)))))
        # several threads may ask for the same batch at once (a variant that fails on every
        # input does, for every B): write aside and rename, so no reader sees a partial file
        part = "%s.%d" % (path, threading.get_ident())
        with open(part, "wb") as fh:
            fh.write(SPLIT.encode().join(texts[x] for x in xs))
        os.replace(part, path)
        return path

    def run_first(a, xs):
        """A on the inputs xs: {x: (rc, stdout, stderr)} as if each ran alone; batched,
        halving a batch that fails until the failing inputs are alone."""
        if len(xs) == 1:
            return {xs[0]: run([opt, a, xs[0]])}
        r = run([opt, "--split-input-file", a, batch_file(a, xs)])
        parts = r[1].split(SPLIT.encode())
        if r[0] == 0 and len(parts) == len(xs):
            return {x: (0, parts[i], b"") for i, x in enumerate(xs)}
        h = len(xs) // 2
        out = run_first(a, xs[:h])
        out.update(run_first(a, xs[h:]))
        return out

    # A on each input: which inputs A accepts, and its output for each.
    first = {}
    for a, f in [(a, pool.submit(run_first, a, inputs)) for a in vs]:
        for x, r in f.result().items():
            first[(a, x)] = r

    def compare_one(a, b, x):
        p = run([opt, b, "-"], first[(a, x)][1])
        o = run([opt, a, b, x])
        if p[0] == 0 and o[0] == 0:
            return [] if p[1] == o[1] else ["%s: output differs" % x]
        if (p[0] == 0) != (o[0] == 0):
            return ["%s: piped exit %d, one pipeline exit %d (%s)" %
                    (x, p[0], o[0], (errors(p[2]) or errors(o[2]) or [""])[0])]
        if errors(p[2]) != errors(o[2]):
            return ["%s: messages differ: %s / %s" % (x, errors(p[2]), errors(o[2]))]
        return []

    def compare(a, b, xs):
        """Both forms over the inputs xs in one batch; a batch that fails is halved until
        the inputs that fail are alone (hir-opt prints nothing when a part fails)."""
        if len(xs) == 1:
            return compare_one(a, b, xs[0])
        p = run([opt, "--split-input-file", b, "-"],
                SPLIT.encode().join(first[(a, x)][1] for x in xs))
        o = run([opt, "--split-input-file", a, b, batch_file(a, xs)])
        if p[0] == 0 and o[0] == 0:
            if p[1] == o[1]:
                return []
            ps, os_ = p[1].split(SPLIT.encode()), o[1].split(SPLIT.encode())
            return ["%s: output differs" % x for i, x in enumerate(xs)
                    if i >= len(ps) or i >= len(os_) or ps[i] != os_[i]] or ["batch output differs"]
        h = len(xs) // 2
        return compare(a, b, xs[:h]) + compare(a, b, xs[h:])

    alone = {}

    def check_pair(a, b):
        problems = []
        ok = [x for x in inputs if first[(a, x)][0] == 0]
        bad = [x for x in inputs if first[(a, x)][0] != 0]
        if ok:
            problems += compare(a, b, ok)
        if bad:
            # A fails: the one-pipeline form must fail with exactly A's diagnostics.
            path = batch_file(a, bad)
            if a not in alone:
                alone[a] = run([opt, "--split-input-file", a, path])
            both = run([opt, "--split-input-file", a, b, path])
            # (hir-opt warns about some command lines, e.g. --backend before
            # --stream-parallel: a note about the command, not about the program)
            both_err = b"".join(l for l in both[2].splitlines(True)
                                if not l.startswith(b"hir-opt: warning: "))
            if both[0] == 0 or alone[a][2] != both_err:
                problems.append("inputs %s: A fails, A then B does not fail the same way" %
                                ", ".join(os.path.basename(x) for x in bad))
        return ["%s | %s: %s" % (a, b, m) for m in problems]

    def idempotent(a):
        """A pass that promises idempotence prints its own output back unchanged."""
        problems = []
        for x in inputs:
            rc, out, _ = first[(a, x)]
            if rc == 0:
                again = run([opt, a, "-"], out)
                if again[0] != 0 or again[1] != out:
                    problems.append("%s | %s: %s: not idempotent across print/parse" % (a, a, x))
        return problems

    futures = [pool.submit(check_pair, a, b) for a in vs for b in vs]
    futures += [pool.submit(idempotent, a) for a in IDEMPOTENT if a in vs]
    problems = [m for f in futures for m in f.result()]
    covered = {v.split("=")[0].split("{")[0].replace("--pass-pipeline", "") for v in vs}
    missing = [n for n in names if "--" + n not in covered and n not in covered]
    for m in problems:
        print("MISMATCH " + m)
    for n in missing:
        print("NOT COVERED: pass " + n)
    # docs/passes.md shows --list-passes as the tool prints it
    doc = open(os.path.join(src, "docs", "passes.md")).read()
    head = "`hir-opt --list-passes`:\n\n```\n"
    listed = run([opt, "--list-passes"])[1].decode()
    if head not in doc or not doc.split(head, 1)[1].startswith(listed + "```\n"):
        problems.append("docs/passes.md: the --list-passes block differs from hir-opt --list-passes")
        print("MISMATCH docs/passes.md: the --list-passes block differs from hir-opt --list-passes")
    print("%d pass variants (%d passes), %d ordered pairs, %d inputs: %d mismatches" %
          (len(vs), len(names), len(vs) * len(vs), len(inputs), len(problems)))
    return 1 if problems or missing else 0


if __name__ == "__main__":
    sys.exit(main())
