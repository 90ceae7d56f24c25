#!/usr/bin/env bash
# on_device.sh — validates and measures kc on an NVIDIA GPU machine from
# what tests/gpu/carry.sh prepared (no builds, no packages, no network
# there), in one pass that fits a short lease:
#   1. the devices kc sees through Vulkan and CUDA
#   2. the runtime suite and examples through CUDA, then through Vulkan
#      (the validation layer on), as tests/gpu/run.sh would
#   3. kcrt's Python tests (every kcrt.nn op against PyTorch) through CUDA
#      and Vulkan
#   4. kc bench --calibrate and kc bench of the shipped package's gemm,
#      conv1d, conv_transpose1d, softmax, layernorm (default variants;
#      gemm also at 1024^3 and 4096^3) through Vulkan and CUDA
#   5. kc tune of gemm through Vulkan (--tune-time), then kc bench again
#   6. the same operations through PyTorch (cuBLAS, cuDNN; FP32, TF32 off):
#      bench/torch_compare.py's table
#   7. RVC v2's 40k generator (kcrt.models.rvc, random weights) on a spoken
#      sentence: the real-time factor through CUDA and Vulkan, and of the
#      PyTorch reference on CUDA and the CPU
# Every step has a time limit and the script goes on past a failed one.
#
#   tests/gpu/on_device.sh [--dir build-device] [--out DIR] [--tune-time 45s] [--suite-only]
#                          [--backends "cuda vulkan"] [--no-tune] [--rvc-only] [--python-only]
#
#   --suite-only   steps 1 and 2 alone (a rerun after a fix)
#   --python-only  steps 1 and 3 alone, then kc bench of the float16
#                  kernels beside their float32 ones and of both attention
#                  designs through each backend, and PyTorch at the same
#                  shapes (DIR/compare_half.md)
#   --rvc-only     steps 1 and 7 alone (7 then also tunes the convolutions
#                  through Vulkan for --tune-time and synthesises again,
#                  unless --no-tune)
#   --backends     only these backends' steps (default both)
#   --no-tune      skip step 5
#
# Results: DIR/log.txt (everything printed), DIR/compare*.md (the tables:
# kc.yaml's shapes, gemm at 1024^3 and 4096^3, gemm tuned), and
# DIR/results.tar.gz (every JSON, log and peaks file, kept after each step). DIR defaults to $OUT
# (the device tool's folder that comes back), else out/on-device.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
dev=build-device
out=${OUT:-$root/out/on-device}
tune_time=45s
suite_only=0
backends="cuda vulkan"
tune=1
rvc_only=0
python_only=0
while [ $# -gt 0 ]; do
    case $1 in
    --dir) dev=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --tune-time) tune_time=$2; shift 2 ;;
    --suite-only) suite_only=1; shift ;;
    --backends) backends=$2; shift 2 ;;
    --no-tune) tune=0; shift ;;
    --rvc-only) rvc_only=1; shift ;;
    --python-only) python_only=1; shift ;;
    -h | --help) sed -n '2,34p' "$0"; exit 0 ;;
    *) echo "on_device.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done
mkdir -p "$out"
work=$(mktemp -d)
exec > >(tee "$out/log.txt") 2>&1
say() { printf '\n== %s (%s)\n' "$*" "$(date +%T)"; }
step() { # $1: seconds; the rest: the command
    local limit=$1 rc
    shift
    timeout -k 5 "$limit" "$@"
    rc=$?
    [ $rc = 124 ] && echo "on_device.sh: '$*' ran past ${limit}s and was stopped"
    [ $rc != 0 ] && echo "on_device.sh: exit $rc from: $*"
    return 0
}

# ---- what the machine lacks ------------------------------------------------------------------
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
# the NVIDIA Vulkan driver's manifest: where the driver's mount has it, else
# one written for libGLX_nvidia.so.0 (the driver's Vulkan ICD library)
icd=""
for d in /usr/local/nvidia/share/vulkan/icd.d /usr/share/vulkan/icd.d /etc/vulkan/icd.d; do
    [ -z "$icd" ] && [ -e "$d/nvidia_icd.json" ] && icd=$d/nvidia_icd.json
done
if [ -z "$icd" ] && ldconfig -p | grep -q libGLX_nvidia.so.0; then
    icd=$work/nvidia_icd.json
    printf '{"file_format_version": "1.0.0", "ICD": {"library_path": "libGLX_nvidia.so.0", "api_version": "1.3.0"}}\n' >"$icd"
fi
echo "Vulkan driver manifest: ${icd:-none found}"
[ -n "$icd" ] && export VK_DRIVER_FILES=$icd VK_ICD_FILENAMES=$icd
export LD_LIBRARY_PATH=$root/$dev/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export XDG_CACHE_HOME=$work/cache PYTHONUNBUFFERED=1
# the suite was configured in /work/main on the machine that built it
[ "$root" != /work/main ] && [ ! -e /work/main ] && mkdir -p /work && ln -s "$root" /work/main
kc=$root/$dev/slim/tools/kc

say "devices"
nvidia-smi -L
"$kc" --version
"$kc" devices | tee "$work/devices.txt"
nvidia_index() {
    "$kc" devices --backend "$1" --json 2>/dev/null | python3 -c '
import json, sys
try:
    ds = json.load(sys.stdin)
except ValueError:
    ds = []
nv = [d for d in ds if d["vendor"] == "nvidia"]
print(nv[0]["index"] if nv else -1)'
}
vk=$(nvidia_index vulkan) cu=$(nvidia_index cuda)
[ "$vk" = -1 ] && VK_LOADER_DEBUG=error,warn,driver "$kc" devices --backend vulkan 2>&1 | head -40
echo "NVIDIA device: vulkan index $vk, cuda index $cu"

# ---- RVC synthesis (step 7; first when it is the only step) ------------------------------------------
on() { case " $backends " in *" $1 "*) return 0 ;; esac; return 1; }
rvc_synth() {
    say "RVC v2 40k generator on $dev/speech.wav: real-time factors"
    KCRT_LIBRARY=$root/$dev/suite/runtime/libkcrt.so PYTHONPATH=$root/python step 60 \
        python3 -m kcrt.models.rvc random-checkpoint "$work/G40k.safetensors"
    local b torch_on=cuda,cpu
    for b in cuda vulkan; do
        on $b || continue
        KCRT_BACKEND=$b KCRT_LIBRARY=$root/$dev/suite/runtime/libkcrt.so KCRT_BUNDLE=$root/$dev/package.kcb \
            PYTHONPATH=$root/python step 240 python3 -m kcrt.models.rvc synth "$work/G40k.safetensors" \
            --input "$dev/speech.wav" --output "$work/rvc_$b.wav" --warmup ${torch_on:+--compare-torch $torch_on}
        KCRT_BACKEND=$b KCRT_LIBRARY=$root/$dev/suite/runtime/libkcrt.so KCRT_BUNDLE=$root/$dev/package.kcb \
            PYTHONPATH=$root/python step 240 python3 -m kcrt.models.rvc synth "$work/G40k.safetensors" \
            --input "$dev/speech.wav" --output "$work/rvc_$b.wav" --warmup --profile | sed -n "/^profile/,$ p"
        torch_on=""
    done
    if [ "$tune" = 1 ] && on vulkan; then
        say "kc tune conv1d and conv_transpose1d through Vulkan ($tune_time), then the synthesis again"
        cp "$dev/package.kcb" "$work/rvc_tuned.kcb"
        KCRT_BACKEND=vulkan step 600 "$kc" tune "$work/rvc_tuned.kcb" --kernel conv1d --kernel conv_transpose1d \
            --backend vulkan --device "$vk" --time "$tune_time" --quiet
        KCRT_BACKEND=vulkan KCRT_LIBRARY=$root/$dev/suite/runtime/libkcrt.so KCRT_BUNDLE=$work/rvc_tuned.kcb \
            PYTHONPATH=$root/python step 240 python3 -m kcrt.models.rvc synth "$work/G40k.safetensors" \
            --input "$dev/speech.wav" --output "$work/rvc_vulkan_tuned.wav" --warmup --profile
    fi
}
if [ "$rvc_only" = 1 ]; then
    rvc_synth
    for b in cuda vulkan; do
        on $b || continue
        say "test_rvc.py through $b"
        KCRT_BACKEND=$b KCRT_LIBRARY=$root/$dev/suite/runtime/libkcrt.so KCRT_TEST_RVC_BUNDLE=$root/$dev/package.kcb \
            PYTHONPATH=$root/python step 150 python3 -m pytest -q -s -p no:cacheprovider python/tests/test_rvc.py 2>&1 |
            grep -E "relative L2|passed|failed|Error" | head -20
    done
    tar -czf "$out/results.tar.gz" -C "$work" --exclude cache --exclude '*.safetensors' .
    exit 0
fi

# ---- the runtime suite -----------------------------------------------------------------------
# the examples' Python is the build machine's /usr/bin/python3; here it is the one with numpy
find "$dev/suite" -name CTestTestfile.cmake -exec sed -i "s|/usr/bin/python3|$(command -v python3)|g" {} +
suite() { # $1: backend
    say "runtime suite through $1"
    (cd "$dev/suite" && step 120 ctest -j 4 --timeout 90 --output-on-failure -R 'test_rt_|example_' -E '_bundle$' \
        -FA '.*') 2>&1 | tee "$work/suite_$1.log" | grep -E "Test +#|tests passed|Failed|Error|error" | head -60
}
on cuda && suite cuda
find "$dev/suite" -name CTestTestfile.cmake -exec \
    sed -i 's|KC_RT_EXPECT_BACKEND=cuda|KC_RT_EXPECT_BACKEND=vulkan;KCRT_CUDA_LIBRARY=/nonexistent|g' {} +
on vulkan && suite vulkan

if [ "$suite_only" = 1 ]; then
    tar -czf "$out/results.tar.gz" -C "$work" --exclude cache .
    exit 0
fi

# ---- kcrt, the Python package, against PyTorch ----------------------------------------------------
pytests() { # $1: backend
    say "kcrt's Python tests through $1 (PyTorch and torchaudio on the CPU as the reference)"
    KCRT_BACKEND=$1 KCRT_LIBRARY=$root/$dev/suite/runtime/libkcrt.so KCRT_TEST_RVC_BUNDLE=$root/$dev/package.kcb \
        PYTHONPATH=$root/python step 150 python3 -m pytest -q -p no:cacheprovider -rs python/tests 2>&1 |
        tee "$work/pytest_$1.log" | tail -25
}
on cuda && pytests cuda
on vulkan && pytests vulkan
if [ "$python_only" = 1 ]; then
    half=(--kernel gemm --kernel gemm_f16 --kernel conv1d --kernel conv1d_f16 --kernel attention --kernel attention_f16
        --kernel attention_decode --kernel attention_decode_f16 --kernel bmm --kernel conv_transpose1d)
    for b in cuda vulkan; do
        on $b || continue
        say "kc bench of the float16 kernels and their float32 ones through $b (default variants)"
        more=(--device "$vk")
        [ "$b" = cuda ] && more=(--device "$cu" --calibration-bundle "$dev/calibrate.kcb")
        KCRT_BACKEND=$b step 120 "$kc" bench "$dev/package.kcb" "${half[@]}" "${more[@]}" --repeat 10 --max-time 4 \
            --json "$work/kc_half_$b.json"
    done
    cols=()
    for b in cuda vulkan; do [ -s "$work/kc_half_$b.json" ] && cols+=(--kc "$b=$work/kc_half_$b.json"); done
    say "the same operations through PyTorch (float16 where kc's are)"
    step 120 python3 bench/torch_compare.py "${cols[@]}" --repeat 30 --markdown "$out/compare_half.md" \
        --json "$work/compare_half.json"
    tar -czf "$out/results.tar.gz" -C "$work" --exclude cache .
    exit 0
fi
rvc_synth

# ---- kc bench ----------------------------------------------------------------------------------
kernels=(--kernel gemm --kernel conv1d --kernel conv_transpose1d --kernel softmax --kernel layernorm)
big=(--kernel gemm --shape M=1024,N=1024,K=1024,act=0 --shape M=4096,N=4096,K=4096,act=0)
bench() { # $1: backend; $2: label; the rest: kc bench's arguments
    local b=$1 label=$2
    shift 2
    local more=(--device "$vk")
    [ "$b" = cuda ] && more=(--device "$cu" --calibration-bundle "$dev/calibrate.kcb")
    KCRT_BACKEND=$b step 90 "$kc" bench "$@" "${more[@]}" --repeat 10 --max-time 8 --quiet \
        --peaks "$work/peaks_$b.json" --json "$work/kc_$label.json"
}
keep() { tar -czf "$out/results.tar.gz" -C "$work" --exclude cache --exclude '*.safetensors' .; }
compare() { # $1: the table's name; the rest: labels of kc bench results
    local name=$1 l cols=()
    shift
    for l in "$@"; do [ -s "$work/kc_$l.json" ] && cols+=(--kc "${l%_big}=$work/kc_$l.json"); done
    step 90 python3 bench/torch_compare.py "${cols[@]}" --repeat 30 --markdown "$out/$name.md" \
        --json "$work/$name.json"
    keep
}
if on vulkan; then
    say "kc bench --calibrate through Vulkan"
    KCRT_BACKEND=vulkan step 60 "$kc" bench --calibrate --device "$vk" --peaks "$work/peaks_vulkan.json"
    say "kc bench through Vulkan"
    bench vulkan vulkan "$dev/package.kcb" "${kernels[@]}"
    bench vulkan vulkan_big "$dev/package.kcb" "${big[@]}"
fi
if on cuda && [ "$cu" != -1 ]; then
    say "kc bench --calibrate through CUDA"
    KCRT_BACKEND=cuda step 60 "$kc" bench --calibrate --device "$cu" --peaks "$work/peaks_cuda.json" \
        --calibration-bundle "$dev/calibrate.kcb"
    say "kc bench through CUDA"
    bench cuda cuda "$dev/package.kcb" "${kernels[@]}"
    bench cuda cuda_big "$dev/package.kcb" "${big[@]}"
fi

say "the same operations through PyTorch (kc's default variants)"
compare compare vulkan cuda
compare compare_big vulkan_big cuda_big

if [ "$tune" = 0 ] || ! on vulkan; then
    say "done: $out"
    exit 0
fi

# ---- tune gemm through Vulkan ------------------------------------------------------------------
say "kc tune gemm through Vulkan ($tune_time)"
cp "$dev/package.kcb" "$work/tuned.kcb"
KCRT_BACKEND=vulkan step 100 "$kc" tune "$work/tuned.kcb" --kernel gemm --backend vulkan --device "$vk" \
    --time "$tune_time" --quiet
KCRT_BACKEND=vulkan step 60 "$kc" tune "$work/tuned.kcb" --kernel gemm --shape M=1024,N=1024,K=1024,act=0 \
    --shape M=4096,N=4096,K=4096,act=0 --backend vulkan --device "$vk" --time 30s --quiet
"$kc" cache list 2>&1 | head -12
bench vulkan vulkan_tuned "$work/tuned.kcb" --kernel gemm
bench vulkan vulkan_tuned_big "$work/tuned.kcb" "${big[@]}"

say "PyTorch again, with the tuned gemm"
compare compare_tuned vulkan_tuned
compare compare_tuned_big vulkan_tuned_big
say "done: $out"
