# shared_gpu.sh — sourced by the benchmarks of d ranks sharing one GPU (ag_gemm_shared.sh,
# rs_gemm_shared.sh); the caller sets BIN (the tools' folder, absolute) and `out` (the output
# folder) first and removes "$work" at the end. Sources gpu_env.sh (its trap removes
# GPU_ENV_TMP and stops the MPS daemon that MPS=1 started, on exit), sets the defaults of M K N
# DS STREAMS WARM ITERS (each taken from the environment when set) and defines:
#   shared_gpu_begin LOGNAME       makes the scratch folder `work`, starts the log
#                                  log=$out/LOGNAME with the date, the device and "MPS: on/off"
#                                  (also to stdout; the state also in $out/mps.txt for the table)
#   hr TAG NP JSON OPTS... PROGRAM one timed hir-run on the GPU: its command and output go to the
#                                  log, a summary line (rc, per-device figures, the check's
#                                  verdict) to stdout
#   torch_shared D K               bench/torch_shared.py in D processes, [M, K] x [N, K]^T, into
#                                  $out/torch-dD.json, the same way
. "$(dirname "${BASH_SOURCE[0]}")/gpu_env.sh"
M=${M:-32768} K=${K:-16384} N=${N:-8192}
DS=${DS:-2 4 8}; STREAMS=${STREAMS:-4}; WARM=${WARM:-3}; ITERS=${ITERS:-20}
shared_gpu_begin() {  # shared_gpu_begin LOGNAME
  work=$(mktemp -d)
  log=$out/$1
  : > "$log"
  echo "# $(date -u '+%Y-%m-%d %H:%M UTC'); $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader); MPS: $GPU_ENV_MPS" | tee -a "$log"
  echo "$GPU_ENV_MPS" > "$out/mps.txt"
}
hr() {  # hr TAG NP JSON OPTS... PROGRAM
  local tag=$1 np=$2 json=$3; shift 3
  echo "\$ hir-run -np $np --device=cuda --bench=$ITERS --warmup=$WARM --bench-json=$json $*" >> "$log"
  timeout 400 hir-run -np "$np" --device=cuda --timeout=120 --bench=$ITERS --warmup=$WARM \
      --bench-json="$json" "$@" > "$work/$tag.log" 2>&1
  local rc=$?
  cat "$work/$tag.log" >> "$log"
  echo "$tag rc=$rc $(grep -E 'per device|check: (PASS|FAIL)' "$work/$tag.log" | tr -s ' ' | tr '\n' ' ')"
}
torch_shared() {  # torch_shared D K
  local d=$1 k=$2
  echo "\$ mpirun -np $d python3 bench/torch_shared.py --m $M --k $k --n $N --warmup $WARM --iters $ITERS" >> "$log"
  # $0 is the sourcing script, in bench/ like torch_shared.py
  timeout 300 mpirun --allow-run-as-root --oversubscribe -np $d python3 "$(dirname "$0")/torch_shared.py" \
      --m $M --k $k --n $N --warmup $WARM --iters $ITERS --json $out/torch-d$d.json >> "$log" 2>&1
  echo "torch-d$d rc=$? $(cat $out/torch-d$d.json 2>/dev/null | tr -d '\n' | cut -c1-200)"
}
