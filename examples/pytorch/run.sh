#!/usr/bin/env bash
# Validates PyTorch's CPU convolution kernels on TF's semantics with the convcheck Python package,
# in process (issues 7, 17): tf_tests and every third problem of conformance, two fills each. Not
# part of the test run.
#
#   bash examples/pytorch/run.sh            # Debian's python3-torch (apt-get install python3-torch)
#   OUT=/tmp/pt bash examples/pytorch/run.sh --conformance-every 1
#
# Uses /usr/bin/python3 (where Debian installs torch) unless PYTHON is set, through a venv that
# sees its packages ($VENV, default build/pytorch-venv, --system-site-packages) and holds the
# convcheck package from this tree (REINSTALL=1 reinstalls it). Results: $OUT/results.jsonl,
# summary.json, summary.md (default build/validate-pytorch).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
PYTHON=${PYTHON:-/usr/bin/python3}
OUT=${OUT:-$BUILD/validate-pytorch}
VENV=${VENV:-$BUILD/pytorch-venv}
if ! "$PYTHON" -c 'import torch, numpy' 2>/dev/null; then
  echo "run.sh: $PYTHON cannot import torch; install it: apt-get install -y python3-torch" >&2
  exit 2
fi
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv --system-site-packages "$VENV"
if ! "$VENV/bin/python" -c 'import convcheck' 2>/dev/null || [ -n "${REINSTALL:-}" ]; then
  "$VENV/bin/pip" install -q "$ROOT"
fi
cd "$ROOT"
exec "$VENV/bin/python" examples/pytorch/validate_torch.py --suites "$ROOT/suites" --out "$OUT" "$@"
