# Unit tests of runner/ core and the CPU backend (conversions, data/npy/compare, kernels),
# and the multi-rank test of the MPI collectives, P2P and timeouts run under mpiexec. None of
# them links the CUDA backend.
hir_add_unit_test(test_convert
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_convert.c
  LIBS hir::backend)
hir_add_unit_test(test_data
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_data.c
  LIBS hir::data)
hir_add_unit_test(test_cpu_backend
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_cpu_backend.c
  LIBS hir::cpu hir::data)

# The comm test is a plain MPI program (CMocka's runner does not know about ranks): each
# rank counts its failures and the exit status says whether any failed.
hir_add_unit_test(test_cpu_comm NO_CMOCKA RANKS 4 TIMEOUT 60
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_cpu_comm.c
  LIBS hir::cpu MPI::MPI_C)
# the same program as a singleton (no launcher): teams of one, self P2P
add_test(NAME unit.test_cpu_comm_singleton COMMAND test_cpu_comm)
set_tests_properties(unit.test_cpu_comm_singleton PROPERTIES TIMEOUT 30)

# hir_launch_local re-executes the test under mpirun itself (no mpiexec in the command)
hir_add_unit_test(test_launch NO_CMOCKA TIMEOUT 60
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_launch.c
  LIBS hir::boot)

# Out of memory anywhere in a one-rank hir-run job (issue 14 F18): hir_run_job with the k-th
# allocation of hir's code refused, for every k. The allocator is wrapped at link time, so only
# the objects linked into the test (hir's static libraries) see the refusals.
hir_add_unit_test(test_interp_oom TIMEOUT 600
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_interp_oom.c
  LIBS hir::job)
target_compile_definitions(test_interp_oom PRIVATE
  HIR_RELIABILITY_INPUTS="${PROJECT_SOURCE_DIR}/test/lit/reliability/Inputs"
  HIR_LIT_INPUTS="${PROJECT_SOURCE_DIR}/test/lit/Inputs"
  HIR_CORPUS="${PROJECT_SOURCE_DIR}/test/corpus")
target_link_options(test_interp_oom PRIVATE
  "LINKER:--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=aligned_alloc")
# Ranks sharing one GPU (runner/job/shared_gpu.c): the note without MPS and MPS detection,
# with no GPU.
hir_add_unit_test(test_shared_gpu
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_shared_gpu.c
  LIBS hir::job)
