//! Prints the chunks htslib would read for a region.
//!
//! ```text
//! cargo run -p hts-index --example chunks -- INDEX TID BEG END
//! ```
//!
//! TID is the 0-based reference number; BEG and END are 0-based, half-open. TID `*` prints where
//! reading starts for unplaced reads instead.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: chunks INDEX TID BEG END   (TID 0-based or '*'; BEG/END 0-based half-open)";
    let Some(path) = args.first() else {
        eprintln!("{usage}");
        return ExitCode::from(2);
    };
    let index = match index::read(path) {
        Ok(index) => index,
        Err(e) => {
            eprintln!("chunks: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!(
        "{:?} min_shift {} depth {} n_refs {}",
        index.kind(),
        index.min_shift(),
        index.depth(),
        index.n_refs()
    );
    if args.get(1).map(String::as_str) == Some("*") {
        match index.unplaced_start() {
            Some(v) => println!("unplaced reads: read from {v} to the end of the file"),
            None => println!("unplaced reads: no iterator (htslib returns NULL)"),
        }
        return ExitCode::SUCCESS;
    }
    let parsed: Option<(usize, u64, u64)> = (|| {
        Some((
            args.get(1)?.parse().ok()?,
            args.get(2)?.parse().ok()?,
            args.get(3)?.parse().ok()?,
        ))
    })();
    let Some((tid, beg, end)) = parsed else {
        eprintln!("{usage}");
        return ExitCode::from(2);
    };
    if let Some(c) = index.mapped_unmapped(tid) {
        println!(
            "reference {tid}: {} mapped, {} unmapped",
            c.mapped, c.unmapped
        );
    }
    match index.query_checked(tid, beg, end) {
        None => println!("no iterator (reference beyond the index, or end < beg)"),
        Some(chunks) => {
            for c in &chunks {
                println!("{}\t{}", c.start, c.end);
            }
            println!("{} chunks", chunks.len());
        }
    }
    ExitCode::SUCCESS
}
