#!/usr/bin/env bash
# ag_gemm_shared.sh - AG+linear at the headline shape (m=32768, k=16384, n=8192, bf16) with d
# ranks sharing one GPU, d in {2, 4, 8}, four ways in one run (docs/benchmarks.md):
#   (a) pipeline      hir-opt --stream-parallel --backend=cuda [--defer-send-wait], checked
#   (b) compute-only  the same program after --strip-communication (the same GEMMs, no copies)
#   (c) gather+GEMM   hir-opt --convert-to-communication --backend=cuda (Allgather over CUDA
#                     IPC, then one GEMM), checked
#   (d) torch         d processes each doing the same F.linear (bench/torch_shared.py)
# Every figure: wall time on one clock per iteration (barrier to barrier), TFLOP/s summed over
# the ranks that share the device, next to the device's peak; hir runs use --vary-inputs and
# the checked ones end with the randomized product check of the last timed run.
#   bash bench/ag_gemm_shared.sh BIN_DIR [OUT_DIR]     (on the GPU machine)
set -u
bin=$(cd "$1" && pwd); out=${2:-${OUT:-/tmp/ag-shared}}; mkdir -p "$out"
BIN=$bin; . "$(dirname "$0")/gpu_env.sh"; trap 'rm -rf "$GPU_ENV_TMP"' EXIT
M=${M:-32768} K=${K:-16384} N=${N:-8192}
DS=${DS:-2 4 8}; STREAMS=${STREAMS:-4}; WARM=${WARM:-3}; ITERS=${ITERS:-20}
work=$(mktemp -d)
log=$out/ag_shared.log
: > "$log"
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'); $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader)" | tee -a "$log"
hr() {  # hr TAG NP JSON OPTS... PROGRAM
  local tag=$1 np=$2 json=$3; shift 3
  echo "\$ hir-run -np $np --device=cuda --bench=$ITERS --warmup=$WARM --bench-json=$json $*" >> "$log"
  timeout 400 hir-run -np "$np" --device=cuda --timeout=120 --bench=$ITERS --warmup=$WARM \
      --bench-json="$json" "$@" > "$work/$tag.log" 2>&1
  local rc=$?
  cat "$work/$tag.log" >> "$log"
  echo "$tag rc=$rc $(grep -E 'per device|check: (PASS|FAIL)' "$work/$tag.log" | tr -s ' ' | tr '\n' ' ')"
}
for d in $DS; do
  hir-gen ag-linear --m $M --k $K --n $N --d $d --no-bias -o $work/in$d.hir
  hir-opt --stream-parallel --backend=cuda $work/in$d.hir -o $work/pipe$d.hir
  hir-opt --stream-parallel --backend=cuda --defer-send-wait $work/in$d.hir -o $work/defer$d.hir
  hir-opt --strip-communication $work/pipe$d.hir -o $work/strip$d.hir
  hir-opt --convert-to-communication --backend=cuda $work/in$d.hir -o $work/gather$d.hir
  hr pipe-d$d $d $out/pipe-d$d.json --streams=$STREAMS --vary-inputs --check=$work/in$d.hir $work/pipe$d.hir
  hr defer-d$d $d $out/defer-d$d.json --streams=$STREAMS --vary-inputs --check=$work/in$d.hir $work/defer$d.hir
  hr strip-d$d $d $out/strip-d$d.json --streams=$STREAMS --vary-inputs $work/strip$d.hir
  hr gather-d$d $d $out/gather-d$d.json --vary-inputs --check=$work/in$d.hir $work/gather$d.hir
  echo "\$ mpirun -np $d python3 bench/torch_shared.py --m $M --k $K --n $N --warmup $WARM --iters $ITERS" >> "$log"
  timeout 300 mpirun --allow-run-as-root --oversubscribe -np $d python3 "$(dirname "$0")/torch_shared.py" \
      --m $M --k $K --n $N --warmup $WARM --iters $ITERS --json $out/torch-d$d.json >> "$log" 2>&1
  echo "torch-d$d rc=$? $(cat $out/torch-d$d.json 2>/dev/null | tr -d '\n' | cut -c1-200)"
done
python3 "$(dirname "$0")/ag_gemm_shared_table.py" "$out" | tee "$out/ag_shared.md"
rm -rf "$work"
