#!/usr/bin/env bash
# Plugins from the command line (issue 7): `plugin:PATH` as a backend of check, fuzz and run; the
# faulty example plugins each get their verdict and the harness goes on; an ABI mismatch is
# refused naming both versions; --plugin-timeout is validated.
#   test_plugins.sh /path/to/convcheck /path/to/examples/plugins (the built .so files)
set -u
CC=${1:?usage: test_plugins.sh CONVCHECK PLUGIN_DIR}
D=${2:?usage: test_plugins.sh CONVCHECK PLUGIN_DIR}
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

SAME='conv2d_backprop_input:input=1x4x4x1,filter=2x2x1x1,padding=SAME'
BIG='conv2d_backprop_input:input=2x7x7x4,filter=3x3x4x5,stride=2x2,padding=SAME'

expect 0 "plugin:  [family" -- list
expect 0 "plugin:$D/minimal.so: pass" "reference: pass" -- check "$BIG" --backends "plugin:$D/minimal.so,reference"
expect 0 "plugin:$D/minimal.so: pass" -- check "$BIG" --fill real --backends "plugin:$D/minimal.so"
expect 0 "unsupported" "the minimal plugin implements conv2d_backprop_input only" -- \
  check 'conv2d:input=1x4x4x1,filter=2x2x1x1' --backends "plugin:$D/minimal.so"
expect 3 "was built for convcheck plugin ABI version 999; this convcheck speaks version 1" -- \
  check "$SAME" --backends "plugin:$D/abi_mismatch.so"
expect 3 "cannot read the plugin" -- check "$SAME" --backends "plugin:$D/nope.so"
# A crash is a verdict; the other backends of the case still run.
expect 1 "crashed [crashed] the plugin process died of SIGSEGV" "reference: pass" \
  "plugin:$D/minimal.so: pass" -- \
  check "$SAME" --backends "plugin:$D/segfault.so,reference,plugin:$D/minimal.so"
expect 1 "timeout [timeout]" "within the plugin timeout of 2 s" -- \
  check "$SAME" --plugin-timeout 2 --backends "plugin:$D/hang.so"
expect 1 "fail [out_of_bounds] wrote past the end of input_backprop" -- \
  check "$SAME" --backends "plugin:$D/oob_write.so"
expect 1 "fail [compare]" "first input_backprop[" -- \
  check "$SAME" --backends "plugin:$D/same_padding_wrong.so"
expect 2 "--plugin-timeout 0: expected a positive number of seconds" -- \
  check "$SAME" --plugin-timeout 0 --backends "plugin:$D/minimal.so"
expect 2 "--plugin-timeout needs a number of seconds" -- check "$SAME" --plugin-timeout

# A plugin's crash never breaks the JSON report.
out=$("$CC" check "$SAME" --json --backends "plugin:$D/segfault.so,reference" 2>/dev/null)
if python3 -c 'import json,sys; r=json.loads(sys.argv[1]); v=[b["verdict"] for b in r["backends"]]; sys.exit(v != ["crashed","pass"])' "$out"; then
  pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: check --json with a crashing plugin: $out"; fi

# A plugin's stdout goes into its record (issue 18), never to convcheck's stdout or stderr: the
# JSON on stdout stays one clean object.
out=$("$CC" check "$SAME" --json --backends "plugin:$D/operand_write.so" 2>"$T/err")
if python3 -c 'import json,sys; r=json.loads(sys.argv[1]); b=r["backends"][0]; sys.exit(b["check"] != "operand_modified" or "operand_write: hello on stdout" not in b["output"])' "$out" &&
  ! grep -q "operand_write: hello on stdout" "$T/err"; then pass=$((pass + 1)); else
  fail=$((fail + 1)); echo "FAIL: check --json with a chatty plugin: $out"; cat "$T/err"; fi

# fuzz goes on after the crash: the failing plugin is shrunk and dropped, the reference fuzzed on.
expect 1 "FAIL plugin:$D/segfault.so [crashed]" "fuzz: 25 cases, 1 failing backend" -- \
  fuzz --backends "plugin:$D/segfault.so,reference" --cases 25 --seed 3

# run: every faulty plugin gets its verdict in the report, and the run finishes.
cat >"$T/suite.txt" <<SUITE
$SAME --fill exact
conv2d_backprop_input:input=1x5x5x2,filter=3x3x2x3,stride=2x2,padding=SAME --fill real
SUITE
B="plugin:$D/segfault.so,plugin:$D/hang.so,plugin:$D/oob_write.so,plugin:$D/same_padding_wrong.so,plugin:$D/minimal.so"
"$CC" run --suite "$T/suite.txt" --backends "$B" --out "$T/run" --plugin-timeout 2 >"$T/run.log" 2>&1
rc=$?
got=$(python3 - "$T/run/results.jsonl" "$D" <<'PY'
import json, sys
d = sys.argv[2]
rows = [json.loads(l) for l in open(sys.argv[1])]
first = {r["backend"].rsplit("/", 1)[-1]: (r["verdict"], r.get("check", "")) for r in rows
       if r.get("descriptor", r.get("problem", "")).startswith("conv2d_backprop_input:input=1x4x4x1")}
print(" ".join(f"{k}={v[0]}/{v[1]}" for k, v in sorted(first.items())), len(rows))
PY
)
want="hang.so=timeout/timeout minimal.so=pass/ oob_write.so=fail/out_of_bounds same_padding_wrong.so=fail/compare segfault.so=crashed/crashed 10"
if [ "$rc" -eq 1 ] && [ "$got" = "$want" ]; then pass=$((pass + 1)); else
  fail=$((fail + 1)); echo "FAIL: run with faulty plugins: exit $rc, got '$got', want '$want'"; head -5 "$T/run.log"; fi

echo "test_plugins.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
