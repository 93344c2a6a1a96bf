#!/usr/bin/env python3
"""Writes a large results.jsonl for timing its readers (reports/results.h): the lines of a real
run's results.jsonl repeated until N lines, each copy with its own case index and seed so that
every record keeps a key of its own (deduplicate keeps them all).

  python3 bench/make_results.py RUN/results.jsonl N OUT_DIR
  (then OUT_DIR/results.jsonl; copy RUN/run.json beside it for `convcheck report html OUT_DIR`)
"""
import os
import re
import shutil
import sys

CASE = re.compile(rb'^\{"case":(\d+),')
SEED = re.compile(rb',"seed":(\d+),')


def main():
    src, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    with open(src, "rb") as f:
        lines = [l for l in f.read().split(b"\n") if l.strip()]
    cases = 1 + max(int(CASE.match(l).group(1)) for l in lines)
    os.makedirs(out, exist_ok=True)
    run_json = os.path.join(os.path.dirname(src), "run.json")
    if os.path.exists(run_json):
        shutil.copy(run_json, os.path.join(out, "run.json"))
    with open(os.path.join(out, "results.jsonl"), "wb") as f:
        for i in range(n):
            copy, k = divmod(i, len(lines))
            line = lines[k]
            case = int(CASE.match(line).group(1)) + copy * cases
            # Seeds of a suite are 32-bit: copy k adds k * 2^32, a seed no run writes.
            line = CASE.sub(b'{"case":%d,' % case, line, count=1)
            line = SEED.sub(lambda m: b',"seed":%d,' % (int(m.group(1)) + (copy << 32)), line,
                            count=1)
            f.write(line + b"\n")


if __name__ == "__main__":
    main()
