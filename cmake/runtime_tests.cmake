# What the tests and examples that run kernels share:
#   KC_BUNDLE_KC, KC_BUNDLE_KC_TARGET   the kc that builds their bundles (a path,
#                                       generator expressions allowed) and the
#                                       target(s) to depend on
#   KC_RUNTIME_TEST_ENV                 their environment: the Vulkan validation
#                                       layer on, and in a sanitizer build the
#                                       LeakSanitizer suppressions for it
#
# The bundle-building kc:
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

set(KC_RUNTIME_TEST_ENV KCRT_VALIDATION=1)
if(KC_SANITIZE)
  list(APPEND KC_RUNTIME_TEST_ENV LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/tests/runtime/lsan.supp)
endif()
