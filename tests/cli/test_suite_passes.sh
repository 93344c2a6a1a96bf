#!/usr/bin/env bash
# Every problem of a suite passes every check of the oracle with the given backend, on the given
# fills (issue 3: "on the problems of spec Part B §5 every check passes").
#   test_suite_passes.sh CONVCHECK SUITE-FILE BACKEND FILL...
set -u
CC=$1 SUITE=$2 BACKEND=$3
shift 3
pass=0
fail=0
while read -r descriptor _; do
  case "$descriptor" in ''|'#'*) continue ;; esac
  for fill in "$@"; do
    if out=$("$CC" check "$descriptor" --backends "$BACKEND" --fill "$fill" 2>&1); then
      pass=$((pass + 1))
    else
      fail=$((fail + 1))
      echo "FAIL ($fill): $descriptor"
      echo "$out" | sed 's/^/    /' | head -8
    fi
  done
done <"$SUITE"
echo "suite $(basename "$SUITE") with $BACKEND: $pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
