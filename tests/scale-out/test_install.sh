#!/usr/bin/env bash
# `cmake --install` gives a self-contained tree (issue 20 item 4): installed into a temporary
# prefix, the binary finds its suites beside itself (and says so in `list`), $CONVCHECK_SUITES
# still overrides, the plugin host and the example plugins work from the tree, the plugin header and
# the scale-out recipes are there, and a run from an unrelated directory works.
#   test_install.sh BUILD_DIR [EIGEN_MODULES]
set -u
BUILD=${1:?usage: test_install.sh BUILD_DIR [EIGEN_MODULES]}
EIGEN_MODULES=${2:-}  # the eigen ISA modules the build made, e.g. avx2,avx512
. "$(dirname "$0")/../lib.sh"  # $T, ok, bad
P=$T/prefix
if ! cmake --install "$BUILD" --prefix "$P" >"$T/install.log" 2>&1; then
  bad "cmake --install failed"
  tail -5 "$T/install.log"
  echo "install: $pass passed, $fail failed"
  exit 1
fi
for f in bin/convcheck bin/convcheck-plugin-host include/convcheck/convcheck_plugin.h \
  share/convcheck/suites/conformance.txt share/convcheck/suites/smoke.txt \
  lib/convcheck/plugins/minimal.so share/convcheck/examples/plugins/minimal.c \
  share/convcheck/scale-out/slurm/submit.sh share/convcheck/scale-out/slurm/shards.sbatch \
  share/convcheck/scale-out/slurm/merge.sbatch share/convcheck/scale-out/k8s/shards-job.yaml; do
  if [ -e "$P/$f" ]; then ok; else bad "missing from the installed tree: $f"; fi
done
[ -x "$P/share/convcheck/scale-out/slurm/submit.sh" ] && ok || bad "submit.sh not executable"

mkdir -p "$T/elsewhere" && cd "$T/elsewhere" || exit 1
out=$(env -u CONVCHECK_SUITES "$P/bin/convcheck" list 2>&1)
if [[ "$out" == *"suites ($P/share/convcheck/suites, installed): conformance"* ]]; then ok; else
  bad "installed list does not name the installed suites: $(grep suites <<<"$out")"
fi
mkdir -p "$T/mysuites" && echo 'conv2d:input=1x3x3x1,filter=2x2x1x1' >"$T/mysuites/mine.txt"
out=$(CONVCHECK_SUITES=$T/mysuites "$P/bin/convcheck" list 2>&1)
if [[ "$out" == *"suites ($T/mysuites, \$CONVCHECK_SUITES): mine"* ]]; then ok; else
  bad "CONVCHECK_SUITES does not override: $(grep suites <<<"$out")"
fi
if env -u CONVCHECK_SUITES OMP_NUM_THREADS=1 "$P/bin/convcheck" run --suite smoke --shard 1/40 \
  --backends reference,optimized --out "$T/run" >"$T/run.log" 2>&1 && [ -s "$T/run/summary.json" ]; then ok; else
  bad "installed run --suite smoke failed: $(tail -3 "$T/run.log")"
fi
out=$("$P/bin/convcheck" check 'conv2d_backprop_input:input=1x5x5x2,filter=3x3x2x3' \
  --backends "plugin:$P/lib/convcheck/plugins/minimal.so" 2>&1)
if [[ "$out" == *"minimal.so: pass"* ]]; then ok; else bad "installed plugin check: $(tail -3 <<<"$out")"; fi
# The eigen comparator's ISA modules (comparators/CMakeLists.txt): each one built is installed, and
# the installed binary loads the widest this CPU runs from the installed tree, not the build tree.
mods=""
for i in ${EIGEN_MODULES//,/ }; do mods+=" convcheck-eigen-$i.so"; done
for m in $mods; do
  if [ -e "$P/lib/convcheck/$m" ]; then ok; else bad "missing from the installed tree: lib/convcheck/$m"; fi
done
# (A module this CPU runs: avx2 with AVX2 + FMA, avx512 with AVX-512F as well.)
runs=""
if grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo && grep -qw f16c /proc/cpuinfo; then
  [[ ",$EIGEN_MODULES," == *",avx2,"* ]] && runs=avx2
  grep -qw avx512f /proc/cpuinfo && [[ ",$EIGEN_MODULES," == *",avx512,"* ]] && runs=avx512
fi
if [ -n "$runs" ]; then
  echo 'conv2d:input=1x5x5x2,filter=3x3x2x3' >"$T/one.txt"
  out=$("$P/bin/convcheck" bench --suite "$T/one.txt" --backends eigen --reps 1 --warmup 0 --json 2>&1)
  if [[ "$out" == *"\"note\":\"Eigen "*"/bin/../lib/convcheck/convcheck-eigen-avx"* ]]; then ok; else
    bad "installed eigen did not load a module from the installed tree: $(grep -o '"note":"[^"]*"' <<<"$out")"
  fi
fi
echo "install: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
