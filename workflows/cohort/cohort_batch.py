"""The cohort workflow's batch job (`cohort.py batch`): a batch of samples in ONE
`hts view --manifest` (one process, one shared client: kept-alive connections, one bound on
requests in flight, the link busy while any sample has work left), failed samples run again
within the job, then each sample's table exactly as the one-sample job writes it.

Standard library only, as cohort.py.
"""

import os
import re
import subprocess
import sys
import tempfile
import time

from cohort import (CohortError, IDX_DELIM, backoff, index_path, merged, parse_summary, redact,
                    region_counts, stats_rows, write_table)


def batches(names, size):
    """The samples cut into batches of `size`, in manifest order: [(label, [names])]. The same
    manifest and size always give the same batches (a rerun finds the same jobs); samples added
    at the manifest's end change only the last batch and new ones."""
    if size < 1:
        raise CohortError(f"batch_size must be at least 1, got {size}")
    names = list(names)
    groups = [names[i:i + size] for i in range(0, len(names), size)]
    width = max(3, len(str(len(groups) - 1)))
    return [(f"b{i:0{width}d}", group) for i, group in enumerate(groups)]


def bam_path(outdir, name):
    return os.path.join(outdir, "bams", f"{name}.bam")


def stats_path(outdir, name):
    return os.path.join(outdir, "stats", f"{name}.tsv")


def write_manifest(path, samples):
    """A manifest of `samples` for `hts view --manifest`, each index in the third column.
    Readable by its owner only: pre-signed URLs are secrets."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write("sample\tbam\tindex\n")
        for s in samples:
            f.write(f"{s.name}\t{s.bam}\t{s.index or ''}\n")


def batch_command(hts, manifest, outdir, regions, *, bed=None, index_format="csi", threads=1,
                  fetchers=6, extra=()):
    """`hts view --manifest -b --write-index` of the batch: one output per sample where the
    one-sample job puts it. With `bed`, the regions come from it (`--region-file`: each record
    once, as the one-sample job gives it); else they are arguments, merged as the one-sample
    job merges them."""
    output = bam_path(outdir, "{sample}")
    if index_format == "bai":
        output = f"{output}{IDX_DELIM}{index_path(output, 'bai')}"
    cmd = [hts, "view", "--manifest", manifest, "-b", "--write-index", "-o", output,
           "-@", str(max(threads - 1, 0)), "--fetchers", str(fetchers), "-v", "1", *extra]
    if bed is not None:
        return cmd + ["--region-file", bed]
    return cmd + [r.spec() for r in merged(regions)]


def failures(stderr, asked):
    """{name: message} of the samples `hts view --manifest` names as failed: the lines after
    its `[hts] cohort:` summary line, each message from its `hts view: sample NAME: ...` line."""
    lines = stderr.splitlines()
    at = max((i for i, line in enumerate(lines) if line.startswith("[hts] cohort: ")),
             default=None)
    if at is None:
        return None
    failed = {}
    for line in lines[at + 1:]:
        name = line.strip()
        if name in asked:
            failed[name] = "failed"
    for line in lines:
        m = re.match(r"hts view: sample ([A-Za-z0-9._-]+): (.*)$", line)
        if m and m.group(1) in failed:
            failed[m.group(1)] = m.group(2)
    return failed


def share(total, n):
    """`total` cut into `n` integer parts that add up to it (the first ones one larger)."""
    return [total // n + (1 if i < total % n else 0) for i in range(n)]


def remove_outputs(outdir, name, index_format):
    """A failed sample's BAM and index: what hts wrote before the failure has no EOF marker, but
    nothing partial may stay to look like an output."""
    bam = bam_path(outdir, name)
    for path in (bam, index_path(bam, index_format)):
        try:
            os.remove(path)
        except FileNotFoundError:
            pass


def run_once(samples, regions, outdir, log, *, hts, bed, index_format, threads, fetchers, extra):
    """One `hts view --manifest` of `samples`: ({name: message} of the failed ones, the cohort
    summary's counts, wall seconds)."""
    fd, manifest = tempfile.mkstemp(prefix="cohort-batch-", suffix=".tsv")
    os.close(fd)
    try:
        write_manifest(manifest, samples)
        cmd = batch_command(hts, manifest, outdir, regions, bed=bed, index_format=index_format,
                            threads=threads, fetchers=fetchers, extra=extra)
        log.write("[cohort] $ " + redact(" ".join(cmd)) + "\n")
        log.flush()
        started = time.monotonic()
        done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wall = time.monotonic() - started
    finally:
        os.remove(manifest)
    log.write(redact(done.stderr))
    failed = failures(done.stderr, {s.name for s in samples})
    if failed is None or (done.returncode != 0 and not failed):
        # Not one sample's failure: the options, the manifest, the output folder.
        last = [line for line in done.stderr.splitlines() if not line.startswith("[hfile]")]
        raise CohortError(f"hts view --manifest failed (status {done.returncode}): "
                          f"{redact(' / '.join(last[-2:]))}")
    return failed, parse_summary(done.stderr, "cohort"), wall


def extract_batch(samples, regions, outdir, log_path, *, hts, bed=None, index_format="csi",
                  threads=1, fetchers=6, extra=(), retries=0, retry_delay=0.0, label="batch"):
    """A batch: all its samples in one `hts view --manifest` (the regions from `bed` with
    `--region-file` when given, else as arguments), the failed ones run again (only
    they, up to `retries` times, after `retry_delay` seconds, doubling), then every sample's
    table. A sample that still fails fails the job, named; no table is written then. Each run's
    cost (requests, retries, bytes, wall) is shared out evenly among the samples it ran, so the
    table's totals stay the runs' totals."""
    cost = {s.name: [0, 0, 0, 0.0] for s in samples}
    todo, failed = list(samples), {}
    with open(log_path, "a", encoding="utf-8") as log:
        for attempt in range(1, retries + 2):
            pause = backoff(attempt, retry_delay)
            for s in todo:
                log.write(f"[cohort] {s.name}: attempt {attempt}"
                          + (f" after {pause:.0f} s" if pause else "") + f" ({label})\n")
            log.flush()
            time.sleep(pause)
            failed, summary, wall = run_once(todo, regions, outdir, log, hts=hts, bed=bed,
                                             index_format=index_format, threads=threads,
                                             fetchers=fetchers, extra=extra)
            parts = [share(summary[k], len(todo))
                     for k in ("bytes_received", "requests", "retries")]
            for i, s in enumerate(todo):
                c = cost[s.name]
                c[0], c[1], c[2] = c[0] + parts[0][i], c[1] + parts[1][i], c[2] + parts[2][i]
                c[3] += wall / len(todo)
            for name, message in failed.items():
                remove_outputs(outdir, name, index_format)
                said = f"sample {name}: hts view failed (attempt {attempt}): {redact(message)}"
                log.write(f"[cohort] {said}\n")
                # Snakemake shows the job's standard error: a retried sample is seen there.
                print(f"cohort.py: {said}", file=sys.stderr)
            todo = [s for s in todo if s.name in failed]
            if not todo:
                break
        if todo:
            names = ", ".join(s.name for s in todo)
            last = redact(failed[todo[-1].name])
            raise CohortError(f"{label}: sample(s) {names}: hts view failed {attempt} times; "
                              f"last: {last}")
        for s in samples:
            bam = bam_path(outdir, s.name)
            counts = region_counts(bam, regions)
            b, r, t, wall = cost[s.name]
            summary = {"bytes_received": b, "requests": r, "retries": t}
            log.write(f"[cohort] {s.name}: {len(regions)} regions, {sum(counts)} records in them, "
                      f"{r} requests, {b} bytes, {wall:.3f} s (its share of the batch)\n")
            write_table(stats_path(outdir, s.name),
                        stats_rows(s.name, regions, counts, summary, wall))
