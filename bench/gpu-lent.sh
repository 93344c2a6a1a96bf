#!/usr/bin/env bash
# The GPU checks in one call of this workplace's device tool (15 minutes of device time per task,
# 10 per call): build here, carry the binaries, run everything there at once. bench/run-gpu.sh
# does the same steps one after the other and builds on the GPU machine, which needs its Debian
# packages carried and most of a call's time. History: bench/RESULTS-gpu.md's H200 runs 1-3 were
# made by ad-hoc first versions of this script (the same commands, grouped differently); this
# script ran there as `run 60 150` (2026-11-27), whose 60 s cut the bench short (it needs about
# 55 s alone) and whose 150 s cut the 3000-case fuzz runs short beside the other checks, and as
# `run 100 270` (2026-11-28, H200): everything finished, the checks in 263 s, 352 s in all; and as
# `run 75 140` (2026-11-28, H100, the device time left): the bench finished, the fuzz runs were
# cut at 1800 of 3000 cases.
#
#   bash bench/gpu-lent.sh pack [ARCHS]        here (default ARCHS 90: H100/H200): configure and
#                                              build build-gpu/ (CUDA on, oneDNN off: its 40 MB
#                                              library would not fit the 64 MiB a call carries),
#                                              then copy the binaries, CTest files and the Boost,
#                                              simdjson and OpenMP libraries into .devrun/
#                                              (git-ignored through .git/info/exclude)
#   bash bench/gpu-lent.sh run BENCH_S CHECK_S on the GPU machine, from the repository root, with
#                                              carry [".devrun"]; results in $OUT/results.tgz
#
# `run` times perf_gpu (gpu against cudnn) alone on the GPU for at most BENCH_S seconds, then runs
# these side by side for at most CHECK_S seconds each: ctest -L gpu (the host-only GPU tests are
# left to CI), fuzz --backends gpu,gpu-tf32 --cases 3000 on seeds 1-3, the conformance suite on
# reference,gpu,cudnn, and compute-sanitizer memcheck and racecheck over fuzz runs of CHECK_S - 60
# seconds. CTest's files name build-gpu's absolute path, so `run` links that path (written by
# `pack` into .devrun/source_dir) to the carried tree. cuDNN comes from the machine's
# nvidia-cudnn wheel. Example through the device tool:
#   run(command="bash bench/gpu-lent.sh run 100 270", carry=[".devrun"], timeout_s=420)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
mode=${1:-}
case "$mode" in
  pack)
    archs=${2:-90}
    grep -qx '/.devrun/' .git/info/exclude 2>/dev/null || echo '/.devrun/' >>.git/info/exclude
    rm -rf .devrun  # only what this run packs travels
    cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCONVCHECK_CUDA=ON \
      -DCONVCHECK_ONEDNN=OFF "-DCMAKE_CUDA_ARCHITECTURES=$archs" >/dev/null || exit 1
    cmake --build build-gpu -j "$(nproc)" --target convcheck test_cudnn test_gpu test_backends \
      test_gpu_kernels test_cudnn_layout || exit 1
    mkdir -p .devrun/lib
    cp -a build-gpu .devrun/build-gpu
    (cd .devrun/build-gpu &&
      find . \( -name '*.o' -o -name '*.a' -o -name '.ninja*' -o -name build.ninja \) -delete &&
      find . -type d -name CMakeFiles -prune -exec rm -rf {} +)
    for l in libboost_program_options.so.1.74.0 libboost_unit_test_framework.so.1.74.0 \
      libsimdjson.so.14 libgomp.so.1; do
      cp -L "/lib/x86_64-linux-gnu/$l" .devrun/lib/ || exit 1
    done
    pwd >.devrun/source_dir
    du -sh .devrun
    exit 0
    ;;
  run) ;;
  *)
    echo "usage: bash bench/gpu-lent.sh pack [ARCHS] | run BENCH_S CHECK_S" >&2
    exit 2
    ;;
esac

bench_s=${2:-100}
check_s=${3:-270}
[ -n "${OUT:-}" ] || { echo "OUT must name the folder whose files come back" >&2; exit 2; }
[ "$check_s" -gt 60 ] || { echo "CHECK_S must exceed 60 (the sanitizers fuzz CHECK_S - 60 s)" >&2; exit 2; }
[ -d .devrun/build-gpu ] && [ -s .devrun/source_dir ] ||
  { echo "no .devrun/build-gpu or .devrun/source_dir: run 'pack' here and carry .devrun" >&2; exit 2; }
src=$(cat .devrun/source_dir)
# CTest's files name $src/build-gpu: make that path the carried tree. A real build-gpu (one
# run-gpu.sh built on a warm machine, or this checkout's own) is never used nor deleted.
if [ -e build-gpu ] && [ ! -L build-gpu ]; then
  echo "build-gpu is a directory here, not the carried build: move it away first" >&2
  exit 2
fi
ln -sfn .devrun/build-gpu build-gpu
if [ "$src" != "$PWD" ] && [ ! -e "$src" ]; then mkdir -p "$(dirname "$src")" && ln -s "$PWD" "$src"; fi
B=$src/build-gpu
if ! [ "$B" -ef .devrun/build-gpu ] || ! [ -x "$B/convcheck" ]; then
  echo "$B is not the carried build (.devrun/build-gpu): $src exists here as another tree" >&2
  exit 2
fi
O=/tmp/gpu-lent
rm -rf $O /tmp/gpu-lent-*
mkdir -p $O
S=$O/summary.txt
note() { echo "$*" | tee -a $S; }
export LD_LIBRARY_PATH=$PWD/.devrun/lib
wheel=$(python3 -c 'import nvidia.cudnn as m; print(list(m.__path__)[0])' 2>/dev/null)
[ -n "$wheel" ] && export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$wheel/lib
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv
  echo "cuDNN: $wheel $(python3 -m pip show nvidia-cudnn-cu13 2>/dev/null | grep ^Version)"
  echo "missing libraries:"
  ldd "$B/convcheck" "$B/tests/test_gpu" "$B/tests/test_backends" | grep "not found"
  "$B/convcheck" list
} >$O/env.txt 2>&1
head -5 $O/env.txt
t0=$SECONDS
timeout -k 10 "$bench_s" "$B/convcheck" bench --suite perf_gpu --backends gpu,cudnn --json \
  >$O/bench.jsonl 2>$O/bench-table.txt
note "bench perf_gpu gpu,cudnn: exit $? after $((SECONDS - t0)) s"
python3 bench/gpu_table.py $O/bench.jsonl >>$O/bench-table.txt 2>&1
export OMP_NUM_THREADS=2
t0=$SECONDS
(timeout -k 10 "$check_s" ctest --test-dir "$B" -L gpu \
  -E "gpu_architectures|test_gpu_kernels|test_cudnn_layout" --output-on-failure -j 3 >$O/ctest.log 2>&1
  echo "ctest exit $?" >>$O/ctest.log
  # Passing tests' output (the known differences each excused case prints) is only here.
  cp "$B/Testing/Temporary/LastTest.log" $O/ctest-full.log 2>/dev/null) &
for s in 1 2 3; do
  (timeout -k 10 "$check_s" "$B/convcheck" fuzz --backends gpu,gpu-tf32 --cases 3000 --seed $s \
    --out /tmp/gpu-lent-fuzz$s >$O/fuzz$s.log 2>&1
    echo "fuzz seed $s exit $?" >>$O/fuzz$s.log
    cp /tmp/gpu-lent-fuzz$s/failures.jsonl $O/failures$s.jsonl 2>/dev/null) &
done
(timeout -k 10 "$check_s" "$B/convcheck" run --suite conformance --backends reference,gpu,cudnn \
  --out /tmp/gpu-lent-conformance >$O/conformance.log 2>&1
  echo "conformance exit $?" >>$O/conformance.log
  cp /tmp/gpu-lent-conformance/results.jsonl $O/conformance.jsonl 2>/dev/null) &
seed=7
for tool in memcheck racecheck; do
  seed=$((seed + 1))
  (timeout -k 10 "$check_s" "$CS" --tool $tool --error-exitcode 99 --print-limit 20 \
    "$B/convcheck" fuzz --backends gpu --time $((check_s - 60)) --seed $seed >$O/$tool.log 2>&1
    echo "$tool exit $?" >>$O/$tool.log) &
done
wait
note "checks side by side: $((SECONDS - t0)) s"
for f in ctest.log fuzz1.log fuzz2.log fuzz3.log conformance.log memcheck.log racecheck.log; do
  echo "=== $f"
  tail -5 $O/$f
done | tee -a $S
tar czf "$OUT/results.tgz" -C /tmp gpu-lent
cp $S $O/bench-table.txt "$OUT/"
