# SPDX-License-Identifier: MIT
"""`mxaccel gemm` with MX operands against the exact rational reference.

Run by test_cli_gemm.sh: python3 gemm_mx_ref.py MXACCEL TMPDIR SEED.

For every element pair (5 x 5) random MX inputs are generated with normal
rows, rows with extreme scales (E8M0 0, 1, 254, 255), rows whose large
blocks cancel exactly, rows with special codes (NaN, +-Inf, zeros) and
NaN-scale rows.  The expected C is mxref.py's exact reference (design.md
sections 3 and 4: codes decoded from the OCP MX v1.0 definitions, not by
the library; the exact sum rounded once, round half to even, overflow to
+-Inf, exact zero to +0; NaN if any contributing scale is 0xFF or element
is NaN, Inf * 0 = NaN, +Inf + -Inf = NaN).  The EMULATED kernel must
match it bit for bit, --explain must print the plan, and the NATIVE
kernel must lie within an error bound on the finite normal rows and give
NaN where a scale is NaN (test_cli_gemm.sh says how).
"""
import os
import random
import struct
import subprocess
import sys
from fractions import Fraction

sys.dont_write_bytecode = True     # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mxref import (FMT, NINF, PINF, Operand, check, combine,  # noqa: E402
                   dot, expected_bits, f32_bits, fail, finite_code, ilog2,
                   is_nan_bits, kind_of, value_of_bits)
import mxref  # noqa: E402

MX, TMP, SEED = None, None, 0    # set by main()
ELEMS = ["e4m3", "e5m2", "e2m3", "e3m2", "e2m1"]
M, N, K = 6, 5, 128
BLOCKS = K // 32


def kind(v, dtype):
    """What an expected result is, to report the coverage: as kind_of(),
    with a finite sum that rounds to +-Inf an "overflow"."""
    k = kind_of(expected_bits(v, dtype), dtype)
    if k == "inf" and v not in (PINF, NINF):
        return "overflow"
    return k


def ulp(x, dtype):
    mbits = 7 if dtype == "bf16" else 23
    a = abs(x)
    e = -126 if a == 0 else max(ilog2(a), -126)
    return Fraction(2) ** (e - mbits)


# --- inputs ---------------------------------------------------------------

def neg_code(elem, c):
    eb, mb = FMT[elem][0], FMT[elem][1]
    return c ^ (1 << (eb + mb))


def make_operand(rng, elem, nrows, side):
    """One operand of nrows x K codes and their scales.  Row kinds:
    0, 1 normal; 2 extreme scales; 3 exact cancellation; 4 special codes;
    5 a NaN scale."""
    op = Operand(elem, nrows, K)
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
        op.codes[r] = row
        op.scales[r] = sc
    return op


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
    global MX, TMP, SEED
    MX, TMP, SEED = sys.argv[1], sys.argv[2], int(sys.argv[3], 0)
    rng = random.Random(SEED)
    print("seed %d" % SEED)
    counts = {"nan": 0, "inf": 0, "overflow": 0, "zero": 0,
              "subnormal": 0, "normal": 0}
    checked = 0
    for ea in ELEMS:
        for eb in ELEMS:
            a = make_operand(rng, ea, M, "a")
            b = make_operand(rng, eb, N, "b")
            files = {
                "plain": (write("a", a.code_bytes()),
                          write("as", a.scale_bytes("plain")),
                          write("b", b.code_bytes()),
                          write("bs", b.scale_bytes("plain"))),
                "swizzled": (write("a", a.code_bytes()),
                             write("asw", a.scale_bytes("swizzled")),
                             write("b", b.code_bytes()),
                             write("bsw", b.scale_bytes("swizzled"))),
            }
            if ea == eb == "e4m3":
                check_explain(files)
            dots = {}
            for i in range(M):
                for j in range(N):
                    dots[i, j] = dot(a, b, i, j)
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
                            cin = value_of_bits(cins[i * N + j], dtype) \
                                if cpath else None
                            want.append(combine(dots[i, j], cin))
                    tag = "%s x %s -> %s%s%s" % (
                        ea, eb, dtype, " +c_in" if cpath else "",
                        " swizzled" if layout == "swizzled" else "")
                    got = run_gemm(ea, eb, "emulated", dtype, cpath,
                                   layout, files)
                    if got is not None:
                        for idx, (w, g) in enumerate(zip(want, got)):
                            checked += 1
                            counts[kind(w, dtype)] += 1
                            check("emulated %s: C[%d][%d]"
                                  % (tag, idx // N, idx % N), g,
                                  expected_bits(w, dtype), dtype)
                    if layout != "plain":
                        continue
                    got = run_gemm(ea, eb, "native", dtype, cpath, layout,
                                   files)
                    if got is None:
                        continue
                    for i in range(M):
                        for j in range(N):
                            g = got[i * N + j]
                            _, _, acc, mag = dots[i, j]
                            if i == 5 or j == 5:
                                # a NaN scale must stay NaN
                                if not is_nan_bits(g, dtype):
                                    fail("native %s: C[%d][%d] = 0x%x, want "
                                         "NaN (NaN scale)" % (tag, i, j, g))
                                continue
                            if i >= 2 or j >= 2:
                                continue
                            cin = value_of_bits(cins[i * N + j], dtype) \
                                if cpath else Fraction(0)
                            exact = acc + cin
                            gv = value_of_bits(g, dtype)
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
    if mxref.failures:
        print("%d failure(s)" % mxref.failures)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
