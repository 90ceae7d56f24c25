# A CMake toolchain file for Windows x86-64 with Debian's mingw-w64 (gcc).
#   cmake -S . -B build-windows -DCMAKE_TOOLCHAIN_FILE=cmake/mingw-w64.cmake \
#         -DKC_WINDOWS_DEPS=build-windows-deps/prefix
# KC_WINDOWS_DEPS is where scripts/windows-deps.sh installed SQLite, jansson,
# libyaml, cmocka and the Vulkan headers for this target; pkg-config looks
# only there, never at the build machine's .pc files.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(triple x86_64-w64-mingw32)
# the posix flavour: C11 threads and pthreads through winpthreads
find_program(CMAKE_C_COMPILER NAMES ${triple}-gcc-posix ${triple}-gcc REQUIRED)
find_program(CMAKE_RC_COMPILER NAMES ${triple}-windres)
# tests run under Wine through wine-test.sh: a pass that wineserver's exit
# timer turned into a SIGKILL on a busy machine still reads as a pass
set(CMAKE_CROSSCOMPILING_EMULATOR ${CMAKE_CURRENT_LIST_DIR}/../tests/windows/wine-test.sh)

if(NOT KC_WINDOWS_DEPS)
  set(KC_WINDOWS_DEPS "$ENV{KC_WINDOWS_DEPS}")
endif()
get_filename_component(KC_WINDOWS_DEPS "${KC_WINDOWS_DEPS}" ABSOLUTE BASE_DIR "${CMAKE_SOURCE_DIR}")
set(ENV{KC_WINDOWS_DEPS} "${KC_WINDOWS_DEPS}") # try_compile re-reads this file
set(CMAKE_FIND_ROOT_PATH /usr/${triple} ${KC_WINDOWS_DEPS})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(ENV{PKG_CONFIG_LIBDIR} "${KC_WINDOWS_DEPS}/lib/pkgconfig")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "")
