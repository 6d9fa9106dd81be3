#!/usr/bin/env python3
"""usage: oom_sweep.py FROM_MB TO_MB STEP_MB CMD... — runs CMD once under each address-space
limit (RLIMIT_AS, as `ulimit -v` sets it) from FROM_MB to TO_MB (STEP_MB may be a fraction:
0.25) and checks that running out of
memory is an error, never a crash: the exit status must be 0 or 1 (never a signal such as the
SIGABRT of an `abort()`), and a status of 1 must come with one line of stderr saying "out of
memory" (no "internal error", no core). Prints each distinct outcome once, in order of first
appearance: "ok" or the error line with the file name dropped; exits 1 at the first bad run."""
import re, resource, subprocess, sys

lo, hi, step, cmd = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), sys.argv[4:]
seen = []
steps = int(round((hi - lo) / step))
for mb in (lo + i * step for i in range(steps + 1)):
    def limit(mb=mb):
        b = int(mb * (1 << 20))
        resource.setrlimit(resource.RLIMIT_AS, (b, b))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    p = subprocess.run(cmd, preexec_fn=limit, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, timeout=60)
    err = p.stderr.decode(errors="replace")
    lines = err.splitlines()
    bad = None
    if p.returncode < 0:
        bad = "killed by signal %d" % -p.returncode
    elif p.returncode not in (0, 1):
        bad = "exit status %d" % p.returncode
    elif p.returncode == 1 and (len(lines) != 1 or "out of memory" not in lines[0]):
        bad = "exit status 1 without one 'out of memory' line"
    elif p.returncode == 0 and err:
        bad = "exit status 0 with output on stderr"
    if bad:
        sys.stdout.write("oom_sweep.py: under %d MB: %s; stderr:\n%s" % (mb, bad, err))
        sys.exit(1)
    what = "ok" if p.returncode == 0 else re.sub(r"'[^']*'|\S+(?=\)$)", "FILE", lines[0])
    if what not in seen:
        seen.append(what)
        print(what)
