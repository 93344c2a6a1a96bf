#!/usr/bin/env bash
# The GPU run of issue 5 in one script, for a machine with an NVIDIA GPU (H100/H200), the CUDA
# toolkit, cmake, ninja and g++. Run from the repository root:
#
#   bash bench/run-gpu.sh OUTDIR [STEP...]    STEP: build test fuzz conformance sanitize racecheck
#                                             bench (default: all seven)
#   bash bench/run-gpu.sh --fetch-deps        on a Debian 12 machine with apt and a network: download
#                                             the build's Debian packages into .deps/ (git-ignored)
#                                             for a GPU machine that cannot reach a registry
#
# Steps (each bounded by `timeout`, each one's failure recorded and the next step still run; the
# steps after `build` build first when build-gpu/convcheck is missing, so they can run in separate
# calls):
#   build     configure build-gpu/ (Release, CUDA on) and build everything
#   test      ctest -L gpu: the GPU backend's and the cuDNN comparator's tests (skipped = no device)
#   fuzz      convcheck fuzz --backends gpu --cases 3000 (default seed): must exit 0
#   conformance  convcheck run --suite conformance --backends reference,gpu,cudnn (into fuzz.log)
#   sanitize  compute-sanitizer --tool memcheck on convcheck fuzz --backends gpu --cases 300
#   racecheck compute-sanitizer --tool racecheck (shared-memory hazards of the tiled kernels) on
#             convcheck fuzz --backends gpu --cases 60 (into sanitizer.log)
#   bench     convcheck bench --suite perf_gpu --backends gpu,cudnn --json, and its table
#
# Dependencies: with a working apt, scripts/install-deps.sh installs them. Otherwise Debian
# packages carried in .deps/ (--fetch-deps) are unpacked under /tmp/convcheck-deps and CMake is
# pointed at them; otherwise the script proceeds with what the machine has. cuDNN is taken from the
# CUDA toolkit when its headers are there, else from Python's nvidia-cudnn wheel when installed.
#
# OUTDIR receives at most 8 files (what the device tool returns): summary.txt (step, exit code,
# seconds), env.txt (date, GPU, driver, toolkit, cuDNN, `convcheck list`), build.log, ctest.log,
# fuzz.log (fuzz and conformance), sanitizer.log (memcheck and racecheck), bench.jsonl,
# bench-table.txt. bench/RESULTS-gpu.md says how to read
# them. Timeouts in seconds can be changed with TIMEOUT_BUILD, TIMEOUT_TEST, TIMEOUT_FUZZ,
# TIMEOUT_CONFORMANCE, TIMEOUT_SANITIZE, TIMEOUT_RACECHECK, TIMEOUT_BENCH; split the steps over
# calls (e.g. `build test`, then `fuzz conformance`, then `sanitize racecheck bench`) to stay within a
# 10-minute call.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

deb_packages=(libboost1.74-dev libboost-test1.74-dev libboost-test1.74.0
              libboost-program-options1.74-dev libboost-program-options1.74.0
              libeigen3-dev librapidcheck-dev nlohmann-json3-dev
              libsimdjson-dev libsimdjson14)

if [ "${1:-}" = "--fetch-deps" ]; then
  mkdir -p .deps
  if [ -d .git ] && ! grep -qx '/.deps/' .git/info/exclude 2>/dev/null; then
    echo '/.deps/' >>.git/info/exclude
  fi
  (cd .deps && apt-get download "${deb_packages[@]}") || exit 1
  du -sh .deps
  exit 0
fi

if [ $# -lt 1 ]; then
  echo "usage: bash bench/run-gpu.sh OUTDIR [build|test|fuzz|sanitize|bench]...  |  --fetch-deps" >&2
  exit 2
fi
out=$1
shift
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(build test fuzz conformance sanitize racecheck bench)
mkdir -p "$out"
out=$(cd "$out" && pwd)
summary="$out/summary.txt"
build="build-gpu"
jobs=$(nproc)

note() { echo "$*" | tee -a "$summary"; }

# --- environment ------------------------------------------------------------------------------------
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(uname -a)"
  echo "commit: $(git rev-parse HEAD 2>/dev/null || echo 'not a git checkout')"
  echo "--- nvidia-smi"
  nvidia-smi 2>&1 || echo "nvidia-smi failed"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem \
    --format=csv 2>&1 || true
  echo "--- toolchain"
  (command -v nvcc >/dev/null && nvcc --version) || /usr/local/cuda/bin/nvcc --version 2>&1 || true
  cmake --version 2>&1 | head -1
  ninja --version 2>&1 | sed 's/^/ninja /'
  g++ --version 2>&1 | head -1
} >"$out/env.txt" 2>&1

[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"

# --- dependencies -----------------------------------------------------------------------------------
cmake_args=(-DCMAKE_BUILD_TYPE=Release -DCONVCHECK_CUDA=ON -DCONVCHECK_WERROR=OFF)
if ls .deps/*.deb >/dev/null 2>&1; then
  echo "dependencies: the packages carried in .deps/" >>"$out/env.txt"
elif command -v apt-get >/dev/null && command -v dpkg-query >/dev/null &&
  [ ! -e /tmp/convcheck-apt-failed ]; then
  # A no-op when everything is installed; bounded, and not retried, where no registry answers.
  if ! timeout 180 bash scripts/install-deps.sh >>"$out/build.log" 2>&1; then
    touch /tmp/convcheck-apt-failed
    echo "install-deps failed or timed out (no registry?); going on with what is installed" \
      >>"$out/env.txt"
  fi
fi
if ls .deps/*.deb >/dev/null 2>&1; then
  deps=/tmp/convcheck-deps
  mkdir -p "$deps"
  for f in .deps/*.deb; do dpkg -x "$f" "$deps" 2>>"$out/env.txt" || true; done
  lib="$deps/usr/lib/x86_64-linux-gnu"
  cmake_args+=("-DCMAKE_PREFIX_PATH=$deps/usr;$lib/cmake;$deps/usr/share/eigen3/cmake")
  [ -d "$lib/cmake/Boost-1.74.0" ] && cmake_args+=("-DBoost_DIR=$lib/cmake/Boost-1.74.0")
  [ -d "$lib/cmake/rapidcheck" ] && cmake_args+=("-Drapidcheck_DIR=$lib/cmake/rapidcheck")
  [ -d "$deps/usr/share/eigen3/cmake" ] && cmake_args+=("-DEigen3_DIR=$deps/usr/share/eigen3/cmake")
  export LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  echo "carried packages unpacked under $deps: $(ls .deps | tr '\n' ' ')" >>"$out/env.txt"
fi
cudnn_at=""
for d in /usr/local/cuda/include /usr/include /usr/include/x86_64-linux-gnu; do
  [ -f "$d/cudnn.h" ] && cudnn_at="$d" && break
done
if [ -z "$cudnn_at" ] && command -v python3 >/dev/null; then
  wheel=$(python3 -c 'import nvidia.cudnn as m; print(list(m.__path__)[0])' 2>/dev/null || true)
  if [ -n "$wheel" ] && [ -f "$wheel/include/cudnn.h" ]; then
    so=$(ls "$wheel"/lib/libcudnn.so* 2>/dev/null | head -1)
    cmake_args+=("-DCUDNN_INCLUDE_DIR=$wheel/include" "-DCUDNN_LIBRARY=$so")
    export LD_LIBRARY_PATH="$wheel/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    cudnn_at="$wheel (Python wheel)"
  fi
fi
# cuDNN loads its sub-libraries (libcudnn_cnn, ...) at run time from the loader's path.
[ -d /usr/local/cuda/lib64 ] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64"
echo "cuDNN headers: ${cudnn_at:-not found (the cudnn comparator will be unavailable)}" >>"$out/env.txt"

# --- steps ------------------------------------------------------------------------------------------
# run_step NAME TIMEOUT LOG COMMAND...: runs, records exit code and seconds (124: timed out).
run_step() {
  local name=$1 limit=$2 log=$3
  shift 3
  local t0=$SECONDS
  echo "== $name: $*" >>"$log"
  timeout --kill-after=30 "$limit" "$@" >>"$log" 2>&1
  local rc=$?
  note "$name: exit $rc after $((SECONDS - t0)) s (limit $limit s)$([ $rc -eq 124 ] && echo ', TIMED OUT')"
  return $rc
}

step_build() {
  run_step configure 300 "$out/build.log" cmake -S . -B "$build" -G Ninja "${cmake_args[@]}" &&
    run_step build "${TIMEOUT_BUILD:-420}" "$out/build.log" cmake --build "$build" -j "$jobs"
  local rc=$?
  grep -E "convcheck: CUDA toolkit" "$out/build.log" | tail -1 >>"$out/env.txt"
  echo "warnings in build.log: $(grep -c 'warning' "$out/build.log")" >>"$out/env.txt"
  if [ -x "$build/convcheck" ]; then
    echo "--- convcheck list" >>"$out/env.txt"
    "$build/convcheck" list >>"$out/env.txt" 2>&1
  fi
  return $rc
}

ensure_built() {
  [ -x "$build/convcheck" ] || step_build
}

for step in "${steps[@]}"; do
  case "$step" in
    build)
      step_build
      ;;
    test)
      ensure_built
      run_step "ctest -L gpu" "${TIMEOUT_TEST:-240}" "$out/ctest.log" \
        ctest --test-dir "$build" -L gpu --output-on-failure -j 4
      ;;
    fuzz)
      ensure_built
      rm -rf /tmp/convcheck-fuzz
      run_step "fuzz 3000" "${TIMEOUT_FUZZ:-360}" "$out/fuzz.log" \
        "$build/convcheck" fuzz --backends gpu --cases 3000 --out /tmp/convcheck-fuzz
      if [ -s /tmp/convcheck-fuzz/failures.jsonl ]; then
        echo "--- failures.jsonl" >>"$out/fuzz.log"
        cat /tmp/convcheck-fuzz/failures.jsonl >>"$out/fuzz.log"
      fi
      ;;
    conformance)
      ensure_built
      rm -rf /tmp/convcheck-conformance
      run_step "run conformance reference,gpu,cudnn" "${TIMEOUT_CONFORMANCE:-480}" "$out/fuzz.log" \
        "$build/convcheck" run --suite conformance --backends reference,gpu,cudnn \
        --out /tmp/convcheck-conformance
      if [ -f /tmp/convcheck-conformance/results.jsonl ] && command -v python3 >/dev/null; then
        echo "--- conformance failures (backend, check, repro)" >>"$out/fuzz.log"
        python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["verdict"] in ("fail", "crashed", "timeout"):
        print(r["backend"], r["verdict"], r["check"], r["repro"])' \
          /tmp/convcheck-conformance/results.jsonl >>"$out/fuzz.log" 2>&1
      fi
      ;;
    racecheck)
      ensure_built
      sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
      run_step "compute-sanitizer racecheck, fuzz 60" "${TIMEOUT_RACECHECK:-300}" \
        "$out/sanitizer.log" "$sanitizer" --tool racecheck \
        --error-exitcode 99 --print-limit 20 "$build/convcheck" fuzz --backends gpu --cases 60
      grep -E "RACECHECK SUMMARY|ERROR SUMMARY" "$out/sanitizer.log" | tail -1 | sed 's/^/  /' |
        tee -a "$summary"
      ;;
    sanitize)
      ensure_built
      sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
      run_step "compute-sanitizer memcheck, fuzz 300" "${TIMEOUT_SANITIZE:-240}" \
        "$out/sanitizer.log" "$sanitizer" --tool memcheck --error-exitcode 99 --print-limit 20 \
        "$build/convcheck" fuzz --backends gpu --cases 300
      grep -E "ERROR SUMMARY" "$out/sanitizer.log" | tail -1 | sed 's/^/  /' | tee -a "$summary"
      ;;
    bench)
      ensure_built
      t0=$SECONDS
      timeout --kill-after=30 "${TIMEOUT_BENCH:-360}" "$build/convcheck" bench --suite perf_gpu \
        --backends gpu,cudnn --json >"$out/bench.jsonl" 2>"$out/bench-table.txt"
      rc=$?
      note "bench perf_gpu gpu,cudnn: exit $rc after $((SECONDS - t0)) s$([ $rc -eq 124 ] && echo ', TIMED OUT')"
      if [ $rc -eq 3 ]; then  # a backend is unavailable (the reason is in bench-table.txt)
        t0=$SECONDS
        timeout --kill-after=30 "${TIMEOUT_BENCH:-360}" "$build/convcheck" bench --suite perf_gpu \
          --backends gpu --json >"$out/bench.jsonl" 2>>"$out/bench-table.txt"
        rc=$?
        note "bench perf_gpu gpu alone: exit $rc after $((SECONDS - t0)) s"
      fi
      if command -v python3 >/dev/null; then
        python3 bench/gpu_table.py "$out/bench.jsonl" >>"$out/bench-table.txt" 2>&1
      fi
      ;;
    *)
      note "unknown step '$step' (build test fuzz sanitize bench)"
      ;;
  esac
done
note "done: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
