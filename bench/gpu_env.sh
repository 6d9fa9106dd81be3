# gpu_env.sh — sourced by the GPU bench scripts (tp_compare.sh, schedule_gpu.sh; ag_gemm_shared.sh
# and rs_gemm_shared.sh through shared_gpu.sh):
# BIN (absolute) first in PATH; never NVLink multicast; mpirun as root; unbuffered Python; the
# libraries BIN carries (lib/, or OpenBLAS in blas.tar.xz for the CPU reference of --check,
# which the device image may lack) and those of the nvidia Python wheels on LD_LIBRARY_PATH.
# Sets GPU_ENV_TMP (a directory removed at exit) and GPU_ENV_MPS ("on" or "off", what every
# log header and table caption records as "MPS: on/off").
# MPS=1 (default 0, so that figures compare with the history): start a CUDA MPS control daemon
# for the script's lifetime, its pipe and log directories private to it (in GPU_ENV_TMP;
# exported as CUDA_MPS_PIPE_DIRECTORY and CUDA_MPS_LOG_DIRECTORY, so that hir-run's ranks find
# it), stopped at exit (`echo quit | nvidia-cuda-mps-control`), also after an error or a
# signal. The script stops with exit 2 when nvidia-cuda-mps-control is missing or the daemon
# does not come up within MPS_WAIT seconds (default 10). MPS_CONTROL names another control
# program (default nvidia-cuda-mps-control; test/lit/tools/gpu-env-mps.test gives a stand-in).
# With d ranks on one GPU, MPS runs them side by side; without it the GPU time-slices them
# (docs/benchmarks.md, "Ranks sharing one GPU: time-slicing and MPS").
# The trap on EXIT is gpu_env.sh's: a script that sets its own calls gpu_env_cleanup in it.
export PATH="$BIN:$PATH" NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
GPU_ENV_TMP=$(mktemp -d)
GPU_ENV_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
GPU_ENV_MPS_STARTED=""
gpu_env_cleanup() {
  if [ -n "$GPU_ENV_MPS_STARTED" ]; then
    echo quit | "$GPU_ENV_MPS_CONTROL" > /dev/null 2>&1
    local _i
    for _i in $(seq 50); do      # the daemon ends after its servers: wait for it, 5 s at most
      [ "$(python3 "$GPU_ENV_HERE/mps_state.py")" = off ] && break
      sleep 0.1
    done
    GPU_ENV_MPS_STARTED=""
  fi
  rm -rf "$GPU_ENV_TMP"
}
trap gpu_env_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
GPU_ENV_MPS_CONTROL=${MPS_CONTROL:-nvidia-cuda-mps-control}
case ${MPS_WAIT:-10} in
  *[!0-9]*|0) echo "gpu_env.sh: MPS_WAIT is a whole number of seconds, not '$MPS_WAIT'" >&2; exit 2 ;;
esac
if [ "${MPS:-0}" = 1 ]; then
  if ! command -v "$GPU_ENV_MPS_CONTROL" > /dev/null; then
    echo "gpu_env.sh: MPS=1 but $GPU_ENV_MPS_CONTROL is not found (it comes with the NVIDIA driver); run with MPS=0, or install it" >&2
    exit 2
  fi
  export CUDA_MPS_PIPE_DIRECTORY=$GPU_ENV_TMP/mps-pipe CUDA_MPS_LOG_DIRECTORY=$GPU_ENV_TMP/mps-log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  if ! "$GPU_ENV_MPS_CONTROL" -d; then
    echo "gpu_env.sh: MPS=1 but '$GPU_ENV_MPS_CONTROL -d' failed" >&2
    exit 2
  fi
  GPU_ENV_MPS_STARTED=1
  for _i in $(seq $((${MPS_WAIT:-10} * 10))); do
    [ "$(python3 "$GPU_ENV_HERE/mps_state.py")" = on ] && break
    sleep 0.1
  done
  if [ "$(python3 "$GPU_ENV_HERE/mps_state.py")" != on ]; then
    echo "gpu_env.sh: MPS=1 but the MPS control daemon did not come up in ${MPS_WAIT:-10} s (nothing listens on $CUDA_MPS_PIPE_DIRECTORY/control); its log:" >&2
    cat "$CUDA_MPS_LOG_DIRECTORY/control.log" >&2 2>/dev/null
    exit 2
  fi
elif [ "${MPS:-0}" != 0 ]; then
  echo "gpu_env.sh: MPS is 0 or 1, not '$MPS'" >&2
  exit 2
fi
GPU_ENV_MPS=$(python3 "$GPU_ENV_HERE/mps_state.py")
_libs=""
if [ -d "$BIN/lib" ]; then _libs=$BIN/lib; fi
if [ -f "$BIN/blas.tar.xz" ] && ! ldconfig -p 2>/dev/null | grep -q libopenblas.so.0; then
  tar xJf "$BIN/blas.tar.xz" -C "$GPU_ENV_TMP" && _libs=${_libs:+$_libs:}$GPU_ENV_TMP:$GPU_ENV_TMP/blas
fi
for _d in $(python3 -c 'import nvidia,os,glob; [print(p) for b in nvidia.__path__ for p in glob.glob(os.path.join(b,"*","lib"))]' 2>/dev/null); do
  _libs=${_libs:+$_libs:}$_d
done
export LD_LIBRARY_PATH=${_libs:+$_libs:}${LD_LIBRARY_PATH:-}
unset _libs _d _i
