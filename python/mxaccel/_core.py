# SPDX-License-Identifier: MIT
"""Devices, recipes, preferences, plans and capability queries: the parts of
the package that need no tensors."""

import ctypes
import enum
import errno
import threading
from dataclasses import dataclass

from . import _lib


class MxaccelError(RuntimeError):
    """libmxaccel refused or failed a request; .errno is the positive errno."""

    def __init__(self, message, err):
        super().__init__(message)
        self.errno = -err if err < 0 else err


class UnsupportedError(MxaccelError):
    """The device cannot run the request under the preference (-EOPNOTSUPP)."""


class Preference(enum.IntEnum):
    """Kernel preference (enum mxa_pref), torchao's KernelPreference made
    device agnostic: AUTO <-> AUTO, NATIVE <-> TORCH (and MSLK), EMULATED <->
    EMULATED (mxaccel.torchao converts)."""
    AUTO = 0
    NATIVE = 1
    EMULATED = 2


class Support(enum.IntEnum):
    """What a plan or a capability query answers (enum mxa_support)."""
    NATIVE = 0
    EMULATED = 1
    NONE = 2


def check(err, what):
    """Raise for a negative errno from libmxaccel."""
    if err >= 0:
        return
    cls = UnsupportedError if err == -errno.EOPNOTSUPP else MxaccelError
    raise cls(f"{what}: {_lib.errname(err)}", err)


def preference(pref, arg="pref"):
    """A Preference from a Preference, its name, or a torchao KernelPreference."""
    if isinstance(pref, Preference):
        return pref
    if isinstance(pref, str) and not isinstance(pref, enum.Enum):
        try:
            return Preference[pref.upper()]
        except KeyError:
            pass
        raise ValueError(f"{arg}: unknown preference {pref!r}; expected one "
                         "of 'auto', 'native', 'emulated'")
    # torchao's KernelPreference (a str enum): mapped without importing it.
    if type(pref).__name__ == "KernelPreference":
        from .torchao import from_kernel_preference
        return from_kernel_preference(pref)
    raise TypeError(f"{arg}: expected mxaccel.Preference, a preference name or "
                    f"torchao's KernelPreference, got {type(pref).__name__}")


@dataclass(frozen=True)
class Recipe:
    """A named recipe: element type, scale type and mode, block size."""
    name: str
    elem: int
    elem_name: str
    mode: int
    scale_type: int
    block_size: int

    @property
    def packed(self):
        """Two elements per byte (e2m1)."""
        return self.elem == _lib.ELEM_E2M1

    def data_cols(self, k):
        """Bytes of one row of element codes for K elements."""
        return k // 2 if self.packed else k


_recipes = {}


def recipe(name, arg="recipe"):
    """The Recipe called name ("mxfp8", "mxfp4", "nvfp4", ...)."""
    if isinstance(name, Recipe):
        return name
    if not isinstance(name, str):
        raise TypeError(f"{arg}: expected a recipe name (str), got "
                        f"{type(name).__name__}")
    r = _recipes.get(name)
    if r is not None:
        return r
    c = _lib.Recipe()
    if _lib.recipe_parse(name.encode(), ctypes.byref(c)) < 0:
        raise ValueError(f"{arg}: unknown recipe {name!r}; known: "
                         + ", ".join(recipes()))
    r = Recipe(name, c.elem, _lib.elem_name(c.elem).decode(), c.mode,
               c.scale_type, c.block_size)
    _recipes[name] = r
    return r


def recipes():
    """The names of all recipes the library knows."""
    out = []
    i = 0
    while True:
        n = _lib.recipe_at(i)
        if n is None:
            return out
        out.append(n.decode())
        i += 1


_devices = {}
_devices_lock = threading.Lock()


def device_handle(name):
    """The library's device called name, opened once per process and kept
    open (the library's devices are safe to share between threads)."""
    with _devices_lock:
        h = _devices.get(name)
        if h is not None:
            return h
        p = ctypes.c_void_p()
        err = _lib.device_open(name.encode(), ctypes.byref(p))
        if err < 0:
            raise MxaccelError(f"device {name!r}: cannot open: "
                               f"{_lib.errname(err)}{_backend_reason(name)}",
                               err)
        _devices[name] = p.value
        return p.value


def _backend_reason(name):
    """Why a backend has no device, from mxa_backend_info."""
    backend = name.split(":")[0]
    for i in range(_lib.backend_count()):
        b = _lib.BackendInfo()
        if _lib.backend_info(i, ctypes.byref(b)) == 0 and \
                b.name.decode() == backend and not b.available:
            return f" ({backend}: {b.reason.decode()})"
    return ""


@dataclass(frozen=True)
class DeviceInfo:
    name: str
    backend: str
    description: str
    threads: int
    host_visible: bool
    conformance: bool


def device_info(name):
    i = _lib.DeviceInfo()
    check(_lib.device_info(device_handle(name), ctypes.byref(i)),
          f"device {name!r}")
    return DeviceInfo(i.name.decode(), i.backend.decode(),
                      i.description.decode(), i.threads, bool(i.host_visible),
                      bool(i.conformance))


def backends():
    """[(name, devices, available, reason)] for every backend."""
    out = []
    for i in range(_lib.backend_count()):
        b = _lib.BackendInfo()
        check(_lib.backend_info(i, ctypes.byref(b)), "backend_info")
        out.append((b.name.decode(), b.devices, bool(b.available),
                    b.reason.decode()))
    return out


@dataclass(frozen=True)
class PlanInfo:
    """Which kernel a request resolves to, and why (struct mxa_plan)."""
    device: str
    kernel: str
    support: Support
    pref: Preference
    exact: bool
    reason: str


_OPS = {"quantize": _lib.OP_QUANTIZE, "dequantize": _lib.OP_DEQUANTIZE,
        "gemm": _lib.OP_GEMM, "quantize_colwise": _lib.OP_QUANTIZE_COLWISE,
        "gemm_grouped": _lib.OP_GEMM_GROUPED,
        "gemm_weight_only": _lib.OP_GEMM_WEIGHT_ONLY}
_DTYPES = {"float32": _lib.DTYPE_F32, "bfloat16": _lib.DTYPE_BF16}


def op_desc(op, recipe_a, recipe_b=None, dtype="bfloat16", m=0, n=0, k=0,
            accumulate=False):
    if op not in _OPS:
        raise ValueError(f"op: unknown operation {op!r}; expected one of "
                         + ", ".join(_OPS))
    if dtype not in _DTYPES:
        raise ValueError(f"dtype: {dtype!r} is not float32 or bfloat16")
    a = recipe(recipe_a, "recipe")
    b = recipe(recipe_b if recipe_b is not None else recipe_a, "recipe_b")
    d = _lib.OpDesc()
    d.op = _OPS[op]
    d.dtype = _DTYPES[dtype]
    d.m, d.n, d.k = m, n, k
    if op == "gemm_weight_only":
        # A is dense (of dtype), B block-scaled: recipe_b, else recipe_a
        b = recipe(recipe_b if recipe_b is not None else recipe_a, "recipe")
        d.a_dtype = _DTYPES[dtype]
        d.b_elem = b.elem
        d.b_scale_type = b.scale_type
        d.flags = _lib.GEMM_ACCUMULATE if accumulate else 0
        return d
    d.a_elem = a.elem
    d.a_scale_type = a.scale_type
    if op in ("gemm", "gemm_grouped"):
        d.b_elem = b.elem
        d.b_scale_type = b.scale_type
        d.flags = _lib.GEMM_ACCUMULATE if accumulate else 0
    if op in ("quantize", "quantize_colwise"):
        d.mode = a.mode
    return d


def plan(device, op, recipe_a, recipe_b=None, dtype="bfloat16", m=0, n=0,
         k=0, pref=Preference.AUTO, accumulate=False):
    """explain: the kernel that would run op on device under pref, and why.
    Raises UnsupportedError (with the library's reason) when none can."""
    d = op_desc(op, recipe_a, recipe_b, dtype, m, n, k, accumulate)
    p = _lib.Plan()
    pr = preference(pref)
    err = _lib.plan(device_handle(device), ctypes.byref(d), int(pr),
                    ctypes.byref(p))
    if err == -errno.EOPNOTSUPP:
        raise UnsupportedError(f"{device}: {op} {recipe_a} under "
                               f"{pr.name.lower()}: {p.reason.decode()}", err)
    check(err, f"plan {op} on {device}")
    return PlanInfo(p.device.decode(), p.kernel.decode(), Support(p.support),
                    Preference(p.pref), bool(p.exact), p.reason.decode())


explain = plan


def query(device, op, recipe_a, recipe_b=None, dtype="bfloat16", m=0, n=0,
          k=0, pref=Preference.AUTO, accumulate=False):
    """Can device run op under pref?  (Support, kernel, reason); a device
    that cannot be opened answers Support.NONE with the reason."""
    d = op_desc(op, recipe_a, recipe_b, dtype, m, n, k, accumulate)
    pr = preference(pref)
    try:
        h = device_handle(device)
    except MxaccelError as e:
        return Support.NONE, "", str(e)
    c = _lib.Capability()
    check(_lib.query(h, ctypes.byref(d), int(pr), ctypes.byref(c)),
          f"query {op} on {device}")
    return Support(c.support), c.kernel.decode(), c.reason.decode()
