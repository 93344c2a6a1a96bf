"""Issue 17 item 5: the five sneaky kernels (sneaky.py) are each caught by convcheck.check with a
named reason, while the usual test (numpy.allclose / torch.testing.assert_close with their
defaults, inputs uniform in [0, 1), one fixed shape, one call) passes at least three of them.
README "From Python" shows this table."""

import numpy as np
import pytest

import convcheck
import sneaky

BPI = "conv2d_backprop_input:input=4x6x6x3,filter=3x3x3x2,stride=2x2,padding=SAME"
BPF = "conv2d_backprop_filter:input=4x6x6x3,filter=3x3x3x2,stride=2x2,padding=SAME"

# kernel -> (the problem convcheck is given, the check that must catch it, the fill it fails on)
CAUGHT = {
    "zeros_when_tiny": (BPI, "compare", "scaled"),
    "every_second_image": (BPF, "compare", "exact"),
    "drops_corner": (BPI, "compare", "exact"),
    "reused_result": (BPI, "nondeterministic", "exact"),
    "returns_early": (BPI, "unwritten", "exact"),
}


@pytest.mark.parametrize("name", sorted(CAUGHT))
def test_convcheck_catches_it_with_a_named_reason(name):
    sneaky._reused.clear()
    problem, check, fill = CAUGHT[name]
    r = convcheck.check(sneaky.KERNELS[name], problem)
    assert r.verdict == "fail", str(r)
    by_fill = {x.case.fill: x for x in r.records}
    assert by_fill[fill].verdict == "fail" and by_fill[fill].check == check, str(r)
    assert by_fill[fill].reason and "convcheck.check(" in by_fill[fill].repro


def test_the_correct_kernel_passes_the_same_checks():
    import npconv

    for problem in (BPI, BPF):
        r = convcheck.check(npconv.kernel(), problem)
        assert r.passed, str(r)


# The usual test: one shape (batch 1, as the public kernel benchmarks use), uniform [0, 1) f32
# inputs, one call, compared with a trusted result (here the exact reference) by allclose.
USUAL = {
    "zeros_when_tiny": "conv2d_backprop_input:input=1x8x8x3,filter=3x3x3x4",
    "every_second_image": "conv2d_backprop_filter:input=1x8x8x3,filter=3x3x3x4",
    "drops_corner": "conv2d_backprop_input:input=1x8x8x3,filter=3x3x3x4",
    "reused_result": "conv2d_backprop_input:input=1x8x8x3,filter=3x3x3x4",
    "returns_early": "conv2d_backprop_input:input=1x8x8x3,filter=3x3x3x4",
}


def usual_test(name, compare):
    sneaky._reused.clear()
    p = convcheck.Problem(USUAL[name])
    rng = np.random.default_rng(0)
    ops = {r: rng.random(p.storage_shape(r), dtype=np.float32) for r in p.reads}
    want = convcheck.compute(p, ops)
    fn = sneaky.KERNELS[name]
    if name == "returns_early":
        out = np.empty(p.storage_shape(p.result_role), np.float32)
        fn(p, out=out, **ops)
        got = out.copy()
    else:
        got = fn(p, **ops)
    return compare(got, want)


def numpy_allclose(got, want):
    return bool(np.allclose(got, want))


def torch_assert_close(got, want):
    torch = pytest.importorskip("torch", reason="torch is not installed: the torch column is not checked")
    try:
        torch.testing.assert_close(torch.from_numpy(np.asarray(got)), torch.from_numpy(np.asarray(want)))
        return True
    except AssertionError:
        return False


@pytest.mark.parametrize("compare", [numpy_allclose, torch_assert_close], ids=["numpy.allclose", "torch.assert_close"])
def test_the_usual_test_passes_at_least_three(compare):
    passed = {name: usual_test(name, compare) for name in sorted(USUAL)}
    # The README's table: these three pass the usual test.
    assert passed["zeros_when_tiny"] and passed["every_second_image"] and passed["reused_result"], passed
    assert not passed["drops_corner"], passed
