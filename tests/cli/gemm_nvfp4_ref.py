# SPDX-License-Identifier: MIT
"""`mxaccel gemm` with NVFP4 operands against an independent exact reference.

Run by test_cli_gemm_nvfp4.sh: python3 gemm_nvfp4_ref.py MXACCEL TMPDIR SEED.

Operands are NVFP4 (e2m1 codes, one UE4M3 = float8_e4m3fn scale per 16
elements, optionally an fp32 per-tensor scale) or MX (any element type,
one E8M0 scale per 32 elements), in the pairs NVFP4 x NVFP4, NVFP4 x MX and
MX x NVFP4.  Every value is decoded here from the format definitions
(OCP MX v1.0; float8_e4m3fn; IEEE binary32), not by the library, and C is
computed with fractions.Fraction: the exact value of
sum_k a_k * b_k (+ C_in), a_k = code * block scale [* tensor scale], rounded
once to fp32 / bf16 (nearest, ties to even, gradual underflow, overflow to
+-Inf, exact zero +0).  NaN when a contributing scale or element is NaN, or
C_in is; Inf * 0 is NaN (0: a zero code, or a zero scale); +Inf + -Inf is
NaN.  The EMULATED kernel must match bit for bit (NaN as NaN).

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
from fractions import Fraction

MX, TMP, SEED = sys.argv[1], sys.argv[2], int(sys.argv[3], 0)
M, N, K = 6, 5, 64
NAN, PINF, NINF = "nan", "+inf", "-inf"
# OCP MX v1.0: exponent bits, mantissa bits, bias, code bits
FMT = {
    "e4m3": (4, 3, 7, 8),
    "e5m2": (5, 2, 15, 8),
    "e2m3": (2, 3, 1, 6),
    "e3m2": (3, 2, 3, 6),
    "e2m1": (2, 1, 1, 4),
}
failures = 0
checked = 0
kinds = {}


def fail(msg):
    global failures
    failures += 1
    if failures <= 40:
        print("FAIL: " + msg)


def decode(elem, code):
    """Exact value of an element code, or NAN / PINF / NINF."""
    eb, mb, bias, _ = FMT[elem]
    s = (code >> (eb + mb)) & 1
    e = (code >> mb) & ((1 << eb) - 1)
    m = code & ((1 << mb) - 1)
    if elem == "e4m3" and e == 15 and m == 7:
        return NAN
    if elem == "e5m2" and e == 31:
        return NAN if m else (NINF if s else PINF)
    if e == 0:
        v = Fraction(m, 1 << mb) * Fraction(2) ** (1 - bias)
    else:
        v = (1 + Fraction(m, 1 << mb)) * Fraction(2) ** (e - bias)
    return -v if s else v


def ue4m3(byte):
    """A UE4M3 scale byte read as float8_e4m3fn (0x7f, 0xff: NaN)."""
    return decode("e4m3", byte)


def e8m0(byte):
    return NAN if byte == 0xFF else Fraction(2) ** (byte - 127)


def f32_value(bits):
    """Exact value of fp32 bits (finite only here)."""
    s, e, m = bits >> 31, (bits >> 23) & 0xFF, bits & 0x7FFFFF
    if e == 0xFF:
        return NAN if m else (NINF if s else PINF)
    v = Fraction(m, 1 << 23) * Fraction(2) ** -126 if e == 0 else \
        (1 + Fraction(m, 1 << 23)) * Fraction(2) ** (e - 127)
    return -v if s else v


def ilog2(q):
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if q < Fraction(2) ** e:
        e -= 1
    return e


def round_bits(q, dtype):
    """The bit pattern of Fraction q rounded once to fp32 / bf16."""
    mbits = 7 if dtype == "bf16" else 23
    if q == 0:
        return 0
    neg = q < 0
    a = -q if neg else q
    e = max(ilog2(a), -126)
    quantum = Fraction(2) ** (e - mbits)
    n = a / quantum
    fl = n.numerator // n.denominator
    rem = n - fl
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and fl % 2):
        fl += 1
    v = fl * quantum
    if v >= Fraction(2) ** 128:
        bits = 0x7F800000
    else:
        bits = struct.unpack("<I", struct.pack("<f", float(v)))[0]
    if neg:
        bits |= 0x80000000
    return bits >> 16 if dtype == "bf16" else bits


def special_bits(v, dtype):
    b = {PINF: 0x7F800000, NINF: 0xFF800000}[v]
    return b >> 16 if dtype == "bf16" else b


def is_nan_bits(b, dtype):
    if dtype == "bf16":
        return (b & 0x7FFF) > 0x7F80
    return (b & 0x7FFFFFFF) > 0x7F800000


def swizzle_index(blocks, r, c):
    cp = (blocks + 3) // 4 * 4
    return ((r // 128) * (cp // 4) + c // 4) * 512 + (r % 32) * 16 + \
        ((r % 128) // 32) * 4 + c % 4


# --- operands --------------------------------------------------------------

class Operand:
    """rows x K codes with their scales; kind 'nvfp4' or an MX element."""

    def __init__(self, kind, rows, ts_bits=0):
        self.kind = kind
        self.rows = rows
        self.elem = "e2m1" if kind == "nvfp4" else kind
        self.block = 16 if kind == "nvfp4" else 32
        self.blocks = K // self.block
        self.codes = [[0] * K for _ in range(rows)]
        self.scales = [[0] * self.blocks for _ in range(rows)]
        self.ts_bits = ts_bits

    def value(self, r, k):
        """(code value, scale value, tensor value) of element (r, k)."""
        c = decode(self.elem, self.codes[r][k])
        sb = self.scales[r][k // self.block]
        if self.kind == "nvfp4":
            s = ue4m3(sb)
            t = f32_value(self.ts_bits) if self.ts_bits else Fraction(1)
        else:
            s = e8m0(sb)
            t = Fraction(1)
        return c, s, t

    def code_bytes(self):
        out = bytearray()
        for row in self.codes:
            if self.elem == "e2m1":
                out += bytes(row[2 * i] | row[2 * i + 1] << 4
                             for i in range(K // 2))
            else:
                out += bytes(row)
        return bytes(out)

    def scale_bytes(self, layout):
        if layout == "plain":
            return bytes(b for row in self.scales for b in row)
        rp = (self.rows + 127) // 128 * 128
        cp = (self.blocks + 3) // 4 * 4
        out = bytearray(rp * cp)
        for r in range(self.rows):
            for c in range(self.blocks):
                out[swizzle_index(self.blocks, r, c)] = self.scales[r][c]
        return bytes(out)

    def args(self, side, layout):
        pre = os.path.join(TMP, side)
        with open(pre + ".codes", "wb") as f:
            f.write(self.code_bytes())
        with open(pre + ".scales", "wb") as f:
            f.write(self.scale_bytes(layout))
        a = ["--" + side, pre + ".codes", "--" + side + "-scale",
             pre + ".scales"]
        if self.kind == "nvfp4":
            a += ["--" + side + "-recipe", "nvfp4"]
            if self.ts_bits:
                x = struct.unpack("<f", struct.pack("<I", self.ts_bits))[0]
                a += ["--" + side + "-tensor-scale", x.hex()]
        else:
            a += ["--" + side + "-elem", self.elem]
        return a


def finite_code(rng, elem):
    while True:
        c = rng.randrange(1 << FMT[elem][3])
        if isinstance(decode(elem, c), Fraction):
            return c


def fill(rng, op, style):
    """Fill op's rows in a style; NVFP4 and MX alike."""
    nv = op.kind == "nvfp4"
    for r in range(op.rows):
        row_style = style if style != "mixed" else \
            ["random", "zero", "max", "subnormal", "random",
             "nanscale"][r % 6]
        for k in range(K):
            op.codes[r][k] = finite_code(rng, op.elem)
        for b in range(op.blocks):
            if nv:
                s = rng.choice([rng.randrange(0x20, 0x58),
                                rng.randrange(0x01, 0x7f)])
            else:
                s = rng.randrange(118, 136)
            op.scales[r][b] = s
        if row_style == "zero":
            for k in range(op.block):
                op.codes[r][k] = 0
            if nv:
                op.scales[r][op.blocks - 1] = rng.choice([0x00, 0x80])
        elif row_style == "max":
            for k in range(K):
                op.codes[r][k] = FMT[op.elem][3] and \
                    (rng.choice([0x7, 0xF]) if op.elem == "e2m1" else
                     op.codes[r][k])
            for b in range(op.blocks):
                op.scales[r][b] = 0x7E if nv else 254
        elif row_style == "subnormal":
            for b in range(op.blocks):
                op.scales[r][b] = rng.randrange(0x01, 0x08) if nv else \
                    rng.randrange(0, 4)
            if nv:
                op.scales[r][0] |= 0x80     # a negative scale byte
        elif row_style == "nanscale":
            op.scales[r][rng.randrange(op.blocks)] = \
                rng.choice([0x7F, 0xFF]) if nv else 0xFF
        elif row_style == "special" and not nv:
            # Inf / NaN codes in an MX operand
            specials = [c for c in range(1 << FMT[op.elem][3])
                        if not isinstance(decode(op.elem, c), Fraction)]
            if specials and r % 2 == 0:
                op.codes[r][rng.randrange(K)] = rng.choice(specials)


def reference(a, b, i, j, cin):
    """Exact C[i][j]: a Fraction, or NAN / PINF / NINF."""
    nan = False
    inf = set()
    total = Fraction(0)
    if cin is not None:
        if cin in (NAN, PINF, NINF):
            if cin == NAN:
                nan = True
            else:
                inf.add(cin)
        else:
            total += cin
    for k in range(K):
        ca, sa, ta = a.value(i, k)
        cb, sb, tb = b.value(j, k)
        if NAN in (ca, sa, cb, sb):
            nan = True
            continue
        sp_a = ca in (PINF, NINF)
        sp_b = cb in (PINF, NINF)
        if sp_a or sp_b:
            # sign and zero-ness of each side's value
            def sgn(c, s, t):
                if c in (PINF, NINF):
                    x = 1 if c == PINF else -1
                else:
                    x = (c > 0) - (c < 0)
                return x * ((s > 0) - (s < 0)) * ((t > 0) - (t < 0))
            x = sgn(ca, sa, ta) * sgn(cb, sb, tb)
            if x == 0:
                nan = True
            else:
                inf.add(PINF if x > 0 else NINF)
            continue
        total += ca * sa * ta * cb * sb * tb
    if nan or len(inf) == 2:
        return NAN
    if inf:
        return inf.pop()
    return total


def expected_bits(v, dtype):
    if v == NAN:
        return None
    if v in (PINF, NINF):
        return special_bits(v, dtype)
    return round_bits(v, dtype)


def kind_of(bits, dtype):
    if bits is None:
        return "nan"
    mag = bits & (0x7FFF if dtype == "bf16" else 0x7FFFFFFF)
    inf = 0x7F80 if dtype == "bf16" else 0x7F800000
    tiny = 0x0080 if dtype == "bf16" else 0x00800000
    if mag == inf:
        return "inf"
    if mag == 0:
        return "zero"
    return "subnormal" if mag < tiny else "normal"


def run_case(name, a, b, dtype, layout, cin_vals, pref="emulated"):
    global checked
    out = os.path.join(TMP, "c.out")
    cmd = [MX, "gemm", "--m", str(M), "--n", str(N), "--k", str(K),
           "--out", out, "--out-dtype", dtype, "--scale-layout", layout,
           "--kernel", pref, "--device", "cpu"]
    cmd += a.args("a", layout) + b.args("b", layout)
    cin = None
    if cin_vals is not None:
        path = os.path.join(TMP, "c.in")
        fmt = "<H" if dtype == "bf16" else "<I"
        with open(path, "wb") as f:
            for bits in cin_vals:
                f.write(struct.pack(fmt, bits))
        cmd += ["--c-in", path]
        wide = [(x << 16 if dtype == "bf16" else x) for x in cin_vals]
        cin = [f32_value(x) for x in wide]
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
            if want is None:
                if not is_nan_bits(g, dtype):
                    fail("%s C[%d][%d]: got 0x%x, want NaN" % (name, i, j, g))
            elif g != want:
                fail("%s C[%d][%d]: got 0x%x, want 0x%x" %
                     (name, i, j, g, want))


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
            a = Operand(pa, M)
            b = Operand(pb, N)
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
        a, b = Operand("nvfp4", M), Operand("nvfp4", N)
        fill(rng, a, "max")
        fill(rng, b, "max")
        a.ts_bits, b.ts_bits = 0x5A000000, 0x59ABCDEF   # ~2^53, ~2^52
        run_case("overflow %s" % dtype, a, b, dtype, "plain", None)

    # Results in the subnormal range of the output type.
    for dtype, ts in (("f32", 0x1F000000), ("bf16", 0x1F000000),
                      ("f32", 0x1E7FFFFF)):
        a, b = Operand("nvfp4", M), Operand("nvfp4", N)
        fill(rng, a, "random")
        fill(rng, b, "random")
        a.ts_bits, b.ts_bits = ts, 0x1F2468AD
        run_case("subnormal results %s ts=0x%08x" % (dtype, ts), a, b,
                 dtype, "plain", None)

    # Two subnormal tensor scales: products near 2^-318.  Without C_in
    # every result is a tiny sum that rounds to +-0 (a nonzero negative
    # sum to -0, an exact zero to +0): the sign shows each was added.
    for use_cin in (False, True):
        a, b = Operand("nvfp4", M), Operand("nvfp4", N)
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
        a, b = Operand("nvfp4", M), Operand("e5m2", N)
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
    return 1 if failures else 0


sys.exit(main())
