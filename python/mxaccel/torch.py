# SPDX-License-Identifier: MIT
"""mxaccel on torch tensors: quantize, dequantize, gemm and grouped_gemm as
torch.library custom ops (mxaccel::*) with fake kernels, so torch.compile
traces them, and supports(), the capability query frameworks gate on.

Tensors are handed to libmxaccel without copies: each operand's memory is
wrapped (mxa_buffer_wrap) for the duration of the call only; the library
keeps no reference after the call returns (on a CUDA device whose work is
enqueued on the caller's stream, PyTorch's caching allocator keeps the
memory valid for work already enqueued on that stream, as for any kernel).

Layouts follow torchao: qdata [rows, K] one code per byte (float8_e4m3fn,
float8_e5m2, or uint8 for the unpacked fp6 types), [rows, K/2] uint8 for
e2m1 (element 2i in the low nibble); scales [rows, K/block] in the plain
layout, or torchao's to_blocked() tiling padded to [128*ceil(rows/128),
4*ceil(K/block/4)] in the swizzled one, as float8_e8m0fnu (MX) or
float8_e4m3fn (NVFP4).
"""

import ctypes
import threading
from typing import Optional

import torch

from . import _core, _lib
from ._core import (MxaccelError, Preference, Support, UnsupportedError,
                    preference, recipe)

_DENSE = {torch.float32: _lib.DTYPE_F32, torch.bfloat16: _lib.DTYPE_BF16}
_ELEM_DTYPE = {_lib.ELEM_E4M3: torch.float8_e4m3fn,
               _lib.ELEM_E5M2: torch.float8_e5m2}
_SCALE_DTYPE = {_lib.SCALE_E8M0: torch.float8_e8m0fnu,
                _lib.SCALE_UE4M3: torch.float8_e4m3fn}
_LAYOUTS = {"plain": _lib.LAYOUT_PLAIN, "swizzled": _lib.LAYOUT_SWIZZLED}
_MODES = {"floor": 0, "rceil": 1, "ceil": 2, "even": 3, "nvfp4": 4}


def _fail(fn, arg, msg, exc=ValueError):
    raise exc(f"mxaccel.{fn}: {arg}: {msg}")


def qdata_dtype(r):
    """The torch dtype of a recipe's element codes."""
    return _ELEM_DTYPE.get(r.elem, torch.uint8)


def scale_dtype(r):
    """The torch dtype of a recipe's scales."""
    return _SCALE_DTYPE[r.scale_type]


def _ceil(a, b):
    return -(-a // b)


def scale_shape(r, rows, k, layout):
    """Shape of the scale tensor for rows x K elements in a layout; torchao's
    for swizzled scales: 32 x 16 per 128 x 4 tile, the same bytes as the
    padded [128*ceil(rows/128), 4*ceil(blocks/4)] to_blocked() matrix."""
    blocks = k // r.block_size
    if layout == "swizzled":
        return (_ceil(rows, 128) * 32, _ceil(blocks, 4) * 16)
    return (rows, blocks)


def _layout(fn, arg, layout):
    if layout not in _LAYOUTS:
        _fail(fn, arg, f"unknown scale layout {layout!r}; expected 'plain' "
              "or 'swizzled'")
    return layout


def _device_name(t):
    d = t.device
    if d.type == "cpu":
        return "cpu"
    if d.type == "cuda":
        return f"cuda:{d.index if d.index is not None else 0}"
    return d.type


def _check_device(fn, named):
    """All tensors on one device, a device libmxaccel has."""
    first = None
    for arg, t in named:
        if t is None:
            continue
        if first is None:
            first = (arg, t)
            if t.device.type not in ("cpu", "cuda", "meta"):
                _fail(fn, arg, f"device {t.device} is not supported (cpu or "
                      "cuda tensors)")
        elif t.device != first[1].device:
            _fail(fn, arg, f"is on {t.device} but {first[0]} is on "
                  f"{first[1].device}")
    return first[1]


def _check_dense(fn, arg, t, dims=2):
    if not isinstance(t, torch.Tensor):
        _fail(fn, arg, f"expected a tensor, got {type(t).__name__}", TypeError)
    if t.dtype not in _DENSE:
        _fail(fn, arg, f"dtype {t.dtype} is not supported (float32 or "
              "bfloat16)", TypeError)
    if t.dim() != dims:
        _fail(fn, arg, f"expected {dims} dimensions, got shape "
              f"{tuple(t.shape)}")
    if t.numel() == 0:
        _fail(fn, arg, f"is empty (shape {tuple(t.shape)})")
    if t.stride(-1) != 1:
        _fail(fn, arg, f"last dimension must be contiguous (stride 1), got "
              f"strides {t.stride()}; call .contiguous()")
    if dims == 2 and t.stride(0) < t.shape[1]:
        _fail(fn, arg, f"row stride {t.stride(0)} is below the row length "
              f"{t.shape[1]} (overlapping rows)")


def _check_c(fn, c, shape, out_dtype):
    """c, what a GEMM adds its result to: out_dtype and the result's shape."""
    _check_dense(fn, "c", c, len(shape))
    if tuple(c.shape) != shape or c.dtype != out_dtype:
        _fail(fn, "c", f"expected a {out_dtype} tensor of shape {shape},"
              f" got {c.dtype} {tuple(c.shape)}")


def _result(c, shape, dtype, device, fill=None):
    """A GEMM's result tensor and the call's flags: a copy of c to add to
    (MXA_GEMM_ACCUMULATE; inputs are never written), else a new tensor,
    filled with fill where given."""
    if c is not None:
        return c.clone(memory_format=torch.contiguous_format), \
            _lib.GEMM_ACCUMULATE
    if fill is None:
        return torch.empty(shape, dtype=dtype, device=device), 0
    return torch.full(shape, fill, dtype=dtype, device=device), 0


def _check_qdata(fn, arg, t, r):
    """qdata of recipe r: returns K."""
    if not isinstance(t, torch.Tensor):
        _fail(fn, arg, f"expected a tensor, got {type(t).__name__}", TypeError)
    want = qdata_dtype(r)
    ok = (want, torch.uint8)
    if r.packed:
        ok = (torch.uint8, torch.float4_e2m1fn_x2)
    if t.dtype not in ok:
        _fail(fn, arg, f"dtype {t.dtype} does not hold {r.name} "
              f"({r.elem_name}) codes; expected " +
              " or ".join(str(d) for d in ok), TypeError)
    if t.dim() != 2:
        _fail(fn, arg, f"expected 2 dimensions [rows, K"
              f"{'/2' if r.packed else ''}], got shape {tuple(t.shape)}")
    if t.numel() == 0:
        _fail(fn, arg, f"is empty (shape {tuple(t.shape)})")
    if t.stride(-1) != 1:
        _fail(fn, arg, f"last dimension (K) must be contiguous (stride 1), "
              f"got strides {t.stride()}; pass the [rows, K] operand, "
              "not a transposed view")
    if t.stride(0) < t.shape[1]:
        _fail(fn, arg, f"row stride {t.stride(0)} is below the row length "
              f"{t.shape[1]}")
    k = t.shape[1] * (2 if r.packed else 1)
    if k % r.block_size:
        _fail(fn, arg, f"K = {k} is not a multiple of {r.name}'s block "
              f"size {r.block_size}")
    return k


def _check_scale(fn, arg, t, r, rows, k, layout):
    if not isinstance(t, torch.Tensor):
        _fail(fn, arg, f"expected a tensor, got {type(t).__name__}", TypeError)
    if t.dtype not in (scale_dtype(r), torch.uint8):
        _fail(fn, arg, f"dtype {t.dtype} is not {r.name}'s scale type "
              f"({scale_dtype(r)} or torch.uint8)", TypeError)
    shape = scale_shape(r, rows, k, layout)
    if layout == "swizzled":
        if t.numel() != shape[0] * shape[1]:
            _fail(fn, arg, f"swizzled scales for {rows} x {k} must hold "
                  f"{shape[0]} x {shape[1]} = {shape[0] * shape[1]} "
                  f"entries, got shape {tuple(t.shape)}")
        if not t.is_contiguous():
            _fail(fn, arg, "swizzled scales must be contiguous")
        return
    if t.dim() != 2 or tuple(t.shape) != shape:
        _fail(fn, arg, f"plain scales for {rows} x {k} must have shape "
              f"{shape}, got {tuple(t.shape)}")
    if t.stride(-1) != 1 or t.stride(0) < shape[1]:
        _fail(fn, arg, f"plain scales must be row-major with a contiguous "
              f"last dimension, got strides {t.stride()}")


def _tensor_scale_value(fn, arg, r, ts):
    """The fp32 per-tensor scale of two-level NVFP4, as a float (0 = none)."""
    if ts is None:
        return 0.0
    if r.scale_type != _lib.SCALE_UE4M3:
        _fail(fn, arg, f"a per-tensor scale needs UE4M3 block scales "
              f"(nvfp4), not {r.name}")
    if ts.numel() != 1:
        _fail(fn, arg, f"expected one value, got shape {tuple(ts.shape)}")
    if ts.dtype != torch.float32:
        _fail(fn, arg, f"dtype {ts.dtype} is not torch.float32", TypeError)
    v = float(ts.reshape(()).item())
    if not (v > 0.0 and v != float("inf")):
        _fail(fn, arg, f"must be positive and finite, got {v}")
    return v


# --- running requests in the library ---------------------------------------

_stream_locks = {}


class _Call:
    """Wraps the tensors of one call as library buffers and frees them."""

    def __init__(self, fn, t):
        self.fn = fn
        self.name = _device_name(t)
        if t.device.type == "cuda" and _lib.device_set_stream is None:
            raise UnsupportedError(
                f"mxaccel.{fn}: {self.name} tensors: this libmxaccel "
                f"({_lib.path}) cannot use CUDA memory in place (it has no "
                "mxa_device_set_stream and CUDA mxa_buffer_wrap)", -95)
        self.dev = _core.device_handle(self.name)
        self.cuda = t.device.type == "cuda"
        self.bufs = []

    def __enter__(self):
        if self.cuda:
            self.lock = _stream_locks.setdefault(self.name, threading.Lock())
            self.lock.acquire()
            self._set_stream()
        return self

    def _set_stream(self):
        if _lib.device_set_stream is None:
            return
        # PyTorch's default stream is the legacy stream, handle 0; to
        # libmxaccel NULL means the device's own stream instead, so pass
        # cudaStreamLegacy ((void *)1) for it (Documentation/cuda.rst).
        stream = torch.cuda.current_stream(self.name).cuda_stream or 1
        _core.check(_lib.device_set_stream(self.dev, stream),
                    f"mxaccel.{self.fn}: set the CUDA stream of {self.name}")

    def __exit__(self, *exc):
        for b in self.bufs:
            _lib.buffer_free(b)
        if self.cuda:
            self.lock.release()

    def wrap(self, arg, t):
        """A library buffer over t's memory (the first to the last byte it
        reaches through its strides)."""
        if t.device.type == "cuda" and _lib.device_set_stream is None:
            raise UnsupportedError(
                f"mxaccel.{self.fn}: {arg}: this libmxaccel ({_lib.path}) "
                f"cannot use CUDA tensors in place: it has no "
                "mxa_device_set_stream / CUDA mxa_buffer_wrap", -95)
        span = 1 + sum((s - 1) * st for s, st in zip(t.shape, t.stride()))
        size = span * t.element_size()
        p = ctypes.c_void_p()
        err = _lib.buffer_wrap(self.dev, t.data_ptr(), size, ctypes.byref(p))
        if err < 0:
            cls = UnsupportedError if err == -95 else MxaccelError
            raise cls(f"mxaccel.{self.fn}: {arg}: {self.name} cannot wrap "
                      f"this tensor's memory: {_lib.errname(err)}", err)
        self.bufs.append(p.value)
        return p.value

    def matrix(self, arg, qdata, scale, r, layout, k, tensor_scale=0.0,
               row0=0, rows=None):
        m = _lib.Matrix()
        m.data = self.wrap(arg + "_qdata", qdata)
        m.data_stride = qdata.stride(0)
        m.data_offset = row0 * qdata.stride(0)
        m.scale = self.wrap(arg + "_scale", scale)
        m.elem = r.elem
        m.scale_type = r.scale_type
        m.block_size = r.block_size
        m.scale_layout = _LAYOUTS[layout]
        m.rows = qdata.shape[0] if rows is None else rows
        m.cols = k
        m.tensor_scale = tensor_scale
        if layout == "plain":
            m.scale_stride = scale.stride(0)
            m.scale_offset = row0 * scale.stride(0)
        return m

    def dense(self, arg, t, row0=0, rows=None):
        d = _lib.Dense()
        d.buf = self.wrap(arg, t)
        d.stride = t.stride(0) * t.element_size()
        d.offset = row0 * d.stride
        d.dtype = _DENSE[t.dtype]
        d.rows = t.shape[0] if rows is None else rows
        d.cols = t.shape[1]
        return d

    def check(self, err, what):
        if err >= 0:
            return
        msg = f"mxaccel.{self.fn}: {what} on {self.name}: {_lib.errname(err)}"
        if err == -95:
            raise UnsupportedError(msg, err)
        raise MxaccelError(msg, err)


def _unsupported(fn, name, op, ra, rb, dtype, m, n, k, pref, accumulate=False):
    """Raise UnsupportedError with the library's reason, before running."""
    dt = "bfloat16" if dtype == torch.bfloat16 else "float32"
    sup, _, reason = _core.query(name, op, ra.name, rb.name if rb else None,
                                 dt, m, n, k, pref, accumulate)
    if sup == Support.NONE:
        raise UnsupportedError(
            f"mxaccel.{fn}: {name} cannot run {op} of "
            f"{ra.name}{' x ' + rb.name if rb else ''} under "
            f"{Preference(pref).name.lower()}: {reason}", -95)


def _pref(fn, pref):
    if not isinstance(pref, str):
        _fail(fn, "pref", f"expected a preference name, got "
              f"{type(pref).__name__}", TypeError)
    return preference(pref, f"mxaccel.{fn}: pref")


# --- quantize ----------------------------------------------------------------

def _quantize_check(x, recipe_name, layout, mode, tensor_scale,
                    fn="quantize"):
    r = recipe(recipe_name, f"mxaccel.{fn}: recipe")
    _check_dense(fn, "x", x)
    _check_device(fn, [("x", x), ("tensor_scale", tensor_scale)])
    _layout(fn, "layout", layout)
    if mode and mode not in _MODES:
        _fail(fn, "mode", f"unknown scale mode {mode!r}; expected one of "
              + ", ".join(_MODES))
    m = _MODES[mode] if mode else r.mode
    if (m == _MODES["nvfp4"]) != (r.scale_type == _lib.SCALE_UE4M3):
        _fail(fn, "mode", f"{mode!r} does not apply to {r.name}'s scales")
    rows, k = x.shape
    if fn == "quantize_colwise":
        # blocks run down x's columns: the result is x.t() quantized
        rows, k = k, rows
        if k % r.block_size:
            _fail(fn, "x", f"rows = {k} (the first dimension, blocked here) "
                  f"is not a multiple of {r.name}'s block size "
                  f"{r.block_size}")
    elif k % r.block_size:
        _fail(fn, "x", f"K = {k} (the last dimension) is not a multiple of "
              f"{r.name}'s block size {r.block_size}")
    if tensor_scale is not None and r.scale_type != _lib.SCALE_UE4M3:
        _fail(fn, "tensor_scale", f"a per-tensor scale needs UE4M3 block "
              f"scales (nvfp4), not {r.name}")
    return r, m, rows, k


def _quantize_into(fn, lib_fn, what, x, recipe_name, layout, mode, pref,
                   tensor_scale):
    """The body of both quantize ops: fn names the op in messages, lib_fn
    is the library function, what the operation in its error text."""
    r, m, rows, k = _quantize_check(x, recipe_name, layout, mode,
                                    tensor_scale, fn)
    p = _pref(fn, pref)
    ts = _tensor_scale_value(fn, "tensor_scale", r, tensor_scale)
    # Raw bytes across the op boundary (quantize() views them as the typed
    # dtypes): opcheck's schema check cannot compare float8 tensors.
    qdata = torch.empty((rows, r.data_cols(k)), dtype=torch.uint8,
                        device=x.device)
    scale = torch.empty(scale_shape(r, rows, k, layout), dtype=torch.uint8,
                        device=x.device)
    with _Call(fn, x) as c:
        src = c.dense("x", x)
        dst = c.matrix("out", qdata, scale, r, layout, k, ts)
        err = lib_fn(c.dev, ctypes.byref(src), ctypes.byref(dst), m, int(p))
        if err == -95:
            _unsupported(fn, c.name, fn, r, None, x.dtype, rows, 0, k, p)
        c.check(err, f"{what} to {r.name}")
    return qdata, scale


@torch.library.custom_op("mxaccel::quantize", mutates_args=())
def _quantize_op(x: torch.Tensor, recipe_name: str, layout: str, mode: str,
                 pref: str, tensor_scale: Optional[torch.Tensor]
                 ) -> tuple[torch.Tensor, torch.Tensor]:
    return _quantize_into("quantize", _lib.quantize, "quantize", x,
                          recipe_name, layout, mode, pref, tensor_scale)


@_quantize_op.register_fake
def _(x, recipe_name, layout, mode, pref, tensor_scale):
    r, _, rows, k = _quantize_check(x, recipe_name, layout, mode,
                                    tensor_scale)
    return (x.new_empty((rows, r.data_cols(k)), dtype=torch.uint8),
            x.new_empty(scale_shape(r, rows, k, layout), dtype=torch.uint8))


def quantize(x, recipe="mxfp8", *, layout="plain", mode=None,
             pref=Preference.AUTO, tensor_scale=None):
    """Quantize a [rows, K] float32/bfloat16 tensor: (qdata, scale).

    mode overrides the recipe's scale rule ('floor', 'rceil', 'ceil',
    'even'; torchao's ScaleCalculationMode); tensor_scale is the fp32
    per-tensor scale of two-level nvfp4 (torchao's per_tensor_scale)."""
    if isinstance(tensor_scale, (int, float)):
        tensor_scale = torch.tensor(float(tensor_scale), dtype=torch.float32,
                                    device=x.device)
    name = _recipe_name(recipe)
    q, s = torch.ops.mxaccel.quantize(x, name, layout, mode or "",
                                      preference(pref).name.lower(),
                                      tensor_scale)
    r = _core.recipe(name)
    return q.view(qdata_dtype(r)), s.view(scale_dtype(r))


def _recipe_name(r):
    return r.name if isinstance(r, _core.Recipe) else r


def _raw(fn, arg, t, r, what):
    """qdata or scale as uint8, the ops' schema type, after checking its
    typed dtype here (the op sees only bytes)."""
    if not isinstance(t, torch.Tensor):
        _fail(fn, arg, f"expected a tensor, got {type(t).__name__}", TypeError)
    if what == "qdata":
        ok = (torch.uint8, torch.float4_e2m1fn_x2) if r.packed else \
            (qdata_dtype(r), torch.uint8)
        if t.dtype not in ok:
            _fail(fn, arg, f"dtype {t.dtype} does not hold {r.name} "
                  f"({r.elem_name}) codes; expected " +
                  " or ".join(str(d) for d in ok), TypeError)
    elif t.dtype not in (scale_dtype(r), torch.uint8):
        _fail(fn, arg, f"dtype {t.dtype} is not {r.name}'s scale type "
              f"({scale_dtype(r)} or torch.uint8)", TypeError)
    return t if t.dtype == torch.uint8 else t.view(torch.uint8)


@torch.library.custom_op("mxaccel::quantize_colwise", mutates_args=())
def _quantize_colwise_op(x: torch.Tensor, recipe_name: str, layout: str,
                         mode: str, pref: str,
                         tensor_scale: Optional[torch.Tensor]
                         ) -> tuple[torch.Tensor, torch.Tensor]:
    return _quantize_into("quantize_colwise", _lib.quantize_colwise,
                          "column-wise quantize", x, recipe_name, layout,
                          mode, pref, tensor_scale)


@_quantize_colwise_op.register_fake
def _(x, recipe_name, layout, mode, pref, tensor_scale):
    r, _, rows, k = _quantize_check(x, recipe_name, layout, mode,
                                    tensor_scale, "quantize_colwise")
    return (x.new_empty((rows, r.data_cols(k)), dtype=torch.uint8),
            x.new_empty(scale_shape(r, rows, k, layout), dtype=torch.uint8))


def quantize_colwise(x, recipe="mxfp8", *, layout="plain", mode=None,
                     pref=Preference.AUTO, tensor_scale=None):
    """x.t() quantized, read in place from x [rows, cols] (torchao's dim1
    cast for the transposed operand of training): (qdata [cols, rows],
    scale), bit-exact with quantize(x.t().contiguous())."""
    if isinstance(tensor_scale, (int, float)):
        tensor_scale = torch.tensor(float(tensor_scale), dtype=torch.float32,
                                    device=x.device)
    name = _recipe_name(recipe)
    q, s = torch.ops.mxaccel.quantize_colwise(
        x, name, layout, mode or "", preference(pref).name.lower(),
        tensor_scale)
    r = _core.recipe(name)
    return q.view(qdata_dtype(r)), s.view(scale_dtype(r))


# --- dequantize --------------------------------------------------------------

def _dequantize_check(qdata, scale, recipe_name, layout, dtype,
                      tensor_scale):
    fn = "dequantize"
    r = recipe(recipe_name, f"mxaccel.{fn}: recipe")
    _layout(fn, "layout", layout)
    k = _check_qdata(fn, "qdata", qdata, r)
    _check_scale(fn, "scale", scale, r, qdata.shape[0], k, layout)
    _check_device(fn, [("qdata", qdata), ("scale", scale),
                       ("tensor_scale", tensor_scale)])
    if dtype not in _DENSE:
        _fail(fn, "dtype", f"{dtype} is not supported (torch.float32 or "
              "torch.bfloat16)", TypeError)
    if tensor_scale is not None and r.scale_type != _lib.SCALE_UE4M3:
        _fail(fn, "tensor_scale", f"a per-tensor scale needs UE4M3 block "
              f"scales (nvfp4), not {r.name}")
    return r, qdata.shape[0], k


@torch.library.custom_op("mxaccel::dequantize", mutates_args=())
def _dequantize_op(qdata: torch.Tensor, scale: torch.Tensor, recipe_name: str,
                   layout: str, dtype: torch.dtype, pref: str,
                   tensor_scale: Optional[torch.Tensor]) -> torch.Tensor:
    fn = "dequantize"
    r, rows, k = _dequantize_check(qdata, scale, recipe_name, layout, dtype,
                                   tensor_scale)
    p = _pref(fn, pref)
    ts = _tensor_scale_value(fn, "tensor_scale", r, tensor_scale)
    out = torch.empty((rows, k), dtype=dtype, device=qdata.device)
    with _Call(fn, qdata) as c:
        src = c.matrix("", qdata, scale, r, layout, k, ts)
        dst = c.dense("out", out)
        err = _lib.dequantize(c.dev, ctypes.byref(src), ctypes.byref(dst),
                              int(p))
        if err == -95:
            _unsupported(fn, c.name, "dequantize", r, None, dtype, rows, 0,
                         k, p)
        c.check(err, f"dequantize {r.name}")
    return out


@_dequantize_op.register_fake
def _(qdata, scale, recipe_name, layout, dtype, pref, tensor_scale):
    _, rows, k = _dequantize_check(qdata, scale, recipe_name, layout, dtype,
                                   tensor_scale)
    return qdata.new_empty((rows, k), dtype=dtype)


def dequantize(qdata, scale, recipe="mxfp8", *, layout="plain",
               dtype=torch.float32, pref=Preference.AUTO, tensor_scale=None):
    """The float32/bfloat16 values of a quantized [rows, K] matrix."""
    if isinstance(tensor_scale, (int, float)):
        tensor_scale = torch.tensor(float(tensor_scale), dtype=torch.float32,
                                    device=qdata.device)
    fn, r = "dequantize", _core.recipe(_recipe_name(recipe),
                                       "mxaccel.dequantize: recipe")
    return torch.ops.mxaccel.dequantize(
        _raw(fn, "qdata", qdata, r, "qdata"),
        _raw(fn, "scale", scale, r, "scale"), r.name, layout, dtype,
        preference(pref).name.lower(), tensor_scale)


# --- gemm ----------------------------------------------------------------------

def _gemm_check(fn, a_qdata, a_scale, a_recipe, a_layout, b_qdata, b_scale,
                b_recipe, b_layout, out_dtype, c, a_ts, b_ts):
    ra = recipe(a_recipe, f"mxaccel.{fn}: a_recipe")
    rb = recipe(b_recipe, f"mxaccel.{fn}: b_recipe")
    _layout(fn, "a_layout", a_layout)
    _layout(fn, "b_layout", b_layout)
    k = _check_qdata(fn, "a_qdata", a_qdata, ra)
    _check_scale(fn, "a_scale", a_scale, ra, a_qdata.shape[0], k, a_layout)
    kb = _check_qdata(fn, "b_qdata", b_qdata, rb)
    _check_scale(fn, "b_scale", b_scale, rb, b_qdata.shape[0], kb, b_layout)
    n = b_qdata.shape[0]
    if kb != k:
        _fail(fn, "b_qdata", f"K = {kb} does not match a_qdata's K = {k}")
    if out_dtype not in _DENSE:
        _fail(fn, "out_dtype", f"{out_dtype} is not supported (torch.float32 "
              "or torch.bfloat16)", TypeError)
    m = a_qdata.shape[0]
    if c is not None:
        _check_c(fn, c, (m, n), out_dtype)
    _check_device(fn, [("a_qdata", a_qdata), ("a_scale", a_scale),
                       ("b_qdata", b_qdata), ("b_scale", b_scale), ("c", c),
                       ("a_tensor_scale", a_ts), ("b_tensor_scale", b_ts)])
    return ra, rb, m, n, k


@torch.library.custom_op("mxaccel::gemm", mutates_args=())
def _gemm_op(a_qdata: torch.Tensor, a_scale: torch.Tensor, a_recipe: str,
             a_layout: str, b_qdata: torch.Tensor, b_scale: torch.Tensor,
             b_recipe: str, b_layout: str, out_dtype: torch.dtype, pref: str,
             c: Optional[torch.Tensor], a_tensor_scale: Optional[torch.Tensor],
             b_tensor_scale: Optional[torch.Tensor]) -> torch.Tensor:
    fn = "gemm"
    ra, rb, m, n, k = _gemm_check(fn, a_qdata, a_scale, a_recipe, a_layout,
                                  b_qdata, b_scale, b_recipe, b_layout,
                                  out_dtype, c, a_tensor_scale,
                                  b_tensor_scale)
    p = _pref(fn, pref)
    ats = _tensor_scale_value(fn, "a_tensor_scale", ra, a_tensor_scale)
    bts = _tensor_scale_value(fn, "b_tensor_scale", rb, b_tensor_scale)
    out, flags = _result(c, (m, n), out_dtype, a_qdata.device)
    with _Call(fn, a_qdata) as call:
        am = call.matrix("a", a_qdata, a_scale, ra, a_layout, k, ats)
        bm = call.matrix("b", b_qdata, b_scale, rb, b_layout, k, bts)
        cd = call.dense("out", out)
        err = _lib.gemm(call.dev, ctypes.byref(am), ctypes.byref(bm),
                        ctypes.byref(cd), flags, int(p))
        if err == -95:
            _unsupported(fn, call.name, "gemm", ra, rb, out_dtype, m, n, k,
                         p, flags != 0)
        call.check(err, f"gemm {ra.name} x {rb.name}")
    return out


@_gemm_op.register_fake
def _(a_qdata, a_scale, a_recipe, a_layout, b_qdata, b_scale, b_recipe,
      b_layout, out_dtype, pref, c, a_tensor_scale, b_tensor_scale):
    _, _, m, n, _ = _gemm_check("gemm", a_qdata, a_scale, a_recipe, a_layout,
                                b_qdata, b_scale, b_recipe, b_layout,
                                out_dtype, c, a_tensor_scale, b_tensor_scale)
    return a_qdata.new_empty((m, n), dtype=out_dtype)


def gemm(a_qdata, a_scale, b_qdata, b_scale, recipe="mxfp8", b_recipe=None,
         *, a_layout="plain", b_layout="plain", out_dtype=torch.bfloat16,
         pref=Preference.AUTO, c=None, a_tensor_scale=None,
         b_tensor_scale=None):
    """A [M, K] x B [N, K]^T (+ c) in out_dtype; both operands quantized
    (qdata and scale as quantize() returns them), K contiguous."""
    fn = "gemm"
    ra = _core.recipe(_recipe_name(recipe), "mxaccel.gemm: a_recipe")
    rb = _core.recipe(_recipe_name(b_recipe or recipe),
                      "mxaccel.gemm: b_recipe")
    return torch.ops.mxaccel.gemm(
        _raw(fn, "a_qdata", a_qdata, ra, "qdata"),
        _raw(fn, "a_scale", a_scale, ra, "scale"), ra.name, a_layout,
        _raw(fn, "b_qdata", b_qdata, rb, "qdata"),
        _raw(fn, "b_scale", b_scale, rb, "scale"), rb.name, b_layout, out_dtype,
        preference(pref).name.lower(), c, a_tensor_scale, b_tensor_scale)


# --- grouped gemm --------------------------------------------------------------

def _swizzled_bytes(rows, blocks):
    """Bytes of one group's swizzled scales: rows x blocks in 128 x 4
    tiles (torchao's to_blocked() of that group alone)."""
    return _ceil(rows, 128) * 128 * _ceil(blocks, 4) * 4


def _scale_bytes_dtype(fn, arg, t, r):
    if not isinstance(t, torch.Tensor):
        _fail(fn, arg, f"expected a tensor, got {type(t).__name__}", TypeError)
    if t.dtype not in (scale_dtype(r), torch.uint8):
        _fail(fn, arg, f"dtype {t.dtype} is not {r.name}'s scale type "
              f"({scale_dtype(r)} or torch.uint8)", TypeError)


def _check_group_swizzled(fn, arg, t, r, what):
    """Per-group swizzled scales: contiguous bytes; their size depends on
    the group sizes, checked against offs in the real kernel."""
    _scale_bytes_dtype(fn, arg, t, r)
    if not t.is_contiguous():
        _fail(fn, arg, f"swizzled per-group scales ({what}) must be "
              f"contiguous, got strides {t.stride()}")


def _grouped_check(a_qdata, a_scale, a_recipe, a_layout, b_qdata, b_scale,
                   b_recipe, b_layout, offs, out_dtype, c=None, a_ts=None,
                   b_ts=None):
    """Shapes, types and devices of a grouped GEMM (everything but offs'
    values); returns the recipes, M, N, K, the group count, whether B is
    3-D and the result's shape."""
    fn = "grouped_gemm"
    ra = recipe(a_recipe, f"mxaccel.{fn}: a_recipe")
    rb = recipe(b_recipe, f"mxaccel.{fn}: b_recipe")
    _layout(fn, "a_layout", a_layout)
    _layout(fn, "b_layout", b_layout)
    if not isinstance(offs, torch.Tensor):
        _fail(fn, "offs", f"expected a tensor, got {type(offs).__name__}",
              TypeError)
    if offs.dtype != torch.int32:
        _fail(fn, "offs", f"dtype {offs.dtype} is not torch.int32", TypeError)
    if offs.dim() != 1 or not 1 <= offs.shape[0] <= _lib.GROUPS_MAX:
        _fail(fn, "offs", f"expected shape (groups,) with 1 to "
              f"{_lib.GROUPS_MAX} group ends, got {tuple(offs.shape)}")
    if offs.shape[0] > 1 and offs.stride(0) != 1:
        _fail(fn, "offs", f"must be contiguous, got stride {offs.stride()}")
    groups = offs.shape[0]
    k = _check_qdata(fn, "a_qdata", a_qdata, ra)
    m = a_qdata.shape[0]
    if not isinstance(b_qdata, torch.Tensor):
        _fail(fn, "b_qdata", f"expected a tensor, got "
              f"{type(b_qdata).__name__}", TypeError)
    if b_qdata.dim() not in (2, 3):
        _fail(fn, "b_qdata", f"expected 3 dimensions [groups, N, K] (2d x "
              f"3d, groups along M) or 2 dimensions [N, total_K] (2d x 2d, "
              f"groups along K), got shape {tuple(b_qdata.shape)}")
    three = b_qdata.dim() == 3
    if three:
        if b_qdata.shape[0] != groups:
            _fail(fn, "offs", f"has {groups} group ends but b_qdata has "
                  f"{b_qdata.shape[0]} groups (shape "
                  f"{tuple(b_qdata.shape)})")
        kb = _check_qdata(fn, "b_qdata", b_qdata[0], rb)
        n = b_qdata.shape[1]
        if groups > 1 and b_qdata.stride(0) != n * b_qdata.stride(1):
            _fail(fn, "b_qdata", f"groups must be stacked N = {n} rows "
                  f"apart (stride(0) == N * stride(1)), got strides "
                  f"{b_qdata.stride()}; call .contiguous()")
    else:
        kb = _check_qdata(fn, "b_qdata", b_qdata, rb)
        n = b_qdata.shape[0]
    if kb != k:
        _fail(fn, "b_qdata", f"K = {kb} does not match a_qdata's K = {k}")
    if a_layout == "plain":
        _check_scale(fn, "a_scale", a_scale, ra, m, k, "plain")
    else:
        _check_group_swizzled(fn, "a_scale", a_scale, ra,
                              "torchao's torch_to_blocked_2d_" +
                              ("M" if three else "K") + "_groups layout")
    if not three and b_layout == "plain":
        _check_scale(fn, "b_scale", b_scale, rb, n, k, "plain")
    elif not three:
        _check_group_swizzled(fn, "b_scale", b_scale, rb,
                              "torchao's torch_to_blocked_2d_K_groups layout")
    elif b_layout == "plain":
        blocks = k // rb.block_size
        _scale_bytes_dtype(fn, "b_scale", b_scale, rb)
        if b_scale.dim() != 3 or tuple(b_scale.shape) != (groups, n, blocks):
            _fail(fn, "b_scale", f"plain per-group scales must have shape "
                  f"(groups, N, K/{rb.block_size}) = {(groups, n, blocks)}, "
                  f"got {tuple(b_scale.shape)}")
        _check_scale(fn, "b_scale", b_scale[0], rb, n, k, "plain")
        if groups > 1 and b_scale.stride(0) != n * b_scale.stride(1):
            _fail(fn, "b_scale", f"groups must be stacked N = {n} scale rows"
                  f" apart (stride(0) == N * stride(1)), got strides "
                  f"{b_scale.stride()}; call .contiguous()")
    else:
        _check_group_swizzled(fn, "b_scale", b_scale, rb,
                              "torchao's torch_to_blocked_per_group_3d "
                              "layout")
        want = groups * _swizzled_bytes(n, k // rb.block_size)
        if b_scale.numel() != want:
            _fail(fn, "b_scale", f"swizzled per-group scales of {groups} "
                  f"groups of {n} x {k} must hold {groups} x "
                  f"{want // groups} = {want} entries, got shape "
                  f"{tuple(b_scale.shape)}")
    if out_dtype not in _DENSE:
        _fail(fn, "out_dtype", f"{out_dtype} is not supported (torch.float32 "
              "or torch.bfloat16)", TypeError)
    shape = (m, n) if three else (groups, m, n)
    if c is not None:
        _check_c(fn, c, shape, out_dtype)
    _check_device(fn, [("a_qdata", a_qdata), ("a_scale", a_scale),
                       ("b_qdata", b_qdata), ("b_scale", b_scale),
                       ("offs", offs), ("c", c), ("a_tensor_scale", a_ts),
                       ("b_tensor_scale", b_ts)])
    return ra, rb, m, n, k, groups, three, shape


def _group_ends(fn, offs, extent, three, block):
    """offs' values (read on the host: a synchronisation for CUDA
    tensors), checked as the library does, naming offs."""
    ends = offs.tolist()
    what = "a_qdata's rows (total_M)" if three else "the K of a_qdata " \
        "and b_qdata (total_K)"
    start = 0
    for g, end in enumerate(ends):
        if end < start:
            _fail(fn, "offs", f"offs[{g}] = {end} is below " +
                  (f"offs[{g - 1}] = {start}: group ends must not decrease"
                   if g else "0"))
        if end > extent:
            _fail(fn, "offs", f"offs[{g}] = {end} exceeds {what} = {extent}")
        if not three and end % block:
            _fail(fn, "offs", f"offs[{g}] = {end} is not a multiple of the "
                  f"block size {block} (K groups end on scale blocks)")
        start = end
    if start != extent:
        _fail(fn, "offs", f"the last end offs[{len(ends) - 1}] = {start} "
              f"must equal {what} = {extent}")
    return ends


def _check_group_scale_size(fn, arg, t, need):
    if t.numel() < need:
        _fail(fn, arg, f"swizzled per-group scales for these groups need "
              f"{need} entries, got {t.numel()} (shape {tuple(t.shape)})")


@torch.library.custom_op("mxaccel::grouped_gemm", mutates_args=())
def _grouped_gemm_op(a_qdata: torch.Tensor, a_scale: torch.Tensor,
                     a_recipe: str, a_layout: str, b_qdata: torch.Tensor,
                     b_scale: torch.Tensor, b_recipe: str, b_layout: str,
                     offs: torch.Tensor, out_dtype: torch.dtype,
                     pref: str, c: Optional[torch.Tensor],
                     a_tensor_scale: Optional[torch.Tensor],
                     b_tensor_scale: Optional[torch.Tensor],
                     check_offs: bool) -> torch.Tensor:
    fn = "grouped_gemm"
    ra, rb, m, n, k, groups, three, shape = _grouped_check(
        a_qdata, a_scale, a_recipe, a_layout, b_qdata, b_scale, b_recipe,
        b_layout, offs, out_dtype, c, a_tensor_scale, b_tensor_scale)
    p = _pref(fn, pref)
    ats = _tensor_scale_value(fn, "a_tensor_scale", ra, a_tensor_scale)
    bts = _tensor_scale_value(fn, "b_tensor_scale", rb, b_tensor_scale)
    block = max(ra.block_size, rb.block_size)
    # Unchecked ends (CUDA only): the device checks them and writes nothing
    # for malformed ones, so a result that starts as NaN says so.
    unchecked = not check_offs and offs.device.type == "cuda"
    if not unchecked:
        ends = _group_ends(fn, offs, m if three else k, three, block)
        sizes = [e - s for s, e in zip([0] + ends[:-1], ends)]
        if a_layout == "swizzled":
            _check_group_scale_size(fn, "a_scale", a_scale, sum(
                _swizzled_bytes(s, k // ra.block_size) for s in sizes)
                if three else
                sum(_swizzled_bytes(m, s // ra.block_size) for s in sizes))
        if not three and b_layout == "swizzled":
            _check_group_scale_size(fn, "b_scale", b_scale, sum(
                _swizzled_bytes(n, s // rb.block_size) for s in sizes))
    out, flags = _result(c, shape, out_dtype, a_qdata.device,
                         float("nan") if unchecked else None)
    with _Call(fn, a_qdata) as call:
        if _lib.gemm_grouped is None:
            raise UnsupportedError(
                f"mxaccel.{fn}: this libmxaccel ({_lib.path}) has no "
                "mxa_gemm_grouped", -95)
        am = call.matrix("a", a_qdata, a_scale, ra, a_layout, k, ats)
        bm = call.matrix("b", b_qdata, b_scale, rb, b_layout, k, bts)
        if three:
            # One group's [N, K]; the library steps over the stack.
            bm.rows = n
            bm.data_stride = b_qdata.stride(1)
            if b_layout == "plain":
                bm.scale_stride = b_scale.stride(1)
        cd = call.dense("out", out.view(-1, n))
        grp = _lib.Grouped()
        grp.kind = _lib.GROUP_2D_3D if three else _lib.GROUP_2D_2D
        grp.count = groups
        grp.offsets = call.wrap("offs", offs)
        err = _lib.gemm_grouped(call.dev, ctypes.byref(am), ctypes.byref(bm),
                                ctypes.byref(cd), ctypes.byref(grp), flags,
                                int(p))
        if err == -95:
            _unsupported(fn, call.name, "gemm_grouped", ra, rb, out_dtype, m,
                         n, k, p, flags != 0)
        call.check(err, f"grouped gemm {ra.name} x {rb.name} "
                   f"({'2d x 3d' if three else '2d x 2d'})")
    return out


@_grouped_gemm_op.register_fake
def _(a_qdata, a_scale, a_recipe, a_layout, b_qdata, b_scale, b_recipe,
      b_layout, offs, out_dtype, pref, c, a_tensor_scale, b_tensor_scale,
      check_offs):
    shape = _grouped_check(a_qdata, a_scale, a_recipe, a_layout, b_qdata,
                           b_scale, b_recipe, b_layout, offs, out_dtype, c,
                           a_tensor_scale, b_tensor_scale)[-1]
    return a_qdata.new_empty(shape, dtype=out_dtype)


def grouped_gemm(a_qdata, a_scale, b_qdata, b_scale, offs, recipe="mxfp8",
                 b_recipe=None, *, a_layout="plain", b_layout="plain",
                 out_dtype=torch.bfloat16, pref=Preference.AUTO, c=None,
                 a_tensor_scale=None, b_tensor_scale=None, check_offs=True):
    """torch._scaled_grouped_mm on block-scaled operands, one
    mxa_gemm_grouped call; offs holds int32 cumulative group ends on the
    operands' device, the last equal to the grouped extent.

    2d x 3d (b_qdata [groups, N, K]; MoE forward and dgrad): rows
    offs[g-1]..offs[g] of A [total_M, K] times B[g]^T, result [total_M, N].
    2d x 2d (b_qdata [N, total_K]; wgrad): columns offs[g-1]..offs[g]
    (multiples of the block size) of A [M, total_K] and B, result
    [groups, M, N] (an empty group's is 0).

    Scales are plain ([rows, K/block], B of 2d x 3d [groups, N, K/block])
    or swizzled as torchao's MoE training lays them out:
    torch_to_blocked_2d_M_groups (A of 2d x 3d), torch_to_blocked_2d_K_groups
    (A and B of 2d x 2d), torch_to_blocked_per_group_3d (B of 2d x 3d).

    c (the result's shape and out_dtype) is added to the result (an empty
    2d x 2d group's result is then c's); a_tensor_scale / b_tensor_scale
    are two-level NVFP4's fp32 per-tensor scales (torchao's
    per_tensor_scale), fp32 tensors of one value, one for the whole
    operand (B's stack shares one).

    check_offs=False on CUDA tensors: offs is not read on the host, so the
    call does not synchronise (and can be captured in a CUDA graph); the
    library checks the ends on the GPU and writes nothing for malformed
    ones, which leaves the result NaN (c's values when c is given).  On
    the CPU the ends are always checked and an error raised."""
    fn = "grouped_gemm"
    ra = _core.recipe(_recipe_name(recipe), "mxaccel.grouped_gemm: a_recipe")
    rb = _core.recipe(_recipe_name(b_recipe or recipe),
                      "mxaccel.grouped_gemm: b_recipe")
    if not isinstance(offs, torch.Tensor):
        _fail(fn, "offs", f"expected a tensor, got {type(offs).__name__}",
              TypeError)
    return torch.ops.mxaccel.grouped_gemm(
        _raw(fn, "a_qdata", a_qdata, ra, "qdata"),
        _raw(fn, "a_scale", a_scale, ra, "scale"), ra.name, a_layout,
        _raw(fn, "b_qdata", b_qdata, rb, "qdata"),
        _raw(fn, "b_scale", b_scale, rb, "scale"), rb.name, b_layout, offs,
        out_dtype, preference(pref).name.lower(), c, a_tensor_scale,
        b_tensor_scale, bool(check_offs))


# --- weight-only gemm -------------------------------------------------------

def _weight_only_check(a, b_qdata, b_scale, b_recipe, b_layout, out_dtype, c,
                       b_ts):
    fn = "gemm_weight_only"
    rb = recipe(b_recipe, f"mxaccel.{fn}: b_recipe")
    _layout(fn, "b_layout", b_layout)
    _check_dense(fn, "a", a)
    k = _check_qdata(fn, "b_qdata", b_qdata, rb)
    _check_scale(fn, "b_scale", b_scale, rb, b_qdata.shape[0], k, b_layout)
    if a.shape[1] != k:
        _fail(fn, "b_qdata", f"K = {k} does not match a's K = {a.shape[1]}")
    if out_dtype not in _DENSE:
        _fail(fn, "out_dtype", f"{out_dtype} is not supported (torch.float32 "
              "or torch.bfloat16)", TypeError)
    m, n = a.shape[0], b_qdata.shape[0]
    if c is not None:
        _check_c(fn, c, (m, n), out_dtype)
    _check_device(fn, [("a", a), ("b_qdata", b_qdata), ("b_scale", b_scale),
                       ("c", c), ("b_tensor_scale", b_ts)])
    return rb, m, n, k


@torch.library.custom_op("mxaccel::gemm_weight_only", mutates_args=())
def _gemm_weight_only_op(a: torch.Tensor, b_qdata: torch.Tensor,
                         b_scale: torch.Tensor, b_recipe: str, b_layout: str,
                         out_dtype: torch.dtype, pref: str,
                         c: Optional[torch.Tensor],
                         b_tensor_scale: Optional[torch.Tensor]
                         ) -> torch.Tensor:
    fn = "gemm_weight_only"
    rb, m, n, k = _weight_only_check(a, b_qdata, b_scale, b_recipe, b_layout,
                                     out_dtype, c, b_tensor_scale)
    p = _pref(fn, pref)
    bts = _tensor_scale_value(fn, "b_tensor_scale", rb, b_tensor_scale)
    if _lib.gemm_weight_only is None:
        raise UnsupportedError(f"mxaccel.{fn}: this libmxaccel "
                               f"({_lib.path}) has no mxa_gemm_weight_only",
                               -95)
    out, flags = _result(c, (m, n), out_dtype, a.device)
    with _Call(fn, a) as call:
        ad = call.dense("a", a)
        bm = call.matrix("b", b_qdata, b_scale, rb, b_layout, k, bts)
        cd = call.dense("out", out)
        err = _lib.gemm_weight_only(call.dev, ctypes.byref(ad),
                                    ctypes.byref(bm), ctypes.byref(cd), flags,
                                    int(p))
        if err == -95:
            dt = "bfloat16" if a.dtype == torch.bfloat16 else "float32"
            sup, _, reason = _core.query(call.name, "gemm_weight_only", rb.name,
                                         rb.name, dt, m, n, k, p, flags != 0)
            raise UnsupportedError(
                f"mxaccel.{fn}: {call.name} cannot run weight-only gemm of "
                f"{a.dtype} x {rb.name} under {Preference(p).name.lower()}: "
                f"{reason}", err)
        call.check(err, f"weight-only gemm {a.dtype} x {rb.name}")
    return out


@_gemm_weight_only_op.register_fake
def _(a, b_qdata, b_scale, b_recipe, b_layout, out_dtype, pref, c,
      b_tensor_scale):
    _, m, n, _ = _weight_only_check(a, b_qdata, b_scale, b_recipe, b_layout,
                                    out_dtype, c, b_tensor_scale)
    return a.new_empty((m, n), dtype=out_dtype)


def gemm_weight_only(a, b_qdata, b_scale, recipe="mxfp4", *, b_layout="plain",
                     out_dtype=torch.bfloat16, pref=Preference.AUTO, c=None,
                     b_tensor_scale=None):
    """A [M, K] (dense float32/bfloat16 activations) x B [N, K]^T (quantized
    weights) (+ c): decode without quantizing the activations."""
    fn = "gemm_weight_only"
    rb = _core.recipe(_recipe_name(recipe), f"mxaccel.{fn}: recipe")
    return torch.ops.mxaccel.gemm_weight_only(
        a, _raw(fn, "b_qdata", b_qdata, rb, "qdata"),
        _raw(fn, "b_scale", b_scale, rb, "scale"), rb.name, b_layout,
        out_dtype, preference(pref).name.lower(), c, b_tensor_scale)


# --- the capability query -------------------------------------------------------

def supports(device, recipe="mxfp8", preference=Preference.AUTO, *,
             op="gemm", dtype=torch.bfloat16, b_recipe=None):
    """(Support, reason): can device run recipe's op under the preference?

    The replacement for capability gates such as torchtitan's
    has_cuda_capability(10, 0): device is a torch.device or a name ("cpu",
    "cuda:0", "accel:0"); the preference an mxaccel.Preference, a name, or
    torchao's KernelPreference.  A device the library cannot open answers
    Support.NONE with the reason."""
    if isinstance(device, torch.device):
        name = "cpu" if device.type == "cpu" else \
            f"{device.type}:{device.index or 0}"
    elif isinstance(device, str):
        name = device if ":" in device or device in ("cpu", "auto") \
            else f"{device}:0"
    else:
        raise TypeError("mxaccel.supports: device: expected a torch.device "
                        f"or a name, got {type(device).__name__}")
    pref = _core.preference(preference, "mxaccel.supports: preference")
    dt = "bfloat16" if dtype == torch.bfloat16 else "float32"
    sup, kernel, reason = _core.query(name, op, _recipe_name(recipe),
                                      _recipe_name(b_recipe), dt, 0, 0, 0,
                                      pref)
    if kernel and sup != Support.NONE:
        reason = f"{kernel}: {reason}" if reason else kernel
    return sup, reason


class MXLinear(torch.nn.Module):
    """y = x W^T (+ bias) with W quantized once and x quantized per call,
    both by mxaccel, the product by mxaccel::gemm: the MX linear of torchao's
    MXLinear, as three custom ops that torch.compile traces."""

    def __init__(self, weight, bias=None, recipe="mxfp8",
                 pref=Preference.AUTO, out_dtype=None):
        super().__init__()
        self.recipe = _recipe_name(recipe)
        self.pref = _core.preference(pref).name.lower()
        self.out_dtype = out_dtype or weight.dtype
        q, s = quantize(weight.detach(), self.recipe, pref=self.pref)
        self.register_buffer("w_qdata", q)
        self.register_buffer("w_scale", s)
        self.register_buffer("bias", None if bias is None
                             else bias.detach().to(self.out_dtype))

    def forward(self, x):
        shape = x.shape
        x2 = x.reshape(-1, shape[-1])
        aq, ascale = quantize(x2, self.recipe, pref=self.pref)
        y = gemm(aq, ascale, self.w_qdata, self.w_scale, self.recipe,
                 out_dtype=self.out_dtype, pref=self.pref)
        if self.bias is not None:
            y = y + self.bias
        return y.reshape(*shape[:-1], y.shape[-1])
