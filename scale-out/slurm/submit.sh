#!/bin/bash
# Submits a sharded convcheck run to Slurm: a job array of N shards (shards.sbatch) and a merge job
# (merge.sbatch) that runs once every shard has completed. docs/scale-out.md documents it.
#
#   submit.sh --out /shared/convcheck [--name RUN] [--shards 8] [--cpus 16] [--suite conformance]
#             [--backends reference,optimized] [--time 01:00:00] [--partition P] [--convcheck PATH]
#             [-- extra sbatch options for both jobs]
#
# Every option also reads an environment variable (CONVCHECK_OUT, CONVCHECK_RUN, CONVCHECK_SHARDS,
# CONVCHECK_CPUS, CONVCHECK_SUITE, CONVCHECK_BACKENDS, CONVCHECK_TIME, CONVCHECK_PARTITION,
# CONVCHECK; and CONVCHECK_LOCK_WAIT, the seconds a shard waits for its output directory's lock,
# 300 by default: shards.sbatch). The run's files go to OUT/RUN: shard-K/ per shard, merged/ and
# logs/. Submitting again with the same --out and --name continues the shards that exist (each
# resumes) and merges again into a fresh merged/ (the previous one is moved aside).
#
# The convcheck binary: --convcheck, else the installed tree this script belongs to
# (<prefix>/share/convcheck/scale-out/slurm -> <prefix>/bin/convcheck), else a source checkout's
# build/convcheck, else `convcheck` on PATH;
# always made absolute here, so the jobs never depend on the directory they are submitted from.
# An --export among the sbatch options is merged with the variables the jobs need, not put after
# them (sbatch would keep only the last): --export=NONE passes those alone.
set -euo pipefail

usage() { sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; }
die() {
  echo "submit.sh: $*" >&2
  exit 2
}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${CONVCHECK_OUT:-}
run=${CONVCHECK_RUN:-}
shards=${CONVCHECK_SHARDS:-8}
cpus=${CONVCHECK_CPUS:-16}
suite=${CONVCHECK_SUITE:-conformance}
backends=${CONVCHECK_BACKENDS:-reference,optimized}
time_limit=${CONVCHECK_TIME:-01:00:00}
partition=${CONVCHECK_PARTITION:-}
convcheck=${CONVCHECK:-}
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --name) run=${2:?--name needs a value}; shift 2 ;;
    --shards) shards=${2:?--shards needs a count}; shift 2 ;;
    --cpus) cpus=${2:?--cpus needs a count}; shift 2 ;;
    --suite) suite=${2:?--suite needs a name or path}; shift 2 ;;
    --backends) backends=${2:?--backends needs a list}; shift 2 ;;
    --time) time_limit=${2:?--time needs a limit}; shift 2 ;;
    --partition) partition=${2:?--partition needs a name}; shift 2 ;;
    --convcheck) convcheck=${2:?--convcheck needs a path}; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    --) shift; extra=("$@"); break ;;
    *) die "unknown option '$1' (--help lists them)" ;;
  esac
done

# sbatch's --export among the extra options: merged below.
user_export=
rest=()
for ((i = 0; i < ${#extra[@]}; i++)); do
  case "${extra[i]}" in
    --export=*) user_export=${extra[i]#--export=} ;;
    --export)
      i=$((i + 1))
      user_export=${extra[i]-}
      ;;
    *)
      rest+=("${extra[i]}")
      continue
      ;;
  esac
  [ -n "$user_export" ] || die "--export after -- needs a value"
done
extra=("${rest[@]+"${rest[@]}"}")
[ -n "$out" ] || die "--out DIR is required: a directory every node sees (a shared file system)"
[[ "$shards" =~ ^[1-9][0-9]*$ ]] || die "--shards must be a positive integer, got '$shards'"
[[ "$cpus" =~ ^[1-9][0-9]*$ ]] || die "--cpus must be a positive integer, got '$cpus'"
command -v sbatch > /dev/null || die "sbatch not found: run this on a Slurm submit host"

if [ -z "$convcheck" ]; then
  if [ -x "$here/../../../../bin/convcheck" ]; then
    convcheck=$here/../../../../bin/convcheck
  elif [ -x "$here/../../build/convcheck" ]; then  # a source checkout with its build
    convcheck=$here/../../build/convcheck
  else
    convcheck=$(command -v convcheck || true)
  fi
fi
[ -n "$convcheck" ] && [ -x "$convcheck" ] ||
  die "convcheck not found: pass --convcheck /absolute/path/to/convcheck (or install it: cmake --install)"
convcheck=$(realpath "$convcheck")
# A suite given as a file must be read from the same place by every node.
if [ -f "$suite" ]; then suite=$(realpath "$suite"); fi

mkdir -p "$out"
out=$(realpath "$out")
run=${run:-$(basename "$suite" .txt)-$(date -u +%Y%m%dT%H%M%SZ)}
run_dir=$out/$run
mkdir -p "$run_dir/logs"
if [ -e "$run_dir/merged" ]; then mv "$run_dir/merged" "$run_dir/merged.$(date -u +%Y%m%dT%H%M%SZ)"; fi

common=(--chdir "$run_dir" --parsable)
[ -n "$partition" ] && common+=(--partition "$partition")
export CONVCHECK="$convcheck" CONVCHECK_SUITE="$suite" CONVCHECK_BACKENDS="$backends" \
  CONVCHECK_SHARDS="$shards" CONVCHECK_RUN_DIR="$run_dir"
ours=CONVCHECK,CONVCHECK_SUITE,CONVCHECK_BACKENDS,CONVCHECK_SHARDS,CONVCHECK_RUN_DIR
[ -n "${CONVCHECK_LOCK_WAIT+set}" ] && ours+=,CONVCHECK_LOCK_WAIT
# sbatch takes the last --export it is given, so a user's own (after --) would replace ours and the
# jobs would lose the variables they run on. Theirs is merged into ours instead and passed once:
# ALL or a list of names keeps what it says plus ours; NONE becomes ours alone (sbatch refuses names
# beside NONE or NIL; a list without ALL passes only those and SLURM_*, as NONE does).
case "${user_export^^}" in # sbatch reads its keywords in any case
  "") vars=ALL,$ours ;;
  NONE | NIL) vars=$ours ;;
  *) vars=$user_export,$ours ;;
esac

jid=$(sbatch "${common[@]}" --export="$vars" --array="1-$shards" --cpus-per-task="$cpus" \
  --time="$time_limit" --output="$run_dir/logs/shard-%a.log" ${extra[@]+"${extra[@]}"} "$here/shards.sbatch")
jid=${jid%%;*}
# afterok on an array waits for every task; a task that can never succeed cancels the merge
# (--kill-on-invalid-dep) instead of leaving it pending for ever.
mid=$(sbatch "${common[@]}" --export="$vars" --dependency="afterok:$jid" --kill-on-invalid-dep=yes \
  --output="$run_dir/logs/merge.log" ${extra[@]+"${extra[@]}"} "$here/merge.sbatch")
mid=${mid%%;*}
echo "run: $run_dir"
echo "shards: job $jid (array 1-$shards, $cpus CPUs each); merge: job $mid"
echo "report: $run_dir/merged/report.html (when job $mid has completed)"
