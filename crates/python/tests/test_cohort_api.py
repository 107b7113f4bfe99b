"""`hts.Cohort`: the same regions from a mixed BAM/CRAM cohort, read locally, over the test
HTTP server and over S3, against pysam 0.24.1 run on each sample in turn: counts equal; the
Arrow table equals the samples' `AlignmentFile.to_arrow` tables with a `sample` column first,
each sample's rows together; a missing sample among good ones is reported (`failed`, a
warning, `CohortError` or the stream's `OSError` with `strict`) while the others complete; the
manifest as a file or as a list of tuples. Every run is bounded in time."""

import concurrent.futures
import threading
import time
import warnings
from pathlib import Path

import pyarrow as pa
import pysam
import pytest

import hts
from conftest import FIXTURES, HTTP, S3_BUCKET, SLOW_HTTP, location

REFERENCE = str(FIXTURES / "cram/ref.fa")
# Regions of both kinds of file: each file's header knows some, and skips the others with
# samtools' warning.
REGIONS = [
    "chr1:10000-10500",
    "ref1:300-400",
    "CHROMOSOME_I:50-120",
    "chr2:5000-5400",
    "ref3:700-800",
]
# (sample, fixture) pairs: BAM and CRAM mixed.
FILES = [
    ("rand", "conformance/data/rand.bam"),
    ("slices", "cram/aligned-3.0-slices.cram"),
    ("ce", "conformance/data/ce1000.bam"),
    ("multi", "cram/aligned-3.0-multi.cram"),
]
TIMEOUT = 120


@pytest.fixture(autouse=True)
def no_reference_lookups(monkeypatch):
    monkeypatch.setenv("REF_PATH", "/nonexistent")
    monkeypatch.setenv("REF_CACHE", "/nonexistent/%s")


def where(transport, relative):
    if transport == "s3" and relative.startswith("cram/"):
        return f"s3://{S3_BUCKET}/{relative}"
    return location(transport, relative)


def bounded(work, *args, **kwargs):
    """`work(...)`, failing the test if it takes longer than TIMEOUT seconds."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(work, *args, **kwargs).result(timeout=TIMEOUT)


def rows(transport):
    return [(name, where(transport, rel)) for name, rel in FILES]


def known(p, regions):
    """The regions whose contig the file's header knows (the others samtools skips)."""
    return [r for r in regions if r.split(":")[0] in p.references]


def pysam_count(path, regions):
    with pysam.AlignmentFile(path, reference_filename=REFERENCE) as p:
        return sum(sum(1 for _ in p.fetch(region=r)) for r in known(p, regions))


@pytest.mark.parametrize("transport", ["local", "http", "s3"])
def test_counts_equal_pysams(transport):
    cohort = hts.Cohort(rows(transport), REGIONS, jobs=3, reference_filename=REFERENCE)
    counts = bounded(cohort.count)
    expected = {
        name: pysam_count(str(FIXTURES / rel), REGIONS) for name, rel in FILES
    }
    assert counts == expected
    assert list(counts) == [name for name, _ in FILES]
    assert all(n > 0 for n in counts.values())
    assert cohort.failed == {}
    # Each file's header lacks the other kind's contigs: skipped, with samtools' warning.
    assert any(w.startswith("[rand] ") and "ref1" in w for w in cohort.warnings)


def per_sample_table(name, path, regions, columns=None):
    with hts.AlignmentFile(path, reference_filename=REFERENCE) as f:
        own = known(f, regions)
        table = pa.table(f.to_arrow(regions=own, columns=columns))
    sample = pa.array([name] * table.num_rows, pa.string())
    return table.add_column(0, "sample", sample)


@pytest.mark.parametrize("transport", ["local", "http", "s3"])
@pytest.mark.parametrize("jobs,batch_size", [(1, 65536), (4, 7)])
def test_arrow_equals_each_samples_table(transport, jobs, batch_size):
    cohort = hts.Cohort(rows(transport), REGIONS, jobs=jobs, reference_filename=REFERENCE)
    stream = cohort.to_arrow(batch_size=batch_size)
    assert stream.column_names[0] == "sample"
    table = bounded(pa.table, stream)
    assert table.schema.field("sample").type == pa.dictionary(pa.int32(), pa.string())
    got = table.to_pylist()
    # Samples come in completion order, each one's rows together and in samtools' order.
    names = [r["sample"] for r in got]
    order = [n for i, n in enumerate(names) if i == 0 or names[i - 1] != n]
    assert sorted(order) == sorted(name for name, _ in FILES)
    expected = {
        name: per_sample_table(name, str(FIXTURES / rel), REGIONS).to_pylist()
        for name, rel in FILES
    }
    assert got == [row for name in order for row in expected[name]]
    assert len(got) == sum(bounded(cohort.count).values())
    # Column names as AlignmentFile.to_arrow's; read_all as pyarrow's reader gives it.
    ours = bounded(lambda: cohort.to_arrow(columns=["qname", "pos"]).read_all())
    assert isinstance(ours, pa.Table)
    assert ours.column_names == ["sample", "qname", "pos"]
    assert ours.num_rows == len(got)


def test_a_manifest_file_and_its_index_column(tmp_path):
    manifest = tmp_path / "cohort.tsv"
    lines = ["sample\tfile\tindex"]
    for name, rel in FILES:
        lines.append(f"{name}\t{FIXTURES / rel}\t")
    # One index named: the file's own, over HTTP.
    lines[1] = f"rand\t{HTTP}/conformance/data/rand.bam\t{HTTP}/conformance/data/rand.bam.bai"
    manifest.write_text("\n".join(lines) + "\n")
    for given in (manifest, str(manifest)):
        cohort = hts.Cohort(given, REGIONS, reference_filename=REFERENCE)
        assert cohort.samples == [name for name, _ in FILES]
        counts = bounded(cohort.count)
        assert counts == {
            name: pysam_count(str(FIXTURES / rel), REGIONS) for name, rel in FILES
        }
    # A bad manifest is an error naming it.
    bad = tmp_path / "bad.tsv"
    bad.write_text("name\tpath\nx\ty\n")
    with pytest.raises(ValueError, match="bad.tsv"):
        hts.Cohort(str(bad))


def with_missing(transport):
    missing = {
        "local": str(FIXTURES / "conformance/data/missing.bam"),
        "http": f"{HTTP}/conformance/data/missing.bam?X-Amz-Signature=secret123",
        "s3": f"s3://{S3_BUCKET}/data/missing.bam",
    }[transport]
    good = rows(transport)
    return good[:2] + [("gone", missing)] + good[2:], missing


@pytest.mark.parametrize("transport", ["local", "http", "s3"])
def test_a_missing_sample_among_good_ones(transport):
    samples, _ = with_missing(transport)
    expected = {name: pysam_count(str(FIXTURES / rel), REGIONS) for name, rel in FILES}

    # strict (the default): the others are counted, then CohortError names the failed one.
    cohort = hts.Cohort(samples, REGIONS, jobs=2, reference_filename=REFERENCE)
    with pytest.raises(hts.CohortError, match="1 of 5 samples failed: gone: .*missing.bam") as e:
        bounded(cohort.count)
    assert isinstance(e.value, OSError) and isinstance(e.value, hts.HtsError)
    assert "secret123" not in str(e.value)
    assert list(cohort.failed) == ["gone"]
    assert "missing.bam" in cohort.failed["gone"]

    # strict=False: the counts of the others, a warning, `failed`.
    lenient = hts.Cohort(samples, REGIONS, jobs=2, reference_filename=REFERENCE, strict=False)
    with pytest.warns(RuntimeWarning, match="sample gone: .*missing.bam"):
        counts = bounded(lenient.count)
    assert counts == expected
    assert list(lenient.failed) == ["gone"]
    assert "secret123" not in lenient.failed["gone"]

    # The Arrow stream: every good sample's rows, then (strict) an OSError naming the failed
    # sample once they are read; lenient, the table and a warning.
    reader = pa.RecordBatchReader.from_stream(cohort.to_arrow())
    batches = []
    with pytest.raises(OSError, match="gone: .*missing.bam"):
        for batch in bounded(lambda: list(reader)):
            batches.append(batch)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = bounded(pa.table, lenient.to_arrow(columns=["qname"]))
    assert any("sample gone" in str(w.message) for w in caught)
    names = table.column("sample").to_pylist()
    assert {n: names.count(n) for n in set(names)} == expected
    assert list(lenient.failed) == ["gone"]


def test_arguments():
    with pytest.raises(ValueError, match="listed twice"):
        hts.Cohort([("a", "x.bam"), ("a", "y.bam")])
    with pytest.raises(ValueError, match="tuple"):
        hts.Cohort([("a",)])
    with pytest.raises(TypeError, match="tuple"):
        hts.Cohort([42])
    with pytest.raises(ValueError, match="unknown column"):
        hts.Cohort(rows("local")).to_arrow(columns=["nope"])
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        hts.Cohort(rows("local"), bogus=1)
    cohort = hts.Cohort(rows("local")[:1], "chr1:10000-10500")
    assert len(cohort) == 1 and repr(cohort) == "<hts.Cohort (1 samples)>"
    expected = pysam_count(str(FIXTURES / FILES[0][1]), ["chr1:10000-10500"])
    assert bounded(cohort.count) == {"rand": expected}


def slow_cohort(n, **kwargs):
    """n samples of rand.bam behind the slow link (every response 150 ms late)."""
    bam = f"{SLOW_HTTP}/conformance/data/rand.bam"
    samples = [(f"s{i}", bam) for i in range(n)]
    return hts.Cohort(samples, ["chr1:10000-10500"], cache=False, **kwargs)


def test_the_gil_is_released_while_the_cohort_runs():
    cohort = slow_cohort(4, jobs=4)
    done = []
    worker = threading.Thread(target=lambda: done.append(cohort.count()))
    worker.start()
    ticks = 0
    deadline = time.monotonic() + TIMEOUT
    while worker.is_alive() and time.monotonic() < deadline:
        ticks += 1
    worker.join(timeout=1)
    assert done and len(done[0]) == 4
    # Python ran here the whole time the cohort waited on the link.
    assert ticks > 10_000, ticks


def cohort_threads():
    """How many threads of this process run a cohort's stream: the one named `hts-cohort` and
    its workers (unnamed threads take their parent's name)."""
    names = []
    for task in Path("/proc/self/task").iterdir():
        try:
            names.append((task / "comm").read_text().strip())
        except OSError:  # the thread ended meanwhile
            pass
    return names.count("hts-cohort")


def test_a_consumer_that_stops_reading_stops_the_run():
    before = cohort_threads()
    cohort = slow_cohort(40, jobs=2)
    started = time.monotonic()
    reader = pa.RecordBatchReader.from_stream(cohort.to_arrow(batch_size=5))
    first = bounded(reader.read_next_batch)
    assert first.num_rows == 5 and first.column(0)[0].as_py() == first.column(0)[-1].as_py()
    assert cohort_threads() == before + 3  # the stream's thread and its 2 workers
    del reader
    # All 40 files would take some 40 / 2 * 0.6 s on this link: the files under way end at
    # their next batch and no further file is opened.
    while cohort_threads() > before and time.monotonic() - started < TIMEOUT:
        time.sleep(0.05)
    assert cohort_threads() == before
    assert time.monotonic() - started < 5
