#!/usr/bin/env bash
# crossing.sh — kc.exe tunes under Wine, and bundles cross between Linux and
# Windows (docs/windows.md). Run by ctest in the Windows cross build:
#
#   crossing.sh HOST_KC KC_EXE SAXPY_HOST_EXE SOURCE_DIR OUT
#
# HOST_KC is a kc for this Linux machine; KC_EXE and SAXPY_HOST_EXE are the
# cross-built programs (run with wine: its vulkan-1.dll forwards to the
# host's Vulkan, lavapipe here). Checks:
#   1. a bundle built on Linux and tuned by kc.exe: the tuned rows are the
#      Linux runtime's choice for this device (the device key is the same);
#   2. a bundle tuned on Linux: kc.exe and a Windows host program (kcrt.dll)
#      choose its tuned variant, and the program's saxpy is correct;
#   3. the same variant, inputs and seed give the same bytes through
#      kc.exe and through kc;
#   4. a variant that never finishes: kc.exe's watchdog records it as a
#      timeout and kc.exe starts itself again (CreateProcess: Windows has no
#      exec), which goes on from the cache and finishes.
set -euo pipefail
host_kc=$1 kc_exe=$2 saxpy_exe=$3 src=$4 out=$5
rm -rf "$out"
mkdir -p "$out"
n=1048576
fail() { echo "crossing.sh: $*" >&2; exit 1; }
say() { printf '== %s\n' "$*"; }
chosen() { grep -q "tuned for this device at exactly this shape" "$1" || { cat "$1" >&2; fail "$2"; }; }

say "1. built on Linux, tuned under Wine by kc.exe, chosen on Linux"
"$host_kc" build "$src/examples/saxpy" -t spirv -o "$out/w.kcb" --quiet
XDG_CACHE_HOME="$out/wcache" wine "$kc_exe" tune "$out/w.kcb" --budget 6 >"$out/wtune.log" 2>&1 ||
    { cat "$out/wtune.log" >&2; fail "kc.exe tune failed"; }
grep -E "kc tune: .* 2 tuned rows in" "$out/wtune.log" || { cat "$out/wtune.log" >&2; fail "kc.exe tune wrote no tuned rows"; }
"$host_kc" run "$out/w.kcb" saxpy n=$n a=2 --repeat 0 >"$out/wrun.log" 2>&1
chosen "$out/wrun.log" "Linux's libkcrt did not choose the variant tuned under Wine"

say "2. tuned on Linux, chosen under Wine by kc.exe and by a program on kcrt.dll"
"$host_kc" build "$src/examples/saxpy" -t spirv -o "$out/l.kcb" --quiet
XDG_CACHE_HOME="$out/lcache" "$host_kc" tune "$out/l.kcb" --budget 6 >"$out/ltune.log" 2>&1
wine "$kc_exe" run "$out/l.kcb" saxpy n=$n a=2 --repeat 0 >"$out/lrun.log" 2>&1
chosen "$out/lrun.log" "kc.exe did not choose the variant tuned on Linux"
KCRT_LOG=debug wine "$saxpy_exe" "$out/l.kcb" $n >"$out/lhost.log" 2>&1 || { cat "$out/lhost.log" >&2; fail "saxpy_host.exe failed"; }
grep -q "correct" "$out/lhost.log" || { cat "$out/lhost.log" >&2; fail "saxpy_host.exe's result is wrong"; }
chosen "$out/lhost.log" "kcrt.dll did not choose the variant tuned on Linux"
[ "$(wine "$kc_exe" info "$out/l.kcb" | grep -c '^  tuned')" = "$("$host_kc" info "$out/l.kcb" | grep -c '^  tuned')" ] ||
    fail "kc.exe info and kc info list different tuned rows"

say "3. the same bytes through kc.exe and kc"
variant=$(sed -n 's/^variant  *\([^ ]*\) .*/\1/p' "$out/lrun.log")
wine "$kc_exe" run "$out/l.kcb" saxpy n=$n a=0.5 --variant "$variant" --repeat 0 --seed 7 --out "y=$out/y.win" >/dev/null
"$host_kc" run "$out/l.kcb" saxpy n=$n a=0.5 --variant "$variant" --repeat 0 --seed 7 --out "y=$out/y.linux" >/dev/null
[ "$(stat -c %s "$out/y.win")" = $((n * 4)) ] || fail "kc.exe wrote $(stat -c %s "$out/y.win") bytes, not $((n * 4))"
cmp "$out/y.win" "$out/y.linux" || fail "kc.exe and kc computed different results"
say "4. a hung variant under Wine: a timeout, a restart, and the search finishes"
"$host_kc" build "$src/tests/tuner/device/kernels" --all-variants -o "$out/hang.kcb" --quiet
status=0
wine "$kc_exe" tune "$out/hang.kcb" --kernel slow --cache "$out/hang.db" --timeout 1s --timing-cap 0.1s \
    >"$out/hang.log" 2>&1 || status=$?
for want in "cannot be stopped from the host; recorded as a timeout" "restarting to go on from the cache (1 of" \
    "slow n=256: best S=1"; do
    grep -qF "$want" "$out/hang.log" || { cat "$out/hang.log" >&2; fail "kc.exe tune of a hung variant: no '$want'"; }
done
[ $status = 0 ] || { cat "$out/hang.log" >&2; fail "kc.exe tune of a hung variant exited with $status"; }
say "crossing.sh: all four hold (variant $variant)"
