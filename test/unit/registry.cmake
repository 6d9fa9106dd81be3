# The registry (runner/registry/): backends by name and what this build has. It runs in every
# build; EXPECT_CUDA_BUILT says which answer is right.
set(_hir_expect_cuda 0)
if(HIR_HAVE_CUDA)
  set(_hir_expect_cuda 1)
endif()
hir_add_unit_test(test_registry
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_registry.c
  LIBS hir::registry)
target_compile_definitions(test_registry PRIVATE EXPECT_CUDA_BUILT=${_hir_expect_cuda})
# Every element-wise op has a CUDA spelling in the kernel generator's table.
if(HIR_HAVE_CUDA)
  hir_add_unit_test(test_cuda_spelling
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_cuda_spelling.c
    LIBS hir::cuda)
endif()
