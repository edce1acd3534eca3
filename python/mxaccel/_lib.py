# SPDX-License-Identifier: MIT
"""ctypes declarations of libmxaccel's public API (lib/include/mxaccel.h).

ctypes rather than a C extension: installing the package needs no compiler
and no Python headers, and the binding is not tied to one Python ABI or one
torch build.  The price is a few microseconds per call of argument
marshalling, measured in Documentation/python.rst.

The structs below mirror mxaccel.h field for field; tests/test_abi.py
checks their sizes against the C compiler's.
"""

import ctypes
import errno
import os

# enum mxa_elem
ELEM_E4M3, ELEM_E5M2, ELEM_E2M3, ELEM_E3M2, ELEM_E2M1 = 1, 2, 3, 4, 5
# enum mxa_scale_type
SCALE_E8M0, SCALE_UE4M3 = 0, 1
# enum mxa_scale_layout
LAYOUT_PLAIN, LAYOUT_SWIZZLED = 0, 1
# enum mxa_dtype
DTYPE_F32, DTYPE_BF16 = 0, 1
# enum mxa_op
OP_QUANTIZE, OP_DEQUANTIZE, OP_GEMM, OP_QUANTIZE_COLWISE = 0, 1, 2, 3
OP_GEMM_GROUPED, OP_GEMM_WEIGHT_ONLY = 4, 5
# enum mxa_support
SUPPORT_NATIVE, SUPPORT_EMULATED, SUPPORT_NONE = 0, 1, 2
GEMM_ACCUMULATE = 1
BATCH_MAX = 4096
# enum mxa_group_kind (mxa_gemm_grouped, since 0.2)
GROUP_2D_3D, GROUP_2D_2D = 0, 1
GROUPS_MAX = 65536
NAME_MAX = 64
REASON_MAX = 256

_c_enum = ctypes.c_int


class Recipe(ctypes.Structure):
    _fields_ = [
        ("elem", _c_enum),
        ("mode", _c_enum),
        ("scale_type", _c_enum),
        ("block_size", ctypes.c_uint32),
    ]


class Matrix(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("data_offset", ctypes.c_size_t),
        ("data_stride", ctypes.c_size_t),
        ("scale", ctypes.c_void_p),
        ("scale_offset", ctypes.c_size_t),
        ("scale_stride", ctypes.c_size_t),
        ("elem", _c_enum),
        ("scale_layout", _c_enum),
        ("rows", ctypes.c_uint32),
        ("cols", ctypes.c_uint32),
        ("scale_type", _c_enum),
        ("block_size", ctypes.c_uint32),
        ("tensor_scale", ctypes.c_float),
        ("reserved", ctypes.c_uint32 * 4),
    ]


class Dense(ctypes.Structure):
    _fields_ = [
        ("buf", ctypes.c_void_p),
        ("offset", ctypes.c_size_t),
        ("stride", ctypes.c_size_t),
        ("dtype", _c_enum),
        ("rows", ctypes.c_uint32),
        ("cols", ctypes.c_uint32),
    ]


class GemmOp(ctypes.Structure):
    _fields_ = [
        ("a", ctypes.POINTER(Matrix)),
        ("b", ctypes.POINTER(Matrix)),
        ("c", ctypes.POINTER(Dense)),
        ("flags", ctypes.c_uint32),
    ]


class Grouped(ctypes.Structure):
    _fields_ = [
        ("kind", _c_enum),
        ("count", ctypes.c_uint32),
        ("offsets", ctypes.c_void_p),
        ("offsets_offset", ctypes.c_size_t),
        ("reserved", ctypes.c_uint32 * 4),
    ]


class OpDesc(ctypes.Structure):
    _fields_ = [
        ("op", _c_enum),
        ("a_elem", _c_enum),
        ("b_elem", _c_enum),
        ("dtype", _c_enum),
        ("mode", _c_enum),
        ("m", ctypes.c_uint32),
        ("n", ctypes.c_uint32),
        ("k", ctypes.c_uint32),
        ("flags", ctypes.c_uint32),
        ("a_scale_type", _c_enum),
        ("b_scale_type", _c_enum),
        ("a_dtype", _c_enum),          # weight-only gemm: A's dense type
        ("reserved", ctypes.c_uint32 * 5),
    ]


class Plan(ctypes.Structure):
    _fields_ = [
        ("device", ctypes.c_char * NAME_MAX),
        ("kernel", ctypes.c_char * NAME_MAX),
        ("support", _c_enum),
        ("pref", _c_enum),
        ("exact", ctypes.c_int),
        ("reason", ctypes.c_char * REASON_MAX),
    ]


class Capability(ctypes.Structure):
    _fields_ = [
        ("support", _c_enum),
        ("kernel", ctypes.c_char * NAME_MAX),
        ("reason", ctypes.c_char * REASON_MAX),
    ]


class DeviceInfo(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char * NAME_MAX),
        ("backend", ctypes.c_char * NAME_MAX),
        ("description", ctypes.c_char * REASON_MAX),
        ("threads", ctypes.c_uint),
        ("host_visible", ctypes.c_int),
        ("conformance", ctypes.c_int),
    ]


class BackendInfo(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char * NAME_MAX),
        ("devices", ctypes.c_uint),
        ("available", ctypes.c_int),
        ("reason", ctypes.c_char * REASON_MAX),
    ]


def _candidates():
    """Where libmxaccel is looked for, in order."""
    env = os.environ.get("MXACCEL_LIBRARY")
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    names = []
    # A copy bundled into the package (a wheel built with one).
    names.append(os.path.join(here, "lib", "libmxaccel.so.0"))
    # Running from the repository: python/mxaccel -> build/rel/lib.
    names.append(os.path.join(here, "..", "..", "build", "rel", "lib",
                              "libmxaccel.so.0"))
    # Installed (make install): the dynamic linker's search path.
    names.append("libmxaccel.so.0")
    return names


def _load():
    errors = []
    for name in _candidates():
        if os.sep in name and not os.path.exists(name):
            errors.append(f"{name}: no such file")
            continue
        try:
            return ctypes.CDLL(name), name
        except OSError as e:
            errors.append(str(e))
    raise ImportError(
        "mxaccel: cannot load libmxaccel (set MXACCEL_LIBRARY to its path, "
        "build it with `make lib`, or `make install` it): "
        + "; ".join(errors))


lib, path = _load()

_P = ctypes.c_void_p
_I = ctypes.c_int
_U32 = ctypes.c_uint32


def _proto(name, restype, *argtypes):
    fn = getattr(lib, name)
    fn.restype = restype
    fn.argtypes = list(argtypes)
    return fn


strerror = _proto("mxa_strerror", ctypes.c_char_p, _I)
version = _proto("mxa_version", ctypes.c_char_p)
recipe_parse = _proto("mxa_recipe_parse", _I, ctypes.c_char_p,
                      ctypes.POINTER(Recipe))
recipe_name = _proto("mxa_recipe_name", ctypes.c_char_p,
                     ctypes.POINTER(Recipe))
recipe_at = _proto("mxa_recipe_at", ctypes.c_char_p, ctypes.c_uint)
elem_name = _proto("mxa_elem_name", ctypes.c_char_p, _c_enum)
pref_parse = _proto("mxa_pref_parse", _I, ctypes.c_char_p,
                    ctypes.POINTER(_c_enum))
layout_parse = _proto("mxa_layout_parse", _I, ctypes.c_char_p,
                      ctypes.POINTER(_c_enum))
matrix_bytes = _proto("mxa_matrix_bytes", _I, ctypes.POINTER(Matrix),
                      ctypes.POINTER(ctypes.c_size_t),
                      ctypes.POINTER(ctypes.c_size_t))

device_open = _proto("mxa_device_open", _I, ctypes.c_char_p,
                     ctypes.POINTER(_P))
device_close = _proto("mxa_device_close", None, _P)
device_info = _proto("mxa_device_info", _I, _P, ctypes.POINTER(DeviceInfo))
backend_count = _proto("mxa_backend_count", ctypes.c_uint)
backend_info = _proto("mxa_backend_info", _I, ctypes.c_uint,
                      ctypes.POINTER(BackendInfo))

buffer_wrap = _proto("mxa_buffer_wrap", _I, _P, _P, ctypes.c_size_t,
                     ctypes.POINTER(_P))
buffer_free = _proto("mxa_buffer_free", None, _P)

quantize = _proto("mxa_quantize", _I, _P, ctypes.POINTER(Dense),
                  ctypes.POINTER(Matrix), _c_enum, _c_enum)
quantize_colwise = _proto("mxa_quantize_colwise", _I, _P,
                          ctypes.POINTER(Dense), ctypes.POINTER(Matrix),
                          _c_enum, _c_enum)
dequantize = _proto("mxa_dequantize", _I, _P, ctypes.POINTER(Matrix),
                    ctypes.POINTER(Dense), _c_enum)
gemm = _proto("mxa_gemm", _I, _P, ctypes.POINTER(Matrix),
              ctypes.POINTER(Matrix), ctypes.POINTER(Dense), _U32, _c_enum)
gemm_batch = _proto("mxa_gemm_batch", _I, _P, ctypes.POINTER(GemmOp),
                    ctypes.c_uint, _c_enum, _P)
plan = _proto("mxa_plan", _I, _P, ctypes.POINTER(OpDesc), _c_enum,
              ctypes.POINTER(Plan))
query = _proto("mxa_query", _I, _P, ctypes.POINTER(OpDesc), _c_enum,
               ctypes.POINTER(Capability))


def _optional(name, restype, *argtypes):
    """A function a newer library has (None where this one lacks it)."""
    if not hasattr(lib, name):
        return None
    return _proto(name, restype, *argtypes)


# Weight-only GEMM: dense A x block-scaled B (since 0.2).
gemm_weight_only = _optional("mxa_gemm_weight_only", _I, _P,
                             ctypes.POINTER(Dense), ctypes.POINTER(Matrix),
                             ctypes.POINTER(Dense), _U32, _c_enum)
# Grouped GEMM, torch._scaled_grouped_mm's semantics (since 0.2).
gemm_grouped = _optional("mxa_gemm_grouped", _I, _P, ctypes.POINTER(Matrix),
                         ctypes.POINTER(Matrix), ctypes.POINTER(Dense),
                         ctypes.POINTER(Grouped), _U32, _c_enum)
# The caller's CUDA stream (cuda backend, since 0.2 on the cuda branch).
device_set_stream = _optional("mxa_device_set_stream", _I, _P, _P)


def errname(err):
    """'-EINVAL (invalid argument)' for a negative errno."""
    name = errno.errorcode.get(-err, str(-err))
    return f"-{name} ({strerror(err).decode()})"
