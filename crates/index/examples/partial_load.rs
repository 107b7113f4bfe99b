//! Loads only the references a query needs from an index, as a remote reader would: the file is
//! handed to the loader in growing prefixes (as if fetched in bounded pieces) until it says the
//! prefix covers the references asked for, then the index is queried.
//!
//! ```text
//! cargo run --release -p hts-index --example partial_load -- INDEX [TID...]
//! ```
//!
//! With no TID the whole index is loaded. Prints the bytes fetched and parsed, and the parse
//! times of the whole file and of the partial load.

use std::process::ExitCode;
use std::time::Instant;

use index::{Index, Loader, Outcome, Wanted};

/// The first piece fetched; each further piece doubles what is held (as a transport would grow
/// its requests).
const FIRST_PIECE: usize = 64 * 1024;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: partial_load INDEX [TID...]");
        return ExitCode::FAILURE;
    };
    let tids: Result<Vec<usize>, _> = args[1..].iter().map(|t| t.parse()).collect();
    let wanted = match tids {
        Ok(t) if t.is_empty() => Wanted::all(),
        Ok(t) => Wanted::refs(t),
        Err(e) => {
            eprintln!("partial_load: bad reference id: {e}");
            return ExitCode::FAILURE;
        }
    };
    match run(path, &wanted) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("partial_load: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(path: &str, wanted: &Wanted) -> Result<(), Box<dyn std::error::Error>> {
    let file = std::fs::read(path)?;
    let loader = Loader::new(path)
        .wanted(wanted.clone())
        .file_len(file.len() as u64);

    // The transport's loop: parse what is held, fetch more while the loader asks for it.
    let mut held = FIRST_PIECE.min(file.len());
    let mut pieces = 1;
    let t = Instant::now();
    let loaded = loop {
        match loader.read_prefix(&file[..held])? {
            Outcome::Loaded(l) => break l,
            Outcome::NeedMore(more) => {
                eprintln!(
                    "  {held} bytes held: need more (stream ended in {:?} at byte {})",
                    more.part, more.offset
                );
                held = (held * 2).min(file.len());
                pieces += 1;
            }
        }
    };
    let partial_time = t.elapsed();

    let t = Instant::now();
    let whole = Index::from_bytes(path, &file)?;
    let whole_time = t.elapsed();

    let index = &loaded.index;
    println!(
        "{path}: {} bytes, {} references",
        file.len(),
        index.n_refs()
    );
    println!(
        "wanted {}: fetched {held} bytes in {pieces} pieces; parsed {} stream bytes from {} stored bytes",
        wanted.tids().map_or("all".to_string(), |t| format!("{t:?}")),
        loaded.consumed,
        loaded
            .consumed_input
            .map_or("an unknown number of".to_string(), |n| n.to_string()),
    );
    println!("parse time: partial (all pieces) {partial_time:?}; whole file {whole_time:?}");
    for &tid in wanted.tids().unwrap_or(&[0]) {
        let chunks = index.query_loaded(tid, 0, 1 << 40)?.unwrap_or_default();
        assert_eq!(Some(&chunks), whole.query_checked(tid, 0, 1 << 40).as_ref());
        println!(
            "reference {tid}: {} chunks for the whole reference",
            chunks.len()
        );
    }
    Ok(())
}
