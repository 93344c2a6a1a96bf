#!/usr/bin/env bash
# Validates TensorFlow's CPU convolution kernels end to end with `convcheck verify` (issue 7):
# tf_tests and every third problem of conformance, two fills each. Not part of the test run.
#
#   bash examples/tensorflow/run.sh                 # builds convcheck if needed, installs TF once
#   VENV=/path/to/venv OUT=/tmp/tf bash examples/tensorflow/run.sh --conformance-every 1
#
# TensorFlow (tensorflow-cpu from PyPI, a large download) goes into $VENV (default
# ~/.cache/convcheck/tf-venv). Results: $OUT/results.jsonl, summary.json, summary.md (default
# build/validate-tensorflow). TF_ENABLE_ONEDNN_OPTS is passed through (TF's oneDNN kernels).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
VENV=${VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/convcheck/tf-venv}
OUT=${OUT:-$BUILD/validate-tensorflow}
if [ ! -x "$BUILD/convcheck" ]; then
  cmake -S "$ROOT" -B "$BUILD" -G Ninja >/dev/null && cmake --build "$BUILD" --target convcheck
fi
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import tensorflow' 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q tensorflow-cpu numpy
fi
cd "$ROOT"
exec "$VENV/bin/python" examples/tensorflow/validate_tf.py --convcheck "$BUILD/convcheck" \
  --suites "$ROOT/suites" --out "$OUT" "$@"
