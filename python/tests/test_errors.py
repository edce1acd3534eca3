# SPDX-License-Identifier: MIT
"""Every bad argument raises a Python exception naming the argument."""

import pytest
import torch

import mxaccel
from mxaccel import UnsupportedError
from mxaccel import torch as mxt

X = torch.randn(8, 64)
Q, S = mxt.quantize(X, "mxfp8")


def err(exc, match, fn, *args, **kw):
    with pytest.raises(exc, match=match):
        fn(*args, **kw)


def test_quantize_errors():
    err(TypeError, r"x: dtype torch.int32", mxt.quantize,
        torch.zeros(8, 64, dtype=torch.int32))
    err(TypeError, r"x: dtype torch.float16", mxt.quantize, X.half())
    err(ValueError, r"x: expected 2 dimensions", mxt.quantize,
        torch.randn(64))
    err(ValueError, r"x: K = 48 .* block size 32", mxt.quantize,
        torch.randn(8, 48))
    err(ValueError, r"x: K = 24 .* block size 16", mxt.quantize,
        torch.randn(8, 24), "nvfp4")
    err(ValueError, r"x: last dimension must be contiguous", mxt.quantize,
        torch.randn(64, 8).t())
    err(ValueError, r"x: is empty", mxt.quantize, torch.randn(0, 64))
    err(ValueError, r"recipe: unknown recipe 'mxfp9'", mxt.quantize, X,
        "mxfp9")
    err(ValueError, r"layout: unknown scale layout 'tiled'", mxt.quantize,
        X, layout="tiled")
    err(ValueError, r"mode: unknown scale mode 'up'", mxt.quantize, X,
        mode="up")
    err(ValueError, r"mode: 'floor' does not apply to nvfp4", mxt.quantize,
        X, "nvfp4", mode="floor")
    err(ValueError, r"pref: unknown preference 'fastest'", mxt.quantize, X,
        pref="fastest")
    err(ValueError, r"tensor_scale: .* needs UE4M3", mxt.quantize, X,
        tensor_scale=0.5)
    err(ValueError, r"tensor_scale: must be positive", mxt.quantize, X,
        "nvfp4", tensor_scale=-1.0)
    err(TypeError, r"tensor_scale: dtype torch.float64", mxt.quantize, X,
        "nvfp4", tensor_scale=torch.tensor(0.5, dtype=torch.float64))


def test_quantize_colwise_errors():
    err(ValueError, r"quantize_colwise: x: rows = 8 .* block size 32",
        mxt.quantize_colwise, X)
    err(TypeError, r"quantize_colwise: x: dtype torch.int32",
        mxt.quantize_colwise, torch.zeros(32, 8, dtype=torch.int32))


def test_dequantize_errors():
    err(TypeError, r"qdata: dtype torch.float32 does not hold mxfp8",
        mxt.dequantize, X, S)
    err(TypeError, r"scale: dtype torch.float32 is not mxfp8's scale",
        mxt.dequantize, Q, S.float())
    err(ValueError, r"scale: plain scales for 8 x 64 must have shape "
        r"\(8, 2\)", mxt.dequantize, Q, S[:4])
    err(ValueError, r"scale: swizzled scales .* must hold", mxt.dequantize,
        Q, S, layout="swizzled")
    err(ValueError, r"qdata: last dimension \(K\) must be contiguous",
        mxt.dequantize, Q.t(), S)
    err(TypeError, r"dtype: torch.float16 is not supported",
        mxt.dequantize, Q, S, dtype=torch.float16)
    q4, s4 = mxt.quantize(X, "mxfp4")
    err(TypeError, r"qdata: dtype torch.float8_e4m3fn does not hold mxfp4",
        mxt.dequantize, Q, S, "mxfp4")
    err(ValueError, r"scale: plain scales for 8 x 64", mxt.dequantize,
        q4, s4[:, :1], "mxfp4")


def test_gemm_errors():
    w = torch.randn(4, 96)
    wq, ws = mxt.quantize(w, "mxfp8")
    err(ValueError, r"b_qdata: K = 96 does not match a_qdata's K = 64",
        mxt.gemm, Q, S, wq, ws)
    err(TypeError, r"out_dtype: torch.float16", mxt.gemm, Q, S, Q, S,
        out_dtype=torch.float16)
    err(ValueError, r"c: expected a torch.bfloat16 tensor of shape \(8, 8\)",
        mxt.gemm, Q, S, Q, S, c=torch.zeros(8, 4, dtype=torch.bfloat16))
    err(ValueError, r"b_layout: unknown scale layout", mxt.gemm, Q, S, Q, S,
        b_layout="blocked")
    err(ValueError, r"b_qdata: is on meta but a_qdata is on cpu", mxt.gemm,
        Q, S, Q.to("meta"), S.to("meta"))
    err(ValueError, r"b_recipe: unknown recipe", mxt.gemm, Q, S, Q, S,
        "mxfp8", "fp8")
    err(TypeError, r"b_qdata: expected a tensor", mxt.gemm, Q, S, [1], S)


def test_weight_only_errors():
    wq, ws = mxt.quantize(torch.randn(4, 64), "mxfp4")
    err(TypeError, r"gemm_weight_only: a: dtype torch.int64",
        mxt.gemm_weight_only, torch.zeros(2, 64, dtype=torch.long), wq, ws)
    err(ValueError, r"gemm_weight_only: b_qdata: K = 64 does not match a's "
        r"K = 32", mxt.gemm_weight_only, torch.randn(2, 32), wq, ws)
    err(TypeError, r"gemm_weight_only: b_qdata: dtype torch.float8_e4m3fn "
        r"does not hold mxfp4", mxt.gemm_weight_only, X, Q, S, "mxfp4")


def test_grouped_gemm_errors():
    bq = torch.stack([Q, Q])
    bs = torch.stack([S, S])
    i32 = torch.int32
    gg = mxt.grouped_gemm
    offs = torch.tensor([4, 8], dtype=i32)
    # offs: dtype, device, shape, contiguity, values
    err(TypeError, r"grouped_gemm: offs: dtype torch.int64", gg, Q, S, bq,
        bs, torch.tensor([4, 8]))
    err(TypeError, r"grouped_gemm: offs: expected a tensor", gg, Q, S, bq,
        bs, [4, 8])
    err(ValueError, r"grouped_gemm: offs: is on meta but a_qdata is on cpu",
        gg, Q, S, bq, bs, offs.to("meta"))
    err(ValueError, r"grouped_gemm: offs: expected shape \(groups,\)", gg,
        Q, S, bq, bs, offs.view(1, 2))
    err(ValueError, r"grouped_gemm: offs: expected shape \(groups,\)", gg,
        Q, S, bq, bs, torch.zeros(0, dtype=i32))
    err(ValueError, r"grouped_gemm: offs: must be contiguous", gg, Q, S, bq,
        bs, torch.tensor([4, 0, 8, 0], dtype=i32)[::2])
    err(ValueError, r"grouped_gemm: offs: offs\[1\] = 3 is below "
        r"offs\[0\] = 4: group ends must not decrease", gg, Q, S, bq, bs,
        torch.tensor([4, 3], dtype=i32))
    err(ValueError, r"grouped_gemm: offs: offs\[0\] = -1 is below 0", gg, Q,
        S, bq, bs, torch.tensor([-1, 8], dtype=i32))
    err(ValueError, r"grouped_gemm: offs: offs\[1\] = 9 exceeds a_qdata's "
        r"rows \(total_M\) = 8", gg, Q, S, bq, bs,
        torch.tensor([4, 9], dtype=i32))
    err(ValueError, r"grouped_gemm: offs: the last end offs\[1\] = 6 must "
        r"equal a_qdata's rows \(total_M\) = 8", gg, Q, S, bq, bs,
        torch.tensor([4, 6], dtype=i32))
    # group count: offs against b_qdata's groups
    err(ValueError, r"grouped_gemm: offs: has 3 group ends but b_qdata has "
        r"2 groups", gg, Q, S, bq, bs, torch.tensor([2, 4, 8], dtype=i32))
    # b: rank, stacking, scales
    err(ValueError, r"grouped_gemm: b_qdata: expected 3 dimensions .* or 2 "
        r"dimensions", gg, Q, S, bq[None], bs, offs)
    err(ValueError, r"grouped_gemm: b_qdata: groups must be stacked N = 8 "
        r"rows apart", gg, Q, S, torch.stack([Q, Q], 1).transpose(0, 1), bs,
        offs)
    err(ValueError, r"grouped_gemm: b_scale: groups must be stacked N = 8 "
        r"scale rows apart", gg, Q, S, bq,
        torch.stack([S, S], 1).transpose(0, 1), offs)
    err(ValueError, r"grouped_gemm: b_scale: plain per-group scales must "
        r"have shape \(groups, N, K/32\) = \(2, 8, 2\)", gg, Q, S, bq,
        bs[0], offs)
    err(TypeError, r"grouped_gemm: b_scale: dtype torch.float32 is not "
        r"mxfp8's scale type", gg, Q, S, bq, bs.float(), offs)
    err(ValueError, r"grouped_gemm: b_scale: swizzled per-group scales of 2 "
        r"groups of 8 x 64 must hold 2 x 512 = 1024 entries", gg, Q, S, bq,
        torch.zeros(2, 500, dtype=torch.uint8), offs, b_layout="swizzled")
    err(ValueError, r"grouped_gemm: a_scale: swizzled per-group scales for "
        r"these groups need 1024 entries, got 512", gg, Q,
        torch.zeros(128, 4, dtype=torch.uint8), bq, bs, offs,
        a_layout="swizzled")
    err(ValueError, r"grouped_gemm: a_scale: swizzled per-group scales .* "
        r"must be contiguous", gg, Q,
        torch.zeros(1024, 8, dtype=torch.uint8)[:, ::2], bq, bs, offs,
        a_layout="swizzled")
    err(ValueError, r"grouped_gemm: a_layout: unknown scale layout 'tiled'",
        gg, Q, S, bq, bs, offs, a_layout="tiled")
    # c and the per-tensor scales
    err(ValueError, r"grouped_gemm: c: expected a torch.bfloat16 tensor of "
        r"shape \(8, 8\), got torch.bfloat16 \(8, 4\)", gg, Q, S, bq, bs,
        offs, c=torch.zeros(8, 4, dtype=torch.bfloat16))
    err(ValueError, r"grouped_gemm: c: expected 2 dimensions", gg, Q, S, bq,
        bs, offs, c=torch.zeros(2, 8, 8, dtype=torch.bfloat16))
    err(ValueError, r"grouped_gemm: a_tensor_scale: a per-tensor scale needs "
        r"UE4M3 block scales \(nvfp4\), not mxfp8", gg, Q, S, bq, bs, offs,
        a_tensor_scale=torch.tensor(2.0))
    err(ValueError, r"grouped_gemm: b_tensor_scale: is on meta but a_qdata "
        r"is on cpu", gg, Q, S, bq, bs, offs,
        b_tensor_scale=torch.tensor(2.0, device="meta"))
    err(ValueError, r"grouped_gemm: b_qdata: K = 32 does not match "
        r"a_qdata's K = 64", gg, Q, S, bq[:, :, :32].contiguous(),
        bs[:, :, :1].contiguous(), offs)
    # 2d x 2d: K boundaries on the block size
    err(ValueError, r"grouped_gemm: offs: offs\[0\] = 16 is not a multiple "
        r"of the block size 32", gg, Q, S, Q, S,
        torch.tensor([16, 64], dtype=i32))
    err(ValueError, r"grouped_gemm: offs: the last end offs\[0\] = 32 must "
        r"equal the K of a_qdata and b_qdata \(total_K\) = 64", gg, Q, S,
        Q, S, torch.tensor([32], dtype=i32))
    err(ValueError, r"grouped_gemm: b_scale: plain scales for 8 x 64 must "
        r"have shape \(8, 2\)", gg, Q, S, Q, S[:, :1], offs * 8)
    err(TypeError, r"grouped_gemm: out_dtype: torch.float16 is not "
        r"supported", gg, Q, S, bq, bs, offs, out_dtype=torch.float16)


def test_unsupported_request_names_the_reason():
    aq, as_ = mxt.quantize(X, "nvfp4")
    sup, reason = mxt.supports("cpu", "nvfp4", "native")
    if sup != mxaccel.Support.NONE:
        pytest.skip("this library has a native cpu NVFP4 GEMM")
    with pytest.raises(UnsupportedError) as e:
        mxt.gemm(aq, as_, aq, as_, "nvfp4", pref="native")
    assert "cpu cannot run gemm of nvfp4 x nvfp4 under native" in str(e.value)
    assert reason.split(":")[0] in str(e.value)
    assert e.value.errno == 95


def test_device_errors():
    sup, reason = mxt.supports("cuda:7", "mxfp8")
    assert sup == mxaccel.Support.NONE and "cuda:7" in reason
    err(TypeError, r"device: expected a torch.device", mxt.supports, 3)
    err(ValueError, r"op: unknown operation", mxaccel.query, "cpu", "conv",
        "mxfp8")
    with pytest.raises(mxaccel.MxaccelError, match="'nodev': cannot open"):
        mxaccel.device_info("nodev")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_cuda_without_wrap_is_reported():
    from mxaccel import _lib
    if _lib.device_set_stream is not None:
        pytest.skip("this libmxaccel wraps CUDA memory")
    with pytest.raises(UnsupportedError, match="cuda:0 tensors: .* cannot "
                       "use CUDA memory in place"):
        mxt.quantize(X.cuda())
