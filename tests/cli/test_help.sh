#!/usr/bin/env bash
# The first hour (issue 19 item 1): every command explains itself and long options are spelled in
# full. Each command's --help (usage, every option with its default, the global options, an
# example; exit 0), --version, prefixes refused with "did you mean", and the full spellings still
# accepted.
#   test_help.sh /path/to/convcheck
set -u
CC=${1:?usage: test_help.sh CONVCHECK}
. "$(dirname "$0")/../lib.sh"  # $T, ok, bad, expect, holds

# --- --help on every command: stdout, exit 0, usage, options with defaults, an example ----------
for cmd in list compute operands inspect check verify fuzz bench run "report html" "report diff" \
           "report merge"; do
  # shellcheck disable=SC2086 # "report diff" is two words
  out=$(timeout 60 "$CC" $cmd --help 2>"$T/err")
  rc=$?
  good=1
  [ "$rc" -eq 0 ] || good=0
  [ -s "$T/err" ] && good=0
  [[ "$out" == *"usage: convcheck $cmd"* ]] || good=0
  [[ "$out" == *"example:"*"  convcheck "* ]] || good=0
  [[ "$out" == *"--plugin-timeout S"*"(default: 60)"* ]] || good=0
  [[ "$out" == *"-h, --help"* ]] || good=0
  # -h is --help
  # shellcheck disable=SC2086
  [ "$(timeout 60 "$CC" $cmd -h 2>&1)" = "$out" ] || good=0
  if [ "$good" = 1 ]; then ok; else
    bad "convcheck $cmd --help: exit $rc"; cat "$T/err"; echo "$out" | head -5; fi
done
# Options with their defaults, from the tables that parse.
expect 0 "--seed S                  the case's seed (default: 1)" -- check --help
expect 0 "(default: exact)" -- check --help
expect 0 "--max-bytes N[K|M|G|T|P]" -- check --help
expect 0 "--reps N                  timed runs per backend (default: 10)" -- bench --help
expect 0 "--cases N" -- fuzz --help
expect 0 "--out DIR" -- run --help
expect 0 "outside any checkout" -- run --help
expect 0 "results.jsonl  one JSON object per (case, backend)" -- run --help
# --help wins over anything else on the line, bad input included.
expect 0 "usage: convcheck check" -- check 'not a descriptor' --bogus --help
# The list of commands points at --help and --version.
expect 0 "convcheck <command> --help" -- --help
expect 0 "convcheck report html|diff|merge --help" -- report --help

# --- --version -------------------------------------------------------------------------------
out=$(timeout 60 "$CC" --version 2>&1); rc=$?
good=1
[ "$rc" -eq 0 ] || good=0
for field in "convcheck " "commit: " "compiler: " "cpu: " "optimized kernels: " "cuda: " "cudnn: " \
             "onednn: "; do
  [[ "$out" == *"$field"* ]] || { good=0; echo "  --version lacks '$field'"; }
done
if [ "$good" = 1 ]; then ok; else bad "--version:"; echo "$out"; fi

# --- no prefix guessing; near misses get a suggestion --------------------------------------------
P='conv2d_backprop_input:input=1x4x4x1,filter=2x2x1x1'
expect 2 "unrecognised option '--suit'; did you mean --suite?" -- run --suit smoke --out "$T/r"
expect 2 "did you mean --backends?" -- check "$P" --backend reference
expect 2 "unrecognised option '--fil'; did you mean --fill?" -- check "$P" --fil exact
expect 2 "unrecognised option '--b'; did you mean --backends?" -- run --b reference --out "$T/r"
expect 2 "unrecognised option '--o'; did you mean --out?" -- run --suite smoke --o "$T/r"
expect 2 "did you mean --max-bytes?" -- check "$P" --max-byte 1G
expect 2 "unrecognised option '--frobnicate' (convcheck check --help" -- check "$P" --frobnicate
expect 2 "unknown command 'chek'; did you mean check?" -- chek "$P"
expect 2 "unknown report command 'dif'; did you mean diff?" -- report dif a b
holds "a refused run wrote nothing" test ! -e "$T/r"
# The full spellings, and --opt=value, still work.
expect 0 "reference: pass" -- check "$P" --backends=reference --fill exact --seed 3
expect 0 "wrote $T/ops/filter.npy" -- operands "$P" --fill=ramp --dir "$T/ops"

echo "test_help: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
