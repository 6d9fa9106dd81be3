# HirLibrary.cmake — hir_add_library(): how every source folder of hir becomes a library.
#
#   hir_add_library(NAME
#     SOURCES file.c ...            sources, relative to the calling folder
#     DEPS hir::other ...           PUBLIC: other hir libraries whose headers this one's use
#     PRIVATE_DEPS m MPI::MPI_C ... PRIVATE: system libraries and targets only its .c files use
#     PRIVATE_INCLUDES dir ...      PRIVATE include folders (generated headers, system paths)
#     PRIVATE_DEFINES NAME=VALUE ...)
#
# makes the STATIC, position-independent library hir_NAME with the alias hir::NAME. Its users
# see the source root (and the build root, for generated headers), so includes are spelled from
# the root: #include "dialect/hir.h". Adding a folder is one add_subdirectory() line in the top
# CMakeLists.txt plus a CMakeLists.txt there with one hir_add_library() call.
include_guard(GLOBAL)

function(hir_add_library name)
  cmake_parse_arguments(PARSE_ARGV 1 L "" ""
                        "SOURCES;DEPS;PRIVATE_DEPS;PRIVATE_INCLUDES;PRIVATE_DEFINES")
  if(L_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "hir_add_library(${name}): unknown arguments: ${L_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT L_SOURCES)
    message(FATAL_ERROR "hir_add_library(${name}): no SOURCES")
  endif()
  add_library(hir_${name} STATIC ${L_SOURCES})
  add_library(hir::${name} ALIAS hir_${name})
  set_target_properties(hir_${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_include_directories(hir_${name} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}>)
  if(L_PRIVATE_INCLUDES)
    target_include_directories(hir_${name} PRIVATE ${L_PRIVATE_INCLUDES})
  endif()
  if(L_PRIVATE_DEFINES)
    target_compile_definitions(hir_${name} PRIVATE ${L_PRIVATE_DEFINES})
  endif()
  target_link_libraries(hir_${name} PUBLIC ${L_DEPS} PRIVATE ${L_PRIVATE_DEPS})
endfunction()
