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
