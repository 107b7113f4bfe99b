"""pysam's names and semantics: the header, fetch's arguments and their errors, count,
iteration, tags, closing, modes."""

import pysam
import pytest

import hts
from conftest import CORPUS, location

# Plain gzip, or a gzip member before the BGZF one: pysam's open seeks and cannot.
PYSAM_CANNOT_OPEN = ["bgzf_extra_before.bam", "gz_plain.bam"]
BAMS = sorted(
    p.name for p in (CORPUS / "data").glob("*.bam") if p.name not in PYSAM_CANNOT_OPEN
)
RAND = str(CORPUS / "data/rand.bam")


def both(path=RAND, **kw):
    return hts.AlignmentFile(path, **kw), pysam.AlignmentFile(path, **kw)


def strings(records):
    return [r.to_string() for r in records]


@pytest.mark.parametrize("name", BAMS)
def test_header_as_pysam_gives_it(name):
    path = str(CORPUS / "data" / name)
    p = pysam.AlignmentFile(path)
    with hts.AlignmentFile(path) as h:
        assert h.references == list(p.references)
        assert h.lengths == list(p.lengths)
        assert h.nreferences == p.nreferences
        assert h.header.references == list(p.header.references)
        assert h.header.lengths == list(p.header.lengths)
        # pysam 0.24's htslib puts an empty line before @SQ lines it makes for a text without
        # them; samtools 1.16 (and this package) does not.
        ours = str(h.header)
        assert [l for l in ours.split("\n") if l] == [l for l in str(p.header).split("\n") if l]
        assert h.header.to_dict() == p.header.to_dict()


@pytest.mark.parametrize("name", PYSAM_CANNOT_OPEN)
def test_pysam_really_cannot_open(name):
    with pytest.raises(NotImplementedError):
        pysam.AlignmentFile(str(CORPUS / "data" / name))
    assert hts.AlignmentFile(str(CORPUS / "data" / name)).count(until_eof=True) > 0


def test_header_text_is_samtools():
    expected = (CORPUS / "expected/rand_header_only.out").read_text()
    assert str(hts.AlignmentFile(RAND).header) == expected


FETCHES = [
    dict(contig="chr1"),
    dict(contig="chr1", start=10_000),
    dict(contig="chr1", stop=100_000),
    dict(contig="chr1", start=10_000, stop=10_500),
    dict(reference="chr2", end=5_400),
    dict(tid=1),
    dict(contig="*"),
    dict(region="chr1:10000-10500"),
    dict(region="*"),
    dict(),
    dict(until_eof=True),
    dict(region="chr1:1-100000", contig="chr2"),
]


@pytest.mark.parametrize("kw", FETCHES, ids=[repr(k) for k in FETCHES])
def test_fetch_arguments_as_pysam(kw):
    h, p = both()
    assert strings(h.fetch(**kw)) == strings(p.fetch(**kw))


@pytest.mark.parametrize(
    "kw",
    [
        dict(contig="nope"),
        dict(region="nope:1-10"),
        dict(contig="chr1", start=500, stop=400),
        dict(region="chr1:500-400"),
        dict(contig="chr1", start=-5, stop=400),
    ],
)
def test_bad_arguments_raise_value_error_as_pysam(kw):
    h, p = both()
    with pytest.raises(ValueError) as ours:
        h.fetch(**kw)
    with pytest.raises(ValueError) as theirs:
        p.fetch(**kw)
    if "contig" in kw or "start" in kw:
        assert str(ours.value) == str(theirs.value)


def test_regions_pysam_cannot_parse():
    h = hts.AlignmentFile(str(CORPUS / "data/colons.bam"))
    p = pysam.AlignmentFile(str(CORPUS / "data/colons.bam"))
    assert strings(h.fetch(region="{chr1:100}")) == strings(p.fetch("chr1:100"))
    assert strings(h.fetch(region="{chr1}:100-200")) == strings(p.fetch("chr1", 99, 200))
    r = hts.AlignmentFile(RAND)
    assert strings(r.fetch(region="chr1:10,000-10,500")) == strings(r.fetch("chr1", 9999, 10500))
    assert strings(r.fetch(region="chrM:20000")) == strings(r.fetch("chrM", 19999))


@pytest.mark.parametrize(
    "kw",
    [dict(), dict(until_eof=True), dict(contig="chr1"), dict(region="chr2:1-20000")],
    ids=repr,
)
@pytest.mark.parametrize("callback", ["nofilter", "all"])
def test_count_as_pysam(kw, callback):
    h, p = both()
    assert h.count(read_callback=callback, **kw) == p.count(read_callback=callback, **kw)


def test_count_with_a_callable():
    h, p = both()

    def forward(r):
        return not r.is_reverse

    assert h.count("chr1", read_callback=forward) == p.count("chr1", read_callback=forward)


def test_iteration_is_every_record_in_file_order():
    h, p = both()
    assert strings(h) == strings(p.fetch(until_eof=True))
    # Again from the start: each iterator has its own reader.
    assert len(list(h)) == 5060


def test_two_iterators_of_one_file_do_not_disturb_each_other():
    h = hts.AlignmentFile(RAND)
    a, b = h.fetch("chr1"), h.fetch("chr2")
    first = [next(a), next(b), next(a), next(b)]
    assert [r.reference_name for r in first] == ["chr1", "chr2", "chr1", "chr2"]
    assert len(list(a)) + 2 == h.count("chr1")


def test_fetch_many_is_samtools_order():
    regions = ["chr2:5000-5400", "chr1:7000-7300", ("chrM", 99, 300), "chrM:100-300", "*"]
    h, p = both()
    expected = []
    for r in regions:
        if isinstance(r, tuple):
            expected += strings(p.fetch(*r))
        elif r == "*":
            expected += strings(p.fetch("*"))
        else:
            expected += strings(p.fetch(region=r))
    assert strings(h.fetch_many(regions)) == expected
    with pytest.raises(ValueError):
        h.fetch_many(["chr1:1-10", "nope"])


def test_tags_as_pysam():
    h, p = both(str(CORPUS / "data/aux.bam"))
    a, b = next(iter(h)), next(p.fetch(until_eof=True))
    assert a.has_tag("NM") == b.has_tag("NM")
    for tag, _ in b.get_tags():
        if tag in ("I1", "eE", "eF"):
            continue  # pysam 0.24 gives I values above 2^31 negative
        va, vb = a.get_tag(tag), b.get_tag(tag)
        if hasattr(vb, "typecode"):
            assert va.typecode == vb.typecode
        assert repr(va) == repr(vb), tag
        assert a.get_tag(tag, with_value_type=True)[1] == b.get_tag(tag, with_value_type=True)[1]
    with pytest.raises(KeyError):
        a.get_tag("zz")


def test_closed_file_refuses_queries():
    h = hts.AlignmentFile(RAND)
    it = h.fetch("chr1")
    h.close()
    assert h.closed
    with pytest.raises(ValueError):
        h.fetch("chr1")
    # An iterator made before closing reads on with its own reader.
    assert len(list(it)) == 2939
    with hts.AlignmentFile(RAND) as f:
        assert f.is_open
    assert f.closed


def test_modes():
    # pysam's "rc" names CRAM; the package tells the format by content whatever the mode.
    with hts.AlignmentFile(RAND, "rc") as f:
        assert f.count(until_eof=True) > 0
    with pytest.raises(ValueError):
        hts.AlignmentFile(RAND, "wb")


def test_errors_are_hts_errors_naming_the_file(transport):
    missing = location(transport, "conformance/data/nonexistent.bam")
    with pytest.raises(hts.HtsError) as e:
        hts.AlignmentFile(missing)
    assert isinstance(e.value, OSError)
    assert "nonexistent.bam" in str(e.value)


def test_secrets_stay_out_of_messages():
    url = location("http", "conformance/data/nonexistent.bam") + "?X-Amz-Signature=sekrit"
    with pytest.raises(hts.HtsError) as e:
        hts.AlignmentFile(url)
    assert "sekrit" not in str(e.value)
    assert "nonexistent.bam" in str(e.value)


def test_unknown_transport_option_is_a_type_error():
    with pytest.raises(TypeError, match="unexpected keyword"):
        hts.AlignmentFile(RAND, fetchrs=4)
    f = hts.AlignmentFile(RAND, fetchers=4, headers={"X-Test": "1"}, cache=False)
    assert f.count("chr1") == 2939
