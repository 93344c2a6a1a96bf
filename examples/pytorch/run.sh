#!/usr/bin/env bash
# Validates PyTorch's CPU convolution kernels on TF's semantics with `convcheck verify` (issue 7):
# tf_tests and every third problem of conformance, two fills each. Not part of the test run.
#
#   bash examples/pytorch/run.sh            # Debian's python3-torch (apt-get install python3-torch)
#   OUT=/tmp/pt bash examples/pytorch/run.sh --conformance-every 1
#
# Uses /usr/bin/python3 (where Debian installs torch) unless PYTHON is set. Results:
# $OUT/results.jsonl, summary.json, summary.md (default build/validate-pytorch).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
PYTHON=${PYTHON:-/usr/bin/python3}
OUT=${OUT:-$BUILD/validate-pytorch}
if [ ! -x "$BUILD/convcheck" ]; then
  cmake -S "$ROOT" -B "$BUILD" -G Ninja >/dev/null && cmake --build "$BUILD" --target convcheck
fi
if ! "$PYTHON" -c 'import torch, numpy' 2>/dev/null; then
  echo "run.sh: $PYTHON cannot import torch; install it: apt-get install -y python3-torch" >&2
  exit 2
fi
cd "$ROOT"
exec "$PYTHON" examples/pytorch/validate_torch.py --convcheck "$BUILD/convcheck" \
  --suites "$ROOT/suites" --out "$OUT" "$@"
