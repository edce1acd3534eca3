# SPDX-License-Identifier: MIT
"""`mxaccel gemm` with NVFP4 operands against an independent exact reference.

Run by test_cli_gemm_nvfp4.sh: python3 gemm_nvfp4_ref.py MXACCEL TMPDIR SEED.

Operands are NVFP4 (e2m1 codes, one UE4M3 = float8_e4m3fn scale per 16
elements, optionally an fp32 per-tensor scale) or MX (any element type,
one E8M0 scale per 32 elements), in the pairs NVFP4 x NVFP4, NVFP4 x MX and
MX x NVFP4.  C is mxref.py's exact rational reference (values decoded from
the format definitions, not by the library; the exact sum rounded once);
the EMULATED kernel must match it bit for bit (NaN as NaN).

Cases: random codes and scales; zero blocks; UE4M3 448 (0x7e) and
subnormal (0x01..0x07) scales; negative and zero scale bytes; NaN scale
bytes (0x7f, 0xff); MX operands with Inf/NaN codes and NaN scales; tensor
scales with full 24-bit significands (their product needs 48 bits), two
subnormal tensor scales (products near 2^-318, which decide ties of C_in),
sums that overflow to Inf and that land in the fp32 / bf16 subnormal
range; C_in holding Inf and NaN; plain and swizzled scales; fp32 and bf16
output.
"""
import os
import random
import struct
import subprocess
import sys

sys.dont_write_bytecode = True     # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mxref import (FMT, Operand, expected_bits, fail,  # noqa: E402
                   fill, kind_of, reference, value_of_bits)
import mxref  # noqa: E402

# The device the CLI runs on (the reference is computed here either way).
DEVICE = os.environ.get("MXACCEL_TEST_DEVICE", "cpu")

MX, TMP, SEED = None, None, 0    # set by main()
M, N, K = 6, 5, 64
checked = 0
kinds = {}


def run_case(name, a, b, dtype, layout, cin_vals, pref="emulated"):
    global checked
    out = os.path.join(TMP, "c.out")
    cmd = [MX, "gemm", "--m", str(M), "--n", str(N), "--k", str(K),
           "--out", out, "--out-dtype", dtype, "--scale-layout", layout,
           "--kernel", pref, "--device", DEVICE]
    for side, op in (("a", a), ("b", b)):
        cmd += op.write_args(side, os.path.join(TMP, side),
                             op.scale_bytes(layout))
    cin = None
    if cin_vals is not None:
        path = os.path.join(TMP, "c.in")
        fmt = "<H" if dtype == "bf16" else "<I"
        with open(path, "wb") as f:
            for bits in cin_vals:
                f.write(struct.pack(fmt, bits))
        cmd += ["--c-in", path]
        cin = [value_of_bits(x, dtype) for x in cin_vals]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        fail("%s: exit %d: %s" % (name, p.returncode, p.stderr.strip()))
        return
    with open(out, "rb") as f:
        data = f.read()
    size = 2 if dtype == "bf16" else 4
    got = struct.unpack("<%d%s" % (M * N, "H" if size == 2 else "I"), data)
    for i in range(M):
        for j in range(N):
            v = reference(a, b, i, j, cin[i * N + j] if cin else None)
            want = expected_bits(v, dtype)
            g = got[i * N + j]
            checked += 1
            k = kind_of(want, dtype)
            kinds[k] = kinds.get(k, 0) + 1
            mxref.check("%s C[%d][%d]" % (name, i, j), g, want, dtype)


def rand_ts(rng):
    """A tensor scale with a full 24-bit significand, 2^-20 .. 2^20."""
    return (rng.randrange(107, 147) << 23) | rng.randrange(1 << 23) | 1


def rand_cin(rng, dtype, specials):
    vals = []
    for _ in range(M * N):
        x = struct.unpack("<I", struct.pack("<f", rng.uniform(-64, 64)))[0]
        if dtype == "bf16":
            x >>= 16
        vals.append(x)
    if specials:
        inf, ninf, nan = (0x7F80, 0xFF80, 0x7FC0) if dtype == "bf16" else \
            (0x7F800000, 0xFF800000, 0x7FC00000)
        vals[1], vals[7], vals[12] = inf, ninf, nan
    return vals


def main():
    global MX, TMP, SEED
    MX, TMP, SEED = sys.argv[1], sys.argv[2], int(sys.argv[3], 0)
    rng = random.Random(SEED)
    pairs = [("nvfp4", "nvfp4")]
    for e in FMT:
        pairs += [("nvfp4", e), (e, "nvfp4")]
    variants = [
        # dtype, layout, c_in, tensor scales (a, b)
        ("f32", "plain", False, "none"),
        ("bf16", "swizzled", True, "both"),
        ("f32", "swizzled", True, "a"),
        ("bf16", "plain", False, "b"),
    ]
    for pa, pb in pairs:
        for dtype, layout, use_cin, ts in variants:
            a = Operand(pa, M, K)
            b = Operand(pb, N, K)
            fill(rng, a, "mixed" if pa == "nvfp4" else "special")
            fill(rng, b, "mixed" if pb == "nvfp4" else "special")
            if a.kind == "nvfp4" and ts in ("both", "a"):
                a.ts_bits = rand_ts(rng)
            if b.kind == "nvfp4" and ts in ("both", "b"):
                b.ts_bits = rand_ts(rng)
            cin = rand_cin(rng, dtype, True) if use_cin else None
            run_case("%s x %s %s %s cin=%d ts=%s" %
                     (pa, pb, dtype, layout, use_cin, ts),
                     a, b, dtype, layout, cin)

    # Overflow: max scales and codes, large tensor scales.
    for dtype in ("f32", "bf16"):
        a, b = Operand("nvfp4", M, K), Operand("nvfp4", N, K)
        fill(rng, a, "max")
        fill(rng, b, "max")
        a.ts_bits, b.ts_bits = 0x5A000000, 0x59ABCDEF   # ~2^53, ~2^52
        run_case("overflow %s" % dtype, a, b, dtype, "plain", None)

    # Results in the subnormal range of the output type.
    for dtype, ts in (("f32", 0x1F000000), ("bf16", 0x1F000000),
                      ("f32", 0x1E7FFFFF)):
        a, b = Operand("nvfp4", M, K), Operand("nvfp4", N, K)
        fill(rng, a, "random")
        fill(rng, b, "random")
        a.ts_bits, b.ts_bits = ts, 0x1F2468AD
        run_case("subnormal results %s ts=0x%08x" % (dtype, ts), a, b,
                 dtype, "plain", None)

    # Two subnormal tensor scales: products near 2^-318.  Without C_in
    # every result is a tiny sum that rounds to +-0 (a nonzero negative
    # sum to -0, an exact zero to +0): the sign shows each was added.
    for use_cin in (False, True):
        a, b = Operand("nvfp4", M, K), Operand("nvfp4", N, K)
        fill(rng, a, "subnormal")
        fill(rng, b, "subnormal")
        a.ts_bits, b.ts_bits = 0x00000001, 0x00000003
        cin = [rng.randrange(1, 1 << 20) | rng.randrange(2) << 31
               for _ in range(M * N)] if use_cin else None
        run_case("two subnormal tensor scales, c_in %d" % use_cin, a, b,
                 "f32", "plain", cin)

    # A tie broken by a product 2^-302: C_in = 2^-149, plus 2^-150 from
    # NVFP4 (2^-159: code 0.5, scale 2^-9, tensor scale 2^-149) times
    # e5m2 0.5 * 2^10, plus +-2^-302 from 2^-159 times the smallest e5m2
    # subnormal under E8M0 2^-127: up to 0x2 or down to 0x1 (a lost tiny
    # product would round the tie to even, 0x2, both times).
    for neg in (0, 1):
        a, b = Operand("nvfp4", M, K), Operand("e5m2", N, K)
        for r in range(M):
            a.codes[r][0] = a.codes[r][32] = 1
            a.scales[r] = [0x01] * a.blocks
        a.ts_bits = 0x00000001
        for r in range(N):
            b.codes[r][0] = 0x38
            b.codes[r][32] = 0x01 | neg << 7
            b.scales[r] = [137, 0]
        run_case("tie broken by 2^-302, sign %d" % neg, a, b, "f32",
                 "plain", [1] * (M * N))

    print("%d results checked bit for bit: %s" %
          (checked, ", ".join("%s %d" % kv for kv in sorted(kinds.items()))))
    for k in ("nan", "inf", "zero", "subnormal", "normal"):
        if not kinds.get(k):
            fail("no %s result among the cases: the test lost coverage" % k)
    return 1 if mxref.failures else 0


if __name__ == "__main__":
    sys.exit(main())
