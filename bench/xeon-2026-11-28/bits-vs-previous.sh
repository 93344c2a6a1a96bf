#!/usr/bin/env bash
# Compares, file for file, the results of two builds (by default depthwise backprop input and
# forward; any descriptors with PROBLEMS=FILE) on
# real-valued operands (N(0,1), so that a different summation order would change some bits):
# bitwise the same expected where a change keeps every element's sum order.
# Usage, from the repository root: OLD=/path/to/old/convcheck bash bench/xeon-2026-11-28/bits-vs-previous.sh
# (NEW defaults to build/convcheck; scratch files go to a temporary directory). PROBLEMS=FILE
# compares the descriptors listed in FILE (one a line, without dtype) instead of the depthwise set.
set -u
: "${OLD:?the previous build}"
NEW=$(realpath "${NEW:-build/convcheck}"); OLD=$(realpath "$OLD")
if [ -n "${PROBLEMS:-}" ]; then PROBLEMS=$(realpath -e "$PROBLEMS") || exit 2; fi
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; cd "$work"
# Rewrites a .npy file's data with N(0,1) values, header kept: version 1.0 headers (what
# core/npy.cpp writes below 64 KiB of header) of f32 or f64 data only; anything else fails.
realify='import random,struct,sys
path,seed=sys.argv[1],int(sys.argv[2]); b=open(path,"rb").read()
if b[:6]!=b"\x93NUMPY" or b[6]!=1: sys.exit("not a version 1.0 .npy: "+path)
hl=struct.unpack("<H",b[8:10])[0]; head=b[:10+hl]; hdr=head.decode("latin1")
code={"<f4":"f","<f8":"d"}.get(hdr.split("descr")[1].split("\x27")[2])
if code is None: sys.exit("neither f32 nor f64: "+path)
n=(len(b)-len(head))//struct.calcsize(code); r=random.Random(seed)
open(path,"wb").write(head+struct.pack("<%d%s"%(n,code),*[r.gauss(0,1) for _ in range(n)]))'
problems() {  # the descriptors, without dtype
  if [ -n "${PROBLEMS:-}" ]; then tr -d '\r' < "$PROBLEMS" | grep -v '^[[:space:]]*#' | grep '[^[:space:]]'; return; fi
  for op in depthwise_conv2d_backprop_input depthwise_conv2d; do
  for C in 1 3 8 17 32 40 64 72 96 100 128 136 144 200 245 256 300; do
  for geo in "input=2x9x11x$C,filter=3x3x${C}x1,padding=SAME" "input=1x13x7x$C,filter=5x3x${C}x1,stride=2x1,padding=VALID" "input=2x10x10x$C,filter=3x3x${C}x1,dilation=2x2,padding=SAME" "input=1x8x8x$C,filter=3x3x${C}x1,stride=2x2,padding=SAME"; do
    echo "$op:$geo"
  done; done; done
}
n=0; bad=0; failed=0
for base in $(problems); do
for dt in f32 f64; do
  P="$base,dtype=$dt"
  runs=6  # ISAs x thread counts below: what a failure here costs
  rm -rf ops; "$NEW" operands "$P" --fill random --seed 7 --dir ops >/dev/null 2>&1 || { echo "operands fail $P"; failed=$((failed+runs)); continue; }
  args=""; s=0; ok=1
  for f in ops/*.npy; do
    s=$((s+1)); python3 -c "$realify" "$f" "$s" || ok=0
    r=$(basename "$f" .npy); args="$args --${r//_/-} $f"
  done
  [ $ok = 1 ] || { echo "operands not rewritten: $P"; failed=$((failed+runs)); continue; }
  for isa in avx512 avx2 generic; do for th in 1 2; do
    rm -f old.npy new.npy
    if CONVCHECK_OPTIMIZED_ISA=$isa OMP_NUM_THREADS=$th "$OLD" compute "$P" --backend optimized $args --output old.npy >/dev/null 2>&1 &&
       CONVCHECK_OPTIMIZED_ISA=$isa OMP_NUM_THREADS=$th "$NEW" compute "$P" --backend optimized $args --output new.npy >/dev/null 2>&1; then
      n=$((n+1)); cmp -s old.npy new.npy || { bad=$((bad+1)); echo "DIFF $isa $th $P"; }
    else
      failed=$((failed+1)); echo "compute fail ($isa, $th threads): $P"
    fi
  done; done
done; done
echo "compared $n, differing $bad, failed to run $failed"
[ "$n" -gt 0 ] && [ $((bad + failed)) -eq 0 ]
