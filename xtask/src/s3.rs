//! `cargo xtask s3` and `cargo xtask s3-serve`: hts against a real S3 (s3s-fs, installed on
//! first use), for a person to see; the checks themselves are `crates/cli/tests/s3.rs`.

use testkit::s3::{self, S3Stack};

use testkit::FIVE_REGIONS;

use crate::release_hts;

pub const HELP: &str = "\
cargo xtask s3 [REGION]
  Serves the conformance corpus as bucket 'corpus' from s3s-fs (behind the test server in
  proxy mode, which logs every request) and shows `hts view -v 1 -X s3://corpus/data/rand.bam
  s3://corpus/data/rand.bam.bai REGION` (default chr1:10000-10500) with hts's log and the
  server's, then the byte totals of s3://, a boto3 pre-signed URL and plain HTTP on the
  5-region query. s3s-fs and boto3 are installed into ~/.cache/hts-tools on first use.";

pub const SERVE_HELP: &str = "\
cargo xtask s3-serve
  Serves the conformance corpus as bucket 'corpus' from s3s-fs on 127.0.0.1 until killed, and
  prints the environment for hts to reach it.";

const BUCKET: &str = "corpus";

fn corpus_stack() -> Result<S3Stack, String> {
    let objects = s3::corpus_objects(&testkit::corpus_dir())?;
    S3Stack::start(&[(BUCKET, objects)], testkit::Link::default())
}

pub fn cmd(args: &[String]) -> Result<(), String> {
    let hts = release_hts()?;
    let python = s3::boto3_python()?;
    let stack = corpus_stack()?;
    let region = args.first().map(String::as_str).unwrap_or(FIVE_REGIONS[0]);
    println!("{}", s3::demo(&hts, &stack, BUCKET, region)?);
    println!(
        "{}",
        s3::byte_totals(&hts, &stack, &python, BUCKET, &FIVE_REGIONS)?
    );
    Ok(())
}

pub fn serve(_args: &[String]) -> Result<(), String> {
    let stack = corpus_stack()?;
    println!("s3s-fs serves bucket '{BUCKET}' (fixtures/conformance); for hts:");
    for (key, value) in stack.env(s3::SECRET_KEY) {
        if let (Some(value), false) = (value, key.ends_with("_FILE")) {
            println!("  export {key}={value}");
        }
    }
    println!("  hts view s3://{BUCKET}/data/rand.bam chr1:10000-10500");
    loop {
        std::thread::sleep(std::time::Duration::from_secs(3600));
    }
}
