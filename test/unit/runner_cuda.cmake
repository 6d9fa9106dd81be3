# The CUDA backend as seen from a build without it: the stand-in (runner/cuda_absent.c) must
# refuse cleanly. Builds with the CUDA backend run its no-GPU test instead (test/gpu/).
if(NOT HIR_HAVE_CUDA)
  hir_add_unit_test(test_cuda_absent
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_cuda_absent.c
    LIBS hir::cuda)
endif()
# Every element-wise op has a CUDA spelling in the kernel generator's table.
if(HIR_HAVE_CUDA)
  hir_add_unit_test(test_cuda_spelling
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_cuda_spelling.c
    LIBS hir::cuda)
endif()
