# What the tests and examples that run kernels share:
#   KC_BUNDLE_KC, KC_BUNDLE_KC_TARGET   the kc that builds their bundles (a path,
#                                       generator expressions allowed) and the
#                                       target(s) to depend on
#   KC_RUNTIME_TEST_ENV                 their environment: the Vulkan validation
#                                       layer on, the backend they run on (below),
#                                       and in a sanitizer build the LeakSanitizer
#                                       suppressions for it
#   KC_RT_TEST_TARGET_FLAGS             `-t` flags for their bundles
#
# The backend: the runtime tests open contexts with the auto choice, which
# prefers HIP and CUDA to Vulkan. KC_RT_TEST_BACKEND (vulkan, the default;
# cuda; hip) hides the other native backends' libraries from them
# (KCRT_HIP_LIBRARY / KCRT_CUDA_LIBRARY=/nonexistent), so that by default
# they run on Vulkan on every machine, and on an NVIDIA or AMD machine
# through CUDA or HIP when asked (docs/gpu-validation.md). KC_RT_TEST_TARGETS
# are the kc targets their bundles are built for (spirv by default; add the
# device's sm_NN or gfx name for CUDA or HIP).
#
# The bundle-building kc is the kc of this build, sanitized or not: the
# bundles are made the way a user makes them. A KC_RUNTIME_ONLY build has
# no kc of its own, and a cross build's kc (kc.exe for Windows) cannot run
# on the build machine: KC_BUNDLE_KC names one that can (bundles are the
# same wherever they are built), or what needs bundles is left out.
if(KC_RUNTIME_ONLY OR CMAKE_CROSSCOMPILING)
  set(KC_BUNDLE_KC "" CACHE FILEPATH "A kc for the build machine that builds the bundles (KC_RUNTIME_ONLY, cross builds)")
  set(KC_BUNDLE_KC_TARGET)
else()
  set(KC_BUNDLE_KC $<TARGET_FILE:kc>)
  set(KC_BUNDLE_KC_TARGET kc)
endif()

set(KC_RT_TEST_BACKEND vulkan CACHE STRING "The backend the runtime tests run on: vulkan, cuda or hip")
set_property(CACHE KC_RT_TEST_BACKEND PROPERTY STRINGS vulkan cuda hip)
set(KC_RT_TEST_TARGETS spirv CACHE STRING "kc targets of the runtime tests' bundles (a ;-list: spirv;sm_86)")
if(NOT KC_RT_TEST_BACKEND MATCHES "^(vulkan|cuda|hip)$")
  message(FATAL_ERROR "KC_RT_TEST_BACKEND is '${KC_RT_TEST_BACKEND}': expected vulkan, cuda or hip")
endif()
set(KC_RT_TEST_TARGET_FLAGS)
foreach(t IN LISTS KC_RT_TEST_TARGETS)
  list(APPEND KC_RT_TEST_TARGET_FLAGS -t ${t})
endforeach()

# The validation layer checks every runtime test, except under Wine: its
# vulkan-1.dll forwards to the host's driver and lists no layers
# (docs/windows.md)
if(CMAKE_CROSSCOMPILING_EMULATOR MATCHES "wine")
  set(KC_RUNTIME_TEST_ENV KC_RT_EXPECT_BACKEND=${KC_RT_TEST_BACKEND})
else()
  set(KC_RUNTIME_TEST_ENV KCRT_VALIDATION=1 KC_RT_EXPECT_BACKEND=${KC_RT_TEST_BACKEND})
endif()
if(NOT KC_RT_TEST_BACKEND STREQUAL "hip")
  list(APPEND KC_RUNTIME_TEST_ENV KCRT_HIP_LIBRARY=/nonexistent)
endif()
if(NOT KC_RT_TEST_BACKEND STREQUAL "cuda")
  list(APPEND KC_RUNTIME_TEST_ENV KCRT_CUDA_LIBRARY=/nonexistent)
endif()
if(KC_SANITIZE)
  list(APPEND KC_RUNTIME_TEST_ENV LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/tests/runtime/lsan.supp)
endif()

# On Windows a program finds kcrt.dll beside itself: copied there after each
# build of a program that links it.
function(kc_beside_kcrt target)
  if(WIN32)
    add_custom_command(TARGET ${target} POST_BUILD
                       COMMAND ${CMAKE_COMMAND} -E copy_if_different $<TARGET_FILE:kcrt> $<TARGET_FILE_DIR:${target}>)
  endif()
endfunction()
