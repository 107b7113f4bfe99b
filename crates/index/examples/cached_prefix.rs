//! The intended flow of a remote index read with the persistent cache, on a local file standing
//! in for the remote object: look the index up in the cache, parse the cached prefix, fetch
//! (here: read) only the bytes still needed, and store the extended prefix for the next run.
//!
//! ```text
//! cargo run --release -p hts-index --example cached_prefix -- INDEX TID [CACHE_DIR]
//! ```
//!
//! Run it twice: the second run fetches nothing. A real transport takes the validators from the
//! response it gets anyway (`Content-Range` total, `ETag`, `Last-Modified`) and holds the query's
//! output back until they match the cached entry's.

use std::process::ExitCode;

use hfile::cache::{Cache, Validators};
use index::{Loader, Outcome, Wanted};

/// Each fetch asks for at least this much more.
const STEP: usize = 256 * 1024;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(path), Some(Ok(tid))) = (args.first(), args.get(1).map(|t| t.parse::<usize>()))
    else {
        eprintln!("usage: cached_prefix INDEX TID [CACHE_DIR]");
        return ExitCode::FAILURE;
    };
    let cache = match args.get(2) {
        Some(dir) => Some(Cache::new(dir, 64 << 20)),
        None => Cache::from_env(),
    };
    match run(path, tid, cache) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cached_prefix: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(path: &str, tid: usize, cache: Option<Cache>) -> Result<(), Box<dyn std::error::Error>> {
    let object = std::fs::read(path)?;
    let url = format!("https://example.invalid/{path}?signature=not-part-of-the-key");
    // What the server would say about the object.
    let modified = std::fs::metadata(path)?.modified()?;
    let now = Validators {
        size: object.len() as u64,
        etag: None,
        last_modified: Some(format!("{modified:?}")),
    };

    let mut held = Vec::new();
    if let Some(entry) = cache.as_ref().and_then(|c| c.lookup(&url)) {
        match entry.check(&now) {
            Ok(()) => held = entry.prefix().to_vec(),
            Err(change) => {
                eprintln!("dropped: {change}");
                cache.as_ref().map(|c| c.remove(&url)).transpose()?;
            }
        }
    }
    let from_cache = held.len();

    let loader = Loader::new(url.as_str())
        .wanted(Wanted::refs([tid]))
        .file_len(object.len() as u64);
    let loaded = loop {
        match loader.read_prefix(&held[..])? {
            Outcome::Loaded(l) => break l,
            Outcome::NeedMore(_) => {
                // The transport: one bounded request for the next piece.
                let end = (held.len() + STEP.max(held.len())).min(object.len());
                held.extend_from_slice(&object[held.len()..end]);
            }
        }
    };
    let fetched = held.len() - from_cache;
    if fetched > 0 {
        if let Some(c) = &cache {
            let result = c.store(&url, &now, &[(from_cache as u64, &held[from_cache..])])?;
            eprintln!("cache: {result:?}");
        }
    }
    let chunks = loaded
        .index
        .query_loaded(tid, 0, 1 << 40)?
        .unwrap_or_default();
    println!(
        "reference {tid}: {} chunks; index bytes: {from_cache} from the cache, {fetched} fetched, {} needed",
        chunks.len(),
        loaded.consumed_input.unwrap_or(loaded.consumed),
    );
    Ok(())
}
