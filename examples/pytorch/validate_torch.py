"""Validate PyTorch's CPU convolution kernels on TF's semantics with the convcheck package (issues 7, 17).

The same problems and fills as examples/tensorflow (suites/tf_tests.txt and a slice of
suites/conformance.txt), computed with PyTorch (Debian's python3-torch) and judged in process by
convcheck.judge (`convcheck verify`'s logic). What PyTorch can express of TF's semantics, and how:
  - PyTorch is NCHW with OIHW weights: NHWC operands are permuted in and the result permuted back;
    HWIO filters become OIHW, depthwise RSCM [KH,KW,C,M] becomes a grouped conv (groups = C) with
    weight [C*M, 1, KH, KW], output channel c*M + m, TF's order;
  - symmetric pads (VALID, SAME with an even total, symmetric explicit pads) go to conv2d's
    `padding` and the gradients come from torch.nn.grad.conv2d_input / conv2d_weight ("native");
  - asymmetric pads (SAME with an odd total: TF puts the extra row/column after; explicit
    T != B or L != R) have no conv2d argument: the input is padded with F.pad and the gradients
    come from autograd through the pad ("F.pad");
  - conv2d_transpose is backprop input (TF's definition); the depthwise ops are grouped convs.
PyTorch refusals (no f16 or int32 convolution on the CPU, ...) are recorded; TF's admission
report does not apply to PyTorch and is not compared.

    python validate_torch.py --out OUT     (see run.sh)
"""

import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import convcheck_frameworks as cf  # noqa: E402

TORCH_DTYPE = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32,
               "f64": torch.float64, "i32": torch.int32}


def to_torch(array, dtype):
    if dtype == "bf16":  # raw bits ('<u2')
        return torch.from_numpy(array.astype(np.uint16).view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(np.ascontiguousarray(array))


def from_torch(t, dtype):
    t = t.detach().contiguous()
    if dtype == "bf16":
        return t.view(torch.int16).numpy().view(np.uint16)
    return t.numpy()


def pads(p):
    """TF's resolved pads (top, bottom, left, right): SAME puts the odd element after."""
    if p.explicit:
        return p.padding
    if p.padding == "VALID":
        return (0, 0, 0, 0)
    out = []
    for size, k, s, d in ((p.h, p.kh, p.sh, p.dh), (p.w, p.kw, p.sw, p.dw)):
        eff = (k - 1) * d + 1
        o = -(-size // s)
        total = max((o - 1) * s + eff - size, 0)
        out += [total // 2, total - total // 2]
    return tuple(out)


class PyTorch:
    name = "PyTorch"
    version = f"{torch.__version__} (CPU, {torch.get_num_threads()} threads)"

    def __init__(self):
        self.expressed = {}

    def contracts(self, p):
        return {"f16": "f32,f16", "bf16": "f32,bf16", "f32": "f32", "f64": "f64",
                "i32": "i32"}[p.dtype]

    def admission_expected(self, p, adm):
        return None  # TF's admission report is about TF

    def compute(self, p, ops):
        dt = p.dtype
        nchw = (lambda t: t) if p.format == "NCHW" else (lambda t: t.permute(0, 3, 1, 2))
        back = (lambda t: t) if p.format == "NCHW" else (lambda t: t.permute(0, 2, 3, 1))
        groups = p.groups()

        def weight(w):  # HWIO / RSCM -> OIHW (grouped for depthwise)
            if p.depthwise:  # [KH,KW,C,M] -> [C*M, 1, KH, KW]
                return w.permute(2, 3, 0, 1).reshape(p.c * p.fout, 1, p.kh, p.kw)
            return w.permute(3, 2, 0, 1)

        def filter_back(g):  # OIHW gradient -> HWIO / RSCM
            if p.depthwise:
                return g.reshape(p.c, p.fout, p.kh, p.kw).permute(2, 3, 0, 1)
            return g.permute(2, 3, 1, 0)

        t, b, l, r = pads(p)
        symmetric = t == b and l == r
        stride, dilation = (p.sh, p.sw), (p.dh, p.dw)
        x = nchw(to_torch(ops["input"], dt)) if "input" in ops else None
        w = weight(to_torch(ops["filter"], dt)) if "filter" in ops else None
        dy = nchw(to_torch(ops["out_backprop"], dt)) if "out_backprop" in ops else None
        in_nchw = [p.n, p.c, p.h, p.w]
        self.expressed[p.descriptor] = "native" if symmetric else "F.pad"
        forward = p.op in ("conv2d", "depthwise_conv2d")
        wants_input = p.op in ("conv2d_backprop_input", "conv2d_transpose",
                               "depthwise_conv2d_backprop_input")
        if forward:
            if symmetric:
                y = F.conv2d(x, w, None, stride, (t, l), dilation, groups)
            else:
                y = F.conv2d(F.pad(x, (l, r, t, b)), w, None, stride, 0, dilation, groups)
            return from_torch(back(y), dt)
        if symmetric:
            if wants_input:
                g = torch.nn.grad.conv2d_input(in_nchw, w, dy, stride, (t, l), dilation, groups)
                return from_torch(back(g), dt)
            fw = [p.c * p.fout, 1, p.kh, p.kw] if p.depthwise else [p.fout, p.fin, p.kh, p.kw]
            g = torch.nn.grad.conv2d_weight(x, fw, dy, stride, (t, l), dilation, groups)
            return from_torch(filter_back(g), dt)
        # Asymmetric pads: autograd through F.pad.
        # The gradient is linear in the other operand: the leaf's values do not matter.
        if wants_input:
            x = torch.zeros(in_nchw, dtype=w.dtype, requires_grad=True)
        else:
            fw = [p.c * p.fout, 1, p.kh, p.kw] if p.depthwise else [p.fout, p.fin, p.kh, p.kw]
            w = torch.zeros(fw, dtype=x.dtype, requires_grad=True)
        y = F.conv2d(F.pad(x, (l, r, t, b)), w, None, stride, 0, dilation, groups)
        (g,) = torch.autograd.grad(y, x if wants_input else w, dy)
        return from_torch(back(g) if wants_input else filter_back(g), dt)


if __name__ == "__main__":
    sys.exit(cf.validate(PyTorch()))
