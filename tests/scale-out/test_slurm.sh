#!/usr/bin/env bash
# The Slurm recipe on a real Slurm (issue 20 item 6): a one-node cluster on localhost (Debian's
# slurm-wlm 22.05 and munge; its own config, key, ports, state and PIDs under a temporary directory;
# the daemons in the foreground, no systemd; all stopped at the end), convcheck installed into a
# temporary prefix with `cmake --install`, and the recipe submitted as docs/scale-out.md says, from
# an unrelated directory: `<prefix>/share/convcheck/scale-out/slurm/submit.sh` on the smoke suite
# with 4 shards. While the shards run, one task is requeued (`scontrol requeue`, as a preemption
# does) and another gets the time limit's SIGTERM (`scancel --signal=TERM --batch`, what
# `--signal=B:TERM@120` sends); both must come back and resume, the merge must run once every shard
# is complete, the logs must keep both attempts, and the merged summary.json must equal an unsharded
# run's byte for byte. A second submission with a bad suite must stop the array (exit 2 policy) and
# cancel the merge instead of retrying. A third finds its shard directory locked by another process
# (a previous attempt still ending, recording a few cases) and must wait for it and resume.
#
# Slurm holds a requeued job for 120 s before it may start again (its fixed requeue delay); the
# test releases it at once with `scontrol update StartTime=now`, which a user could do too.
# Each shard runs through a "slow node" wrapper that stops convcheck 9/10 of the time, so that the
# smoke suite's shards (under a second each) are still running when the test interrupts them.
#
# Skipped (exit 77, with the reason) when Slurm or munge is not installed (scripts/install-deps.sh
# installs them) or the daemons cannot start here; never passed without running.
#   test_slurm.sh BUILD_DIR
set -u
BUILD=${1:?usage: test_slurm.sh BUILD_DIR}
. "$(dirname "$0")/../lib.sh" # $T, ok, bad
skip() {
  echo "SKIPPED: $*"
  exit 77
}
for c in slurmctld slurmd munged sbatch scontrol squeue scancel; do
  command -v "$c" >/dev/null || skip "$c not installed (scripts/install-deps.sh installs slurm-wlm and munge)"
done

# --- a one-node cluster --------------------------------------------------------------------------
H=$(hostname -s)
mkdir -p "$T/munge" "$T/spool" "$T/state" "$T/log"
chmod 711 "$T" "$T/munge"
head -c 1024 /dev/urandom >"$T/munge/munge.key" && chmod 400 "$T/munge/munge.key"
pids=()
cleanup() {
  # Jobs first (their processes are the cluster's children), then the daemons.
  if [ -n "${SLURM_CONF:-}" ]; then scancel --full "--user=$(id -un)" 2>/dev/null; fi
  for f in "$T/slurmd.pid" "$T/slurmctld.pid" "$T/munge/munged.pid"; do
    [ -s "$f" ] && kill "$(cat "$f")" 2>/dev/null
  done
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  sleep 1
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  rm -rf "$T"
}
trap cleanup EXIT
munged --key-file="$T/munge/munge.key" --socket="$T/munge/munge.socket" \
  --pid-file="$T/munge/munged.pid" --log-file="$T/log/munged.log" --seed-file="$T/munge/seed" \
  --force >/dev/null 2>&1 || skip "munged does not start here: $(tail -2 "$T/log/munged.log" 2>/dev/null)"
# Ports: two free ones above 20000 (another cluster on this host keeps its own).
read -r ctld_port d_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
cat >"$T/slurm.conf" <<EOF
ClusterName=convcheck-test
SlurmctldHost=$H(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
AuthType=auth/munge
AuthInfo=socket=$T/munge/munge.socket
CredType=cred/munge
SlurmUser=$(id -un)
SlurmdUser=$(id -un)
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/log/slurmctld.log
SlurmdLogFile=$T/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
JobRequeue=1
MinJobAge=3600
KillWait=30
NodeName=$H NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=$H Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$T/slurm.conf
slurmctld -D -f "$SLURM_CONF" >"$T/log/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -N "$H" -f "$SLURM_CONF" >"$T/log/slurmd.out" 2>&1 &
pids+=($!)
for _ in $(seq 1 60); do
  [ "$(sinfo -h -o %T 2>/dev/null)" = idle ] && break
  sleep 1
done
[ "$(sinfo -h -o %T 2>/dev/null)" = idle ] ||
  skip "the one-node cluster did not come up: $(tail -3 "$T/log/slurmctld.log" "$T/log/slurmd.log" 2>&1 | tr '\n' ' ')"
ok

# --- convcheck installed, and a slow node --------------------------------------------------------
P=$T/prefix
cmake --install "$BUILD" --prefix "$P" >"$T/install.log" 2>&1 || {
  bad "cmake --install failed: $(tail -3 "$T/install.log")"
  echo "slurm: $pass passed, $fail failed"
  exit 1
}
cat >"$T/slow-convcheck" <<EOF
#!/bin/bash
# convcheck on a slow node: stopped 9/10 of the time until a SIGTERM, which is passed on and
# lets it run at full speed (so that it ends its case well inside KillWait and is never left
# stopped by a wrapper that Slurm killed).
"$P/bin/convcheck" "\$@" &
c=\$!
slow=1
trap 'slow=0; kill -CONT \$c 2>/dev/null; kill -TERM \$c 2>/dev/null' TERM
while kill -0 \$c 2>/dev/null; do
  sleep 0.03; [ \$slow = 1 ] && kill -STOP \$c 2>/dev/null; sleep 0.3; kill -CONT \$c 2>/dev/null
done
wait \$c
EOF
chmod +x "$T/slow-convcheck"

# --- the recipe, from an unrelated directory ------------------------------------------------------
mkdir -p "$T/elsewhere" && cd "$T/elsewhere" || exit 1
SUBMIT=$P/share/convcheck/scale-out/slurm/submit.sh
state() { scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | head -1; }
# The recipe submitted as run NAME (submit.sh's options after it): sets out, jid (the shards'
# array) and mid (the merge).
submit() {
  out=$("$SUBMIT" --out "$T/runs" --name "$@" 2>&1)
  jid=$(sed -n 's/^shards: job \([0-9]*\) .*/\1/p' <<<"$out")
  mid=$(sed -n 's/.*; merge: job \([0-9]*\)$/\1/p' <<<"$out")
}
# Until the merge has ended, at most $1 seconds.
await_merge() {
  for _ in $(seq 1 "$1"); do
    case "$(state "$mid")" in COMPLETED | FAILED | CANCELLED | TIMEOUT) break ;; esac
    sleep 1
  done
}
submit smoke4 --shards 4 --cpus 1 --suite smoke --backends reference,optimized --time 00:20:00 \
  --convcheck "$T/slow-convcheck"
if [ -n "$jid" ] && [ -n "$mid" ]; then ok; else
  bad "submit.sh: $out"
  echo "slurm: $pass passed, $fail failed"
  exit 1
fi
R=$T/runs/smoke4

# What a failure needs to be understood: every task's state and exit code, each log's attempts.
explain() {
  scontrol show job "$jid" 2>&1 | sed -n 's/^JobId=\([^ ]*\) .*ArrayTaskId=\([^ ]*\).*/    task \2 (job \1)/p;
    s/^ *\(JobState=[^ ]*\) .*/      \1/p; s/^ *\(Requeue=.*ExitCode=[^ ]*\).*/      \1/p'
  for f in "$R"/logs/*.log; do
    echo "    $f:"
    grep -v "^run: [0-9]*/" "$f" | grep -v "^run: \(suite\|writing\|reports\)" | tail -8 | sed 's/^/      /'
  done
}
# until TASK runs and has recorded a case (at most 120 s)
wait_recording() {
  for _ in $(seq 1 1200); do
    [ "$(state "${jid}_$1")" = RUNNING ] && [ -s "$R/shard-$1/results.jsonl" ] && return 0
    sleep 0.1
  done
  return 1
}
# releases a requeued task from Slurm's 120 s requeue hold once it is pending again
release() {
  for _ in $(seq 1 300); do
    if [ "$(state "${jid}_$1")" = PENDING ]; then
      scontrol update "JobId=${jid}_$1" StartTime=now && return 0
    fi
    sleep 0.1
  done
  return 1
}
if wait_recording 2 && scontrol requeue "${jid}_2" && release 2; then ok; else
  bad "could not requeue task 2 mid-run (state $(state "${jid}_2"))"
fi
if wait_recording 3 && scancel --signal=TERM --batch "${jid}_3" && release 3; then ok; else
  bad "could not SIGTERM task 3 mid-run (state $(state "${jid}_3"))"
fi

await_merge 900 # at most 15 minutes
if [ "$(state "$mid")" = COMPLETED ]; then ok; else
  bad "merge job $mid: $(state "$mid"); $(tail -3 "$R/logs/merge.log" 2>&1 | tr '\n' ' ')"
  explain
fi
for k in 2 3; do
  if grep -q "shard $k/4: attempt 1 " "$R/logs/shard-$k.log" &&
    grep -q "shard $k/4: attempt 2 .*resuming" "$R/logs/shard-$k.log" &&
    grep -q "requeueing to resume\|JOB REQUEUE" "$R/logs/shard-$k.log"; then ok; else
    bad "shard $k's log does not hold both attempts (the second resuming):"
    sed 's/^/    /' "$R/logs/shard-$k.log" | grep -v "^    run: [0-9]*/" | head -12
  fi
done
# No record twice, none lost: the merge and an unsharded run agree byte for byte.
OMP_NUM_THREADS=1 "$P/bin/convcheck" run --suite smoke --backends reference,optimized \
  --out "$T/whole" >/dev/null 2>&1
if cmp -s "$T/whole/summary.json" "$R/merged/summary.json"; then ok; else
  bad "merged summary.json differs from the unsharded run's"
  diff "$T/whole/summary.json" "$R/merged/summary.json" 2>&1 | head -8 | sed 's/^/    /'
fi

# --- a deterministic failure stops the array and the merge ----------------------------------------
submit bad --shards 3 --cpus 1 --suite no_such_suite --backends reference \
  --convcheck "$P/bin/convcheck"
await_merge 120
if [ "$(state "$mid")" = CANCELLED ] && grep -q "deterministic failure" "$T"/runs/bad/logs/shard-*.log &&
  ! squeue -h -j "$jid" | grep -q .; then ok; else
  bad "bad suite: merge $(state "$mid"), array still queued: $(squeue -h -j "$jid" | wc -l) tasks"
fi

# --- a shard directory still locked (a previous attempt ending) is waited for, not a failure ----
# Another process holds shard 1's output lock when the task starts, and records cases there
# before it lets go (a previous attempt finishing its case in flight): the task must wait, then
# resume (deciding on --resume only after the wait) and complete. convcheck alone refuses a
# locked directory with exit 2, which cancelled the array; resume decided before the wait, it
# refuses a directory that gained results ("pass --resume"), exit 2 again.
OMP_NUM_THREADS=1 "$P/bin/convcheck" run --suite smoke --backends reference --shard 1/1 \
  --out "$T/partial" >/dev/null 2>&1
head -n 5 "$T/partial/results.jsonl" >"$T/partial/r" && mv "$T/partial/r" "$T/partial/results.jsonl"
R=$T/runs/locked
mkdir -p "$R/shard-1" "$R/logs"
# The holder: until the task's log says it waits (at most 60 s), then the "previous attempt's"
# records, then the lock is let go.
flock "$R/shard-1/.convcheck.lock" bash -c '
  for _ in $(seq 1 600); do grep -q "is held" "$1" 2>/dev/null && break; sleep 0.1; done
  cp "$2"/run.json "$2"/results.jsonl "$3"/' _ "$R/logs/shard-1.log" "$T/partial" "$R/shard-1" &
pids+=($!)
sleep 0.5
submit locked --shards 1 --cpus 1 --suite smoke --backends reference \
  --convcheck "$P/bin/convcheck"
await_merge 120
if [ "$(state "$mid")" = COMPLETED ] && grep -q "is held .*waiting" "$R/logs/shard-1.log" &&
  grep -q "attempt 1 on .*resuming" "$R/logs/shard-1.log" &&
  grep -q "resuming: 5 cases already recorded" "$R/logs/shard-1.log" &&
  grep -q "complete (convcheck exit 0)" "$R/logs/shard-1.log"; then ok; else
  bad "a locked shard directory: merge $(state "$mid")"
  explain
fi
echo "slurm: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
