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
    err(TypeError, r"offs: dtype torch.int64", mxt.grouped_gemm, Q, S, bq,
        bs, torch.tensor([4, 8]))
    err(ValueError, r"offs: expected shape \(2,\)", mxt.grouped_gemm, Q, S,
        bq, bs, torch.tensor([8], dtype=torch.int32))
    err(ValueError, r"offs: offs\[1\] = 3 is not in \[4, 8\]",
        mxt.grouped_gemm, Q, S, bq, bs, torch.tensor([4, 3],
                                                     dtype=torch.int32))
    err(ValueError, r"b_qdata: expected 3 dimensions", mxt.grouped_gemm, Q,
        S, Q, S, torch.tensor([4, 8], dtype=torch.int32))


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
