#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Per-call overhead of the Python binding on a tiny GEMM (1 x 1 x 32,
MXFP8, cpu): the mxaccel.torch.gemm call (argument checks, custom-op
dispatch, ctypes marshalling, buffer wrapping) against libmxaccel's own
mxa_gemm() on the same prepared operands called once per iteration through
ctypes, and torch.mm of 1 x 32 by 32 x 1 fp32 as a yardstick.  Median of
--reps, after 100 warm-ups."""

import argparse
import ctypes
import statistics
import time

import torch

from mxaccel import _lib
from mxaccel import torch as mxt


def per_call(fn, reps):
    for _ in range(100):
        fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        fn()
        ts.append(time.perf_counter_ns() - t0)
    return statistics.median(ts) / 1e3, min(ts) / 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=2000)
    a = ap.parse_args()
    x = torch.randn(1, 32)
    q, s = mxt.quantize(x, "mxfp8")
    out = torch.empty(1, 1)
    op = lambda: mxt.gemm(q, s, q, s, "mxfp8", out_dtype=torch.float32)
    with mxt._Call("gemm", q) as c:
        from mxaccel._core import recipe
        r = recipe("mxfp8")
        am = c.matrix("a", q, s, r, "plain", 32)
        cd = c.dense("out", out)
        raw = lambda: _lib.gemm(c.dev, ctypes.byref(am), ctypes.byref(am),
                                ctypes.byref(cd), 0, 0)
        assert raw() == 0
        t_raw = per_call(raw, a.reps)
    t_op = per_call(op, a.reps)
    xf, yf = torch.randn(1, 32), torch.randn(32, 1)
    t_mm = per_call(lambda: torch.mm(xf, yf), a.reps)
    print(f"tiny GEMM 1x1x32 mxfp8 on cpu, median [min] of {a.reps} calls:")
    print(f"  mxaccel.torch.gemm (custom op)  {t_op[0]:8.1f} us [{t_op[1]:.1f}]")
    print(f"  mxa_gemm via ctypes, prepared   {t_raw[0]:8.1f} us [{t_raw[1]:.1f}]")
    print(f"  torch.mm 1x32 @ 32x1 fp32       {t_mm[0]:8.1f} us [{t_mm[1]:.1f}]")
    print(f"  binding overhead per call       {t_op[0] - t_raw[0]:8.1f} us")


if __name__ == "__main__":
    main()
