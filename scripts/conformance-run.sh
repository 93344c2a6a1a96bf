#!/usr/bin/env bash
# The main job's run step (scripts/main-job.sh builds, then calls this): the conformance suite on
# every available backend into OUT-DIR, continuing an unfinished run there (--resume) and replacing
# a finished one, then a one-paragraph summary.
#   bash scripts/conformance-run.sh CONVCHECK OUT-DIR
# CONVCHECK_LAUNCHER, when set, is a command convcheck is started under, e.g.
# "qemu-x86_64 -cpu Haswell": the CPU-model matrix (tests/isa/test_isa.sh) runs this very step on
# emulated CPUs. CONVCHECK_BACKENDS, when set, is the --backends list (default: every available
# backend); the matrix names the ones with run-time ISA dispatch. CONVCHECK_SUITE, when set, is the
# suite (default: conformance); the matrix's emulated models run `smoke`.
# Exit status: 0 when the report was written, whatever it found (its findings are the report:
# `convcheck run` itself exits 1 on a failing pair, for CI gating); the run's own code otherwise
# (2 bad input, 3 a backend unavailable, 130/143 interrupted: rerun to continue).
set -euo pipefail
cc=${1:?usage: conformance-run.sh CONVCHECK OUT-DIR}
out=${2:?usage: conformance-run.sh CONVCHECK OUT-DIR}
read -r -a launcher <<<"${CONVCHECK_LAUNCHER:-}"
resume=()
if [ -s "$out/results.jsonl" ]; then
  if grep -q '"complete": true' "$out/summary.json" 2>/dev/null; then
    rm -f "$out/results.jsonl" "$out/run.json" "$out/summary.json" "$out/junit.xml" "$out/report.html"
  else  # interrupted or killed: continue it
    resume=(--resume)
    echo "main job: continuing the unfinished run in $out"
  fi
fi
rc=0
backends=()
[ -n "${CONVCHECK_BACKENDS:-}" ] && backends=(--backends "$CONVCHECK_BACKENDS")
"${launcher[@]}" "$cc" run --suite "${CONVCHECK_SUITE:-conformance}" --out "$out" "${backends[@]}" "${resume[@]}" || rc=$?
if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
  echo "main job: convcheck run exited $rc" >&2
  exit "$rc"
fi
python3 - "$out/summary.json" "$out/run.json" "${CONVCHECK_SUITE:-conformance}" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
env = json.load(open(sys.argv[2]))["environment"]
v = s["verdicts"]
print("main job: %s, %d cases x %d backends (%s): %s" % (
    sys.argv[3], s["cases"]["recorded"], len(s["backends"]), ", ".join(b["name"] for b in s["backends"]),
    ", ".join("%d %s" % (n, k) for k, n in v.items() if n)))
print("  cpu: %s; kernels: %s" % (env.get("cpu_features", "?"), ", ".join(
    "%s %s" % kv for kv in env.get("kernel_isa", {}).items()) or "-"))
for name, counts in s["by_backend"].items():
    bad = counts["fail"] + counts["crashed"] + counts["timeout"]
    if bad:
        print("  %s: %d failing pairs (failures with repro lines in report.html)" % (name, bad))
for b in s["skipped_backends"]:
    print("  not run: %s (%s)" % (b["name"], b["reason"]))
if s["coverage"]["not_run"]:
    print("  classes with no case run: " + ", ".join(s["coverage"]["not_run"]))
PY
echo "main job: report in $out/report.html (also results.jsonl, summary.json, junit.xml)"
