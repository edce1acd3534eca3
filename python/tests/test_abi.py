# SPDX-License-Identifier: MIT
"""The ctypes structs of mxaccel/_lib.py against the C compiler's layout of
lib/include/mxaccel.h: every field's offset and every struct's size."""

import os
import shutil
import subprocess

import pytest

from mxaccel import _lib

STRUCTS = {"mxa_recipe": _lib.Recipe, "mxa_matrix": _lib.Matrix,
           "mxa_dense": _lib.Dense, "mxa_gemm_op": _lib.GemmOp,
           "mxa_grouped": _lib.Grouped,
           "mxa_op_desc": _lib.OpDesc, "mxa_plan": _lib.Plan,
           "mxa_capability": _lib.Capability,
           "mxa_device_info": _lib.DeviceInfo,
           "mxa_backend_info": _lib.BackendInfo}


# Enum and flag values _lib.py spells out, against the header's (a merge
# that renumbers one must show here).
ENUMS = {f"MXA_{n}": n for n in (
    "ELEM_E4M3", "ELEM_E5M2", "ELEM_E2M3", "ELEM_E3M2", "ELEM_E2M1",
    "SCALE_E8M0", "SCALE_UE4M3", "LAYOUT_PLAIN", "LAYOUT_SWIZZLED",
    "DTYPE_F32", "DTYPE_BF16", "OP_QUANTIZE", "OP_DEQUANTIZE", "OP_GEMM",
    "OP_QUANTIZE_COLWISE", "OP_GEMM_GROUPED", "OP_GEMM_WEIGHT_ONLY",
    "SUPPORT_NATIVE", "SUPPORT_EMULATED", "SUPPORT_NONE", "GEMM_ACCUMULATE",
    "BATCH_MAX", "NAME_MAX", "REASON_MAX", "GROUP_2D_3D", "GROUP_2D_2D",
    "GROUPS_MAX")}


def test_struct_layout_matches_c(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    inc = os.path.join(os.path.dirname(__file__), "..", "..", "lib",
                       "include")
    lines = ['#include <stdio.h>', '#include <stddef.h>',
             '#include "mxaccel.h"', 'int main(void) {']
    for name, cls in STRUCTS.items():
        lines.append(f'printf("{name} %zu\\n", sizeof(struct {name}));')
        for f, _ in cls._fields_:
            lines.append(f'printf("{name}.{f} %zu\\n", '
                         f'offsetof(struct {name}, {f}));')
    for cname, pyname in ENUMS.items():
        lines.append(f'printf("{cname} %d\\n", (int){cname});')
    lines.append("return 0; }")
    src = tmp_path / "layout.c"
    src.write_text("\n".join(lines))
    exe = tmp_path / "layout"
    subprocess.run([cc, "-I", inc, str(src), "-o", str(exe)], check=True)
    got = dict(line.split() for line in
               subprocess.run([str(exe)], check=True, capture_output=True,
                              text=True).stdout.splitlines())
    for cname, pyname in ENUMS.items():
        assert int(got[cname]) == getattr(_lib, pyname), cname
    for name, cls in STRUCTS.items():
        assert int(got[name]) == __import__("ctypes").sizeof(cls), name
        for f, _ in cls._fields_:
            assert int(got[f"{name}.{f}"]) == getattr(cls, f).offset, \
                f"{name}.{f}"
