#!/usr/bin/env bash
# Reruns this folder's decomposition of ResNet conv2's 1x1 backprop filter (README here) on the
# machine at hand, in one command: each variant's in-process pairs at 2 and 1 threads, printed as
# "knob A/B threads: PAIRS ...". Each variant rewrites optimized/ (and ahead.patch tests/), builds
# convcheck, runs, and restores both (`git checkout`), so it refuses to start on local changes
# there. Several minutes; nothing else should run meanwhile.
#   bash bench/zen3-2026-12-07c/bounds.sh [REPS]      (default 100: 102 pairs a set)
set -euo pipefail
cd "$(dirname "$0")/../.."
reps=${1:-100}
dir=bench/zen3-2026-12-07c
pv=bench/xeon-2026-12-07b/pair-variant.py
layer=bench/zen3-2026-12-07/L8.txt
if ! git diff --quiet -- optimized tests; then
  echo "bounds.sh: optimized/ or tests/ has local changes; commit or stash them first" >&2
  exit 2
fi
restore() { git checkout -q -- optimized tests; }
# (at the end the restored sources are built again, so that build/convcheck is not a variant's)
trap 'restore; cmake --build build --target convcheck >/dev/null' EXIT
# variant PATCH KNOB "A B"...: PATCH ("-" for none) applied, then the knob script (with the pair
# harness), then a set per (A, B) and thread count.
variant() {
  local patch=$1 knob=$2
  shift 2
  [ "$patch" = - ] || git apply "$dir/$patch"
  cat "$dir/$knob" "$pv" | python3
  cmake --build build --target convcheck >/dev/null
  local ab t
  for ab in "$@"; do
    for t in 2 1; do
      printf '%s %s/%s %s threads: ' "$knob" "${ab% *}" "${ab#* }" "$t"
      PA=${ab% *} PB=${ab#* } build/convcheck bench --suite "$layer" --backends optimized,optimized \
        --threads "$t" --reps "$reps" 2>&1 >/dev/null | grep PAIRS
    done
  done
  restore
}
variant - knob-free.py "0 1"
variant - knob-free-side.py "0 2" "0 3"
variant - knob-dy-in-place.py "0 1"
variant - knob-free-nopf.py "1 2"
variant - knob-free-hot.py "1 3" "2 3"
variant - knob-pf-side.py "0 1" "0 2"
variant - knob-pf-hint.py "0 1"
variant - knob-ahead2.py "0 1" "0 3"
variant ahead.patch knob-ahead.py "0 1"
variant pf-even.patch knob-pf-even.py "0 1"
variant pf-half.patch knob-pf-half.py "0 1"
