#!/usr/bin/env bash
# launch.sh — runs the launch commands of docs/runner.md ("Running across nodes") on this one
# host, on the CPU backend, and checks every run with --check:
#   launch.sh mpirun TOOLS_DIR   mpirun with a hostfile naming localhost with 4 slots and the
#                                -x exports of the docs, hir-run without -np under it; then
#                                hir-run -np 4 (one node, as before)
#   launch.sh srun TOOLS_DIR     srun --mpi=pmix -n 4 hir-run ...; exits 77 (ctest: skipped),
#                                saying why, when Slurm is not installed or not usable here
set -u
mode=${1:?usage: launch.sh mpirun|srun TOOLS_DIR}
tools=${2:?usage: launch.sh mpirun|srun TOOLS_DIR}
export PATH="$tools:$PATH"
# Open MPI refuses to start as root without these (CI containers run as root)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d "${TMPDIR:-/tmp}/hir-launch.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
# a TMPDIR of our own, with Open MPI's session directory made in advance: mpiruns starting at
# the same moment (ctest -j) race to create it otherwise
export TMPDIR="$work/tmp"
mkdir -p "$TMPDIR/ompi.$(hostname -s).$(id -u)"
# -x LD_LIBRARY_PATH only when it is set (Open MPI warns about an unset one)
ldx=()
[ -n "${LD_LIBRARY_PATH:-}" ] && ldx=(-x LD_LIBRARY_PATH)
fail() { echo "launch.sh: FAIL: $*" >&2; exit 1; }

# the program: AG+linear on 4 ranks, lowered to the NCCL pipeline (the CPU backend runs it)
hir-gen ag-linear --m 64 --k 32 --n 48 --d 4 -o "$work/in4.hir" || fail "hir-gen"
hir-opt "$work/in4.hir" --stream-parallel --backend=nccl -o "$work/prog.hir" || fail "hir-opt"

# run CMD...: the command must exit 0 and print check: PASS
run_checked() {
    echo "+ $*"
    "$@" > "$work/out" 2> "$work/err"
    local rc=$?
    cat "$work/out"
    [ $rc -eq 0 ] || { cat "$work/err" >&2; fail "exit status $rc: $*"; }
    grep -q '^check: PASS$' "$work/out" || fail "no 'check: PASS' from: $*"
}

case "$mode" in
mpirun)
    command -v mpirun > /dev/null || fail "mpirun is not on PATH"
    printf 'localhost slots=4\n' > "$work/hostfile"
    # the command of docs/runner.md, with the hostfile naming this host only
    run_checked mpirun --hostfile "$work/hostfile" -np 4 --map-by slot \
        -x NCCL_NVLS_ENABLE=0 -x PATH "${ldx[@]}" \
        hir-run --device=cpu --check="$work/in4.hir" "$work/prog.hir"
    # the topology the same launch gives: 4 ranks, one node, local ranks 0..3
    mpirun --hostfile "$work/hostfile" -np 4 --map-by slot -x NCCL_NVLS_ENABLE=0 -x PATH \
        "${ldx[@]}" hir-run --device=cpu --topology > "$work/topo" ||
        fail "mpirun ... hir-run --topology"
    cat "$work/topo"
    grep -q '^topology: 4 ranks on 1 node (MPI_COMM_TYPE_SHARED); for hir-opt: nodes=1$' "$work/topo" ||
        fail "--topology under mpirun: not 4 ranks on 1 node"
    for r in 0 1 2 3; do
        grep -q "^rank $r node 0 local_rank $r local_size 4 host " "$work/topo" ||
            fail "--topology under mpirun: no line for rank $r on node 0"
    done
    # one node, as before: hir-run starts the ranks itself
    run_checked hir-run -np 4 --device=cpu --check="$work/in4.hir" "$work/prog.hir"
    ;;
srun)
    if ! command -v srun > /dev/null; then
        echo "SKIPPED: srun is not installed (no Slurm on this machine); the srun command of" \
             "docs/runner.md was not run"
        exit 77
    fi
    if ! scontrol ping > /dev/null 2>&1; then
        echo "SKIPPED: srun is installed but no Slurm controller answers (scontrol ping);" \
             "the srun command of docs/runner.md was not run"
        exit 77
    fi
    if ! srun --mpi=list 2>&1 | grep -q pmix; then
        echo "SKIPPED: this Slurm has no PMIx plugin (srun --mpi=list); the srun command of" \
             "docs/runner.md was not run"
        exit 77
    fi
    run_checked srun --mpi=pmix -N 1 -n 4 --export=ALL,NCCL_NVLS_ENABLE=0 \
        hir-run --device=cpu --check="$work/in4.hir" "$work/prog.hir"
    ;;
*)
    echo "usage: launch.sh mpirun|srun TOOLS_DIR" >&2
    exit 2
    ;;
esac
echo "launch.sh $mode: ok"
