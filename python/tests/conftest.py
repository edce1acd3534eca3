# SPDX-License-Identifier: MIT
"""Shared helpers of the mxaccel Python tests: devices to run on, torchao's
references, and exact rational arithmetic for GEMM checks."""

import os
from fractions import Fraction

import pytest
import torch

import mxaccel  # noqa: F401  (loads libmxaccel; fails loudly if absent)


def devices():
    """cpu, plus cuda when MXACCEL_TEST_CUDA=1 (the H200 run) and the
    library can use CUDA memory in place (test_errors.py checks the
    refusal where it cannot)."""
    from mxaccel import _lib
    out = ["cpu"]
    if os.environ.get("MXACCEL_TEST_CUDA") == "1" and \
            _lib.device_set_stream is not None:
        out.append("cuda")
    return out


@pytest.fixture(params=devices())
def device(request):
    return request.param


def bits(t):
    """A tensor's bytes as uint8, for bit-exact comparison."""
    return t.contiguous().view(torch.uint8).cpu()


def special_values(dtype, rows=64, k=128, seed=0):
    """Random data with special values planted: zeros, subnormals, huge,
    tiny, element maxima, ties; all finite, and no block whose E8M0 scale
    byte is 0 (those are test_quantize.py's known divergences)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(rows, k, generator=g) * torch.exp2(
        torch.randint(-20, 20, (rows, 1), generator=g).float())
    x[0] = 0.0
    # The smallest scales with a nonzero E8M0 byte for every element type
    # (byte 0 blocks: test_quantize.py's test_scale_byte_zero_blocks).
    x[1, :32] = 2.0 ** -110
    x[2, :] = 2.0 ** 100
    x[3, ::2] = -448.0
    x[4, :] = torch.arange(k, dtype=torch.float32) * 0.25  # ties
    x[5, :32] = 6.0
    x[5, 32:64] = -0.75
    x[6, :] = 1.5 * 2.0 ** 127       # near fp32's top, exact in bf16
    x[7, 5] = 1e-40                  # an fp32 subnormal among normals
    return x.to(dtype)


def round_fraction(v, mant_bits, emin, emax):
    """Round a Fraction to a binary float with mant_bits fraction bits,
    minimum normal exponent emin and maximum exponent emax: RNE, gradual
    underflow, overflow to +-inf."""
    if v == 0:
        return 0.0
    sign = -1 if v < 0 else 1
    a = abs(v)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    e = max(e, emin)
    ulp = Fraction(2) ** (e - mant_bits)
    q = a / ulp
    n = q.numerator // q.denominator
    rem = q - n
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n % 2 == 1):
        n += 1
    r = n * ulp
    if r >= Fraction(2) ** (emax + 1):
        return sign * float("inf")
    return sign * float(r)


def exact_gemm(a, b, c=None, dtype=torch.float32, scale=1):
    """C = scale * A B^T (+ C) of float tensors (scale a Fraction: the
    product of two-level NVFP4's per-tensor scales), exact, rounded once to
    dtype."""
    mant = 23 if dtype == torch.float32 else 7
    A = [[Fraction(float(v)) for v in row] for row in a.double().tolist()]
    B = [[Fraction(float(v)) for v in row] for row in b.double().tolist()]
    Cin = c.double().tolist() if c is not None else None
    out = torch.empty(a.shape[0], b.shape[0], dtype=torch.float64)
    for i, ra in enumerate(A):
        for j, rb in enumerate(B):
            s = Fraction(scale) * sum((x * y for x, y in zip(ra, rb)),
                                      Fraction(0))
            if Cin is not None:
                s += Fraction(Cin[i][j])
            out[i, j] = round_fraction(s, mant, -126, 127)
    return out.to(dtype)
