#!/bin/bash
# Runs a sharded convcheck run on Kubernetes (docs/scale-out.md): renders pvc.yaml,
# shards-job.yaml and merge-job.yaml with the values below, applies the claim (if absent) and the
# shards Job, waits until the Job is Complete or Failed (a failed Job ends the wait at once, with
# its reason), then runs the merge Job and prints its log. Exit: the merge's status (0 passed,
# 1 failures in the report), 2 bad usage or a failed Job, 3 no cluster.
#
#   submit.sh --image REGISTRY/convcheck:TAG --run NAME [--shards 8] [--cpus 16] [--memory 32Gi]
#             [--suite conformance] [--backends reference,optimized] [--retries 3]
#             [--pvc convcheck-reports] [--storage 20Gi] [--timeout 7200] [--render-only DIR]
#
# Each option also reads an environment variable (CONVCHECK_IMAGE, CONVCHECK_RUN, CONVCHECK_SHARDS,
# CONVCHECK_CPUS, CONVCHECK_MEMORY, CONVCHECK_SUITE, CONVCHECK_BACKENDS, CONVCHECK_RETRIES,
# CONVCHECK_PVC, CONVCHECK_STORAGE). --render-only writes the three manifests to DIR and stops.
# The image holds an installed convcheck (cmake --install --prefix /usr/local): its suites are
# found beside the binary.
set -euo pipefail
die() {
  echo "submit.sh: $*" >&2
  exit 2
}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
IMAGE=${CONVCHECK_IMAGE:-}
RUN=${CONVCHECK_RUN:-}
N=${CONVCHECK_SHARDS:-8}
CPUS=${CONVCHECK_CPUS:-16}
MEMORY=${CONVCHECK_MEMORY:-32Gi}
SUITE=${CONVCHECK_SUITE:-conformance}
BACKENDS=${CONVCHECK_BACKENDS:-reference,optimized}
RETRIES=${CONVCHECK_RETRIES:-3}
PVC=${CONVCHECK_PVC:-convcheck-reports}
STORAGE=${CONVCHECK_STORAGE:-20Gi}
timeout_s=7200
render_only=
while [ $# -gt 0 ]; do
  case "$1" in
    --image) IMAGE=${2:?}; shift 2 ;;
    --run) RUN=${2:?}; shift 2 ;;
    --shards) N=${2:?}; shift 2 ;;
    --cpus) CPUS=${2:?}; shift 2 ;;
    --memory) MEMORY=${2:?}; shift 2 ;;
    --suite) SUITE=${2:?}; shift 2 ;;
    --backends) BACKENDS=${2:?}; shift 2 ;;
    --retries) RETRIES=${2:?}; shift 2 ;;
    --pvc) PVC=${2:?}; shift 2 ;;
    --storage) STORAGE=${2:?}; shift 2 ;;
    --timeout) timeout_s=${2:?}; shift 2 ;;
    --render-only) render_only=${2:?}; shift 2 ;;
    -h | --help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1' (--help lists them)" ;;
  esac
done
[ -n "$IMAGE" ] || die "--image is required (an image with convcheck installed)"
[[ "$RUN" =~ ^[a-z0-9]([-a-z0-9]{0,40}[a-z0-9])?$ ]] ||
  die "--run must be a lowercase DNS label of at most 42 characters (it names the Jobs), got '$RUN'"
for v in N CPUS RETRIES timeout_s; do
  [[ "${!v}" =~ ^[0-9]+$ ]] || die "$v must be a non-negative integer, got '${!v}'"
done
[ "$N" -ge 1 ] && [ "$CPUS" -ge 1 ] || die "--shards and --cpus must be at least 1"

render() {  # render TEMPLATE > OUT: substitutes exactly the variables above
  local s=$(<"$here/$1") v
  for v in RUN N CPUS MEMORY SUITE BACKENDS IMAGE PVC RETRIES STORAGE; do
    s=${s//"\${$v}"/${!v}}
  done
  printf '%s\n' "$s"
}
out=${render_only:-$(mktemp -d)}
mkdir -p "$out"
for f in pvc.yaml shards-job.yaml merge-job.yaml; do render "$f" >"$out/$f"; done
if [ -n "$render_only" ]; then
  echo "rendered $out/pvc.yaml, shards-job.yaml, merge-job.yaml"
  exit 0
fi
command -v kubectl >/dev/null || { echo "submit.sh: kubectl not found" >&2; exit 3; }

# wait_job NAME: 0 when the Job is Complete, 1 when Failed (its reason printed), 2 on timeout.
# `kubectl wait --for=condition=complete` alone would sit out its whole timeout on a failed Job.
wait_job() {
  local end=$((SECONDS + timeout_s)) conds
  while [ "$SECONDS" -lt "$end" ]; do
    conds=$(kubectl get job "$1" -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type}{" "}{.reason}{" "}{.message}{"\n"}{end}')
    if grep -q '^Complete ' <<<"$conds"; then return 0; fi
    if grep -q '^Failed ' <<<"$conds"; then
      echo "submit.sh: job $1 failed: $(grep '^Failed ' <<<"$conds" | head -1)" >&2
      return 1
    fi
    sleep "${CONVCHECK_POLL_S:-10}"
  done
  echo "submit.sh: job $1 neither complete nor failed after ${timeout_s}s" >&2
  return 2
}

kubectl get pvc "$PVC" >/dev/null 2>&1 || kubectl apply -f "$out/pvc.yaml"
kubectl apply -f "$out/shards-job.yaml"
echo "shards: job convcheck-$RUN-shards ($N shards, $CPUS CPUs each); waiting"
wait_job "convcheck-$RUN-shards" || {
  echo "submit.sh: not merging; fix the cause and submit again with the same --run (shards resume)" >&2
  exit 2
}
kubectl delete job "convcheck-$RUN-merge" --ignore-not-found >/dev/null
kubectl apply -f "$out/merge-job.yaml"
rc=0
wait_job "convcheck-$RUN-merge" || rc=$?
kubectl logs "job/convcheck-$RUN-merge" || true
[ "$rc" -eq 0 ] && exit 0
# The merge Job's own exit code: 1 failures in the report, 2 a shard missing or incomplete.
code=$(kubectl get pods -l "job-name=convcheck-$RUN-merge" \
  -o jsonpath='{.items[0].status.containerStatuses[0].state.terminated.exitCode}' 2>/dev/null || true)
exit "${code:-2}"
