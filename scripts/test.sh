#!/usr/bin/env bash
# Builds kc and runs every test: the normal build and its benchmark check
# against the committed baseline, then the sanitizer build (address +
# undefined), then a bounded fuzz run of the front end.
# This is the README's test command and what CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
jobs=$(nproc)

bash scripts/setup.sh

step() { printf '\n== %s\n' "$*"; }

step "build (RelWithDebInfo)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build -j "$jobs"
step "tests"
(cd build && ctest --output-on-failure -j "$jobs")
step "benchmarks against the committed lavapipe baseline (bench/ci.sh; docs/benchmarks.md)"
bench/ci.sh build

step "build with -fsanitize=address,undefined"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DKC_SANITIZE=ON >/dev/null
ninja -C build-asan -j "$jobs"
step "tests under the sanitizers"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j "$jobs")

step "fuzz the front end (bounded)"
CC=clang-19 CXX=clang++-19 cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Debug -DKC_FUZZ=ON \
  -DKC_BUILD_TESTS=OFF -DKC_WITH_LLVM=OFF >/dev/null
ninja -C build-fuzz -j "$jobs" fuzz_frontend
bash tests/fuzz/run.sh build-fuzz/tests/fuzz/fuzz_frontend "${KC_FUZZ_SECONDS:-120}"

step "all tests passed"
