"""The conformance corpus (`fixtures/conformance/cases.tsv`, goldens from samtools 1.16.1)
through the package: every case that ends with status 0, read locally, over the test HTTP
server and over S3 (s3s-fs), gives samtools' output, and gives pysam 0.24.1's records field
by field (pysam reading the local file)."""

from dataclasses import dataclass, field

import pysam
import pytest

import hts
from conftest import CORPUS, location
from oracle import fields, samtools_region


@dataclass
class Case:
    id: str
    file: str
    index: str = None
    regions: list = field(default_factory=list)
    header: str = None  # "-h" or "-H"
    count: bool = False
    require: int = 0  # -f
    exclude: int = 0  # -F
    min_mapq: int = 0  # -q
    expected: bytes = b""

    def keep(self, r):
        return (
            (r.flag & self.require) == self.require
            and not (r.flag & self.exclude)
            and r.mapping_quality >= self.min_mapq
        )

    @property
    def filtered(self):
        return bool(self.require or self.exclude or self.min_mapq)


def parse(line):
    cid, args, expected, status = line.split("\t")
    words = args.split(" ")
    case = Case(cid, file="")
    explicit_index = False
    i = 0
    while words[i].startswith("-"):
        w = words[i]
        if w in ("-h", "-H"):
            case.header = w
        elif w == "-c":
            case.count = True
        elif w == "-X":
            explicit_index = True
        elif w in ("-f", "-F", "-q"):
            i += 1
            value = int(words[i])
            if w == "-f":
                case.require = value
            elif w == "-F":
                case.exclude = value
            else:
                case.min_mapq = value
        elif w != "--no-PG":
            raise ValueError(f"{cid}: option {w} is not in the corpus' subset")
        i += 1
    case.file = words[i]
    rest = words[i + 1 :]
    if explicit_index:
        case.index, rest = rest[0], rest[1:]
    case.regions = rest
    case.expected = (CORPUS / expected).read_bytes()
    return case, status


def all_cases():
    out = []
    for line in (CORPUS / "cases.tsv").read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        case, status = parse(line)
        if status == "0":
            out.append(case)
    return out


CASES = all_cases()

# The cases pysam 0.24.1 cannot read as samtools 1.16.1 does, and why. The test below checks
# that pysam really fails on each: the list stays true.
PYSAM_CANNOT = {
    "gzip_not_bgzf": "plain gzip: pysam's open seeks and raises NotImplementedError",
    "bgzf_extra_subfield_before_bc": "a gzip member without BC first: pysam cannot seek",
    "mf_trunc_block_boundary": "no EOF marker: pysam 0.24 refuses to open it (OSError)",
    "mf_no_eof": "no EOF marker: pysam 0.24 refuses to open it (OSError)",
    "mf_no_eof_region": "no EOF marker: pysam 0.24 refuses to open it (OSError)",
}


def open_hts(case, transport):
    index = location(transport, f"conformance/{case.index}") if case.index else None
    return hts.AlignmentFile(
        location(transport, f"conformance/{case.file}"), index_filename=index
    )


def hts_records(f, case):
    """The case's records through the package: the whole file, or each region in turn (a
    region samtools warns about and skips raises ValueError here, as in pysam)."""
    if not case.regions:
        return [r for r in f.fetch(until_eof=True) if case.keep(r)]
    usable = []
    for region in case.regions:
        try:
            f.fetch(region=region)
        except ValueError:
            continue
        usable.append(region)
    one_by_one = [r for region in usable for r in f.fetch(region=region)]
    together = list(f.fetch_many(usable))
    assert [r.to_string() for r in together] == [r.to_string() for r in one_by_one]
    return [r for r in together if case.keep(r)]


def samtools_text(f, case):
    """The case's output as `samtools view` prints it, made from the package's results."""
    if case.header == "-H":
        return str(f.header).encode()
    if case.count:
        if case.filtered or not case.regions:
            n = len(hts_records(f, case))
            if not case.filtered:
                assert n == f.count(until_eof=True)
        else:
            n = 0
            for region in case.regions:
                try:
                    n += f.count(region=region)
                except ValueError:
                    continue
        return f"{n}\n".encode()
    text = str(f.header) if case.header == "-h" else ""
    text += "".join(r.to_string() + "\n" for r in hts_records(f, case))
    return text.encode()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_samtools_output(case, transport):
    with open_hts(case, transport) as f:
        assert samtools_text(f, case) == case.expected


def pysam_records(case):
    p = pysam.AlignmentFile(
        str(CORPUS / case.file),
        index_filename=str(CORPUS / case.index) if case.index else None,
    )
    if not case.regions:
        return [r for r in p.fetch(until_eof=True) if case.keep(r)]
    out = []
    for region in case.regions:
        parsed = samtools_region(region, p.references)
        if parsed is None:
            continue
        contig, start, stop = parsed
        out.extend(p.fetch(contig, start, stop))
    return [r for r in out if case.keep(r)]


EXPRESSIBLE = [c for c in CASES if c.id not in PYSAM_CANNOT and c.header != "-H"]


@pytest.mark.parametrize("case", EXPRESSIBLE, ids=[c.id for c in EXPRESSIBLE])
def test_pysam_fields(case, transport):
    expected = [fields(r) for r in pysam_records(case)]
    with open_hts(case, transport) as f:
        got = [fields(r) for r in hts_records(f, case)]
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g == e


@pytest.mark.parametrize("cid", sorted(PYSAM_CANNOT))
def test_pysam_really_cannot(cid):
    case = next(c for c in CASES if c.id == cid)
    try:
        records = pysam_records(case)
    except Exception:  # what pysam raises differs: OSError, NotImplementedError
        return
    text = "".join(r.to_string() + "\n" for r in records).encode()
    assert text != case.expected, f"pysam reads {cid} as samtools does: take it off the list"
