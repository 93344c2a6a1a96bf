#!/usr/bin/env python3
"""bench/gpu_table.py on synthetic records of three runs: each cell the median over the runs, the
paired ratio preferred to the ratio of medians (and that ratio where a record has none), a layer
whose cuDNN record did not run, the geomeans and issue 5's target lines.

    test_gpu_table.py SOURCE-DIR
The expected cells are worked out here from the numbers the records are made of.
"""
import json
import os
import subprocess
import sys
import tempfile

SRC = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
SCRIPT = os.path.join(SRC, "bench", "gpu_table.py")
BPI = "conv2d_backprop_input:input=8x8x8x8,filter=3x3x8x8,padding=SAME"
BPF = "conv2d_backprop_filter:input=8x8x8x8,filter=3x3x8x8,padding=SAME"
DW = "depthwise_conv2d_backprop_input:input=8x8x8x8,filter=3x3x8x1,padding=SAME"
FLOPS = 1e9  # a 1 ms run is 1000 GFLOP/s


def rec(problem, tag, backend, ms, paired=None, pct_bw=0.0, ran=True):
    gflops = FLOPS / (ms / 1e3) / 1e9 if ran else 0.0
    r = {"problem": problem, "tag": tag, "backend": backend, "ran": ran,
         "median_ms": ms if ran else 0.0, "gflops": gflops, "pct_peak": gflops / 100.0,
         "pct_bandwidth": pct_bw, "peak_gflops": 10000.0, "bandwidth_gbs": 3000.0,
         "device": "Test GPU", "note": "bwd_data=ALGO_1" if backend == "cudnn" else "",
         "reason": "" if ran else "cuDNN declined"}
    if paired is not None:
        r["paired_ratio"] = paired
    return r


def main():
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)

    with tempfile.TemporaryDirectory() as d:
        runs = [  # (gpu ms, cudnn ms, paired) per run for BPI; BPF without paired ratios
            [rec(BPI, "a", "gpu", 1.0, 1.5), rec(BPI, "a", "cudnn", 1.6, 1.0),
             rec(BPF, "a", "gpu", 2.0), rec(BPF, "a", "cudnn", 4.0),
             rec(DW, "dw", "gpu", 1.0, 0.5, pct_bw=5.0), rec(DW, "dw", "cudnn", 0.5, 1.0)],
            [rec(BPI, "a", "gpu", 3.0, 0.9), rec(BPI, "a", "cudnn", 3.0, 1.0),
             rec(BPF, "a", "gpu", 2.0), rec(BPF, "a", "cudnn", 3.0),
             rec(DW, "dw", "gpu", 1.0, 0.7, pct_bw=7.0), rec(DW, "dw", "cudnn", 0.5, 1.0)],
            [rec(BPI, "a", "gpu", 2.0, 1.2), rec(BPI, "a", "cudnn", 9.0, 1.0),
             rec(BPF, "a", "gpu", 4.0), rec(BPF, "a", "cudnn", 10.0, ran=False),
             rec(DW, "dw", "gpu", 1.0, 0.6, pct_bw=70.0), rec(DW, "dw", "cudnn", 0.5, 1.0)],
        ]
        paths = []
        for i, run in enumerate(runs):
            p = os.path.join(d, f"bench{i}.jsonl")
            with open(p, "w") as f:
                f.write("bench: a line that is not a record\n")
                for r in run:
                    f.write(json.dumps(r) + "\n")
            paths.append(p)
        out = subprocess.run([sys.executable, SCRIPT] + paths, capture_output=True, text=True,
                             check=True).stdout
        rows = {}
        for line in out.splitlines():
            parts = line.split()
            if len(parts) >= 8 and parts[1] in (BPI.split(":")[0], BPF.split(":")[0],
                                                DW.split(":")[0]):
                rows[parts[1]] = parts
        bpi, bpf, dw = (rows.get(k.split(":")[0]) for k in (BPI, BPF, DW))
        check(bpi is not None and bpf is not None and dw is not None, f"rows missing:\n{out}")
        if failures:
            print("\n".join(failures))
            return 1
        # BPI: gpu ms median of 1, 3, 2 = 2; cudnn median of 1.6, 3, 9 = 3; paired median of
        # 1.5, 0.9, 1.2 = 1.2 (not the 1.5 that the medians' ratio 3/2 gives).
        check(bpi[2] == "2.000", f"bpi gpu ms {bpi[2]}")
        check(bpi[6] == "3.000", f"bpi cudnn ms {bpi[6]}")
        check(bpi[7] == "1.20", f"bpi ratio {bpi[7]} (the paired ratio's median is 1.20)")
        check(bpi[3] == "500", f"bpi GFLOP/s {bpi[3]} (median of 1000, 333, 500)")
        # BPF: no paired ratio: each run's gflops ratio, 4/2 = 2 and 3/2 = 1.5 (the third run's
        # cuDNN did not run): median 1.75; cudnn ms median of 4 and 3 = 3.5.
        check(bpf[7] == "1.75", f"bpf ratio {bpf[7]}")
        check(bpf[6] == "3.500", f"bpf cudnn ms {bpf[6]}")
        check(dw[5] == "7.0", f"dw % bandwidth {dw[5]} (median of 5, 7, 70)")
        gm = {}
        for line in out.splitlines():
            p = line.split()
            if len(p) == 4 and p[2] == "over":
                gm[p[0]] = (p[1], p[3])
        check(gm.get("conv2d_backprop_input") == ("1.200", "1"), f"geomeans {gm}")
        check(gm.get("conv2d_backprop_filter") == ("1.750", "1"), f"geomeans {gm}")
        check("conv2d_transpose: not measured" in out, "transpose not measured line")
        check("conv2d_backprop_input: geomean 1.200 (target >= 0.8, aim 1.0): met" in out,
              "bpi target line")
        check("dw depthwise_conv2d_backprop_input: x0.60 cuDNN (target >= 1.0), 7 % of "
              "bandwidth (target >= 60): NOT met" in out, f"depthwise target line:\n{out}")
        check(out.count("device peaks measured: Test GPU") == 1, "one peaks line per device")
        md = subprocess.run([sys.executable, SCRIPT] + paths + ["--markdown"],
                            capture_output=True, text=True, check=True).stdout
        check("| a | conv2d_backprop_input | 2.000 | 500 |" in md, f"markdown row:\n{md}")
        usage = subprocess.run([sys.executable, SCRIPT], capture_output=True, text=True)
        check(usage.returncode == 2 and "gpu_table.py" in usage.stderr, "usage exit 2")
    print("\n".join(failures) if failures else "gpu_table: all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
