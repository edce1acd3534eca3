#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# `mxaccel gemm` against an independent exact computation.
#
# For every element pair (5 x 5) random MX inputs are generated with normal
# rows, rows with extreme scales (E8M0 0, 1, 254, 255), rows whose large
# blocks cancel exactly, rows with special codes (NaN, +-Inf, zeros) and
# NaN-scale rows.  The expected C is computed here in python3 with
# fractions.Fraction from the element definitions of OCP MX v1.0 (design.md
# section 3: codes decoded by hand, not by the library) and the GEMM rules
# of section 4: the exact sum rounded once (round half to even, overflow to
# +-Inf, exact zero to +0), NaN if any contributing scale is 0xFF or element
# is NaN, Inf * 0 = NaN, +Inf + -Inf = NaN.
#
#   --kernel emulated   must match bit for bit (NaN as NaN): fp32 and bf16
#                       output, with and without --c-in, plain and swizzled
#                       scales;
#   --explain           prints device, kernel, support, exact and reason;
#   --kernel native     on the finite normal rows must lie within
#                       (K+1) * 2^-24 * (sum |a*b| + |c_in|) plus half an
#                       output ulp of the exact result, and must give NaN
#                       where a scale is NaN.
#
# Environment: MXACCEL_BUILD (default build/rel), MXACCEL_TEST_SEED.
set -u

. "$(dirname "$0")/lib.sh"
need_python3

python3 - "$mx" "$tmp" "${MXACCEL_TEST_SEED:-20251129}" <<'EOF'
import os
import random
import struct
import subprocess
import sys
from fractions import Fraction

MX, TMP, SEED = sys.argv[1], sys.argv[2], int(sys.argv[3], 0)
ELEMS = ["e4m3", "e5m2", "e2m3", "e3m2", "e2m1"]
# OCP MX v1.0: exponent bits, mantissa bits, bias, code bits
FMT = {
    "e4m3": (4, 3, 7, 8),
    "e5m2": (5, 2, 15, 8),
    "e2m3": (2, 3, 1, 6),
    "e3m2": (3, 2, 3, 6),
    "e2m1": (2, 1, 1, 4),
}
M, N, K = 6, 5, 128
BLOCKS = K // 32
NAN, PINF, NINF = "nan", "+inf", "-inf"
failures = 0


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


def is_special_code(elem, code):
    return not isinstance(decode(elem, code), Fraction)


def ilog2(q):
    """floor(log2(q)) for a positive Fraction."""
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if q < Fraction(2) ** e:
        e -= 1
    return e


def round_float(q, mbits):
    """Round a Fraction once to fp32 (mbits 23) or bf16 (7): returns a
    float holding the exact rounded value, or +-inf."""
    if q == 0:
        return 0.0
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
        r = float("inf")
    else:
        r = float(v)
    return -r if neg else r


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def bits_value(bits, dtype):
    """(kind, Fraction or None) of an fp32 / bf16 bit pattern."""
    if dtype == "bf16":
        bits <<= 16
    x = struct.unpack("<f", struct.pack("<I", bits))[0]
    if x != x:
        return NAN
    if x == float("inf"):
        return PINF
    if x == float("-inf"):
        return NINF
    return Fraction(x)


def to_bits(v, dtype):
    """Bit pattern of an expected result (v: NAN/PINF/NINF or Fraction)."""
    mbits = 7 if dtype == "bf16" else 23
    if v == NAN:
        return None
    if v == PINF:
        x = float("inf")
    elif v == NINF:
        x = float("-inf")
    else:
        x = round_float(v, mbits)
    b = f32_bits(x)
    return b >> 16 if dtype == "bf16" else b


def kind(v, dtype):
    """What an expected result is, to report the coverage."""
    if v == NAN:
        return "nan"
    if v in (PINF, NINF):
        return "inf"
    x = round_float(v, 7 if dtype == "bf16" else 23)
    if x in (float("inf"), float("-inf")):
        return "overflow"
    if x == 0:
        return "zero"
    return "subnormal" if abs(x) < 2.0 ** -126 else "normal"


def ulp(x, dtype):
    mbits = 7 if dtype == "bf16" else 23
    a = abs(x)
    e = -126 if a == 0 else max(ilog2(a), -126)
    return Fraction(2) ** (e - mbits)


def is_nan_bits(b, dtype):
    if dtype == "bf16":
        return (b & 0x7FFF) > 0x7F80
    return (b & 0x7FFFFFFF) > 0x7F800000


# --- inputs ---------------------------------------------------------------

def finite_code(rng, elem):
    bits = FMT[elem][3]
    while True:
        c = rng.randrange(1 << bits)
        if not is_special_code(elem, c):
            return c


def neg_code(elem, c):
    eb, mb = FMT[elem][0], FMT[elem][1]
    return c ^ (1 << (eb + mb))


def make_rows(rng, elem, nrows, side):
    """Codes [row][k] and scales [row][block] of one operand.  Row kinds:
    0, 1 normal; 2 extreme scales; 3 exact cancellation; 4 special codes;
    5 a NaN scale."""
    codes, scales = [], []
    for r in range(nrows):
        row = [finite_code(rng, elem) for _ in range(K)]
        sc = [rng.randrange(118, 137) for _ in range(BLOCKS)]
        if r == 2:
            sc = [0, 1, 254, 127] if side == "a" else [254, 0, 1, 127]
        elif r == 3:
            # A row 3 . B row 3: the huge blocks 0 and 1 cancel exactly
            # (A negated, B repeated) and the tiny blocks 2 and 3, near
            # the fp32 subnormal range, decide the result.
            if side == "a":
                sc = [200, 200, 60, 1]
                row[32:64] = [neg_code(elem, c) for c in row[0:32]]
            else:
                sc = [190, 190, 49, 108]
                row[32:64] = row[0:32]
        elif r == 4:
            zero = 0
            row[3] = row[7] = zero
            if elem == "e5m2":
                row[0] = 0x7C               # +Inf
                row[1] = 0xFC if side == "a" else 0x7C  # -Inf / +Inf
                row[2] = 0x7C if side == "a" else 0     # Inf * 0
            elif elem == "e4m3":
                row[5] = 0x7F if side == "a" else 0xFF  # NaN (S.1111.111)
            else:
                row = [0] * K                # no specials: an all-zero row
        elif r == 5:
            sc[2] = 255
        codes.append(row)
        scales.append(sc)
    return codes, scales


def pack(elem, codes):
    out = bytearray()
    for row in codes:
        if elem == "e2m1":
            for i in range(0, K, 2):
                out.append(row[i] | (row[i + 1] << 4))
        else:
            out.extend(row)
    return bytes(out)


def swizzle(scales, rows):
    """cuBLAS / torchao to_blocked 128x4 tiling (design.md section 3)."""
    rp = 128 * ((rows + 127) // 128)
    cp = 4 * ((BLOCKS + 3) // 4)
    out = bytearray(rp * cp)
    for r in range(rows):
        for c in range(BLOCKS):
            idx = ((r // 128) * (cp // 4) + c // 4) * 512 + (r % 32) * 16 \
                + ((r % 128) // 32) * 4 + c % 4
            out[idx] = scales[r][c]
    return bytes(out)


def random_cin(rng, dtype):
    """C input bit patterns: moderate values, specials away from the
    normal corner [0:2][0:2] that the native check uses."""
    vals = []
    specials = [float("inf"), float("-inf"), float("nan"), -0.0, 0.0,
                1e-40, -3e-39, 3.4e38, -1.7e38]
    for i in range(M):
        for j in range(N):
            if i >= 2 and j >= 2 and rng.random() < 0.5:
                x = rng.choice(specials)
            else:
                x = rng.uniform(-100, 100)
            b = f32_bits(x)
            if dtype == "bf16":
                b >>= 16            # truncation: any bf16 pattern will do
            vals.append(b)
    return vals


# --- the exact reference ----------------------------------------------------

def exact_dot(ea, acodes, ascales, eb, bcodes, bscales, i, j):
    """(special or None, exact finite sum, sum |a*b|) of A row i . B row j."""
    nan = pinf = ninf = False
    acc = Fraction(0)
    mag = Fraction(0)
    for blk in range(BLOCKS):
        sa, sb = ascales[i][blk], bscales[j][blk]
        if sa == 255 or sb == 255:
            nan = True
            continue
        f = Fraction(2) ** (sa - 127) * Fraction(2) ** (sb - 127)
        for k in range(blk * 32, blk * 32 + 32):
            x = decode(ea, acodes[i][k])
            y = decode(eb, bcodes[j][k])
            if x == NAN or y == NAN:
                nan = True
                continue
            if not isinstance(x, Fraction) or not isinstance(y, Fraction):
                sx = -1 if x == NINF or (isinstance(x, Fraction) and x < 0) \
                    else 1
                sy = -1 if y == NINF or (isinstance(y, Fraction) and y < 0) \
                    else 1
                if (isinstance(x, Fraction) and x == 0) or \
                   (isinstance(y, Fraction) and y == 0):
                    nan = True      # Inf * 0
                elif sx * sy > 0:
                    pinf = True
                else:
                    ninf = True
                continue
            p = x * y * f
            acc += p
            mag += abs(p)
    return (nan, pinf, ninf), acc, mag


def combine(flags, acc, cin):
    nan, pinf, ninf = flags
    if cin == NAN:
        nan = True
    elif cin == PINF:
        pinf = True
    elif cin == NINF:
        ninf = True
    elif cin is not None:
        acc = acc + cin
    if nan or (pinf and ninf):
        return NAN
    if pinf:
        return PINF
    if ninf:
        return NINF
    return acc


# --- running the CLI -------------------------------------------------------

def write(name, data):
    path = os.path.join(TMP, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def run_gemm(ea, eb, kernel, dtype, cin_path, layout, files):
    out = os.path.join(TMP, "c.out")
    if os.path.exists(out):
        os.unlink(out)
    a, asc, b, bsc = files[layout]
    cmd = [MX, "gemm", "--m", str(M), "--n", str(N), "--k", str(K),
           "--a", a, "--a-scale", asc, "--a-elem", ea,
           "--b", b, "--b-scale", bsc, "--b-elem", eb,
           "--out", out, "--out-dtype", dtype, "--kernel", kernel,
           "--scale-layout", layout]
    if cin_path:
        cmd += ["--c-in", cin_path]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        fail("%s exit %d: %s" % (" ".join(cmd[1:]), p.returncode,
                                 p.stderr.strip()))
        return None
    with open(out, "rb") as f:
        data = f.read()
    fmt = "<%d%s" % (M * N, "H" if dtype == "bf16" else "I")
    if len(data) != struct.calcsize(fmt):
        fail("%s: output is %d bytes" % (" ".join(cmd[1:]), len(data)))
        return None
    return struct.unpack(fmt, data)


def check_explain(files):
    """--explain prints the plan as "key: value" lines before running."""
    a, asc, b, bsc = files["plain"]
    for kernel, support, exact in (("emulated", "emulated", "yes"),
                                   ("auto", None, None)):
        cmd = [MX, "gemm", "--m", str(M), "--n", str(N), "--k", str(K),
               "--a", a, "--a-scale", asc, "--a-elem", "e4m3",
               "--b", b, "--b-scale", bsc, "--b-elem", "e4m3",
               "--out", os.path.join(TMP, "c.out"), "--kernel", kernel,
               "--explain"]
        p = subprocess.run(cmd, capture_output=True, text=True)
        plan = dict(line.split(": ", 1) for line in p.stdout.splitlines()
                    if ": " in line)
        if p.returncode != 0:
            fail("--explain --kernel %s: exit %d" % (kernel, p.returncode))
        for key in ("device", "kernel", "support", "exact", "reason"):
            if not plan.get(key):
                fail("--explain --kernel %s: no '%s: ...' line in %r"
                     % (kernel, key, p.stdout))
        if support and plan.get("support") != support:
            fail("--explain --kernel %s: support %r, want %r"
                 % (kernel, plan.get("support"), support))
        if exact and plan.get("exact") != exact:
            fail("--explain --kernel %s: exact %r, want %r"
                 % (kernel, plan.get("exact"), exact))


def main():
    rng = random.Random(SEED)
    print("seed %d" % SEED)
    counts = {"nan": 0, "inf": 0, "overflow": 0, "zero": 0,
              "subnormal": 0, "normal": 0}
    checked = 0
    for ea in ELEMS:
        for eb in ELEMS:
            ac, asc = make_rows(rng, ea, M, "a")
            bc, bsc = make_rows(rng, eb, N, "b")
            files = {
                "plain": (write("a", pack(ea, ac)),
                          write("as", bytes(sum(asc, []))),
                          write("b", pack(eb, bc)),
                          write("bs", bytes(sum(bsc, [])))),
                "swizzled": (write("a", pack(ea, ac)),
                             write("asw", swizzle(asc, M)),
                             write("b", pack(eb, bc)),
                             write("bsw", swizzle(bsc, N))),
            }
            if ea == eb == "e4m3":
                check_explain(files)
            dots = {}
            for i in range(M):
                for j in range(N):
                    dots[i, j] = exact_dot(ea, ac, asc, eb, bc, bsc, i, j)
            for dtype in ("f32", "bf16"):
                cins = random_cin(rng, dtype)
                cin_path = write("cin", struct.pack(
                    "<%d%s" % (M * N, "H" if dtype == "bf16" else "I"),
                    *cins))
                variants = [(None, "plain"), (cin_path, "plain"),
                            (None, "swizzled")]
                for cpath, layout in variants:
                    want = []
                    for i in range(M):
                        for j in range(N):
                            flags, acc, mag = dots[i, j]
                            cin = bits_value(cins[i * N + j], dtype) \
                                if cpath else None
                            want.append(combine(flags, acc, cin))
                    tag = "%s x %s -> %s%s%s" % (
                        ea, eb, dtype, " +c_in" if cpath else "",
                        " swizzled" if layout == "swizzled" else "")
                    got = run_gemm(ea, eb, "emulated", dtype, cpath,
                                   layout, files)
                    if got is not None:
                        for idx, (w, g) in enumerate(zip(want, got)):
                            checked += 1
                            wb = to_bits(w, dtype)
                            counts[kind(w, dtype)] += 1
                            if wb is None:
                                ok = is_nan_bits(g, dtype)
                            else:
                                ok = g == wb
                            if not ok:
                                fail("emulated %s: C[%d][%d] = 0x%x, want %s"
                                     % (tag, idx // N, idx % N, g,
                                        "NaN" if wb is None else hex(wb)))
                    if layout != "plain":
                        continue
                    got = run_gemm(ea, eb, "native", dtype, cpath, layout,
                                   files)
                    if got is None:
                        continue
                    for i in range(M):
                        for j in range(N):
                            g = got[i * N + j]
                            flags, acc, mag = dots[i, j]
                            if i == 5 or j == 5:
                                # a NaN scale must stay NaN
                                if not is_nan_bits(g, dtype):
                                    fail("native %s: C[%d][%d] = 0x%x, want "
                                         "NaN (NaN scale)" % (tag, i, j, g))
                                continue
                            if i >= 2 or j >= 2:
                                continue
                            cin = bits_value(cins[i * N + j], dtype) \
                                if cpath else Fraction(0)
                            exact = acc + cin
                            gv = bits_value(g, dtype)
                            if not isinstance(gv, Fraction):
                                fail("native %s: C[%d][%d] = 0x%x, want "
                                     "about %g" % (tag, i, j, g,
                                                   float(exact)))
                                continue
                            bound = (K + 1) * Fraction(1, 1 << 24) * \
                                (mag + abs(cin)) + \
                                ulp(max(abs(exact), abs(gv)), dtype) / 2
                            if abs(gv - exact) > bound:
                                fail("native %s: C[%d][%d] = %r, exact %r, "
                                     "error %.3g > bound %.3g"
                                     % (tag, i, j, float(gv), float(exact),
                                        float(abs(gv - exact)),
                                        float(bound)))
                            checked += 1
    print("checked %d entries; expected kinds: %s" % (checked, counts))
    if failures:
        print("%d failure(s)" % failures)
        return 1
    return 0


sys.exit(main())
EOF
rc=$?
exit $rc
