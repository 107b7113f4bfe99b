"""pysam as the oracle: the fields of a record as pysam reads them, and samtools' region
strings turned into pysam's `contig, start, stop` (pysam's own region parser splits at the
first `:` and stops at names with colons, braces and `chr:beg`)."""

import math
import re

FIELDS = [
    "query_name",
    "flag",
    "reference_id",
    "reference_name",
    "reference_start",
    "reference_end",
    "mapping_quality",
    "cigarstring",
    "cigartuples",
    "query_sequence",
    "next_reference_id",
    "next_reference_name",
    "next_reference_start",
    "template_length",
    "is_paired",
    "is_proper_pair",
    "is_unmapped",
    "mate_is_unmapped",
    "is_reverse",
    "mate_is_reverse",
    "is_read1",
    "is_read2",
    "is_secondary",
    "is_qcfail",
    "is_duplicate",
    "is_supplementary",
]


def fields(record):
    """Every field the package gives, as comparable Python values."""
    out = {name: getattr(record, name) for name in FIELDS}
    if out["cigartuples"] is not None:
        out["cigartuples"] = [tuple(t) for t in out["cigartuples"]]
    quals = record.query_qualities
    out["query_qualities"] = None if quals is None else list(quals)
    out["tags"] = [
        (tag, _tag_value(value, kind))
        for tag, value, kind in record.get_tags(with_value_type=True)
    ]
    out["to_string"] = record.to_string()
    return out


def _comparable(v):
    # NaN is not equal to itself: compared by its text.
    return "nan" if isinstance(v, float) and math.isnan(v) else v


def _tag_value(value, kind):
    if hasattr(value, "typecode"):
        return [kind, [_comparable(v) for v in value]]
    if kind == "I":
        # pysam 0.24.1 gives an `I` value above 2^31 as a negative int32 (samtools prints
        # 3000000000, the package gives 3000000000): compared as the unsigned 32 bits.
        return [kind, value & 0xFFFFFFFF]
    return [kind, _comparable(value)]


def _number(text):
    """htslib's decimal with `,` separators (the corpus uses plain numbers and commas)."""
    return int(text.replace(",", ""))


def samtools_region(region, references):
    """`(contig, start, stop)` for pysam's fetch, as samtools reads `region` (1-based,
    inclusive; `*` the unplaced reads); None where samtools warns and skips the region."""
    if region == "*":
        return ("*", None, None)
    if region.startswith("{"):
        close = region.find("}")
        if close < 0:
            return None
        name, rest = region[1:close], region[close + 1 :]
        if name not in references:
            return None
        if not rest:
            return (name, None, None)
        if not rest.startswith(":"):
            return None
        return _range(name, rest[1:])
    if region in references:
        colon = region.rfind(":")
        if colon > 0 and region[:colon] in references:
            return None  # ambiguous
        return (region, None, None)
    colon = region.rfind(":")
    if colon < 0 or region[:colon] not in references:
        return None
    return _range(region[:colon], region[colon + 1 :])


def _range(name, text):
    m = re.fullmatch(r"([0-9,]*)(?:-([0-9,]*))?", text)
    if not m:
        return None
    beg = _number(m.group(1)) if m.group(1) else 1
    end = _number(m.group(2)) if m.group(2) else None
    if m.group(2) is not None and m.group(1) and beg < 1:
        return None
    start = max(beg - 1, 0)
    if end is not None and end < start + 1 and end <= start:
        return None
    return (name, start, end)
