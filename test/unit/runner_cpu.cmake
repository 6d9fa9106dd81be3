# Unit tests of runner/ core and the CPU backend (conversions, data/npy/compare, kernels),
# and the multi-rank test of the MPI collectives, P2P and timeouts run under mpiexec.
hir_add_cmocka_test(test_convert
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_convert.c
  LIBS hir_rtcore)
hir_add_cmocka_test(test_data
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_data.c
  LIBS hir_rtcore)
hir_add_cmocka_test(test_cpu_backend
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_cpu_backend.c
  LIBS hir_cpu hir_cuda)

# The comm test is a plain MPI program (CMocka's runner does not know about ranks): each
# rank counts its failures and the exit status says whether any failed.
add_executable(test_cpu_comm ${CMAKE_CURRENT_SOURCE_DIR}/test_cpu_comm.c)
target_link_libraries(test_cpu_comm PRIVATE hir_cpu)
set(HIR_MPIEXEC_EXTRA "")
execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _hir_mpiexec_version
                ERROR_VARIABLE _hir_mpiexec_version)
if(_hir_mpiexec_version MATCHES "Open MPI|OpenRTE")
  set(HIR_MPIEXEC_EXTRA --oversubscribe --allow-run-as-root)
endif()
add_test(NAME unit.test_cpu_comm
  COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 4 ${HIR_MPIEXEC_EXTRA}
          $<TARGET_FILE:test_cpu_comm>)
set_tests_properties(unit.test_cpu_comm PROPERTIES TIMEOUT 60)
# the same program as a singleton (no launcher): teams of one, self P2P
add_test(NAME unit.test_cpu_comm_singleton COMMAND test_cpu_comm)
set_tests_properties(unit.test_cpu_comm_singleton PROPERTIES TIMEOUT 30)

# hir_launch_local re-executes the test under mpirun itself (no mpiexec in the command)
add_executable(test_launch ${CMAKE_CURRENT_SOURCE_DIR}/test_launch.c)
target_link_libraries(test_launch PRIVATE hir_rtcore)
add_test(NAME unit.test_launch COMMAND test_launch)
set_tests_properties(unit.test_launch PROPERTIES TIMEOUT 60)
