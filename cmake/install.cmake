# What `cmake --install` puts under the prefix (DESIGN.md §10):
#   bin/kc                                   (not in a KC_RUNTIME_ONLY build)
#   share/kc/rvc.kcb                         kernels/, default variants (kcrt.nn's default bundle)
#   lib/libkcrt.so.0.1.0, .so.0, .so         the runtime; only kcrt_* exported
#   lib/libkcrt.a                            the same, static (links sqlite3, dl, m, pthread)
#   include/kc/kcrt.h                        the one public header
#   lib/pkgconfig/kcrt.pc                    pkg-config --cflags --libs [--static] kcrt
#   lib/cmake/kcrt/                          find_package(kcrt CONFIG) -> kcrt::kcrt (shared),
#                                            kcrt::kcrt_static
# kcrt_internal.h and the kcrt_static archive of kc's own tools stay in the
# build tree: they are not part of the contract.
include(CMakePackageConfigHelpers)
find_package(Threads REQUIRED)

# The installed static library: libkcrt's objects with its dependencies
# named plainly, so that a consumer needs no pkg-config module of ours to
# link it.
add_library(kcrt_archive STATIC $<TARGET_OBJECTS:kcrt_objects>)
set_target_properties(kcrt_archive PROPERTIES OUTPUT_NAME kcrt EXPORT_NAME kcrt_static)
target_link_libraries(kcrt_archive INTERFACE sqlite3 Threads::Threads ${CMAKE_DL_LIBS} m)
foreach(t kcrt kcrt_archive)
  target_include_directories(${t} INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
endforeach()
set_target_properties(kcrt PROPERTIES EXPORT_NAME kcrt)

install(TARGETS kcrt kcrt_archive EXPORT kcrtTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_COMPONENT Development
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} # kcrt.dll, beside kc.exe
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${PROJECT_SOURCE_DIR}/runtime/include/kc/kcrt.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kc)
if(WIN32) # for MSVC's import library: lib /def:kcrt.def /machine:x64 (docs/windows.md)
  install(FILES ${PROJECT_BINARY_DIR}/runtime/kcrt.def DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
if(TARGET kc)
  install(TARGETS kc RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  # the shipped kernel package's default variants: kcrt.nn's bundle when
  # $KCRT_BUNDLE names none (share/kc/rvc.kcb, in the build tree too)
  file(GLOB KC_RVC_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/kernels/*.kc ${PROJECT_SOURCE_DIR}/kernels/kc.yaml
       ${PROJECT_SOURCE_DIR}/kernels/include/*)
  if(KC_BUNDLE_KC)
    add_custom_command(
      OUTPUT ${PROJECT_BINARY_DIR}/share/kc/rvc.kcb
      COMMAND ${KC_BUNDLE_KC} build ${PROJECT_SOURCE_DIR}/kernels --quiet -o ${PROJECT_BINARY_DIR}/share/kc/rvc.kcb
      DEPENDS ${KC_BUNDLE_KC_TARGET} ${KC_RVC_SOURCES}
      COMMENT "Building kernels/ into share/kc/rvc.kcb")
    add_custom_target(rvc_bundle ALL DEPENDS ${PROJECT_BINARY_DIR}/share/kc/rvc.kcb)
    install(FILES ${PROJECT_BINARY_DIR}/share/kc/rvc.kcb DESTINATION ${CMAKE_INSTALL_DATADIR}/kc)
  endif()
endif()

# pkg-config: the shared library by default, --static adds what the archive
# needs. The prefix is found from the .pc file's own place, so that the
# tree may be installed with --prefix elsewhere, or moved.
file(RELATIVE_PATH KCRT_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(${PROJECT_SOURCE_DIR}/cmake/kcrt.pc.in ${PROJECT_BINARY_DIR}/kcrt.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/kcrt.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# the CMake package
set(KCRT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/kcrt)
install(EXPORT kcrtTargets NAMESPACE kcrt:: DESTINATION ${KCRT_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/kcrtConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/kcrtConfig.cmake INSTALL_DESTINATION ${KCRT_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/kcrtConfigVersion.cmake VERSION ${PROJECT_VERSION}
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/kcrtConfig.cmake ${PROJECT_BINARY_DIR}/kcrtConfigVersion.cmake
        DESTINATION ${KCRT_CMAKE_DIR})
