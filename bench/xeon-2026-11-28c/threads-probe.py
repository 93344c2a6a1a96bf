#!/usr/bin/env python3
"""1 -> 2 threads per layer and backend from `bench --threads 1,2 --json` runs concatenated
(threads-probe.jsonl): the median over runs of each run's speedup (the bench's own `speedup`,
the median of per-round ratios) and the fastest 1-thread round over the fastest 2-thread one."""
import collections
import json
import statistics
import sys

runs = collections.defaultdict(lambda: collections.defaultdict(list))
for line in open(sys.argv[1] if len(sys.argv) > 1 else "threads-probe.jsonl"):
    d = json.loads(line)
    runs[(d["tag"], d["problem"].split(":")[0], d["backend"])][d["threads"]].append(d)
print("| layer | op | backend | runs | speedup: median (range) | fastest rounds |")
print("|---|---|---|---|---|---|")
for (tag, op, backend), t in runs.items():
    sp = [r["speedup"] for r in t[2]]
    fastest = min(r["min_ms"] for r in t[1]) / min(r["min_ms"] for r in t[2])
    print(f"| {tag} | {op} | {backend} | {len(sp)} | {statistics.median(sp):.2f} "
          f"({min(sp):.2f}-{max(sp):.2f}) | {fastest:.2f} |")
