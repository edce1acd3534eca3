#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The CUDA benchmark of Documentation/bench-cuda.rst, in one run.

Measures on the GPU, in this order:
  1. libmxaccel (build/*/tests/cuda_bench): MXFP8, MXFP4 and NVFP4 GEMM
     (bf16 C), weight-only GEMM (bf16 A, MXFP4 / NVFP4 / MXFP8 weights) at
     decode shapes, MXFP8 and NVFP4 grouped GEMM (2d x 3d and 2d x 2d) beside the
     dense GEMM of the same work, and quantization of bf16 and fp32 sources;
  2. PyTorch: cuBLAS BF16 GEMM (torch.mm) on random bf16 and on the bf16
     values of the MXFP8 and MXFP4 operands, the dequantize + BF16 GEMM path
     (torchao's emulated path: MX codes and E8M0 scales -> bf16 -> mm) in
     eager mode and under torch.compile, the same for NVFP4 (UE4M3 scales
     and tensor scales), for weight-only (bf16 activations times dequantized
     weights: torch.mm on the bf16 weights, and dequantize + mm compiled),
     for grouped GEMM (torch._grouped_mm on bf16, and dequantize +
     _grouped_mm compiled), and the device-to-device copy bandwidth (bytes
     read + written);
then prints one table of ratios (ours / cuBLAS BF16 time ratio, > 1 is
faster) and writes results.json and results.md to --out.

  python3 tests/bench/cuda_bench.py [--build build/rel] [--out DIR] [--quick]
"""
import argparse
import json
import os
import subprocess
import sys
import time

import torch

SHAPES = [(8192, 8192, 8192), (16384, 8192, 4096), (4096, 14336, 4096),
          (16, 14336, 4096)]
QUANT = [(16384, 8192)]
# Decode: activations M x K times weights N x K (Llama-3-70B's MLP up
# projection, and an 8B one).
# Decode (M <= 64: cuda-weight-only) and prefill (cuda-weight-only-wgmma).
WEIGHT_ONLY = [(1, 28672, 8192), (16, 28672, 8192), (64, 28672, 8192),
               (256, 28672, 8192), (4096, 28672, 8192)]
WO_RECIPES = ("mxfp4", "nvfp4", "mxfp8")
GROUPED_RECIPES = ("mxfp8", "nvfp4")
# Grouped (MoE): (kind, groups, M, N, K); 2d_3d splits M, 2d_2d splits K.
GROUPED = [("2d_3d", 8, 16384, 4096, 4096), ("2d_3d", 32, 32768, 2048, 7168),
           ("2d_2d", 8, 4096, 4096, 16384),
           # decode steps: a few tokens over the experts
           ("2d_3d", 8, 32, 14336, 4096), ("2d_3d", 64, 16, 7168, 2048)]
# The tensor scales cuda_bench gives NVFP4 A and B.
NV_TS_A, NV_TS_B = 0.5, 0.25


def bench(fn, warmup_ms=100, rep_ms=500):
    """Median milliseconds of fn(), timed with CUDA events."""
    try:
        import triton.testing
        return triton.testing.do_bench(fn, warmup=warmup_ms, rep=rep_ms,
                                       return_mode="median")
    except ImportError:
        pass
    fn()
    torch.cuda.synchronize()
    t = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    one = max(time.perf_counter() - t, 1e-6)
    n = max(3, int(rep_ms / 1e3 / one))
    times = []
    for _ in range(5):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(n):
            fn()
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e) / n)
    return sorted(times)[len(times) // 2]


# E2M1 values by code (sign in bit 3), as bf16.
FP4_LUT = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0,
           -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]


def deq_fp8(codes, scales):
    """MXFP8 (e4m3 codes, E8M0 scales) -> bf16, as torchao's to_dtype()."""
    rows, k = codes.shape
    x = codes.view(torch.float8_e4m3fn).to(torch.bfloat16)
    s = torch.exp2(scales.to(torch.float32) - 127.0).to(torch.bfloat16)
    return (x.view(rows, k // 32, 32) * s.unsqueeze(-1)).view(rows, k)


def deq_fp4(packed, scales, lut):
    """MXFP4 (e2m1 packed two per byte, element 2i low) -> bf16."""
    rows, half = packed.shape
    idx = torch.stack((packed & 0xF, packed >> 4), dim=-1).view(rows, 2 * half)
    x = lut[idx.long()]
    s = torch.exp2(scales.to(torch.float32) - 127.0).to(torch.bfloat16)
    return (x.view(rows, half // 16, 32) * s.unsqueeze(-1)).view(rows, 2 * half)


def deq_nvfp4(packed, scales, ts, lut):
    """NVFP4 (e2m1 packed, UE4M3 scales per 16, tensor scale) -> bf16, as
    torchao's NVFP4Tensor.to_dtype(): codes * (scale * tensor scale) in
    fp32, then bf16 (exact: at most 6 significant bits)."""
    rows, half = packed.shape
    idx = torch.stack((packed & 0xF, packed >> 4), dim=-1).view(rows, 2 * half)
    x = lut[idx.long()].to(torch.float32)
    s = scales.view(torch.float8_e4m3fn).to(torch.float32) * ts
    return (x.view(rows, half // 8, 16) * s.unsqueeze(-1)).view(rows, 2 * half).to(torch.bfloat16)


def mm_nvfp4(a, sa, b, sb, lut):
    return torch.mm(deq_nvfp4(a, sa, NV_TS_A, lut), deq_nvfp4(b, sb, NV_TS_B, lut).t())


def mm_fp8(a, sa, b, sb):
    return torch.mm(deq_fp8(a, sa), deq_fp8(b, sb).t())


def mm_fp4(a, sa, b, sb, lut):
    return torch.mm(deq_fp4(a, sa, lut), deq_fp4(b, sb, lut).t())


def torch_gemms(m, n, k, compiled):
    dev = "cuda"
    out = {}
    a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
    b = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
    out["cublas_bf16_ms"] = bench(lambda: torch.mm(a, b.t()))
    del a, b
    a8 = torch.randint(0, 256, (m, k), device=dev, dtype=torch.uint8)
    b8 = torch.randint(0, 256, (n, k), device=dev, dtype=torch.uint8)
    a8[(a8 & 0x7F) == 0x7F] ^= 1     # no e4m3 NaN
    b8[(b8 & 0x7F) == 0x7F] ^= 1
    sa = torch.randint(120, 135, (m, k // 32), device=dev, dtype=torch.uint8)
    sb = torch.randint(120, 135, (n, k // 32), device=dev, dtype=torch.uint8)
    a4 = torch.randint(0, 256, (m, k // 2), device=dev, dtype=torch.uint8)
    b4 = torch.randint(0, 256, (n, k // 2), device=dev, dtype=torch.uint8)
    lut = torch.tensor(FP4_LUT, device=dev, dtype=torch.bfloat16)
    out["deq_fp8_eager_ms"] = bench(lambda: mm_fp8(a8, sa, b8, sb))
    out["deq_fp4_eager_ms"] = bench(lambda: mm_fp4(a4, sa, b4, sb, lut))
    out["deq_fp8_compiled_ms"] = bench(lambda: compiled[0](a8, sa, b8, sb))
    out["deq_fp4_compiled_ms"] = bench(lambda: compiled[1](a4, sa, b4, sb, lut))
    # NVFP4: UE4M3 scales 0x20 .. 0x4f per 16 (2^-3 .. 2^3), as cuda_bench.
    sa16 = torch.randint(0x20, 0x50, (m, k // 16), device=dev, dtype=torch.uint8)
    sb16 = torch.randint(0x20, 0x50, (n, k // 16), device=dev, dtype=torch.uint8)
    out["deq_nvfp4_eager_ms"] = bench(lambda: mm_nvfp4(a4, sa16, b4, sb16, lut))
    out["deq_nvfp4_compiled_ms"] = bench(lambda: compiled[2](a4, sa16, b4, sb16, lut))
    # cuBLAS again on the values the MX GEMMs multiply: the tensor cores'
    # power, so the clock they run at, depends on the bits they see (random
    # bf16 has full mantissas, e2m1 one bit), and the compiled path's
    # torch.mm runs on these.
    for name, da, db in (("mxfp8", deq_fp8(a8, sa), deq_fp8(b8, sb)),
                         ("mxfp4", deq_fp4(a4, sa, lut), deq_fp4(b4, sb, lut)),
                         ("nvfp4", deq_nvfp4(a4, sa16, NV_TS_A, lut),
                          deq_nvfp4(b4, sb16, NV_TS_B, lut))):
        out["cublas_bf16_%s_values_ms" % name] = bench(lambda: torch.mm(da, db.t()))
        del da, db
    return out


def random_weights(recipe, n, k, dev="cuda"):
    """Random weights of a recipe as cuda_bench makes them, and a function
    giving their bf16 values."""
    lut = torch.tensor(FP4_LUT, device=dev, dtype=torch.bfloat16)
    if recipe == "mxfp8":
        w = torch.randint(0, 256, (n, k), device=dev, dtype=torch.uint8)
        w[(w & 0x7F) == 0x7F] ^= 1
        s = torch.randint(120, 135, (n, k // 32), device=dev, dtype=torch.uint8)
        return (w, s), deq_fp8
    w = torch.randint(0, 256, (n, k // 2), device=dev, dtype=torch.uint8)
    if recipe == "mxfp4":
        s = torch.randint(120, 135, (n, k // 32), device=dev, dtype=torch.uint8)
        return (w, s), lambda w, s: deq_fp4(w, s, lut)
    s = torch.randint(0x20, 0x50, (n, k // 16), device=dev, dtype=torch.uint8)
    return (w, s), lambda w, s: deq_nvfp4(w, s, NV_TS_B, lut)


def torch_weight_only(m, n, k):
    """bf16 activations times weights: torch.mm on the dequantized bf16
    weights (cuBLAS), and dequantize + mm under torch.compile, per recipe."""
    out = {}
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    for recipe in WO_RECIPES:
        (w, s), deq = random_weights(recipe, n, k)
        wb = deq(w, s)
        out["%s_mm_bf16_ms" % recipe] = bench(lambda: torch.mm(a, wb.t()))
        del wb
        fn = torch.compile(lambda a, w, s, deq=deq: torch.mm(a, deq(w, s).t()))
        out["%s_deq_compiled_ms" % recipe] = bench(lambda: fn(a, w, s))
        del w, s
    return out


def torch_grouped(kind, groups, m, n, k):
    """bf16 grouped GEMM of the same groups (torch._grouped_mm) and on MXFP8
    values dequantized under torch.compile, beside cuBLAS BF16 on the dense
    M x N x K.  Sizes are balanced (ours are ragged; the work is the same)."""
    out = {}
    dev = "cuda"
    extent = m if kind == "2d_3d" else k
    unit = 1 if kind == "2d_3d" else 32
    offs = (torch.arange(1, groups + 1, device=dev, dtype=torch.int32) *
            (extent // unit // groups) * unit)
    offs[-1] = extent
    a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
    b = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
    out["cublas_bf16_dense_ms"] = bench(lambda: torch.mm(a, b.t()))
    try:
        if kind == "2d_3d":
            b3 = torch.randn(groups, n, k, device=dev, dtype=torch.bfloat16)
            out["grouped_mm_bf16_ms"] = bench(
                lambda: torch._grouped_mm(a, b3.transpose(-2, -1), offs=offs))
            del b3
        else:
            out["grouped_mm_bf16_ms"] = bench(
                lambda: torch._grouped_mm(a, b.t(), offs=offs))
    except Exception as e:  # noqa: BLE001 - record why the peer is missing
        out["grouped_mm_bf16_error"] = str(e).splitlines()[0][:200]
    try:
        rows_b = groups * n if kind == "2d_3d" else n
        (w, ws), _ = random_weights("mxfp8", rows_b, k)
        (x, xs), _ = random_weights("mxfp8", m, k)
        if kind == "2d_3d":
            fn = torch.compile(lambda x, xs, w, ws: torch._grouped_mm(
                deq_fp8(x, xs), deq_fp8(w, ws).view(groups, n, k).transpose(-2, -1),
                offs=offs))
        else:
            fn = torch.compile(lambda x, xs, w, ws: torch._grouped_mm(
                deq_fp8(x, xs), deq_fp8(w, ws).t(), offs=offs))
        out["deq_grouped_compiled_ms"] = bench(lambda: fn(x, xs, w, ws))
    except Exception as e:  # noqa: BLE001
        out["deq_grouped_compiled_error"] = str(e).splitlines()[0][:200]
    return out


def copy_bandwidth():
    n = 1 << 30
    x = torch.empty(n, device="cuda", dtype=torch.uint8)
    y = torch.empty_like(x)
    x.random_()
    ms = bench(lambda: y.copy_(x))
    return 2 * n / (ms * 1e-3) / 1e9


def our_ms(ours, recipe, shape):
    """Milliseconds of our GEMM of one recipe and shape (M, N, K)."""
    return next(x for x in ours if x["op"] == "gemm" and x["recipe"] == recipe
                and (x["m"], x["n"], x["k"]) == tuple(shape))["ms"]


def find(ours, op, recipe, shape):
    """Our result of one op, recipe and shape, or None (skipped / missing)."""
    for x in ours:
        if (x["op"] == op and x.get("recipe") == recipe and
                (x["m"], x["n"], x["k"]) == tuple(shape) and "ms" in x):
            return x
    return None


def extra_tables(ours, theirs, wo, grouped, copy_gbps):
    """NVFP4 GEMM, weight-only and grouped tables."""
    rows = ["| NVFP4 GEMM MxNxK | kernel | ms | vs cuBLAS BF16 | vs cuBLAS on its values "
            "| vs deq+BF16 compiled |", "|---|---|---|---|---|---|"]
    for shape, t in theirs.items():
        x = find(ours, "gemm", "nvfp4", shape)
        if x is None:
            rows.append("| %dx%dx%d | not run | | | | |" % shape)
            continue
        rows.append("| %dx%dx%d | %s | %.3f | %.2fx | %.2fx | %.2fx |" % (
            *shape, x["kernel"], x["ms"], t["cublas_bf16_ms"] / x["ms"],
            t["cublas_bf16_nvfp4_values_ms"] / x["ms"],
            t["deq_nvfp4_compiled_ms"] / x["ms"]))
    rows += ["", "| weight-only MxNxK | recipe | kernel | ms (spread) | GB/s read | of copy "
             "| vs torch.mm bf16 weights | vs deq+mm compiled |",
             "|---|---|---|---|---|---|---|---|"]
    for shape, t in wo.items():
        for recipe in WO_RECIPES:
            x = find(ours, "weight_only", recipe, shape)
            if x is None:
                rows.append("| %dx%dx%d | %s | not run | | | | | |" % (*shape, recipe))
                continue
            rows.append("| %dx%dx%d | %s | %s | %.4f (%.4f) | %.0f | %.0f%% | %.2fx | %.2fx |" % (
                *shape, recipe, x["kernel"], x["ms"], x["spread_ms"], x["gbps"],
                100.0 * x["gbps"] / copy_gbps, t["%s_mm_bf16_ms" % recipe] / x["ms"],
                t["%s_deq_compiled_ms" % recipe] / x["ms"]))
    rows += ["", "| grouped (kind, G, MxNxK) | recipe | kernel | ms | dense ours (kernel, ms) "
             "| grouped vs dense | vs cuBLAS BF16 dense | vs torch._grouped_mm bf16 "
             "| vs deq+_grouped_mm compiled (MXFP8) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for key, t in grouped.items():
        kind, g, m, n, k = key
        for recipe in GROUPED_RECIPES:
            x = next((y for y in ours if y["op"] == "grouped_" + kind and y.get("groups") == g
                      and y.get("recipe") == recipe
                      and (y["m"], y["n"], y["k"]) == (m, n, k) and "ms" in y), None)
            if x is None:
                rows.append("| %s %d %dx%dx%d | %s | not run | | | | | | |" % (*key, recipe))
                continue

            def ratio(name):
                return "%.2fx" % (t[name] / x["ms"]) if name in t else "n/a"
            rows.append("| %s %d %dx%dx%d | %s | %s | %.3f | %s, %.3f | %.3f | %s | %s | %s |" % (
                *key, recipe, x["kernel"], x["ms"], x["dense_kernel"], x["dense_ms"],
                x["grouped_vs_dense"], ratio("cublas_bf16_dense_ms"),
                ratio("grouped_mm_bf16_ms"),
                ratio("deq_grouped_compiled_ms") if recipe == "mxfp8" else "n/a"))
    return "\n".join(rows)


def tables(ours, theirs, shapes, copy_gbps):
    """The results as Markdown tables."""
    rows = ["| shape MxNxK | cuBLAS BF16 TF/s | MXFP8 ours | MXFP4 ours "
            "| deq+BF16 fp8 eager / compiled | deq+BF16 fp4 eager / compiled "
            "| MXFP8 vs compiled | MXFP4 vs compiled |",
            "|---|---|---|---|---|---|---|---|"]
    for m, n, k in shapes:
        t = theirs[(m, n, k)]
        base = t["cublas_bf16_ms"]
        o8, o4 = our_ms(ours, "mxfp8", (m, n, k)), our_ms(ours, "mxfp4", (m, n, k))
        tf = 2.0 * m * n * k / (base * 1e-3) / 1e12
        rows.append(
            "| %dx%dx%d | %.0f | %.2fx (%.3f ms) | %.2fx (%.3f ms) | %.2fx / %.2fx "
            "| %.2fx / %.2fx | %.2fx | %.2fx |" % (
                m, n, k, tf, base / o8, o8, base / o4, o4,
                base / t["deq_fp8_eager_ms"], base / t["deq_fp8_compiled_ms"],
                base / t["deq_fp4_eager_ms"], base / t["deq_fp4_compiled_ms"],
                t["deq_fp8_compiled_ms"] / o8, t["deq_fp4_compiled_ms"] / o4))
    # Against cuBLAS on the same values (the data moves cuBLAS's clock).
    rows.append("")
    rows.append("| shape MxNxK | cuBLAS BF16 on random / MXFP8 / MXFP4 values (ms) "
                "| MXFP8 ours vs cuBLAS on its values | MXFP4 ours vs cuBLAS on its values "
                "| compiled dequantize beyond its mm, fp8 / fp4 (ms) |")
    rows.append("|---|---|---|---|---|")
    for m, n, k in shapes:
        t = theirs[(m, n, k)]
        v8, v4 = t["cublas_bf16_mxfp8_values_ms"], t["cublas_bf16_mxfp4_values_ms"]
        o8, o4 = our_ms(ours, "mxfp8", (m, n, k)), our_ms(ours, "mxfp4", (m, n, k))
        rows.append("| %dx%dx%d | %.3f / %.3f / %.3f | %.2fx | %.2fx | %.3f / %.3f |" % (
            m, n, k, t["cublas_bf16_ms"], v8, v4, v8 / o8, v4 / o4,
            t["deq_fp8_compiled_ms"] - v8, t["deq_fp4_compiled_ms"] - v4))
    # Decode reads each operand's codes and scales once.
    rows.append("")
    rows.append("| decode shape | MXFP8 GB/s | of copy | MXFP4 GB/s | of copy |")
    rows.append("|---|---|---|---|---|")
    for m, n, k in shapes:
        if m > 64:
            continue
        cells = []
        for recipe, per in (("mxfp8", 1.0), ("mxfp4", 0.5)):
            nbytes = (m + n) * k * (per + 1.0 / 32)
            gbps = nbytes / (our_ms(ours, recipe, (m, n, k)) * 1e-3) / 1e9
            cells += ["%.0f" % gbps, "%.0f%%" % (100.0 * gbps / copy_gbps)]
        rows.append("| %dx%dx%d | %s |" % (m, n, k, " | ".join(cells)))
    rows.append("")
    rows.append("| quantize | GB/s (with round trip) | GB/s (device) | of copy %.0f GB/s |"
                % copy_gbps)
    rows.append("|---|---|---|---|")
    for q in ours:
        if q["op"] != "quantize":
            continue
        rows.append("| %s -> %s %dx%d | %.0f | %.0f | %.0f%% |" % (
            q["dtype"], q["elem"], q["rows"], q["cols"], q["gbps"],
            q["gbps_device"], 100.0 * q["gbps_device"] / copy_gbps))
    return "\n".join(rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.environ.get("MXACCEL_BUILD", "build/rel"))
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--quick", action="store_true", help="one shape, short timings")
    ap.add_argument("--only", default="gemm,weight_only,grouped,quant",
                    help="comma-separated parts: gemm, weight_only, grouped, quant")
    ap.add_argument("--wo-shapes", default=None,
                    help="weight-only shapes MxNxK,... instead of the default list")
    args = ap.parse_args()
    if args.wo_shapes:
        WEIGHT_ONLY[:] = [tuple(int(v) for v in s.split("x")) for s in args.wo_shapes.split(",")]
    parts = args.only.split(",")
    shapes = (SHAPES[:1] + SHAPES[-1:] if args.quick else SHAPES) if "gemm" in parts else []
    wo_shapes = (WEIGHT_ONLY[:1] if args.quick else WEIGHT_ONLY) if "weight_only" in parts else []
    grouped = (GROUPED[:1] if args.quick else GROUPED) if "grouped" in parts else []

    props = torch.cuda.get_device_properties(0)
    info = {"device": props.name, "torch": torch.__version__,
            "cuda": torch.version.cuda, "sms": props.multi_processor_count}
    print(json.dumps(info), flush=True)

    # 1. libmxaccel, in its own process.
    cmd = [os.path.join(args.build, "tests", "cuda_bench"),
           "--recipes", "mxfp8,mxfp4,nvfp4", "--wo-recipes", ",".join(WO_RECIPES),
           "--grouped-recipes", ",".join(GROUPED_RECIPES)]
    for m, n, k in shapes:
        cmd += ["--gemm", "%dx%dx%d" % (m, n, k)]
    for m, n, k in wo_shapes:
        cmd += ["--weight-only", "%dx%dx%d" % (m, n, k)]
    for kind, g, m, n, k in grouped:
        cmd += ["--grouped" if kind == "2d_3d" else "--grouped-k", "%dx%dx%dx%d" % (g, m, n, k)]
    for r, c in (QUANT if "quant" in parts else []):
        cmd += ["--quant", "%dx%d" % (r, c)]
    ours = []
    proc = subprocess.run(cmd, capture_output=True, text=True)
    sys.stderr.write(proc.stderr)
    for line in proc.stdout.splitlines():
        print(line, flush=True)
        ours.append(json.loads(line))
    if proc.returncode:
        # Keep what was measured: the tables say "not run" for the rest.
        print(json.dumps({"cuda_bench_exit": proc.returncode}), flush=True)

    # 2. PyTorch.
    compiled = (torch.compile(mm_fp8), torch.compile(mm_fp4), torch.compile(mm_nvfp4))
    theirs = {}
    for m, n, k in shapes:
        theirs[(m, n, k)] = torch_gemms(m, n, k, compiled)
        print(json.dumps({"shape": [m, n, k], **theirs[(m, n, k)]}), flush=True)
    wo = {}
    for m, n, k in wo_shapes:
        wo[(m, n, k)] = torch_weight_only(m, n, k)
        print(json.dumps({"weight_only": [m, n, k], **wo[(m, n, k)]}), flush=True)
    gr = {}
    for key in grouped:
        gr[key] = torch_grouped(*key)
        print(json.dumps({"grouped": list(key), **gr[key]}), flush=True)
    copy_gbps = copy_bandwidth()
    print(json.dumps({"copy_gbps": copy_gbps}), flush=True)

    # 3. The tables.
    table = (tables(ours, theirs, shapes, copy_gbps) + "\n\n" +
             extra_tables(ours, theirs, wo, gr, copy_gbps))
    print(table)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({"info": info, "ours": ours, "copy_gbps": copy_gbps,
                   "torch": {"%dx%dx%d" % s: v for s, v in theirs.items()},
                   "torch_weight_only": {"%dx%dx%d" % s: v for s, v in wo.items()},
                   "torch_grouped": {"%s-%d-%dx%dx%d" % s: v for s, v in gr.items()}},
                  f, indent=1)
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write(table + "\n")


if __name__ == "__main__":
    main()
