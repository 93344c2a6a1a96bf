#!/usr/bin/env bash
# The sandbox against hostile plugins (issue 18), one CTest per case:
#   test_sandbox.sh CONVCHECK PLUGIN_DIR CASE
# PLUGIN_DIR holds the example plugins, faulty/ the probes (examples/plugins/faulty/). Each case
# asserts the verdict, that the command finished (with its report, for `run`), that nothing it
# started is still running (every process convcheck starts inherits a tag in its environment,
# looked for in /proc/*/environ afterwards) and that the hosts' scratch directories are gone. A case
# whose mechanism this machine lacks exits 77 (CTest: skipped) and says why.
set -u
CC=${1:?usage: test_sandbox.sh CONVCHECK PLUGIN_DIR CASE}
D=${2:?usage: test_sandbox.sh CONVCHECK PLUGIN_DIR CASE}
CASE=${3:?usage: test_sandbox.sh CONVCHECK PLUGIN_DIR CASE}
F=$D/faulty
T=$(mktemp -d)
TAG=convcheck-sandbox-test-$$-$RANDOM
mkdir -p "$T/tmp" "$T/outside"
cleanup() {
  # Only processes this test started carry TAG; none should be left, but never leave one behind.
  for p in $(leftovers); do kill -KILL "$p" 2>/dev/null; done
  rm -rf "$T"
}
trap cleanup EXIT
export OMP_NUM_THREADS=1
fail=0
SAME='conv2d_backprop_input:input=1x4x4x1,filter=2x2x1x1,padding=SAME'
printf '%s --fill exact\n' "$SAME" >"$T/suite.txt"

# The pids of live processes whose environment holds TAG.
leftovers() {
  local f p
  for f in /proc/[0-9]*/environ; do
    p=${f#/proc/}
    p=${p%/environ}
    [ "$p" = "$$" ] && continue
    if { tr '\0' '\n' <"$f"; } 2>/dev/null | grep -qx "CONVCHECK_PROBE_TAG=$TAG"; then echo "$p"; fi
  done
}

# cc ARGS...: runs convcheck (tagged, TMPDIR and $CONVCHECK_PROBE_DIR in $T) with a hard time
# limit; sets rc, out (stdout), err (stderr), secs.
cc() {
  local t0=$SECONDS
  env CONVCHECK_PROBE_TAG="$TAG" TMPDIR="$T/tmp" CONVCHECK_PROBE_DIR="$T/outside" \
    timeout -k 5 240 "$CC" "$@" >"$T/stdout" 2>"$T/stderr"
  rc=$?
  secs=$((SECONDS - t0))
  out=$(cat "$T/stdout")
  err=$(cat "$T/stderr")
}

check() {  # check WHAT CONDITION...: records a failure with WHAT when the condition fails
  local what=$1
  shift
  if ! "$@"; then
    fail=$((fail + 1))
    echo "FAIL [$CASE]: $what"
    echo "  exit $rc after ${secs}s; stdout:"
    echo "$out" | head -20 | sed 's/^/    /'
    echo "  stderr (head):"
    echo "$err" | head -10 | sed 's/^/    /'
  fi
}
has() { [[ "$1" == *"$2"* ]]; }

# Nothing left running, no scratch directory left, and (for run) a finished report.
clean_end() {
  local left
  sleep 0.3  # a killed group's last members are reaped by init
  left=$(leftovers)
  check "no process of the run left running (found: $left)" [ -z "$left" ]
  check "the hosts' scratch directories removed ($(ls "$T/tmp"))" [ -z "$(ls -A "$T/tmp")" ]
}
run_finished() {  # run_finished DIR: summary.json complete, every planned pair recorded once
  local dir=$1
  check "summary.json written and complete" python3 - "$dir" <<'PY'
import json, sys
d = sys.argv[1]
s = json.load(open(d + "/summary.json"))
lines = [json.loads(l) for l in open(d + "/results.jsonl")]
keys = [(r["case"], r["backend"]) for r in lines]
assert s["complete"] is True, s["complete"]
assert len(keys) == len(set(keys)), "a record written twice"
assert all("FORGED" not in r for r in lines), "a forged record"
PY
}
lock_holder() {  # lock_holder DIR: the pid in DIR's lock file, once a run has written it
  for _ in $(seq 100); do
    grep -q "pid" "$1/.convcheck.lock" 2>/dev/null && break
    sleep 0.1
  done
  sed -n 's/^pid \([0-9]*\),.*/\1/p' "$1/.convcheck.lock"
}
# probe_run NAME [ARGS...]: `run` of the one-case suite on probe NAME into $T/r (fresh), which must
# pass and finish with its report; sets o to the record's captured output.
probe_run() {
  local name=$1
  shift
  rm -rf "$T/r"
  cc run --suite "$T/suite.txt" --backends "plugin:$F/$name.so" --out "$T/r" "$@"
  check "$name $*: the run finished, exit 0" [ $rc -eq 0 ]
  check "$name $*: verdict pass" [ "$(record "$T/r" verdict)" = pass ]
  o=$(record "$T/r" output)
  run_finished "$T/r"
}
record() {  # record DIR FIELD: the first record's field
  python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]+"/results.jsonl").readline()).get(sys.argv[2], ""))' "$1" "$2"
}

# What the default sandbox applies here (convcheck list), for the skips.
listing=$("$CC" list 2>/dev/null)
active=$(sed -n 's/^plugin sandbox: //p' <<<"$listing")
why_not=$(sed -n 's/^  \([a-z_]* unavailable: .*\)/\1/p' <<<"$listing" | tr '\n' ';')
needs() {  # needs PROTECTION: skip the case unless the default sandbox applies it
  local a=${active%%; not active*}
  if [[ " $a " != *" $1 "* ]]; then
    # A skip never hides a failure of the parts that could run.
    [ $fail -eq 0 ] || exit 1
    echo "SKIP [$CASE]: this machine's plugin sandbox lacks $1 ($active) ${why_not}"
    exit 77
  fi
}

case $CASE in
  fork_child | daemon)
    needs seccomp
    probe_run "$CASE"
    check "fork refused, said in the record" has "$o" "= -1 (Operation not permitted)"
    clean_end
    ;;
  fork_abort)
    # Strict: fork refused, then abort. Off: the child really runs, holding the host's socket and
    # pipe; the host's pidfd still says at once that it died, and its group (the child) is killed.
    for mode in off default; do
      [ $mode = off ] || needs seccomp
      args=()
      [ $mode = off ] && args=(--plugin-sandbox off)
      cc check "$SAME" --plugin-timeout 60 --backends "plugin:$F/fork_abort.so,plugin:$D/minimal.so" "${args[@]}"
      check "$mode: exit 1" [ $rc -eq 1 ]
      check "$mode: crashed naming SIGABRT" has "$out" "fork_abort.so: crashed [crashed] the plugin process died of SIGABRT"
      check "$mode: at once, not after the 60 s timeout (${secs}s)" [ $secs -lt 20 ]
      check "$mode: the next backend still judged" has "$out" "minimal.so: pass"
      [ $mode = off ] && check "off: the child was really forked" grep -qE 'probe: fork\(\) = [1-9]' "$T/stdout"
      clean_end
    done
    ;;
  signal_parent)
    needs seccomp
    probe_run signal_parent
    check "SIGKILL refused" has "$o" "kill(parent, SIGKILL) = -1 (Operation not permitted)"
    check "SIGSTOP refused" has "$o" "kill(parent, SIGSTOP) = -1 (Operation not permitted)"
    check "SIGTERM refused" has "$o" "kill(parent, SIGTERM) = -1 (Operation not permitted)"
    check "the group's SIGSTOP refused" has "$o" "kill(-parent's group, SIGSTOP) = -1"
    clean_end
    ;;
  stop_self)
    cc check "$SAME" --plugin-timeout 2 --backends "plugin:$F/stop_self.so,plugin:$D/minimal.so"
    check "exit 1" [ $rc -eq 1 ]
    check "timeout naming the stop" has "$out" "stop_self.so: timeout [timeout]"
    check "the stop named" has "$out" "stopped by SIGSTOP"
    check "the next backend still judged" has "$out" "minimal.so: pass"
    clean_end
    ;;
  memory_hog)
    needs address_space_limit
    cc check "$SAME" --max-bytes 256M --backends "plugin:$F/memory_hog.so"
    check "exit 1" [ $rc -eq 1 ]
    check "crashed naming SIGABRT" has "$out" "memory_hog.so: crashed [crashed] the plugin process died of SIGABRT"
    check "the limit named" has "$out" "RLIMIT_AS, --max-bytes + 1 GiB"
    check "the failed allocation in its output" has "$out" "probe: malloc failed after"
    clean_end
    ;;
  flood)
    probe_run flood
    check "the record says how much was cut" has "$o" "bytes of output; the last 65536 kept]"
    check "the record keeps the tail" has "$o" "probe: flood done"
    check "the record is capped (${#o} bytes)" [ ${#o} -le 66000 ]
    n=$(($(wc -c <"$T/stdout") + $(wc -c <"$T/stderr")))
    check "convcheck's own output stays small ($n bytes)" [ $n -lt 16384 ]
    clean_end
    ;;
  proc_escape)
    # Landlock's ptrace scope closes /proc/PARENT (strict); without it, a host run by root has
    # dropped every capability, which the kernel's ptrace check also refuses (basic as root).
    needs landlock_scope
    modes=(strict)
    [ "$(id -u)" = 0 ] && modes+=(basic)
    for mode in "${modes[@]}"; do
      probe_run proc_escape --plugin-sandbox "$mode"
      check "$mode: results.jsonl not reached" has "$o" "results.jsonl not found"
      check "$mode: no forged line" [ "$(grep -c FORGED "$T/r/results.jsonl")" -eq 0 ]
      clean_end
    done
    ;;
  write_outside)
    needs landlock_writes
    probe_run write_outside
    check "its scratch directory is writable" grep -qE 'open\(scratch/inside.txt\) = [0-9]+ \(ok\)' <<<"$o"
    check "the write outside refused" has "$o" 'open($CONVCHECK_PROBE_DIR/escaped.txt) = -1 (Permission denied)'
    check "no file outside" [ ! -e "$T/outside/escaped.txt" ]
    clean_end
    ;;
  close_fds)
    cc check "$SAME" --backends "plugin:$F/close_fds.so,plugin:$D/minimal.so"
    check "exit 1" [ $rc -eq 1 ]
    check "crashed: the host could not answer" has "$out" "close_fds.so: crashed [crashed] the plugin process exited with status 3"
    check "the next backend still judged" has "$out" "minimal.so: pass"
    clean_end
    ;;
  threads)
    cc check "$SAME" --backends "plugin:$F/threads.so"
    check "exit 0" [ $rc -eq 0 ]
    check "threads work" has "$out" "threads made) = 4"
    clean_end
    ;;
  one_run_per_out)
    # A run kept busy by a plugin that stops itself (2 s per call), and a second run, a resume and a
    # merge into its directory meanwhile: each refused with exit 2 naming the holder.
    printf '%s --fill exact\n%s --fill real\n' "$SAME" "$SAME" >"$T/two.txt"
    env CONVCHECK_PROBE_TAG="$TAG" TMPDIR="$T/tmp" timeout -k 5 120 "$CC" run --suite "$T/two.txt" \
      --backends "plugin:$F/stop_self.so" --plugin-timeout 2 --out "$T/r" >"$T/first" 2>&1 &
    first=$!
    holder=$(lock_holder "$T/r")
    for second in "run --suite $T/two.txt --backends plugin:$F/stop_self.so --out $T/r" \
      "run --suite $T/two.txt --backends plugin:$F/stop_self.so --out $T/r --resume"; do
      # shellcheck disable=SC2086
      cc $second
      check "second '$second': exit 2" [ $rc -eq 2 ]
      check "the holder named" has "$err" "is in use by another convcheck process (pid $holder, run"
    done
    cc run --suite "$T/two.txt" --backends "plugin:$F/stop_self.so" --shard 1/2 --out "$T/shard" \
      --plugin-timeout 1
    cc report merge "$T/shard" --out "$T/r"
    check "report merge into it: exit 2 naming the holder" has "$rc $err" "2 "
    check "report merge: the holder named" has "$err" "(pid $holder, run"
    cc fuzz --backends reference --cases 3 --out "$T/r"
    check "fuzz --out into it: exit 2 naming the holder" has "$rc $err" "2 "
    check "fuzz: the holder named" has "$err" "(pid $holder, run"
    wait $first
    rc=$?
    check "the first run finished (exit 1: timeouts)" [ $rc -eq 1 ]
    run_finished "$T/r"
    # A killed run's lock is taken over: kill one, then --resume it.
    env CONVCHECK_PROBE_TAG="$TAG" TMPDIR="$T/tmp" timeout -k 5 120 "$CC" run --suite "$T/two.txt" \
      --backends "plugin:$F/stop_self.so" --plugin-timeout 2 --out "$T/k" >/dev/null 2>&1 &
    started=$!
    victim=$(lock_holder "$T/k")
    # Only a process of this test: it carries the tag.
    if leftovers | grep -qx "$victim"; then kill -KILL "$victim"; fi
    wait "$started" 2>/dev/null
    cc run --suite "$T/two.txt" --backends "plugin:$F/stop_self.so" --plugin-timeout 2 --out "$T/k" --resume
    check "the stale lock taken over: --resume exits 1 (timeouts)" [ $rc -eq 1 ]
    run_finished "$T/k"
    clean_end
    ;;
  thread_bounds)
    cc bench --suite "$T/suite.txt" --backends reference,optimized --threads 100000
    check "bench --threads 100000: exit 2" [ $rc -eq 2 ]
    check "bench --threads 100000: the cap named" has "$err" "expected a thread count from 1 to"
    cc bench --suite "$T/suite.txt" --backends reference,optimized --threads 0
    check "bench --threads 0: exit 2" [ $rc -eq 2 ]
    # The environment's thread settings: OMP_NUM_THREADS a list, OMP_THREAD_LIMIT one count
    # (libgomp ignores "4,2" there and sets no limit).
    for setting in OMP_NUM_THREADS=100000 OMP_NUM_THREADS=abc OMP_NUM_THREADS=4,100000 \
      OMP_NUM_THREADS=0 OMP_THREAD_LIMIT=4,2 OMP_THREAD_LIMIT=0 OMP_THREAD_LIMIT=abc \
      OMP_THREAD_LIMIT=100000; do
      env "$setting" CONVCHECK_PROBE_TAG="$TAG" timeout 60 "$CC" check "$SAME" \
        --backends reference >"$T/stdout" 2>"$T/stderr"
      rc=$?
      err=$(cat "$T/stderr")
      check "$setting: exit 2" [ $rc -eq 2 ]
      check "$setting: named" has "$err" "$setting"
    done
    for setting in OMP_NUM_THREADS=2 OMP_NUM_THREADS=2,1 OMP_THREAD_LIMIT=2; do
      env "$setting" timeout 60 "$CC" check "$SAME" --backends reference >/dev/null 2>&1
      rc=$?
      check "$setting: exit 0" [ $rc -eq 0 ]
    done
    for v in 1e300 inf -1 abc; do
      cc check "$SAME" --backends reference --plugin-timeout "$v"
      check "--plugin-timeout $v: exit 2" [ $rc -eq 2 ]
    done
    env CONVCHECK_PLUGIN_TIMEOUT=abc timeout 60 "$CC" check "$SAME" --backends reference >/dev/null 2>"$T/stderr"
    rc=$?
    check "CONVCHECK_PLUGIN_TIMEOUT=abc: exit 2" [ $rc -eq 2 ]
    cc bench --suite "$T/suite.txt" --backends reference,optimized --reps 2000000000
    check "bench --reps 2e9: exit 2" [ $rc -eq 2 ]
    cc fuzz --backends reference --time 1e300
    check "fuzz --time 1e300: exit 2" [ $rc -eq 2 ]
    check "fuzz --time 1e300: the bound named" has "$err" "at most 604800 (a week)"
    cc check "$SAME" --backends reference --plugin-sandbox lax
    check "--plugin-sandbox lax: exit 2 naming the modes" has "$rc $err" "2 "
    check "--plugin-sandbox lax: the modes named" has "$err" "expected strict, basic or off"
    clean_end
    ;;
  report_rename)
    # A kill between write_file_atomic's mkstemp and its rename leaves ".NAME.tmp-XXXXXX" files:
    # planted here as such a kill leaves them, they are removed by the next resume.
    cc run --suite "$T/suite.txt" --backends reference --out "$T/r"
    check "first run: exit 0" [ $rc -eq 0 ]
    for f in summary.json junit.xml report.html run.json; do echo partial >"$T/r/.$f.tmp-Ab12Cd"; done
    echo partial >"$T/r/.convcheck-write-test-Zz9Yy8"
    cc run --suite "$T/suite.txt" --backends reference --out "$T/r" --resume
    check "resume: exit 0" [ $rc -eq 0 ]
    check "resume: says it removed them" has "$err" "removed 5 temporary files of an interrupted report write"
    check "no temporary left ($(ls -A "$T/r" | grep tmp))" [ -z "$(ls -A "$T/r" | grep -e '\.tmp-' -e write-test)" ]
    run_finished "$T/r"
    # And real kills: `report html` killed (SIGKILL) at spread-out moments of its writes, then a
    # resume; whatever each kill left, nothing is left after the resume, and the report is whole.
    cc run --suite smoke --backends reference --out "$T/s"
    check "smoke run: exit 0" [ $rc -eq 0 ]
    for delay in 0.02 0.05 0.1 0.2 0.3; do
      timeout --foreground -s KILL "$delay" "$CC" report html "$T/s" >/dev/null 2>&1
    done
    cc run --suite smoke --backends reference --out "$T/s" --resume
    check "resume after the kills: exit 0" [ $rc -eq 0 ]
    check "no temporary left after the kills" [ -z "$(ls -A "$T/s" | grep -e '\.tmp-' -e write-test)" ]
    run_finished "$T/s"
    ;;
  *)
    echo "unknown case $CASE"
    exit 2
    ;;
esac
if [ $fail -eq 0 ]; then echo "ok [$CASE]"; else echo "$fail check(s) failed [$CASE]"; fi
[ $fail -eq 0 ]
