#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Cut the compact golden subset kept in the repository out of the full
torchao golden set (../shared/testdata/mx_golden, 3816 blocks).

The subset keeps the full set's file names and layout so the same reader
works on both.  It holds every "special" block kind the full set has (NaN,
Inf, zero, fp32 subnormal inputs, extreme scales, saturation, exact rounding
ties, blocks on which the scale modes disagree, ...), each kind up to a cap
so that the common kinds do not crowd out the rare ones, then random blocks
to fill.  Everything is deterministic: the same full set gives the same
subset, byte for byte.

Usage: tests/data/make_golden_subset.py [SRC_DIR [DST_DIR]]
Standard library only.
"""

import os
import random
import struct
import sys

BLOCK = 32
ELEMS = ["e4m3", "e5m2", "e2m3", "e3m2", "e2m1"]
MODES = ["floor", "rceil", "ceil", "even"]

# 256 blocks x 3284 bytes = 840704 bytes; with blocks.txt and README.md the
# directory stays below 900 KB.
TOTAL = 256
# No kind may claim more than this many blocks on its own ...
KIND_CAP = 32
# ... and all kinds together leave at least a third of the subset random.
SPECIAL_MAX = 170
SEED = 0x6d78676f6c64  # "mxgold"

# (ebits, mbits, bias, max normal, has_inf_nan)
FORMATS = {
    "e4m3": (4, 3, 7, 448.0),
    "e5m2": (5, 2, 15, 57344.0),
    "e2m3": (2, 3, 1, 7.5),
    "e3m2": (3, 2, 3, 28.0),
    "e2m1": (2, 1, 1, 6.0),
}


def finite_values(elem):
    """Every finite non-negative value of an element type, ascending."""
    ebits, mbits, bias, vmax = FORMATS[elem]
    vals = set()
    for e in range(1 << ebits):
        for m in range(1 << mbits):
            if e == 0:
                v = m * 2.0 ** (1 - bias - mbits)
            else:
                v = (1 + m / 2.0 ** mbits) * 2.0 ** (e - bias)
            if v <= vmax:
                vals.add(v)
    return sorted(vals)


def f32(bits):
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def f32_class(bits):
    e = (bits >> 23) & 0xFF
    m = bits & 0x7FFFFF
    if e == 0xFF:
        return "nan" if m else "inf"
    if e == 0:
        return "zero" if m == 0 else "subnormal"
    return "normal"


def read_u32(path, count):
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) != 4 * count:
        sys.exit("%s: %d bytes, want %d" % (path, len(raw), 4 * count))
    return struct.unpack("<%dI" % count, raw)


def read_bytes(path, count):
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) != count:
        sys.exit("%s: %d bytes, want %d" % (path, len(raw), count))
    return raw


def data_bytes(elem):
    return BLOCK // 2 if elem == "e2m1" else BLOCK


def classify(src, nblocks):
    """Map kind name -> sorted list of block indices of that kind."""
    kinds = {}

    def add(kind, b):
        kinds.setdefault(kind, set()).add(b)

    x = read_u32(os.path.join(src, "input_f32.bin"), nblocks * BLOCK)
    for b in range(nblocks):
        blk = x[b * BLOCK:(b + 1) * BLOCK]
        for v in blk:
            c = f32_class(v)
            if c != "normal":
                add("input_" + c, b)
            if v == 0x80000000:
                add("input_negzero", b)
            if (v & 0x7FFFFFFF) == 0x7F7FFFFF:
                add("input_f32max", b)
        if all((v & 0x7FFFFFFF) == 0 for v in blk):
            add("input_allzero", b)
        if len(set(blk)) == 1:
            add("input_constant", b)

    values = {e: finite_values(e) for e in ELEMS}
    for elem in ELEMS:
        vals = values[elem]
        mids = set((vals[i] + vals[i + 1]) / 2 for i in range(len(vals) - 1))
        vmax = vals[-1]
        scales = {}
        for mode in MODES:
            base = os.path.join(src, "%s_%s" % (elem, mode))
            s = read_bytes(base + "_scale.bin", nblocks)
            scales[mode] = s
            deq = read_u32(base + "_deq_f32.bin", nblocks * BLOCK)
            for b in range(nblocks):
                if s[b] in (0, 1, 253, 254, 255):
                    add("scale_%d" % s[b], b)
                if s[b] == 255:
                    continue
                d = deq[b * BLOCK:(b + 1) * BLOCK]
                for v in d:
                    c = f32_class(v)
                    if c in ("nan", "inf", "subnormal"):
                        add("deq_" + c, b)
                # x * 2^(127 - s) is exact in a double: where it lands
                # tells saturation and exact round-to-even ties.
                for v in x[b * BLOCK:(b + 1) * BLOCK]:
                    if f32_class(v) in ("nan", "inf"):
                        continue
                    y = abs(f32(v)) * 2.0 ** (127 - s[b])
                    if y > vmax:
                        add("saturate", b)
                    elif y in mids:
                        add("tie", b)
        for b in range(nblocks):
            fl, rc, ce, ev = (scales[m][b] for m in MODES)
            if ev != fl:
                add("even_carries", b)
            if rc != ce:
                add("rceil_ne_ceil", b)
            if ce != fl and fl != 255:
                add("ceil_ne_floor", b)
    return {k: sorted(v) for k, v in kinds.items()}


def spread(indices, n):
    """n indices evenly spread over a sorted list (deterministic)."""
    if len(indices) <= n:
        return list(indices)
    return [indices[(i * len(indices)) // n] for i in range(n)]


def select(kinds, nblocks):
    chosen = set()
    why = {}
    # Rare kinds first, so that a block that is both rare and common is
    # credited to the rare kind and the common kinds fill around it.
    for kind in sorted(kinds, key=lambda k: (len(kinds[k]), k)):
        have = [b for b in kinds[kind] if b in chosen]
        want = min(KIND_CAP, len(kinds[kind])) - len(have)
        if want <= 0:
            continue
        fresh = [b for b in kinds[kind] if b not in chosen]
        for b in spread(fresh, want):
            if len(chosen) >= SPECIAL_MAX:
                break
            chosen.add(b)
            why[b] = kind
    rng = random.Random(SEED)
    rest = [b for b in range(nblocks) if b not in chosen]
    for b in rng.sample(rest, TOTAL - len(chosen)):
        chosen.add(b)
        why[b] = "random"
    return sorted(chosen), why


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        here, "..", "..", "..", "shared", "testdata", "mx_golden")
    dst = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "mx_golden")
    size = os.path.getsize(os.path.join(src, "input_f32.bin"))
    nblocks = size // (4 * BLOCK)

    kinds = classify(src, nblocks)
    blocks, why = select(kinds, nblocks)
    os.makedirs(dst, exist_ok=True)

    def cut(name, per_block):
        with open(os.path.join(src, name), "rb") as f:
            raw = f.read()
        if len(raw) != nblocks * per_block:
            sys.exit("%s: unexpected size %d" % (name, len(raw)))
        with open(os.path.join(dst, name), "wb") as f:
            for b in blocks:
                f.write(raw[b * per_block:(b + 1) * per_block])

    cut("input_f32.bin", 4 * BLOCK)
    for elem in ELEMS:
        for mode in MODES:
            base = "%s_%s" % (elem, mode)
            cut(base + "_scale.bin", 1)
            cut(base + "_data.bin", data_bytes(elem))
            cut(base + "_deq_f32.bin", 4 * BLOCK)

    with open(os.path.join(dst, "blocks.txt"), "w") as f:
        f.write("# row of this subset -> block of the full set, and the "
                "kind it was picked for\n")
        for i, b in enumerate(blocks):
            f.write("%d %d %s\n" % (i, b, why[b]))

    counts = []
    for kind in sorted(kinds):
        got = sum(1 for b in blocks if b in set(kinds[kind]))
        counts.append("| %s | %d | %d |" % (kind, len(kinds[kind]), got))
    with open(os.path.join(dst, "README.md"), "w") as f:
        f.write(README % {
            "total": len(blocks), "nblocks": nblocks, "cap": KIND_CAP,
            "special": SPECIAL_MAX, "seed": SEED,
            "nrandom": sum(1 for b in blocks if why[b] == "random"),
            "table": "\n".join(counts)})
    print("%d blocks written to %s" % (len(blocks), dst))


README = """\
# Compact MX golden vectors

A subset of the torchao golden vectors (`../shared/testdata/mx_golden`, %(nblocks)d
blocks; see its README.md for how torchao produced them), small enough to keep in the
repository so that `make check` proves bit-exactness without the full set.

Same files, names and layout as the full set (raw little-endian, no header): `input_f32.bin`
(B×32 fp32 bit patterns) and, for elem ∈ {e4m3, e5m2, e2m3, e3m2, e2m1} and mode ∈ {floor,
rceil, ceil, even}, `{elem}_{mode}_scale.bin` (B E8M0 bytes), `{elem}_{mode}_data.bin` (B×32
codes, e2m1 B×16 packed, element 2i in the low nibble) and `{elem}_{mode}_deq_f32.bin` (B×32
fp32 bit patterns), with B = %(total)d.  Compare NaN as "is NaN" in `deq_f32`, bit for bit
everywhere else.

`blocks.txt` maps each row here to its block in the full set and names the kind it was picked
for.  Regenerate with `tests/data/make_golden_subset.py [SRC [DST]]` (python3, standard library
only); the selection is deterministic.

How blocks were chosen: every block of the full set is classified by scanning the input and
all 20 element × mode outputs.  Kinds are visited from the rarest up; each gets blocks until it
is represented by min(its size, %(cap)d) blocks, spread evenly over its members, until
%(special)d special blocks are chosen.  The remaining %(nrandom)d rows are drawn at random
(Python `random.Random(%(seed)#x)`) from the other blocks.

| kind | blocks in full set | blocks here |
|---|---|---|
%(table)s

Kinds: `input_*` — the input block holds that fp32 class (or is all ±0, constant, holds -0 or
fp32 max); `scale_N` — some element × mode combination produced E8M0 scale N (255 = NaN);
`deq_*` — some dequantized output is NaN, Inf or an fp32 subnormal; `saturate` — some
|x|·2^(127−scale) exceeds the element's max normal; `tie` — some |x|·2^(127−scale) lies exactly
halfway between two element values; `even_carries`, `rceil_ne_ceil`, `ceil_ne_floor` — the scale
modes disagree on the block.  The full set has no -0 input and no block with scale 254;
tests/lib/test_special.c covers those.
"""

if __name__ == "__main__":
    main()
