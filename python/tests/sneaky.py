"""The five "sneaky" kernels of issue 17 item 5: bugs that Python users' usual test (numpy.allclose
or torch.testing.assert_close with their defaults, inputs uniform in [0, 1), one fixed shape, one
call) lets through, each built on the correct numpy kernel (npconv.py). README "From Python"
shows the side by side; test_sneaky.py checks both columns of it.
"""

import threading

import numpy as np

import npconv


def zeros_when_tiny(problem, **ops):
    """backprop: gives up (zeros) when out_backprop is tiny, as for the gradient of a mean."""
    dy = ops.get("out_backprop")
    if dy is not None and dy.size and float(np.abs(dy).max()) < 1e-2:
        return np.zeros(problem.storage_shape(problem.result_role), npconv.conv(problem, **ops).dtype)
    return npconv.conv(problem, **ops)


def every_second_image(problem, **ops):
    """backprop_filter: sums over every second image of the batch and rescales by N / used."""
    if problem.op != "conv2d_backprop_filter":
        return npconv.conv(problem, **ops)
    n = ops["input"].shape[0]
    used = {k: v[::2] for k, v in ops.items()}
    g = problem.geometry()
    sub = type(problem)(str(problem).replace("input={}x".format(g["N"]), "input={}x".format(used["input"].shape[0]), 1))
    dw = npconv.conv(sub, **used)
    return (dw * (n / used["input"].shape[0])).astype(dw.dtype)


def drops_corner(problem, **ops):
    """Leaves out the last element (a corner of the result)."""
    out = npconv.conv(problem, **ops)
    if out.size:
        out.reshape(-1)[-1] = 0
    return out


_reused = {}


def reused_result(problem, **ops):
    """Accumulates into a result buffer kept from call to call (never zeroed again)."""
    fresh = npconv.conv(problem, **ops)
    buf = _reused.setdefault(str(problem), np.zeros_like(fresh))
    buf += fresh
    return buf


def returns_early(problem, out, **ops):
    """Hands the work to a thread and returns before it has finished writing `out`."""

    def work():
        r = npconv.conv(problem, **ops)
        out.reshape(-1)[: r.size // 2] = r.reshape(-1)[: r.size // 2]
        threading.Event().wait(0.05)
        out[...] = r

    threading.Thread(target=work, daemon=True).start()
    threading.Event().wait(0.005)
    return None


KERNELS = {
    "zeros_when_tiny": zeros_when_tiny,
    "every_second_image": every_second_image,
    "drops_corner": drops_corner,
    "reused_result": reused_result,
    "returns_early": returns_early,
}
