# CUDA backend on machines without a GPU (CI): it must say so cleanly. The GPU checks are the
# hand-run hir-cuda-selftest (runner/cuda/), not ctests.
if(TARGET hir_cuda AND HIR_HAVE_CUDA)
  hir_add_cmocka_test(runner_cuda_nogpu
    SOURCES ${PROJECT_SOURCE_DIR}/runner/cuda/cuda_nogpu_test.c
    LIBS hir_cuda)
  set_tests_properties(unit.runner_cuda_nogpu PROPERTIES SKIP_RETURN_CODE 77)
endif()
