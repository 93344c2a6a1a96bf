#!/usr/bin/env bash
# The README's eigen table, measured: `convcheck bench --suite perf_cpu` once with optimized,
# oneDNN and eigen side by side (each at its widest ISA: eigen's ISA module, comparators/eigen.cpp)
# and once with eigen capped to its baseline build (CONVCHECK_EIGEN_ISA=baseline, the SSE2 of a
# build without -march), then the Markdown table (bench/eigen_table.py).
#   bash bench/eigen-table.sh [OUT-DIR] [THREADS]      (defaults: build/eigen-table, 2)
set -euo pipefail
cd "$(dirname "$0")/.."
unset CONVCHECK_OPTIMIZED_ISA ONEDNN_MAX_CPU_ISA CONVCHECK_EIGEN_ISA
out=${1:-build/eigen-table}
threads=${2:-2}
mkdir -p "$out"
cc=build/convcheck
echo "eigen-table: optimized, onednn, eigen (widest ISA)" >&2
"$cc" bench --suite perf_cpu --backends optimized,onednn,eigen --threads "$threads" --json >"$out/widest.jsonl"
echo "eigen-table: eigen, baseline build" >&2
CONVCHECK_EIGEN_ISA=baseline "$cc" bench --suite perf_cpu --backends eigen --threads "$threads" --json >"$out/baseline.jsonl"
python3 bench/eigen_table.py "$out/widest.jsonl" "$out/baseline.jsonl" | tee "$out/table.md"
