#!/usr/bin/env bash
# Validates TensorFlow's CPU convolution kernels end to end with the convcheck Python package, in
# process (issues 7, 17): tf_tests and every third problem of conformance, two fills each. Not
# part of the test run.
#
#   bash examples/tensorflow/run.sh                 # installs TF and the package once
#   VENV=/path/to/venv OUT=/tmp/tf bash examples/tensorflow/run.sh --conformance-every 1
#
# TensorFlow (tensorflow-cpu from PyPI, a large download) goes into $VENV (default
# ~/.cache/convcheck/tf-venv). Results: $OUT/results.jsonl, summary.json, summary.md (default
# build/validate-tensorflow); REINSTALL=1 reinstalls the package. TF_ENABLE_ONEDNN_OPTS is passed through (TF's oneDNN kernels).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
VENV=${VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/convcheck/tf-venv}
OUT=${OUT:-$BUILD/validate-tensorflow}
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import tensorflow' 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q tensorflow-cpu numpy
fi
# The package from this tree (README "From Python"); reinstalled when the tree is newer.
if ! "$VENV/bin/python" -c 'import convcheck' 2>/dev/null || [ -n "${REINSTALL:-}" ]; then
  "$VENV/bin/pip" install -q "$ROOT"
fi
cd "$ROOT"
exec "$VENV/bin/python" examples/tensorflow/validate_tf.py --suites "$ROOT/suites" --out "$OUT" "$@"
