"""Array plumbing between Python and the extension module (python/src/module.cpp).

The module takes and gives "raw" arrays: C-contiguous host numpy arrays, bf16 as its uint16 bits.
Here: anything the user hands in (numpy, a DLPack object such as a PyTorch tensor or a JAX array,
on the host or on a device) becomes raw, and raw arrays become what the user sees (bf16 as
ml_dtypes.bfloat16 when that package is importable, else the uint16 bits).
"""

import inspect

import numpy as np

try:  # bf16 as a real dtype when ml_dtypes is there (the documented fallback: uint16 bits)
    import ml_dtypes

    bfloat16 = ml_dtypes.bfloat16
except ImportError:  # pragma: no cover - exercised where ml_dtypes is absent
    ml_dtypes = None
    bfloat16 = None


class Unsupported(Exception):
    """Raised by a kernel function to decline a problem: the verdict is `unsupported`, with the
    exception's text as the reason (never a pass)."""


_NUMPY_DTYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i32": np.int32, "bf16": np.uint16}

# DLPack device types that are host memory: kDLCPU, kDLCUDAHost, kDLROCMHost.
_HOST_DEVICES = (1, 3, 11)


def _is_torch(x):
    return type(x).__module__.split(".")[0] == "torch"


def _to_host(x):
    """A device array copied to the host, after its stream has finished (torch's .cpu() and
    numpy's conversion of a JAX array both wait for the computation)."""
    if hasattr(x, "__dlpack_device__"):
        try:
            device = int(x.__dlpack_device__()[0])
        except Exception:  # noqa: BLE001 - an object that cannot say is taken as host memory
            device = 1
        if device not in _HOST_DEVICES:
            if _is_torch(x):
                return x.detach().cpu()
            if type(x).__module__.split(".")[0] == "cupy":
                return x.get()  # waits for the array's stream
            return np.asarray(x)  # JAX: blocks until the array is ready
    return x


def _to_numpy(x):
    x = _to_host(x)
    if isinstance(x, np.ndarray):
        return x
    if _is_torch(x):
        import torch

        x = x.detach()
        if x.dtype == torch.bfloat16:  # numpy has no bf16: its bits
            return np.from_dlpack(x.contiguous().view(torch.int16)).view(np.uint16)
        if x.is_conj() or x.is_neg():
            x = x.resolve_conj().resolve_neg()
    if hasattr(x, "__dlpack__"):
        try:
            return np.from_dlpack(x)  # no copy
        except (TypeError, RuntimeError, BufferError, ValueError):
            pass
    return np.asarray(x)


def _to_raw(x, dtype=None):
    """Any array-like as a raw array (C-contiguous host numpy, bf16 as uint16). `dtype` (a
    convcheck dtype name) only decides how plain Python data is converted."""
    if x is None:
        raise TypeError("expected an array, got None")
    if not hasattr(x, "__dlpack__") and not hasattr(x, "__array__") and dtype in _NUMPY_DTYPES:
        x = np.asarray(x, dtype=_NUMPY_DTYPES[dtype] if dtype != "bf16" else None)
    a = _to_numpy(x)
    if bfloat16 is not None and a.dtype == bfloat16:
        a = a.view(np.uint16)
    return np.ascontiguousarray(a)


def _from_raw(a, dtype):
    """A raw array as the user sees it: bf16 viewed as ml_dtypes.bfloat16 when available."""
    if dtype == "bf16" and bfloat16 is not None:
        return a.view(bfloat16)
    return a


def _raw_dict(operands, problem):
    if not isinstance(operands, dict):
        raise TypeError("operands must be a dict role -> array, got " + type(operands).__name__)
    return {k: _to_raw(v, problem.dtype) for k, v in operands.items()}


def _takes_out(fn):
    """Whether fn accepts an `out` keyword (then it gets the poisoned, guarded result buffer)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return False
    return "out" in sig.parameters


def _signature_refuses(fn, names):
    """Why fn cannot be called with these keyword arguments (its signature does not take them), or
    None. A kernel written for one op, fn(problem, filter, out_backprop), is so declined for the
    derived problems of other ops (adjoint identities) instead of crashing on them."""
    try:
        inspect.signature(fn).bind(None, **{n: None for n in names})
    except TypeError as e:
        return "the function does not take ({}): {}".format(", ".join(names), e)
    except ValueError:
        return None
    return None


def _shaped_slice(whole, start, n, shape):
    return whole[start : start + n].reshape(shape)


def _result_raw(got, out_raw, dtype):
    """fn's return value as a raw array; None means "I wrote into `out`"."""
    if got is None:
        if out_raw is None:
            raise TypeError("the kernel returned None and takes no `out` argument")
        return out_raw
    return _to_raw(got, dtype)
