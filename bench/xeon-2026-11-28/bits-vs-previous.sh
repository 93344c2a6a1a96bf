#!/usr/bin/env bash
# Compares, file for file, the depthwise results (backprop input and forward) of two builds on
# random operands: bitwise the same expected where a change keeps every sum order.
# Usage: OLD=/path/to/old/convcheck NEW=build/convcheck bash bits-vs-previous.sh (run in a scratch dir)
set -u
NEW=$(realpath ${NEW:-build/convcheck}); OLD=${OLD:?the previous build}
n=0; bad=0
for op in depthwise_conv2d_backprop_input depthwise_conv2d; do
for C in 1 3 8 17 32 40 64 72 96 100 128 136 200 256 300; do
for geo in "input=2x9x11x$C,filter=3x3x${C}x1,padding=SAME" "input=1x13x7x$C,filter=5x3x${C}x1,stride=2x1,padding=VALID" "input=2x10x10x$C,filter=3x3x${C}x1,dilation=2x2,padding=SAME" "input=1x8x8x$C,filter=3x3x${C}x1,stride=2x2,padding=SAME"; do
for dt in f32 f64; do
  P="$op:$geo,dtype=$dt"
  rm -rf ops; $NEW operands "$P" --fill random --seed 7 --dir ops >/dev/null 2>&1 || { echo "operands fail $P"; continue; }
  args=""; for f in ops/*.npy; do r=$(basename $f .npy); args="$args --${r//_/-} $f"; done
  for isa in avx512 avx2 generic; do for th in 1 2; do
    CONVCHECK_OPTIMIZED_ISA=$isa OMP_NUM_THREADS=$th $OLD compute "$P" --backend optimized $args --output old.npy >/dev/null 2>&1 || echo "old fail $P"
    CONVCHECK_OPTIMIZED_ISA=$isa OMP_NUM_THREADS=$th $NEW compute "$P" --backend optimized $args --output new.npy >/dev/null 2>&1 || echo "new fail $P"
    n=$((n+1)); cmp -s old.npy new.npy || { bad=$((bad+1)); echo "DIFF $isa $th $P"; }
  done; done
done; done; done; done
echo "compared $n, differing $bad"
