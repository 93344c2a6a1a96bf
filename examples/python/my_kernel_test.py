"""Testing your own convolution kernel from Python with convcheck's pytest plugin (README "From
Python"). The kernel below is a plain numpy conv2d_backprop_input with a deliberate bug: it
resolves SAME padding with the odd element *before* the image instead of after it (TF puts it
after), so it is right whenever the total padding is even and wrong otherwise.

    .venv/bin/pip install .                      # the package, from the repository root
    .venv/bin/pytest examples/python/my_kernel_test.py --convcheck-fuzz 50

The suite cases with even padding pass; the odd-padding ones fail with the verdict, the first
wrong element and a repro line; with --convcheck-fuzz the first fuzzed failure is shrunk to a
minimal case, kept in pytest's cache and replayed first on the next run. Fix the two marked
lines and everything passes, except the problems with an empty tensor (a zero dimension): they
are errors, "mistrusted", since an empty or all-zero exact result tells nothing apart. The kernel
still ran on them, so a crash there would still be a failure. Cases the kernel declines (groups, NCHW, 16-bit dtypes)
are skips with the reason.
"""

import numpy as np

import convcheck
import convcheck.pytest as ccp


def my_backprop_input(problem, filter, out_backprop):
    """dx = the gradient of conv2d with respect to its input (NHWC, groups 1, f32/f64)."""
    if problem.op not in ("conv2d_backprop_input", "conv2d_transpose"):  # the same op, for TF
        raise convcheck.Unsupported("my kernel: the gradient with respect to the input only")
    if problem.format != "NHWC" or problem.dtype not in ("f32", "f64"):
        raise convcheck.Unsupported("my kernel: NHWC f32/f64 only")
    g = problem.geometry()
    if g["G"] != 1:
        raise convcheck.Unsupported("my kernel: no groups")
    N, H, W, C = problem.input
    KH, KW, _, K = problem.filter
    (sh, sw), (dh, dw) = problem.stride, problem.dilation
    OH, OW = problem.output_size()
    top, left = g["pad_top"], g["pad_left"]
    if problem.padding == "SAME":  # BUG: the odd element of the padding goes first
        top = max(g["pad_top"], g["pad_bottom"])  # fix: top = g["pad_top"]
        left = max(g["pad_left"], g["pad_right"])  # fix: left = g["pad_left"]
    dx = np.zeros((N, H, W, C), np.float64)
    np.seterr(all="ignore")  # NaN and Inf operands (the special fill) are part of the test
    for kh in range(KH):
        for kw in range(KW):
            for oh in range(OH):
                ih = oh * sh + kh * dh - top
                if not 0 <= ih < H:
                    continue
                for ow in range(OW):
                    iw = ow * sw + kw * dw - left
                    if 0 <= iw < W:
                        dx[:, ih, iw, :] += out_backprop[:, oh, ow, :].astype(np.float64) @ filter[kh, kw].T
    return dx.astype(filter.dtype)


@ccp.cases(suite="smoke", ops=["conv2d_backprop_input"], dtypes=["f32", "f64"], formats=["NHWC"])
def test_my_backprop_input(case):
    ccp.assert_conforms(my_backprop_input, case, contract="f32" if case.problem.dtype == "f32" else "f64")
