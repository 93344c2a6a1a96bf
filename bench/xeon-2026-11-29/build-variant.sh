#!/usr/bin/env bash
# build-variant.sh NAME "FLAGS": /tmp/dwk-NAME, dwk.cpp linked against build/'s liboptimized.a with
# its AVX-512 and AVX2 kernel objects recompiled with FLAGS (the macros of depthwise-variants.diff:
# DW_BARRIER, DW_NOPF, DW_INLINE, DW_TBMEM, DW_NB4WIDE; "" for the base). Run from the repository
# root after a build, with 111f70d's kernels and the diff in place:
#   git show 111f70d:optimized/kernels_impl.h > optimized/kernels_impl.h
#   git apply bench/xeon-2026-11-29/depthwise-variants.diff
#   bash bench/xeon-2026-11-29/build-variant.sh base ""
#   bash bench/xeon-2026-11-29/build-variant.sh bn "-DDW_BARRIER -DDW_NOPF"
set -euo pipefail
name=$1; flags=${2-}; out=/tmp/dwk-$name.d
# Without the diff every variant would silently build the same code.
grep -q DW_BARRIER optimized/kernels_impl.h || {
  echo "build-variant.sh: optimized/kernels_impl.h lacks the variants' macros (see above)" >&2
  exit 2
}
mkdir -p "$out"
common="-DSIMDJSON_THREADS_ENABLED=1 -I. -O3 -DNDEBUG -fPIC -fopenmp -std=c++17 $flags"
c++ $common -mavx512f -mavx2 -mfma -mf16c -c optimized/kernels_avx512.cpp -o "$out/kernels_avx512.cpp.o"
c++ $common -mavx2 -mfma -mf16c -c optimized/kernels_avx2.cpp -o "$out/kernels_avx2.cpp.o"
cp build/optimized/liboptimized.a "$out/"
ar d "$out/liboptimized.a" kernels_avx512.cpp.o kernels_avx2.cpp.o
ar r "$out/liboptimized.a" "$out/kernels_avx512.cpp.o" "$out/kernels_avx2.cpp.o" 2>/dev/null
g++ -O2 -std=c++17 -fopenmp -I. bench/xeon-2026-11-29/dwk.cpp "$out/liboptimized.a" \
  build/core/libcore.a -o "/tmp/dwk-$name"
