# runner/bench/bench.c: the --bench timing loop on the CPU backend.
hir_add_unit_test(test_bench
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_bench.c
  LIBS hir::bench hir::cpu)
