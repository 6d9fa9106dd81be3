# Unit tests of the dialect library (arena, maps, interning, IR construction, expressions,
# printing, diagnostics) and of the verifier on parsed programs.
hir_add_unit_test(test_dialect_core
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_dialect_core.c
  LIBS hir::dialect)
hir_add_unit_test(test_dialect_ir
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_dialect_ir.c
  LIBS hir::dialect)
hir_add_unit_test(test_dialect_verify
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_dialect_verify.c
  LIBS hir::parser hir::dialect)
hir_add_unit_test(test_dialect_tables
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_dialect_tables.c
  LIBS hir::dialect)
hir_add_unit_test(test_intops
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_intops.c
  LIBS hir::dialect)
# parser/log.c: the %HostIrContainer programs of a log (prefixes, interleaving, trailers).
hir_add_unit_test(test_parser_log
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_parser_log.c
  LIBS hir::parser hir::dialect)
# support/input.c: inputs read or mapped, pages given back, a mapped file truncated (SIGBUS and
# the tools' handler, tools/common.c).
hir_add_unit_test(test_input
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_input.c ${PROJECT_SOURCE_DIR}/tools/common.c
  LIBS hir::parser hir::dialect)
