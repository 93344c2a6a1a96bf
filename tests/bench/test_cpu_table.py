#!/usr/bin/env python3
"""bench/cpu_table.py on synthetic records: medians, ranges, ceilings (useful FLOPs, each ISA's
peak; the best rounds' table), the 1 -> 2 thread column, the geomeans (per op, and backprop
input with conv2d_transpose pooled), a backend that did not run, the refusal of an AVX2 run
whose records name another ISA, the layers where oneDNN ran different implementations; and
records of `bench --threads 1,2` (paired ratios, the interleaved speedup); the fastest rounds'
1 -> 2 thread table, also alone (--threads).

    test_cpu_table.py SOURCE-DIR
The expected cells are worked out here from the numbers the records are made of.
"""
import json
import os
import subprocess
import sys
import tempfile

SRC = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
SCRIPT = os.path.join(SRC, "bench", "cpu_table.py")
DENSE = "conv2d_backprop_input:input=8x8x8x8,filter=3x3x8x8,padding=SAME"
DENSE2 = "conv2d_backprop_input:input=8x8x8x8,filter=1x1x8x8"
TRANSPOSE = "conv2d_transpose:input=8x8x8x8,filter=3x3x8x8,stride=2x2,padding=SAME"
DEPTHWISE = "depthwise_conv2d_backprop_input:input=8x8x8x8,filter=3x3x8x1,padding=SAME"
FLOPS = 1e9  # nominal: a 10 ms run is 100 GFLOP/s
USEFUL = 0.8e9  # the useful multiply-adds (no padding products): 80 GFLOP/s at 10 ms


def record(problem, backend, ms, isa, peak=200.0, avx2_peak=100.0, pct_bw=0.0, ran=True):
    gflops = FLOPS / (ms / 1e3) / 1e9 if ran else 0.0
    return {"problem": problem, "tag": "layer", "backend": backend, "ran": ran,
            "median_ms": ms if ran else 0.0, "gflops": gflops,
            "useful_gflops": gflops * USEFUL / FLOPS,
            "pct_peak": 100 * gflops / peak, "pct_bandwidth": pct_bw,
            "peak_gflops": peak, "avx2_peak_gflops": avx2_peak, "bandwidth_gbs": 30.0,
            "isa": "avx512f", "kernel_isa": isa}


def dw_record(backend, isa, rate, triad, footprint=None):
    """A depthwise record moving `rate` GB/s in 5 ms, its % against its own run's `triad`; with
    `footprint`, the triad at the layer's size too."""
    r = record(DEPTHWISE, backend, 5.0, isa, pct_bw=100 * rate / triad)
    r["bytes"], r["bandwidth_gbs"] = rate * 5e6, triad
    if footprint:
        r["footprint_bandwidth_gbs"] = footprint
        r["pct_footprint_bandwidth"] = 100 * rate / footprint
    return r


def write(d, name, records):
    with open(os.path.join(d, name), "w") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")


def edit(d, name, change):
    """Rewrites the records of file `name`, each passed through change(record) first."""
    recs = [json.loads(x) for x in open(os.path.join(d, name))]
    for r in recs:
        change(r)
    write(d, name, recs)


def run(d):
    p = subprocess.run([sys.executable, SCRIPT, d], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def row(out, op):
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) > 2 and cells[1] == op:
            return cells
    raise AssertionError("no row for %s in:\n%s" % (op, out))


def check(cond, what):
    if not cond:
        print("FAIL: " + what)
        sys.exit(1)


def main():
    with tempfile.TemporaryDirectory() as d:
        # Widest ISA, three runs, skewed so that a mean differs from the median:
        #   optimized 8, 10, 15 ms against oneDNN 10, 12, 9 ms: ratios 1.25, 1.20, 0.60 -> median
        #   1.20 (mean 1.02), optimized's median 10.00 ms (mean 11).
        #   Ceiling: oneDNN's useful rate 0.8 GFLOP / 10, 12, 9 ms = 80, 66.7, 88.9 GFLOP/s against a
        #   200 peak: 2.50, 3.00, 2.25 -> median 2.50 (on nominal FLOPs it would read 2.00).
        # DENSE2 (same op): optimized 5 ms, oneDNN 10 ms -> 2.00; geomean of 1.20 and 2.00 = 1.55.
        # Depthwise: oneDNN at 40 % of the triad: ceiling 2.50.
        for i, (opt_ms, dnn_ms) in enumerate(((8.0, 10.0), (10.0, 12.0), (15.0, 9.0)), 1):
            write(d, "native-%d.jsonl" % i, [
                record(DENSE, "optimized", opt_ms, "avx512"),
                record(DENSE, "onednn", dnn_ms, "avx512_core"),
                record(DENSE2, "optimized", 5.0, "avx512"),
                record(DENSE2, "onednn", 10.0, "avx512_core"),
                record(DEPTHWISE, "optimized", 5.0, "avx512"),
                record(DEPTHWISE, "onednn", 5.0, "avx512_core", pct_bw=40.0)])
            # AVX2: optimized 16 ms against oneDNN 20 ms = 1.25; oneDNN's useful rate 40 GFLOP/s
            # against the AVX2 peak of 100: ceiling 2.50 (against the widest peak it would read
            # 5.00). In the third run oneDNN did not run DENSE: left out, not a zero.
            write(d, "avx2-%d.jsonl" % i, [
                record(DENSE, "optimized", 16.0, "avx2"),
                record(DENSE, "onednn", 20.0, "avx2", ran=i != 3),
                record(DENSE2, "optimized", 5.0, "avx2"),
                record(DENSE2, "onednn", 10.0, "avx2"),
                record(DEPTHWISE, "optimized", 5.0, "avx2"),
                record(DEPTHWISE, "onednn", 5.0, "avx2", pct_bw=50.0)])
            # One thread: 19, 20, 30 ms -> median 20 (mean 23) against the 2-thread median 10.
            write(d, "native-threads1-%d.jsonl" % i, [
                record(DENSE, "optimized", (19.0, 20.0, 30.0)[i - 1], "avx512"),
                record(DENSE, "onednn", 20.0, "avx512_core"),
                record(DENSE2, "optimized", 10.0, "avx512"),
                record(DENSE2, "onednn", 10.0, "avx512_core"),
                record(DEPTHWISE, "optimized", 5.0, "avx512"),
                record(DEPTHWISE, "onednn", 5.0, "avx512_core")])
        rc, out, err = run(d)
        check(rc == 0, "exit %d: %s" % (rc, err))
        cells = row(out, "backprop input")  # the first row of that op: DENSE
        # layer, op, ms, GFLOP/s, %, oneDNN ms, ratio, ceiling, AVX2 ms, oneDNN ms, ratio, ceiling,
        # threads
        check(cells[2] == "10.00", "median optimized ms: %s" % cells[2])
        check(cells[5] == "10.00", "median oneDNN ms: %s" % cells[5])
        check(cells[6] == "1.20 (0.60–1.25)", "ratio cell: %s" % cells[6])
        check(cells[7] == "2.50", "widest ceiling (useful FLOPs, median): %s" % cells[7])
        check(cells[10] == "1.25 (1.25–1.25)", "AVX2 ratio without the run oneDNN missed: %s"
              % cells[10])
        check(cells[11] == "2.50", "AVX2 ceiling (its own peak): %s" % cells[11])
        check(cells[12] == "2.00x", "1 -> 2 threads: %s" % cells[12])
        check(cells[13] == "—", "oneDNN's 1 -> 2 without interleaved records: %s" % cells[13])
        dw = row(out, "depthwise backprop input")
        check(dw[7] == "2.50" and dw[11] == "2.00", "depthwise ceilings: %s, %s" % (dw[7], dw[11]))
        geo = [l for l in out.splitlines() if l.startswith("| backprop input |") and "lowest" in l]
        check(len(geo) == 1, "one geomean row for backprop input: %s" % geo)
        g = [c.strip() for c in geo[0].strip("|").split("|")]
        # ratios 1.20 and 2.00 -> 1.55; ceilings 2.50 and (DENSE2: 0.8 GFLOP / 10 ms against 200)
        # 2.50 -> 2.50; AVX2 1.25 and 2.00 -> 1.58.
        check(g[1] == "1.55 (lowest 1.20)", "geomean: %s" % g[1])
        check(g[2] == "2.50 (lowest 2.50)", "ceiling geomean: %s" % g[2])
        check(g[3] == "1.58 (lowest 1.25)", "AVX2 geomean: %s" % g[3])
        # No record names oneDNN's implementation: one per layer, said so.
        check("oneDNN ran one implementation per layer and column in every run." in out,
              "no implementation table without notes: %s" % out)
        # oneDNN's implementation (the record's note) differing between runs: DENSE's widest-ISA
        # runs ran "jit:a" at 10 and 12 ms and "gemm" at 9 ms -> a row with each one's count and
        # median; DENSE2 ran "jit:a" in every run -> no row; the AVX2 runs have no notes.
        def note(r, i):
            if r["backend"] == "onednn":
                r["note"] = "gemm" if r["problem"] == DENSE and i == 3 else "jit:a"

        for i in (1, 2, 3):
            edit(d, "native-%d.jsonl" % i, lambda r: note(r, i))
        rc, out, err = run(d)
        check(rc == 0, "exit %d: %s" % (rc, err))
        impl = [l for l in out.splitlines() if l.startswith("| layer | backprop input | avx512 |")]
        check(impl == ["| layer | backprop input | avx512 | jit:a 2 (11.00 ms), gemm 1 (9.00 ms) |"],
              "the implementation rows: %s" % out)
        check("oneDNN ran different implementations in different runs" in out, out)
        # The AVX2 column without avx2_peak_gflops (records from before it existed, native and
        # capped alike): no ceiling.
        for i in (1, 2, 3):
            for name in ("avx2-%d.jsonl" % i, "native-%d.jsonl" % i):
                edit(d, name, lambda r: r.pop("avx2_peak_gflops"))
        rc, out, err = run(d)
        check(rc == 0 and row(out, "backprop input")[11] == "—", "no AVX2 peak, no ceiling")
        # An AVX2 run whose optimized record ran avx512 kernels: refused.
        recs = [json.loads(x) for x in open(os.path.join(d, "avx2-2.jsonl"))]
        recs[0]["kernel_isa"] = "avx512"
        write(d, "avx2-2.jsonl", recs)
        rc, out, err = run(d)
        check(rc == 1 and "ran avx512 kernels in an AVX2-capped run" in err,
              "cap contradiction: exit %d, %s" % (rc, err))
    paired_and_interleaved()
    busy_probe()
    footprint_triad()
    best_rounds()
    pooled_geomean()
    fastest_round_scaling()
    print("cpu_table: all checks passed")


def paired_and_interleaved():
    """Records of `bench --threads 1,2` (cpu-table.sh's counts; the thread columns read the
    2-thread records' speedup over 1): the table takes the 2-thread records, each run's paired
    ratio (not the ratio of its medians) and the 2-thread records' speedup for the thread column;
    the 1-thread records neither add rows nor change a cell."""
    with tempfile.TemporaryDirectory() as d:
        for i, (paired, speedup) in enumerate(((1.10, 1.90), (0.90, 1.70), (1.30, 2.10)), 1):
            recs = []
            for threads, peak in ((1, 100.0), (2, 200.0)):
                for backend, ms, isa in (("optimized", 10.0 * 2 / threads, "avx512"),
                                         ("onednn", 12.0 * 2 / threads, "avx512_core")):
                    r = record(DENSE, backend, ms, isa, peak=peak)
                    r["threads"] = threads
                    # The medians say 1.20 at both counts; the paired ratios (per run) say otherwise.
                    r["paired_ratio"] = 1.0 if backend == "onednn" else paired + (threads == 1)
                    # oneDNN's 1.797 prints so: 1.80x would hide that it misses 1.8x.
                    r["speedup"] = (speedup if backend == "optimized" else 1.797) if threads == 2 else None
                    r["speedup_base_threads"] = 1 if threads == 2 else 0
                    recs.append(r)
            write(d, "native-%d.jsonl" % i, recs)
            write(d, "avx2-%d.jsonl" % i, [record(DENSE, "optimized", 16.0, "avx2"),
                                           record(DENSE, "onednn", 20.0, "avx2")])
        rc, out, err = run(d)
        check(rc == 0, "exit %d: %s" % (rc, err))
        rows = [l for l in out.splitlines() if "| backprop input |" in l and "lowest" not in l]
        check(len(rows) == 1, "one row per layer, not one per thread count: %s" % rows)
        cells = row(out, "backprop input")
        check(cells[2] == "10.00", "the 2-thread records' median: %s" % cells[2])
        check(cells[6] == "1.10 (0.90–1.30)", "paired ratios, median and range: %s" % cells[6])
        check(cells[10] == "1.25 (1.25–1.25)", "records without a paired ratio: %s" % cells[10])
        check(cells[12] == "1.90x", "the interleaved speedup's median: %s" % cells[12])
        check(cells[13] == "1.797x", "oneDNN's interleaved speedup: %s" % cells[13])
        check("Peak (f32 FMA, CPU's widest ISA) 200–200" in out, "the 2-thread peak: %s" % out)


def busy_probe():
    """A run's peak probe read low (a busy spell): the percentages and ceilings use the highest
    peak and triad any run read (the AVX2 peak and the triad over the native and the AVX2-capped
    runs alike), not each run's own. Every expected cell differs from what each run's own reading
    would give."""
    dw = dw_record

    with tempfile.TemporaryDirectory() as d:
        # Widest ISA: runs 1 and 3 read the 200 GFLOP/s peak and 30 GB/s triad, run 2 half of each.
        # optimized 8, 10, 15 ms = 125, 100, 66.7 GFLOP/s: median 100 of the highest 200 = 50 %
        # (each run's own: 62.5, 100, 33.3 -> 62 %). oneDNN's useful rates 80, 66.7, 88.9
        # GFLOP/s: ceilings 2.50, 3.00, 2.25 -> 2.50 (own: 2.50, 1.50, 2.25 -> 2.25).
        # Depthwise: optimized moves 6, 4.5, 3 GB/s: median 4.5 of 30 = 15 % (own: 20, 30, 10 ->
        # 20 %); oneDNN 12, 6, 10 GB/s: ceilings 2.50, 5.00, 3.00 -> 3.00 (own: 2.50, 2.50, 3.00
        # -> 2.50).
        # AVX2-capped runs: each read the AVX2 peak as 50 and the triad as 15 (busy), the native
        # runs 100 and 30: oneDNN's useful 40 GFLOP/s against 100 -> 2.50 (against the capped
        # runs' own 50: 1.25); depthwise oneDNN 12 GB/s against 30 -> 2.50 (15: 1.25).
        for i, (opt_ms, dnn_ms, dw_opt, dw_dnn) in enumerate(
                ((8.0, 10.0, 6.0, 12.0), (10.0, 12.0, 4.5, 6.0), (15.0, 9.0, 3.0, 10.0)), 1):
            busy = i == 2
            peak, triad = (100.0, 15.0) if busy else (200.0, 30.0)
            recs = [record(DENSE, "optimized", opt_ms, "avx512", peak=peak),
                    record(DENSE, "onednn", dnn_ms, "avx512_core", peak=peak),
                    dw("optimized", "avx512", dw_opt, triad),
                    dw("onednn", "avx512_core", dw_dnn, triad)]
            for r in recs:
                r["bandwidth_gbs"] = triad
            write(d, "native-%d.jsonl" % i, recs)
            cap = [record(DENSE, "optimized", 16.0, "avx2", avx2_peak=50.0),
                   record(DENSE, "onednn", 20.0, "avx2", avx2_peak=50.0),
                   dw("optimized", "avx2", 6.0, 15.0), dw("onednn", "avx2", 12.0, 15.0)]
            for r in cap:
                r["avx2_peak_gflops"], r["bandwidth_gbs"] = 50.0, 15.0
            write(d, "avx2-%d.jsonl" % i, cap)
        rc, out, err = run(d)
        check(rc == 0, "exit %d: %s" % (rc, err))
        cells = row(out, "backprop input")
        check(cells[4] == "50 %", "%% of the highest peak: %s" % cells[4])
        check(cells[7] == "2.50", "ceiling against the highest peak: %s" % cells[7])
        check(cells[11] == "2.50", "AVX2 ceiling against the highest AVX2 peak: %s" % cells[11])
        dwc = row(out, "depthwise backprop input")
        check(dwc[4] == "15 % bw", "%% of the highest triad: %s" % dwc[4])
        check(dwc[7] == "3.00", "depthwise ceiling against the highest triad: %s" % dwc[7])
        check(dwc[11] == "2.50", "AVX2 depthwise ceiling against the highest triad: %s" % dwc[11])
        check("Peak (f32 FMA, CPU's widest ISA) 100–200" in out, "the peaks' range: %s" % out)
        check("highest: 200 GFLOP/s, AVX2 100 GFLOP/s, triad 30 GB/s" in out,
              "the peaks used: %s" % out)

def footprint_triad():
    """Depthwise records with the triad at their own size (footprint_bandwidth_gbs): "% bw" stays
    against the highest memory-sized triad, "at size" is against the highest triad at the
    layer's size over the native and capped runs, and the depthwise ceilings use it."""
    def dw(backend, isa, rate, footprint):
        return dw_record(backend, isa, rate, 30.0, footprint)

    with tempfile.TemporaryDirectory() as d:
        # optimized moves 6, 4.5, 3 GB/s: median 4.5, 15 % of the triad's 30, 9 % of the highest
        # at-size triad, 50 (read by the AVX2-capped runs; the native runs read 40, 25, 40: each
        # run's own would give 11-18 %). oneDNN 12, 6, 10 GB/s: ceilings 50 / rate = 4.17, 8.33,
        # 5.00 -> 5.00 (against the triad, 30: 3.00); AVX2 oneDNN 10 GB/s: 5.00 (own 50 too).
        for i, (dw_opt, dw_dnn, fp) in enumerate(((6.0, 12.0, 40.0), (4.5, 6.0, 25.0),
                                                  (3.0, 10.0, 40.0)), 1):
            write(d, "native-%d.jsonl" % i, [
                record(DENSE, "optimized", 10.0, "avx512"),
                record(DENSE, "onednn", 10.0, "avx512_core"),
                dw("optimized", "avx512", dw_opt, fp), dw("onednn", "avx512_core", dw_dnn, fp)])
            write(d, "avx2-%d.jsonl" % i, [
                record(DENSE, "optimized", 10.0, "avx2"), record(DENSE, "onednn", 10.0, "avx2"),
                dw("optimized", "avx2", 5.0, 50.0), dw("onednn", "avx2", 10.0, 50.0)])
        rc, out, err = run(d)
        check(rc == 0, "exit %d: %s" % (rc, err))
        dwc = row(out, "depthwise backprop input")
        check(dwc[4] == "15 % bw, 9 % at size", "%% of the triads: %s" % dwc[4])
        check(dwc[7] == "5.00", "depthwise ceiling against the at-size triad: %s" % dwc[7])
        check(dwc[11] == "5.00", "AVX2 depthwise ceiling against the at-size triad: %s" % dwc[11])


def best_rounds():
    """The best-rounds table (dense layers): each backend's fastest round over all runs (min_ms)
    as % of the highest FMA peak, and the ceiling against oneDNN's: skewed so that the fastest
    round differs from the median or the mean over runs and from the median rounds' ceiling."""
    def dense(backend, isa, median_ms, min_ms, problem=DENSE):
        r = record(problem, backend, median_ms, isa)
        r["useful_flops"], r["min_ms"] = USEFUL, min_ms
        return r

    def dw(backend, isa, min_ms):
        r = record(DEPTHWISE, backend, 6.0, isa)
        r["bytes"], r["min_ms"] = 6e7, min_ms  # 60 MB: 15 GB/s at 4 ms, 12 at 5
        return r

    with tempfile.TemporaryDirectory() as d:
        # Widest ISA, peak 200: optimized's fastest rounds 5, 6, 8 ms = 160, 133.3, 100 GFLOP/s
        # useful -> 160 = 80 % (median over runs: 67 %); oneDNN's 8, 10, 4 ms = 100, 80, 200 ->
        # 200 = 100 %, ceiling 1.00 (median over runs: 2.00; mean 126.7: 1.58; the median rounds'
        # 10, 12, 9 ms give the main table's 2.50). DENSE2: optimized 4 ms = 200 = 100 %, oneDNN
        # 6.25 ms = 128 = 64 %, ceiling 1.56; geomean with DENSE's 1.00: 1.25 (the mean would be
        # 1.28). Its AVX2 records have no min_ms: "—", and the AVX2 geomean is DENSE's alone.
        # Depthwise records with min_ms: left out of the best rounds (dense layers only).
        # AVX2, its peak 100: optimized 10 ms = 80 GFLOP/s = 80 %; oneDNN 16 ms = 50 = 50 %,
        # ceiling 2.00 (against the widest peak: 4.00).
        for i, (o_min, d_min, d_med) in enumerate(((5.0, 8.0, 10.0), (6.0, 10.0, 12.0),
                                                   (8.0, 4.0, 9.0)), 1):
            write(d, "native-%d.jsonl" % i, [
                dense("optimized", "avx512", 10.0, o_min),
                dense("onednn", "avx512_core", d_med, d_min),
                dense("optimized", "avx512", 5.0, 4.0, DENSE2),
                dense("onednn", "avx512_core", 10.0, 6.25, DENSE2),
                dw("optimized", "avx512", 4.0), dw("onednn", "avx512_core", 5.0)])
            write(d, "avx2-%d.jsonl" % i, [
                dense("optimized", "avx2", 12.0, 10.0), dense("onednn", "avx2", 20.0, 16.0),
                record(DENSE2, "optimized", 5.0, "avx2"), record(DENSE2, "onednn", 10.0, "avx2"),
                dw("optimized", "avx2", 4.0), dw("onednn", "avx2", 5.0)])
        rc, out, err = run(d)
        check(rc == 0, "exit %d: %s" % (rc, err))
        check(row(out, "backprop input")[7] == "2.50", "the median rounds' ceiling stays")
        lines = out.splitlines()
        start = [i for i, l in enumerate(lines) if l.startswith("Best rounds")]
        check(len(start) == 1, "one best-rounds table: %s" % out)
        best = "\n".join(lines[start[0]:])
        cells = row(best, "backprop input")  # DENSE, its first row
        # layer, op, optimized %, oneDNN %, ceiling, AVX2 optimized %, oneDNN %, ceiling
        check(cells[2:] == ["80 %", "100 %", "1.00", "80 %", "50 %", "2.00"],
              "best rounds, DENSE: %s" % cells)
        dense2 = [l for l in lines[start[0]:] if l.startswith("| ") and "backprop input" in l]
        c2 = [c.strip() for c in dense2[1].strip("|").split("|")]
        check(c2[2:] == ["100 %", "64 %", "1.56"] + ["—"] * 3,
              "DENSE2, and no min_ms in its AVX2 records: %s" % c2)
        check("| depthwise" not in best and "depthwise backprop input |" not in best,
              "no depthwise rows in the best rounds (the triad does not bound them): %s" % best)
        geo = [l for l in lines[start[0]:] if l.startswith("| backprop input |")]
        check(len(geo) == 1, "one best-round geomean row: %s" % geo)
        g = [c.strip() for c in geo[0].strip("|").split("|")]
        check(g[1:] == ["1.25 (lowest 1.00)", "2.00 (lowest 2.00)"], "best-round geomean: %s" % g)


def pooled_geomean():
    """Issue 16's target pools backprop input and conv2d_transpose: the pooled row is the geomean
    over both ops' layers, in the median-rate and the best-round tables, not a mean of the two
    ops' geomeans."""
    def layer(problem, backend, isa, median_ms, min_ms):
        r = record(problem, backend, median_ms, isa)
        r["useful_flops"], r["min_ms"] = USEFUL, min_ms
        return r

    with tempfile.TemporaryDirectory() as d:
        # optimized / oneDNN: DENSE 10 / 12 = 1.20, DENSE2 5 / 10 = 2.00, TRANSPOSE 4 / 10 = 2.50:
        # pooled (1.2 * 2 * 2.5)^(1/3) = 1.82 (the two ops' geomeans 1.55 and 2.50 would give
        # 1.97 as a geomean, 2.02 as a mean). Best rounds: oneDNN's fastest 8, 8, 5 ms = 100,
        # 100, 160 GFLOP/s useful against the peak of 200: ceilings 2.00, 2.00, 1.25 -> 1.71
        # pooled. AVX2: every ratio 1.25 (oneDNN 5 ms, optimized 4): 1.25; no min_ms there.
        write(d, "native-1.jsonl", [
            layer(DENSE, "optimized", "avx512", 10.0, 9.0),
            layer(DENSE, "onednn", "avx512_core", 12.0, 8.0),
            layer(DENSE2, "optimized", "avx512", 5.0, 4.0),
            layer(DENSE2, "onednn", "avx512_core", 10.0, 8.0),
            layer(TRANSPOSE, "optimized", "avx512", 4.0, 4.0),
            layer(TRANSPOSE, "onednn", "avx512_core", 10.0, 5.0)])
        write(d, "avx2-1.jsonl", [record(p, b, ms, isa) for p in (DENSE, DENSE2, TRANSPOSE)
                                  for b, ms, isa in (("optimized", 4.0, "avx2"),
                                                     ("onednn", 5.0, "avx2"))])
        rc, out, err = run(d)
        check(rc == 0, "exit %d: %s" % (rc, err))
        name = "backprop input + conv2d_transpose"
        rows = [[c.strip() for c in l.strip("|").split("|")] for l in out.splitlines()
                if l.startswith("| %s |" % name)]
        check(len(rows) == 2, "a pooled row in each geomean table: %s" % out)
        # Ceilings: oneDNN's useful rates 0.8 GFLOP / 12, 10, 10 ms = 66.7, 80, 80 GFLOP/s
        # against the peak of 200: 3.00, 2.50, 2.50 -> 2.66; AVX2: 0.8 GFLOP / 5 ms = 160
        # against the AVX2 peak of 100: 0.62 each.
        check(rows[0][1:] == ["1.82 (lowest 1.20)", "2.66 (lowest 2.50)", "1.25 (lowest 1.25)",
                              "0.62 (lowest 0.62)"], "pooled geomeans: %s" % rows[0])
        check(rows[1][1:] == ["1.71 (lowest 1.25)", "—"],
              "pooled best-round ceiling: %s" % rows[1])
        check(row(out, "conv2d_transpose")[6] == "2.50 (2.50–2.50)", "the transpose's own ratio")
        # Without conv2d_transpose layers the pooled row would repeat backprop input's: none.
        for f in ("native-1.jsonl", "avx2-1.jsonl"):
            recs = [json.loads(x) for x in open(os.path.join(d, f))]
            write(d, f, [r for r in recs if r["problem"] != TRANSPOSE])
        rc, out, err = run(d)
        check(rc == 0 and "| %s |" % name not in out and "| backprop input |" in out,
              "a pooled row without transpose layers: %s" % out)


def fastest_round_scaling():
    """The 1 -> 2 thread table: each backend's fastest 1-thread round over all runs over its
    fastest 2-thread round (min_ms; the two minima from different runs), beside the main table's
    median of the per-round speedups, every layer (depthwise too), a backend that did not run
    left out (its min_ms notwithstanding), and the count below 1.8x unrounded (1.797 counts, and
    prints 3 decimals; 1.80 does not count)."""
    def rec(problem, backend, isa, threads, min_ms, speedup, ran=True):
        r = record(problem, backend, 2 * min_ms, isa, ran=ran)
        r["threads"], r["min_ms"], r["useful_flops"] = threads, min_ms, USEFUL
        r["speedup"] = speedup if threads == 2 else None
        r["speedup_base_threads"] = 1 if threads == 2 else 0
        return r

    with tempfile.TemporaryDirectory() as d:
        # DENSE, optimized: fastest 1-thread round 9 ms (run 1, of 9, 10, 12), fastest 2-thread
        # 5 ms (run 2, of 5.5, 5, 6): 1.80x, though no run reads that (9 / 5.5 = 1.64, 10 / 5 =
        # 2.00, 12 / 6 = 2.00); the per-round speedups' median 1.70 (of 1.70, 1.75, 1.60).
        # oneDNN: 11 (run 1) / 7 (run 2) = 1.57x (runs: 1.38, 1.71, 1.44), per-round 1.50.
        # DENSE2: optimized 8.985 / 5 = 1.797x, per-round 1.85; oneDNN 10 / 5 = 2.00x, 1.90.
        # DEPTHWISE: optimized 4 / 2 = 2.00x, per-round 1.90; oneDNN did not run at 1 thread
        # (its record's min_ms of 1 ms must not count: "—"), per-round 1.50.
        # Below 1.8x: optimized 1 (median rounds: DENSE), 1 (fastest: DENSE2's 1.797; DENSE's
        # 1.80 not); oneDNN 2 (DENSE, DEPTHWISE) and 1 (DENSE).
        for i, (o1, o2, osp, d1, d2) in enumerate(((9.0, 5.5, 1.70, 11.0, 8.0),
                                                   (10.0, 5.0, 1.75, 12.0, 7.0),
                                                   (12.0, 6.0, 1.60, 13.0, 9.0)), 1):
            write(d, "native-%d.jsonl" % i, [
                rec(DENSE, "optimized", "avx512", 1, o1, None),
                rec(DENSE, "onednn", "avx512_core", 1, d1, None),
                rec(DENSE2, "optimized", "avx512", 1, 8.985, None),
                rec(DENSE2, "onednn", "avx512_core", 1, 10.0, None),
                rec(DEPTHWISE, "optimized", "avx512", 1, 4.0, None),
                rec(DEPTHWISE, "onednn", "avx512_core", 1, 1.0, None, ran=False),
                rec(DENSE, "optimized", "avx512", 2, o2, osp),
                rec(DENSE, "onednn", "avx512_core", 2, d2, 1.50),
                rec(DENSE2, "optimized", "avx512", 2, 5.0, 1.85),
                rec(DENSE2, "onednn", "avx512_core", 2, 5.0, 1.90),
                rec(DEPTHWISE, "optimized", "avx512", 2, 2.0, 1.90),
                rec(DEPTHWISE, "onednn", "avx512_core", 2, 3.0, 1.50)])
            write(d, "avx2-%d.jsonl" % i, [record(DENSE, "optimized", 16.0, "avx2"),
                                           record(DENSE, "onednn", 20.0, "avx2")])
        rc, out, err = run(d)
        check(rc == 0, "exit %d: %s" % (rc, err))
        lines = out.splitlines()
        start = [i for i, l in enumerate(lines) if l.startswith("1 → 2 threads in the fastest")]
        check(len(start) == 1, "one scaling table: %s" % out)
        rows = [[c.strip() for c in l.strip("|").split("|")] for l in lines[start[0]:]
                if l.startswith("| ") and "backprop input |" in l]
        check(len(rows) == 3, "a row per layer: %s" % rows)
        check(rows[0][2:] == ["1.70x", "1.80x", "1.50x", "1.57x"], "DENSE: %s" % rows[0])
        check(rows[1][2:] == ["1.85x", "1.797x", "1.90x", "2.00x"], "DENSE2: %s" % rows[1])
        check(rows[2][2:] == ["1.90x", "2.00x", "1.50x", "—"], "DEPTHWISE: %s" % rows[2])
        check("Below 1.8x, of 3 layers: optimized 1 (median rounds), 1 (fastest rounds); oneDNN "
              "2, 1." in out, "the counts: %s" % out)
        check(row(out, "backprop input")[12:] == ["1.70x", "1.50x"], "the main table's columns")
        # `--threads DIR`: this table alone, from the native runs alone (no AVX2 runs needed).
        for i in (1, 2, 3):
            os.remove(os.path.join(d, "avx2-%d.jsonl" % i))
        p = subprocess.run([sys.executable, SCRIPT, "--threads", d], capture_output=True, text=True)
        check(p.returncode == 0, "--threads: exit %d: %s" % (p.returncode, p.stderr))
        alone = [l for l in p.stdout.splitlines() if l.startswith("| ") or l.startswith("Below")]
        check(alone == [l for l in lines[start[0]:] if l.startswith("| ") or l.startswith("Below")],
              "--threads prints the same table and counts alone: %s" % p.stdout)
        check("Geometric means" not in p.stdout, "--threads: no other table: %s" % p.stdout)


if __name__ == "__main__":
    main()
