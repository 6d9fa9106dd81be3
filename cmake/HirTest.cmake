# HirTest.cmake — how tests are registered; every test is listed by name (no globbing).
#
#   hir_add_unit_test(NAME SOURCES file.c ... LIBS hir::lib ...
#                     [RANKS n] [TIMEOUT s] [SKIP_RETURN_CODE c] [NO_CMOCKA])
#       builds the program NAME (linked with CMocka unless NO_CMOCKA) and registers the ctest
#       unit.NAME; RANKS n runs it under mpiexec with n ranks (needs the runner's MPI).
#   hir_add_lit_suite(AREA [NEEDS_RUNNER] [SHARDS N])
#       registers test/lit/AREA as the ctest lit.AREA; NEEDS_RUNNER: its tests call hir-run,
#       so it is left out of builds without the runner (HIR_BUILD_RUNNER=OFF). SHARDS N splits a
#       long folder into N ctest entries lit.AREA.1ofN ... lit.AREA.NofN (lit's --num-shards and
#       --run-shard), so ctest reports progress every few seconds instead of once after a
#       minute, and spreads the folder over its -j slots.
include_guard(GLOBAL)

function(hir_add_unit_test name)
  cmake_parse_arguments(PARSE_ARGV 1 T "NO_CMOCKA" "RANKS;TIMEOUT;SKIP_RETURN_CODE" "SOURCES;LIBS")
  if(T_UNPARSED_ARGUMENTS OR NOT T_SOURCES)
    message(FATAL_ERROR "hir_add_unit_test(${name}): expected SOURCES ... LIBS ... "
                        "(got ${T_UNPARSED_ARGUMENTS})")
  endif()
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS})
  if(NOT T_NO_CMOCKA)
    target_include_directories(${name} PRIVATE ${CMOCKA_INCLUDE_DIR})
    target_link_libraries(${name} PRIVATE ${CMOCKA_LIBRARY})
  endif()
  if(T_RANKS)
    add_test(NAME unit.${name}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${T_RANKS} ${HIR_MPIEXEC_EXTRA}
                     $<TARGET_FILE:${name}>)
  else()
    add_test(NAME unit.${name} COMMAND ${name})
  endif()
  if(T_TIMEOUT)
    set_tests_properties(unit.${name} PROPERTIES TIMEOUT ${T_TIMEOUT})
  endif()
  if(DEFINED T_SKIP_RETURN_CODE)
    set_tests_properties(unit.${name} PROPERTIES SKIP_RETURN_CODE ${T_SKIP_RETURN_CODE})
  endif()
endfunction()

function(hir_add_lit_suite area)
  cmake_parse_arguments(PARSE_ARGV 1 L "NEEDS_RUNNER" "SHARDS" "")
  set(dir ${PROJECT_SOURCE_DIR}/test/lit/${area})
  if(NOT IS_DIRECTORY ${dir})
    message(FATAL_ERROR "hir_add_lit_suite(${area}): no folder ${dir}")
  endif()
  if(L_NEEDS_RUNNER AND NOT HIR_BUILD_RUNNER)
    return()
  endif()
  set(lit ${Python3_EXECUTABLE} ${HIR_LIT} -sv
      --param hir_site=${PROJECT_BINARY_DIR}/test/lit/lit.site.cfg.py)
  if(NOT L_SHARDS OR L_SHARDS LESS 2)
    add_test(NAME lit.${area} COMMAND ${lit} ${dir})
    return()
  endif()
  # lexical order: lit's default order sorts by the times of earlier runs, read from a file
  # that the other lit runs of the suite rewrite as they finish, so shards started at different
  # moments could split different orders (a test run twice, another never)
  foreach(k RANGE 1 ${L_SHARDS})
    add_test(NAME lit.${area}.${k}of${L_SHARDS}
             COMMAND ${lit} --order=lexical --num-shards ${L_SHARDS} --run-shard ${k} ${dir})
  endforeach()
endfunction()
