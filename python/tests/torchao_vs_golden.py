# SPDX-License-Identifier: MIT
"""Compare the installed torchao's to_mx with the frozen golden set.

The golden set (../shared/testdata/mx_golden, or tests/data/mx_golden for
the repository's subset) is torchao's own output from its main branch;
libmxaccel is bit-exact with it.  This prints, per element type and scale
mode, how many scale bytes and how many blocks of element codes the
installed torchao release computes differently.  Not a test: a measurement
quoted in Documentation/python.rst.

    python torchao_vs_golden.py [GOLDEN_DIR]
"""
import os
import sys

import numpy as np
import torch
from torchao.prototype.mx_formats.config import ScaleCalculationMode
from torchao.prototype.mx_formats.constants import (DTYPE_FP6_E2M3,
                                                    DTYPE_FP6_E3M2)
from torchao.prototype.mx_formats.mx_tensor import to_mx

ELEMS = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2,
         "e2m3": DTYPE_FP6_E2M3, "e3m2": DTYPE_FP6_E3M2,
         "e2m1": torch.float4_e2m1fn_x2}
MODES = ("floor", "rceil", "ceil", "even")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default = os.path.join(here, "..", "..", "..", "shared", "testdata",
                           "mx_golden")
    gold = sys.argv[1] if len(sys.argv) > 1 else default
    raw = np.fromfile(os.path.join(gold, "input_f32.bin"), dtype=np.uint32)
    x = torch.from_numpy(raw.view(np.int32)).view(torch.float32)
    x = x.reshape(-1, 32)
    blocks = x.shape[0]
    print(f"{blocks} golden blocks from {gold}")
    for name, dtype in ELEMS.items():
        for mode in MODES:
            s, q = to_mx(x, dtype, 32, ScaleCalculationMode(mode))
            gs = np.fromfile(os.path.join(gold, f"{name}_{mode}_scale.bin"),
                             dtype=np.uint8)
            gq = np.fromfile(os.path.join(gold, f"{name}_{mode}_data.bin"),
                             dtype=np.uint8).reshape(blocks, -1)
            s = s.view(torch.uint8).reshape(-1).numpy()
            q = q.view(torch.uint8).reshape(blocks, -1).numpy()
            print(f"{name} {mode:5s}: {int((s != gs).sum()):4d} scales, "
                  f"{int((q != gq).any(axis=1).sum()):4d} blocks of codes "
                  f"differ")


if __name__ == "__main__":
    main()
