"""Hostile files raise a Python exception naming the file, never crash the interpreter: each
is read in a child interpreter (a crash there cannot take the tests down, and shows as a
signal), every way the package reads: iteration, a region, count, Arrow. The malformed files
of the conformance corpus, and seeded mutations of a good file (flipped bytes, truncations,
hostile lengths in the header and records)."""

import json
import random
import subprocess
import sys

import pytest

from conftest import CORPUS, location

CHILD = r"""
import json, sys
import pyarrow as pa
import hts
path, index, region = sys.argv[1], sys.argv[2] or None, sys.argv[3] or None
out = {"records": 0}
try:
    f = hts.AlignmentFile(path, index_filename=index)
    out["records"] += sum(1 for _ in f)
    out["records"] += pa.table(f.to_arrow()).num_rows
    for r in f.fetch(until_eof=True):
        r.to_string(); r.get_tags(); r.query_sequence; r.query_qualities; r.cigartuples
    if region or f.references:
        out["records"] += f.count(region=region or f.references[0])
        out["records"] += sum(1 for _ in f.fetch(region=region or f.references[0]))
    out["outcome"] = "ok"
except hts.HtsError as e:
    out["outcome"], out["message"] = "HtsError", str(e)
except ValueError as e:
    out["outcome"], out["message"] = "ValueError", str(e)
except Exception as e:
    out["outcome"], out["message"] = type(e).__name__, str(e)
print(json.dumps(out))
"""


def read_in_child(path, index=None, region=None):
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), str(index or ""), region or ""],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, f"the interpreter died ({done.returncode}): {done.stderr[-2000:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def malformed_cases():
    """The conformance cases samtools fails on (status nonzero) that the Python API can
    express, with the file the error must name."""
    out = []
    for line in (CORPUS / "cases.tsv").read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        cid, args, _, status = line.split("\t")
        if status == "0" or cid in ("X_without_region",):
            continue
        words = [w for w in args.split(" ") if w not in ("-c", "-H", "--no-PG")]
        index = None
        if words[0] == "-X":
            words = words[1:]
            index = words.pop(1)
        out.append((cid, words[0], index, words[1] if len(words) > 1 else None))
    return out


MALFORMED = malformed_cases()


@pytest.mark.parametrize("cid,path,index,region", MALFORMED, ids=[c[0] for c in MALFORMED])
def test_malformed_files_raise_naming_the_file(cid, path, index, region, transport):
    if transport == "s3" and "nonexistent" in (path + str(index)):
        pass  # a missing object is a 404 over S3 too
    loc = location(transport, f"conformance/{path}")
    idx = location(transport, f"conformance/{index}") if index else None
    out = read_in_child(loc, idx, region)
    assert out["outcome"] == "HtsError", out
    named = (index or path).rsplit("/", 1)[-1]
    assert named in out["message"] or path.rsplit("/", 1)[-1] in out["message"], out


def mutations(data, seed, n):
    rng = random.Random(seed)
    for i in range(n):
        b = bytearray(data)
        kind = i % 4
        if kind == 0:  # flipped bytes in the compressed stream
            for _ in range(rng.randint(1, 8)):
                b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        elif kind == 1:  # cut short
            b = b[: rng.randrange(1, len(b))]
        elif kind == 2:  # a block's length field (BSIZE) made large
            at = data.find(b"BC\x02\x00", rng.randrange(len(data) // 2))
            if at > 0:
                b[at + 4 : at + 6] = b"\xff\xff"
        else:  # random bytes over a stretch
            at = rng.randrange(len(b))
            b[at : at + 64] = bytes(rng.randrange(256) for _ in range(64))
        yield i, bytes(b)


def test_mutated_files_never_crash(tmp_path):
    good = (CORPUS / "data/ce1000.bam").read_bytes()
    outcomes = {}
    for i, data in mutations(good, seed=20240501, n=24):
        path = tmp_path / f"mutant{i}.bam"
        path.write_bytes(data)
        out = read_in_child(path)
        outcomes[out["outcome"]] = outcomes.get(out["outcome"], 0) + 1
        assert out["outcome"] in ("ok", "HtsError", "ValueError"), out
        if out["outcome"] == "HtsError":
            assert f"mutant{i}.bam" in out["message"], out
    assert outcomes.get("HtsError", 0) >= 12, outcomes


def test_mutated_crams_never_crash(tmp_path):
    """CRAM through the facade: a CRAM with its reference embedded (no reference needed),
    damaged by the same seeded mutations, raises naming the file or reads; never crashes."""
    good = (CORPUS.parent / "cram/aligned-3.0-embed.cram").read_bytes()
    outcomes = {}
    for i, data in mutations(good, seed=20261207, n=24):
        path = tmp_path / f"mutant{i}.cram"
        path.write_bytes(data)
        out = read_in_child(path)
        outcomes[out["outcome"]] = outcomes.get(out["outcome"], 0) + 1
        assert out["outcome"] in ("ok", "HtsError", "ValueError"), out
        if out["outcome"] == "HtsError":
            assert f"mutant{i}.cram" in out["message"], out
    assert outcomes.get("HtsError", 0) >= 12, outcomes
