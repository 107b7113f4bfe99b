"""The GIL is released while bytes are fetched and records decoded.

- Two Python threads querying different regions over a link that makes every response
  150 ms late take about the time of one; holding the GIL while waiting would make them take
  two. (The files are opened and their indexes loaded before the clock starts: readers in
  one process share the transport's fetchers, and two opens at once queue behind each other's
  index requests, which says nothing about the GIL.)
- A Python thread keeps running while another opens, queries and reads remote files.
"""

import threading
import time

import pyarrow as pa

import hts
from conftest import SLOW_HTTP

BAM = f"{SLOW_HTTP}/conformance/data/rand.bam"
VCF = f"{SLOW_HTTP}/tabix/many.vcf.gz"
REGIONS = [
    ["chr2:5000-5400", "chr3:500000-501000", "chrM:100-300"],
    ["chr2:60000-60400", "chr1:200000-200400", "chrM:9000-9300"],
]


def ready_file():
    """An open file whose index is loaded (a first query does it)."""
    f = hts.AlignmentFile(BAM, cache=False)
    list(f.fetch(region="chr1:1-10"))
    return f


def run_threads(work):
    threads = [threading.Thread(target=fn) for fn in work]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    return time.monotonic() - start


def queries(f, regions, out):
    def work():
        for region in regions:
            out.append(len(list(f.fetch(region=region))))

    return work


def test_two_threads_fetching_different_regions_overlap():
    best = None
    for _ in range(3):
        counts = []
        alone = run_threads([queries(ready_file(), REGIONS[0], counts)])
        a, b = ready_file(), ready_file()
        together = run_threads([queries(a, REGIONS[0], counts), queries(b, REGIONS[1], counts)])
        assert all(n > 0 for n in counts), counts
        # Three queries of one round trip each (150 ms). Measured: about 1.05 with the GIL
        # released while waiting for a batch, 1.35 with it held.
        assert alone > 0.4, alone
        ratio = together / alone
        best = ratio if best is None else min(best, ratio)
        if best < 1.25:
            break
    print(f"alone {alone:.3f} s, together {together:.3f} s")
    assert best < 1.25, (alone, together)


def gaps_while(work):
    """The longest time a spinning Python thread went without running while `work` ran."""
    stop = threading.Event()
    ticks = []

    def spin():
        n = 0
        while not stop.is_set():
            n += 1
            if n % 1000 == 0:
                ticks.append(time.monotonic())

    spinner = threading.Thread(target=spin)
    spinner.start()
    try:
        work()
    finally:
        stop.set()
        spinner.join()
    return max(b - a for a, b in zip(ticks, ticks[1:]))


def test_other_threads_run_while_remote_files_are_read():
    hts.AlignmentFile(BAM, cache=False)  # libcurl's set-up, once a process

    def remote_work():
        f = hts.AlignmentFile(BAM, cache=False)
        assert len(list(f.fetch_many(REGIONS[0]))) > 0
        assert pa.table(f.to_arrow(regions=REGIONS[1])).num_rows > 0
        assert f.count(region="chr3") > 0
        t = hts.TabixFile(VCF)
        assert len(list(t.fetch(region="chr1:10000-10300"))) == 4

    # Each of those waits for responses 150 ms late several times; with the GIL held while
    # waiting, the spinning thread would stop for 150 ms at least.
    gap = gaps_while(remote_work)
    assert gap < 0.1, gap


def test_other_threads_run_while_a_remote_cram_is_read():
    """The same for CRAM, its reference remote too: containers and reference slices are
    fetched and records decoded without the GIL."""
    cram = f"{SLOW_HTTP}/cram/aligned-3.0-slices.cram"
    ref = f"{SLOW_HTTP}/cram/ref.fa"
    hts.AlignmentFile(BAM, cache=False)  # libcurl's set-up, once a process

    def remote_work():
        f = hts.AlignmentFile(cram, reference_filename=ref, cache=False)
        assert len(list(f.fetch_many(["ref1:300-400", "ref3:700-800"]))) > 0
        assert pa.table(f.to_arrow(regions="ref2:1000-1200")).num_rows > 0
        assert f.count(region="ref1") > 0

    gap = gaps_while(remote_work)
    assert gap < 0.1, gap
