#!/usr/bin/env python3
"""The GPU table from one or more `convcheck bench --suite perf_gpu --backends gpu,cudnn --json`
runs (bench/run-gpu.sh's bench.jsonl), with issue 5's targets.

  python3 bench/gpu_table.py RUN1/bench.jsonl [RUN2/bench.jsonl ...] [--markdown]

Each figure is the median over the runs of that run's figure for the layer: the gpu and cuDNN
median times, gpu/cuDNN as the paired ratio (the median over interleaved rounds of cuDNN's time
over gpu's in the same round; the ratio of medians where a record predates paired ratios), % of
the FMA peak and % of the copy bandwidth that run measured. Geometric means are over the layers'
medians. With one run this is that run's table.
"""
import json
import math
import statistics
import sys


def load(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.startswith("{")]


def ratio_of(g, c):
    """gpu throughput over cuDNN's for one run's records of a layer."""
    if not (g and c and g["ran"] and c["ran"]):
        return None
    r = g.get("paired_ratio")
    return r if r is not None else g["gflops"] / c["gflops"]


def main(argv):
    md = "--markdown" in argv
    paths = [a for a in argv if a != "--markdown"]
    if not paths:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    layers = {}  # (tag, op, problem) -> list of per-run {backend: record}
    devices = []
    for path in paths:
        per_run = {}
        for r in load(path):
            per_run.setdefault((r["tag"], r["problem"].split(":")[0], r["problem"]), {})[
                r["backend"]] = r
            if r.get("device") and r["backend"] == "gpu":
                devices.append((r["device"], r["peak_gflops"], r["bandwidth_gbs"]))
        for k, v in per_run.items():
            layers.setdefault(k, []).append(v)
    seen = []
    for d in devices:
        if d not in seen:
            seen.append(d)
    for d, f, b in seen:
        print(f"device peaks measured: {d}: {f:.0f} GFLOP/s f32 FMA, {b:.0f} GB/s copy")
    print(f"{len(paths)} run(s); each figure the median over runs")

    def med(values):
        v = [x for x in values if x is not None]
        return statistics.median(v) if v else None

    def cell(x, fmt):
        return "-" if x is None else format(x, fmt)

    head = ["tag", "op", "gpu ms", "GFLOP/s", "%peak", "%bw", "cudnn ms", "gpu/cudnn",
            "cudnn algorithm (first run)"]
    if md:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
    else:
        print(f"{'tag':30} {'op':33} {'gpu ms':>8} {'GFLOP/s':>8} {'%peak':>6} {'%bw':>6} "
              f"{'cudnn ms':>8} {'gpu/cudnn':>9}  cudnn algorithm (first run)")
    ratios, dw = {}, []
    for (tag, op, _), runs in layers.items():
        g = [r.get("gpu") for r in runs]
        c = [r.get("cudnn") for r in runs]
        gms = med([x["median_ms"] if x and x["ran"] else None for x in g])
        cms = med([x["median_ms"] if x and x["ran"] else None for x in c])
        gfl = med([x["gflops"] if x and x["ran"] else None for x in g])
        pk = med([x["pct_peak"] if x and x["ran"] else None for x in g])
        bw = med([x["pct_bandwidth"] if x and x["ran"] else None for x in g])
        ratio = med([ratio_of(a, b) for a, b in zip(g, c)])
        note = next((x.get("note", "") for x in c if x and x["ran"]), "")
        if ratio is not None:
            ratios.setdefault(op, []).append(ratio)
            if op.startswith("depthwise"):
                dw.append((tag, op, ratio, bw))
        row = [tag, op, cell(gms, ".3f"), cell(gfl, ".0f"), cell(pk, ".1f"), cell(bw, ".1f"),
               cell(cms, ".3f"), cell(ratio, ".2f"), note]
        if md:
            print("| " + " | ".join(row) + " |")
        else:
            print(f"{row[0]:30} {row[1]:33} {row[2]:>8} {row[3]:>8} {row[4]:>6} {row[5]:>6} "
                  f"{row[6]:>8} {row[7]:>9}  {row[8]}")
    print("\ngeometric mean gpu/cudnn by op:")
    gms = {}
    for op, v in ratios.items():
        gms[op] = math.exp(sum(map(math.log, v)) / len(v))
        print(f"  {op:34} {gms[op]:.3f} over {len(v)}")
    print("\nissue 5 targets:")
    for op in ("conv2d_backprop_input", "conv2d_transpose", "conv2d_backprop_filter"):
        if op in gms:
            print(f"  {op}: geomean {gms[op]:.3f} (target >= 0.8, aim 1.0): "
                  f"{'met' if gms[op] >= 0.8 else 'NOT met'}")
        else:
            print(f"  {op}: not measured")
    for tag, op, ratio, bw in dw:
        ok = ratio >= 1.0 and bw is not None and bw >= 60
        print(f"  {tag} {op}: x{ratio:.2f} cuDNN (target >= 1.0), {cell(bw, '.0f')} % of "
              f"bandwidth (target >= 60): {'met' if ok else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
