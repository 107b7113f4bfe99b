//! BAI and CSI parsing and querying: the whole-file parse, the streaming parser
//! ([`index::Loader::read_prefix`]) on prefixes with some references wanted, queries on every
//! loaded reference, the unplaced start, and the span planner over the chunks found.
#![no_main]

use index::{Index, Loader, Outcome, Wanted};
use libfuzzer_sys::fuzz_target;

/// Queries that cover bin edges, the BAI linear window, and positions past every scheme.
const RANGES: [(u64, u64); 6] = [
    (0, 1),
    (0, 1 << 29),
    (16383, 16385),
    (100_000, 250_000),
    ((1 << 29) - 1, 1 << 30),
    (1 << 40, u64::MAX),
];

fn exercise(index: &Index, size: u64) {
    let starts = index.block_starts();
    let _ = index.unplaced_start();
    let _ = index.max_position();
    for tid in 0..index.n_refs().min(64) {
        let _ = index.mapped_unmapped(tid);
        let _ = index.reference_span(tid);
        for &(beg, end) in &RANGES {
            // A chunk may end before it starts in a damaged index: htslib keeps it (and reads
            // nothing from it), and so do we; what matters is that planning copes.
            let chunks = index.query(tid, beg, end);
            let plan = index::plan::plan_chunks(&chunks, &starts, size, &Default::default());
            for s in &plan.spans {
                assert!(s.start <= s.end, "span {s:?} ends before it starts");
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let size = data.len() as u64;
    let whole = Index::from_bytes("fuzz", data);
    if let Ok(index) = &whole {
        exercise(index, size);
    }
    // The streaming parser, wanting one reference, on a prefix and on the whole.
    let tid = data.first().map_or(0, |&b| usize::from(b % 4));
    let loader = Loader::new("fuzz").wanted(Wanted::refs([tid]));
    let cut = data.len() / 2;
    match loader.read_prefix(&data[..cut]) {
        Ok(Outcome::NeedMore(more)) => {
            assert!(
                more.input_read <= cut as u64,
                "{more:?} read past the prefix"
            );
        }
        Ok(Outcome::Loaded(loaded)) => {
            assert!(loaded.consumed_input.is_none_or(|n| n <= cut as u64));
            let _ = loaded.index.query_loaded(tid, 0, 1 << 20);
        }
        Err(_) => {}
    }
    if let Ok(Outcome::Loaded(loaded)) = loader.clone().file_len(size).read_prefix(data) {
        let got = loaded.index.query_loaded(tid, 0, 1 << 29);
        if let (Ok(Some(part)), Ok(index)) = (&got, &whole) {
            assert_eq!(
                part,
                &index.query(tid, 0, 1 << 29),
                "a partial load answers reference {tid} as the whole file does"
            );
        }
    }
});
