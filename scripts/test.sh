#!/usr/bin/env bash
# The test command (README, .ci/run): installs what the project needs, builds with
# -Wall -Wextra -Werror and runs every CTest suite; then builds the AddressSanitizer +
# UndefinedBehaviorSanitizer configuration (GPU parts off) and runs the suites again under it (all
# but `slow`, and `python`, `slurm` and `isa`, which are about the main build); then the
# ThreadSanitizer run of the OpenMP backends (scripts/tsan.sh) and 60 seconds of each fuzz target
# (scripts/fuzz-ci.sh). Skip those two with CONVCHECK_QUICK=1.
# Choose suites with CTEST_ARGS, e.g. CTEST_ARGS='-L unit' (labels: unit, core, reference, cli,
# fuzz, isa: the CPU-model matrix under qemu-user and the GPU architectures in the fatbinary;
# python: the Python package installed into build/python-venv and its pytest suite).
# The `large` label (suites/large.txt: 2^24 elements, 2^31 bytes) is left out:
# `CONVCHECK_LARGE=1 ctest --test-dir build -L large`; so is `long` (mutation_conformance: every
# mutant through the whole conformance suite, ~10 minutes): `CONVCHECK_LONG=1 ctest --test-dir build -L long`.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each stage's start, with the seconds since this script began: CI stops at 90 minutes, and its log
# is where a slow stage shows.
stage() { echo "test.sh: $1 (at +${SECONDS}s, $(date -u +%H:%M:%S))"; }
stage "install the dependencies"
bash scripts/install-deps.sh
jobs=$(nproc)
# ctest -j runs suites beside each other, most of them OpenMP programs with a team per core: with
# libgomp's default (spin before sleeping) each team's waiting threads spin on the cores the other
# suite needs. Two test_backends --run_test=optimized side by side on a 2-vCPU Zen 1 guest
# (2026-12-04): 119 s each, 10 s with passive waits (7-8 s alone, either way). The waits are the
# same synchronisation either way; a user's runs keep their own setting.
export OMP_WAIT_POLICY=passive
. scripts/ccache-env.sh  # compiles through ccache (the reasons and the figures are there)
# (What the cache did is printed at the end: its counters start from zero here; builds beside
# this one, if any, count too.)
if [ -n "${CONVCHECK_CCACHE_ON:-}" ]; then ccache --zero-stats >/dev/null; fi

stage "build"
# The eigen comparator's ISA modules this CPU runs (each copy of eigen_kernels.cpp is 5-10 minutes
# of one core here; a module the CPU cannot run is never loaded, so its tests would skip): both on
# a CPU with AVX-512, avx2 on one without (CI's Zen 3). A user's build makes both (the default).
. scripts/cpu-isa.sh  # eigen_modules, and asan_opt_isa for the sanitizer build below
cmake -S . -B build -G Ninja -DCONVCHECK_WERROR=ON -DCONVCHECK_EIGEN_MODULES="$eigen_modules"
cmake --build build -j "$jobs"
stage "every CTest suite"
ctest --test-dir build --output-on-failure -j "$jobs" -LE 'large|long' ${CTEST_ARGS:-} \
  --output-junit ctest-junit.xml
# (ctest's summary names a skipped test, not why: scripts/ctest-skips.py prints each one's reason.)
python3 scripts/ctest-skips.py build/ctest-junit.xml || true  # a report only

stage "AddressSanitizer + UBSan build"
# Without the eigen ISA modules (3 minutes of compile each; the same source as the baseline
# eigen_kernels.cpp the sanitizers do cover): eigen runs its baseline build here.
# Minimal debug info (-g1: functions and line tables, no variables or types) is enough for the
# sanitizers' reports (function, file and line, inlined frames), and the build's longest compile,
# comparators/eigen_kernels.cpp, takes 9.7 minutes with it against 14.3 with -g (2-vCPU CI
# machine, 2026-11-28; test_optimized.cpp 26 s against 37). On a 2-vCPU Zen 3 guest (2026-12-01)
# it took over 21 minutes at -O2, the ASan build's critical path, and put CI past its 90: it is
# compiled at -O1 (CONVCHECK_EIGEN_KERNELS_FLAGS, comparators/CMakeLists.txt), which still
# inlines Eigen's expression templates; the eigen suites under the sanitizers are a few seconds.
# optimized/'s kernels are compiled only for the ISAs this CPU runs, and without AVX-512 the
# AVX-512 kernels emulated through SIMDe (asan_opt_isa, scripts/cpu-isa.sh): until 2026-12-07 this
# build left them out there (the file, 3 minutes of one core, would never run), and no CI stage on
# such a CPU ran them at all. Before that cut and
# the `isa` label's below, a clean-clone CI took 85 minutes of its 90 on the Zen 3 guest
# (2026-12-02: build 13 min, every suite 18, ASan build 24, its suites 14, TSan 12, fuzz 4).
# Tried and dropped: the test programs at -O1 saved 430 s of this build's compile and cost 460 s
# of its suites' time (a run of mine beside them for two minutes is part of that; test_gpu_kernels
# 289 -> 512 s: the GPU kernels' host emulation is compiled into the test).
# On a 2-vCPU Zen 1 guest (2026-12-04) the whole CI took 88 of its 90 minutes (build 12.4 min,
# suites 23.0, ASan build 24.7, its suites 12.1, TSan 11.9, fuzz 3.7). eigen_kernels.cpp was 624 s
# of that ASan build; UBSan's checks are most of it (256 s with ASan alone, 112 s with neither):
# the file keeps AddressSanitizer and drops UBSan (-fno-sanitize=undefined), whose checks there
# fall on Eigen's own template arithmetic; eigen.cpp, the comparator's code around it, keeps both.
# Assertions are on here (no -DNDEBUG; the main build above is Release): the optimized backend's
# asserts state its address invariants (a tile's C inside the filter, a packed slot inside its
# buffer, a segment's re-derived offset), which a release build never checks; with -DNDEBUG, as
# until 2026-12-06, no CI stage ran them. Eigen's own assertions stay off (-DEIGEN_NO_DEBUG, in
# every file, so that the inline Eigen code eigen.cpp and eigen_kernels.cpp share is one
# definition): index checks inside its expression templates, compile and run time for code that
# is not ours.
cmake -S . -B build-asan -G Ninja -DCONVCHECK_WERROR=ON -DCONVCHECK_SANITIZE=ON \
  -DCONVCHECK_CUDA=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCONVCHECK_EIGEN_MODULES=OFF \
  -DCONVCHECK_EIGEN_KERNELS_FLAGS="-O1;-fno-sanitize=undefined" -DCONVCHECK_OPTIMIZED_ISA="$asan_opt_isa" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DEIGEN_NO_DEBUG"
cmake --build build-asan -j "$jobs"
# Under the sanitizers everything but the `slow` (and `large`) label (the suite runs repeat the same
# code paths), `slurm` (the recipe's scripts and the cluster, run once above), `python` (its
# package is built by pip, not with the sanitizers; it ran above) and `isa` (isa_symbols reads the
# binaries' instructions, which is about the main build's binaries, not these: 229 s of test time
# under ASan on the Zen 3 guest; the CPU-model matrix is not built with the sanitizers).
stage "the suites under ASan + UBSan"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j "$jobs" -LE 'slow|large|long|slurm|python|isa' ${CTEST_ARGS:-} \
  --output-junit ctest-junit.xml
python3 scripts/ctest-skips.py build-asan/ctest-junit.xml || true

if [ -z "${CONVCHECK_QUICK:-}" ]; then
  stage "ThreadSanitizer (scripts/tsan.sh)"
  bash scripts/tsan.sh
  stage "fuzz targets (scripts/fuzz-ci.sh)"
  FUZZ_SECONDS=60 bash scripts/fuzz-ci.sh
fi
if [ -n "${CONVCHECK_CCACHE_ON:-}" ]; then ccache --show-stats; fi
stage "done"
