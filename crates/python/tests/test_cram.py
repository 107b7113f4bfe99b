"""CRAM through the package (the `hts` facade underneath): every case of the CRAM corpus
(`fixtures/cram/cases.tsv`) that pysam can express gives pysam 0.24.1's records field by field
and as `to_string()`, whole file, regions, `*` and `fetch_many`, read locally, over the test
HTTP server and over S3, with the reference local and remote; `to_arrow` equals the records;
a CRAM whose reference cannot be found raises an exception naming the file.

References are never looked up on the network: `REF_PATH` and `REF_CACHE` point nowhere, for
pysam and the package alike (a case without `-T` needs none: its reads are unaligned, or
its reference is embedded)."""

from dataclasses import dataclass, field

import pyarrow as pa
import pysam
import pytest

import hts
from conftest import FIXTURES, HTTP, S3_BUCKET
from oracle import fields, samtools_region
from test_arrow import expected_row

CRAM = FIXTURES / "cram"


@dataclass(frozen=True)
class Case:
    id: str = field(compare=False)
    file: str = None
    reference: str = None  # a file beside the CRAMs
    threads: int = 0
    regions: tuple = ()
    count: bool = False
    require: int = 0
    exclude: int = 0
    min_mapq: int = 0

    def keep(self, r):
        return (
            (r.flag & self.require) == self.require
            and not (r.flag & self.exclude)
            and r.mapping_quality >= self.min_mapq
        )


def parse(line):
    """A corpus line as a case, or None when it uses options pysam has no counterpart for
    (filter expressions, -M, -L, -P, tag edits, output formats, decoding options)."""
    cid, _golden, args = line.split("\t")
    words = args.split(" ")
    kw = {}
    i = 0
    while words[i].startswith("-"):
        w = words[i]
        if w in ("-T", "--reference", "-@", "-f", "-F", "-q"):
            i += 1
            value = words[i]
            if w in ("-T", "--reference"):
                kw["reference"] = "ref.fa" if value == "REF" else value
            elif w == "-@":
                kw["threads"] = int(value)
            else:
                key = {"-f": "require", "-F": "exclude", "-q": "min_mapq"}[w]
                kw[key] = int(value, 0)
        elif w == "-c":
            kw["count"] = True
        elif w != "--no-PG":
            return None
        i += 1
    return Case(cid, words[i], regions=tuple(words[i + 1 :]), **kw)


def all_cases():
    out, seen = [], set()
    for line in (CRAM / "cases.tsv").read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        case = parse(line)
        # Cases that differ only in what pysam cannot express are read once.
        if case is not None and case not in seen:
            seen.add(case)
            out.append(case)
    return out


CASES = all_cases()
# (data, reference) transports: both local, the CRAM over HTTP with a local FASTA, both over
# HTTP (the FASTA's .fai, and .gzi when bgzipped, beside it), and both over S3 (s3s-fs).
TRANSPORTS = [("local", "local"), ("http", "local"), ("http", "http"), ("s3", "s3")]


def where(transport, name):
    if transport == "http":
        return f"{HTTP}/cram/{name}"
    if transport == "s3":
        return f"s3://{S3_BUCKET}/cram/{name}"
    return str(CRAM / name)


@pytest.fixture(autouse=True)
def no_reference_lookups(monkeypatch):
    monkeypatch.setenv("REF_PATH", "/nonexistent")
    monkeypatch.setenv("REF_CACHE", "/nonexistent/%s")


def open_hts(case, data="local", ref="local"):
    reference = where(ref, case.reference) if case.reference else None
    return hts.AlignmentFile(
        where(data, case.file), reference_filename=reference, threads=case.threads
    )


def open_pysam(case):
    reference = str(CRAM / case.reference) if case.reference else None
    # check_sq=False: the unaligned fixtures have no @SQ lines, which pysam refuses by default.
    return pysam.AlignmentFile(
        str(CRAM / case.file), "rc", reference_filename=reference, check_sq=False
    )


def pysam_records(case):
    p = open_pysam(case)
    if not case.regions or case.regions == (".",):
        # samtools' `.` is every record, as the whole file.
        return [r for r in p.fetch(until_eof=True) if case.keep(r)]
    out = []
    for region in case.regions:
        parsed = samtools_region(region, p.references)
        if parsed is not None:
            out.extend(p.fetch(*parsed))
    return [r for r in out if case.keep(r)]


def hts_records(f, case):
    """The case's records: the whole file, or each region in turn, one `fetch` a region and
    all through `fetch_many` (the same records in the same order)."""
    if not case.regions:
        return [r for r in f.fetch(until_eof=True) if case.keep(r)]
    usable = []
    for region in case.regions:
        try:
            f.fetch(region=region)
        except ValueError:  # an unknown reference: samtools warns and skips it
            continue
        usable.append(region)
    one_by_one = [r for region in usable for r in f.fetch(region=region)]
    together = list(f.fetch_many(usable))
    assert [r.to_string() for r in together] == [r.to_string() for r in one_by_one]
    return [r for r in together if case.keep(r)]


def transport_params():
    out = []
    for case in CASES:
        for data, ref in TRANSPORTS:
            # Without a reference a remote one is no different case.
            if case.reference or ref == "local" or data == "s3":
                out.append(pytest.param(case, data, ref, id=f"{case.id}-{data}-ref_{ref}"))
    return out


@pytest.mark.parametrize("case,data,ref", transport_params())
def test_pysam_fields(case, data, ref):
    expected = [fields(r) for r in pysam_records(case)]
    with open_hts(case, data, ref) as f:
        got = [fields(r) for r in hts_records(f, case)]
    assert len(got) == len(expected) > 0
    for g, e in zip(got, expected):
        assert g == e


@pytest.mark.parametrize("case", [c for c in CASES if c.count], ids=lambda c: c.id)
def test_count(case):
    p = open_pysam(case)
    with open_hts(case) as f:
        if case.regions:
            for region in case.regions:
                parsed = samtools_region(region, p.references)
                assert f.count(region=region) == p.count(*parsed)
        else:
            assert f.count(until_eof=True) == p.count(until_eof=True)


def test_unplaced_reads_and_iteration():
    case = Case("multi", "aligned-3.0-multi.cram", reference="ref.fa")
    p = open_pysam(case)
    with open_hts(case) as f:
        star = [r.to_string() for r in f.fetch("*")]
        assert star == [r.to_string() for r in p.fetch("*")]
        assert star and all(r.reference_id == -1 for r in f.fetch("*"))
        # Iteration is the whole file; a query after it starts afresh (pysam reads on from
        # where its last query stopped: a fresh pysam file for each).
        whole = [r.to_string() for r in open_pysam(case).fetch(until_eof=True)]
        assert [r.to_string() for r in f] == whole
        assert [r.to_string() for r in f.fetch("ref1", 300, 400)] == [
            r.to_string() for r in open_pysam(case).fetch("ref1", 300, 400)
        ]
        assert f.header.to_dict()["SQ"] == p.header.to_dict()["SQ"]
        assert list(f.references) == list(p.references)
        assert list(f.lengths) == list(p.lengths)


@pytest.mark.parametrize("data,ref", TRANSPORTS)
@pytest.mark.parametrize("regions", [None, "ref1:300-400", ["ref3:700-800", "*"]])
def test_arrow_tables_equal_the_records(regions, data, ref):
    case = Case("arrow", "aligned-3.0-slices.cram", reference="ref.fa")
    f = open_hts(case, data, ref)
    table = pa.table(f.to_arrow(regions=regions, batch_size=100))
    if regions is None:
        records = list(f.fetch(until_eof=True))
    else:
        records = list(f.fetch_many([regions] if isinstance(regions, str) else regions))
    assert table.num_rows == len(records) > 0
    assert table.to_pylist() == [expected_row(r) for r in records]
    tagged = pa.table(f.to_arrow(regions=regions, tags=[("NM", "i"), "MD"]))
    assert tagged.column("NM").to_pylist() == [
        r.get_tag("NM") if r.has_tag("NM") else None for r in records
    ]


@pytest.mark.parametrize("data", ["local", "http", "s3"])
def test_a_cram_without_its_reference_raises_naming_the_file(data):
    name = "aligned-3.0.cram"
    with pytest.raises(hts.HtsError, match=name):
        with hts.AlignmentFile(where(data, name)) as f:
            list(f.fetch(until_eof=True))
    with pytest.raises(hts.HtsError, match=name):
        with hts.AlignmentFile(where(data, name)) as f:
            list(f.fetch("ref1", 300, 400))
    # A reference that does not exist is named too.
    with pytest.raises(hts.HtsError, match="missing.fa"):
        hts.AlignmentFile(where(data, name), reference_filename=where(data, "missing.fa"))


def test_cram_is_told_by_content(tmp_path):
    """A CRAM named .bam, opened in pysam's BAM mode, is still read as CRAM."""
    disguised = tmp_path / "x.bam"
    disguised.write_bytes((CRAM / "aligned-3.0-embed.cram").read_bytes())
    case = Case("embed", "aligned-3.0-embed.cram")
    expected = [r.to_string() for r in pysam_records(case)]
    with hts.AlignmentFile(str(disguised), "rb") as f:
        assert [r.to_string() for r in f.fetch(until_eof=True)] == expected
