#!/usr/bin/env python3
"""The README's eigen table from bench/eigen-table.sh's records (see there).

    eigen_table.py WIDEST.jsonl BASELINE.jsonl
WIDEST holds optimized, onednn and eigen of one bench run (interleaved, so side by side);
BASELINE eigen alone, capped to its baseline build. Every backend's ISA is read from the records.
A backend that did not run on a layer shows "-" and is left out of the geometric means.
"""
import json
import math
import sys

OPS = {"conv2d_backprop_input": "backprop input", "conv2d_backprop_filter": "backprop filter",
       "conv2d_transpose": "conv2d_transpose",
       "depthwise_conv2d_backprop_input": "depthwise backprop input",
       "depthwise_conv2d_backprop_filter": "depthwise backprop filter"}


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.startswith("{")]


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main():
    widest, base = load(sys.argv[1]), load(sys.argv[2])
    ms = {}
    isas = {}
    for r in widest:
        if r["ran"]:
            ms[(r["problem"], r["backend"])] = r["median_ms"]
            isas.setdefault(r["backend"], set()).add(r["kernel_isa"])
    for r in base:
        if r["ran"] and r["backend"] == "eigen":
            ms[(r["problem"], "eigen-baseline")] = r["median_ms"]
            isas.setdefault("eigen-baseline", set()).add(r["kernel_isa"])
    first = widest[0]
    print("ISAs: " + "; ".join("%s %s" % (b, "/".join(sorted(s))) for b, s in sorted(isas.items())) +
          ". %d threads; peak (f32 FMA) %.0f GFLOP/s, triad %.0f GB/s (the first run's)." %
          (first["threads"], first["peak_gflops"], first["bandwidth_gbs"]))
    print()
    print("| layer (N = 8) | op | optimized ms | oneDNN ms | eigen ms | eigen GFLOP/s | eigen / optimized"
          " | eigen / oneDNN | eigen baseline ms | baseline / eigen |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    ratios = {}
    last_tag = None
    for r in widest:
        if r["backend"] != "eigen":
            continue
        p = r["problem"]
        op = OPS.get(p.split(":")[0], p.split(":")[0])
        o, d, e, b = (ms.get((p, k)) for k in ("optimized", "onednn", "eigen", "eigen-baseline"))
        cell = lambda x: "%.2f" % x if x else "-"
        ratio = lambda x, y: "%.1f" % (x / y) if x and y else "-"
        gf = "%.2g" % (r["useful_gflops"]) if e and r["useful_gflops"] < 1 else (
            "%.0f" % r["useful_gflops"] if e else "-")
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["tag"] if r["tag"] != last_tag else "", op, cell(o), cell(d), cell(e), gf,
            ratio(e, o), ratio(e, d), cell(b), ratio(b, e)))
        last_tag = r["tag"]
        for k, x, y in (("opt", e, o), ("onednn", e, d), ("base", b, e)):
            if x and y:
                ratios.setdefault((op, k), []).append(x / y)
    print()
    print("Geometric means of eigen's time over the others' (and of the baseline build's over the "
          "ISA module's): " + "; ".join(
              "%s %.1fx optimized, %.1fx oneDNN, baseline %.1fx" % (
                  op, geomean(ratios.get((op, "opt"), [])), geomean(ratios.get((op, "onednn"), [])),
                  geomean(ratios.get((op, "base"), [])))
              for op in OPS.values() if (op, "opt") in ratios) + ".")
    return 0


if __name__ == "__main__":
    sys.exit(main())
