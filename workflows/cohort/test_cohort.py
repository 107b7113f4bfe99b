"""Tests of cohort.py: python3 -m unittest discover -s workflows/cohort"""

import gzip
import json
import os
import stat
import struct
import sys
import tempfile
import textwrap
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cohort  # noqa: E402
import cohort_batch  # noqa: E402
from cohort import CohortError, Region, Sample  # noqa: E402

SIGNED = "https://b.s3.amazonaws.com/x.bam?X-Amz-Signature=abc&X-Amz-Expires=60"


class Files(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def write(self, name, text):
        path = os.path.join(self.dir.name, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(textwrap.dedent(text).lstrip("\n"))
        return path


class Manifest(Files):
    def test_samples_urls_verbatim_and_indexes_named_either_way(self):
        path = self.write("m.tsv", f"""
            sample\tbam\tindex
            # a comment
            a\t{SIGNED}\thttps://b/x.bai?sig=1
            b\ts3://bucket/b.bam\t
            c\thttps://h/c.bam##idx##https://h/c.csi

            d\t/data/d.bam
            """)
        samples = cohort.read_manifest(path)
        self.assertEqual(list(samples), ["a", "b", "c", "d"])
        self.assertEqual(samples["a"], Sample("a", SIGNED, "https://b/x.bai?sig=1"))
        self.assertEqual(samples["b"], Sample("b", "s3://bucket/b.bam", None))
        self.assertEqual(samples["c"], Sample("c", "https://h/c.bam", "https://h/c.csi"))
        self.assertEqual(samples["d"].index, None)

    def test_two_columns_are_enough(self):
        path = self.write("m.tsv", "sample\tbam\nx\thttps://h/x.bam\n")
        self.assertEqual(cohort.read_manifest(path)["x"].bam, "https://h/x.bam")

    def test_mistakes_name_the_line(self):
        cases = {
            "name\tbam\nx\ty\n": "header",
            "sample\tbam\nx y\tz\n": "m.tsv:2: sample name 'x y'",
            "sample\tbam\nx\tz\nx\tw\n": "m.tsv:3: sample 'x' is listed twice",
            "sample\tbam\tindex\nx\tz\ti\tj\n": "m.tsv:2: 4 columns",
            "sample\tbam\tindex\nx\ta##idx##i\tj\n": "two different indexes",
            "sample\tbam\nx\t\n": "no BAM",
            "sample\tbam\n": "no samples",
        }
        for text, message in cases.items():
            with self.subTest(text=text):
                with self.assertRaisesRegex(CohortError, message):
                    cohort.read_manifest(self.write("m.tsv", text))


class Regions(Files):
    def test_bed_lines_names_and_specs(self):
        path = self.write("r.bed", """
            track name=x
            chr1\t99\t200\tgeneA
            HLA-A*01:01\t0\t10
            chr2\t5\t6\t
            """)
        regions = cohort.read_bed(path)
        self.assertEqual(regions[0], Region("chr1", 99, 200, "geneA"))
        self.assertEqual(regions[0].spec(), "chr1:100-200")
        self.assertEqual(regions[0].label(), "geneA")
        self.assertEqual(regions[1].spec(), "{HLA-A*01:01}:1-10")
        self.assertEqual(regions[2].label(), "chr2:6-6")

    def test_bad_bed_lines(self):
        for text, message in {
            "chr1\t5\n": "r.bed:1: a BED line needs",
            "chr1\tx\t5\n": "integers",
            "chr1\t5\t5\n": "0 <= start < end",
            "track only\n": "no regions",
        }.items():
            with self.subTest(text=text):
                with self.assertRaisesRegex(CohortError, message):
                    cohort.read_bed(self.write("r.bed", text))

    def test_merged_joins_overlaps_and_keeps_reference_order(self):
        regions = [Region("2", 50, 60), Region("10", 0, 5), Region("2", 10, 20),
                   Region("2", 15, 30), Region("2", 30, 40), Region("10", 7, 9)]
        self.assertEqual([r.spec() for r in cohort.merged(regions)],
                         ["2:11-40", "2:51-60", "10:1-5", "10:8-9"])


class Command(unittest.TestCase):
    regions = [Region("1", 0, 100), Region("1", 50, 150), Region("2", 0, 10)]

    def test_one_query_with_all_regions(self):
        cmd = cohort.view_command("hts", Sample("s", SIGNED, "https://h/x.bai"), "o/s.bam",
                                  self.regions, threads=4, fetchers=8, extra=["-q", "20"])
        self.assertEqual(cmd, ["hts", "view", "-b", "--write-index", "-o", "o/s.bam", "-@", "3",
                               "--fetchers", "8", "-v", "1", "-q", "20", "-X", SIGNED,
                               "https://h/x.bai", "1:1-150", "2:1-10"])

    def test_bai_and_region_file(self):
        cmd = cohort.view_command("hts", Sample("s", "s3://b/k.bam"), "s.bam", self.regions,
                                  bed="r.bed", index_format="bai")
        self.assertEqual(cmd[4:6], ["-o", "s.bam##idx##s.bam.bai"])
        self.assertEqual(cmd[-3:], ["--region-file", "r.bed", "s3://b/k.bam"])
        self.assertEqual(cmd[6:8], ["-@", "0"])

    def test_region_file_names_the_index_with_the_bam(self):
        cmd = cohort.view_command("hts", Sample("s", SIGNED, "https://h/x.bai"), "s.bam",
                                  self.regions, bed="r.bed")
        self.assertNotIn("-X", cmd)
        self.assertEqual(cmd[-3:], ["--region-file", "r.bed", f"{SIGNED}##idx##https://h/x.bai"])

    def test_redact_hides_signatures_only(self):
        text = f"hts view -X {SIGNED} https://h/x.bai?sig=2##idx##s3://b/k?v=1 1:1-5"
        self.assertEqual(cohort.redact(text), "hts view -X https://b.s3.amazonaws.com/x.bam?... "
                                              "https://h/x.bai?...##idx##s3://b/k?... 1:1-5")
        self.assertEqual(cohort.redact("GET /x?y is fine"), "GET /x?y is fine")
        self.assertEqual(cohort.redact("hts view: https://h/x?a=b:c: HTTP status 403"),
                         "hts view: https://h/x?...: HTTP status 403")

    def test_summary_line(self):
        text = ("[hfile] GET x\n[hts] summary: requests=3 retries=0 bytes_received=10 "
                "seconds=0.5\n[hts] summary: requests=5 retries=1 bytes_received=99 "
                "new_connections=2 reused_connections=3 seconds=1.250\n")
        self.assertEqual(cohort.parse_summary(text),
                         {"requests": 5, "retries": 1, "bytes_received": 99,
                          "new_connections": 2, "reused_connections": 3, "seconds": 1.25})
        with self.assertRaisesRegex(CohortError, "no summary"):
            cohort.parse_summary("[hfile] GET x\n")
        with self.assertRaisesRegex(CohortError, "bad summary item"):
            cohort.parse_summary("[hts] summary: requests=many\n")

    def test_backoff_doubles_from_the_second_attempt(self):
        self.assertEqual([cohort.backoff(a, 10) for a in (1, 2, 3, 4)], [0, 10, 20, 40])
        self.assertEqual(cohort.backoff(30, 10), cohort.MAX_BACKOFF)
        self.assertEqual(cohort.backoff(3, 0), 0)


def bam_bytes(refs, records):
    """A BAM (gzip, as BGZF is) of `refs` [(name, length)] and `records` [(tid, pos, flag,
    cigar)], cigar as [(length, op)]: enough for the record counts."""
    text = b"@HD\tVN:1.6\tSO:coordinate\n"
    out = b"BAM\1" + struct.pack("<i", len(text)) + text + struct.pack("<i", len(refs))
    for name, length in refs:
        n = name.encode() + b"\0"
        out += struct.pack("<i", len(n)) + n + struct.pack("<i", length)
    for tid, pos, flag, cigar in records:
        ops = [(n << 4) | "MIDNSHP=X".index(op) for n, op in cigar]
        body = struct.pack("<iiBBHHHiiii", tid, pos, 2, 60, 0, len(ops), flag, 0, -1, -1, 0)
        body += b"r\0" + struct.pack(f"<{len(ops)}I", *ops)
        out += struct.pack("<i", len(body)) + body
    return gzip.compress(out) + cohort.BGZF_EOF


REFS = [("1", 1000), ("2", 1000)]
RECORDS = [
    (0, 100, 0, [(10, "M"), (5, "D"), (10, "M")]),  # ends at 125
    (0, 130, 0, [(5, "S"), (10, "M")]),  # 140
    (0, 150, 4, [(10, "M")]),  # unmapped: 151
    (0, 160, 0, []),  # no CIGAR: 161
    (0, 170, 0, [(4, "I")]),  # no reference length: 171
    (1, 100, 0, [(50, "M"), (3, "N"), (2, "=")]),  # 155
]


class Counts(Files):
    def test_overlaps_as_samtools_counts_them(self):
        path = os.path.join(self.dir.name, "x.bam")
        with open(path, "wb") as f:
            f.write(bam_bytes(REFS, RECORDS))
        regions = [Region("1", 124, 125), Region("1", 125, 130), Region("1", 139, 200),
                   Region("1", 150, 151), Region("2", 154, 155), Region("2", 155, 156),
                   Region("X", 0, 10), Region("1", 0, 1000)]
        self.assertEqual(cohort.region_counts(path, regions), [1, 0, 4, 1, 1, 0, 0, 5])

    def test_not_bam_and_truncated(self):
        path = os.path.join(self.dir.name, "x.bam")
        whole = bam_bytes(REFS, RECORDS)
        cut = gzip.compress(gzip.decompress(whole)[:-10]) + cohort.BGZF_EOF
        for data, message in [(gzip.compress(b"SAM text") + cohort.BGZF_EOF, "not a BAM"),
                              (whole[:-28], "x.bam: no BGZF end-of-file marker"),
                              (whole[:-40] + cohort.BGZF_EOF, "x.bam: CRC check failed"),
                              (cut, "x.bam: truncated")]:
            with open(path, "wb") as f:
                f.write(data)
            with self.subTest(message=message):
                with self.assertRaisesRegex(CohortError, message):
                    cohort.region_counts(path, [Region("1", 0, 10)])


FAKE_HTS = """\
#!{python}
# Stands in for hts view: copies FAKE_HTS_BAM to -o's file and prints a request log and a
# summary, or fails when FAKE_HTS_FAIL is set.
import os, shutil, sys
args = sys.argv[1:]
out = args[args.index("-o") + 1].split("##idx##")[0]
print("[hfile] GET " + args[args.index("-X") + 1] + " Range: bytes=0-9", file=sys.stderr)
if os.environ.get("FAKE_HTS_FAIL"):
    print("hts view: " + args[args.index("-X") + 1] + ": HTTP status 403", file=sys.stderr)
    sys.exit(1)
shutil.copy(os.environ["FAKE_HTS_BAM"], out)
print("[hts] summary: requests=4 retries=1 bytes_received=1234 new_connections=1 "
      "reused_connections=3 seconds=0.010", file=sys.stderr)
"""


class Extract(Files):
    def setUp(self):
        super().setUp()
        self.hts = self.write("hts", FAKE_HTS.format(python=sys.executable))
        os.chmod(self.hts, os.stat(self.hts).st_mode | stat.S_IEXEC)
        source = os.path.join(self.dir.name, "source.bam")
        with open(source, "wb") as f:
            f.write(bam_bytes(REFS, RECORDS))
        os.environ["FAKE_HTS_BAM"] = source
        self.addCleanup(os.environ.pop, "FAKE_HTS_BAM")
        self.sample = Sample("s1", SIGNED, "https://h/x.bai?sig=2")
        self.regions = [Region("1", 0, 1000, "a"), Region("2", 0, 101)]
        self.paths = [os.path.join(self.dir.name, n) for n in ("s1.bam", "s1.tsv", "s1.log")]

    def extract(self, **kw):
        cohort.extract(self.sample, self.regions, *self.paths, hts=self.hts, **kw)

    def read(self, path):
        with open(path, encoding="utf-8") as f:
            return f.read()

    def test_rows_per_region_with_the_sample_cost_and_a_log_without_secrets(self):
        self.extract(attempt=1, retry_delay=5)
        bam, stats, log = self.paths
        rows = [line.split("\t") for line in self.read(stats).splitlines()]
        self.assertEqual(rows[0], cohort.TABLE_COLUMNS)
        self.assertEqual([r[:6] for r in rows[1:]], [["s1", "a", "5", "1234", "4", "1"],
                                                    ["s1", "2:1-101", "1", "1234", "4", "1"]])
        self.assertGreater(float(rows[1][6]), 0)
        text = self.read(log)
        self.assertIn("[cohort] s1: attempt 1\n", text)
        self.assertIn("[hts] summary: requests=4", text)
        self.assertIn("2 regions, 6 records in them, 4 requests, 1234 bytes", text)
        self.assertNotIn("Signature", text)
        self.assertNotIn("sig=", text)

    def test_a_failure_raises_names_the_log_and_writes_no_table(self):
        os.environ["FAKE_HTS_FAIL"] = "1"
        self.addCleanup(os.environ.pop, "FAKE_HTS_FAIL")
        with self.assertRaisesRegex(CohortError, r"sample s1: hts view failed \(status 1\): "
                                    r"hts view: https://b.s3.amazonaws.com/x.bam\?\.\.\.: "
                                    r"HTTP status 403$"):
            self.extract()
        self.assertFalse(os.path.exists(self.paths[1]))
        text = self.read(self.paths[2])
        self.assertIn("HTTP status 403", text)
        self.assertNotIn("Signature", text)

    def test_the_program_takes_the_sample_from_the_manifest(self):
        manifest = self.write("m.tsv", f"sample\tbam\tindex\ns1\t{SIGNED}\thttps://h/x.bai\n")
        bed = self.write("r.bed", "1\t0\t1000\ta\n")
        bam, stats, log = self.paths
        common = ["extract", "--manifest", manifest, "--regions", bed, "--bam", bam,
                  "--stats", stats, "--log", log, "--hts", self.hts]
        self.assertEqual(cohort.main(common + ["--sample", "s1", "--", "-q", "1"]), 0)
        self.assertIn(" -q 1 -X https://b.s3.amazonaws.com/x.bam?... ", self.read(log))
        self.assertEqual(self.read(stats).splitlines()[1].split("\t")[:3], ["s1", "a", "5"])
        self.assertEqual(cohort.main(common + ["--sample", "s9"]), 1)
        out = os.path.join(self.dir.name, "all.tsv")
        self.assertEqual(cohort.main(["merge", "--out", out, stats]), 0)
        self.assertEqual(self.read(out), self.read(stats))

    def test_tables_merge_in_order(self):
        self.extract()
        other = self.write("s2.tsv", "\t".join(cohort.TABLE_COLUMNS) + "\ns2\tb\t7\t1\t1\t0\t0.1\n")
        out = os.path.join(self.dir.name, "all.tsv")
        cohort.merge_tables([self.paths[1], other], out)
        lines = self.read(out).splitlines()
        self.assertEqual([line.split("\t")[:2] for line in lines[1:]],
                         [["s1", "a"], ["s1", "2:1-101"], ["s2", "b"]])
        bad = self.write("bad.tsv", "x\ty\n")
        with self.assertRaisesRegex(CohortError, "not a per-sample table"):
            cohort.merge_tables([bad], out)


FAKE_MANIFEST_HTS = """\
#!{python}
# Stands in for hts view --manifest: copies FAKE_HTS_BAM to each sample's output (and its
# index), except for the samples of FAKE_HTS_FAIL (NAME=TIMES,...: fails NAME's first TIMES
# runs, counted in FAKE_HTS_RUNS), which get a partial file; then the cohort summary line and
# the failed names. Each run's manifest is appended to FAKE_HTS_RUNS.
import json, os, shutil, sys
args = sys.argv[1:]
manifest = args[args.index("--manifest") + 1]
template = args[args.index("-o") + 1].split("##idx##")[0]
lines = open(manifest).read().splitlines()
assert lines[0] == "sample\tbam\tindex", lines[0]
rows = [line.split("\t") for line in lines[1:]]
runs_path = os.environ["FAKE_HTS_RUNS"]
runs = json.load(open(runs_path)) if os.path.exists(runs_path) else []
runs.append({{"rows": rows, "args": args}})
json.dump(runs, open(runs_path, "w"))
fail = dict(kv.split("=") for kv in os.environ.get("FAKE_HTS_FAIL", "").split(",") if kv)
failed = []
for name, bam, index in rows:
    out = template.replace("{{sample}}", name)
    tries = sum(1 for r in runs if any(row[0] == name for row in r["rows"]))
    if tries <= int(fail.get(name, 0)):
        open(out, "wb").write(b"partial")
        print(f"hts view: sample {{name}}: {{bam}}: HTTP status 503", file=sys.stderr)
        failed.append(name)
        continue
    shutil.copy(os.environ["FAKE_HTS_BAM"], out)
    open(out + ".csi", "wb").write(b"index")
print(f"[hts] cohort: samples={{len(rows)}} failed={{len(failed)}} requests={{10 * len(rows)}} "
      f"retries={{len(failed)}} bytes_received=1001 new_connections=1 reused_connections=9 "
      "seconds=0.100", file=sys.stderr)
for name in failed:
    print(name, file=sys.stderr)
sys.exit(1 if failed else 0)
"""


class Batches(Files):
    def test_cut_in_manifest_order_deterministically(self):
        names = [f"s{i}" for i in range(7)]
        self.assertEqual(cohort_batch.batches(names, 3),
                         [("b000", ["s0", "s1", "s2"]), ("b001", ["s3", "s4", "s5"]),
                          ("b002", ["s6"])])
        self.assertEqual(cohort_batch.batches(names, 3), cohort_batch.batches(names, 3))
        self.assertEqual([b for _, b in cohort_batch.batches(names, 1)], [[n] for n in names])
        self.assertEqual(len(cohort_batch.batches(names, 100)), 1)
        labels = [label for label, _ in cohort_batch.batches(range(2000), 1)]
        self.assertEqual((labels[0], labels[-1]), ("b0000", "b1999"))
        with self.assertRaisesRegex(CohortError, "at least 1"):
            cohort_batch.batches(names, 0)

    def test_costs_are_shared_without_losing_any(self):
        self.assertEqual(cohort_batch.share(10, 3), [4, 3, 3])
        self.assertEqual(cohort_batch.share(0, 2), [0, 0])

    def test_the_batch_manifest_keeps_each_index(self):
        path = os.path.join(self.dir.name, "b.tsv")
        samples = [Sample("a", SIGNED, "https://h/x.bai?sig=1"), Sample("b", "s3://b/k.bam")]
        cohort_batch.write_manifest(path, samples)
        self.assertEqual(cohort.read_manifest(path), {s.name: s for s in samples})
        self.assertEqual(os.stat(path).st_mode & 0o777, 0o600)

    def test_one_hts_view_per_batch_with_merged_regions(self):
        cmd = cohort_batch.batch_command("hts", "m.tsv", "out", Command.regions, threads=2,
                                         fetchers=12, extra=["-q", "20"])
        self.assertEqual(cmd, ["hts", "view", "--manifest", "m.tsv", "-b", "--write-index",
                               "-o", "out/bams/{sample}.bam", "-@", "1", "--fetchers", "12",
                               "-v", "1", "-q", "20", "1:1-150", "2:1-10"])
        cmd = cohort_batch.batch_command("hts", "m.tsv", "out", Command.regions,
                                         index_format="bai")
        self.assertEqual(cmd[7], "out/bams/{sample}.bam##idx##out/bams/{sample}.bam.bai")

    def test_a_batch_takes_the_bed_as_region_file(self):
        cmd = cohort_batch.batch_command("hts", "m.tsv", "out", Command.regions, bed="r.bed",
                                         extra=["-q", "20"])
        self.assertEqual(cmd[-4:], ["-q", "20", "--region-file", "r.bed"])
        self.assertFalse(any(a.startswith("1:") for a in cmd), cmd)

    def test_failed_samples_are_the_lines_after_the_summary(self):
        text = ("hts view: sample s2: https://h/s2.bam?...: HTTP status 503\n"
                "[hts] cohort: samples=3 failed=1 requests=9\ns2\n")
        self.assertEqual(cohort_batch.failures(text, {"s1", "s2", "s3"}),
                         {"s2": "https://h/s2.bam?...: HTTP status 503"})
        self.assertEqual(cohort_batch.failures("[hts] cohort: samples=1\n", {"s1"}), {})
        self.assertIsNone(cohort_batch.failures("hts view: bad option\n", {"s1"}))


class ExtractBatch(Files):
    def setUp(self):
        super().setUp()
        self.hts = self.write("hts", FAKE_MANIFEST_HTS.format(python=sys.executable))
        os.chmod(self.hts, os.stat(self.hts).st_mode | stat.S_IEXEC)
        source = os.path.join(self.dir.name, "source.bam")
        with open(source, "wb") as f:
            f.write(bam_bytes(REFS, RECORDS))
        self.runs = os.path.join(self.dir.name, "runs.json")
        for key, value in [("FAKE_HTS_BAM", source), ("FAKE_HTS_RUNS", self.runs)]:
            os.environ[key] = value
            self.addCleanup(os.environ.pop, key)
        self.out = os.path.join(self.dir.name, "out")
        for sub in ("bams", "stats", "logs"):
            os.makedirs(os.path.join(self.out, sub))
        self.samples = [Sample("s1", SIGNED, "https://h/1.bai?sig=2"), Sample("s2", SIGNED),
                        Sample("s3", "https://h/3.bam")]
        self.regions = [Region("1", 0, 1000, "a"), Region("2", 0, 101)]
        self.log = os.path.join(self.out, "logs", "b000.log")

    def failing(self, spec):
        os.environ["FAKE_HTS_FAIL"] = spec
        self.addCleanup(os.environ.pop, "FAKE_HTS_FAIL", None)

    def extract(self, **kw):
        cohort_batch.extract_batch(self.samples, self.regions, self.out, self.log, hts=self.hts,
                                   label="b000", **kw)

    def read(self, path):
        with open(path, encoding="utf-8") as f:
            return f.read()

    def ran(self):
        with open(self.runs, encoding="utf-8") as f:
            return [[row[0] for row in run["rows"]] for run in json.load(f)]

    def test_one_run_for_the_batch_and_a_table_per_sample(self):
        self.extract(retries=2)
        self.assertEqual(self.ran(), [["s1", "s2", "s3"]])
        for i, name in enumerate(["s1", "s2", "s3"]):
            rows = [line.split("\t")
                    for line in self.read(cohort_batch.stats_path(self.out, name)).splitlines()]
            self.assertEqual(rows[0], cohort.TABLE_COLUMNS)
            # 30 requests and 1001 bytes shared out over 3 samples.
            cost = [["334", "334", "333"][i], "10", "0"]
            self.assertEqual([r[:6] for r in rows[1:]], [[name, "a", "5", *cost],
                                                        [name, "2:1-101", "1", *cost]])
        text = self.read(self.log)
        self.assertIn("[cohort] s2: attempt 1 (b000)\n", text)
        self.assertIn("[hts] cohort: samples=3", text)
        self.assertNotIn("Signature", text)
        self.assertNotIn("sig=", text)

    def test_only_the_failed_samples_run_again(self):
        self.failing("s2=2")
        self.extract(retries=3, retry_delay=0.01)
        self.assertEqual(self.ran(), [["s1", "s2", "s3"], ["s2"], ["s2"]])
        text = self.read(self.log)
        self.assertIn("[cohort] s2: attempt 2 after 0 s (b000)\n", text)
        self.assertIn("[cohort] s2: attempt 3 after 0 s (b000)\n", text)
        self.assertNotIn("s1: attempt 2", text)
        self.assertIn("sample s2: hts view failed (attempt 1): "
                      "https://b.s3.amazonaws.com/x.bam?...: HTTP status 503", text)
        self.assertNotIn("Signature", text)
        rows = self.read(cohort_batch.stats_path(self.out, "s2")).splitlines()
        # Its share of each of the three runs: 334 + 1001 + 1001 bytes, 10 + 10 + 10 requests,
        # 0 + 1 + 0 retries.
        self.assertEqual(rows[1].split("\t")[2:6], ["5", "2336", "30", "1"])

    def test_a_sample_failing_every_time_fails_the_job_named_and_leaves_no_partial_bam(self):
        self.failing("s3=9")
        with self.assertRaisesRegex(CohortError, r"b000: sample\(s\) s3: hts view failed 2 "
                                    r"times; last: https://h/3.bam: HTTP status 503$"):
            self.extract(retries=1)
        self.assertEqual(self.ran(), [["s1", "s2", "s3"], ["s3"]])
        self.assertFalse(os.path.exists(cohort_batch.bam_path(self.out, "s3")))
        self.assertFalse(os.path.exists(cohort_batch.stats_path(self.out, "s1")))

    def test_hts_failing_as_a_whole_fails_the_job(self):
        broken = self.write("broken", f"#!{sys.executable}\nimport sys\n"
                            "print('hts view: unknown option --x', file=sys.stderr)\n"
                            "sys.exit(1)\n")
        os.chmod(broken, 0o755)
        with self.assertRaisesRegex(CohortError, "failed \\(status 1\\): hts view: unknown"):
            cohort_batch.extract_batch(self.samples, self.regions, self.out, self.log,
                                       hts=broken, retries=3)

    def test_the_program_runs_a_batch_from_the_manifest(self):
        manifest = self.write("m.tsv", f"sample\tbam\tindex\ns1\t{SIGNED}\t\n"
                              "s2\thttps://h/2.bam\t\n")
        bed = self.write("r.bed", "1\t0\t1000\ta\n")
        common = ["batch", "--manifest", manifest, "--regions", bed, "--outdir", self.out,
                  "--log", self.log, "--hts", self.hts]
        self.assertEqual(cohort.main(common + ["--samples", "s2,s1", "--", "-q", "1"]), 0)
        self.assertEqual(self.ran(), [["s2", "s1"]])
        self.assertIn(" -q 1 1:1-1000\n", self.read(self.log))
        self.assertEqual(cohort.main(common + ["--samples", "s1,s9"]), 1)

    def test_the_program_passes_the_bed_to_a_batch(self):
        manifest = self.write("m.tsv", f"sample\tbam\tindex\ns1\t{SIGNED}\t\n"
                              "s2\thttps://h/2.bam\t\n")
        bed = self.write("r.bed", "1\t0\t1000\ta\n1\t500\t1500\tb\n")
        argv = ["batch", "--manifest", manifest, "--regions", bed, "--outdir", self.out,
                "--log", self.log, "--hts", self.hts, "--samples", "s1,s2", "--region-file"]
        self.assertEqual(cohort.main(argv + ["--", "-q", "1"]), 0)
        with open(self.runs, encoding="utf-8") as f:
            args = json.load(f)[0]["args"]
        self.assertEqual(args[-4:], ["-q", "1", "--region-file", bed])
        # Each sample's table still has a row per region of the BED.
        rows = self.read(cohort_batch.stats_path(self.out, "s1")).splitlines()
        self.assertEqual([r.split("\t")[1] for r in rows[1:]], ["a", "b"])


if __name__ == "__main__":
    unittest.main()
