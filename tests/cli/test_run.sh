#!/usr/bin/env bash
# `convcheck run` and `convcheck report` end to end (issue 6), and interruption (issue 8 item 4),
# on a small temporary suite:
#   - a run writes the four report files; results.jsonl has one record per (case, backend);
#     junit.xml is valid XML with consistent counts (python3's xml.etree)
#   - 3 shards merged give the same summary.json as the unsharded run (byte for byte)
#   - SIGINT mid-run: exit 130 after the case in flight, reports of what finished; --resume
#     completes it with the same summary.json as the uninterrupted run
#   - report diff: exit 1 against a run where a mutant stands in for a backend, 0 for two clean runs
#   - a truncated last line is tolerated (and repaired by --resume); a malformed line is exit 2
#   - bad input: an unwritable --out, results without --resume, another run's --resume, bad shard
#   - fuzz --shard partitions the case stream; fuzz SIGINT exits 130 and --resume continues
#   test_run.sh /path/to/convcheck
set -u
CC=${1:?usage: test_run.sh CONVCHECK}
. "$(dirname "$0")/../lib.sh"  # $T, ok, bad
# expect CODE NEEDLE -- ARGS...: convcheck ARGS exits CODE with NEEDLE in stdout+stderr.
expect() {
  local code=$1 needle=$2
  shift 3
  local out rc
  out=$("$CC" "$@" 2>&1)
  rc=$?
  if [ "$rc" -eq "$code" ] && [[ "$out" == *"$needle"* ]]; then ok; else
    bad "convcheck $* (want exit $code with '$needle'; got exit $rc)"
    echo "$out" | tail -6 | sed 's/^/    /'
  fi
}
same() {  # same FILE-A FILE-B WHAT
  if cmp -s "$1" "$2"; then ok; else
    bad "$3: $1 and $2 differ"
    diff "$1" "$2" | head -10 | sed 's/^/    /'
  fi
}

# A small suite: tiny problems of every op (three with SAME's odd padding element, which
# mutant:same_pad_before gets wrong: 5 cases), and four heavier ones that make the run last a second or two
# (one each per backend and op, so `report diff` has too few timed cases to judge performance).
S=$T/tiny.txt
cat >"$S" <<'EOF'
conv2d:input=1x5x5x2,filter=2x2x2x2,padding=SAME --tag odd_same
conv2d_backprop_input:input=2x12x12x16,filter=3x3x16x16,padding=SAME,dtype=f64 --fill real --tag heavy
conv2d_backprop_input:input=1x4x4x1,filter=2x2x1x1,padding=SAME --tag odd_same
conv2d_backprop_filter:input=2x12x12x16,filter=3x3x16x16,padding=SAME,dtype=f64 --fill real --tag heavy
conv2d_backprop_filter:input=1x5x4x2,filter=3x2x2x3,stride=2x1,format=NCHW,dtype=f16
conv2d_transpose:input=2x12x12x16,filter=3x3x16x16,stride=2x2,padding=SAME,dtype=f64 --fill real --tag heavy
conv2d_transpose:input=1x6x6x2,filter=3x3x2x2,stride=2x2,padding=1:0:1:0,dtype=i32
depthwise_conv2d:input=1x6x6x3,filter=3x3x3x2,dilation=2x1,dtype=bf16
depthwise_conv2d_backprop_input:input=2x16x16x16,filter=3x3x16x2,padding=SAME,dtype=f64 --fill real --tag heavy
depthwise_conv2d_backprop_input:input=1x5x5x2,filter=2x2x2x1,stride=2x2
depthwise_conv2d_backprop_filter:input=0x4x4x2,filter=2x2x2x2 --tag empty
conv2d:input=1x6x6x4,filter=3x3x2x4,stride=2x2,format=NCHW,dtype=f64 --tag groups
EOF
CASES=20  # 8 lines with two default fills, 4 with one given fill
B=reference,optimized

# --- one run -------------------------------------------------------------------------------------
expect 0 "run: 20 of 20 cases, 40 (case, backend) pairs" -- run --suite "$S" --backends $B --out "$T/U"
for f in results.jsonl run.json summary.json junit.xml report.html; do
  if [ -s "$T/U/$f" ]; then ok; else bad "run left no $f"; fi
done
n=$(wc -l <"$T/U/results.jsonl")
if [ "$n" -eq $((CASES * 2)) ]; then ok; else bad "results.jsonl has $n lines, want $((CASES * 2))"; fi
if python3 - "$T/U" <<'EOF'; then ok; else bad "results.jsonl / summary.json / junit.xml content"; fi
import json, sys, xml.etree.ElementTree as ET
d = sys.argv[1]
need = ["case", "descriptor", "seed", "fill", "tag", "backend", "implementation", "verdict", "check",
        "reason", "contract", "bound_usage", "mismatches", "first_offender", "adjoint", "metamorphic",
        "ms", "tf_admission", "odd_one_out", "repro"]
recs = [json.loads(l) for l in open(d + "/results.jsonl")]
for r in recs:
    missing = [k for k in need if k not in r]
    assert not missing, missing
    assert set(r["tf_admission"]) == {"cpu", "gpu"}
    for m in r["metamorphic"]:
        assert {"name", "applicable", "passed"} <= set(m)
    assert r["repro"].startswith("convcheck check '" + r["descriptor"] + "' --backends " + r["implementation"])
s = json.load(open(d + "/summary.json"))
assert s["complete"] and s["pairs"]["recorded"] == len(recs), s["pairs"]
assert sum(s["verdicts"].values()) == len(recs)
assert sum(c["count"] for c in s["counts"]) == len(recs)
for k in ["cpu", "cores", "gpu", "compiler", "boost", "eigen", "rapidcheck", "onednn", "cuda", "cudnn", "commit"]:
    assert k in s["environment"], k
names = [c["class"] for c in s["coverage"]["classes"]]
assert "stride_gt_filter" in names and "groups_gt_1" in names
# JUnit: valid XML, one testcase per record, counts consistent on every level.
root = ET.parse(d + "/junit.xml").getroot()
assert root.tag == "testsuites"
total = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
for ts in root.findall("testsuite"):
    cases = ts.findall("testcase")
    got = {"tests": len(cases),
           "failures": sum(1 for c in cases if c.find("failure") is not None),
           "errors": sum(1 for c in cases if c.find("error") is not None),
           "skipped": sum(1 for c in cases if c.find("skipped") is not None)}
    for k, v in got.items():
        assert int(ts.get(k)) == v, (ts.get("name"), k, ts.get(k), v)
        total[k] += v
    for c in cases:
        assert c.get("name") and c.get("classname") == "convcheck." + ts.get("name")
for k, v in total.items():
    assert int(root.get(k)) == v, (k, root.get(k), v)
assert total["tests"] == len(recs)
EOF

# Re-rendering from results.jsonl gives the same summary.
cp "$T/U/summary.json" "$T/summary.U"
expect 0 "40 records" -- report html "$T/U"
same "$T/summary.U" "$T/U/summary.json" "report html re-render"

# --- bad input -------------------------------------------------------------------------------------
expect 2 "pass --resume" -- run --suite "$S" --backends $B --out "$T/U"
expect 2 "holds a run with backends reference,optimized" -- run --suite "$S" --backends reference --out "$T/U" --resume
touch "$T/afile"
expect 2 "cannot create the directory" -- run --suite "$S" --backends $B --out "$T/afile/sub"
expect 2 "--out /proc/convcheck-test" -- run --suite "$S" --backends $B --out /proc/convcheck-test
expect 2 "expected K/N" -- run --suite "$S" --backends $B --shard 4/3 --out "$T/x"
expect 2 "unknown suite 'no_such_suite'" -- run --suite no_such_suite --out "$T/x"
expect 2 "backend name 'reference' given twice" -- run --suite "$S" --backends reference,reference=optimized --out "$T/x"
if "$CC" list | grep -q '^  cudnn  \[unavailable'; then
  expect 3 "unavailable" -- run --suite "$S" --backends reference,cudnn --out "$T/x"
fi
expect 2 "no such report directory" -- report diff "$T/U" "$T/nothing"
expect 2 "unknown report command" -- report frobnicate "$T/U"

# --- shards merged == unsharded ------------------------------------------------------------------------
for k in 1 2 3; do
  expect 0 "cases of 20 (shard $k/3)" -- run --suite "$S" --backends $B --shard $k/3 --out "$T/S$k"
done
expect 0 "every shard: the whole suite" -- report merge "$T/S1" "$T/S2" "$T/S3" --out "$T/M"
same "$T/U/summary.json" "$T/M/summary.json" "3 merged shards vs the unsharded run"
expect 2 "already holds a results.jsonl" -- report merge "$T/S1" "$T/S2" "$T/S3" --out "$T/M"
# Completeness (issue 20): each shard's run.json says whether it is complete; a merge with a shard
# missing or incomplete is exit 2 naming it, unless --allow-partial (a report marked incomplete).
if grep -q '"complete": true' "$T/S1/run.json" && grep -q '"shard": "1/3"' "$T/S1/run.json"; then ok; else
  bad "S1/run.json does not record its shard and that it is complete"
fi
expect 2 "shards 2/3, 3/3 missing" -- report merge "$T/S1" --out "$T/P1"
mkdir -p "$T/S3i" && cp "$T/S3/run.json" "$T/S3i/" && head -n 2 "$T/S3/results.jsonl" >"$T/S3i/results.jsonl"
expect 2 "incomplete: 3/3 ($T/S3i: 2 of" -- report merge "$T/S1" "$T/S2" "$T/S3i" --out "$T/P2"
expect 0 "partial: marked incomplete" -- report merge "$T/S1" "$T/S2" --allow-partial --out "$T/P3"
if grep -q '"complete": false' "$T/P3/summary.json" && grep -q '"missing_shards": \[' "$T/P3/run.json" &&
  grep -A1 '"missing_shards"' "$T/P3/run.json" | grep -q '"3/3"'; then ok; else
  bad "--allow-partial: summary.json not marked incomplete or run.json without the missing shard"
fi
expect 0 "records; wrote" -- report html "$T/P3"  # re-rendered: still incomplete
if grep -q '"complete": false' "$T/P3/summary.json" && grep -q '"partial": true' "$T/P3/run.json"; then ok; else
  bad "report html of a partial merge lost its incompleteness"
fi

# --- SIGINT, then --resume == uninterrupted ---------------------------------------------------------
"$CC" run --suite "$S" --backends $B --out "$T/I" >"$T/I.out" 2>&1 &
pid=$!
for _ in $(seq 1 200); do  # until the first case is recorded (at most 10 s)
  [ -s "$T/I/results.jsonl" ] && break
  sleep 0.05
done
kill -INT "$pid"
wait "$pid"
rc=$?
lines=$(wc -l <"$T/I/results.jsonl" 2>/dev/null || echo 0)
if [ "$rc" -eq 130 ] && [ "$lines" -gt 0 ] && [ "$lines" -lt $((CASES * 2)) ] &&
  grep -q '"interrupted": true' "$T/I/run.json" && grep -q '"complete": false' "$T/I/summary.json" &&
  grep -q "rerun with --resume" "$T/I.out"; then ok; else
  bad "SIGINT: exit $rc (want 130), $lines records (want 0 < n < $((CASES * 2))), run.json/summary.json/message"
  sed 's/^/    /' "$T/I.out" | tail -5
fi
expect 0 "resuming:" -- run --suite "$S" --backends $B --out "$T/I" --resume
same "$T/U/summary.json" "$T/I/summary.json" "interrupted + resumed vs uninterrupted"

# --- report diff ------------------------------------------------------------------------------------
expect 0 "no regression" -- report diff "$T/U" "$T/I"
expect 1 "backends reference,optimized=mutant:same_pad_before" -- run --suite "$S" --backends reference,optimized=mutant:same_pad_before --out "$T/P"
grep -q "stood in for by mutant:same_pad_before" "$T/P/report.html" && ok || bad "report.html names the stand-in"
expect 1 "NEW FAILURES (5)" -- report diff "$T/U" "$T/P"
expect 0 "FIXED (5)" -- report diff "$T/P" "$T/U"
if "$CC" report diff "$T/U" "$T/P" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["regression"] and len(d["new_failures"]) == 5, d
assert all(c["backend"] == "optimized" and c["b"]["verdict"] == "fail" for c in d["new_failures"])
assert all("mutant:same_pad_before" in c["b"]["repro"] for c in d["new_failures"])
'; then ok; else bad "report diff --json"; fi

# --- a truncated last line, a malformed line -----------------------------------------------------------
cp -r "$T/U" "$T/K"
head -c 300 "$T/U/results.jsonl" >>"$T/K/results.jsonl"  # a kill mid-write
expect 0 "cut short" -- report html "$T/K"
same "$T/summary.U" "$T/K/summary.json" "summary ignoring a truncated last line"
expect 0 "dropped and rerun" -- run --suite "$S" --backends $B --out "$T/K" --resume
if python3 -c '
import json, sys
lines = open(sys.argv[1]).read().split("\n")
assert lines[-1] == "" and all(json.loads(l) for l in lines[:-1]) and len(lines) - 1 == int(sys.argv[2])
' "$T/K/results.jsonl" $((CASES * 2)); then ok; else bad "--resume did not repair a truncated results.jsonl"; fi
cp -r "$T/U" "$T/G"
sed -i '2s/.*/{"case": 1, garbage/' "$T/G/results.jsonl"
expect 2 "results.jsonl:2: malformed record" -- report html "$T/G"
expect 2 "results.jsonl:2: malformed record" -- run --suite "$S" --backends $B --out "$T/G" --resume

# --- fuzz: --shard and SIGINT + --resume ---------------------------------------------------------------
expect 0 "fuzz: 3 cases" -- fuzz --backends reference --cases 6 --seed 3 --shard 1/2
expect 0 "fuzz: 3 cases" -- fuzz --backends reference --cases 6 --seed 3 --shard 2/2
"$CC" fuzz --backends reference --time 60 --seed 5 --out "$T/F" >"$T/F.out" 2>&1 &
pid=$!
sleep 1.5
kill -TERM "$pid"
wait "$pid"
rc=$?
if [ "$rc" -eq 143 ] && grep -q '"interrupted": true' "$T/F/fuzz.json" && grep -q "rerun with --resume" "$T/F.out"; then
  ok
else
  bad "fuzz SIGTERM: exit $rc (want 143)"
  tail -3 "$T/F.out" | sed 's/^/    /'
fi
next=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["next_case"])' "$T/F/fuzz.json")
expect 0 "resuming at case $next" -- fuzz --backends reference --time 0.5 --seed 5 --out "$T/F" --resume
expect 2 "records a campaign with seed 5" -- fuzz --backends reference --time 0.5 --seed 6 --out "$T/F" --resume

echo "run/report CLI: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
