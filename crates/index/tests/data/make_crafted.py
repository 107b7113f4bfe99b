#!/usr/bin/env python3
"""Writes hand-made hostile indexes to crafted/ and their htslib 1.16 answers to crafted.tsv.

  python3 make_crafted.py /tmp/oracle     (oracle built from oracle.c, see there)

crafted.tsv has the columns of chunks.tsv, with index paths relative to this folder.
"""
import gzip
import os
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MAX = 0x7FFFFFFF7FFFFFFF
V = lambda c, u=0: (c << 16) | u


def bins_bytes(bins, csi):
    out = struct.pack("<i", len(bins))
    for b in bins:
        num, loff, chunks = b
        out += struct.pack("<I", num & 0xFFFFFFFF)
        if csi:
            out += struct.pack("<Q", loff)
        out += struct.pack("<i", len(chunks))
        for u, v in chunks:
            out += struct.pack("<QQ", u, v)
    return out


def bai(refs, n_no_coor=None, n_ref=None):
    out = b"BAI\x01" + struct.pack("<I", len(refs) if n_ref is None else n_ref)
    for bins, linear in refs:
        out += bins_bytes(bins, False)
        out += struct.pack("<I", len(linear)) + b"".join(struct.pack("<Q", x) for x in linear)
    if n_no_coor is not None:
        out += struct.pack("<Q", n_no_coor)
    return out


def csi(min_shift, depth, refs, aux=b"", n_no_coor=None):
    out = b"CSI\x01" + struct.pack("<III", min_shift, depth, len(aux)) + aux
    out += struct.pack("<I", len(refs))
    for bins in refs:
        out += bins_bytes(bins, True)
    if n_no_coor is not None:
        out += struct.pack("<Q", n_no_coor)
    return out


PSEUDO = 37450
# A small reference: records in blocks 1..4, bins at three levels.
base_bins = [
    (4681, 0, [(V(1), V(2, 10))]),
    (4682, 0, [(V(2, 10), V(3))]),
    (585, 0, [(V(1, 5), V(1, 90))]),
    (0, 0, [(V(3), V(4, 7))]),
]
pseudo = (PSEUDO, 0, [(V(1), V(4, 7)), (11, 3)])
base_linear = [V(1), V(2, 10)]

FILES = {
    # A bin numbered >= 2^31: htslib's max_off search for a whole-reference query counts up
    # through negative bin numbers and finds it.
    "high_bin.bai": bai([(base_bins + [(0xFFFFFFF0, 0, [(V(2, 50), V(9))]), pseudo],
                          base_linear)], 0),
    "dup_bin.bai": bai([(base_bins + [(4681, 0, [(V(5), V(6))])], base_linear)]),
    "neg_nchunk.bai": bai([([(4681, 0, [])], [])]).replace(
        struct.pack("<Ii", 4681, 0), struct.pack("<Ii", 4681, -1)),
    "neg_nbin.bai": b"BAI\x01" + struct.pack("<Ii", 1, -1) + struct.pack("<I", 0),
    "nref_huge.bai": b"BAI\x01" + struct.pack("<I", 0x7FFFFFFF) + b"\0" * 16,
    "nref_over.bai": b"BAI\x01" + struct.pack("<I", 0x80000000) + b"\0" * 16,
    "nintv_huge.bai": b"BAI\x01" + struct.pack("<IiI", 1, 0, 0xFFFFFFFF) + b"\0" * 16,
    "nchunk_huge.bai": b"BAI\x01" + struct.pack("<IiIi", 1, 1, 4681, 0x7FFFFFFF) + b"\0" * 32,
    # No pseudo-bins: '*' depends on n_no_coor alone.
    "no_pseudo_nocoor.bai": bai([(base_bins, base_linear)], 5),
    "no_pseudo_zero.bai": bai([(base_bins, base_linear)], 0),
    "no_pseudo_no_tail.bai": bai([(base_bins, base_linear)]),
    "partial_tail.bai": bai([(base_bins + [pseudo], base_linear)]) + b"\1\2\3\4",
    # Linear index with zero gaps; unmapped count 0 and 2^32 (htslib keeps 32 bits of it).
    "linear_gaps_unmapped0.bai": bai([(
        [(4681, 0, [(V(5), V(6))]), (4683, 0, [(V(9), V(10))]), (4688, 0, [(V(12), V(13))]),
         (585, 0, [(V(7), V(8))]), (0, 0, [(V(2), V(3))]),
         (PSEUDO, 0, [(V(2), V(13)), (4, 0)])],
        [0, 0, V(5), 0, 0, V(9), 0, V(12)])], 0),
    "linear_gaps_unmapped2p32.bai": bai([(
        [(4681, 0, [(V(5), V(6))]), (4683, 0, [(V(9), V(10))]), (4688, 0, [(V(12), V(13))]),
         (585, 0, [(V(7), V(8))]), (0, 0, [(V(2), V(3))]),
         (PSEUDO, 0, [(V(2), V(13)), (4, 1 << 32)])],
        [0, 0, V(5), 0, 0, V(9), 0, V(12)])], 0),
    "linear_gaps_unmapped1.bai": bai([(
        [(4681, 0, [(V(5), V(6))]), (4683, 0, [(V(9), V(10))]), (4688, 0, [(V(12), V(13))]),
         (585, 0, [(V(7), V(8))]), (0, 0, [(V(2), V(3))]),
         (PSEUDO, 0, [(V(2), V(13)), (4, 1)])],
        [0, 0, V(5), 0, 0, V(9), 0, V(12)])], 0),
    # Overlapping, contained and same-block chunks across bins.
    "overlaps.bai": bai([(
        [(4681, 0, [(V(10), V(20, 5)), (V(30), V(31))]),
         (585, 0, [(V(12), V(15)), (V(20, 1), V(25))]),
         (73, 0, [(V(25, 9), V(26)), (V(40), V(41, 3))]),
         (9, 0, [(V(41, 3), V(42))]),
         (0, 0, [(V(10), V(11)), (V(50), V(51))]),
         (PSEUDO, 0, [(V(10), V(51)), (7, 1)])],
        [V(10)])], 0),
    # CSI stored without compression (htslib's bgzf_open reads either), with aux data and
    # loffsets; and a gzip-compressed BAI.
    "plain.csi": csi(10, 2, [[
        (9, V(3), [(V(3), V(4, 2))]), (10, V(4, 2), [(V(4, 2), V(6))]),
        (1, V(3), [(V(5), V(7))]), (0, 0, [(V(2), V(3))]),
        (74, 0, [(V(2), V(7)), (6, 0)]),
        (0xFFFFFFF8, 0, [(V(4, 9), V(8))])]], aux=b"hello", n_no_coor=3),
    "gz.bai": gzip.compress(bai([(base_bins + [pseudo], base_linear)], 0), mtime=0),
    "deep.csi": gzip.compress(csi(12, 9, [[
        (((1 << 27) - 1) // 7 + 5, V(3), [(V(3), V(4))]),
        (0, 0, [(V(1), V(2))]),
        ((((1 << 30) - 1) // 7) + 1, 0, [(V(1), V(4)), (2, 0)])]]), mtime=0),
    "bad_geometry.csi": csi(14, 10, [[]]),
}

# No oracle answers for these (tests/crafted.rs checks that we refuse them): htslib loads
# bad_geometry.csi only through undefined behaviour (bin counts overflow a C int), and rejects
# dup_bin.bai but its failure path can then abort with a double free.
DIVERGENT = {"bad_geometry.csi", "dup_bin.bai"}

REGIONS = [(0, 1), (0, MAX), (0, 16384), (16383, 16385), (16384, 32768), (40000, 50000),
           (100000, 200000), (1 << 20, MAX), (5, 5), (9, 3), ((1 << 29) - 1, 1 << 30),
           (1 << 29, MAX), (3000, 4000), (70000, 140000), (1 << 35, 1 << 36)]


def main():
    oracle = sys.argv[1]
    lines = []
    for name, data in FILES.items():
        path = f"crafted/{name}"
        with open(os.path.join(HERE, path), "wb") as f:
            f.write(data)
        if name in DIVERGENT:
            continue
        for tid in (0, 1):
            for b, e in REGIONS:
                lines.append(f"{path}\t{tid}\t{b}\t{e}")
        lines.append(f"{path}\t-2\t0\t0")
    os.chdir(HERE)
    out = subprocess.run([oracle], input="\n".join(lines) + "\n", capture_output=True,
                         text=True, check=True).stdout
    sys.stdout.write(out)


main()
