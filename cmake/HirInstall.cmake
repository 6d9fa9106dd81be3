# HirInstall.cmake — what `cmake --install` puts in place (docs/api.md, "Installing"):
#   bin/                       hir-opt, hir-gen, hir-run (tools/CMakeLists.txt)
#   lib/                       libhir.so, libhir.a, libhir_runtime.so (api/CMakeLists.txt)
#   include/hir/hir.h          the public C API
#   lib/pkgconfig/hir.pc       pkg-config: hir (and hir-runtime.pc with the runner)
#   lib/cmake/hir/             find_package(hir): hir::hir, hir::hir_static, hir::hir_runtime
include_guard(GLOBAL)
include(CMakePackageConfigHelpers)

set(HIR_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/hir)

install(FILES ${PROJECT_SOURCE_DIR}/include/hir/hir.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/hir)
install(TARGETS ${HIR_INSTALL_TARGETS} EXPORT hirTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT hirTargets NAMESPACE hir:: DESTINATION ${HIR_CMAKE_DIR})

set(HIR_HAVE_RUNTIME OFF)
if(TARGET hir_runtime)
  set(HIR_HAVE_RUNTIME ON)
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/install/hirConfig.cmake.in
  ${PROJECT_BINARY_DIR}/hirConfig.cmake INSTALL_DESTINATION ${HIR_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/hirConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/hirConfig.cmake ${PROJECT_BINARY_DIR}/hirConfigVersion.cmake
        DESTINATION ${HIR_CMAKE_DIR})

# pkg-config files, with paths relative to the .pc file's own place (${pcfiledir}) so an
# installed tree can be moved
configure_file(${PROJECT_SOURCE_DIR}/cmake/install/hir.pc.in ${PROJECT_BINARY_DIR}/hir.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/hir.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(HIR_HAVE_RUNTIME)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/install/hir-runtime.pc.in
                 ${PROJECT_BINARY_DIR}/hir-runtime.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/hir-runtime.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
