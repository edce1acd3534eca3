# SPDX-License-Identifier: MIT
"""mxaccel::gemm: EMULATED equal to the exact rational
product rounded once; AUTO/NATIVE within the stated bound; torchao's
emulated path within the bound; torchao operands taken as they are."""

from fractions import Fraction

import pytest
import torch
from torchao.prototype.mx_formats.mx_tensor import MXTensor
from torchao.prototype.mx_formats.nvfp4_tensor import NVFP4Tensor
from torchao.quantization.quantize_.common import KernelPreference

import mxaccel
from conftest import exact_gemm
from mxaccel import Support, UnsupportedError
from mxaccel import torch as mxt
from mxaccel import torchao as bridge

MX = ["mxfp8", "mxfp8_e5m2", "mxfp6_e2m3", "mxfp6_e3m2", "mxfp4"]


def operands(recipe, m, n, k, device, seed=0, layout="plain"):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(m, k, generator=g)
    b = torch.randn(n, k, generator=g)
    aq, as_ = mxt.quantize(a.to(device), recipe, layout=layout)
    bq, bs = mxt.quantize(b.to(device), recipe, layout=layout)
    return aq, as_, bq, bs


def bound(ad, bd, k):
    """|c - c_ref| <= (K + 2) 2^-24 sum_k |a_k b_k| (fp32 accumulation,
    Documentation/numerics.rst) plus one fp32 rounding."""
    return (k + 2) * 2.0 ** -24 * (ad.abs() @ bd.abs().t())


@pytest.mark.parametrize("recipe", MX)
@pytest.mark.parametrize("out", [torch.float32, torch.bfloat16])
def test_emulated_is_exact(device, recipe, out):
    m, n, k = 5, 3, 64          # small: the reference is rational arithmetic
    aq, as_, bq, bs = operands(recipe, m, n, k, device, seed=1)
    got = mxt.gemm(aq, as_, bq, bs, recipe, out_dtype=out, pref="emulated")
    ad = mxt.dequantize(aq, as_, recipe).cpu()
    bd = mxt.dequantize(bq, bs, recipe).cpu()
    assert torch.equal(got.cpu(), exact_gemm(ad, bd, dtype=out))
    # accumulate: C + A B^T, still one rounding
    c = torch.randn(m, n).to(out)
    got = mxt.gemm(aq, as_, bq, bs, recipe, out_dtype=out, pref="emulated",
                   c=c.to(device))
    assert torch.equal(got.cpu(), exact_gemm(ad, bd, c, dtype=out))


@pytest.mark.parametrize("recipe", MX)
@pytest.mark.parametrize("shape", [(1, 1, 32), (33, 17, 96), (130, 70, 256)])
def test_auto_within_bound(device, recipe, shape):
    m, n, k = shape
    aq, as_, bq, bs = operands(recipe, m, n, k, device, seed=2)
    ref = mxt.gemm(aq, as_, bq, bs, recipe, out_dtype=torch.float32,
                   pref="emulated").cpu()
    got = mxt.gemm(aq, as_, bq, bs, recipe, out_dtype=torch.float32).cpu()
    ad = mxt.dequantize(aq, as_, recipe).cpu()
    bd = mxt.dequantize(bq, bs, recipe).cpu()
    assert ((got - ref).abs() <= bound(ad, bd, k)).all()


@pytest.mark.parametrize("recipe", ["mxfp8", "mxfp4"])
def test_swizzled_equals_plain(device, recipe):
    m, n, k = 150, 40, 128
    p = operands(recipe, m, n, k, device, seed=3)
    s = operands(recipe, m, n, k, device, seed=3, layout="swizzled")
    yp = mxt.gemm(*p, recipe, pref="emulated")
    ys = mxt.gemm(*s, recipe, a_layout="swizzled", b_layout="swizzled",
                  pref="emulated")
    assert torch.equal(yp, ys)


ELEM = {"mxfp8": torch.float8_e4m3fn, "mxfp4": torch.float4_e2m1fn_x2,
        "mxfp8_e5m2": torch.float8_e5m2}


@pytest.mark.parametrize("recipe", list(ELEM))
@pytest.mark.parametrize("swizzled", [False, True])
@pytest.mark.parametrize("orig", [torch.float32, torch.bfloat16])
def test_torchao_operands(device, recipe, swizzled, orig):
    """torchao MXTensors through mxaccel as they are (b as the transposed
    weight view torchao's linear uses), against torchao's own EMULATED mm."""
    m, n, k = 70, 48, 160
    g = torch.Generator().manual_seed(4)
    x = torch.randn(m, k, generator=g).to(orig).to(device)
    w = torch.randn(n, k, generator=g).to(orig).to(device)
    kp = KernelPreference.EMULATED
    a = MXTensor.to_mx(x, ELEM[recipe], 32, kernel_preference=kp,
                       is_swizzled_scales=swizzled)
    b = MXTensor.to_mx(w, ELEM[recipe], 32, kernel_preference=kp,
                       is_swizzled_scales=swizzled).t()
    ours = bridge.gemm(a, b, out_dtype=torch.float32)
    # EMULATED maps to mxaccel's exact reference: equal to the direct call.
    q, s = mxt.quantize(x, recipe)
    wq, ws = mxt.quantize(w, recipe)
    assert torch.equal(ours, mxt.gemm(q, s, wq, ws, recipe,
                                      out_dtype=torch.float32,
                                      pref="emulated"))
    ad = a.dequantize(torch.float32).cpu()
    bd = b.t().dequantize(torch.float32).cpu()
    if orig == torch.float32:
        theirs = torch.mm(a, b).cpu()        # torchao's emulated path
        assert ((ours.cpu() - theirs).abs() <= bound(ad, bd, k)).all()
    else:
        # torchao multiplies in bf16: its result is one bf16 rounding of
        # an fp32-accumulated sum; ours is exact, so they differ by at most
        # 2^-8 |ours| plus the fp32 accumulation bound.
        theirs = torch.mm(a, b).float().cpu()
        tol = 2.0 ** -8 * ours.cpu().abs() + bound(ad, bd, k)
        assert ((ours.cpu() - theirs).abs() <= tol).all()


@pytest.mark.parametrize("two_level", [False, True])
def test_nvfp4_gemm_follows_query(device, two_level):
    """NVFP4 GEMM runs where the library has a kernel for it; where the
    query says none, the op raises UnsupportedError with that reason."""
    x = torch.randn(40, 64).to(device)
    w = torch.randn(24, 64).to(device)
    ts = torch.tensor(0.01) if two_level else None
    a = bridge.to_nvfp4(x, per_tensor_scale=None if ts is None
                        else ts.to(device))
    b = bridge.to_nvfp4(w, per_tensor_scale=None if ts is None
                        else ts.to(device))
    sup, reason = mxt.supports(x.device, "nvfp4", "emulated")
    if sup == Support.NONE:
        with pytest.raises(UnsupportedError, match="nvfp4"):
            bridge.gemm(a, b, out_dtype=torch.float32, pref="emulated")
        return
    got = bridge.gemm(a, b, out_dtype=torch.float32, pref="emulated")
    # single-level values (e2m1 x e4m3) are exact in fp32; the per-tensor
    # scales multiply the exact sum
    ad = mxt.dequantize(a.qdata, a.scale, "nvfp4").cpu()
    bd = mxt.dequantize(b.qdata, b.scale, "nvfp4").cpu()
    scale = Fraction(1) if ts is None else Fraction(ts.item()) ** 2
    assert torch.equal(got.cpu(), exact_gemm(ad, bd, scale=scale))


@pytest.mark.parametrize("ra,rb", [("nvfp4", "mxfp8"), ("mxfp4", "nvfp4"),
                                   ("mxfp8", "mxfp6_e2m3")])
def test_mixed_gemm_follows_query(device, ra, rb):
    """Operands of different recipes: exact where the library runs them."""
    g = torch.Generator().manual_seed(6)
    aq, as_ = mxt.quantize(torch.randn(9, 64, generator=g).to(device), ra)
    bq, bs = mxt.quantize(torch.randn(7, 64, generator=g).to(device), rb)
    sup, _ = mxt.supports(device if device == "cpu" else "cuda:0", ra,
                          "emulated", b_recipe=rb)
    if sup == Support.NONE:
        with pytest.raises(UnsupportedError):
            mxt.gemm(aq, as_, bq, bs, ra, rb, pref="emulated")
        return
    got = mxt.gemm(aq, as_, bq, bs, ra, rb, out_dtype=torch.float32,
                   pref="emulated")
    ad = mxt.dequantize(aq, as_, ra).cpu()
    bd = mxt.dequantize(bq, bs, rb).cpu()
    assert torch.equal(got.cpu(), exact_gemm(ad, bd))


def test_mxtensor_roundtrip_through_bridge(device):
    """bridge.to_mx builds the same MXTensor torchao's to_mx does."""
    x = torch.randn(64, 96).to(device)
    ours = bridge.to_mx(x, torch.float8_e4m3fn)
    ref = MXTensor.to_mx(x, torch.float8_e4m3fn, 32)
    assert torch.equal(ours.qdata.view(torch.uint8), ref.qdata.view(torch.uint8))
    assert torch.equal(ours.scale.view(torch.uint8), ref.scale.view(torch.uint8))
    assert torch.equal(ours.dequantize(torch.float32),
                       ref.dequantize(torch.float32))


def test_plan_and_explain():
    p = mxaccel.plan("cpu", "gemm", "mxfp8", m=8, n=8, k=64,
                     pref="emulated")
    assert p.exact and p.support == Support.EMULATED and p.kernel
    assert mxaccel.explain is mxaccel.plan


@pytest.mark.parametrize("recipe", ["mxfp4", "mxfp8", "nvfp4"])
@pytest.mark.parametrize("adtype", [torch.float32, torch.bfloat16])
def test_weight_only(device, recipe, adtype):
    """Dense activations x quantized weights: EMULATED exact, AUTO within
    the fp32-accumulation bound."""
    g = torch.Generator().manual_seed(7)
    a = torch.randn(3, 64, generator=g).to(adtype).to(device)
    bq, bs = mxt.quantize(torch.randn(5, 64, generator=g).to(device), recipe)
    sup, _ = mxt.supports(device if device == "cpu" else "cuda:0", recipe,
                          "emulated", op="gemm_weight_only",
                          dtype=torch.float32)
    if sup == Support.NONE:
        with pytest.raises(UnsupportedError):
            mxt.gemm_weight_only(a, bq, bs, recipe, pref="emulated")
        return
    got = mxt.gemm_weight_only(a, bq, bs, recipe, out_dtype=torch.float32,
                               pref="emulated")
    bd = mxt.dequantize(bq, bs, recipe).cpu()
    assert torch.equal(got.cpu(), exact_gemm(a.float().cpu(), bd))
    fast = mxt.gemm_weight_only(a, bq, bs, recipe, out_dtype=torch.float32)
    assert ((fast.cpu() - got.cpu()).abs() <=
            bound(a.float().cpu(), bd, 64)).all()
