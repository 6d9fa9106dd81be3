# HirShare.cmake — the data files hir installs under share/hir (docs/api.md, "Installing"):
#   share/hir/plot_bench.py       what hir-run --bench-plot runs (bench/plot_bench.py)
#   share/hir/editors/            the TextMate grammar, the vim syntax and check-grammar.py
#   share/hir/lit/                lit helpers: check-trace.py (a --trace file summarised for
#                                 FileCheck) and pty-run.py (a command run on a pseudo-terminal)
#   share/hir/python/             the Python package's source, for `pip install`; its file
#                                 `libdir` names the library folder relative to it, so the
#                                 wheel bundles this prefix's libhir (python/_build/hir_build.py)
# The tools find share/hir relative to their own executable (tools/share.c), never through a
# path compiled in: HIR_SHARE_FROM_BIN is that relative path. The build tree gets the same
# layout (build/share/hir next to build/tools), so the build's hir-run finds its copy the same way.
include_guard(GLOBAL)

set(HIR_SHARE_DIR ${CMAKE_INSTALL_DATADIR}/hir)
file(RELATIVE_PATH HIR_SHARE_FROM_BIN /p/${CMAKE_INSTALL_BINDIR} /p/${HIR_SHARE_DIR})
file(RELATIVE_PATH _hir_libdir_from_python /p/${HIR_SHARE_DIR}/python /p/${CMAKE_INSTALL_LIBDIR})

# the build tree's copy of the scripts, kept current at build time (the editor files and the
# Python source are read from the checkout there)
set(_hir_share_build ${PROJECT_BINARY_DIR}/tools/${HIR_SHARE_FROM_BIN})
set(_hir_share_outputs "")
foreach(_pair "bench/plot_bench.py|plot_bench.py" "test/lit/Inputs/check-trace.py|lit/check-trace.py"
              "test/lit/Inputs/pty-run.py|lit/pty-run.py")
  string(REPLACE "|" ";" _pair "${_pair}")
  list(GET _pair 0 _from)
  list(GET _pair 1 _to)
  get_filename_component(_dir ${_hir_share_build}/${_to} DIRECTORY)
  add_custom_command(OUTPUT ${_hir_share_build}/${_to}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${_dir}
    COMMAND ${CMAKE_COMMAND} -E copy_if_different ${PROJECT_SOURCE_DIR}/${_from}
            ${_hir_share_build}/${_to}
    DEPENDS ${PROJECT_SOURCE_DIR}/${_from}
    COMMENT "share/hir/${_to} for the build tree's tools")
  list(APPEND _hir_share_outputs ${_hir_share_build}/${_to})
endforeach()
add_custom_target(hir_share ALL DEPENDS ${_hir_share_outputs})

install(FILES ${PROJECT_SOURCE_DIR}/bench/plot_bench.py DESTINATION ${HIR_SHARE_DIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/editors/textmate ${PROJECT_SOURCE_DIR}/editors/vim
        DESTINATION ${HIR_SHARE_DIR}/editors)
install(FILES ${PROJECT_SOURCE_DIR}/editors/check-grammar.py DESTINATION ${HIR_SHARE_DIR}/editors)
install(FILES ${PROJECT_SOURCE_DIR}/test/lit/Inputs/check-trace.py
              ${PROJECT_SOURCE_DIR}/test/lit/Inputs/pty-run.py
        DESTINATION ${HIR_SHARE_DIR}/lit)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/ DESTINATION ${HIR_SHARE_DIR}/python
        PATTERN __pycache__ EXCLUDE PATTERN "*.egg-info" EXCLUDE PATTERN build EXCLUDE)
file(WRITE ${PROJECT_BINARY_DIR}/python-libdir "${_hir_libdir_from_python}\n")
install(FILES ${PROJECT_BINARY_DIR}/python-libdir DESTINATION ${HIR_SHARE_DIR}/python
        RENAME libdir)
