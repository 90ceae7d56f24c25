#!/usr/bin/env bash
# Validates libkcrt's GPU backends on a machine with a GPU: builds kc and
# the runtime test suite once per backend, with the test bundles built for
# this GPU's target, and runs the suite through each backend the machine
# has — CUDA and Vulkan on an NVIDIA machine, HIP and Vulkan on an AMD one.
# docs/gpu-validation.md says what to expect and what to look at.
#
#   tests/gpu/run.sh [--backends "cuda vulkan"] [--setup] [--jobs N] [--keep-going]
#
#   --backends   which to run (default: every one this machine has)
#   --setup      install kc's Debian packages first (scripts/setup.sh)
#   --jobs N     ctest's parallelism (default 1: one GPU, timings stay honest)
#   --keep-going run every backend even after one fails
#
# Logs go to out/gpu-validation/<backend>.log; the exit status is 0 only
# when every backend's suite passed. It needs kc's Debian packages on the
# GPU machine; where they cannot be installed (no network), carry.sh and
# on_device.sh beside it do the same from a build made elsewhere (they ran
# on an H100: docs/gpu-validation.md).
set -euo pipefail
cd "$(dirname "$0")/../.."

backends=""
setup=0
jobs=1
keep_going=0
while [ $# -gt 0 ]; do
  case "$1" in
    --backends) backends="$2"; shift 2 ;;
    --setup) setup=1; shift ;;
    --jobs) jobs="$2"; shift 2 ;;
    --keep-going) keep_going=1; shift ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

[ "$setup" = 1 ] && bash scripts/setup.sh
out=out/gpu-validation
mkdir -p "$out"

# ---- kc itself, and what the machine has -------------------------------------------------
echo "== building kc (build-gpu/base)"
cmake -S . -B build-gpu/base -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKC_BUILD_TESTS=OFF >/dev/null
ninja -C build-gpu/base kc >/dev/null
kc=build-gpu/base/tools/kc

echo "== kc devices"
"$kc" devices | tee "$out/devices.txt" || true

# The kc target of the first device of a backend ("sm_86", "gfx90a"), or nothing.
target_of() {
  { "$kc" devices --backend "$1" 2>/dev/null || true; } | sed -n 's/^   target  *//p' | awk 'NR == 1'
}

# Builds kc and the tests for one backend in $1 and runs the runtime suite
# (every test program opens its context with auto choice, which CMake
# points at this backend) and the example host program.
suite() {
  local dir=$1 backend=$2 targets=$3
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DKC_RT_TEST_BACKEND="$backend" -DKC_RT_TEST_TARGETS="$targets" &&
    ninja -C "$dir" &&
    "$dir/tools/kc" devices --backend "$backend" &&
    (cd "$dir" && ctest -j "$jobs" --output-on-failure -R 'test_rt_|example_')
}

if [ -z "$backends" ]; then
  [ -n "$(target_of cuda)" ] && backends="$backends cuda"
  [ -n "$(target_of hip)" ] && backends="$backends hip"
  [ -n "$(target_of vulkan)" ] && backends="$backends vulkan"
fi
if [ -z "${backends// /}" ]; then
  echo "run.sh: no HIP, CUDA or Vulkan device here (see $out/devices.txt): nothing to validate" >&2
  exit 1
fi
echo "== backends to validate:$backends"

# The native targets the Vulkan run's bundles also carry, so that one bundle
# format is checked on every backend of the machine.
natives=""
for b in cuda hip; do
  t=$(target_of "$b")
  [ -n "$t" ] && natives="$natives;$t"
done

# ---- one build and suite per backend --------------------------------------------------------
failed=""
for b in $backends; do
  t=$(target_of "$b")
  if [ -z "$t" ]; then
    echo "run.sh: no $b device: skipping it" >&2
    failed="$failed $b(no-device)"
    continue
  fi
  targets="spirv"
  [ "$b" != vulkan ] && targets="spirv;$t"
  [ "$b" = vulkan ] && targets="spirv$natives"
  dir=build-gpu/$b
  log=$out/$b.log
  echo
  echo "== $b: device target $t, bundles for '$targets' ($dir, log $log)"
  status=0
  suite "$dir" "$b" "$targets" >"$log" 2>&1 || status=$?
  tail -n 25 "$log"
  if [ "$status" != 0 ]; then
    echo "== $b: FAILED (exit $status); the whole log is $log"
    failed="$failed $b"
    [ "$keep_going" = 1 ] || break
  else
    echo "== $b: passed"
  fi
done

# ---- a timed run through each backend, for the eye -------------------------------------------
echo
echo "== kc run saxpy through each backend (timings to compare by eye)"
bundle=$out/saxpy.kcb
"$kc" build tests/runtime/kernels -t "spirv$natives" --quiet -o "$bundle"
for b in $backends; do
  KCRT_BACKEND=$b "$kc" run "$bundle" saxpy n=4194304 a=2 --repeat 20 2>&1 | sed "s/^/[$b] /" || true
done

echo
if [ -n "$failed" ]; then
  echo "run.sh: failed:$failed (logs in $out/)"
  exit 1
fi
echo "run.sh: every backend passed:$backends (logs in $out/)"
