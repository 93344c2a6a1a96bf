"""A plain numpy implementation of conv2d and its two gradients (NHWC, groups = 1), the kernel
the package's tests plant bugs in (the `mutant:` bugs of mutants/ and the "sneaky" kernels).

It is written from the definitions (TF's Conv2D with explicit, resolved pads), not from convcheck:
the oracle judges it like any user kernel. Anything else (NCHW, groups, depthwise, transpose,
16-bit and int32 dtypes) raises convcheck.Unsupported, which the oracle reports as such.
`bug` names one planted bug (None: correct).
"""

import numpy as np

import convcheck

OPS = ("conv2d", "conv2d_backprop_input", "conv2d_backprop_filter")


def _pads(g, bug):
    top, bottom, left, right = g["pad_top"], g["pad_bottom"], g["pad_left"], g["pad_right"]
    if bug == "same_pad_before":  # the odd element of SAME padding put before instead of after
        top, bottom = max(top, bottom), min(top, bottom)
        left, right = max(left, right), min(left, right)
    return top, bottom, left, right


def conv(problem, bug=None, acc=np.float64, **ops):
    with np.errstate(all="ignore"):  # NaN and Inf operands (the special fill) are expected
        return _conv(problem, bug, acc, **ops)


def _conv(problem, bug, acc, **ops):
    if problem.op not in OPS:
        raise convcheck.Unsupported("npconv: only " + ", ".join(OPS))
    if problem.format != "NHWC" or problem.dtype not in ("f32", "f64"):
        raise convcheck.Unsupported("npconv: NHWC f32/f64 only")
    g = problem.geometry()
    if g["G"] != 1:
        raise convcheck.Unsupported("npconv: no groups")
    dt = np.float32 if problem.dtype == "f32" else np.float64
    sh, sw, dh, dw = g["sh"], g["sw"], g["dh"], g["dw"]
    if bug == "swap_strides":
        sh, sw = sw, sh
    if bug == "no_dilation":
        dh = dw = 1
    top, bottom, left, right = _pads(g, bug)
    N, H, W, C, KH, KW, K, OH, OW = (g[k] for k in ("N", "H", "W", "C", "KH", "KW", "O", "OH", "OW"))
    ops = {k: (np.nan_to_num(v) if bug == "nan_to_zero" else v).astype(acc) for k, v in ops.items()}
    w = ops.get("filter")
    if w is not None and bug == "flip_filter":
        w = w[::-1, ::-1]

    def taps():
        """For each filter tap, the output rows/columns whose input pixel is inside the image (a
        padding element is no term at all: 0 * Inf would make a NaN) and those input pixels."""
        for kh in range(KH):
            for kw in range(KW):
                rows = [(o, o * sh + kh * dh - top) for o in range(OH)]
                cols = [(o, o * sw + kw * dw - left) for o in range(OW)]
                rows = [(o, i) for o, i in rows if 0 <= i < H]
                cols = [(o, i) for o, i in cols if 0 <= i < W]
                if rows and cols:
                    yield kh, kw, np.ix_([o for o, _ in rows], [o for o, _ in cols]), \
                        np.ix_([i for _, i in rows], [i for _, i in cols])

    def pick(a, idx):  # a[:, rows, cols, :] for index arrays
        return a[:, idx[0], idx[1], :]

    if problem.op == "conv2d":
        out = np.zeros((N, OH, OW, K), acc)
        for kh, kw, o, i in taps():
            out[:, o[0], o[1], :] += np.einsum("nhwc,ck->nhwk", pick(ops["input"], i), w[kh, kw], dtype=acc)
    elif problem.op == "conv2d_backprop_input":
        dy = ops["out_backprop"]
        out = np.zeros((N, H, W, C), acc)
        for kh, kw, o, i in taps():
            out[:, i[0], i[1], :] += np.einsum("nhwk,ck->nhwc", pick(dy, o), w[kh, kw], dtype=acc)
    else:
        dy = ops["out_backprop"]
        out = np.zeros((KH, KW, C, K), acc)
        for kh, kw, o, i in taps():
            out[kh, kw] = np.einsum("nhwc,nhwk->ck", pick(ops["input"], i), pick(dy, o), dtype=acc)
        if bug == "flip_filter":
            out = out[::-1, ::-1]
    out = np.ascontiguousarray(out).astype(dt)
    if bug == "drop_last_row" and out.shape[1] > 1:
        out[:, -1] = 0
    return out


def kernel(bug=None, acc=np.float64):
    """conv with `bug` planted, as a kernel function fn(problem, **operands)."""

    def fn(problem, **ops):
        return conv(problem, bug=bug, acc=acc, **ops)

    fn.__name__ = fn.__qualname__ = "npconv_" + (bug or "correct")
    return fn
