# gpu_env.sh — sourced by the GPU bench scripts (tp_compare.sh; ag_gemm_shared.sh and
# rs_gemm_shared.sh through shared_gpu.sh):
# BIN (absolute) first in PATH; never NVLink multicast; mpirun as root; unbuffered Python; the
# libraries BIN carries (lib/, or OpenBLAS in blas.tar.xz for the CPU reference of --check,
# which the device image may lack) and those of the nvidia Python wheels on LD_LIBRARY_PATH.
# Sets GPU_ENV_TMP (a directory to remove at the end).
export PATH="$BIN:$PATH" NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
GPU_ENV_TMP=$(mktemp -d)
_libs=""
if [ -d "$BIN/lib" ]; then _libs=$BIN/lib; fi
if [ -f "$BIN/blas.tar.xz" ] && ! ldconfig -p 2>/dev/null | grep -q libopenblas.so.0; then
  tar xJf "$BIN/blas.tar.xz" -C "$GPU_ENV_TMP" && _libs=${_libs:+$_libs:}$GPU_ENV_TMP:$GPU_ENV_TMP/blas
fi
for _d in $(python3 -c 'import nvidia,os,glob; [print(p) for b in nvidia.__path__ for p in glob.glob(os.path.join(b,"*","lib"))]' 2>/dev/null); do
  _libs=${_libs:+$_libs:}$_d
done
export LD_LIBRARY_PATH=${_libs:+$_libs:}${LD_LIBRARY_PATH:-}
unset _libs _d
