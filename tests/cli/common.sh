# Shared by the CLI tests that source it (issue 19 onwards): a temporary directory $T removed on
# exit, pass/fail counters, and expect().
#   CC=/path/to/convcheck; . "$(dirname "$0")/common.sh"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0
fail=0

# expect CODE NEEDLE -- ARGS...: runs convcheck ARGS (60 s at most), wants exit CODE and NEEDLE in
# stdout+stderr.
expect() {
  local code=$1 needle=$2
  shift 3
  local out rc
  out=$(timeout 60 "$CC" "$@" 2>&1)
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

# ok NAME CONDITION...: counts a check done by the caller (CONDITION is a command).
ok() {
  local name=$1
  shift
  if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $name"; fi
}
