#!/usr/bin/env bash
# ThreadSanitizer run of the OpenMP backends (issue 8): builds build-tsan with clang,
# -fsanitize=thread and LLVM's OpenMP runtime (libomp), without CUDA and oneDNN, and runs with 4
# OpenMP threads on this machine's cores:
#   - tests/test_optimized and the testbed's optimized suite (tests/test_backends
#     --run_test=optimized: every compiled ISA path of the optimized backend against the
#     reference),
#   - `convcheck fuzz --backends optimized,reference --cases 300` (the oracle runs the reference
#     too: both OpenMP backends, on generated problems of every op, dtype, padding and format),
#   - `convcheck run --suite smoke --backends optimized,reference` (medium-sized problems).
# Any TSan report fails the run (halt_on_error=1).
#
# Why clang and libomp rather than gcc and libgomp: libgomp is not built with TSan, so its
# barriers and task queues are invisible to TSan, which then reports the threads' hand-offs as
# races (g++ -fopenmp -fsanitize=thread gives 5 reports on a race-free two-loop program). LLVM's libomp loads Archer (libarcher.so, in
# libomp-14-dev) by itself when the program is built with TSan; Archer tells TSan about OpenMP's
# synchronisation (barriers, task dependences, locks) through the OMPT interface. What is left are
# libomp's own internals, which are not instrumented: TSAN_OPTIONS=ignore_noninstrumented_modules=1
# ignores races whose accesses all lie in such modules, and nothing else. No suppressions file.
# The script first proves the setup can see a real race: a planted one must be reported.
#   bash scripts/tsan.sh
# Run scripts/install-deps.sh first (clang, libomp-14-dev).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

# No eigen ISA modules, optimized/'s kernels only for the ISAs this CPU runs, and line tables only;
# our assertions on and Eigen's off (as the sanitizer build in scripts/test.sh, which says why).
. scripts/cpu-isa.sh  # opt_isa
. scripts/ccache-env.sh
CC=clang CXX=clang++ cmake -S . -B build-tsan -G Ninja -DCONVCHECK_CUDA=OFF -DCONVCHECK_ONEDNN=OFF \
  -DCONVCHECK_OPTIMIZED_ISA="$opt_isa" \
  -DCONVCHECK_EIGEN_MODULES=OFF -DCONVCHECK_EIGEN_KERNELS_FLAGS=-O0 \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DEIGEN_NO_DEBUG" \
  -DCMAKE_CXX_FLAGS="-fsanitize=thread" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=thread" \
  >/dev/null
cmake --build build-tsan -j "$jobs" --target convcheck test_optimized test_backends

export TSAN_OPTIONS="ignore_noninstrumented_modules=1 halt_on_error=1 second_deadlock_stack=1"
export OMP_NUM_THREADS=4
# Four threads on CI's two cores: waiting threads sleep rather than spin (libomp's barriers are the
# same synchronisation either way, and Archer sees them through OMPT). test_optimized under TSan
# 357 -> 303 s on a 2-vCPU Zen 1 guest (2026-12-04).
export OMP_WAIT_POLICY=passive
log=build-tsan/tsan.log
: >"$log"

# 1. The setup sees races: a planted one in an OpenMP loop must be reported.
cat >build-tsan/race_probe.cpp <<'EOF'
#include <cstdio>
int main() {
  long sum = 0;
#pragma omp parallel for
  for (int i = 0; i < 100000; ++i) sum += i;  // a data race, on purpose
  std::printf("%ld\n", sum);
}
EOF
clang++ -fopenmp=libomp -fsanitize=thread -g -O1 build-tsan/race_probe.cpp -o build-tsan/race_probe
if ARCHER_OPTIONS=verbose=1 build-tsan/race_probe >build-tsan/race_probe.log 2>&1; then
  echo "tsan: the planted race was not reported: TSan cannot be trusted here"; exit 1
fi
grep -q "WARNING: ThreadSanitizer: data race" build-tsan/race_probe.log ||
  { echo "tsan: the planted race was not reported as a data race"; cat build-tsan/race_probe.log; exit 1; }
grep -q "Archer detected OpenMP application with TSan" build-tsan/race_probe.log ||
  { echo "tsan: libomp did not load Archer (libarcher.so, libomp-14-dev)"; exit 1; }
echo "tsan: a planted race is reported, Archer is loaded"

# 2. The OpenMP backends, clean.
run() {
  echo "tsan: $* (at +${SECONDS}s)"
  if ! "$@" >>"$log" 2>&1; then
    echo "tsan: FAILED: $*"; grep -E -A30 "WARNING: ThreadSanitizer" "$log" | head -60; exit 1
  fi
}
run build-tsan/tests/test_optimized --report_level=short --log_level=warning
run build-tsan/tests/test_backends --run_test=optimized --report_level=short --log_level=warning
run build-tsan/convcheck fuzz --backends optimized,reference --cases 300 --seed 1
rm -rf build-tsan/smoke-run
run build-tsan/convcheck run --suite smoke --backends optimized,reference --out build-tsan/smoke-run
if grep -q "ThreadSanitizer" "$log"; then
  echo "tsan: ThreadSanitizer reported:"; grep -A30 "ThreadSanitizer" "$log" | head -60; exit 1
fi
echo "tsan: no data races (OMP_NUM_THREADS=4; log: $log)"
