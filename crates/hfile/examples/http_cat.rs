//! Copies a byte range of a URL (or a local path) to stdout through `std::io::Read + Seek`,
//! then prints what the transfer cost on stderr.
//!
//! ```text
//! cargo run -p hts-hfile --example http_cat -- https://host/x.bam 1000 2000 > part.bin
//! cargo run -p hts-hfile --example http_cat -- Cargo.toml 0 40
//! ```
//!
//! With `HFILE_VERBOSE=1` each request is logged as it is sent and completed.

use std::io::{Read, Seek, SeekFrom, Write};
use std::process::ExitCode;

use hfile::Hints;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(location) = args.first() else {
        eprintln!("usage: http_cat URL|PATH [START [END]]");
        return ExitCode::from(2);
    };
    let number = |i: usize| args.get(i).map(|s| s.parse::<u64>());
    let (start, end) = match (number(1), number(2)) {
        (None, _) => (0, None),
        (Some(Ok(s)), None) => (s, None),
        (Some(Ok(s)), Some(Ok(e))) if e >= s => (s, Some(e)),
        _ => {
            eprintln!("http_cat: START and END must be byte offsets with START <= END");
            return ExitCode::from(2);
        }
    };
    let options = hfile::OpenOptions {
        verbosity: std::env::var("HFILE_VERBOSE")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0),
        ..hfile::OpenOptions::default()
    };
    match copy(location, start, end, &options) {
        Ok(n) => {
            let s = hfile::transfer_stats();
            eprintln!(
                "http_cat: {n} bytes; {} requests, {} bytes received, {} new and {} reused connections",
                s.requests, s.bytes_received, s.new_connections, s.reused_connections
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("http_cat: {e}");
            ExitCode::FAILURE
        }
    }
}

fn copy(
    location: &str,
    start: u64,
    end: Option<u64>,
    options: &hfile::OpenOptions,
) -> std::io::Result<u64> {
    let mut f = hfile::open(location, options)?;
    f.seek(SeekFrom::Start(start))?;
    // The bound travels down as a hint, so the request asks for exactly this span.
    f.set_readahead_limit(end);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let n = match end {
        Some(end) => std::io::copy(&mut f.by_ref().take(end - start), &mut out)?,
        None => std::io::copy(&mut f, &mut out)?,
    };
    out.flush()?;
    Ok(n)
}
