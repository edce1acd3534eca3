# SPDX-License-Identifier: MIT
"""The custom ops under torch.library.opcheck, and torch.compile of a small
MX linear model on CPU without graph breaks."""

import pytest
import torch

from mxaccel import torch as mxt


def raw(*ts):
    """The ops' schema type for quantized data: uint8 (float8 tensors
    cannot go through opcheck's schema check)."""
    return [t.view(torch.uint8) for t in ts]


def samples():
    x = torch.randn(40, 64)
    w = torch.randn(24, 64)
    for recipe in ("mxfp8", "mxfp4", "nvfp4"):
        yield "quantize", (x, recipe, "plain", "", "auto", None)
        yield "quantize", (x, recipe, "swizzled", "", "emulated", None)
    yield "quantize", (x, "nvfp4", "plain", "", "auto",
                       torch.tensor(0.05))
    xc = torch.randn(64, 48)        # blocks run down the 64 rows
    yield "quantize_colwise", (xc, "mxfp8", "plain", "", "auto", None)
    yield "quantize_colwise", (xc, "nvfp4", "swizzled", "", "auto", None)
    for recipe in ("mxfp8", "mxfp6_e3m2", "mxfp4"):
        q, s = raw(*mxt.quantize(x, recipe))
        yield "dequantize", (q, s, recipe, "plain", torch.bfloat16, "auto",
                             None)
        wq, ws = raw(*mxt.quantize(w, recipe))
        yield "gemm", (q, s, recipe, "plain", wq, ws, recipe, "plain",
                       torch.float32, "emulated", None, None, None)
        yield "gemm", (q, s, recipe, "plain", wq, ws, recipe, "plain",
                       torch.bfloat16, "auto", torch.randn(40, 24).bfloat16(),
                       None, None)
    wq, ws = raw(*mxt.quantize(w, "mxfp4"))
    yield "gemm_weight_only", (x, wq, ws, "mxfp4", "plain", torch.float32,
                               "auto", None, None)
    q, s = raw(*mxt.quantize(x, "mxfp8"))
    bq, bs = raw(*mxt.quantize(torch.randn(3 * 24, 64), "mxfp8"))
    offs = torch.tensor([10, 10, 40], dtype=torch.int32)
    yield "grouped_gemm", (q, s, "mxfp8", "plain", bq.view(3, 24, 64),
                           bs.view(3, 24, 2), "mxfp8", "plain", offs,
                           torch.float32, "emulated", None, None, None, True)
    # torchao's per-group swizzled layouts: A by M groups, B per group
    a_blk = torch.zeros(40 + 3 * 128, 4, dtype=torch.uint8)
    a_blk[:40, :2] = s
    yield "grouped_gemm", (q, a_blk, "mxfp8", "swizzled", bq.view(3, 24, 64),
                           torch.full((3, 128 * 4), 127, dtype=torch.uint8),
                           "mxfp8", "swizzled", offs, torch.bfloat16, "auto",
                           None, None, None, True)
    # 2d x 2d: groups along K, a [3, 40, 24] result
    kq, ks = raw(*mxt.quantize(torch.randn(24, 64), "nvfp4"))
    xq, xs = raw(*mxt.quantize(torch.randn(40, 64), "nvfp4"))
    yield "grouped_gemm", (xq, xs, "nvfp4", "plain", kq, ks, "nvfp4",
                           "plain", torch.tensor([16, 16, 64],
                                                 dtype=torch.int32),
                           torch.float32, "auto", None, None, None, True)
    # two-level NVFP4 with c added
    yield "grouped_gemm", (xq, xs, "nvfp4", "plain", kq, ks, "nvfp4",
                           "plain", torch.tensor([16, 16, 64],
                                                 dtype=torch.int32),
                           torch.float32, "emulated",
                           torch.randn(3, 40, 24),
                           torch.tensor(0.5), torch.tensor(3.0), True)


@pytest.mark.parametrize("op,args", list(samples()),
                         ids=lambda v: v if isinstance(v, str) else "")
def test_opcheck(op, args):
    torch.library.opcheck(getattr(torch.ops.mxaccel, op).default, args)


class TinyMX(torch.nn.Module):
    def __init__(self, recipe):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.l1 = mxt.MXLinear(torch.randn(64, 96, generator=g),
                               torch.randn(64, generator=g), recipe=recipe,
                               pref="emulated", out_dtype=torch.float32)
        self.l2 = mxt.MXLinear(torch.randn(32, 64, generator=g), None,
                               recipe=recipe, pref="emulated",
                               out_dtype=torch.float32)

    def forward(self, x):
        return self.l2(torch.relu(self.l1(x)))


@pytest.mark.parametrize("recipe", ["mxfp8", "mxfp4"])
def test_compile_fullgraph(recipe):
    torch._dynamo.reset()
    model = TinyMX(recipe)
    x = torch.randn(2, 8, 96)
    eager = model(x)
    explained = torch._dynamo.explain(model)(x)
    assert explained.graph_break_count == 0, explained.break_reasons
    assert explained.graph_count == 1
    compiled = torch.compile(model, fullgraph=True, backend="inductor")
    assert torch.equal(compiled(x), eager)
    # a new batch size: the fake kernels give dynamic shapes
    x2 = torch.randn(5, 96)
    assert torch.equal(compiled(x2), model(x2))
