# SPDX-License-Identifier: MIT
"""The exact rational reference shared by the tests/cli GEMM tests.

Imported by gemm_mx_ref.py, gemm_nvfp4_ref.py and gemm_grouped_ref.py
(plain python3, no numpy).  Every value is decoded here from the format
definitions (OCP MX v1.0 elements and E8M0 scales; UE4M3 = float8_e4m3fn;
IEEE binary32), not by the library, and a result is the exact
fractions.Fraction sum sum_k a_k * b_k (+ C_in), a_k = code * block scale
[* tensor scale], rounded once to fp32 / bf16 (nearest, ties to even,
gradual underflow, overflow to +-Inf, exact zero +0).  NaN when a
contributing scale or element is NaN, or C_in is; Inf * 0 is NaN (0: a
zero code, or a zero scale); +Inf + -Inf is NaN.
"""
import struct
from fractions import Fraction

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


def fail(msg):
    """Count a failed check; print the first 40."""
    global failures
    failures += 1
    if failures <= 40:
        print("FAIL: " + msg)


# --- decoding --------------------------------------------------------------

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


def is_special_code(elem, code):
    return not isinstance(decode(elem, code), Fraction)


def ue4m3(byte):
    """A UE4M3 scale byte read as float8_e4m3fn (0x7f, 0xff: NaN)."""
    return decode("e4m3", byte)


def e8m0(byte):
    return NAN if byte == 0xFF else Fraction(2) ** (byte - 127)


def f32_value(bits):
    """Exact value of fp32 bits: a Fraction, or NAN / PINF / NINF."""
    s, e, m = bits >> 31, (bits >> 23) & 0xFF, bits & 0x7FFFFF
    if e == 0xFF:
        return NAN if m else (NINF if s else PINF)
    v = Fraction(m, 1 << 23) * Fraction(2) ** -126 if e == 0 else \
        (1 + Fraction(m, 1 << 23)) * Fraction(2) ** (e - 127)
    return -v if s else v


def value_of_bits(bits, dtype):
    """Exact value of an fp32 / bf16 bit pattern (see f32_value)."""
    return f32_value(bits << 16 if dtype == "bf16" else bits)


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


# --- rounding --------------------------------------------------------------

def ilog2(q):
    """floor(log2(q)) for a positive Fraction."""
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
        bits = f32_bits(float(v))
    if neg:
        bits |= 0x80000000
    return bits >> 16 if dtype == "bf16" else bits


def special_bits(v, dtype):
    b = {PINF: 0x7F800000, NINF: 0xFF800000}[v]
    return b >> 16 if dtype == "bf16" else b


def expected_bits(v, dtype):
    """The bits an exact result v must give, None for NaN (any NaN)."""
    if v == NAN:
        return None
    if v in (PINF, NINF):
        return special_bits(v, dtype)
    return round_bits(v, dtype)


def is_nan_bits(b, dtype):
    if dtype == "bf16":
        return (b & 0x7FFF) > 0x7F80
    return (b & 0x7FFFFFFF) > 0x7F800000


def kind_of(bits, dtype):
    """What an expected result is (expected_bits), to report coverage."""
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


def check(what, got, want, dtype):
    """got (bits) against want (expected_bits): fail and False if not."""
    if want is None:
        if is_nan_bits(got, dtype):
            return True
        fail("%s = 0x%x, want NaN" % (what, got))
        return False
    if got != want:
        fail("%s = 0x%x, want 0x%x" % (what, got, want))
        return False
    return True


# --- scale layouts ---------------------------------------------------------

def swizzle_index(blocks, r, c):
    """Where scale (r, c) of a [rows x blocks] scale matrix goes in the
    cuBLAS / torchao to_blocked 128x4 tiling (design.md section 3)."""
    cp = (blocks + 3) // 4 * 4
    return ((r // 128) * (cp // 4) + c // 4) * 512 + (r % 32) * 16 + \
        ((r % 128) // 32) * 4 + c % 4


def swizzle(scales, blocks):
    """The swizzled bytes of scales (rows of `blocks` bytes), padding 0."""
    rows = len(scales)
    out = bytearray((rows + 127) // 128 * 128 * ((blocks + 3) // 4 * 4))
    for r in range(rows):
        for c in range(blocks):
            out[swizzle_index(blocks, r, c)] = scales[r][c]
    return bytes(out)


# --- operands --------------------------------------------------------------

class Operand:
    """rows x cols codes with their scales; kind 'nvfp4' or an MX element."""

    def __init__(self, kind, rows, cols, ts_bits=0):
        self.kind = kind
        self.rows = rows
        self.cols = cols
        self.elem = "e2m1" if kind == "nvfp4" else kind
        self.block = 16 if kind == "nvfp4" else 32
        self.blocks = self.cols // self.block
        self.codes = [[0] * self.cols for _ in range(rows)]
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
                             for i in range(self.cols // 2))
            else:
                out += bytes(row)
        return bytes(out)

    def scale_bytes(self, layout):
        if layout == "plain":
            return bytes(b for row in self.scales for b in row)
        return swizzle(self.scales, self.blocks)

    def write_args(self, side, pre, scale_bytes):
        """Write the codes and scale_bytes to pre.codes and pre.scales;
        the `mxaccel gemm` options of side "a" or "b" that read them."""
        with open(pre + ".codes", "wb") as f:
            f.write(self.code_bytes())
        with open(pre + ".scales", "wb") as f:
            f.write(scale_bytes)
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
        for k in range(op.cols):
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
            for k in range(op.cols):
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
                        if is_special_code(op.elem, c)]
            if specials and r % 2 == 0:
                op.codes[r][rng.randrange(op.cols)] = rng.choice(specials)


# --- the exact reference ---------------------------------------------------

def _sign(c, s, t):
    """Sign (-1, 0, 1) of an element's value; c may be PINF / NINF."""
    if c in (PINF, NINF):
        x = 1 if c == PINF else -1
    else:
        x = (c > 0) - (c < 0)
    return x * ((s > 0) - (s < 0)) * ((t > 0) - (t < 0))


def dot(a, b, i, j, k0=0, k1=None):
    """A row i . B row j over K columns [k0, k1): (nan, set of the
    infinities met, exact sum of the finite products, sum of their
    magnitudes)."""
    nan = False
    inf = set()
    total = Fraction(0)
    mag = Fraction(0)
    for k in range(k0, a.cols if k1 is None else k1):
        ca, sa, ta = a.value(i, k)
        cb, sb, tb = b.value(j, k)
        if NAN in (ca, sa, cb, sb):
            nan = True
            continue
        if ca in (PINF, NINF) or cb in (PINF, NINF):
            x = _sign(ca, sa, ta) * _sign(cb, sb, tb)
            if x == 0:
                nan = True      # Inf * 0
            else:
                inf.add(PINF if x > 0 else NINF)
            continue
        p = ca * sa * ta * cb * sb * tb
        total += p
        mag += abs(p)
    return nan, inf, total, mag


def combine(d, cin):
    """The exact result of a dot() plus C_in (None: no C_in): a Fraction,
    or NAN / PINF / NINF."""
    nan, inf, total, _ = d
    inf = set(inf)
    if cin == NAN:
        nan = True
    elif cin in (PINF, NINF):
        inf.add(cin)
    elif cin is not None:
        total += cin
    if nan or len(inf) == 2:
        return NAN
    if inf:
        return inf.pop()
    return total


def reference(a, b, i, j, cin, k0=0, k1=None):
    """Exact C[i][j] over K columns [k0, k1): a Fraction, or NAN / PINF /
    NINF."""
    return combine(dot(a, b, i, j, k0, k1), cin)
