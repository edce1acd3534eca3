# SPDX-License-Identifier: MIT
"""The torchao bridge: KernelPreference <-> mxaccel Preference, and torchao
MXTensor / NVFP4Tensor operands run through mxaccel as they are (their qdata
and scale tensors, plain or swizzled, transposed views included), with no
copy and no re-quantization.

Attribute names are torchao 0.18's (torchao/prototype/mx_formats):
MXTensor.qdata / .scale / .elem_dtype / .block_size / .orig_dtype /
.kernel_preference / .is_swizzled_scales, NVFP4Tensor.qdata / .scale /
.per_tensor_scale / .block_size / .orig_dtype / .is_swizzled_scales.
"""

from dataclasses import dataclass
from typing import Optional

import torch

from . import torch as mxt
from ._core import Preference

# torchao KernelPreference value -> mxaccel Preference.  TORCH means
# "torch's native low-precision kernels" and MSLK a vendor kernel library:
# both are NATIVE in mxaccel's device-agnostic terms.
_FROM_TORCHAO = {"auto": Preference.AUTO, "torch": Preference.NATIVE,
                 "mslk": Preference.NATIVE, "emulated": Preference.EMULATED}
_TO_TORCHAO = {Preference.AUTO: "AUTO", Preference.NATIVE: "TORCH",
               Preference.EMULATED: "EMULATED"}


def from_kernel_preference(kp):
    """mxaccel Preference of a torchao KernelPreference (None -> AUTO)."""
    if kp is None:
        return Preference.AUTO
    v = getattr(kp, "value", kp)
    if v not in _FROM_TORCHAO:
        raise ValueError(f"kernel_preference: unknown torchao "
                         f"KernelPreference {kp!r}")
    return _FROM_TORCHAO[v]


def to_kernel_preference(pref):
    """torchao KernelPreference of an mxaccel Preference."""
    from torchao.quantization.quantize_.common import KernelPreference
    from ._core import preference
    return KernelPreference[_TO_TORCHAO[preference(pref)]]


def _mx_recipe(elem_dtype):
    from torchao.prototype.mx_formats.constants import (DTYPE_FP6_E2M3,
                                                        DTYPE_FP6_E3M2)
    names = {torch.float8_e4m3fn: "mxfp8", torch.float8_e5m2: "mxfp8_e5m2",
             DTYPE_FP6_E2M3: "mxfp6_e2m3", DTYPE_FP6_E3M2: "mxfp6_e3m2",
             torch.float4_e2m1fn_x2: "mxfp4"}
    if elem_dtype not in names:
        raise ValueError(f"MXTensor.elem_dtype {elem_dtype!r} has no mxaccel "
                         "recipe")
    return names[elem_dtype]


@dataclass
class Operand:
    """A torchao quantized tensor seen as an mxaccel [rows, K] operand."""
    qdata: torch.Tensor
    scale: torch.Tensor
    recipe: str
    layout: str
    tensor_scale: Optional[torch.Tensor]
    orig_dtype: torch.dtype
    pref: Preference


def operand(t, arg="operand"):
    """The mxaccel view of an MXTensor / NVFP4Tensor: K contiguous.  A
    transposed view (torchao's weight.t() in a linear) is turned back into
    the [N, K] operand it views, with its scales, without a copy."""
    from torchao.prototype.mx_formats.mx_tensor import MXTensor
    from torchao.prototype.mx_formats.nvfp4_tensor import NVFP4Tensor
    if isinstance(t, MXTensor):
        recipe = _mx_recipe(t.elem_dtype)
        if t.block_size != 32:
            raise ValueError(f"{arg}: MXTensor block_size {t.block_size} is "
                             "not 32")
        ts = None
        pref = from_kernel_preference(t.kernel_preference)
    elif isinstance(t, NVFP4Tensor):
        recipe = "nvfp4"
        if t.block_size != 16:
            raise ValueError(f"{arg}: NVFP4Tensor block_size {t.block_size} "
                             "is not 16")
        ts = t.per_tensor_scale
        pref = Preference.AUTO
    else:
        raise TypeError(f"{arg}: expected a torchao MXTensor or NVFP4Tensor, "
                        f"got {type(t).__name__}")
    qdata, scale = t.qdata, t.scale
    if qdata.dim() != 2:
        raise ValueError(f"{arg}: expected a 2D tensor, got qdata shape "
                         f"{tuple(qdata.shape)}")
    if qdata.stride(-2) < qdata.stride(-1):
        qdata, scale = qdata.t(), scale.t()
    layout = "swizzled" if t.is_swizzled_scales else "plain"
    if layout == "swizzled":
        scale = scale.reshape(-1) if scale.is_contiguous() else scale
    return Operand(qdata, scale, recipe, layout, ts, t.orig_dtype, pref)


def gemm(a, b, *, out_dtype=None, pref=None, bias=None):
    """a @ b for torchao operands, as torch.mm(a, b) means it: a [M, K], b
    [K, N] (the transposed view of an [N, K] weight, as in F.linear), or
    b given as the [N, K] tensor itself.  pref defaults to a's
    kernel_preference mapped to mxaccel (EMULATED -> the exact reference);
    out_dtype to a's original dtype.  Returns [M, N] (+ bias)."""
    oa = operand(a, "a")
    ob = operand(b, "b")
    p = oa.pref if pref is None else pref
    y = mxt.gemm(oa.qdata, oa.scale, ob.qdata, ob.scale, oa.recipe,
                 ob.recipe, a_layout=oa.layout, b_layout=ob.layout,
                 out_dtype=out_dtype or oa.orig_dtype, pref=p,
                 a_tensor_scale=oa.tensor_scale,
                 b_tensor_scale=ob.tensor_scale)
    if bias is not None:
        y = y + bias
    return y


def to_mx(x, elem_dtype=torch.float8_e4m3fn, block_size=32,
          scaling_mode=None, kernel_preference=None,
          is_swizzled_scales=False, pref=Preference.AUTO):
    """torchao's MXTensor.to_mx(), quantized by mxaccel (bit-exact with
    torchao's to_mx for every element type and ScaleCalculationMode)."""
    from torchao.prototype.mx_formats.mx_tensor import MXTensor
    if block_size != 32:
        raise ValueError(f"block_size: mxaccel's MX block is 32, got "
                         f"{block_size}")
    mode = "floor" if scaling_mode is None else scaling_mode.value
    layout = "swizzled" if is_swizzled_scales else "plain"
    q, s = mxt.quantize(x, _mx_recipe(elem_dtype), layout=layout, mode=mode,
                        pref=pref)
    if is_swizzled_scales:
        s = s.reshape(s.shape)
    if kernel_preference is None:
        kernel_preference = to_kernel_preference(Preference.EMULATED)
    return MXTensor(q, s, elem_dtype, block_size, x.dtype, kernel_preference,
                    None, is_swizzled_scales)


def to_nvfp4(x, per_tensor_scale=None, is_swizzled_scales=False,
             pref=Preference.AUTO):
    """torchao's NVFP4Tensor.to_nvfp4(), quantized by mxaccel."""
    from torchao.prototype.mx_formats.nvfp4_tensor import NVFP4Tensor
    layout = "swizzled" if is_swizzled_scales else "plain"
    q, s = mxt.quantize(x, "nvfp4", layout=layout, pref=pref,
                        tensor_scale=per_tensor_scale)
    return NVFP4Tensor(q, s, 16, x.dtype, per_tensor_scale, None,
                       is_swizzled_scales, False, None)
