#!/usr/bin/env python3
"""bench/gpu_table.py on synthetic records of three runs: each cell the median over the runs (skewed
values, so that a mean, a maximum or the first run would differ), the paired ratio preferred to
the ratio of medians (and each run's ratio where a record has none), a layer whose cuDNN record
did not run, geometric (not arithmetic) means, and issue 5's target lines on each side of their
thresholds (a depthwise layer must meet both the ratio and the bandwidth).

    test_gpu_table.py SOURCE-DIR
The expected cells are worked out here from the numbers the records are made of.
"""
import json
import math
import os
import subprocess
import sys
import tempfile

SRC = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
SCRIPT = os.path.join(SRC, "bench", "gpu_table.py")
BPI = "conv2d_backprop_input:input=8x8x8x8,filter=3x3x8x8,padding=SAME"
BPF = "conv2d_backprop_filter:input=8x8x8x8,filter=3x3x8x8,padding=SAME"
TR = "conv2d_transpose:input=8x8x8x8,filter=3x3x8x8,padding=SAME"
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
        # Skewed values, so that a mean, a maximum or the first run differ from the median; per
        # run: (gpu ms, paired ratio) for "a"; the other layers' values are constant over runs.
        a = [(1.0, 1.0), (1.1, 1.1), (5.0, 1.9)]
        runs = []
        for i, (ms, paired) in enumerate(a):
            runs.append([
                rec(BPI, "a", "gpu", ms, paired), rec(BPI, "a", "cudnn", 2.0, 1.0),
                rec(BPI, "b", "gpu", 2.0, 0.5), rec(BPI, "b", "cudnn", 1.0, 1.0),
                # BPF: no paired ratio; cuDNN 4, 3 ms, then not run: per-run ratios 2 and 1.5
                rec(BPF, "a", "gpu", 2.0),
                rec(BPF, "a", "cudnn", [4.0, 3.0, 10.0][i], ran=i < 2),
                rec(TR, "a", "gpu", 1.0, 0.9), rec(TR, "a", "cudnn", 0.9, 1.0),
                # depthwise: dw1 passes the ratio only, dw2 the bandwidth only, dw3 both
                rec(DW, "dw1", "gpu", 1.0, 1.2, pct_bw=30.0), rec(DW, "dw1", "cudnn", 1.2, 1.0),
                rec(DW, "dw2", "gpu", 1.0, 0.8, pct_bw=70.0), rec(DW, "dw2", "cudnn", 0.8, 1.0),
                rec(DW, "dw3", "gpu", 1.0, 1.1, pct_bw=[65.0, 5.0, 66.0][i]),
                rec(DW, "dw3", "cudnn", 1.1, 1.0)])
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
            if len(parts) >= 8 and parts[1].startswith(("conv", "depth")) and ":" not in parts[1]:
                rows[(parts[0], parts[1])] = parts
        op = lambda p: p.split(":")[0]
        bpi, bpf = rows.get(("a", op(BPI))), rows.get(("a", op(BPF)))
        check(bpi is not None and bpf is not None and len(rows) == 7, f"rows:\n{out}")
        if failures:
            print("\n".join(failures))
            return 1
        # "a": gpu ms median of 1, 1.1, 5 = 1.1 (mean 2.37); GFLOP/s median of 1000, 909, 200 =
        # 909 (% peak 9.1; the maximum would give 10.0); paired median 1.1 (mean 1.33; the
        # medians' ratio 2 / 1.1 = 1.82).
        check(bpi[2] == "1.100", f"bpi gpu ms {bpi[2]}")
        check(bpi[3] == "909" and bpi[4] == "9.1", f"bpi GFLOP/s, % peak {bpi[3:5]}")
        check(bpi[6] == "2.000", f"bpi cudnn ms {bpi[6]}")
        check(bpi[7] == "1.10", f"bpi ratio {bpi[7]} (the paired ratios' median is 1.10)")
        check(len(bpi) > 8 and bpi[8] == "bwd_data=ALGO_1", f"bpi cudnn note {bpi[8:]}")
        # BPF: no paired ratio: each run's gflops ratio, 2 and 1.5: median 1.75; cudnn ms 3.5.
        check(bpf[7] == "1.75", f"bpf ratio {bpf[7]}")
        check(bpf[6] == "3.500", f"bpf cudnn ms {bpf[6]}")
        check(rows[("dw3", op(DW))][5] == "65.0", f"dw3 % bandwidth (median of 65, 5, 66)")
        gm = {}
        for line in out.splitlines():
            p = line.split()
            if len(p) == 4 and p[2] == "over":
                gm[p[0]] = (p[1], p[3])
        # BPI: geomean of 1.1 and 0.5 = 0.742 (the arithmetic mean, 0.8, would meet the target)
        check(gm.get(op(BPI)) == (f"{math.sqrt(1.1 * 0.5):.3f}", "2"), f"geomeans {gm}")
        check(gm.get(op(BPF)) == ("1.750", "1"), f"geomeans {gm}")
        check(f"{op(BPI)}: geomean 0.742 (target >= 0.8, aim 1.0): NOT met" in out, "bpi target")
        check(f"{op(TR)}: geomean 0.900 (target >= 0.8, aim 1.0): met" in out, "transpose target")
        check(f"{op(BPF)}: geomean 1.750 (target >= 0.8, aim 1.0): met" in out, "bpf target")
        for tag, ratio, bw, verdict in (("dw1", "1.20", "30", "NOT met"),
                                        ("dw2", "0.80", "70", "NOT met"),
                                        ("dw3", "1.10", "65", "met")):
            check(f"{tag} {op(DW)}: x{ratio} cuDNN (target >= 1.0), {bw} % of bandwidth "
                  f"(target >= 60): {verdict}" in out, f"{tag} target line:\n{out}")
        check(out.count("device peaks measured: Test GPU") == 1, "one peaks line per device")
        md = subprocess.run([sys.executable, SCRIPT] + paths + ["--markdown"],
                            capture_output=True, text=True, check=True).stdout
        check("| a | conv2d_backprop_input | 1.100 | 909 | 9.1 |" in md, f"markdown row:\n{md}")
        usage = subprocess.run([sys.executable, SCRIPT], capture_output=True, text=True)
        check(usage.returncode == 2 and "gpu_table.py" in usage.stderr, "usage exit 2")
    print("\n".join(failures) if failures else "gpu_table: all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
