# What the tests and examples that run kernels share:
#   KC_BUNDLE_KC, KC_BUNDLE_KC_TARGET   the kc that builds their bundles (a path,
#                                       generator expressions allowed) and the
#                                       target(s) to depend on
#   KC_RUNTIME_TEST_ENV                 their environment: the Vulkan validation
#                                       layer on, and in a sanitizer build the
#                                       LeakSanitizer suppressions for it
#
# The bundle-building kc is the kc of this build, sanitized or not: the
# bundles are made the way a user makes them.
set(KC_BUNDLE_KC $<TARGET_FILE:kc>)
set(KC_BUNDLE_KC_TARGET kc)

set(KC_RUNTIME_TEST_ENV KCRT_VALIDATION=1)
if(KC_SANITIZE)
  list(APPEND KC_RUNTIME_TEST_ENV LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/tests/runtime/lsan.supp)
endif()
