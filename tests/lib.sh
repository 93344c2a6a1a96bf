# Shared by the shell tests (sourced): a temporary directory $T removed on exit, and pass / fail
# counting with ok and bad ("FAIL: ..." on stdout). Each script prints "$pass passed, $fail failed".
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() {
  fail=$((fail + 1))
  echo "FAIL: $*"
}

# expect CODE NEEDLE -- ARGS...: runs "$CC" ARGS (60 s at most), wants exit CODE and NEEDLE in
# stdout+stderr.
expect() {
  local code=$1 needle=$2
  shift 3
  local out rc
  out=$(timeout 60 "$CC" "$@" 2>&1)
  rc=$?
  if [ "$rc" -eq "$code" ] && [[ "$out" == *"$needle"* ]]; then ok; else
    bad "convcheck $*"
    echo "  want exit $code with '$needle'; got exit $rc:"
    echo "$out" | sed 's/^/    /' | head -5
  fi
}

# holds NAME COMMAND...: ok when COMMAND succeeds, else bad NAME.
holds() {
  local name=$1
  shift
  if "$@"; then ok; else bad "$name"; fi
}
