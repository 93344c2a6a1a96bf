"""examples/common/convcheck_frameworks.py (the driver of examples/tensorflow and examples/pytorch)
runs in process on the package: here with a numpy "framework" (npconv.py) in place of TF or
PyTorch, which are not installed by the test."""

import json
import os
import sys

import npconv

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "examples", "common"))

import convcheck_frameworks as cf  # noqa: E402


class NumpyFramework:
    name = "npconv"
    version = "test"

    def __init__(self, bug=None):
        self.bug = bug

    def contracts(self, p):
        return "f32" if p.dtype == "f32" else "f64"

    def admission_expected(self, p, adm):
        return None

    def compute(self, p, ops):
        if p.format != "NHWC" or p.dtype not in ("f32", "f64") or p.groups() != 1:
            raise ValueError("npconv does not take " + p.descriptor)
        return npconv.conv(p.checked, bug=self.bug, **ops)


PROBLEMS = [
    "conv2d_backprop_input:input=2x7x6x3,filter=3x2x3x4,stride=2x1,padding=SAME",
    "conv2d_backprop_filter:input=2x7x6x3,filter=3x2x3x4,stride=2x1,padding=SAME",
    "conv2d:input=1x5x5x4,filter=3x3x2x4",  # groups: refused by the "framework"
]


def run(tmp_path, bug=None):
    args = ["--out", str(tmp_path), "--suites", os.path.join(ROOT, "suites")]
    for p in PROBLEMS:
        args += ["--problem", p]
    assert cf.validate(NumpyFramework(bug), args) == 0
    records = [json.loads(line) for line in open(tmp_path / "results.jsonl")]
    summary = json.load(open(tmp_path / "summary.json"))
    return records, summary


def test_the_driver_runs_in_process(tmp_path):
    records, summary = run(tmp_path)
    assert len(records) == 6  # 3 problems x 2 fills
    ran = [r for r in records if r["framework"] == "ran"]
    assert len(ran) == 4 and all(r["verify"][0]["verdict"] == "pass" for r in ran), ran
    refused = [r for r in records if r["framework"] == "refused"]
    assert len(refused) == 2 and "npconv does not take" in refused[0]["error"]
    assert all(r["admission"]["cpu"]["kind"] for r in records)
    assert summary["failures"] == [] and summary["refusals"] == 2


def test_the_driver_reports_a_wrong_kernel(tmp_path):
    records, summary = run(tmp_path, bug="flip_filter")
    assert summary["failures"], summary
    assert all(f["reason"] for f in summary["failures"])
