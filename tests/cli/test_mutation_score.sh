#!/usr/bin/env bash
# Issue 3's mutation score, as a user would run it: for every mutant,
# `convcheck fuzz --backends mutant:<m> --cases 300 --seed 7` exits 1 with a minimal repro line, and
# `convcheck check` on that repro line fails again (exit 1); mutant:stale_cache's replays a sequence
# (`--after`), since the case alone passes.
#   test_mutation_score.sh CONVCHECK
set -u
CC=$1
mutants=$("$CC" list | grep -o 'name one of .*' | sed 's/name one of //; s/,//g')
[ -n "$mutants" ] || { echo "no mutants listed"; exit 1; }
caught=0
total=0
for m in $mutants; do
  total=$((total + 1))
  out=$("$CC" fuzz --backends "mutant:$m" --cases 300 --seed 7 2>&1)
  rc=$?
  repro=$(echo "$out" | grep -m1 'minimal (' | sed 's/.*: convcheck check //')
  if [ "$rc" -ne 1 ] || [ -z "$repro" ]; then
    echo "NOT CAUGHT: mutant:$m (fuzz exit $rc)"
    echo "$out" | tail -3 | sed 's/^/    /'
    continue
  fi
  eval "set -- $repro"
  "$CC" check "$@" >/dev/null 2>&1
  rc=$?
  if [ "$rc" -ne 1 ]; then
    echo "REPRO DID NOT FAIL AGAIN (exit $rc): mutant:$m: convcheck check $repro"
    continue
  fi
  # A stale cache shows only in a sequence: its repro must replay one (check --after, issue 15).
  if [ "$m" = stale_cache ] && ! echo "$repro" | grep -q -- ' --after '; then
    echo "REPRO IS NOT A SEQUENCE: mutant:$m: convcheck check $repro"
    continue
  fi
  caught=$((caught + 1))
  echo "caught mutant:$m: convcheck check $repro"
done
echo "mutation score $caught/$total"
echo "$caught passed, $((total - caught)) failed"
[ "$caught" -eq "$total" ]
