"""fuzzlib.py — what the process-level fuzzers (fuzz_runner.py, fuzz_options.py) share: running
one tool under a time and memory bound, and judging what came back.

A run is a finding when the process
  * was killed by a signal or exited with a status the tool never uses (hir's tools exit 0, 1
    for errors and 2 for usage errors; 66/67 are the sanitizers' exit codes of scripts/ci-asan),
  * ran past its time bound (a hang: the whole process group is killed),
  * printed a sanitizer report, a panic ("internal error"), or a signal trace from Open MPI,
  * or failed without saying why the way hir says it: exit 1 needs a line `TOOL: ...` or a
    located diagnostic `FILE:LINE:COL: error: ...` (or, for hir-run --check, `check: FAIL`),
    and a usage error (exit 2) is exactly one line `TOOL: ...`.
Memory: without sanitizers the address space is limited (RLIMIT_AS); with ASan (which reserves
terabytes of shadow memory) ASan's own allocator limits apply (malloc_limit_mb and
allocator_may_return_null), so an allocation past the bound fails inside hir, which must report
it as an error.
"""
import hashlib
import os
import re
import signal
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# hir's exit statuses: 0 ok, 1 error, 2 usage error
TOOL_CODES = (0, 1, 2)

BAD_TEXT = [
    ("sanitizer", re.compile(r"AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|"
                             r"runtime error:|ERROR: \w+Sanitizer")),
    ("panic", re.compile(r"internal error")),
    ("signal", re.compile(r"Process received signal|Segmentation fault|Aborted|core dumped|"
                          r"Bus error|Floating point exception|Illegal instruction")),
]

LOCATED = re.compile(r"^\S.*?:\d+:\d+: (error|warning|note): ")


def is_asan_build(tools_dir):
    """True when the tools were built with -fsanitize=address (scripts/ci-asan's build)."""
    try:
        out = subprocess.run(["nm", "-D", os.path.join(tools_dir, "hir-opt")],
                             capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return "__asan_init" in out or "__asan_" in out


def environment(workdir, asan, mem_mb):
    """The environment of every run: Open MPI as root and oversubscribed, a TMPDIR of its own
    (with Open MPI's session directory made in advance), one BLAS thread, and the sanitizer
    options (reports also go to files under workdir/san, which the judge reads)."""
    env = dict(os.environ)
    tmp = os.path.join(workdir, "tmp")
    os.makedirs(tmp, exist_ok=True)
    import socket
    os.makedirs(os.path.join(tmp, "ompi.%s.%d" % (socket.gethostname().split(".")[0], os.getuid())),
                exist_ok=True)
    env.update({
        "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
        "OMPI_MCA_rmaps_base_oversubscribe": "1", "TMPDIR": tmp,
        "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "NO_COLOR": "1",
    })
    env.pop("HIR_FAULT", None)
    env.pop("HIR_FAULT_BOOT", None)
    if asan:
        supp = os.path.join(ROOT, "test", "lsan.supp")
        env["ASAN_OPTIONS"] = ("halt_on_error=1:abort_on_error=0:detect_leaks=1:exitcode=66:"
                               "allocator_may_return_null=1:malloc_limit_mb=%d:"
                               "max_allocation_size_mb=%d:fast_unwind_on_malloc=0:"
                               "log_path=%s/san/asan" % (mem_mb, mem_mb, workdir))
        env["LSAN_OPTIONS"] = "suppressions=%s:print_suppressions=0:exitcode=66" % supp
        env["UBSAN_OPTIONS"] = ("halt_on_error=1:print_stacktrace=1:exitcode=67:"
                                "log_path=%s/san/ubsan" % workdir)
        os.makedirs(os.path.join(workdir, "san"), exist_ok=True)
    return env


def env_for(env, tool):
    """env for one tool: only hir-run needs ASan's slow unwinder (Open MPI's leaks are matched by
    library in test/lsan.supp, which takes whole stacks); the others run faster without it."""
    if tool == "hir-run" or "ASAN_OPTIONS" not in env:
        return env
    e = dict(env)
    e["ASAN_OPTIONS"] = e["ASAN_OPTIONS"].replace("fast_unwind_on_malloc=0", "fast_unwind_on_malloc=1")
    return e


class Result:
    def __init__(self, argv, rc, out, err, secs, timed_out, san):
        self.argv, self.rc, self.out, self.err = argv, rc, out, err
        self.secs, self.timed_out, self.san = secs, timed_out, san


def run(argv, env, timeout, mem_mb, asan, stdin=None, cwd=None):
    """Runs argv in its own process group with the time bound (the group is killed past it)
    and, without ASan, RLIMIT_AS = mem_mb. Returns a Result; san holds the text of sanitizer
    reports written for this run (any process of the group)."""
    san_dir = env.get("ASAN_OPTIONS", "")
    before = set()
    logs = None
    m = re.search(r"log_path=([^:]+)/asan", san_dir)
    if m:
        logs = m.group(1)
        before = set(os.listdir(logs)) if os.path.isdir(logs) else set()

    # the limits are set by a shell that then execs the tool (preexec_fn is not safe with the
    # worker threads); a session of its own, so a hang can be ended with every rank
    limits = "ulimit -c 0; " + ("" if asan else "ulimit -v %d; " % (mem_mb << 10))
    wrapped = ["/bin/sh", "-c", limits + 'exec "$@"', "sh"] + list(argv)
    t0 = time.monotonic()
    p = subprocess.Popen(wrapped, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                         start_new_session=True, cwd=cwd)
    timed_out = False
    try:
        out, err = p.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = p.communicate()
    secs = time.monotonic() - t0
    # ranks started by mpirun may outlive it for a moment: end what is left of the group
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    san = ""
    if logs and os.path.isdir(logs):
        for f in sorted(set(os.listdir(logs)) - before):
            path = os.path.join(logs, f)
            try:
                with open(path, errors="replace") as fh:
                    san += fh.read()
            except OSError:
                pass
            os.unlink(path)
    return Result(argv, p.returncode, out.decode(errors="replace"), err.decode(errors="replace"),
                  secs, timed_out, san)


def judge(r, tool, check=False):
    """None when r is an acceptable outcome of `tool`; else a short name of what is wrong."""
    if r.timed_out:
        return "hang"
    if r.san:
        return "sanitizer"
    for name, rx in BAD_TEXT:
        if rx.search(r.err) or rx.search(r.out):
            return name
    if r.rc < 0:
        return "signal-%d" % -r.rc
    if r.rc not in TOOL_CODES:
        return "exit-%d" % r.rc
    lines = [l for l in r.err.splitlines() if l.strip()]
    if r.rc == 2:
        if len(lines) != 1 or not lines[0].startswith(tool + ": "):
            return "usage-not-one-line"
    if r.rc == 1:
        said = any(l.startswith(tool + ": ") or LOCATED.match(l) for l in lines)
        if check and "check: FAIL" in r.out:
            said = True
        if not said:
            return "error-without-message"
    return None


def save_finding(outdir, kind, data, argv, r, ext=".hir"):
    """Keeps the input and what happened under outdir/findings; returns the input's path."""
    d = os.path.join(outdir, "findings")
    os.makedirs(d, exist_ok=True)
    h = hashlib.sha1(data if isinstance(data, bytes) else data.encode()).hexdigest()[:10]
    path = os.path.join(d, "%s-%s%s" % (kind, h, ext))
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
    with open(path + ".txt", "w") as f:
        f.write("kind: %s\ncommand: %s\nexit status: %s (%.1f s%s)\n--- stderr\n%s\n--- stdout\n%s\n"
                "--- sanitizer\n%s\n" % (kind, " ".join(argv), r.rc, r.secs,
                                         ", timed out" if r.timed_out else "", r.err[-20000:],
                                         r.out[-5000:], r.san[-20000:]))
    return path
