# The kc that builds the bundles tests and examples run on: KC_BUNDLE_KC
# (a path, generator expressions allowed) and the target to depend on,
# KC_BUNDLE_KC_TARGET.
#
# Normally the kc of this build. In a sanitizer build, kc build aborts in
# the compiler's own code (tests/runtime/compiler_bugs/ubsan_diag_flush_empty.kc),
# so a plain kc is built beside it for making bundles; the runtime under
# test is still the sanitized one.
if(KC_SANITIZE)
  include(ExternalProject)
  ExternalProject_Add(kc_plain
    SOURCE_DIR ${PROJECT_SOURCE_DIR}
    BINARY_DIR ${PROJECT_BINARY_DIR}/kc_plain
    CMAKE_ARGS -G Ninja -DCMAKE_BUILD_TYPE=Release -DKC_SANITIZE=OFF -DKC_BUILD_TESTS=OFF
               -DKC_WITH_LLVM=${KC_WITH_LLVM} -DKC_WITH_SPIRV_TOOLS=${KC_WITH_SPIRV_TOOLS}
    BUILD_COMMAND ${CMAKE_COMMAND} --build <BINARY_DIR> --target kc
    BUILD_ALWAYS ON
    INSTALL_COMMAND ""
    BUILD_BYPRODUCTS ${PROJECT_BINARY_DIR}/kc_plain/tools/kc)
  set(KC_BUNDLE_KC ${PROJECT_BINARY_DIR}/kc_plain/tools/kc)
  set(KC_BUNDLE_KC_TARGET kc_plain ${PROJECT_BINARY_DIR}/kc_plain/tools/kc)
else()
  set(KC_BUNDLE_KC $<TARGET_FILE:kc>)
  set(KC_BUNDLE_KC_TARGET kc)
endif()
