#!/usr/bin/env bash
# on_device.sh — validates and measures kc on an NVIDIA GPU machine from
# what tests/gpu/carry.sh prepared (no builds, no packages, no network
# there), in one pass that fits a short lease. The steps, in the order
# --steps names them (default: suite,python,rvc,bench,tune):
#   suite   the runtime suite and examples through CUDA, then through
#           Vulkan (the validation layer on), as tests/gpu/run.sh would
#   python  kcrt's Python tests (every kcrt.nn op against PyTorch) through
#           CUDA and Vulkan
#   half    kc bench of the float16 kernels beside their float32 ones and
#           of both attention designs through each backend, and PyTorch at
#           the same shapes (DIR/compare_half.md)
#   rvc     RVC v2's 40k generator (kcrt.models.rvc, random weights) on a
#           spoken sentence: the real-time factor through CUDA and Vulkan,
#           and of the PyTorch reference on CUDA and the CPU; kc bench of
#           its convolutions at the shapes it launched (KCRT_RECORD_SHAPES)
#           and PyTorch there (DIR/compare_rvc.md); then (unless --no-tune)
#           the convolutions tuned through Vulkan at those shapes for
#           --tune-time and the synthesis again
#   rvctest python/tests/test_rvc.py through each backend
#   bench   kc bench --calibrate and kc bench of the shipped package's
#           gemm, conv1d, conv_transpose1d, softmax, layernorm (default
#           variants; gemm also at 1024^3 and 4096^3) through Vulkan and
#           CUDA, then the same operations through PyTorch (cuBLAS, cuDNN;
#           FP32, TF32 off): bench/torch_compare.py's tables
#   tune    kc tune of --tune-kernels (default gemm) through Vulkan at
#           kc.yaml's shapes for --tune-time (gemm also at 1024^3 and
#           4096^3 for 30 s), kc bench of the tuned bundle, and PyTorch
#           beside the default and tuned columns (needs bench's results)
# The devices kc sees come first, always. Every step has a time limit, the
# script goes on past a failed one, and a step due to start past
# --deadline seconds is skipped (so that the results come back inside a
# lease's command limit).
#
#   tests/gpu/on_device.sh [--dir build-device] [--out DIR] [--steps LIST] [--tune-time 45s]
#                          [--tune-kernels "gemm conv1d"] [--deadline SECONDS]
#                          [--backends "cuda vulkan"] [--no-tune]
#                          [--suite-only] [--python-only] [--rvc-only]
#
#   --suite-only   --steps suite (a rerun after a fix)
#   --python-only  --steps suite,python,half
#   --rvc-only     --steps rvc,rvctest
#   --backends     only these backends' steps (default both)
#   --no-tune      no tuning (rvc's, and the tune step)
#
# Results: DIR/log.txt (everything printed), DIR/compare*.md (the tables:
# kc.yaml's shapes, gemm at 1024^3 and 4096^3, the tuned ones), and
# DIR/results.tar.gz (every JSON, log and peaks file, kept after each
# step). DIR defaults to $OUT (the device tool's folder that comes back),
# else out/on-device.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
dev=build-device
out=${OUT:-$root/out/on-device}
tune_time=45s
backends="cuda vulkan"
tune=1
steps=suite,python,rvc,bench,tune
tune_kernels=gemm
deadline=0
while [ $# -gt 0 ]; do
    case $1 in
    --dir) dev=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --tune-time) tune_time=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --tune-kernels) tune_kernels=$2; shift 2 ;;
    --deadline) deadline=$2; shift 2 ;;
    --suite-only) steps=suite; shift ;;
    --backends) backends=$2; shift 2 ;;
    --no-tune) tune=0; shift ;;
    --rvc-only) steps=rvc,rvctest; shift ;;
    --python-only) steps=suite,python,half; shift ;;
    -h | --help) sed -n '2,44p' "$0"; exit 0 ;;
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
# ON_DEVICE_REHEARSAL=1: a dry run on the build machine (its own Vulkan
# device, whatever the vendor; nothing unpacked to /)
rehearsal=${ON_DEVICE_REHEARSAL:-0}
if [ "$rehearsal" = 0 ]; then
    for f in .gl/*.deb; do dpkg -x "$f" /; done
    ldconfig
fi
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
nv = [d for d in ds if d["vendor"] == "nvidia" or sys.argv[1] == "1"]
print(nv[0]["index"] if nv else -1)' "$rehearsal"
}
vk=$(nvidia_index vulkan) cu=$(nvidia_index cuda)
[ "$vk" = -1 ] && VK_LOADER_DEBUG=error,warn,driver "$kc" devices --backend vulkan 2>&1 | head -40
echo "NVIDIA device: vulkan index $vk, cuda index $cu"

# ---- the steps -------------------------------------------------------------------------------
on() { case " $backends " in *" $1 "*) return 0 ;; esac; return 1; }
keep() { # the tuning database comes back too (every variant's status and time), the shader caches do not
    [ -f "$work/cache/kc/tuning.db" ] && cp "$work/cache/kc/tuning.db" "$work/tuning.db"
    tar -czf "$out/results.tar.gz" -C "$work" --exclude cache --exclude '*.safetensors' .
}
kcrt_env=(KCRT_LIBRARY="$root/$dev/suite/runtime/libkcrt.so" PYTHONPATH="$root/python")

step_suite() {
    # the examples' Python is the build machine's /usr/bin/python3; here it is the one with numpy
    find "$dev/suite" -name CTestTestfile.cmake -exec sed -i "s|/usr/bin/python3|$(command -v python3)|g" {} +
    local b
    for b in cuda vulkan; do
        on $b || continue
        [ $b = vulkan ] && find "$dev/suite" -name CTestTestfile.cmake -exec \
            sed -i 's|KC_RT_EXPECT_BACKEND=cuda|KC_RT_EXPECT_BACKEND=vulkan;KCRT_CUDA_LIBRARY=/nonexistent|g' {} +
        say "runtime suite through $b"
        (cd "$dev/suite" && step 120 ctest -j 4 --timeout 90 --output-on-failure -R 'test_rt_|example_' -E '_bundle$' \
            -FA '.*') 2>&1 | tee "$work/suite_$b.log" | grep -E "Test +#|tests passed|Failed|Error|error" | head -60
    done
    # back to CUDA, as carry.sh configured it, for a later run of this step
    find "$dev/suite" -name CTestTestfile.cmake -exec \
        sed -i 's|KC_RT_EXPECT_BACKEND=vulkan;KCRT_CUDA_LIBRARY=/nonexistent|KC_RT_EXPECT_BACKEND=cuda|g' {} +
}

step_python() { # kcrt, the Python package, against PyTorch
    local b
    for b in cuda vulkan; do
        on $b || continue
        say "kcrt's Python tests through $b (PyTorch and torchaudio on the CPU as the reference)"
        # the suite's test bundles (spirv and the NVIDIA target), as tests/python/run.sh gives them
        step 150 env "${kcrt_env[@]}" KCRT_BACKEND=$b KCRT_TEST_RVC_BUNDLE="$root/$dev/package.kcb" \
            KCRT_TEST_BUNDLE="$root/$dev/suite/tests/runtime/rt_kernels.kcb" \
            KCRT_TEST_DEFAULT_BUNDLE="$root/$dev/suite/tests/runtime/rt_default.kcb" \
            python3 -m pytest -q -p no:cacheprovider -rs python/tests 2>&1 | tee "$work/pytest_$b.log" | tail -25
    done
}

device_args() { # $1: backend -> the kc bench/tune arguments that pick the NVIDIA device
    if [ "$1" = cuda ]; then
        echo --device "$cu" --calibration-bundle "$dev/calibrate.kcb"
    else
        echo --device "$vk"
    fi
}

step_half() {
    local half=(--kernel gemm --kernel gemm_f16 --kernel linear --kernel linear_f16 --kernel gemv --kernel gemv_f16 --kernel conv1d --kernel conv1d_f16 --kernel attention
        --kernel attention_f16 --kernel attention_decode --kernel attention_decode_f16 --kernel bmm
        --kernel conv_transpose1d) b cols=()
    for b in cuda vulkan; do
        on $b || continue
        say "kc bench of the float16 kernels and their float32 ones through $b (default variants)"
        KCRT_BACKEND=$b step 120 "$kc" bench "$dev/package.kcb" "${half[@]}" $(device_args $b) --repeat 10 \
            --max-time 4 --json "$work/kc_half_$b.json"
    done
    for b in cuda vulkan; do [ -s "$work/kc_half_$b.json" ] && cols+=(--kc "$b=$work/kc_half_$b.json"); done
    say "the same operations through PyTorch (float16 where kc's are)"
    step 120 python3 bench/torch_compare.py "${cols[@]}" --repeat 30 --markdown "$out/compare_half.md" \
        --json "$work/compare_half.json"
}

step_rvc() {
    say "RVC v2 40k generator on $dev/speech.wav: real-time factors"
    step 60 env "${kcrt_env[@]}" python3 -m kcrt.models.rvc random-checkpoint "$work/G40k.safetensors"
    local b torch_on=cuda,cpu shapes="$work/rvc_shapes.txt" labels=()
    rm -f "$shapes"
    for b in cuda vulkan; do
        on $b || continue
        step 240 env "${kcrt_env[@]}" KCRT_BACKEND=$b KCRT_BUNDLE="$root/$dev/package.kcb" \
            KCRT_RECORD_SHAPES="$shapes" \
            python3 -m kcrt.models.rvc synth "$work/G40k.safetensors" --input "$dev/speech.wav" \
            --output "$work/rvc_$b.wav" --warmup ${torch_on:+--compare-torch $torch_on}
        step 240 env "${kcrt_env[@]}" KCRT_BACKEND=$b KCRT_BUNDLE="$root/$dev/package.kcb" \
            python3 -m kcrt.models.rvc synth "$work/G40k.safetensors" --input "$dev/speech.wav" \
            --output "$work/rvc_$b.wav" --warmup --profile | sed -n "/^profile/,$ p"
        torch_on=""
    done
    # the same convolutions one at a time, at the synthesis's own shapes (KCRT_RECORD_SHAPES): kc bench
    # against PyTorch there, to set beside --profile's sums (docs/rvc.md, "To look at on the next GPU lease")
    for b in cuda vulkan; do
        on $b && [ -s "$shapes" ] || continue
        say "kc bench through $b at the synthesis's convolution shapes"
        bench $b rvc_$b "$dev/package.kcb" --shapes-from "$shapes" --kernel conv1d --kernel conv_transpose1d &&
            labels+=(rvc_$b)
    done
    [ ${#labels[@]} = 0 ] || compare compare_rvc "${labels[@]}"
    if [ "$tune" = 1 ] && on vulkan; then
        say "kc tune conv1d and conv_transpose1d through Vulkan ($tune_time), then the synthesis again"
        cp "$dev/package.kcb" "$work/rvc_tuned.kcb"
        local from=()
        [ -s "$shapes" ] && from=(--shapes-from "$shapes")
        KCRT_BACKEND=vulkan step 600 "$kc" tune "$work/rvc_tuned.kcb" --kernel conv1d --kernel conv_transpose1d \
            ${from[@]+"${from[@]}"} --backend vulkan --device "$vk" --time "$tune_time" --quiet
        step 240 env "${kcrt_env[@]}" KCRT_BACKEND=vulkan KCRT_BUNDLE="$work/rvc_tuned.kcb" \
            python3 -m kcrt.models.rvc synth "$work/G40k.safetensors" --input "$dev/speech.wav" \
            --output "$work/rvc_vulkan_tuned.wav" --warmup --profile
    fi
}

step_rvctest() {
    local b
    for b in cuda vulkan; do
        on $b || continue
        say "test_rvc.py through $b"
        step 150 env "${kcrt_env[@]}" KCRT_BACKEND=$b KCRT_TEST_RVC_BUNDLE="$root/$dev/package.kcb" \
            python3 -m pytest -q -s -p no:cacheprovider python/tests/test_rvc.py 2>&1 |
            grep -E "relative L2|passed|failed|Error" | head -20
    done
}

kernels=(--kernel gemm --kernel linear --kernel conv1d --kernel conv_transpose1d --kernel softmax --kernel layernorm)
big=(--kernel gemm --shape M=1024,N=1024,K=1024,act=0 --shape M=4096,N=4096,K=4096,act=0)
bench() { # $1: backend; $2: label; the rest: kc bench's arguments
    local b=$1 label=$2
    shift 2
    KCRT_BACKEND=$b step 90 "$kc" bench "$@" $(device_args $b) --repeat 10 --max-time 8 --quiet \
        --peaks "$work/peaks_$b.json" --json "$work/kc_$label.json"
}
compare() { # $1: the table's name; the rest: labels of kc bench results
    local name=$1 l cols=()
    shift
    for l in "$@"; do [ -s "$work/kc_$l.json" ] && cols+=(--kc "${l%_big}=$work/kc_$l.json"); done
    [ ${#cols[@]} = 0 ] && { echo "on_device.sh: no kc bench results for $name"; return 0; }
    step 90 python3 bench/torch_compare.py "${cols[@]}" --repeat 30 --markdown "$out/$name.md" \
        --json "$work/$name.json"
}

step_bench() {
    local b
    for b in vulkan cuda; do
        on $b || continue
        [ $b = cuda ] && [ "$cu" = -1 ] && continue
        say "kc bench --calibrate through $b"
        KCRT_BACKEND=$b step 60 "$kc" bench --calibrate $(device_args $b) --peaks "$work/peaks_$b.json"
        say "kc bench through $b"
        bench $b $b "$dev/package.kcb" "${kernels[@]}"
        bench $b ${b}_big "$dev/package.kcb" "${big[@]}"
    done
    say "the same operations through PyTorch (kc's default variants)"
    compare compare vulkan cuda
    compare compare_big vulkan_big cuda_big
}

step_tune() {
    if [ "$tune" = 0 ] || ! on vulkan; then
        echo "on_device.sh: no tune step (--no-tune, or not through Vulkan)"
        return 0
    fi
    local k ks=() tk=()
    for k in $tune_kernels; do ks+=(--kernel "$k"); done
    say "kc tune $tune_kernels through Vulkan ($tune_time)"
    cp "$dev/package.kcb" "$work/tuned.kcb"
    KCRT_BACKEND=vulkan step 600 "$kc" tune "$work/tuned.kcb" "${ks[@]}" --backend vulkan --device "$vk" \
        --time "$tune_time" --quiet
    case " $tune_kernels " in
    *" gemm "*)
        KCRT_BACKEND=vulkan step 60 "$kc" tune "$work/tuned.kcb" --kernel gemm --shape M=1024,N=1024,K=1024,act=0 \
            --shape M=4096,N=4096,K=4096,act=0 --backend vulkan --device "$vk" --time 30s --quiet ;;
    esac
    "$kc" cache list 2>&1 | head -40
    bench vulkan vulkan_tuned "$work/tuned.kcb" "${ks[@]}"
    case " $tune_kernels " in *" gemm "*) bench vulkan vulkan_tuned_big "$work/tuned.kcb" "${big[@]}" ;; esac
    say "PyTorch again, beside the default and the tuned variants"
    compare compare_tuned vulkan vulkan_tuned
    compare compare_tuned_big vulkan_big vulkan_tuned_big
}

start=$SECONDS
for s in ${steps//,/ }; do
    if ! declare -F "step_$s" >/dev/null; then
        echo "on_device.sh: no step '$s' (suite, python, half, rvc, rvctest, bench, tune)"
        continue
    fi
    if [ "$deadline" != 0 ] && [ $((SECONDS - start)) -ge "$deadline" ]; then
        echo "on_device.sh: step $s skipped: ${deadline}s (--deadline) have passed"
        continue
    fi
    "step_$s"
    keep
done
say "done in $((SECONDS - start))s: $out"
