#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, clang, -DCONVCHECK_FUZZ=ON in build-fuzz), replays their
# seed corpora and regression inputs (ctest -L fuzz), then fuzzes each target for FUZZ_SECONDS
# (default 60), one after the other. Exit status non-zero when any target has a finding: its input
# is saved under build-fuzz/findings/<target>/ (crash-*, timeout-*, oom-*); reproduce with
#   build-fuzz/fuzz/fuzz_<target> build-fuzz/findings/<target>/crash-...
# and, once fixed, keep the input as a regression: fuzz/regressions/<target>/<name>.
#   bash scripts/fuzz-ci.sh                      # CI: 60 s per target
#   FUZZ_SECONDS=600 bash scripts/fuzz-ci.sh     # the 10-minute runs (fuzz/README.md)
#   FUZZ_TARGETS="npy suite" bash scripts/fuzz-ci.sh
# Run scripts/install-deps.sh first (clang, libclang-rt-14-dev).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
targets=${FUZZ_TARGETS:-descriptor npy suite results}
jobs=$(nproc)
. scripts/ccache-env.sh

CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCONVCHECK_FUZZ=ON -DCONVCHECK_CUDA=OFF \
  -DCONVCHECK_ONEDNN=OFF -DCONVCHECK_EIGEN_MODULES=OFF >/dev/null
built=()
for t in $targets; do
  # A target whose library is not in this tree (e.g. results before reports/) is skipped, said so.
  if ninja -C build-fuzz -t query "fuzz_$t" >/dev/null 2>&1; then
    built+=("$t")
  else
    echo "fuzz-ci: no target fuzz_$t in this tree; skipped"
  fi
done
[ ${#built[@]} -gt 0 ] || { echo "fuzz-ci: nothing to fuzz"; exit 1; }
cmake --build build-fuzz -j "$jobs" --target "${built[@]/#/fuzz_}"
ctest --test-dir build-fuzz --output-on-failure -L fuzz

# One target per core at a time (each libFuzzer run is one process on one core): the same seconds
# of fuzzing per target in half the wall time on CI's 2 cores. Each writes its own log; the
# verdicts are read in target order once all have finished.
fuzz_one() {
  local t=$1
  local work=build-fuzz/corpus/$t  # what libFuzzer adds; the repository's corpus stays as it is
  local findings=build-fuzz/findings/$t
  mkdir -p "$work" "$findings"
  local seeds=(fuzz/corpus/"$t")
  [ -d fuzz/regressions/"$t" ] && seeds+=(fuzz/regressions/"$t")
  # -timeout: one input taking 10 s is a finding (a hang); -rss_limit_mb: so is 2 GiB of memory.
  local rc=0
  build-fuzz/fuzz/fuzz_"$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$findings/" "$work" "${seeds[@]}" \
    >build-fuzz/findings/$t.log 2>&1 || rc=$?
  echo "$rc" >build-fuzz/findings/$t.rc
}
status=0
pending=()
for t in "${built[@]}"; do
  echo "fuzz-ci: fuzz_$t for ${seconds} s"
  mkdir -p build-fuzz/findings
  rm -f build-fuzz/findings/$t.rc
  fuzz_one "$t" &
  pending+=($!)
  if [ ${#pending[@]} -ge "$jobs" ]; then
    wait "${pending[0]}" || true
    pending=("${pending[@]:1}")
  fi
done
wait || true
for t in "${built[@]}"; do
  log=build-fuzz/findings/$t.log
  if [ "$(cat build-fuzz/findings/$t.rc 2>/dev/null)" = 0 ]; then
    grep -E '^(stat::number_of_executed_units|stat::average_exec_per_sec)|DONE' "$log" |
      sed "s/^/fuzz-ci: $t: /"
  else
    status=1
    echo "fuzz-ci: fuzz_$t FOUND A PROBLEM (log: $log, inputs: build-fuzz/findings/$t/):"
    grep -E -A8 'FINDING|ERROR: |SUMMARY' "$log" | head -40
  fi
done
exit $status
