"""hts: indexed BAM (and tabix-indexed text) local or remote, with pysam's names.

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
    "HtsError",
    "TabixFile",
    "TabixIterator",
    "__version__",
]

# No remote request may still be inside libcurl or OpenSSL when the interpreter exits.
_atexit.register(_shutdown)
