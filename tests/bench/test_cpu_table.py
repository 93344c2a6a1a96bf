#!/usr/bin/env python3
"""bench/cpu_table.py on synthetic records: medians, ranges, ceilings, the 1 -> 2 thread column,
and the refusal of an AVX2 run whose records name another ISA.

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
DEPTHWISE = "depthwise_conv2d_backprop_input:input=8x8x8x8,filter=3x3x8x1,padding=SAME"
FLOPS = 1e9  # 1 GFLOP: a 10 ms run is 100 GFLOP/s


def record(problem, backend, ms, isa, peak=200.0, avx2_peak=100.0, pct_bw=0.0):
    gflops = FLOPS / (ms / 1e3) / 1e9
    return {"problem": problem, "tag": "layer", "backend": backend, "ran": True, "median_ms": ms,
            "gflops": gflops, "pct_peak": 100 * gflops / peak, "pct_bandwidth": pct_bw,
            "peak_gflops": peak, "avx2_peak_gflops": avx2_peak, "bandwidth_gbs": 30.0,
            "isa": "avx512f", "kernel_isa": isa}


def write(d, name, records):
    with open(os.path.join(d, name), "w") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")


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
        # Three widest-ISA runs: optimized 10, 8, 12 ms against oneDNN 10 ms -> ratios 1.00, 1.25,
        # 0.83 (median 1.00). oneDNN runs at 100 GFLOP/s of a 200 peak: ceiling 2.00.
        # Depthwise: oneDNN at 40 % of the triad: ceiling 2.50.
        for i, opt_ms in enumerate((10.0, 8.0, 12.0), 1):
            write(d, "native-%d.jsonl" % i, [
                record(DENSE, "optimized", opt_ms, "avx512"),
                record(DENSE, "onednn", 10.0, "avx512_core"),
                record(DEPTHWISE, "optimized", 5.0, "avx512"),
                record(DEPTHWISE, "onednn", 5.0, "avx512_core", pct_bw=40.0)])
            # AVX2: oneDNN 20 ms = 50 GFLOP/s against the AVX2 peak of 100: ceiling 2.00 (against
            # the widest peak of 200 it would read 4.00).
            write(d, "avx2-%d.jsonl" % i, [
                record(DENSE, "optimized", 16.0, "avx2"),
                record(DENSE, "onednn", 20.0, "avx2"),
                record(DEPTHWISE, "optimized", 5.0, "avx2"),
                record(DEPTHWISE, "onednn", 5.0, "avx2", pct_bw=50.0)])
            # One thread: 19, 20, 21 ms -> median 20 against the 2-thread median 10: 2.00x.
            write(d, "native-threads1-%d.jsonl" % i, [
                record(DENSE, "optimized", 18.0 + i, "avx512"),
                record(DENSE, "onednn", 20.0, "avx512_core"),
                record(DEPTHWISE, "optimized", 5.0, "avx512"),
                record(DEPTHWISE, "onednn", 5.0, "avx512_core")])
        rc, out, err = run(d)
        check(rc == 0, "exit %d: %s" % (rc, err))
        cells = row(out, "backprop input")
        # layer, op, ms, GFLOP/s, %, oneDNN ms, ratio, ceiling, AVX2 ms, oneDNN ms, ratio, ceiling,
        # threads
        check(cells[2] == "10.00", "median optimized ms: %s" % cells[2])
        check(cells[6] == "1.00 (0.83–1.25)", "ratio cell: %s" % cells[6])
        check(cells[7] == "2.00", "widest ceiling: %s" % cells[7])
        check(cells[10] == "1.25 (1.25–1.25)", "AVX2 ratio: %s" % cells[10])
        check(cells[11] == "2.00", "AVX2 ceiling (its own peak): %s" % cells[11])
        check(cells[12] == "2.00x", "1 -> 2 threads: %s" % cells[12])
        dw = row(out, "depthwise backprop input")
        check(dw[7] == "2.50" and dw[11] == "2.00", "depthwise ceilings: %s, %s" % (dw[7], dw[11]))
        # The AVX2 column without avx2_peak_gflops (records from before it existed): no ceiling.
        for i in (1, 2, 3):
            path = os.path.join(d, "avx2-%d.jsonl" % i)
            recs = [json.loads(x) for x in open(path)]
            for r in recs:
                del r["avx2_peak_gflops"]
            write(d, "avx2-%d.jsonl" % i, recs)
        rc, out, err = run(d)
        check(rc == 0 and row(out, "backprop input")[11] == "—", "no AVX2 peak, no ceiling")
        # An AVX2 run whose optimized record ran avx512 kernels: refused.
        recs = [json.loads(x) for x in open(os.path.join(d, "avx2-2.jsonl"))]
        recs[0]["kernel_isa"] = "avx512"
        write(d, "avx2-2.jsonl", recs)
        rc, out, err = run(d)
        check(rc == 1 and "ran avx512 kernels in an AVX2-capped run" in err,
              "cap contradiction: exit %d, %s" % (rc, err))
    print("cpu_table: all checks passed")


if __name__ == "__main__":
    main()
