# SPDX-License-Identifier: MIT
"""mxaccel: OCP Microscaling (MXFP8/6/4) and NVFP4 block-scaled arithmetic
for PyTorch, over libmxaccel.

Devices, recipes, preferences, plans and capability queries live here and
need no tensors; the tensor operations (quantize, dequantize, gemm,
grouped_gemm as torch.library custom ops mxaccel::*), supports() and
MXLinear are in mxaccel.torch and re-exported here on first use; the torchao
bridge is mxaccel.torchao.  Documentation/python.rst has the details.
"""

from ._core import (MxaccelError, Preference, Recipe, Support,
                    UnsupportedError, backends, device_info, explain, plan,
                    query, recipe, recipes)
from ._lib import path as library_path

__version__ = "0.2.0"

_TORCH_NAMES = ("quantize", "quantize_colwise", "dequantize", "gemm", "grouped_gemm",
                "gemm_weight_only", "supports", "MXLinear")


def __getattr__(name):
    # The torch parts are imported on first use, so that `import mxaccel`
    # stays cheap and works without torch.
    if name in _TORCH_NAMES:
        from . import torch as _t
        return getattr(_t, name)
    raise AttributeError(f"module 'mxaccel' has no attribute {name!r}")


def library_version():
    """The version of the libmxaccel this package loaded."""
    from . import _lib
    return _lib.version().decode()


__all__ = ["MxaccelError", "UnsupportedError", "Preference", "Support",
           "Recipe", "recipe", "recipes", "plan", "explain", "query",
           "backends", "device_info", "library_path", "library_version",
           *_TORCH_NAMES]
