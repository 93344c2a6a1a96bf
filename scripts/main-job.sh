#!/usr/bin/env bash
# The main job (README): installs what it needs, builds, and runs the conformance suite on every
# available backend, writing the four report files (results.jsonl, summary.json, junit.xml,
# report.html) into the directory given as the first argument (default build/conformance).
# An unfinished run there (interrupted or killed) is continued with --resume; a finished one is
# replaced (the run step is scripts/conformance-run.sh).
#   bash scripts/main-job.sh [OUT-DIR]
# Exit status: 0 when the report was written, whatever it found (its findings are the report:
# `convcheck run` itself exits 1 on a failing pair, for CI gating); the run's own code otherwise
# (2 bad input, 3 a backend unavailable, 130/143 interrupted: rerun to continue).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
. scripts/ccache-env.sh
cmake -S . -B build -G Ninja >/dev/null
cmake --build build -j "$(nproc)" --target convcheck
bash scripts/conformance-run.sh build/convcheck "${1:-build/conformance}"
