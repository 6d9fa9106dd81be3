# The cache file of --gemm-tune=FILE (runner/cuda/cuda_gemm_cache.c): plain C, so it is
# compiled into this test in every build, with or without the CUDA backend.
hir_add_unit_test(test_gemm_cache
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_gemm_cache.c
          ${PROJECT_SOURCE_DIR}/runner/cuda/cuda_gemm_cache.c
  LIBS hir::support)
