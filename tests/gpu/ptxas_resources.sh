#!/bin/bash
# ptxas_resources.sh DIR — kc's reading of PTX resources (kc_binres, what
# `kc info` reports) against CUDA's ptxas, on a machine with the CUDA
# toolkit. DIR holds PTX files and kc.tsv: a line per file with kc's
# numbers, "FILE<TAB>KERNEL<TAB>STACK_BYTES<TAB>SHARED_BYTES". For each file
# prints ptxas -v's registers, spills, stack frame and smem beside kc's, and
# fails when kc's shared bytes are not ptxas's smem or kc's stack is not
# ptxas's stack frame (ptxas adds its own spills to the frame only when it
# spills, which the spill columns show).
set -u
dir=${1:?usage: ptxas_resources.sh DIR}
ptxas=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
[ -x "$ptxas" ] || { echo "ptxas_resources.sh: no ptxas"; exit 77; }
bad=0 n=0
printf '%-58s %6s %7s %7s %7s %7s %7s %7s\n' file regs spill_st stack kc_stack smem kc_smem verdict
while IFS=$'\t' read -r file kernel kc_stack kc_shared; do
    out=$("$ptxas" -arch=sm_90 -v "$dir/$file" -o /dev/null 2>&1)
    regs=$(grep -o 'Used [0-9]* registers' <<<"$out" | grep -o '[0-9]*' | head -1)
    stack=$(grep -o '[0-9]* bytes stack frame' <<<"$out" | grep -o '^[0-9]*' | head -1)
    spill=$(grep -o '[0-9]* bytes spill stores' <<<"$out" | grep -o '^[0-9]*' | head -1)
    smem=$(grep -o '[0-9]* bytes smem' <<<"$out" | grep -o '^[0-9]*' | head -1)
    verdict=ok
    if [ -z "$regs" ]; then
        verdict="ptxas failed"
    elif [ "${smem:-0}" != "$kc_shared" ] || { [ "${spill:-0}" = 0 ] && [ "${stack:-0}" != "$kc_stack" ]; }; then
        verdict=DIFFERS
    fi
    [ "$verdict" = ok ] || bad=$((bad + 1))
    n=$((n + 1))
    printf '%-58.58s %6s %7s %7s %7s %7s %7s %7s\n' "$file" "${regs:--}" "${spill:--}" "${stack:--}" "$kc_stack" \
        "${smem:--}" "$kc_shared" "$verdict"
done <"$dir/kc.tsv"
echo "ptxas_resources.sh: $n PTX files, $bad differ from ptxas"
[ "$bad" = 0 ]
