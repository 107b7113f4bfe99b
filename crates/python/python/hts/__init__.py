"""hts: indexed BAM and CRAM (and tabix-indexed text) local or remote, with pysam's names.

    import hts
    with hts.AlignmentFile("https://example.org/x.bam") as bam:
        for read in bam.fetch("chr1", 10_000, 20_000):
            print(read.query_name, read.reference_start, read.cigarstring)

Records are decoded in batches on a thread of their own, without the GIL; `to_arrow()` gives
the records as an Arrow stream (`pyarrow.table(...)`, `polars.from_arrow(...)`).
"""

import atexit as _atexit

from hts._hts import (
    AlignedSegment,
    AlignmentFile,
    AlignmentHeader,
    AlignmentIterator,
    ArrowStream,
    Cohort,
    CohortError,
    CohortStream,
    HtsError,
    TabixFile,
    TabixIterator,
    __version__,
    _shutdown,
)

__all__ = [
    "AlignedSegment",
    "AlignmentFile",
    "AlignmentHeader",
    "AlignmentIterator",
    "ArrowStream",
    "Cohort",
    "CohortError",
    "CohortStream",
    "HtsError",
    "TabixFile",
    "TabixIterator",
    "__version__",
]

# pysam's flag properties: (name, FLAG bit, set or clear).
_FLAG_PROPERTIES = [
    ("is_paired", 0x1, True),
    ("is_proper_pair", 0x2, True),
    ("is_unmapped", 0x4, True),
    ("is_mapped", 0x4, False),
    ("mate_is_unmapped", 0x8, True),
    ("mate_is_mapped", 0x8, False),
    ("is_reverse", 0x10, True),
    ("is_forward", 0x10, False),
    ("mate_is_reverse", 0x20, True),
    ("mate_is_forward", 0x20, False),
    ("is_read1", 0x40, True),
    ("is_read2", 0x80, True),
    ("is_secondary", 0x100, True),
    ("is_qcfail", 0x200, True),
    ("is_duplicate", 0x400, True),
    ("is_supplementary", 0x800, True),
]


def _flag_property(bit, when_set):
    def get(read):
        return bool(read.flag & bit) == when_set

    return property(get, doc=f"FLAG 0x{bit:x} {'set' if when_set else 'clear'} (pysam's name)")


for _name, _bit, _set in _FLAG_PROPERTIES:
    setattr(AlignedSegment, _name, _flag_property(_bit, _set))


def _read_all(stream):
    """Every batch as one `pyarrow.Table` (pyarrow's `RecordBatchReader.read_all`, read without
    the GIL). `pyarrow.table(stream)` gives the same table, but first looks whether it was
    handed a pandas DataFrame, which imports pandas when it is installed (0.2 s)."""
    import pyarrow

    return pyarrow.RecordBatchReader.from_stream(stream).read_all()


def _read_pandas(stream, **options):
    """Every batch as one pandas DataFrame (pyarrow's `RecordBatchReader.read_pandas`; the
    keyword arguments go to `pyarrow.Table.to_pandas`)."""
    return _read_all(stream).to_pandas(**options)


# pyarrow's reader methods on both Arrow streams.
for _stream in (ArrowStream, CohortStream):
    _stream.read_all = _read_all
    _stream.read_pandas = _read_pandas

# No remote request may still be inside libcurl or OpenSSL when the interpreter exits.
_atexit.register(_shutdown)
