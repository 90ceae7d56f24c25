#!/usr/bin/env bash
# Records whole tuning spaces of the shipped kernels on this machine's
# default device (lavapipe in kc's CI machines) in Kernel Tuner's
# cache-file format, for `kc tune --replay`: every valid variant measured
# (exhaustive), then exported with `kc cache export --kernel-tuner`.
#
#   tests/tuner/data/replay/lavapipe/record.sh [KC] [OUTDIR]
#
# About 20 minutes on two cores. The lavapipe tables in docs/tuning.md come from
# the files this wrote.
set -euo pipefail
kc=${1:-build/tools/kc}
out=${2:-tests/tuner/data/replay/lavapipe}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
$kc build kernels -o "$work/rvc.kcb" --quiet
record() { # NAME KERNEL SHAPE
  $kc tune "$work/rvc.kcb" --cache "$work/rec.db" --kernel "$2" --shape "$3" --strategy exhaustive \
    --budget all --timing-cap 0.2s --input-seed 1 --quiet
  $kc cache export --kernel-tuner "$work/$1.json" --cache "$work/rec.db" --kernel "$2" --shape "$3"
  gzip -9 -n -c "$work/$1.json" > "$out/$1.json.gz"
  echo "wrote $out/$1.json.gz"
}
record gemv_lavapipe gemv N=1024,K=1024
record gemm_lavapipe gemm M=140,N=768,K=768,act=0
record conv1d_lavapipe conv1d cin=256,cout=256,t_in=1000,ks=3,dil=1,pad=1
