#!/usr/bin/env bash
# parse_throughput.sh — parser/printer throughput of hir-opt against mlir-opt on inputs of the
# same size in bytes, in the same run.
#
# For each size (28k, 250k, 500k and 1M statements by default: about 4, 35, 70 and 140 MB) it generates a %HostIrContainer program
# of that many statements (the stream-pass loop body of the corpus, repeated with fresh tensor
# and IterDomain numbers) and an MLIR file of the same byte size (generic "arith.addi" ops in one
# function), round-trips each (hir-opt FILE -o OUT, mlir-opt FILE -o OUT), checks that hir-opt
# printed its input back byte for byte, and prints MB/s, the hir/mlir ratio and max RSS.
#
# usage: bench/parse_throughput.sh [BUILD_DIR] [SIZES...]
#   BUILD_DIR defaults to build-bench (configured and built here, Release); SIZES in statements.
# Needs python3 and mlir-opt (Debian: mlir-14-tools, installed here with apt-get when missing).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build-bench}
shift || true
SIZES=("$@")
[ ${#SIZES[@]} -eq 0 ] && SIZES=(28000 250000 500000 1000000)

if [ ! -x "$BUILD/tools/hir-opt" ]; then
    cmake -S "$ROOT" -B "$BUILD" -DHIR_ENABLE_CUDA=OFF -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$BUILD" -j"$(nproc)" --target hir-opt >/dev/null
fi
HIR_OPT=$BUILD/tools/hir-opt

MLIR_OPT=$(command -v mlir-opt-14 || command -v mlir-opt || true)
if [ -z "$MLIR_OPT" ]; then
    echo "mlir-opt not found: installing mlir-14-tools" >&2
    if [ "$(id -u)" = 0 ]; then apt-get install -y mlir-14-tools >/dev/null; else sudo apt-get install -y mlir-14-tools >/dev/null; fi
    MLIR_OPT=$(command -v mlir-opt-14 || command -v mlir-opt)
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/hir-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

gen_hir() {   # N OUT
    python3 - "$1" "$2" <<'PY'
import sys
n, out = int(sys.argv[1]), sys.argv[2]
M = " (DeviceMesh{0 1 2 3 4 5 6 7})"
T0 = "T0_g___bfloat[ideviceIdx.x0{8}, iS1{128}, iS2{1024}]" + M
T1 = "T1_g___bfloat[iS3{1024}, iS4{1024}]" + M
T2 = "T2_g___bfloat[iS5{1024}]" + M
w = open(out, "w", buffering=1 << 20)
w.write("\n%HostIrContainer { (" + T0 + ", " + T1 + ", " + T2 + ") -> () :\n")
count, t, i, e = 0, 10, 10, 100
while count < n:
    # one FOR with a body of up to 16 statements: the stream-pass loop of the corpus
    w.write("  FOR streamIdx in istreamIdx6{8}:\n"); count += 1
    body = 0
    while body < 16 and count < n:
        k = body % 8
        if k == 0:
            w.write("    SetCurrentStream to Stream ( streamIdx % numberOfStreams )\n")
        elif k == 1:
            A = "T%d_g___bfloat[istreamIdx%d{8}, iS%d{128}, iS%d{1024}]%s" % (t, i, i + 1, i + 2, M)
            w.write("    %s = ALLOCATE(buffer=%s, mem_type=global, size=1048576, zero_init=false, resets_to_zero=false)\n" % (A, A))
            alloc = (t, i); t += 1; i += 3
        elif k == 2:
            S = "T%d_l___bfloat[iS%d{128}, iS%d{1024}]%s" % (t, i, i + 1, M)
            A = "T%d_g___bfloat[istreamIdx%d{8}, iS%d{128}, iS%d{1024}]%s" % (alloc[0], alloc[1], alloc[1] + 1, alloc[1] + 2, M)
            w.write("    %s\n       = HirAliasSelect( %s, axis = istreamIdx%d{8}, index = streamIdx )\n" % (S, A, alloc[1]))
            sel = (t, i); t += 1; i += 2
        elif k == 3:
            S = "T%d_l___bfloat[iS%d{128}, iS%d{1024}]%s" % (sel[0], sel[1], sel[1] + 1, M)
            w.write("    P2PCommunication %d (type=recv, buffer=%s, peer=streamIdx, backend=NCCL)\n" % (e, S))
        elif k == 4:
            w.write("    Wait Communication %d\n" % e); e += 1
        elif k == 5:
            S = "T%d_l___bfloat[iS%d{128}, iS%d{1024}]%s" % (sel[0], sel[1], sel[1] + 1, M)
            O = "T%d_l___bfloat[iS%d{128}, iS%d{1024}, rS%d{1024}]%s" % (t, i, i + 1, i + 2, M)
            w.write("    %s\n       = linear(%s,\n                %s      ,\n          %s      )\n" % (O, S, T1, T2))
            t += 1; i += 3
        elif k == 6:
            w.write("    IF Manual ( ( ( 8 + ( rank - streamIdx ) ) % 8 ) == rank ):\n"); count += 1; body += 1
            w.write("      Synchronize Stream 0\n")
        else:
            w.write("    SetCurrentStream to Stream 0\n")
        count += 1; body += 1
w.write("} // %HostIrContainer\n\n")
PY
}

gen_mlir() {   # BYTES OUT
    python3 - "$1" "$2" <<'PY'
import sys
target, out = int(sys.argv[1]), sys.argv[2]
w = open(out, "w", buffering=1 << 20)
head = ('"builtin.module"() ({\n  "builtin.func"() ({\n  ^bb0(%arg0: i64, %arg1: i64):\n'
        '    %0 = "arith.addi"(%arg0, %arg1) : (i64, i64) -> i64\n')
w.write(head)
size, k = len(head), 1
tail_len = 160
while size + tail_len < target:
    line = '    %%%d = "arith.addi"(%%%d, %%arg1) : (i64, i64) -> i64\n' % (k, k - 1)
    w.write(line); size += len(line); k += 1
tail = ('    "std.return"(%%%d) : (i64) -> ()\n  }) {type = (i64, i64) -> i64, sym_name = "f"} : () -> ()\n'
        '}) : () -> ()\n' % (k - 1))
w.write(tail)
PY
}

# timed FILE CMD...: runs CMD (stdout discarded) and writes "wall user sys maxrss_kb" to FILE, with
# GNU time where the machine has it (/usr/bin/time, or a `time` executable on PATH), else with
# python3's os.wait4. The fallback's RSS is too high by about the interpreter's own RSS (the
# kernel keeps the forked Python's high-water mark across exec): the header says which was used.
GNU_TIME=$( { [ -x /usr/bin/time ] && echo /usr/bin/time; } || type -P time || true)
timed() {
    local out=$1; shift
    if [ -n "$GNU_TIME" ]; then
        "$GNU_TIME" -f "%e %U %S %M" -o "$out" "$@" >/dev/null
    else
        python3 - "$out" "$@" <<'PY'
import os, subprocess, sys, time
out, cmd = sys.argv[1], sys.argv[2:]
t0 = time.monotonic()
p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
_, status, ru = os.wait4(p.pid, 0)
wall = time.monotonic() - t0
if os.waitstatus_to_exitcode(status) != 0:
    sys.exit("command failed: %s" % " ".join(cmd))
open(out, "w").write("%.2f %.2f %.2f %d\n" % (wall, ru.ru_utime, ru.ru_stime, ru.ru_maxrss))
PY
    fi
}

measure() {   # PREFIX CMD...  -> ${PREFIX}_s (best wall time of 3 runs), ${PREFIX}_cpu (best
              # user+sys), ${PREFIX}_kb (largest max RSS)
    local prefix=$1; shift
    local best_s="" best_cpu="" best_kb=""
    for _ in 1 2 3; do
        timed "$WORK/time" "$@"
        read -r s u y kb < "$WORK/time"
        local cpu
        cpu=$(awk "BEGIN{print $u + $y}")
        if [ -z "$best_s" ] || awk "BEGIN{exit !($s < $best_s)}"; then best_s=$s; fi
        if [ -z "$best_cpu" ] || awk "BEGIN{exit !($cpu < $best_cpu)}"; then best_cpu=$cpu; fi
        if [ -z "$best_kb" ] || [ "$kb" -gt "$best_kb" ]; then best_kb=$kb; fi
    done
    printf -v "${prefix}_s" '%s' "$best_s"
    printf -v "${prefix}_cpu" '%s' "$best_cpu"
    printf -v "${prefix}_kb" '%s' "$best_kb"
}

div() { awk "BEGIN{d = $2; if (d <= 0) d = 0.001; printf \"%.${3:-1}f\", $1 / d}"; }

echo "# parse_throughput: $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -m), $(nproc) cores, $(awk -F: '/model name/{print $2; exit}' /proc/cpuinfo | sed 's/^ *//')"
echo "# hir-opt: $HIR_OPT"
echo "# mlir-opt: $MLIR_OPT ($("$MLIR_OPT" --version | awk '/LLVM version/{print $NF; exit}'))"
echo "# timing with: ${GNU_TIME:-python3 os.wait4 (no GNU time here: RSS overstated by about 10 MB, the interpreter RSS)}"
echo "# wall: best of 3 wall-clock runs; cpu: best of 3 user+sys (steadier when the machine is shared)"
echo "# MB/s from wall time; RSS in MB and as a multiple of the input (hir_xin, mlir_xin)"
printf '%-10s %10s | %8s %8s %8s %8s %7s | %8s %8s %8s %8s %7s | %10s %10s\n' statements MB \
    hir_s hir_cpu hir_MB/s hir_RSS hir_xin mlir_s mlir_cpu mlir_MB/s mlir_RSS mlir_xin ratio_wall ratio_cpu
for n in "${SIZES[@]}"; do
    gen_hir "$n" "$WORK/p.hir"
    bytes=$(stat -c %s "$WORK/p.hir")
    gen_mlir "$bytes" "$WORK/p.mlir"
    "$HIR_OPT" "$WORK/p.hir" -o "$WORK/out.hir"
    cmp -s "$WORK/p.hir" "$WORK/out.hir" || { echo "hir-opt did not print the program back" >&2; exit 1; }
    "$MLIR_OPT" "$WORK/p.mlir" -o "$WORK/out.mlir"
    measure hir "$HIR_OPT" "$WORK/p.hir" -o "$WORK/out.hir"
    measure mlir "$MLIR_OPT" "$WORK/p.mlir" -o "$WORK/out.mlir"
    mb=$(awk "BEGIN{print $bytes / 1048576}")
    printf '%-10s %10.1f | %8s %8s %8s %8s %6sx | %8s %8s %8s %8s %6sx | %9sx %9sx\n' "$n" "$mb" \
        "$hir_s" "$hir_cpu" "$(div "$mb" "$hir_s")" "$(div "$hir_kb" 1024 0)" "$(div "$hir_kb" "$bytes/1024" 2)" \
        "$mlir_s" "$mlir_cpu" "$(div "$mb" "$mlir_s")" "$(div "$mlir_kb" 1024 0)" "$(div "$mlir_kb" "$bytes/1024" 2)" \
        "$(div "$mlir_s" "$hir_s")" "$(div "$mlir_cpu" "$hir_cpu")"
done
