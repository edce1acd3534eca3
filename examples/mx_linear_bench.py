#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Time one MX linear forward (quantize the activation, MX GEMM against a
weight quantized once) through mxaccel against torchao's emulated path
(MXTensor.to_mx + torch.mm with KernelPreference.EMULATED: dequantize and
a dense matmul), in the same run.

    python3 examples/mx_linear_bench.py [--device cpu] [--m 256] [--k 1024]
        [--n 1024] [--recipe mxfp8] [--reps 20]

Prints the median and the min..max of --reps timed forwards after three
warm-ups, for mxaccel AUTO, mxaccel EMULATED (exact) and torchao EMULATED,
and each one's time relative to torchao's."""

import argparse
import statistics
import time

import torch
from torchao.prototype.mx_formats.mx_tensor import MXTensor
from torchao.quantization.quantize_.common import KernelPreference

import mxaccel
from mxaccel import torch as mxt

ELEM = {"mxfp8": torch.float8_e4m3fn, "mxfp4": torch.float4_e2m1fn_x2}


def timed(fn, reps, sync):
    for _ in range(3):
        fn()
    sync()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        sync()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts), min(ts), max(ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--m", type=int, default=256)
    ap.add_argument("--k", type=int, default=1024)
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--recipe", default="mxfp8", choices=list(ELEM))
    ap.add_argument("--reps", type=int, default=20)
    a = ap.parse_args()
    dev = torch.device(a.device)
    sync = (lambda: torch.cuda.synchronize(dev)) if dev.type == "cuda" \
        else (lambda: None)
    torch.manual_seed(0)
    x = torch.randn(a.m, a.k, device=dev, dtype=torch.bfloat16)
    w = torch.randn(a.n, a.k, device=dev, dtype=torch.bfloat16)
    rows = []
    for pref in ("auto", "emulated"):
        lin = mxt.MXLinear(w, recipe=a.recipe, pref=pref)
        rows.append((f"mxaccel {pref}", timed(lambda: lin(x), a.reps, sync)))
    kp = KernelPreference.EMULATED
    wt = MXTensor.to_mx(w, ELEM[a.recipe], 32, kernel_preference=kp).t()

    def torchao_fwd():
        xa = MXTensor.to_mx(x, ELEM[a.recipe], 32, kernel_preference=kp)
        return torch.mm(xa, wt)

    rows.append(("torchao emulated", timed(torchao_fwd, a.reps, sync)))
    base = rows[-1][1][0]
    print(f"MX linear forward {a.recipe} M={a.m} K={a.k} N={a.n} on {dev} "
          f"(torch {torch.__version__}, libmxaccel "
          f"{mxaccel.library_version()}, threads {torch.get_num_threads()})")
    for name, (med, lo, hi) in rows:
        print(f"  {name:18s} median {med * 1e3:9.3f} ms  "
              f"[{lo * 1e3:.3f} .. {hi * 1e3:.3f}]  "
              f"x{base / med:.2f} vs torchao emulated")


if __name__ == "__main__":
    main()
