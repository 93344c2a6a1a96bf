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
    Hp, Wp = H + top + bottom, W + left + right
    ops = {k: (np.nan_to_num(v) if bug == "nan_to_zero" else v).astype(acc) for k, v in ops.items()}
    w = ops.get("filter")
    if w is not None and bug == "flip_filter":
        w = w[::-1, ::-1]

    def window(kh, kw):  # the padded-input rows and columns tap (kh, kw) reads for every output
        r0, c0 = kh * dh, kw * dw
        return slice(r0, r0 + (OH - 1) * sh + 1, sh), slice(c0, c0 + (OW - 1) * sw + 1, sw)

    if problem.op == "conv2d" or problem.op == "conv2d_backprop_filter":
        xp = np.zeros((N, Hp + KH * dh, Wp + KW * dw, C), acc)  # room for a wrong stride's reach
        xp[:, top : top + H, left : left + W, :] = ops["input"]
    if problem.op == "conv2d":
        y = np.zeros((N, OH, OW, K), acc)
        for kh in range(KH):
            for kw in range(KW):
                rs, cs = window(kh, kw)
                y += np.einsum("nhwc,ck->nhwk", xp[:, rs, cs, :][:, :OH, :OW], w[kh, kw], dtype=acc)
        out = y
    elif problem.op == "conv2d_backprop_input":
        dy = ops["out_backprop"]
        dxp = np.zeros((N, Hp + KH * dh, Wp + KW * dw, C), acc)
        for kh in range(KH):
            for kw in range(KW):
                rs, cs = window(kh, kw)
                dxp[:, rs, cs, :][:, :OH, :OW] += np.einsum("nhwk,ck->nhwc", dy, w[kh, kw], dtype=acc)
        out = dxp[:, top : top + H, left : left + W, :]
    else:
        dy = ops["out_backprop"]
        out = np.zeros((KH, KW, C, K), acc)
        for kh in range(KH):
            for kw in range(KW):
                rs, cs = window(kh, kw)
                out[kh, kw] = np.einsum("nhwc,nhwk->ck", xp[:, rs, cs, :][:, :OH, :OW], dy, dtype=acc)
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
