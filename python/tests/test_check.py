"""check() and fuzz() on Python kernels: the correct numpy kernel passes; `mutant:` bugs
reimplemented in Python (npconv.py) are caught; exceptions in the kernel are `crashed` verdicts
with the exception's last line; Unsupported declines; DLPack inputs."""

import numpy as np
import pytest

import convcheck
import npconv

# Problems on which each planted bug shows: odd SAME padding, dilation, unequal strides, a filter
# that is not symmetric, more than one output row, NaN in the operands (the special fill).
PROBLEMS = [
    "conv2d_backprop_input:input=2x7x6x3,filter=3x2x3x4,stride=2x1,dilation=1x2,padding=SAME",
    "conv2d_backprop_filter:input=2x8x7x3,filter=2x3x3x2,stride=1x2,dilation=2x1,padding=SAME",
    "conv2d:input=2x7x7x2,filter=2x2x2x3,stride=2x3,dilation=2x2,padding=SAME",
]
MUTANTS = ["same_pad_before", "no_dilation", "swap_strides", "flip_filter", "drop_last_row", "nan_to_zero"]


def test_the_correct_kernel_passes_everything():
    for d in PROBLEMS:
        r = convcheck.check(npconv.kernel(), d, fills=["exact", "real", "scaled", "special"])
        assert r.passed, str(r)
        rec = r.records[0]
        assert any(a["passed"] for a in rec.adjoint), rec.adjoint  # the adjoint identities ran
        assert any(m["name"] == "metamorphic:determinism" and m["applicable"] for m in rec.metamorphic) or \
            any(m["applicable"] for m in rec.metamorphic), rec.metamorphic


@pytest.mark.parametrize("bug", MUTANTS)
def test_check_catches_the_mutant(bug):
    fills = ["special"] if bug == "nan_to_zero" else ["exact", "real"]
    caught = []
    for d in PROBLEMS:
        r = convcheck.check(npconv.kernel(bug), d, fills=fills)
        caught += [x for x in r.records if x.failed]
    assert caught, "mutant {} passed every problem".format(bug)
    assert all(x.check and x.reason for x in caught)


def test_low_precision_accumulation_is_caught_under_the_f32_contract():
    fn = npconv.kernel(acc=np.float16)
    r = convcheck.check(fn, "conv2d_backprop_filter:input=4x16x16x8,filter=3x3x8x4", fills=["real"], contract="f32")
    assert r.verdict == "fail" and r.worst.check == "compare", str(r)


@pytest.mark.parametrize("bug", ["swap_strides", "flip_filter", "drop_last_row", "no_dilation", "same_pad_before"])
def test_fuzz_catches_and_shrinks_the_mutant(bug):
    f = convcheck.fuzz(npconv.kernel(bug), ops=list(npconv.OPS), dtypes=["f32", "f64"], formats=["NHWC"],
                       cases=3000, seed=1)
    assert not f.passed, str(f)
    assert f.failure.failed and f.minimal is not None
    assert "convcheck.check(npconv_{}".format(bug) in f.failure.repro
    # The minimal case fails on its own, and is no larger than the one first found.
    again = convcheck.check(npconv.kernel(bug), f.minimal)
    assert again.verdict == "fail", str(again)
    size = lambda c: sum(c.problem.input) + sum(c.problem.filter) + sum(c.problem.stride) + sum(c.problem.dilation)
    assert size(f.minimal) <= size(f.original)
    with pytest.raises(convcheck.ConformanceError, match="repro"):
        f.raise_if_failed()


def test_fuzz_of_the_correct_kernel_finds_nothing():
    f = convcheck.fuzz(npconv.kernel(), ops=list(npconv.OPS), formats=["NHWC"], cases=400, seed=3)
    assert f.passed, str(f)
    assert f.cases == 400 and f.unsupported > 0  # 16-bit dtypes and groups are declined


def test_an_exception_is_crashed_with_its_last_line():
    def broken(problem, **ops):
        raise KeyError("no such tile size")

    r = convcheck.check(broken, PROBLEMS[0], fills=["exact"])
    assert r.verdict == "crashed"
    assert "KeyError: 'no such tile size'" in r.records[0].reason


def test_unsupported_declines_with_the_reason():
    def picky(problem, **ops):
        raise convcheck.Unsupported("only 1x1 filters")

    r = convcheck.check(picky, PROBLEMS[0], fills=["exact"])
    assert r.verdict == "unsupported" and r.records[0].reason == "only 1x1 filters"
    assert not r.passed


def test_a_wrong_result_shape_or_type_is_crashed_with_the_numbers():
    def wrong(problem, **ops):
        return np.zeros((1, 2, 3), np.float32)

    r = convcheck.check(wrong, PROBLEMS[0], fills=["exact"])
    assert r.verdict == "crashed" and "returned float32 [1, 2, 3], expected f32 [2, 7, 6, 3]" in r.worst.reason

    def not_an_array(problem, **ops):
        return "hello"

    r = convcheck.check(not_an_array, PROBLEMS[0], fills=["exact"])
    assert r.verdict == "crashed"


def test_writing_past_out_is_out_of_bounds_and_into_an_operand_is_operand_modified():
    def writes_operand(problem, **ops):
        r = npconv.conv(problem, **ops)
        ops["filter"][...] = 0
        return r

    r = convcheck.check(writes_operand, PROBLEMS[0], fills=["real"])
    assert r.worst.check == "operand_modified", str(r)

    def leaves_holes(problem, out, **ops):
        r = npconv.conv(problem, **ops)
        out[:, 1:] = r[:, 1:]

    r = convcheck.check(leaves_holes, PROBLEMS[0], fills=["real"])
    assert r.worst.check == "unwritten", str(r)


class DLPackOnly:
    """An array that speaks only DLPack (as a framework tensor does): convcheck must take it."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, **kwargs):
        return self._a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


def test_dlpack_objects_are_accepted():
    p = convcheck.Problem(PROBLEMS[1])
    ops = convcheck.operands(p, "real", 1)
    want = convcheck.compute(p, ops)
    got = convcheck.compute(p, {k: DLPackOnly(v) for k, v in ops.items()})
    assert np.array_equal(got, want)
    assert convcheck.judge(p, {k: DLPackOnly(v) for k, v in ops.items()}, DLPackOnly(want)).passed

    def via_dlpack(problem, **o):
        return DLPackOnly(npconv.conv(problem, **o))

    assert convcheck.check(via_dlpack, p, fills=["exact"]).passed


def test_torch_tensors_in_and_out():
    torch = pytest.importorskip("torch", reason="torch is not installed (the DLPack path is tested without it above)")
    p = convcheck.Problem(PROBLEMS[1])
    ops = convcheck.operands(p, "real", 1)
    t = {k: torch.from_numpy(v) for k, v in ops.items()}
    assert np.array_equal(convcheck.compute(p, t), convcheck.compute(p, ops))

    def torch_kernel(problem, **o):  # gets numpy arrays, returns a torch tensor
        return torch.from_numpy(npconv.conv(problem, **o))

    assert convcheck.check(torch_kernel, p, fills=["exact"]).passed
    # A non-contiguous tensor (a transposed view) is read by value.
    f = torch.from_numpy(np.ascontiguousarray(ops["out_backprop"].transpose(0, 2, 1, 3))).transpose(1, 2)
    assert np.array_equal(convcheck.compute(p, {"input": t["input"], "out_backprop": f}), convcheck.compute(p, ops))
    # bf16: torch's bfloat16 tensors and the uint16 bits (or ml_dtypes) give the same result.
    b = convcheck.Problem(str(p).replace("dtype=f32", "dtype=bf16"))
    bops = convcheck.operands(b, "real", 2)
    bits = {k: np.asarray(v).view(np.uint16) for k, v in bops.items()}
    tb = {k: torch.from_numpy(v.view(np.int16)).view(torch.bfloat16) for k, v in bits.items()}
    want = np.asarray(convcheck.compute(b, bops)).view(np.uint16)
    assert np.array_equal(np.asarray(convcheck.compute(b, tb)).view(np.uint16), want)
