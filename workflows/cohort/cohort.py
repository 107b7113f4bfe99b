"""The cohort workflow's helpers (its Snakefile runs them as a program, `extract`, `batch` and
`merge`): the manifest, the regions, the batches, the `hts view` commands, hts's summary lines,
the per-sample and per-batch jobs and the final table.

Standard library only, so `python3 -m unittest` tests it without Snakemake. Run as a program
rather than in Snakemake's `run:` blocks: a shell job starts in milliseconds, a `run:` job
starts a new Snakemake process (seconds), and the command Snakemake shows names the sample,
never its URL (a pre-signed URL's signature must stay out of logs).
"""

import argparse
import gzip
import os
import re
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from dataclasses import dataclass

IDX_DELIM = "##idx##"
SAMPLE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
TABLE_COLUMNS = ["sample", "region", "records", "bytes_fetched", "requests", "retries", "wall_s"]
# The longest pause before a job's next attempt.
MAX_BACKOFF = 600.0


class CohortError(Exception):
    """A mistake in the inputs or a failed step, said in one line."""


@dataclass(frozen=True)
class Sample:
    name: str
    bam: str
    # None: hts looks for the index beside the BAM, as samtools does.
    index: str | None = None


@dataclass(frozen=True)
class Region:
    chrom: str
    beg: int  # 0-based, as in BED
    end: int  # exclusive
    name: str | None = None

    def spec(self):
        """The region as samtools and hts take it (1-based, inclusive)."""
        chrom = "{" + self.chrom + "}" if ":" in self.chrom else self.chrom
        return f"{chrom}:{self.beg + 1}-{self.end}"

    def label(self):
        return self.name or self.spec()


def _rows(path):
    """(line number, fields) of a tab-separated file, without blank and `#` lines."""
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\r\n")
            if line.strip() and not line.startswith("#"):
                yield n, line.split("\t")


def read_manifest(path):
    """Samples by name from a TSV whose header is `sample bam [index]`. A BAM given as
    `URL##idx##INDEX` names its index; pre-signed and s3:// URLs are kept verbatim."""
    rows = _rows(path)
    first = next(rows, None)
    if first is None or first[1][:2] != ["sample", "bam"] or first[1][2:] not in ([], ["index"]):
        raise CohortError(f"{path}: the header must be 'sample<TAB>bam[<TAB>index]'")
    width = len(first[1])
    samples = {}
    for n, fields in rows:
        where = f"{path}:{n}"
        if len(fields) not in (2, width):
            raise CohortError(f"{where}: {len(fields)} columns, expected {width}")
        name, bam = fields[0].strip(), fields[1].strip()
        index = fields[2].strip() if len(fields) > 2 and fields[2].strip() else None
        if not SAMPLE_NAME.fullmatch(name):
            raise CohortError(f"{where}: sample name '{name}' is not [A-Za-z0-9._-]+")
        if name in samples:
            raise CohortError(f"{where}: sample '{name}' is listed twice")
        if IDX_DELIM in bam:
            bam, named = bam.split(IDX_DELIM, 1)
            if index is not None and index != named:
                raise CohortError(f"{where}: two different indexes for '{name}'")
            index = named
        if not bam:
            raise CohortError(f"{where}: no BAM for '{name}'")
        samples[name] = Sample(name, bam, index or None)
    if not samples:
        raise CohortError(f"{path}: no samples")
    return samples


def read_bed(path):
    """The regions of a BED file (chrom, 0-based start, end, optional name), in file order."""
    regions = []
    for n, fields in _rows(path):
        if fields[0].startswith(("track", "browser")):
            continue
        if len(fields) < 3:
            raise CohortError(f"{path}:{n}: a BED line needs chrom, start and end")
        try:
            beg, end = int(fields[1]), int(fields[2])
        except ValueError:
            raise CohortError(f"{path}:{n}: start and end must be integers") from None
        if not 0 <= beg < end:
            raise CohortError(f"{path}:{n}: needs 0 <= start < end, got {beg} and {end}")
        name = fields[3].strip() if len(fields) > 3 and fields[3].strip() else None
        regions.append(Region(fields[0], beg, end, name))
    if not regions:
        raise CohortError(f"{path}: no regions")
    return regions


def merged(regions):
    """The regions as one query's arguments: overlapping or touching intervals joined, sorted by
    start within a reference, references in the order the BED first names them (the BAMs'
    order, for a coordinate-sorted BED). Output sorted by position can then be indexed."""
    order = {}
    for r in regions:
        order.setdefault(r.chrom, len(order))
    out = []
    for r in sorted(regions, key=lambda r: (order[r.chrom], r.beg, r.end)):
        last = out[-1] if out else None
        if last and last.chrom == r.chrom and r.beg <= last.end:
            out[-1] = Region(r.chrom, last.beg, max(last.end, r.end))
        else:
            out.append(Region(r.chrom, r.beg, r.end))
    return out


def index_path(out_bam, index_format):
    return f"{out_bam}.{index_format}"


def view_command(hts, sample, out_bam, regions, *, bed=None, index_format="csi", threads=1,
                 fetchers=6, extra=()):
    """`hts view -b --write-index` of all regions of one sample as one query. With `bed`, the
    regions come from it (`--region-file`: each record once); else they are arguments."""
    output = out_bam
    if index_format == "bai":
        output = f"{out_bam}{IDX_DELIM}{index_path(out_bam, 'bai')}"
    cmd = [hts, "view", "-b", "--write-index", "-o", output, "-@", str(max(threads - 1, 0)),
           "--fetchers", str(fetchers), "-v", "1", *extra]
    if bed is not None:
        # samtools' -X wants a region after the index, and --region-file brings none: the
        # index goes with the BAM as URL##idx##INDEX instead.
        cmd += ["--region-file", bed]
        cmd += [f"{sample.bam}{IDX_DELIM}{sample.index}" if sample.index else sample.bam]
        return cmd
    cmd += ["-X", sample.bam, sample.index] if sample.index else [sample.bam]
    return cmd + [r.spec() for r in merged(regions)]


def redact(text):
    """Text with every URL's query string (a signature) replaced by `?...`."""
    # A colon ending the URL is a message's ("URL: error"), not the query's.
    return re.sub(r"([A-Za-z][A-Za-z0-9+.-]*://[^\s?#]*)\?[^\s#]*?(?=:?(?:\s|#|$))", r"\1?...",
                  text)


def parse_summary(text, kind="summary"):
    """The counts of the last `[hts] KIND:` line in `text`, by name (`summary` for one file,
    `cohort` for `hts view --manifest`)."""
    found = re.findall(rf"^\[hts\] {kind}: (.*)$", text, re.M)
    if not found:
        raise CohortError(f"hts printed no {kind} line")
    counts = {}
    for item in found[-1].split():
        key, sep, value = item.partition("=")
        try:
            counts[key] = float(value) if "." in value else int(value)
        except ValueError:
            raise CohortError(f"bad summary item '{item}'") from None
        if not sep:
            raise CohortError(f"bad summary item '{item}'")
    return counts


def backoff(attempt, base):
    """Seconds to wait before a job's `attempt` (1 for the first): none, then `base`, doubling."""
    if attempt <= 1 or base <= 0:
        return 0.0
    return min(base * 2 ** (attempt - 2), MAX_BACKOFF)


# The empty block that ends every complete BGZF file.
BGZF_EOF = bytes.fromhex("1f8b08040000000000ff0600424302001b0003000000000000000000")
# CIGAR operations that consume the reference: M, D, N, =, X.
CONSUMES_REFERENCE = (0, 2, 3, 7, 8)


def _read_exactly(f, n, bam):
    data = f.read(n)
    if len(data) != n:
        raise CohortError(f"{bam}: truncated")
    return data


def region_counts(bam, regions):
    """Records of a local BAM overlapping each region, as `samtools view -c BAM REGION` counts
    them: a record overlaps when it starts before the region's end and ends after its start,
    its end being its start plus the reference length of its CIGAR (at least 1; 1 when it is
    unmapped), as htslib's `bam_endpos`. One pass over the file, whatever the regions."""
    with open(bam, "rb") as f:
        f.seek(max(os.path.getsize(bam) - len(BGZF_EOF), 0))
        if f.read() != BGZF_EOF:
            raise CohortError(f"{bam}: no BGZF end-of-file marker (truncated?)")
    try:
        return _region_counts(bam, regions)
    except (EOFError, zlib.error, gzip.BadGzipFile) as e:
        raise CohortError(f"{bam}: {e}") from None


def _region_counts(bam, regions):
    counts = [0] * len(regions)
    with gzip.open(bam, "rb") as f:  # BGZF is gzip, block after block
        if f.read(4) != b"BAM\1":
            raise CohortError(f"{bam}: not a BAM file")
        (l_text,) = struct.unpack("<i", _read_exactly(f, 4, bam))
        _read_exactly(f, l_text, bam)
        (n_ref,) = struct.unpack("<i", _read_exactly(f, 4, bam))
        tids = {}
        for tid in range(n_ref):
            (l_name,) = struct.unpack("<i", _read_exactly(f, 4, bam))
            tids[_read_exactly(f, l_name, bam)[:-1].decode()] = tid
            _read_exactly(f, 4, bam)
        wanted = {}
        for i, r in enumerate(regions):
            if r.chrom in tids:
                wanted.setdefault(tids[r.chrom], []).append((i, r.beg, r.end))
        while head := f.read(4):
            if len(head) != 4:
                raise CohortError(f"{bam}: truncated")
            (size,) = struct.unpack("<i", head)
            rec = _read_exactly(f, size, bam)
            tid, pos, l_name, _, _, n_cigar, flag = struct.unpack_from("<iiBBHHH", rec)
            spans = wanted.get(tid)
            if not spans:
                continue
            length = 0
            if not flag & 4:
                for op in struct.unpack_from(f"<{n_cigar}I", rec, 32 + l_name):
                    if op & 0xF in CONSUMES_REFERENCE:
                        length += op >> 4
            end = pos + max(length, 1)
            for i, beg, stop in spans:
                if pos < stop and end > beg:
                    counts[i] += 1
    return counts


def stats_rows(sample, regions, counts, summary, wall):
    """Table rows of one sample: one per region. The cost columns are the sample's: its
    regions are one query."""
    cost = [str(summary["bytes_received"]), str(summary["requests"]), str(summary["retries"]),
            f"{wall:.3f}"]
    return [[sample, r.label(), str(c), *cost] for r, c in zip(regions, counts)]


def write_table(path, rows):
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\t".join(TABLE_COLUMNS) + "\n")
        for row in rows:
            f.write("\t".join(row) + "\n")
    os.replace(tmp, path)


def merge_tables(paths, out):
    """One table from the per-sample ones, in the order given."""
    rows = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
        if not lines or lines[0].split("\t") != TABLE_COLUMNS:
            raise CohortError(f"{path}: not a per-sample table")
        rows += [line.split("\t") for line in lines[1:]]
    write_table(out, rows)


def extract(sample, regions, out_bam, stats, log, *, hts, bed=None, index_format="csi",
            threads=1, fetchers=6, extra=(), attempt=1, retry_delay=0.0):
    """One sample: its regions in one `hts view`, the log, and its rows of the table."""
    pause = backoff(attempt, retry_delay)
    cmd = view_command(hts, sample, out_bam, regions, bed=bed, index_format=index_format,
                       threads=threads, fetchers=fetchers, extra=extra)
    with open(log, "a", encoding="utf-8") as f:
        f.write(f"[cohort] {sample.name}: attempt {attempt}"
                + (f" after {pause:.0f} s" if pause else "") + "\n")
        f.write("[cohort] $ " + redact(" ".join(cmd)) + "\n")
    time.sleep(pause)
    started = time.monotonic()
    with open(log, "a", encoding="utf-8") as f:
        done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wall = time.monotonic() - started
        f.write(redact(done.stderr))
        if done.returncode != 0:
            f.write(f"[cohort] {sample.name}: hts exited with status {done.returncode}\n")
            # Snakemake starts the next attempt's log afresh: hts's last words go to its own
            # log too.
            last = [line for line in done.stderr.splitlines() if not line.startswith("[hfile]")]
            raise CohortError(f"sample {sample.name}: hts view failed "
                              f"(status {done.returncode}): {redact(' / '.join(last[-2:]))}")
        summary = parse_summary(done.stderr)
        counts = region_counts(out_bam, regions)
        f.write(f"[cohort] {sample.name}: {len(regions)} regions, {sum(counts)} records in them, "
                f"{summary['requests']} requests, {summary['bytes_received']} bytes, "
                f"{wall:.3f} s\n")
    write_table(stats, stats_rows(sample.name, regions, counts, summary, wall))


def main(argv=None):
    parser = argparse.ArgumentParser(prog="cohort.py", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    one = sub.add_parser("extract", help="one sample: hts view, its log and its table")
    one.add_argument("--manifest", required=True)
    one.add_argument("--sample", required=True)
    one.add_argument("--regions", required=True, help="the BED")
    one.add_argument("--bam", required=True)
    one.add_argument("--stats", required=True)
    one.add_argument("--log", required=True)
    one.add_argument("--hts", default="hts")
    one.add_argument("--region-file", action="store_true",
                     help="give hts the BED with --region-file")
    one.add_argument("--index-format", choices=["csi", "bai"], default="csi")
    one.add_argument("--threads", type=int, default=1)
    one.add_argument("--fetchers", type=int, default=6)
    one.add_argument("--attempt", type=int, default=1)
    one.add_argument("--retry-delay", type=float, default=0.0)
    one.add_argument("extra", nargs="*", help="more hts view options (after --)")
    many = sub.add_parser("batch", help="a batch of samples in one hts view --manifest")
    many.add_argument("--manifest", required=True)
    many.add_argument("--samples", required=True, help="the batch's names, comma-separated")
    many.add_argument("--label", default="batch", help="the batch's name in messages")
    many.add_argument("--regions", required=True, help="the BED")
    many.add_argument("--outdir", required=True, help="bams/ and stats/ go there")
    many.add_argument("--log", required=True)
    many.add_argument("--hts", default="hts")
    many.add_argument("--index-format", choices=["csi", "bai"], default="csi")
    many.add_argument("--threads", type=int, default=1)
    many.add_argument("--fetchers", type=int, default=6)
    many.add_argument("--retries", type=int, default=0,
                      help="times a failed sample is run again within the job")
    many.add_argument("--retry-delay", type=float, default=0.0)
    many.add_argument("--region-file", action="store_true",
                      help="give hts the BED with --region-file")
    many.add_argument("extra", nargs="*", help="more hts view options (after --)")
    merge = sub.add_parser("merge", help="one table from the per-sample ones")
    merge.add_argument("--out", required=True)
    merge.add_argument("tables", nargs="+")
    args = parser.parse_args(argv)
    try:
        if args.command == "merge":
            merge_tables(args.tables, args.out)
            return 0
        samples = read_manifest(args.manifest)
        if args.command == "batch":
            import cohort_batch  # the batch job's module; it imports this one

            missing = [n for n in args.samples.split(",") if n not in samples]
            if missing:
                raise CohortError(f"{args.manifest}: no sample '{missing[0]}'")
            cohort_batch.extract_batch([samples[n] for n in args.samples.split(",")],
                                read_bed(args.regions), args.outdir, args.log, hts=args.hts,
                                bed=args.regions if args.region_file else None,
                                index_format=args.index_format, threads=args.threads,
                                fetchers=args.fetchers, extra=args.extra, retries=args.retries,
                                retry_delay=args.retry_delay, label=args.label)
            return 0
        if args.sample not in samples:
            raise CohortError(f"{args.manifest}: no sample '{args.sample}'")
        extract(samples[args.sample], read_bed(args.regions), args.bam, args.stats, args.log,
                hts=args.hts, bed=args.regions if args.region_file else None,
                index_format=args.index_format, threads=args.threads, fetchers=args.fetchers,
                extra=args.extra, attempt=args.attempt, retry_delay=args.retry_delay)
        return 0
    except (CohortError, OSError) as e:
        print(f"cohort.py: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    # batch.py imports `cohort`: it must get this module, not a second copy (whose CohortError
    # main would not catch).
    sys.modules.setdefault("cohort", sys.modules["__main__"])
    sys.exit(main())
