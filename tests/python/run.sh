#!/usr/bin/env bash
# run.sh BUILD_DIR — the kcrt Python package as a user gets it: a fresh
# virtualenv (system site packages allowed, for numpy and pytest),
# `pip install ./python` with no index (offline), then its pytest suite
# (python/tests) from the installed package, which finds this build's
# libkcrt by itself (kcrt/_where.py). Exit 77 when there is no device.
set -euo pipefail
build=$(realpath "$1")
src=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /tmp/kc-python.XXXXXX)
trap 'rm -rf "$work"' EXIT
python=/usr/bin/python3 # Debian's, with python3-numpy and python3-pytest
"$python" -m venv --system-site-packages "$work/venv"
KCRT_BUILD_TREE=$build "$work/venv/bin/pip" install --no-index --no-cache-dir --quiet "$src/python"
cd "$work" # not the source tree: the installed package is what is tested
unset KCRT_LIBRARY
export KCRT_TEST_BUNDLE=$build/tests/runtime/rt_kernels.kcb KCRT_TEST_DEFAULT_BUNDLE=$build/tests/runtime/rt_default.kcb
export KCRT_TEST_RVC_BUNDLE=$build/tests/python/rvc.kcb
"$work/venv/bin/python" -c 'import kcrt, sys; print("kcrt", kcrt.__version__, "from", kcrt.__file__, "on", kcrt.library_path)'
rc=0
"$work/venv/bin/python" -m pytest -q -rs -p no:cacheprovider "$src/python/tests" || rc=$?
[ "$rc" = 5 ] && exit 77 # nothing ran
exit "$rc"
