#!/usr/bin/env bash
# Issue 15's other half of the mutation score: every mutant is caught by the main job's suite too.
# For every mutant, `convcheck run --suite conformance --backends mutant:<m>` exits 1 with failing
# pairs in its results.jsonl, and the first failing record's repro line fails again under
# `convcheck check` (exit 1) in a fresh process.
#   test_mutation_conformance.sh CONVCHECK
set -u
CC=$1
mutants=$("$CC" list | grep -o 'name one of .*' | sed 's/name one of //; s/,//g')
[ -n "$mutants" ] || { echo "no mutants listed"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
caught=0
total=0
for m in $mutants; do
  total=$((total + 1))
  out="$work/$m"
  "$CC" run --suite conformance --backends "mutant:$m" --out "$out" >"$out.log" 2>&1
  rc=$?
  failing=$(grep -c '"verdict": *"fail' "$out/results.jsonl" 2>/dev/null)
  if [ "$rc" -ne 1 ] || [ "${failing:-0}" -eq 0 ]; then
    echo "NOT CAUGHT by conformance: mutant:$m (run exit $rc, ${failing:-0} failing pairs)"
    tail -3 "$out.log" | sed 's/^/    /'
    continue
  fi
  repro=$(grep -m1 '"verdict": *"fail' "$out/results.jsonl" |
    python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["repro"])' |
    sed 's/^convcheck check //')
  eval "set -- $repro"
  "$CC" check "$@" >/dev/null 2>&1
  rc=$?
  if [ "$rc" -ne 1 ]; then
    echo "REPRO DID NOT FAIL AGAIN (exit $rc): mutant:$m: convcheck check $repro"
    continue
  fi
  caught=$((caught + 1))
  echo "caught mutant:$m: $failing failing pairs; convcheck check $repro"
done
echo "conformance mutation score $caught/$total"
[ "$caught" -eq "$total" ]
