"""The pytest plugin, run on small test files through pytest's own pytester: ids, failure text
and repro, unsupported -> skip, mistrusted -> error, --convcheck-fuzz with its seed in the header,
the shrunk failure cached and replayed first, the coverage line."""

import os

import pytest

pytest_plugins = ["pytester"]

HERE = os.path.dirname(os.path.abspath(__file__))


def _installed_plugin():
    """Whether the plugin is registered by the installed package's pytest11 entry point (else,
    in a source checkout on PYTHONPATH, it is loaded with -p)."""
    from importlib.metadata import entry_points

    eps = entry_points()
    group = eps.select(group="pytest11") if hasattr(eps, "select") else eps.get("pytest11", [])
    return any(ep.value == "convcheck.pytest" for ep in group)


PLUGIN_ARGS = [] if _installed_plugin() else ["-p", "convcheck.pytest"]


@pytest.fixture
def run(pytester, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", HERE + os.pathsep + os.environ.get("PYTHONPATH", ""))
    monkeypatch.syspath_prepend(HERE)

    def go(source, *args):
        pytester.makepyfile(test_k=source)
        return pytester.runpytest_subprocess(*PLUGIN_ARGS, "-rA", *args)

    return go


GOOD = '''
import convcheck, convcheck.pytest as ccp, npconv

@ccp.cases(suite="smoke", ops=["conv2d_backprop_input"], dtypes=["f32"], formats=["NHWC"])
def test_k(case):
    ccp.assert_conforms(npconv.kernel(), case)
'''


def test_cases_have_descriptor_ids_and_a_coverage_line(run):
    r = run(GOOD)
    outcomes = r.parseoutcomes()
    assert outcomes["passed"] >= 2 and "failed" not in outcomes, outcomes
    out = r.stdout.str()
    # smoke's empty problem (N = 0): nothing to compare, so mistrusted, an error and never a pass
    errors = [l for l in out.splitlines() if l.startswith("ERROR test_k.py")]
    assert errors and all("input=0x" in l for l in errors), errors
    assert "test_k[conv2d_backprop_input:input=" in out
    assert "convcheck coverage:" in out and "classes hit:" in out


def test_a_failure_shows_the_verdict_and_the_repro_then_is_replayed_first(run, pytester):
    src = GOOD.replace("npconv.kernel()", "npconv.kernel('flip_filter')")
    r = run(src)
    assert r.parseoutcomes()["failed"] >= 1
    out = r.stdout.str()
    assert "fail [compare]" in out and "repro: convcheck.check(npconv_flip_filter" in out
    again = run(src, "-v")
    lines = [l for l in again.stdout.str().splitlines() if "test_k[" in l and ("PASSED" in l or "FAILED" in l)]
    assert lines and "replay:" in lines[0], lines[:3]


def test_unsupported_skips_and_mistrusted_errors(run):
    r = run('''
import numpy as np, convcheck, convcheck.pytest as ccp

def picky(problem, **ops):
    raise convcheck.Unsupported("no NCHW here")

def zeros(problem, **ops):
    return np.zeros(problem.storage_shape(problem.result_role), np.float32)

@ccp.cases(problems=["conv2d_backprop_input:input=1x4x4x2,filter=2x2x2x3,format=NCHW"])
def test_skip(case):
    ccp.assert_conforms(picky, case)

# An empty result: an all-zero kernel would pass it too, so the oracle mistrusts it.
@ccp.cases(problems=["conv2d_backprop_input:input=0x4x4x2,filter=2x2x2x3"])
def test_mistrusted(case):
    ccp.assert_conforms(zeros, case)
''')
    out = r.parseoutcomes()
    assert out.get("skipped") == 1 and out.get("errors", out.get("error")) == 1, out
    assert "no NCHW here" in r.stdout.str()


def test_fuzz_cases_are_seeded_and_printed(run):
    r = run(GOOD, "--convcheck-fuzz", "5", "--convcheck-seed", "11", "-v")
    out = r.stdout.str()
    assert "seed 11 (replay: --convcheck-fuzz 5 --convcheck-seed 11)" in out
    fuzz_ids = sorted({l.split("[", 1)[1].split("]")[0] for l in out.splitlines() if "test_k[fuzz:" in l})
    assert len(fuzz_ids) == 5
    again = run(GOOD, "--convcheck-fuzz", "5", "--convcheck-seed", "11", "-v").stdout.str()
    assert fuzz_ids == sorted({l.split("[", 1)[1].split("]")[0] for l in again.splitlines() if "test_k[fuzz:" in l})


def test_a_fuzzed_failure_is_shrunk(run):
    src = '''
import convcheck, convcheck.pytest as ccp, npconv

@ccp.cases(problems=[], ops=["conv2d_backprop_filter"], dtypes=["f32", "f64"], formats=["NHWC"])
def test_k(case):
    ccp.assert_conforms(npconv.kernel("swap_strides"), case)
'''
    r = run(src, "--convcheck-fuzz", "40", "--convcheck-seed", "3")
    out = r.stdout.str()
    assert r.parseoutcomes().get("failed", 0) >= 1, out[-3000:]
    assert "to the minimal case:" in out and "repro: convcheck.check(npconv_swap_strides" in out
