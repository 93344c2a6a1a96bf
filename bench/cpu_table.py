#!/usr/bin/env python3
"""The README's CPU performance table from bench/cpu-table.sh's records (see there).

    cpu_table.py DIR    reads DIR/native-*.jsonl, DIR/avx2-*.jsonl (and DIR/native-threads1*.jsonl)
    cpu_table.py --threads DIR
                        the last table alone (below), from DIR/native-*.jsonl alone: runs of
                        `bench --threads 1,2` on any suite (no AVX2 runs needed)
A run's ratio is its records' paired ratio (the median over the bench's interleaved rounds of
oneDNN's time over optimized's in the same round; convcheck bench, bench/harness.h), or the ratio of
the two medians in records from before it existed. The table's columns come from each run's records
at its largest thread count; the 1 -> 2 thread columns (optimized's, and oneDNN's
beside it: how far this machine lets two threads go) from those records' `speedup` (1 and 2
threads interleaved in one bench, `--threads 1,2`, in that order: records of other counts leave
these columns "—"), else optimized's from separate one-thread runs (native-threads1-*.jsonl, older
tables; oneDNN's then "—").
Each ISA's "ceiling" is the ratio optimized / oneDNN that a kernel would reach doing only the
useful multiply-adds (no products with padding) at 100 % of the measured f32 FMA peak of that ISA
(depthwise: moving only the compulsory bytes at the triad bandwidth at the layer's round's
footprint, footprint_bandwidth_gbs, where the records have it, else over memory-sized arrays): the most a
direct implementation could lead oneDNN by on that layer, on that machine. The peaks are the highest any
run's probe read (each bench probes them once at its start; on a shared machine a busy spell
lowers the reading, which made a run's % of peak exceed 100 and its ceilings too low); the % of
peak column uses them too. A depthwise layer's "% bw" is its byte rate against the highest triad
over memory-sized arrays (bandwidth_gbs), and "at size" against the highest triad over arrays of
the round's footprint (footprint_bytes: the layer's compulsory bytes and the other backends'
results; bench/harness.h): where the layer's data stay in a cache
between rounds (MobileNet's in a large L3), the first can exceed 100 % and only the second bounds
it. That ceiling sets oneDNN's median rate, busy rounds included, against
the highest peak; a second table, "best rounds" (dense layers), sets each backend's fastest round
over all runs (min_ms) against it, and its ceiling (the peak over oneDNN's fastest-round rate) is
the tighter bound on a shared machine (left out for records without min_ms). A record without a
figure (a backend that did not run, a zero rate) is left out of the medians, not counted as zero.
A last table sets the 1 -> 2 thread scaling of the fastest rounds (each backend's fastest
1-thread round over all runs over its fastest 2-thread round) beside the main table's column (the
median over runs of each run's median per-round speedup), for every layer, and counts the layers
below 1.8x by both, unrounded (in every 1 -> 2 thread column a value below 1.8 that would print
as 1.80 prints 3 decimals).
The geomean tables have a row per op and a pooled "backprop input + conv2d_transpose" row, the
geomean over both ops' layers, as issue 16's first target counts them.
Exits 1 when a record's ISA contradicts its run (the AVX2 runs must have run AVX2 kernels on both
sides), so a table never claims an ISA it was not measured with.
"""
import glob
import json
import os
import statistics
import sys

OPS = {"conv2d_backprop_input": "backprop input", "conv2d_backprop_filter": "backprop filter",
       "conv2d_transpose": "conv2d_transpose",
       "depthwise_conv2d_backprop_input": "depthwise backprop input",
       "depthwise_conv2d_backprop_filter": "depthwise backprop filter"}
# Issue 16's first target pools backprop input and conv2d_transpose: one geomean over both ops'
# layers (not a mean of the two ops' geomeans).
GROUPS = {"backprop input + conv2d_transpose": ("backprop input", "conv2d_transpose")}


def geo_rows(tables):
    """(label, one list of values per table) for each op, then for each group, its ops pooled."""
    for op in OPS.values():
        yield op, [t.get(op) for t in tables]
    for name, ops in GROUPS.items():
        if all(any(t.get(o) for t in tables) for o in ops):  # else it repeats one op's row
            yield name, [sum((t.get(o, []) for o in ops), []) for t in tables]


def load(pattern):
    runs = []
    for path in sorted(glob.glob(pattern)):
        with open(path) as f:
            runs.append([json.loads(line) for line in f if line.startswith("{")])
    return runs


def by_key(records, threads=None):
    """(problem, backend) -> record, at that thread count (default: the run's largest)."""
    if threads is None:
        threads = max((r.get("threads", 0) for r in records), default=0)
    return {(r["problem"], r["backend"]): r for r in records if r.get("threads", 0) == threads}


def op_label(problem):
    name = problem.split(":")[0]
    return OPS.get(name, name)


def main():
    threads_only = sys.argv[1] == "--threads"
    d = sys.argv[2] if threads_only else sys.argv[1]
    native, avx2 = load(os.path.join(d, "native-[0-9]*.jsonl")), load(os.path.join(d, "avx2-*.jsonl"))
    one = load(os.path.join(d, "native-threads1*.jsonl"))
    if not native or not (avx2 or threads_only):
        print("cpu_table: no runs in %s" % d, file=sys.stderr)
        return 2
    errors = []
    isas = {"native": set(), "avx2": set()}
    for name, runs in (("native", native), ("avx2", avx2)):
        for run in runs:
            for r in run:
                if r["ran"]:
                    isas[name].add((r["backend"], r["kernel_isa"]))
                    if name == "avx2" and r["kernel_isa"] not in ("avx2",):
                        errors.append("%s ran %s kernels in an AVX2-capped run (%s)" %
                                      (r["backend"], r["kernel_isa"], r["problem"]))
    if errors:
        print("\n".join(sorted(set(errors))), file=sys.stderr)
        return 1
    nat = [by_key(run) for run in native]
    order = [(r["problem"], r["tag"]) for r in nat[0].values() if r["backend"] == "optimized"]
    first = [next(iter(run.values())) for run in nat if run]
    peaks = [r["peak_gflops"] for r in first]
    bw = [r["bandwidth_gbs"] for r in first]
    cap = [by_key(run) for run in avx2]
    single = [by_key(run) for run in one]

    def rec(run, problem, backend):
        """The record when that backend ran the problem in that run, else None."""
        r = run.get((problem, backend))
        return r if r and r.get("ran") else None

    def interleaved_speedup(problem, backend):
        """The median over runs of the 2-thread records' speedup over 1 thread, or None."""
        v = [r["speedup"] for r in (rec(run, problem, backend) for run in nat)
             if r and r.get("speedup") and r.get("speedup_base_threads") == 1
             and r.get("threads") == 2]
        return statistics.median(v) if v else None

    def fmt_speedup(x):
        # Counted unrounded against 1.8x; a value just below it shows so (1.796x, not 1.80x).
        return "—" if x is None else ("%.3fx" if 1.795 <= x < 1.8 else "%.2fx") % x

    def med(runs, problem, backend, field):
        v = [r[field] for r in (rec(run, problem, backend) for run in runs) if r]
        return statistics.median(v) if v else None

    def thread_table():
        # 1 -> 2 threads in the fastest rounds: on a shared 2-vCPU guest a neighbour's busy spell
        # takes one of the two CPUs, which slows a 2-thread round far more than a 1-thread one, so
        # the main table's per-round medians read the scaling low on layers where the code scales;
        # each count's fastest round over all runs is the nearest this machine comes to the code
        # running with both CPUs to itself. The main table's medians remain the figure the issue's
        # target is read from.
        by_threads = {t: [by_key(run, t) for run in native] for t in (1, 2)}

        def fastest(problem, backend, threads):
            v = [r["min_ms"] for r in (rec(run, problem, backend) for run in by_threads[threads])
                 if r and r.get("min_ms", 0) > 0]
            return min(v, default=None)

        scaling = []
        for problem, tag in order:
            cells = []
            for backend in ("optimized", "onednn"):
                t1, t2 = fastest(problem, backend, 1), fastest(problem, backend, 2)
                cells.append(t1 / t2 if t1 and t2 else None)
            if any(cells):
                scaling.append((problem, tag, cells))
        if not scaling:
            return 0
        print()
        print("1 → 2 threads in the fastest rounds (every layer): each backend's fastest 1-thread "
              "round over all runs over its fastest 2-thread round (min_ms), beside the main table's "
              "column (median over runs of each run's median per-round speedup; a busy spell on a "
              "shared machine slows a 2-thread round more than a 1-thread one):")
        print()
        print("| layer (N = 8) | op | optimized: median rounds | fastest rounds | oneDNN: median rounds "
              "| fastest rounds |")
        print("|---|---|---|---|---|---|")
        below = {"median": [0, 0], "fastest": [0, 0]}

        last_tag = None
        for problem, tag, cells in scaling:
            op = op_label(problem)
            out = []
            for i, backend in enumerate(("optimized", "onednn")):
                m = interleaved_speedup(problem, backend)
                for kind, x in (("median", m), ("fastest", cells[i])):
                    if x is not None and x < 1.8:
                        below[kind][i] += 1
                out += [fmt_speedup(m), fmt_speedup(cells[i])]
            print("| %s | %s | %s |" % (tag if tag != last_tag else "", op, " | ".join(out)))
            last_tag = tag
        print()
        print("Below 1.8x, of %d layers: optimized %d (median rounds), %d (fastest rounds); oneDNN "
              "%d, %d." % (len(scaling), below["median"][0], below["fastest"][0], below["median"][1],
                           below["fastest"][1]))
        return 0


    if threads_only:
        return thread_table()

    def geo_cell(v):
        return "%.2f (lowest %.2f)" % (statistics.geometric_mean(v), min(v)) if v else "—"

    def ratio_cell(runs, problem):
        v = []
        for run in runs:
            d, o = rec(run, problem, "onednn"), rec(run, problem, "optimized")
            if d and o and o.get("paired_ratio"):
                v.append(o["paired_ratio"])
            elif d and o and o["median_ms"] > 0:
                v.append(d["median_ms"] / o["median_ms"])
        if not v:
            return "—", None
        m = statistics.median(v)
        return "%.2f (%.2f–%.2f)" % (m, min(v), max(v)), m

    # The machine's peaks: the highest any run measured (each run probes them once, at its start;
    # a neighbour's busy spell can only lower a reading), so that one run's low probe does not
    # inflate its percentages and ceilings (above 100 % of "peak" in a busy run).
    def highest(runs, field):
        v = [r.get(field, 0) for run in runs for r in run.values()]
        return max(v, default=0)

    # Every record carries the AVX2 peak and the triad whatever its cap: the highest over all runs.
    peak_max = {False: highest(nat, "peak_gflops"), True: highest(nat + cap, "avx2_peak_gflops")}
    bw_max = highest(nat + cap, "bandwidth_gbs")

    def footprint_max(problem):
        """The highest triad at the round's footprint (footprint_bandwidth_gbs) any of its
        records read, native and capped runs alike as bw_max (the probe is not capped), or None
        in records from before it existed."""
        v = [r.get("footprint_bandwidth_gbs") or 0 for run in nat + cap
             for (p, _), r in run.items() if p == problem]
        return max(v, default=0) or None

    def byte_rate(r):
        """A record's GB/s: its compulsory bytes over its median time (records without `bytes`:
        its % of its own run's triad)."""
        if r.get("bytes") and r.get("median_ms", 0) > 0:
            return r["bytes"] / r["median_ms"] / 1e6
        return r.get("pct_bandwidth", 0) * r.get("bandwidth_gbs", 0) / 100

    def ceiling(runs, problem, avx2):
        """Median over runs of the peak / oneDNN's useful rate (depthwise: the triad / its byte
        rate), against the highest peak measured."""
        v = []
        for run in runs:
            r = rec(run, problem, "onednn")
            if not r:
                continue
            if problem.startswith("depthwise"):
                rate, peak = byte_rate(r), footprint_max(problem) or bw_max
            else:
                rate, peak = r.get("useful_gflops", 0), peak_max[avx2]
            v.append(peak / rate if peak and rate > 0 else None)
        v = [x for x in v if x]
        return statistics.median(v) if v else None

    print("ISAs: widest %s; capped %s. Peak (f32 FMA, CPU's widest ISA) %.0f–%.0f GFLOP/s, "
          "triad %.0f–%.0f GB/s over %d runs; %% of peak and ceilings use the highest: %.0f "
          "GFLOP/s, AVX2 %.0f GFLOP/s, triad %.0f GB/s (a busy spell only lowers a reading)." % (
              ", ".join("%s %s" % x for x in sorted(isas["native"])),
              ", ".join("%s %s" % x for x in sorted(isas["avx2"])),
              min(peaks), max(peaks), min(bw), max(bw), len(native),
              peak_max[False], peak_max[True], bw_max))
    print()
    n_isa = "/".join(sorted({i for b, i in isas["native"] if b == "optimized"}))
    print("| layer (N = 8) | op | %s: optimized ms | GFLOP/s | %% FMA peak (depthwise: %% bw) | "
          "oneDNN ms | optimized / oneDNN | ceiling | AVX2: optimized ms | oneDNN ms | "
          "optimized / oneDNN | ceiling | 1→2 threads | oneDNN 1→2 |" % n_isa)
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    geo = {"native": {}, "avx2": {}}
    ceil = {"native": {}, "avx2": {}}
    last_tag = None
    for problem, tag in order:
        op = op_label(problem)
        opt_ms = med(nat, problem, "optimized", "median_ms")
        gf = med(nat, problem, "optimized", "gflops")
        depthwise = problem.startswith("depthwise")
        at_size = None
        if depthwise:
            v = [byte_rate(r) for r in (rec(run, problem, "optimized") for run in nat) if r]
            pct = 100 * statistics.median(v) / bw_max if v and bw_max else None
            fp = footprint_max(problem)
            at_size = 100 * statistics.median(v) / fp if v and fp else None
        else:
            pct = 100 * gf / peak_max[False] if gf and peak_max[False] else None
        dnn_ms = med(nat, problem, "onednn", "median_ms")
        r_native, m_native = ratio_cell(nat, problem)
        a_opt = med(cap, problem, "optimized", "median_ms")
        a_dnn = med(cap, problem, "onednn", "median_ms")
        r_avx2, m_avx2 = ratio_cell(cap, problem)
        c_native, c_avx2 = ceiling(nat, problem, False), ceiling(cap, problem, True)
        for k, m, c in (("native", m_native, c_native), ("avx2", m_avx2, c_avx2)):
            if m:
                geo[k].setdefault(op, []).append(m)
            if c:
                ceil[k].setdefault(op, []).append(c)
        speedup, dnn_speedup = (fmt_speedup(interleaved_speedup(problem, b))
                                for b in ("optimized", "onednn"))
        t1 = [r["median_ms"] for r in (rec(run, problem, "optimized") for run in single) if r]
        if speedup == "—" and t1 and opt_ms:
            speedup = fmt_speedup(statistics.median(t1) / opt_ms)
        fmt = lambda x, p=2: "—" if x is None else ("%.*f" % (p, x))
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            tag if tag != last_tag else "", op, fmt(opt_ms), fmt(gf, 0),
            fmt(pct, 0) + (" % bw" if depthwise else " %") +
            ("" if at_size is None else ", %.0f %% at size" % at_size), fmt(dnn_ms), r_native,
            fmt(c_native), fmt(a_opt), fmt(a_dnn), r_avx2, fmt(c_avx2), speedup, dnn_speedup))
        last_tag = tag
    print()
    print("Geometric means of optimized / oneDNN (the medians over runs above), and of the ceilings:")
    print()
    print("| op | %s | ceiling | AVX2 | ceiling |" % n_isa)
    print("|---|---|---|---|---|")
    for op, values in geo_rows([geo["native"], ceil["native"], geo["avx2"], ceil["avx2"]]):
        cells = [geo_cell(v) for v in values]
        if any(c != "—" for c in cells):
            print("| %s | %s |" % (op, " | ".join(cells)))

    # oneDNN's implementation per record (its note: comparators/onednn.cpp keeps the faster of two
    # variants by timing on a large problem's first run, so a process may run another one): the
    # layers whose implementation differed between runs, with each one's count and median ms, so
    # that a table says when its ratio mixes two oneDNN kernels.
    print()
    mixed = []
    for k, runs in (("native", nat), ("avx2", cap)):
        for problem, tag in order:
            impls = {}
            for r in (rec(run, problem, "onednn") for run in runs):
                if r:
                    impls.setdefault(r.get("note") or "?", []).append(r["median_ms"])
            if len(impls) > 1:
                mixed.append("| %s | %s | %s | %s |" % (
                    tag, op_label(problem), n_isa if k == "native" else "AVX2", ", ".join(
                        "%s %d (%.2f ms)" % (n, len(v), statistics.median(v))
                        for n, v in sorted(impls.items(), key=lambda kv: -len(kv[1])))))
    if mixed:
        print("oneDNN ran different implementations in different runs (the record's note; count "
              "and median ms of each):")
        print()
        print("| layer (N = 8) | op | columns | implementations |")
        print("|---|---|---|---|")
        print("\n".join(mixed))
    else:
        print("oneDNN ran one implementation per layer and column in every run.")

    # Best rounds: the ceiling above sets oneDNN's median rate (busy rounds included) against the
    # highest peak, so a shared machine's busy spells inflate it. Each backend's fastest round
    # over all runs (min_ms) against that peak is the tighter bound: no round does more useful
    # FLOPs per second than the FMA peak allows, so a busy spell only lowers it. Dense layers
    # only: the triad does not bound a depthwise layer whose bytes stay in cache between rounds
    # (MobileNet dw4s2 moves "more than the triad").
    def best_rate(r):
        if not r or not r.get("min_ms") or r["min_ms"] <= 0:
            return None
        return r.get("useful_flops", 0) / r["min_ms"] / 1e6 or None

    def best(runs, problem, backend):
        v = [best_rate(rec(run, problem, backend)) for run in runs]
        return max((x for x in v if x), default=None)

    if not any(r.get("min_ms") for run in nat + cap for r in run.values()):
        return 0  # records from before min_ms
    print()
    print("Best rounds (dense layers): each backend's fastest round over all runs as % of the "
          "highest FMA peak, and the ceiling against oneDNN's fastest round:")
    print()
    print("| layer (N = 8) | op | %s: optimized %% peak | oneDNN %% peak | ceiling | AVX2: "
          "optimized %% peak | oneDNN %% peak | ceiling |" % n_isa)
    print("|---|---|---|---|---|---|---|---|")
    best_ceil = {"native": {}, "avx2": {}}
    last_tag = None
    for problem, tag in order:
        if problem.startswith("depthwise"):
            continue
        op = op_label(problem)
        cells = []
        for k, runs, avx2_peak in (("native", nat, False), ("avx2", cap, True)):
            peak = peak_max[avx2_peak]
            o, d = best(runs, problem, "optimized"), best(runs, problem, "onednn")
            pct = lambda x: "—" if not x or not peak else "%.0f %%" % (100 * x / peak)
            c = peak / d if d and peak else None
            if c:
                best_ceil[k].setdefault(op, []).append(c)
            cells += [pct(o), pct(d), "—" if c is None else "%.2f" % c]
        print("| %s | %s | %s |" % (tag if tag != last_tag else "", op, " | ".join(cells)))
        last_tag = tag
    print()
    print("| op | %s best-round ceiling | AVX2 best-round ceiling |" % n_isa)
    print("|---|---|---|")
    for op, values in geo_rows([best_ceil["native"], best_ceil["avx2"]]):
        cells = [geo_cell(v) for v in values]
        if any(c != "—" for c in cells):
            print("| %s | %s |" % (op, " | ".join(cells)))

    return thread_table()

if __name__ == "__main__":
    sys.exit(main())
