#!/usr/bin/env bash
# The README's CPU performance table, measured: `convcheck bench --suite perf_cpu` RUNS times with
# each backend's widest ISA on 1 and 2 threads interleaved in the same rounds (the 1 -> 2 thread
# column: the same spell of a shared machine for both), and RUNS times with both capped to AVX2
# (CONVCHECK_OPTIMIZED_ISA=avx2, ONEDNN_MAX_CPU_ISA=AVX2) on 2 threads; then the Markdown table
# (bench/cpu_table.py): medians over the runs of each run's paired ratio, the range in brackets,
# each layer's ceiling, every ISA read from the records themselves (a cap that did not take effect
# fails the script).
#   bash bench/cpu-table.sh [RUNS] [OUT-DIR]      (defaults: 3, build/cpu-table)
# On a CPU without AVX-512 the widest ISA is AVX2 already: the two sets of columns then measure
# the same thing, and the table says which ISA each column ran.
set -euo pipefail
cd "$(dirname "$0")/.."
# The "widest ISA" runs must not inherit a cap from the caller's environment.
unset CONVCHECK_OPTIMIZED_ISA ONEDNN_MAX_CPU_ISA
runs=${1:-3}
out=${2:-build/cpu-table}
mkdir -p "$out"
# A table is made of this run's records only.
rm -f "$out"/native-*.jsonl "$out"/avx2-*.jsonl "$out"/native-threads1-*.jsonl
cc=build/convcheck
bench() { "$cc" bench --suite perf_cpu --backends optimized,onednn --json "$@"; }
for i in $(seq 1 "$runs"); do
  echo "cpu-table: run $i of $runs (widest ISA, 1 and 2 threads)" >&2
  bench --threads 1,2 >"$out/native-$i.jsonl"
  echo "cpu-table: run $i of $runs (AVX2)" >&2
  CONVCHECK_OPTIMIZED_ISA=avx2 ONEDNN_MAX_CPU_ISA=AVX2 bench --threads 2 >"$out/avx2-$i.jsonl"
done
python3 bench/cpu_table.py "$out" | tee "$out/table.md"
