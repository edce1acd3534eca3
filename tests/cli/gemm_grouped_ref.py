# SPDX-License-Identifier: MIT
"""`mxaccel gemm --groups` against the exact reference, per group.

Run by test_cli_gemm_grouped.sh: python3 gemm_grouped_ref.py MXACCEL TMPDIR
SEED.  Grouped GEMM with torch._scaled_grouped_mm's semantics:

  --group-kind m (2d x 3d): A [total_M x K] split along M by the ends,
    B one [N x K] per group (count * N rows), C [total_M x N];
  --group-kind k (2d x 2d): A [M x total_K], B [N x total_K] split along
    K, C count stacked [M x N] (an empty group's C is 0, or C_in rounded).

Swizzled scales are written here per group as torchao's moe_training lays
them out (to_blocked of each group on its own: 2d M groups on 128-row
tiles, 3d per expert, 2d K groups on 4-column tiles), from the cuBLAS
128x4 tile formula, independently of the library.  Every result must
equal, bit for bit, mxref.py's exact rational reference over the group's
rows and K columns (codes, UE4M3 / E8M0 scales and fp32 tensor scales
decoded from their definitions, the exact sum rounded once).
"""
import os
import random
import struct
import subprocess
import sys

sys.dont_write_bytecode = True     # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mxref as ref  # noqa: E402

# The device the CLI runs on (the reference is computed here either way).
DEVICE = os.environ.get("MXACCEL_TEST_DEVICE", "cpu")

MX, TMP = None, None    # set by main()
checked = 0


def swizzled(op, r0, rows, b0, blocks):
    """to_blocked() of op's scales rows [r0, r0 + rows), blocks [b0, b0 +
    blocks): the 128 x 4 tiles, padding 0."""
    return ref.swizzle([row[b0:b0 + blocks]
                        for row in op.scales[r0:r0 + rows]], blocks)


def scale_file(op, layout, kind, side, ends, n):
    if layout == "plain":
        return op.scale_bytes("plain")
    out = b""
    lo = 0
    for g, hi in enumerate(ends):
        if kind == "m" and side == "a":
            out += swizzled(op, lo, hi - lo, 0, op.blocks)
        elif kind == "m":
            out += swizzled(op, g * n, n, 0, op.blocks)
        else:
            out += swizzled(op, 0, op.rows, lo // op.block,
                            (hi - lo) // op.block)
        lo = hi
    return out


def operand_args(op, side, layout, kind, ends, n):
    return op.write_args(side, os.path.join(TMP, "g" + side),
                         scale_file(op, layout, kind, side, ends, n))


def run(rng, name, kind, pa, pb, ends, layout, dtype, use_cin):
    global checked
    n = 3
    count = len(ends)
    if kind == "m":
        m, k = ends[-1], 64
        a = ref.Operand(pa, m, k)
        b = ref.Operand(pb, count * n, k)
        crows = m
    else:
        m, k = 5, ends[-1]
        a = ref.Operand(pa, m, k)
        b = ref.Operand(pb, n, k)
        crows = count * m
    ref.fill(rng, a, "mixed" if pa == "nvfp4" else "special")
    ref.fill(rng, b, "mixed" if pb == "nvfp4" else "special")
    if a.kind == "nvfp4":
        a.ts_bits = 0x3E2AAAAB
    if b.kind == "nvfp4":
        b.ts_bits = 0x41ABCDEF
    out = os.path.join(TMP, "gc.out")
    cmd = [MX, "gemm", "--m", str(m), "--n", str(n), "--k", str(k),
           "--groups", ",".join(str(e) for e in ends), "--group-kind", kind,
           "--out", out, "--out-dtype", dtype, "--scale-layout", layout,
           "--kernel", "emulated", "--device", DEVICE]
    cmd += operand_args(a, "a", layout, kind, ends, n)
    cmd += operand_args(b, "b", layout, kind, ends, n)
    size = 2 if dtype == "bf16" else 4
    cin = None
    if use_cin:
        vals = []
        for _ in range(crows * n):
            x = struct.unpack("<I", struct.pack("<f", rng.uniform(-9, 9)))[0]
            vals.append(x >> 16 if size == 2 else x)
        vals[1] = 0x7F80 if size == 2 else 0x7F800000
        vals[2] = 0x8000 if size == 2 else 0x80000000     # -0
        path = os.path.join(TMP, "gc.in")
        with open(path, "wb") as f:
            for v in vals:
                f.write(struct.pack("<H" if size == 2 else "<I", v))
        cmd += ["--c-in", path]
        cin = [ref.value_of_bits(v, dtype) for v in vals]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        ref.fail("%s: exit %d: %s" % (name, p.returncode, p.stderr.strip()))
        return
    with open(out, "rb") as f:
        data = f.read()
    got = struct.unpack("<%d%s" % (crows * n, "H" if size == 2 else "I"),
                        data)
    lo = 0
    for g, hi in enumerate(ends):
        rows = range(lo, hi) if kind == "m" else range(m)
        for i in rows:
            for j in range(n):
                ci = i if kind == "m" else g * m + i
                c0 = cin[ci * n + j] if cin else None
                if kind == "m":
                    v = ref.reference(a, b, i, g * n + j, c0)
                else:
                    v = ref.reference(a, b, i, j, c0, lo, hi)
                want = ref.expected_bits(v, dtype)
                have = got[ci * n + j]
                checked += 1
                ref.check("%s: group %d C[%d][%d]" % (name, g, i, j),
                          have, want, dtype)
        lo = hi


def main():
    global MX, TMP
    MX, TMP = sys.argv[1], sys.argv[2]
    rng = random.Random(int(sys.argv[3], 0))
    m_ends = [3, 3, 133, 140]
    k_ends = [64, 64, 96, 224]
    k_ends16 = [16, 16, 48, 112]
    cases = [
        ("m", "nvfp4", "nvfp4", m_ends, "swizzled", "f32", True),
        ("m", "e4m3", "nvfp4", m_ends, "plain", "bf16", False),
        ("m", "e2m1", "e5m2", m_ends, "swizzled", "bf16", True),
        ("m", "nvfp4", "e3m2", [0, 7, 7], "plain", "f32", True),
        ("k", "nvfp4", "nvfp4", k_ends16, "swizzled", "f32", True),
        ("k", "nvfp4", "nvfp4", k_ends16, "plain", "bf16", False),
        ("k", "e5m2", "nvfp4", k_ends, "swizzled", "bf16", True),
        ("k", "e4m3", "e2m3", k_ends, "plain", "f32", True),
    ]
    for kind, pa, pb, ends, layout, dtype, use_cin in cases:
        run(rng, "%s %s x %s ends %s %s %s cin=%d" %
            (kind, pa, pb, ends, layout, dtype, use_cin),
            kind, pa, pb, ends, layout, dtype, use_cin)
    print("%d grouped results checked bit for bit in %d cases" %
          (checked, len(cases)))
    return 1 if ref.failures else 0


if __name__ == "__main__":
    sys.exit(main())
