#!/usr/bin/env bash
# submit.sh's sbatch command lines, with a stand-in sbatch that records them (no Slurm needed; the
# real cluster is test_slurm.sh). sbatch keeps only the last --export it is given, so a user's own
# after -- must be merged with the variables the jobs run on, not replace them: each job gets one
# --export holding the user's choice and ours (CONVCHECK_LOCK_WAIT among them when set), NONE
# becomes ours alone, the user's other options pass unchanged, and a bare --export is exit 2.
#   test_slurm_submit.sh
set -u
. "$(dirname "$0")/../lib.sh" # $T, ok, bad
submit=$(cd "$(dirname "$0")/../../scale-out/slurm" && pwd)/submit.sh
mkdir -p "$T/bin" "$T/out"
cat >"$T/bin/sbatch" <<'SB'
#!/bin/bash
# One file per call, an argument per line; a job id on stdout, as --parsable prints.
n=$(ls "$CALLS" | wc -l)
printf '%s\n' "$@" >"$CALLS/$n"
echo $((100 + n))
SB
printf '#!/bin/sh\nexit 0\n' >"$T/convcheck"
chmod +x "$T/bin/sbatch" "$T/convcheck"
ours=CONVCHECK,CONVCHECK_SUITE,CONVCHECK_BACKENDS,CONVCHECK_SHARDS,CONVCHECK_RUN_DIR

# case NAME LOCK_WAIT WANT_EXPORT WANT_EXTRA -- SBATCH_OPTIONS...: both jobs' --export options
# (wanted: exactly one, WANT_EXPORT) and that WANT_EXTRA (an argument, or "") reached sbatch.
case_() {
  local name=$1 lock=$2 want=$3 extra=$4
  shift 5
  export CALLS=$T/calls-$name
  rm -rf "$CALLS" && mkdir -p "$CALLS"
  local out rc
  out=$(
    if [ -n "$lock" ]; then export CONVCHECK_LOCK_WAIT=$lock; else unset CONVCHECK_LOCK_WAIT; fi
    PATH=$T/bin:$PATH bash "$submit" --out "$T/out" --name "$name" --convcheck "$T/convcheck" \
      --shards 2 -- "$@" 2>&1
  )
  rc=$?
  [ "$rc" = 0 ] || {
    bad "$name: submit.sh exit $rc: $out"
    return
  }
  local f got
  for f in "$CALLS"/0 "$CALLS"/1; do
    got=$(grep -c '^--export' "$f")
    [ "$got" = 1 ] || bad "$name: $(basename "$f"): $got --export options, want 1: $(tr '\n' ' ' <"$f")"
    got=$(grep '^--export=' "$f")
    [ "$got" = "--export=$want" ] && ok || bad "$name: $(basename "$f"): '$got', want '--export=$want'"
    if [ -n "$extra" ]; then grep -qx -- "$extra" "$f" && ok || bad "$name: '$extra' did not reach sbatch"; fi
  done
}
case_ none "" "ALL,$ours" "" --
case_ lock 7 "ALL,$ours,CONVCHECK_LOCK_WAIT" "" --
case_ user-none 9 "$ours,CONVCHECK_LOCK_WAIT" --qos=low -- --qos=low --export=NONE
case_ user-list "" "HOME,FOO=1,$ours" low -- --export HOME,FOO=1 --qos low
case_ user-all 5 "ALL,$ours,CONVCHECK_LOCK_WAIT" "" -- --export=ALL
case_ last-wins "" "PATH,$ours" "" -- --export=NONE --export=PATH
case_ lower-none 3 "$ours,CONVCHECK_LOCK_WAIT" "" -- --export=none
case_ nothing-after "" "ALL,$ours" "" --

# --export without a value (bare, or empty) is a usage error, before anything is submitted.
for form in "--export" "--export="; do
  export CALLS=$T/calls-bare
  rm -rf "$CALLS" && mkdir -p "$CALLS"
  out=$(PATH=$T/bin:$PATH bash "$submit" --out "$T/out" --convcheck "$T/convcheck" -- "$form" 2>&1)
  rc=$?
  [ "$rc" = 2 ] && [[ "$out" == *"--export after -- needs a value"* ]] && ok ||
    bad "$form alone: exit $rc: $out"
  [ -z "$(ls "$CALLS")" ] && ok || bad "$form alone: sbatch was called"
done

echo "slurm submit: $pass passed, $fail failed"
[ "$fail" = 0 ]
