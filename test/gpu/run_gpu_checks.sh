#!/bin/bash
# run_gpu_checks.sh — everything the CUDA backend checks on a GPU machine, in one go: library
# check (ldd), the self-test at np=1,2,4,8 (all ranks on the visible GPU(s)), and the bf16
# GEMM comparison against torch. Usage: run_gpu_checks.sh BIN_DIR [OUT_DIR], where BIN_DIR holds
# hir-cuda-selftest (a build's test/gpu/ folder); run it from the source root (bench/).
set -u
BIN=${1:-.dev/cuda}/hir-cuda-selftest
OUTD=${2:-${OUT:-/tmp}}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
# CUDA libraries: the toolkit's, else the pip wheels PyTorch brings
LIBS=/usr/local/cuda/lib64:/usr/local/cuda/lib
for d in $(python3 -c 'import nvidia,os,glob; [print(p) for b in nvidia.__path__ for p in glob.glob(os.path.join(b,"*","lib"))]' 2>/dev/null); do LIBS=$LIBS:$d; done
export LD_LIBRARY_PATH=$LIBS:${LD_LIBRARY_PATH:-}
echo "ldd: $(ldd $BIN | grep -c 'not found') libraries not found"; ldd $BIN | grep 'not found'
MPI="mpirun --allow-run-as-root --oversubscribe -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE"
declare -A RES
run() {   # name timeout cmd...
  local name=$1 to=$2; shift 2
  local t0=$(date +%s)
  timeout $to "$@" > $OUTD/$name.log 2>&1; local rc=$?
  local t1=$(date +%s)
  grep -E 'FAIL|summary|TFLOP' $OUTD/$name.log | head -20
  RES[$name]="rc=$rc $((t1 - t0)) s"
}
# QUICK=1: a shorter re-check (np=8 ring with 200 iterations, one hir GEMM bench, no torch)
IT8=1000; [ "${QUICK:-0}" = 1 ] && IT8=200
run np1 100 $MPI -np 1 $BIN
run np2 60 $MPI -np 2 $BIN --iters 1000
run np4 75 $MPI -np 4 $BIN --iters 1000
run np8 100 $MPI -np 8 $BIN --iters $IT8
KEYS="np1 np2 np4 np8 bench_hir2"
[ "${QUICK:-0}" = 1 ] || { KEYS="np1 np2 np4 np8 bench_hir1 bench_hir2 bench_torch bench_hir3";
  run bench_hir1 45 $MPI -np 1 $BIN --bench-gemm 4096 16384 8192; }
run bench_hir2 45 $MPI -np 1 $BIN --bench-gemm 32768 16384 8192
[ "${QUICK:-0}" = 1 ] || { run bench_torch 60 python3 bench/gemm_torch.py
  run bench_hir3 45 $MPI -np 1 $BIN --bench-gemm 32768 16384 8192; }
echo "== summary"; for k in $KEYS; do
  echo "$k: ${RES[$k]} $(grep -E 'summary|TFLOP' $OUTD/$k.log | grep -v '^torch [0-9]' | sed 's/.*summary: //' | tr '\n' ' ')"; done
