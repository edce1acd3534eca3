# SPDX-License-Identifier: MIT
"""mxaccel::grouped_gemm (mxa_gemm_grouped, torch._scaled_grouped_mm's
semantics), both shapes, plain scales and torchao's per-group swizzled
ones: EMULATED equal byte for byte to per-group mxaccel GEMMs, AUTO and
torchao's emulated grouped GEMM within the stated bound of a float64
reference; torch.compile without graph breaks."""

import pytest
import torch
from torchao.prototype.moe_training.kernels.mxfp8.quant import (
    torch_to_blocked_2d_K_groups, torch_to_blocked_2d_M_groups,
    torch_to_blocked_per_group_3d)
from torchao.prototype.moe_training.mxfp8_grouped_mm import (
    _emulated_mxfp8_scaled_grouped_mm_2d_2d,
    _emulated_mxfp8_scaled_grouped_mm_2d_3d)
from torchao.prototype.moe_training.nvfp4_grouped_mm import (
    _emulated_nvfp4_scaled_grouped_mm_2d_2d,
    _emulated_nvfp4_scaled_grouped_mm_2d_3d)

from mxaccel import MxaccelError, Support, UnsupportedError, \
    recipe as parse_recipe
from mxaccel import torch as mxt

RECIPES = ["mxfp8", "mxfp8_e5m2", "mxfp6_e2m3", "mxfp4", "nvfp4"]
M_SIZES = [5, 0, 17, 131]          # empty group; one over a 128-row tile
K_SIZES = [32, 0, 96, 64]          # ends on 32 (every recipe's blocks)


def ends(sizes):
    return torch.tensor(sizes, dtype=torch.int32).cumsum(0).to(torch.int32)


def ranges(offs):
    start = 0
    for g, end in enumerate(offs.tolist()):
        yield g, start, end
        start = end


def emulated_or_skip(device, recipe):
    sup, _ = mxt.supports(device if device == "cpu" else "cuda:0", recipe,
                          "emulated", op="gemm_grouped",
                          dtype=torch.float32)
    if sup == Support.NONE:
        pytest.skip(f"no EMULATED grouped {recipe} GEMM on {device}")


def operands_2d_3d(recipe, device, n=24, k=128, seed=0):
    g = torch.Generator().manual_seed(seed)
    offs = ends(M_SIZES)
    a = torch.randn(int(offs[-1]), k, generator=g)
    b = torch.randn(len(M_SIZES), n, k, generator=g)
    aq, as_ = mxt.quantize(a.to(device), recipe)
    bqs = [mxt.quantize(b[i].to(device), recipe) for i in range(len(b))]
    bq = torch.stack([q for q, _ in bqs])
    bs = torch.stack([s for _, s in bqs])
    return aq, as_, bq, bs, offs.to(device)


def operands_2d_2d(recipe, device, m=20, n=12, seed=1):
    g = torch.Generator().manual_seed(seed)
    offs = ends(K_SIZES)
    k = int(offs[-1])
    aq, as_ = mxt.quantize(torch.randn(m, k, generator=g).to(device), recipe)
    bq, bs = mxt.quantize(torch.randn(n, k, generator=g).to(device), recipe)
    return aq, as_, bq, bs, offs.to(device)


def kcols(t, r, start, end):
    """Columns [start, end) of K of qdata (packed e2m1: two per byte)."""
    return t[:, start // 2:end // 2] if r.packed else t[:, start:end]


def swizzle_2d_3d(as_, bs, offs):
    """torchao's MoE layouts of A (M groups) and B (per group, 3-D)."""
    a_blk, _ = torch_to_blocked_2d_M_groups(as_.view(torch.uint8), offs)
    b_blk = torch_to_blocked_per_group_3d(bs.view(torch.uint8))
    return a_blk, b_blk


def swizzle_2d_2d(as_, bs, offs, block):
    """torchao's K-groups layout; its offsets count scale columns."""
    so = (offs // block).to(torch.int32)
    return (torch_to_blocked_2d_K_groups(as_.view(torch.uint8), so)[0],
            torch_to_blocked_2d_K_groups(bs.view(torch.uint8), so)[0])


@pytest.mark.parametrize("layout", ["plain", "swizzled"])
@pytest.mark.parametrize("recipe", RECIPES)
def test_2d_3d_equals_per_group(device, recipe, layout):
    emulated_or_skip(device, recipe)
    aq, as_, bq, bs, offs = operands_2d_3d(recipe, device)
    a_s, b_s = (as_, bs) if layout == "plain" else \
        swizzle_2d_3d(as_.cpu(), bs.cpu(), offs.cpu())
    got = mxt.grouped_gemm(aq, a_s.to(device), bq, b_s.to(device), offs,
                           recipe, a_layout=layout, b_layout=layout,
                           out_dtype=torch.float32, pref="emulated")
    assert got.shape == (aq.shape[0], bq.shape[1])
    for g, start, end in ranges(offs):
        if end > start:
            want = mxt.gemm(aq[start:end], as_[start:end], bq[g], bs[g],
                            recipe, out_dtype=torch.float32, pref="emulated")
            assert torch.equal(got[start:end].view(torch.int32),
                               want.view(torch.int32)), f"group {g}"


@pytest.mark.parametrize("layout", ["plain", "swizzled"])
@pytest.mark.parametrize("recipe", RECIPES)
def test_2d_2d_equals_per_group(device, recipe, layout):
    emulated_or_skip(device, recipe)
    r = parse_recipe(recipe)
    aq, as_, bq, bs, offs = operands_2d_2d(recipe, device)
    a_s, b_s = (as_, bs) if layout == "plain" else \
        swizzle_2d_2d(as_.cpu(), bs.cpu(), offs.cpu(), r.block_size)
    got = mxt.grouped_gemm(aq, a_s.to(device), bq, b_s.to(device), offs,
                           recipe, a_layout=layout, b_layout=layout,
                           out_dtype=torch.float32, pref="emulated")
    assert got.shape == (len(K_SIZES), aq.shape[0], bq.shape[0])
    bl = r.block_size
    for g, start, end in ranges(offs):
        if end == start:
            assert (got[g] == 0).all(), f"empty group {g}"
            continue
        sl = slice(start // bl, end // bl)
        want = mxt.gemm(kcols(aq, r, start, end), as_[:, sl],
                        kcols(bq, r, start, end), bs[:, sl],
                        recipe, out_dtype=torch.float32, pref="emulated")
        assert torch.equal(got[g].view(torch.int32),
                           want.view(torch.int32)), f"group {g}"


@pytest.mark.parametrize("pref", ["emulated", "auto"])
@pytest.mark.parametrize("three", [True, False], ids=["2d_3d", "2d_2d"])
def test_two_level_nvfp4_and_c(device, three, pref):
    """Two-level NVFP4 (per-tensor scales on A and on B's stack) with c
    added: each group equal to mxaccel.gemm of the group with the same
    tensor scales and that group's c, byte for byte under EMULATED; under
    AUTO within the bound of that (K + 4) 2^-24 (sum |a b| + |c|)."""
    recipe = "nvfp4"
    aq, as_, bq, bs, offs = operands_2d_3d(recipe, device) if three else \
        operands_2d_2d(recipe, device)
    ats = torch.tensor(float.fromhex("0x1.3p-3"), dtype=torch.float32, device=device)
    bts = torch.tensor(float.fromhex("0x1.7ffffep+4"), dtype=torch.float32, device=device)
    shape = (aq.shape[0], bq.shape[1]) if three else \
        (offs.shape[0], aq.shape[0], bq.shape[0])
    c = torch.randn(shape, generator=torch.Generator().manual_seed(5)).to(
        device)
    sup, _ = mxt.supports("cpu" if device == "cpu" else "cuda:0", recipe,
                          pref, op="gemm_grouped", dtype=torch.float32)
    if sup == Support.NONE:
        with pytest.raises(UnsupportedError):
            mxt.grouped_gemm(aq, as_, bq, bs, offs, recipe, c=c, pref=pref,
                             out_dtype=torch.float32, a_tensor_scale=ats,
                             b_tensor_scale=bts)
        return
    got = mxt.grouped_gemm(aq, as_, bq, bs, offs, recipe, c=c, pref=pref,
                           out_dtype=torch.float32, a_tensor_scale=ats,
                           b_tensor_scale=bts)
    assert got.shape == shape
    ad = mxt.dequantize(aq, as_, recipe, dtype=torch.float32,
                        tensor_scale=ats).cpu().double()
    bl = 16
    for g, start, end in ranges(offs):
        if three:
            rows, cg = slice(start, end), c[start:end]
            a_g, as_g, b_g, bs_g = aq[rows], as_[rows], bq[g], bs[g]
            out_g = got[rows]
            mag = ad[rows].abs() @ mxt.dequantize(
                b_g, bs_g, recipe, dtype=torch.float32,
                tensor_scale=bts).cpu().double().abs().t()
            kg = aq.shape[1] * 2
        else:
            cg, out_g = c[g], got[g]
            if end == start:
                assert torch.equal(out_g, cg + 0.0), f"empty group {g}"
                continue
            sl = slice(start // bl, end // bl)
            a_g, as_g = kcols(aq, parse_recipe(recipe), start, end), \
                as_[:, sl]
            b_g, bs_g = kcols(bq, parse_recipe(recipe), start, end), \
                bs[:, sl]
            mag = ad[:, start:end].abs() @ mxt.dequantize(
                bq, bs, recipe, dtype=torch.float32,
                tensor_scale=bts).cpu().double()[:, start:end].abs().t()
            kg = end - start
        if end == start:
            continue
        want = mxt.gemm(a_g, as_g, b_g, bs_g, recipe, c=cg,
                        out_dtype=torch.float32, pref="emulated",
                        a_tensor_scale=ats, b_tensor_scale=bts)
        if pref == "emulated":
            assert torch.equal(out_g.view(torch.int32),
                               want.view(torch.int32)), f"group {g}"
        else:
            bound = (kg + 4) * 2.0 ** -24 * (mag + cg.cpu().double().abs())
            assert ((out_g.cpu().double() - want.cpu().double()).abs() <=
                    bound + 2.0 ** -24 * want.cpu().double().abs()).all(), \
                f"group {g}"


@pytest.mark.parametrize("three", [True, False], ids=["2d_3d", "2d_2d"])
def test_unchecked_offs(device, three):
    """check_offs=False: the same result for valid ends (AUTO); malformed
    ends are still refused, naming offs, on the CPU; on CUDA 2d x 3d
    leaves a NaN result (the ends are checked on the GPU, no host read)
    and 2d x 2d with these 20 rows of A (M <= 32: cuda-grouped-sm90-skinny,
    which reads them on the host) raises."""
    aq, as_, bq, bs, offs = operands_2d_3d("mxfp8", device) if three else \
        operands_2d_2d("mxfp8", device)
    sup, _ = mxt.supports("cpu" if device == "cpu" else "cuda:0", "mxfp8",
                          "auto", op="gemm_grouped", dtype=torch.float32)
    if sup == Support.NONE:
        pytest.skip(f"no grouped GEMM on {device}")
    want = mxt.grouped_gemm(aq, as_, bq, bs, offs, out_dtype=torch.float32)
    got = mxt.grouped_gemm(aq, as_, bq, bs, offs, out_dtype=torch.float32,
                           check_offs=False)
    assert torch.equal(got.view(torch.int32), want.view(torch.int32))
    bad = offs.clone()
    bad[1] = bad[-1] + 32          # beyond the extent
    if device == "cpu":
        with pytest.raises(ValueError, match="grouped_gemm: offs: offs"):
            mxt.grouped_gemm(aq, as_, bq, bs, bad, out_dtype=torch.float32,
                             check_offs=False)
        return
    if not three:
        # 2d x 2d, M <= 32 under AUTO: the skinny path reads the ends on
        # the host.
        with pytest.raises(MxaccelError, match="grouped gemm"):
            mxt.grouped_gemm(aq, as_, bq, bs, bad, out_dtype=torch.float32,
                             check_offs=False)
        return
    got = mxt.grouped_gemm(aq, as_, bq, bs, bad, out_dtype=torch.float32,
                           check_offs=False)
    assert got.isnan().all()


def reference(aq, as_, bq, bs, offs, recipe, three):
    """float64 products of the dequantized operands, and sum |a| |b| for
    the bound, per group in the result's shape."""
    ad = mxt.dequantize(aq, as_, recipe, dtype=torch.float32).cpu().double()
    if three:
        bd = [mxt.dequantize(bq[g], bs[g], recipe,
                             dtype=torch.float32).cpu().double()
              for g in range(bq.shape[0])]
        ref = torch.zeros(ad.shape[0], bd[0].shape[0], dtype=torch.float64)
        mag = torch.zeros_like(ref)
        for g, start, end in ranges(offs):
            ref[start:end] = ad[start:end] @ bd[g].t()
            mag[start:end] = ad[start:end].abs() @ bd[g].abs().t()
        return ref, mag
    bd = mxt.dequantize(bq, bs, recipe, dtype=torch.float32).cpu().double()
    ref = torch.zeros(offs.shape[0], ad.shape[0], bd.shape[0],
                      dtype=torch.float64)
    mag = torch.zeros_like(ref)
    for g, start, end in ranges(offs):
        ref[g] = ad[:, start:end] @ bd[:, start:end].t()
        mag[g] = ad[:, start:end].abs() @ bd[:, start:end].abs().t()
    return ref, mag


@pytest.mark.parametrize("three", [True, False], ids=["2d_3d", "2d_2d"])
@pytest.mark.parametrize("recipe", RECIPES)
def test_within_bound_of_float64(device, recipe, three):
    """EMULATED is the exact result rounded once (half an fp32 ulp of the
    float64 reference, whose own error is far below); AUTO is within
    (K + 2) 2^-24 sum |a b| (Documentation/numerics.rst)."""
    ops = operands_2d_3d(recipe, device) if three else \
        operands_2d_2d(recipe, device)
    ref, mag = reference(*ops, recipe, three)
    k = ops[0].shape[1] * (2 if parse_recipe(recipe).packed else 1)
    sup, _ = mxt.supports("cpu" if device == "cpu" else "cuda:0", recipe,
                          "emulated", op="gemm_grouped", dtype=torch.float32)
    if sup != Support.NONE:
        emu = mxt.grouped_gemm(*ops, recipe, out_dtype=torch.float32,
                               pref="emulated").cpu().double()
        assert ((emu - ref).abs() <= 2.0 ** -24 * ref.abs() +
                2.0 ** -60 * mag).all()
    sup, _ = mxt.supports("cpu" if device == "cpu" else "cuda:0", recipe,
                          "auto", op="gemm_grouped", dtype=torch.float32)
    if sup == Support.NONE:
        # No grouped kernel for the recipe (NVFP4 on CUDA).
        with pytest.raises(UnsupportedError):
            mxt.grouped_gemm(*ops, recipe, out_dtype=torch.float32)
        return
    auto = mxt.grouped_gemm(*ops, recipe, out_dtype=torch.float32)
    auto = auto.cpu().double()
    assert ((auto - ref).abs() <= (k + 2) * 2.0 ** -24 * mag).all()


@pytest.mark.parametrize("three", [True, False], ids=["2d_3d", "2d_2d"])
@pytest.mark.parametrize("recipe", ["mxfp8", "nvfp4"])
def test_torchao_emulated_within_bound(recipe, three):
    """torchao's emulated MXFP8 / NVFP4 grouped GEMMs (bf16 dequantization,
    exact for these codes; bf16 result on the CPU) against ours: the
    difference is within the fp32-accumulation bound plus one bf16
    rounding (2^-8 relative) of the float64 reference."""
    aq, as_, bq, bs, offs = operands_2d_3d(recipe, "cpu") if three else \
        operands_2d_2d(recipe, "cpu")
    ours = mxt.grouped_gemm(aq, as_, bq, bs, offs, recipe,
                            out_dtype=torch.float32, pref="emulated").double()
    if recipe == "nvfp4":
        fn = _emulated_nvfp4_scaled_grouped_mm_2d_3d if three else \
            _emulated_nvfp4_scaled_grouped_mm_2d_2d
        theirs = fn(aq, as_, bq, bs, offs, out_dtype=torch.bfloat16)
    elif three:
        # torchao's MXFP8 B is the transposed [E, K, N], scales [E, K/32, N]
        theirs = _emulated_mxfp8_scaled_grouped_mm_2d_3d(
            aq, as_, bq.transpose(-2, -1), bs.transpose(-2, -1), offs,
            out_dtype=torch.bfloat16)
    else:
        theirs = _emulated_mxfp8_scaled_grouped_mm_2d_2d(
            aq, as_, bq, bs, offs, out_dtype=torch.bfloat16)
    ref, mag = reference(aq, as_, bq, bs, offs, recipe, three)
    k = aq.shape[1] * (2 if recipe == "nvfp4" else 1)
    assert theirs.shape == ours.shape
    diff = (theirs.double() - ours).abs()
    assert (diff <= (k + 2) * 2.0 ** -24 * mag + 2.0 ** -8 * ref.abs() +
            2.0 ** -133).all()
    assert (ref != 0).float().mean() > 0.7     # one 2d x 2d group is empty


class GroupedMX(torch.nn.Module):
    """A tiny MoE expert layer: quantize tokens, grouped GEMM with
    per-expert quantized weights."""

    def __init__(self):
        super().__init__()
        w = torch.randn(3, 24, 64, generator=torch.Generator().manual_seed(3))
        qs = [mxt.quantize(w[i]) for i in range(3)]
        self.register_buffer("wq", torch.stack([q for q, _ in qs]))
        self.register_buffer("ws", torch.stack([s for _, s in qs]))

    def forward(self, x, offs):
        q, s = mxt.quantize(x)
        return mxt.grouped_gemm(q, s, self.wq, self.ws, offs,
                                out_dtype=torch.float32, pref="emulated")


def test_compile_fullgraph():
    torch._dynamo.reset()
    model = GroupedMX()
    x = torch.randn(40, 64)
    offs = torch.tensor([10, 10, 40], dtype=torch.int32)
    eager = model(x, offs)
    explained = torch._dynamo.explain(model)(x, offs)
    assert explained.graph_break_count == 0, explained.break_reasons
    compiled = torch.compile(model, fullgraph=True, backend="inductor")
    assert torch.equal(compiled(x, offs), eager)


@pytest.mark.parametrize("ra,rb", [("mxfp8", "mxfp4"), ("mxfp6_e3m2", "mxfp8"),
                                   ("nvfp4", "mxfp8")])
@pytest.mark.parametrize("three", [True, False], ids=["2d_3d", "2d_2d"])
def test_mixed_recipes_equal_per_group(device, ra, rb, three):
    """Each operand with its own recipe (K groups then end on the larger
    block, 32): still per-group mxaccel GEMMs, byte for byte, where the
    query offers it, else UnsupportedError."""
    a_ops = operands_2d_3d(ra, device) if three else \
        operands_2d_2d(ra, device)
    b_ops = operands_2d_3d(rb, device) if three else \
        operands_2d_2d(rb, device)
    aq, as_, offs = a_ops[0], a_ops[1], a_ops[4]
    bq, bs = b_ops[2], b_ops[3]
    sup, _ = mxt.supports("cpu" if device == "cpu" else "cuda:0", ra,
                          "emulated", op="gemm_grouped", b_recipe=rb,
                          dtype=torch.float32)
    if sup == Support.NONE:
        with pytest.raises(UnsupportedError):
            mxt.grouped_gemm(aq, as_, bq, bs, offs, ra, rb, pref="emulated")
        return
    got = mxt.grouped_gemm(aq, as_, bq, bs, offs, ra, rb,
                           out_dtype=torch.float32, pref="emulated")
    pa, pb = parse_recipe(ra), parse_recipe(rb)
    for g, start, end in ranges(offs):
        if end == start:
            if not three:
                assert (got[g] == 0).all()
            continue
        if three:
            want = mxt.gemm(aq[start:end], as_[start:end], bq[g], bs[g], ra,
                            rb, out_dtype=torch.float32, pref="emulated")
            part = got[start:end]
        else:
            want = mxt.gemm(
                kcols(aq, pa, start, end),
                as_[:, start // pa.block_size:end // pa.block_size],
                kcols(bq, pb, start, end),
                bs[:, start // pb.block_size:end // pb.block_size], ra, rb,
                out_dtype=torch.float32, pref="emulated")
            part = got[g]
        assert torch.equal(part.view(torch.int32), want.view(torch.int32)), \
            f"group {g}"
