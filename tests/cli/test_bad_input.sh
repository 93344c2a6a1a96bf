#!/usr/bin/env bash
# Bad input that must be refused cleanly (issue 8): problems too large for memory (TF's own large
# output shape case), absurd descriptors, --max-bytes, .npy files and suite files that are
# hostile rather than malformed. Each must give exit code 2 and a message naming the fault: never
# a crash, an internal error (4) or an allocation. Quick: nothing here computes more than a toy.
# An accidental allocation fails the test rather than the machine: every command runs under
# `ulimit -v` (4 GiB of address space), except under AddressSanitizer, whose shadow memory needs
# more address space and which aborts on huge allocations by itself.
#   test_bad_input.sh /path/to/convcheck
set -u
CC=${1:?usage: test_bad_input.sh CONVCHECK}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0
fail=0
limit_vm=4194304  # KiB
if ldd "$CC" 2>/dev/null | grep -q libasan || nm -D "$CC" 2>/dev/null | grep -q __asan_init; then
  limit_vm=unlimited
fi

# expect CODE NEEDLE -- ARGS...: runs convcheck ARGS (under the ulimit), wants exit CODE and NEEDLE
# in stdout+stderr.
expect() {
  local code=$1 needle=$2
  shift 3
  local out rc
  out=$(ulimit -v "$limit_vm"; "$CC" "$@" 2>&1)
  rc=$?
  if [ "$rc" -eq "$code" ] && [[ "$out" == *"$needle"* ]]; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL: convcheck $*"
    echo "  want exit $code with '$needle'; got exit $rc:"
    echo "$out" | sed 's/^/    /' | head -5
  fi
}

# --- resource limits ----------------------------------------------------------------------------
# TF's testConv2DTransposeLargeOutputShape: output shape [114078056, 179835296], stride 10.
TF='conv2d_transpose:input=2x114078056x179835296x1,filter=1x1x1x1,stride=10x10,padding=SAME'
expect 2 "conv2d_transpose: the problem needs 5.18 EiB" -- check "$TF"
expect 2 "more than the memory limit of" -- check "$TF" --backends reference
expect 2 "refused before allocating: input [2, 114078056, 179835296, 1]" -- \
  compute "$TF" --backend reference --filter "$T/f.npy" --out-backprop "$T/o.npy" --output "$T/r.npy"
expect 2 "the memory limit of 1.00 GiB (1073741824 bytes, --max-bytes)" -- \
  operands "$TF" --fill ones --dir "$T/ops" --max-bytes 1G
printf '%s --tag tf.large_output\n' "$TF" >"$T/large.txt"
expect 2 "large.txt:1: conv2d_transpose: the problem needs" -- \
  bench --suite "$T/large.txt" --backends reference
expect 2 "conv2d_transpose: the problem needs" -- run --suite "$T/large.txt" --backends reference \
  --out "$T/run"
# --max-bytes itself, on a small problem.
SMALL='conv2d:input=1x8x8x1,filter=1x1x1x1'
expect 2 "the problem needs 18.1 KiB (18576 bytes) of memory, more than the memory limit of 1.00 KiB (1024 bytes, --max-bytes)" -- \
  check "$SMALL" --max-bytes 1K
expect 0 "reference: pass" -- check "$SMALL" --backends reference --max-bytes=18576
expect 2 "--max-bytes '0': must be positive" -- check "$SMALL" --max-bytes 0
expect 2 "--repeat 1: expected a number of runs per backend from 2 to 1000" -- \
  check "$SMALL" --backends reference --repeat 1
expect 2 "--repeat 1001: expected a number of runs per backend from 2 to 1000" -- \
  check "$SMALL" --backends reference --repeat 1001
expect 0 "reference: pass" -- check "$SMALL" --backends reference --repeat 3
expect 2 "--after-seed and --after-fill need --after PROBLEM2" -- \
  check "$SMALL" --backends reference --after-seed 3
expect 2 "--after-fill nope: expected exact" -- \
  check "$SMALL" --backends reference --after "$SMALL" --after-fill nope
expect 2 "conv2d:input=1x3x3" -- check "$SMALL" --backends reference --after 'conv2d:input=1x3x3'
expect 0 "reference: pass" -- check "$SMALL" --backends reference --after "$SMALL" --after-seed 9
expect 2 "--max-bytes '1.5G': unknown suffix '.5G'" -- check "$SMALL" --max-bytes 1.5G
expect 2 "--max-bytes '99999999999999999999': does not fit in 64 bits" -- \
  check "$SMALL" --max-bytes 99999999999999999999
expect 2 "--max-bytes needs a value" -- check "$SMALL" --max-bytes
expect 2 "fuzz needs a memory limit of at least 512 MiB" -- fuzz --cases 1 --max-bytes 1M
expect 2 "list takes no arguments, got '--max-bytes'" -- list --max-bytes 1G

# --- absurd descriptors -------------------------------------------------------------------------
absurd() { expect 2 "$1" -- check "$2" --backends reference; }
absurd "more than the memory limit" 'conv2d_backprop_input:input=1x1x1x1099511627776,filter=1x1x1099511627776x1'
absurd "Dimension 1 (H) of input must be >= 0, got -5" 'conv2d:input=1x-5x5x1,filter=1x1x1x1'
absurd "the input tensor's size overflows 64 bits" 'conv2d:input=4294967296x4294967296x2x1,filter=1x1x1x1'
absurd "the input tensor's size overflows 64 bits" 'conv2d_backprop_filter:input=4611686018427387904x1x1x1,filter=1x1x1x1'
absurd "overflows 64 bits" 'conv2d:input=0x4294967296x4294967296x1,filter=1x1x1x1'
absurd "stride 9223372036854775807 along rows is too large" 'conv2d:input=1x5x5x1,filter=1x1x1x1,stride=9223372036854775807x1'
absurd "dilation 4611686018427387904 along cols is too large" 'depthwise_conv2d:input=1x5x5x1,filter=1x1x1x1,dilation=1x4611686018427387904'
absurd "effective filter size (3 - 1) * 4611686018427387904 + 1 overflows 64 bits" 'conv2d_backprop_input:input=1x5x5x1,filter=3x3x1x1,dilation=4611686018427387904x1'
absurd "plus padding 9223372036854775807:0 overflows 64 bits" 'conv2d:input=1x5x5x1,filter=1x1x1x1,padding=9223372036854775807:0:0:0'
absurd "output depth 4294967296 * 4294967296 overflows 64 bits" 'depthwise_conv2d:input=1x1x1x4294967296,filter=1x1x4294967296x4294967296'
absurd "integer '99999999999999999999' overflows 64 bits" 'conv2d:input=1x99999999999999999999x1x1,filter=1x1x1x1'
absurd "descriptor 'conv2d:input=1x5x5x1,filter=1x1x1x1,\x1b[31m=1': unknown key '\x1b[31m'" \
  $'conv2d:input=1x5x5x1,filter=1x1x1x1,\e[31m=1'
# Huge strides and dilations up to the bound are valid (and tiny): computed without overflow
# (this runs under UBSan in the sanitizer build).
for P in 'conv2d:input=1x5x5x1,filter=3x3x1x1,stride=1152921504606846976x1,padding=SAME' \
  'conv2d_backprop_filter:input=1x5x5x1,filter=3x3x1x1,stride=1152921504606846976x1152921504606846976,dilation=1x288230376151711744,padding=SAME' \
  'conv2d_backprop_input:input=1x5x7x2,filter=3x2x2x1,stride=1152921504606846976x3,dilation=576460752303423487x1,padding=SAME' \
  'depthwise_conv2d_backprop_input:input=1x5x5x2,filter=3x3x2x1,stride=1152921504606846976x1152921504606846976,padding=SAME' \
  'conv2d_transpose:input=1x5x5x1,filter=1x1x1x1,stride=1152921504606846976x1,padding=VALID'; do
  expect 0 "optimized: pass" -- check "$P" --backends reference,optimized
done
B=1152921504606846976  # 2^60, the largest stride and dilation
for op in conv2d conv2d_backprop_input conv2d_backprop_filter conv2d_transpose depthwise_conv2d \
  depthwise_conv2d_backprop_input depthwise_conv2d_backprop_filter; do
  for rest in "stride=${B}x${B},padding=SAME" "stride=${B}x2,padding=SAME,format=NCHW" \
    "stride=3x${B},padding=VALID" "dilation=$((B / 4))x1,padding=SAME" \
    "stride=${B}x${B},dilation=1x$((B / 4)),padding=SAME,dtype=f64"; do
    expect 0 "optimized: pass" -- check "$op:input=2x5x9x4,filter=3x3x4x2,$rest" \
      --backends reference,optimized
  done
done

# --- hostile .npy files -------------------------------------------------------------------------
npy() {  # npy NAME HEADER-DICT DATA-BYTES: a version 1.0 file with a hand-written header
  local dict=$2 len
  len=$(( ${#dict} + 1 ))
  { printf '\x93NUMPY\x01\x00'; printf "\\x$(printf %02x $((len % 256)))\\x$(printf %02x $((len / 256)))";
    printf '%s\n' "$dict"; head -c "$3" /dev/zero; } >"$T/$1"
}
npy big.npy "{'descr': '<f8', 'fortran_order': False, 'shape': (512, 512), }" 2097152
expect 0 "shape [512, 512]" -- inspect "$T/big.npy"
expect 2 "big.npy: the data of shape [512, 512] <f8 needs 2.00 MiB (2097152 bytes), more than the memory limit of 1.00 MiB" -- \
  inspect "$T/big.npy" --max-bytes 1M
npy huge.npy "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }" 16
expect 2 "huge.npy: data truncated: expected 4398046511104 bytes of data" -- inspect "$T/huge.npy"
npy over.npy "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4), }" 16
expect 2 "overflows 64 bits" -- inspect "$T/over.npy"
printf '\x93NUMPY\x02\x00\xff\xff\xff\x7f{}' >"$T/hdr.npy"
expect 2 "header truncated: the preamble declares a header of 2147483647 bytes" -- inspect "$T/hdr.npy"
expect 2 "/dev/zero: not a .npy file" -- inspect /dev/zero
expect 2 "cannot read $T: Is a directory" -- inspect "$T"

# --- hostile suite files ------------------------------------------------------------------------
suite() { expect 2 "$1" -- bench --suite "$2" --backends reference; }
suite "it is a directory, not a suite file" "$T"
suite "not a regular file" /dev/zero
long=$(printf 'a%.0s' $(seq 1 5000))
suite "unknown suite '" "$long"
printf 'conv2d:input=1x5x5x1,filter=1x1x1x1 --tag a --tag b\n' >"$T/dup.txt"
suite "dup.txt:1: option '--tag' given twice" "$T/dup.txt"
printf 'conv2d:input=1x5x5x1,filter=1x1x1x1 \e[31m --tag a\n' >"$T/esc.txt"
suite "esc.txt:1: unknown option '\x1b[31m'" "$T/esc.txt"
printf '# nothing but a comment\nconv2d:input=1x5x5x1,filter=7x7x1x1\n' >"$T/neg.txt"
suite "neg.txt:2: conv2d: Computed output size would be negative" "$T/neg.txt"

echo "test_bad_input: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
