#!/usr/bin/env bash
# Installs everything kc needs from Debian 12's packages. Safe to run again:
# it asks apt only for what is missing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  llvm-19-dev clang-19 lld-19 libclang-rt-19-dev   # LLVM backend, fuzzer
  spirv-tools spirv-headers                        # SPIR-V validation, headers
  libvulkan-dev mesa-vulkan-drivers vulkan-tools   # Vulkan loader, lavapipe
  vulkan-validationlayers                          # checked in the runtime tests
  libsqlite3-dev sqlite3                           # bundles and the tuning cache
  libyaml-dev libjansson-dev zlib1g-dev            # kc.yaml, replay files
  libcmocka-dev python3 python3-numpy              # tests and their references
  python3-scipy libxml2-utils                      # kc bench's tests: U-test values, xmllint
  stress-ng                                        # bench/noise.sh loads the machine
  gdb                                              # a hung test prints its stacks (KC_TEST_WATCHDOG)
  python3-venv python3-pip python3-pytest          # the kcrt Python package: pip install, its tests
  python3-torch                                    # PyTorch: the reference for ops, DLPack round trips
  python3-torchaudio python3-aubio espeak-ng       # audio references: spectrograms, resampling; yin; spoken test audio
  gcc-mingw-w64-x86-64 libz-mingw-w64-dev          # Windows: kc.exe and kcrt.dll (scripts/windows-deps.sh builds the rest
  dpkg-dev tcl                                     #   from Debian's sources: dpkg-source; tclsh makes sqlite3.c)
  wine wine64 xvfb xauth                           # their tests under Wine (tests/windows/run.sh), with a display for winevulkan
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages are installed"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: run as root, or install sudo" >&2; exit 1; }
  SUDO=sudo
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
