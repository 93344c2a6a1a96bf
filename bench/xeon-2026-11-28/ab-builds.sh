#!/usr/bin/env bash
# Interleaves builds round by round on one suite (2 threads unless THREADS=N: one count), one line
# per (build, layer/op) and round: median_ms, min_ms of optimized and oneDNN, paired ratio.
# Example: bash ab-builds.sh suite.txt 10 "" old:/tmp/old/convcheck new:build/convcheck > r.txt;
# python3 ab-summary.py r.txt
# ab-builds.sh SUITE ROUNDS "ENV" LABEL:BIN ... (BIN may start with VAR=value settings for that
# entry alone: "e3:CONVCHECK_EXP=3 build/convcheck", one binary under several settings)
suite=$1; rounds=$2; base=$3; shift 3
fmt='import json,sys
rows={}
for l in sys.stdin:
  d=json.loads(l); rows.setdefault(d["tag"]+"/"+d["problem"].split(":")[0],{})[d["backend"]]=d
for k,v in rows.items():
  o=v["optimized"]; n=v["onednn"]
  print(sys.argv[1],k,o["median_ms"],o["min_ms"],n["median_ms"],n["min_ms"],o["paired_ratio"] or 0)'
for r in $(seq 1 $rounds); do
  for lv in "$@"; do
    lab=${lv%%:*}; bin=${lv#*:}
    env $base $bin bench --suite $suite --backends optimized,onednn --threads ${THREADS:-2} --json 2>/dev/null | python3 -c "$fmt" $lab
  done
done
