#!/usr/bin/env python3
"""Regenerates counts.tsv: `samtools view -c -X BAM INDEX REGION` for seeded random regions.

Run from this folder: python3 make_counts.py > counts.tsv (needs samtools 1.16 on PATH).
Columns: bam, index, region, tid, beg (0-based), end (0-based, exclusive; 'max' = samtools'
whole-reference end), count ('invalid' if samtools rejected the region for this index).
"""
import random
import subprocess

FIX = "../../../../fixtures/conformance"
SETS = {
    "data/rand.bam": ["data/rand.bam.bai", "data/rand.bam.csi", "data/rand.idx.bai",
                      "data/rand.m12.csi", "malformed/rand.nref_less.bai",
                      "malformed/rand.garbage_bins_extra.csi",
                      "malformed/rand.garbage_bins_renumbered.csi"],
    "data/bins.bam": ["data/bins.bam.bai", "data/bins.idx.csi", "data/bins.m12.csi"],
    "data/longref.bam": ["data/longref.bam.csi", "data/longref.m12.csi"],
    "data/ce1000.bam": ["data/ce1000.bam.bai", "data/ce1000.idx.csi", "data/ce1000.m12.csi"],
    "data/unmap2.bam": ["data/unmap2.bam.csi", "data/unmap2.idx.bai", "data/unmap2.m12.csi"],
    "data/longref_low.bam": ["data/longref_low.bam.bai"],
}


def refs(bam):
    out = subprocess.run(["samtools", "view", "-H", f"{FIX}/{bam}"], capture_output=True,
                         text=True, check=True).stdout
    r = []
    for line in out.splitlines():
        if line.startswith("@SQ"):
            f = dict(x.split(":", 1) for x in line.split("\t")[1:])
            r.append((f["SN"], int(f["LN"])))
    return r


def regions(bam, rng):
    rs = refs(bam)
    out = []
    for tid, (name, ln) in enumerate(rs):
        out.append((name, tid, 0, "max"))
        out.append((f"{name}:{ln}", tid, ln - 1, "max"))
        out.append((f"{name}:{ln + 1}-{ln + 100000}", tid, ln, ln + 100000))
        for k in (14, 17, 20, 23, 26, 29, 30):
            p = 1 << k
            if p < ln:
                out.append((f"{name}:{p}-{p + 1}", tid, p - 1, p + 1))
                q = max(p - 20000, 1)
                out.append((f"{name}:{q}-{p}", tid, q - 1, p))
        for _ in range(25):
            b = rng.randrange(0, ln)
            w = rng.choice([1, 50, 300, 2000, 20000, 200000, 5000000])
            e = b + w
            out.append((f"{name}:{b + 1}-{e}", tid, b, e))
    return out


def main():
    rng = random.Random(7)
    for bam, idxs in SETS.items():
        regs = regions(bam, rng)
        for idx in idxs:
            for region, tid, b, e in regs + [("*", -1, 0, 0)]:
                p = subprocess.run(["samtools", "view", "-c", "-X", f"{FIX}/{bam}",
                                    f"{FIX}/{idx}", region], capture_output=True, text=True)
                if p.returncode != 0:
                    raise SystemExit(f"samtools failed: {bam} {idx} {region}: {p.stderr}")
                count = p.stdout.strip()
                if "invalid region" in p.stderr:
                    count = "invalid"
                print(f"{bam}\t{idx}\t{region}\t{tid}\t{b}\t{e}\t{count}")


main()
