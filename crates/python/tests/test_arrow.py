"""`to_arrow()`: the Arrow tables equal the records they came from; oxbow's column names,
types and values; tags as columns; pyarrow, polars, pandas and DuckDB take the stream."""

import duckdb
import oxbow
import polars
import pyarrow as pa
import pytest

import hts
from conftest import CORPUS, location

RAND = str(CORPUS / "data/rand.bam")
OXBOW_FILES = ["rand.bam", "unmap2.bam", "noseq.bam", "edge.bam", "ce1000.bam", "long.bam"]


def expected_row(r, base=1):
    """A record's row as oxbow's columns hold it, from the record's pysam-named fields."""
    start = r.reference_start
    end = None
    if start >= 0:
        span = sum(n for op, n in (r.cigartuples or []) if op in (0, 2, 3, 7, 8))
        end = start + max(span, 1)
    quals = r.query_qualities
    return {
        "qname": None if r.query_name == "*" else r.query_name,
        "flag": r.flag,
        "rname": r.reference_name,
        "pos": start + base if start >= 0 else None,
        "mapq": None if r.mapping_quality == 255 else r.mapping_quality,
        "cigar": r.cigarstring,
        "rnext": r.next_reference_name,
        "pnext": r.next_reference_start + base if r.next_reference_start >= 0 else None,
        "tlen": r.template_length,
        "seq": r.query_sequence or "",
        "qual": None if quals is None else "".join(chr(q + 33) for q in quals),
        "end": end,
    }


@pytest.mark.parametrize("regions", [None, "chr1:10000-10500", ["chr2:5000-5400", "*"]])
def test_tables_equal_the_records(regions, transport):
    f = hts.AlignmentFile(location(transport, "conformance/data/rand.bam"))
    table = pa.table(f.to_arrow(regions=regions, batch_size=1000))
    if regions is None:
        records = list(f.fetch(until_eof=True))
    else:
        records = list(f.fetch_many([regions] if isinstance(regions, str) else regions))
    assert table.num_rows == len(records) > 0
    assert table.to_pylist() == [expected_row(r) for r in records]


@pytest.mark.parametrize("threads, batch_size", [(1, 7), (3, 5), (3, 4096)])
def test_batches_laid_out_on_workers_keep_the_order(threads, batch_size):
    """Several workers lay batches out at once: the rows still come in the records' order,
    each batch at most `batch_size` rows, whatever order the workers finish in."""
    f = hts.AlignmentFile(RAND)
    regions = ["chr2:5000-5400", "chr1", "*"]
    stream = f.to_arrow(regions=regions, batch_size=batch_size, threads=threads)
    batches = list(pa.RecordBatchReader.from_stream(stream))
    assert all(0 < b.num_rows <= batch_size for b in batches)
    rows = pa.Table.from_batches(batches).to_pylist()
    assert rows == [expected_row(r) for r in f.fetch_many(regions)]


def test_read_all_and_read_pandas():
    """pyarrow's RecordBatchReader.read_all and read_pandas, without pyarrow.table's look for
    a pandas DataFrame."""
    f = hts.AlignmentFile(RAND)
    expected = pa.table(f.to_arrow(regions="chr1"))
    table = f.to_arrow(regions="chr1").read_all()
    assert isinstance(table, pa.Table)
    assert table.equals(expected)
    frame = f.to_arrow(regions="chr1", columns=["pos", "mapq"]).read_pandas(use_threads=False)
    assert list(frame["pos"]) == expected.column("pos").to_pylist()
    # A batch as large as asked for: one batch, room taken as the records come.
    one = list(pa.RecordBatchReader.from_stream(f.to_arrow(regions="chr1", batch_size=10**12)))
    assert len(one) == 1 and pa.Table.from_batches(one).equals(expected)
    with pytest.raises(Exception, match="bad_crc.bam"):
        hts.AlignmentFile(str(CORPUS / "malformed/bad_crc.bam")).to_arrow().read_all()


def test_schema_is_oxbows():
    ours = pa.table(hts.AlignmentFile(RAND).to_arrow(regions="chr1:10000-10500"))
    theirs = oxbow.from_bam(RAND, regions="chr1:10000-10500").pl().to_arrow()
    assert ours.column_names == theirs.column_names
    assert str(ours.schema) == str(oxbow.from_bam(RAND).schema)


@pytest.mark.parametrize("name", OXBOW_FILES)
def test_values_are_oxbows(name):
    path = str(CORPUS / "data" / name)
    ours = polars.DataFrame(hts.AlignmentFile(path).to_arrow())
    theirs = oxbow.from_bam(path).pl()
    # oxbow gives its strings as large_string and its dictionaries with u32 keys.
    assert ours.cast(theirs.schema).equals(theirs)


def test_tags_as_columns():
    f = hts.AlignmentFile(RAND)
    table = pa.table(
        f.to_arrow(regions="chr1:10000-10500", columns=["qname", "pos"], tags=[("NM", "i"), "RG", ("XX", "Z")])
    )
    assert table.column_names == ["qname", "pos", "NM", "RG", "XX"]
    assert table.schema.field("NM").type == pa.int32()
    records = list(f.fetch(region="chr1:10000-10500"))
    assert table.column("NM").to_pylist() == [r.get_tag("NM") for r in records]
    assert table.column("RG").to_pylist() == [r.get_tag("RG") for r in records]
    assert table.column("XX").null_count == len(records)
    aux = hts.AlignmentFile(str(CORPUS / "data/aux.bam"))
    rows = pa.table(aux.to_arrow(tags=[("Bs", "Bs"), ("Bf", "Bf"), "Bc"])).to_pylist()
    i, record = next((i, r) for i, r in enumerate(aux) if r.has_tag("Bs"))
    assert rows[i]["Bs"] == list(record.get_tag("Bs"))
    assert rows[i]["Bf"][:4] == list(record.get_tag("Bf"))[:4]
    assert "Bc:B:" + rows[i]["Bc"] in record.to_string()
    assert all(row["Bs"] is None for j, row in enumerate(rows) if j != i)


def test_zero_based_coordinates():
    row = pa.table(hts.AlignmentFile(RAND).to_arrow(regions="chr1:10000-10500", coords="01")).to_pylist()[0]
    r = next(hts.AlignmentFile(RAND).fetch(region="chr1:10000-10500"))
    assert row["pos"] == r.reference_start
    assert row["end"] == r.reference_end


def test_bad_arguments():
    f = hts.AlignmentFile(RAND)
    with pytest.raises(ValueError, match="unknown column"):
        f.to_arrow(columns=["qname", "posn"])
    with pytest.raises(ValueError, match="unknown type"):
        f.to_arrow(tags=[("NM", "q")])
    with pytest.raises(ValueError):
        f.to_arrow(coords="00")
    with pytest.raises(ValueError):
        f.to_arrow(regions=["nope:1-10"])


def test_polars_pandas_duckdb_take_the_stream():
    f = hts.AlignmentFile(RAND)
    expected = pa.table(f.to_arrow(regions="chr1"))
    frame = polars.DataFrame(f.to_arrow(regions="chr1"))
    assert frame.height == expected.num_rows
    series = polars.from_arrow(f.to_arrow(regions="chr1"))
    assert series.struct.unnest().height == expected.num_rows
    pandas_frame = pa.RecordBatchReader.from_stream(f.to_arrow(regions="chr1")).read_pandas()
    assert list(pandas_frame["pos"]) == expected.column("pos").to_pylist()
    stream = f.to_arrow(regions="chr1", columns=["mapq", "flag"])
    # DuckDB reads the schema, then scans: the stream runs its query again.
    n, top = duckdb.sql("select count(*), max(mapq) from stream").fetchall()[0]
    assert n == expected.num_rows
    assert top == pa.compute.max(expected.column("mapq")).as_py()


def test_a_damaged_file_fails_the_stream():
    f = hts.AlignmentFile(str(CORPUS / "malformed/bad_crc.bam"))
    with pytest.raises(Exception, match="bad_crc.bam"):
        pa.table(f.to_arrow())
