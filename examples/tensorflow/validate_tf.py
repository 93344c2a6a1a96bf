"""Validate TensorFlow's own CPU convolution kernels with the convcheck package (issues 7, 17).

For the problems of suites/tf_tests.txt and a slice of suites/conformance.txt, in each problem's
dtype and format, it runs
    Conv2D, Conv2DBackpropInput, Conv2DBackpropFilter, tf.nn.conv2d_transpose,
    DepthwiseConv2dNative, DepthwiseConv2dNativeBackpropInput, DepthwiseConv2dNativeBackpropFilter
(tf.raw_ops, eager, on the CPU) on the oracle's operands (convcheck.operands), judges each result
with convcheck.judge (`convcheck verify`'s logic, in process), and compares TF's refusals with
convcheck's TF-admission report.

    python validate_tf.py --out OUT      (see run.sh)
"""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import convcheck_frameworks as cf  # noqa: E402

tf.config.set_visible_devices([], "GPU")  # TF's CPU kernels: the admission report's "cpu"

TF_DTYPE = {"f16": tf.float16, "bf16": tf.bfloat16, "f32": tf.float32, "f64": tf.float64,
            "i32": tf.int32}


def to_tf(array, dtype):
    if dtype == "bf16":  # convcheck stores bf16 as raw bits ('<u2')
        return tf.bitcast(tf.constant(array.astype(np.uint16)), tf.bfloat16)
    return tf.constant(array, dtype=TF_DTYPE[dtype])


def from_tf(t, dtype):
    if dtype == "bf16":
        return tf.bitcast(t, tf.uint16).numpy()
    return t.numpy()


class TensorFlow:
    name = "TensorFlow"
    version = f"{tf.__version__} (CPU; oneDNN opts " + \
        f"{os.environ.get('TF_ENABLE_ONEDNN_OPTS', 'default')})"

    def contracts(self, p):
        # f16/bf16: judged under f32 accumulation first (what TF's kernels claim for half types),
        # and under the dtype's own accumulation as well.
        return {"f16": "f32,f16", "bf16": "f32,bf16", "f32": "f32", "f64": "f64",
                "i32": "i32"}[p.dtype]

    def admission_expected(self, p, adm):
        # `differs` problems are computed (differently), not refused.
        kind = adm.get("kind")
        return "refused" if kind == "refused" else "accepted"

    def compute(self, p, ops):
        fmt = p.format
        strides = [1, p.sh, p.sw, 1] if fmt == "NHWC" else [1, 1, p.sh, p.sw]
        dilations = [1, p.dh, p.dw, 1] if fmt == "NHWC" else [1, 1, p.dh, p.dw]
        if p.explicit:
            t, b, l, r = p.padding
            padding = "EXPLICIT"
            explicit = [0, 0, t, b, l, r, 0, 0] if fmt == "NHWC" else [0, 0, 0, 0, t, b, l, r]
        else:
            padding, explicit = p.padding, []
        kw = dict(strides=strides, padding=padding, explicit_paddings=explicit, data_format=fmt,
                  dilations=dilations)
        x = to_tf(ops["input"], p.dtype) if "input" in ops else None
        w = to_tf(ops["filter"], p.dtype) if "filter" in ops else None
        dy = to_tf(ops["out_backprop"], p.dtype) if "out_backprop" in ops else None
        with tf.device("/CPU:0"):
            if p.op == "conv2d":
                y = tf.raw_ops.Conv2D(input=x, filter=w, **kw)
            elif p.op == "conv2d_backprop_input":
                y = tf.raw_ops.Conv2DBackpropInput(input_sizes=p.input_sizes(), filter=w,
                                                   out_backprop=dy, **kw)
            elif p.op == "conv2d_backprop_filter":
                y = tf.raw_ops.Conv2DBackpropFilter(input=x, filter_sizes=p.filter_sizes(),
                                                    out_backprop=dy, **kw)
            elif p.op == "conv2d_transpose":
                pad = p.padding
                if p.explicit:
                    t, b, l, r = p.padding
                    pad = [[0, 0], [t, b], [l, r], [0, 0]] if fmt == "NHWC" else \
                        [[0, 0], [0, 0], [t, b], [l, r]]
                y = tf.nn.conv2d_transpose(dy, w, output_shape=p.input_sizes(),
                                           strides=strides, padding=pad, data_format=fmt,
                                           dilations=dilations)
            elif p.op == "depthwise_conv2d":
                y = tf.raw_ops.DepthwiseConv2dNative(input=x, filter=w, **kw)
            elif p.op == "depthwise_conv2d_backprop_input":
                y = tf.raw_ops.DepthwiseConv2dNativeBackpropInput(
                    input_sizes=p.input_sizes(), filter=w, out_backprop=dy, **kw)
            elif p.op == "depthwise_conv2d_backprop_filter":
                y = tf.raw_ops.DepthwiseConv2dNativeBackpropFilter(
                    input=x, filter_sizes=p.filter_sizes(), out_backprop=dy, **kw)
            else:
                raise ValueError("unknown op " + p.op)
        return from_tf(y, p.dtype)


if __name__ == "__main__":
    sys.exit(cf.validate(TensorFlow()))
