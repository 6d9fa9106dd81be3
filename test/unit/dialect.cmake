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
