#!/usr/bin/env bash
# build-variant.sh NAME "FLAGS": /tmp/dwk-NAME, dwk.cpp linked against build/'s liboptimized.a with
# its AVX-512 and AVX2 kernel objects recompiled with FLAGS (the macros of depthwise-variants.diff,
# applied to optimized/kernels_impl.h at 111f70d: DW_BARRIER, DW_NOPF, DW_INLINE, DW_TBMEM,
# DW_NB4WIDE). Run from the repository root after a build.
set -euo pipefail
name=$1; flags=$2; out=/tmp/dwk-$name.d
mkdir -p "$out"
common="-DSIMDJSON_THREADS_ENABLED=1 -I. -O3 -DNDEBUG -fPIC -fopenmp -std=c++17 $flags"
c++ $common -mavx512f -mavx2 -mfma -mf16c -c optimized/kernels_avx512.cpp -o "$out/kernels_avx512.cpp.o"
c++ $common -mavx2 -mfma -mf16c -c optimized/kernels_avx2.cpp -o "$out/kernels_avx2.cpp.o"
cp build/optimized/liboptimized.a "$out/"
ar d "$out/liboptimized.a" kernels_avx512.cpp.o kernels_avx2.cpp.o
ar r "$out/liboptimized.a" "$out/kernels_avx512.cpp.o" "$out/kernels_avx2.cpp.o" 2>/dev/null
g++ -O2 -std=c++17 -fopenmp -I. bench/xeon-2026-11-29/dwk.cpp "$out/liboptimized.a" \
  build/core/libcore.a -o "/tmp/dwk-$name"
