#!/usr/bin/env bash
# GPU validation of hir-run (--device=cuda) against the CPU reference, on the GPU machine.
#   test/gpu/validate.sh BIN_DIR OUT_DIR [quick]
# BIN_DIR holds hir-opt, hir-gen, hir-run built elsewhere. Every program the CPU tests run is
# lowered here and run with --device=cuda --check: CUDA-IPC pipelines with -np 1, 2, 4, 8
# ranks sharing one GPU, NCCL programs with -np 1 (NCCL refuses two ranks on one GPU), the
# gather-then-GEMM program, 1000 back-to-back iterations of the CUDA ring, both P2P
# protocols, and a user kernel through LaunchKernel. Prints a table; exit 1 if anything failed.
set -u
bin=$(cd "$1" && pwd); out=$2; mkdir -p "$out"
logs=$(mktemp -d)   # packed into $out/logs.tar.gz at the end (the device tool returns few files)
export PATH="$bin:$PATH" NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
here=$(cd "$(dirname "$0")" && pwd)
corpus=$here/../corpus
work=$(mktemp -d)
pass=0; fail=0
results=$out/gpu-validation.md
echo "| program | ranks | options | result | seconds |" > "$results"
echo "|---|---|---|---|---|" >> "$results"

run() {  # name np opts... -- program reference
  local name=$1 np=$2; shift 2
  local opts=()
  while [ "$1" != "--" ]; do opts+=("$1"); shift; done
  shift
  local prog=$1 ref=$2
  local t0=$(date +%s%N)
  local log=$logs/$name.log
  timeout 300 hir-run -np "$np" --device=${HIR_VALIDATE_DEVICE:-cuda} --timeout=60 "${opts[@]}" --check="$ref" "$prog" > "$log" 2>&1
  local rc=$?
  local dt=$(( ($(date +%s%N) - t0) / 1000000 ))
  local res=FAIL
  if [ $rc -eq 0 ] && grep -q '^check: PASS' "$log"; then res=PASS; pass=$((pass+1)); else fail=$((fail+1)); fi
  printf '| %s | %s | %s | %s | %d.%01d |\n' "$name" "$np" "${opts[*]:-}" "$res" $((dt / 1000)) $((dt % 1000 / 100)) >> "$results"
  printf '%-48s np=%-2s %-28s %s (%d.%01ds)\n' "$name" "$np" "${opts[*]:-}" "$res" $((dt / 1000)) $((dt % 1000 / 100))
  [ $res = PASS ] || tail -5 "$log"
}

# The corpus programs (d = 8) and the acceptance shape: 1024^3 bf16 AG+linear.
run corpus-ag-linear-cuda 8 -- "$corpus/ag-linear-cuda.hir" "$corpus/ag-linear-input.hir"
for d in 1 2 4 8; do
  for kind in ag-linear ag-linear-nobias ag-matmul; do
    case $kind in
      ag-linear) hir-gen ag-linear --m 1024 --k 1024 --n 1024 --d $d -o $work/$kind-$d.hir ;;
      ag-linear-nobias) hir-gen ag-linear --m 1024 --k 1024 --n 1024 --d $d --no-bias -o $work/$kind-$d.hir ;;
      ag-matmul) hir-gen ag-matmul --m 1024 --k 1024 --n 1024 --d $d -o $work/$kind-$d.hir ;;
    esac
    hir-opt --stream-parallel --backend=cuda $work/$kind-$d.hir -o $work/$kind-$d-cuda.hir
    run $kind-d$d-cuda-ipc $d -- $work/$kind-$d-cuda.hir $work/$kind-$d.hir
  done
done
hir-gen ag-linear --m 1024 --k 1024 --n 1024 --d 8 --dtype fp16 -o $work/fp16-8.hir
hir-opt --stream-parallel --backend=cuda $work/fp16-8.hir -o $work/fp16-8-cuda.hir
run ag-linear-fp16-d8-cuda-ipc 8 -- $work/fp16-8-cuda.hir $work/fp16-8.hir
hir-gen ag-linear --m 1024 --k 1024 --n 1024 --d 4 --dtype fp32 -o $work/fp32-4.hir
hir-opt --stream-parallel --backend=cuda $work/fp32-4.hir -o $work/fp32-4-cuda.hir
run ag-linear-fp32-d4-cuda-ipc 4 -- $work/fp32-4-cuda.hir $work/fp32-4.hir
# Put protocol: the exchange is ordered recv-before-send by the backend pass (4.6)
hir-opt --stream-parallel --pass-pipeline='backend{kind=cuda,protocol=put}' $work/ag-linear-8.hir -o $work/put-8.hir
run ag-linear-d8-cuda-ipc-put 8 --p2p-protocol=put -- $work/put-8.hir $work/ag-linear-8.hir
# hoisted handle exchange
hir-opt --stream-parallel --backend=cuda --hoist-handle-exchange $work/ag-linear-8.hir -o $work/hoist-8.hir
run ag-linear-d8-cuda-ipc-hoisted 8 -- $work/hoist-8.hir $work/ag-linear-8.hir
# NCCL: one rank per GPU, so -np 1 here
for kind in ag-linear ag-matmul; do
  hir-opt --stream-parallel --backend=nccl $work/$kind-1.hir -o $work/$kind-1-nccl.hir
  run $kind-d1-nccl 1 -- $work/$kind-1-nccl.hir $work/$kind-1.hir
  hir-opt --convert-to-communication $work/$kind-1.hir -o $work/$kind-1-gather.hir
  run $kind-d1-gather-then-gemm 1 -- $work/$kind-1-gather.hir $work/$kind-1.hir
done
# NCCL refuses two ranks on one GPU: the message must say so
hir-opt --stream-parallel --backend=nccl $work/ag-linear-2.hir -o $work/ag-linear-2-nccl.hir
if hir-run -np 2 --device=cuda --timeout=60 $work/ag-linear-2-nccl.hir > $logs/nccl-two-ranks.log 2>&1; then
  echo "nccl-two-ranks-refused: FAIL (ran)"; fail=$((fail+1))
elif grep -qi "one GPU\|same GPU\|same device\|one device" $logs/nccl-two-ranks.log; then
  echo "nccl-two-ranks-refused: PASS"; pass=$((pass+1)); echo "| nccl two ranks on one GPU refused | 2 | | PASS | |" >> "$results"
else
  echo "nccl-two-ranks-refused: FAIL"; tail -3 $logs/nccl-two-ranks.log; fail=$((fail+1))
fi
# 1000 back-to-back iterations of the CUDA ring, checked after the last
run ag-linear-d8-cuda-ipc-1000-iters 8 --iters=1000 -- $work/ag-linear-8-cuda.hir $work/ag-linear-8.hir
# LaunchKernel with a user kernel linked through nvJitLink (PTX)
if command -v nvcc >/dev/null; then
  nvcc -ptx -arch=compute_90 -o $work/double.ptx "$here/double.cu" &&
    run launch-kernel-ptx 1 --kernel 3=$work/double.ptx -- "$here/../lit/Inputs/run-launch-kernel.hir" "$here/launch-ref.hir"
fi
echo
echo "validation: $pass passed, $fail failed"
echo "" >> "$results"; echo "$pass passed, $fail failed" >> "$results"
tar -czf "$out/logs.tar.gz" -C "$logs" . 2>/dev/null
rm -rf "$work" "$logs"
[ $fail -eq 0 ]
