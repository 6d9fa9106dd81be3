#!/usr/bin/env python3
"""usage: bounded.py MAX_SECONDS MAX_MB CMD... — runs CMD, passes its stdout/stderr through,
and exits 1 (after CMD's own output) when it took longer or used more resident memory than allowed.
Otherwise exits with CMD's status."""
import resource, subprocess, sys, time

limit_s, limit_mb, cmd = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3:]
t0 = time.monotonic()
rc = subprocess.call(cmd)
dt = time.monotonic() - t0
mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
if dt > limit_s or mb > limit_mb:
    sys.stderr.write("bounded.py: %s took %.2f s (limit %.1f) and %.0f MB (limit %.0f)\n"
                     % (cmd[0], dt, limit_s, mb, limit_mb))
    sys.exit(1)
sys.exit(rc)
