#!/bin/sh
# fake_cuda.sh KC FAKE_CUDA_LIB DIR — kc bench through libkcrt's CUDA
# backend, on the fake CUDA driver of tests/runtime (no GPU: it runs no
# kernels and its event times are made up). What it checks is the path:
# the calibration kernels compiled for the device's sm_NN with LLVM, the
# bundle's PTX variants chosen, timing through CUDA events, the results
# file naming the backend; and that a bundle without PTX is a failed
# benchmark with the message that says how to build one.
set -eu
kc=$1 fake=$2 dir=$3
mkdir -p "$dir"
src=$(cd "$(dirname "$0")/../../../bench/kernels" && pwd)
"$kc" build "$src" -t spirv -t sm_89 -o "$dir/cuda.kcb" --quiet
export KCRT_CUDA_LIBRARY=$fake KCRT_BACKEND=cuda
"$kc" bench "$dir/cuda.kcb" --kernel saxpy --repeat 5 --quiet --json "$dir/cuda.json" >"$dir/out.txt" 2>&1 ||
    { cat "$dir/out.txt"; echo "fake_cuda.sh: kc bench through CUDA failed"; exit 1; }
grep -q '"backend": "cuda"' "$dir/cuda.json" || { echo "fake_cuda.sh: the results do not name the cuda backend"; exit 1; }
grep -q '"variant": "WG=128,PT=4"' "$dir/cuda.json" || { echo "fake_cuda.sh: not the default variant"; exit 1; }
"$kc" build "$src" -t spirv -o "$dir/spirv.kcb" --quiet
if "$kc" bench "$dir/spirv.kcb" --kernel saxpy --repeat 5 --quiet >"$dir/out2.txt" 2>&1; then
    cat "$dir/out2.txt"; echo "fake_cuda.sh: a SPIR-V-only bundle through CUDA did not fail"; exit 1
fi
grep -q "build it with -t sm_" "$dir/out2.txt" || { cat "$dir/out2.txt"; echo "fake_cuda.sh: no advice"; exit 1; }
echo "fake_cuda.sh: kc bench through the fake CUDA driver: ok"
