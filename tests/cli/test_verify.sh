#!/usr/bin/env bash
# `convcheck verify` (design §8): a result computed elsewhere, judged against the exact reference
# under a named contract. A correct result passes, a wrong one fails naming the first offender's
# coordinates, files that do not fit the problem are exit 2.
#   test_verify.sh /path/to/convcheck
set -u
CC=${1:?usage: test_verify.sh CONVCHECK}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0
fail=0

# expect CODE NEEDLE... -- ARGS: runs convcheck ARGS, wants exit CODE and every NEEDLE in its output.
expect() {
  local code=$1
  shift
  local needles=()
  while [ "$1" != "--" ]; do needles+=("$1"); shift; done
  shift
  local out rc
  out=$("$CC" "$@" 2>&1)
  rc=$?
  local ok=1
  [ "$rc" -eq "$code" ] || ok=0
  for n in "${needles[@]}"; do [[ "$out" == *"$n"* ]] || ok=0; done
  if [ $ok -eq 1 ]; then pass=$((pass + 1)); else
    fail=$((fail + 1))
    echo "FAIL: convcheck $*"
    echo "  want exit $code with: ${needles[*]}; got exit $rc:"
    echo "$out" | sed 's/^/    /' | head -8
  fi
}
must() { "$@" >/dev/null 2>&1 || { echo "FAIL: setup: $*"; exit 1; }; }

P='conv2d_backprop_input:input=1x4x4x2,filter=2x2x2x3,padding=SAME'
must "$CC" operands "$P" --fill random --seed 5 --dir "$T"
must "$CC" compute "$P" --backend reference --filter "$T/filter.npy" --out-backprop "$T/out_backprop.npy" --output "$T/good.npy"
# A wrong result: SAME's odd padding row put before (a planted bug), off where the pads matter.
must "$CC" compute "$P" --backend mutant:same_pad_before --filter "$T/filter.npy" --out-backprop "$T/out_backprop.npy" --output "$T/bad.npy"
OPS=(--filter "$T/filter.npy" --out-backprop "$T/out_backprop.npy")

expect 0 "verify:f32: pass" "bound usage 0" -- verify "$P" "${OPS[@]}" --result "$T/good.npy"
expect 0 "verify:exact: pass" "verify:tf32: pass" "verify:f16: pass" -- \
  verify "$P" "${OPS[@]}" --result "$T/good.npy" --contract exact,tf32,f16
expect 1 "verify:f32: fail [compare]" "elements wrong; first input_backprop[0," "repro: convcheck verify" -- \
  verify "$P" "${OPS[@]}" --result "$T/bad.npy"
# JSON: check's record keys, the first offender's logical coordinates.
out=$("$CC" verify "$P" "${OPS[@]}" --result "$T/bad.npy" --json 2>/dev/null)
if python3 -c '
import json, sys
r = json.loads(sys.argv[1]); b = r["backends"][0]
assert r["command"] == "verify" and r["tf_admission"]["cpu"]["kind"] == "accepted"
assert b["verdict"] == "fail" and b["check"] == "compare" and b["mismatches"] > 0
assert len(b["first_offender"]["coord"]) == 4 and b["first_offender"]["coord"][0] == 0
assert b["repro"].startswith("convcheck verify ")' "$out"; then pass=$((pass + 1)); else
  fail=$((fail + 1)); echo "FAIL: verify --json: $out"; fi
# The operand the op does not read is ignored, with a note.
must "$CC" operands 'conv2d:input=1x4x4x2,filter=2x2x2x3,padding=SAME' --fill random --dir "$T/fw"
expect 0 "does not read input; --input ignored" "verify:f32: pass" -- \
  verify "$P" "${OPS[@]}" --input "$T/fw/input.npy" --result "$T/good.npy"

# Bad input: exit 2, saying what was expected.
expect 2 "missing --out-backprop" -- verify "$P" --filter "$T/filter.npy" --result "$T/good.npy"
expect 2 "missing --result" -- verify "$P" "${OPS[@]}"
P5='conv2d_backprop_input:input=1x5x5x2,filter=2x2x2x3,padding=SAME'
must "$CC" operands "$P5" --fill random --dir "$T/p5"
expect 2 "result: file $T/good.npy has shape [1, 4, 4, 2], expected [1, 5, 5, 2]" -- \
  verify "$P5" --filter "$T/p5/filter.npy" --out-backprop "$T/p5/out_backprop.npy" --result "$T/good.npy"
must "$CC" operands "$P,dtype=f64" --fill random --seed 5 --dir "$T/f64"
must "$CC" compute "$P,dtype=f64" --backend reference --filter "$T/f64/filter.npy" --out-backprop "$T/f64/out_backprop.npy" --output "$T/f64/good.npy"
expect 2 "result: file $T/f64/good.npy has dtype f64 ('<f8'), expected f32 ('<f4')" -- \
  verify "$P" "${OPS[@]}" --result "$T/f64/good.npy"
expect 2 "filter: file $T/f64/filter.npy has dtype f64" -- \
  verify "$P" --filter "$T/f64/filter.npy" --out-backprop "$T/out_backprop.npy" --result "$T/good.npy"
expect 0 "verify:f64: pass" -- verify "$P,dtype=f64" --filter "$T/f64/filter.npy" \
  --out-backprop "$T/f64/out_backprop.npy" --result "$T/f64/good.npy"
expect 2 "--contract fp32: expected f32, tf32, f16, bf16, f64, exact or i32" -- \
  verify "$P" "${OPS[@]}" --result "$T/good.npy" --contract fp32
expect 2 "--contract i32 does not apply to f32 results" -- \
  verify "$P" "${OPS[@]}" --result "$T/good.npy" --contract i32
expect 2 "cannot open" -- verify "$P" "${OPS[@]}" --result "$T/missing.npy"

echo "test_verify.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
