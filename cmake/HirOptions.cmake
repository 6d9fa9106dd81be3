# HirOptions.cmake — the AUTO/ON/OFF options of hir (HIR_ENABLE_CUDA, HIR_ENABLE_NCCL) and the
# one-line-per-option summary printed at the end of configure.
#
#   hir_tristate_option(NAME "doc")   declares NAME (AUTO by default) and normalizes it to
#                                     AUTO, ON or OFF (YES/TRUE/1 are ON, NO/FALSE/0 are OFF)
#   hir_summary(NAME "text")          records one line for the summary
#   hir_print_summary()               prints the recorded lines
include_guard(GLOBAL)

function(hir_tristate_option name doc)
  get_property(type CACHE ${name} PROPERTY TYPE)
  if(type STREQUAL "BOOL" AND "${${name}}" STREQUAL "ON")
    # a build folder configured before these options had three values: ON then meant "when
    # found", which is AUTO now
    set(${name} AUTO CACHE STRING "${doc}" FORCE)
  endif()
  set(${name} AUTO CACHE STRING "${doc}")
  set_property(CACHE ${name} PROPERTY TYPE STRING)
  set_property(CACHE ${name} PROPERTY STRINGS AUTO ON OFF)
  string(TOUPPER "${${name}}" v)
  if(v STREQUAL "AUTO")
    set(v AUTO)
  elseif(v MATCHES "^(ON|YES|TRUE|Y|1)$")
    set(v ON)
  elseif(v MATCHES "^(OFF|NO|FALSE|N|0)$")
    set(v OFF)
  else()
    message(FATAL_ERROR "${name}=${${name}}: expected AUTO, ON or OFF")
  endif()
  set(${name} ${v} PARENT_SCOPE)
endfunction()

function(hir_summary name text)
  set_property(GLOBAL APPEND PROPERTY HIR_SUMMARY_LINES "${name}: ${text}")
endfunction()

function(hir_print_summary)
  get_property(lines GLOBAL PROPERTY HIR_SUMMARY_LINES)
  foreach(l IN LISTS lines)
    message(STATUS "hir: ${l}")
  endforeach()
endfunction()
