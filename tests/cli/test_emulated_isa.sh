#!/usr/bin/env bash
# A build whose AVX-512 kernels are emulated through SIMDe (CONVCHECK_OPTIMIZED_ISA=avx512-emulated:
# the sanitizer build on a CPU without AVX-512, scripts/cpu-isa.sh) runs them when asked, names
# them so, never chooses them unasked, and passes the fuzzer's random cases through them (the
# driver's AVX-512 paths: 64-float panels, its blockings and rules). test_optimized and the
# testbed run every available ISA, this one included, on their own.
#   test_emulated_isa.sh CONVCHECK [CASES]
set -euo pipefail
cc=$1 cases=${2:-400}
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
unasked=$(env -u CONVCHECK_OPTIMIZED_ISA "$cc" list)
grep -q '^optimized kernels: avx2 ' <<<"$unasked" ||
  fail "unasked, the emulated build did not choose avx2: $(grep 'optimized kernels' <<<"$unasked")"
for ask in avx512 avx512-emulated; do
  asked=$(CONVCHECK_OPTIMIZED_ISA=$ask "$cc" list)
  grep -q '^optimized kernels: avx512-emulated ' <<<"$asked" ||
    fail "CONVCHECK_OPTIMIZED_ISA=$ask: $(grep 'optimized kernels' <<<"$asked")"
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
CONVCHECK_OPTIMIZED_ISA=avx512 "$cc" fuzz --backends optimized --cases "$cases" --seed 151 \
  --out "$out" 2>&1 | tail -3
echo "emulated avx512: $cases fuzz cases passed"
