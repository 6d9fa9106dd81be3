# runner/bench.c: the --bench timing loop on the CPU backend.
hir_add_cmocka_test(test_bench
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_bench.c
  LIBS hir_runner)
