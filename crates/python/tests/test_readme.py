"""The example of crates/python/README.md, run against the test server's copy of the
corpus's rand.bam."""

import re
import subprocess
import sys
from pathlib import Path

from conftest import location

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_example_runs():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert len(blocks) == 2
    example = blocks[0]
    assert len(example.strip().splitlines()) <= 10
    assert "https://example.org/sample.bam" in example
    code = example.replace(
        "https://example.org/sample.bam", location("http", "conformance/data/rand.bam")
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("r00363.89 1982 9M10794N59=31M")
    assert lines[-2] == "9"
    assert lines[-1] == "29 2939 ['qname', 'flag', 'rname', 'pos', 'mapq', 'cigar', 'rnext', 'pnext', 'tlen', 'seq', 'qual', 'end', 'NM']"


def test_readme_cohort_example_runs():
    example = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)[1]
    assert len(example.strip().splitlines()) <= 10
    bam = location("http", "conformance/data/rand.bam")
    code = example.replace("https://example.org/a.bam", bam).replace(
        "https://example.org/b.bam", bam
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "{'a': 21, 'b': 21}"
    assert lines[1] == "42 ['sample', 'qname', 'pos', 'mapq'] {}"
