"""What the tests share: where the corpora are, and the servers `cargo xtask python-test`
started for them (the test HTTP server over fixtures/, the same behind a slow link, and
s3s-fs holding the corpora). Run the tests through that command: without its servers they
fail, they never skip."""

import os
from pathlib import Path

import pytest


def _env(name):
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(
            f"{name} is not set: run these tests with `cargo xtask python-test`, which "
            "builds the wheel and starts the servers they use"
        )
    return value


FIXTURES = Path(_env("HTS_TEST_FIXTURES"))
CORPUS = FIXTURES / "conformance"
TABIX = FIXTURES / "tabix"
HTTP = _env("HTS_TEST_HTTP").rstrip("/")
SLOW_HTTP = _env("HTS_TEST_SLOW_HTTP").rstrip("/")
S3_BUCKET = _env("HTS_TEST_S3_BUCKET")


def location(transport, relative):
    """Where a fixture file (`conformance/data/x.bam`, `tabix/x.vcf.gz`) is read from."""
    if transport == "local":
        return str(FIXTURES / relative)
    if transport == "http":
        return f"{HTTP}/{relative}"
    if transport == "s3":
        # The bucket holds conformance/data and conformance/malformed as data/ and
        # malformed/, and the tabix corpus as tabix/.
        key = relative.removeprefix("conformance/")
        return f"s3://{S3_BUCKET}/{key}"
    raise ValueError(transport)


TRANSPORTS = ["local", "http", "s3"]


@pytest.fixture(params=TRANSPORTS)
def transport(request):
    return request.param
