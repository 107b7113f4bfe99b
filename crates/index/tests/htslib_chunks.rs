//! The chunks of every query equal, exactly, those htslib 1.16's `hts_itr_query` chose for
//! every index of the corpus (tests/data/chunks.tsv, made by tests/data/make_chunks.py with
//! tests/data/oracle.c linked against the system libhts 1.16): regions at every bin-level
//! boundary, past the reference and scheme ends, `beg == end`, `end < beg`, references beyond
//! the index, the region `*`, and which files fail to load at all.

mod common;

use std::collections::HashMap;

use common::fixture;
use index::{Chunk, Index};

#[test]
fn chunks_equal_htslib() {
    let text = include_str!("data/chunks.tsv");
    let mut cache: HashMap<String, Option<Index>> = HashMap::new();
    let (mut rows, mut non_empty) = (0, 0);
    for line in text.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 5, "{line}");
        let idx = cache
            .entry(f[0].to_string())
            .or_insert_with(|| index::read(fixture(f[0])).ok());
        let tid: i64 = f[1].parse().unwrap();
        // htslib clamps a negative start to 0; our API takes unsigned positions.
        let beg = f[2].parse::<i64>().unwrap().max(0) as u64;
        let end: u64 = f[3].parse().unwrap();
        let want = f[4];
        rows += 1;
        let Some(idx) = idx else {
            assert_eq!(
                want, "loadfail",
                "{}: we failed to load what htslib loads",
                f[0]
            );
            continue;
        };
        assert_ne!(
            want, "loadfail",
            "{}: htslib fails to load it, we did not",
            f[0]
        );
        let got = if tid == -2 {
            match idx.unplaced_start() {
                Some(v) => v.raw().to_string(),
                None => "null".to_string(),
            }
        } else {
            match idx.query_checked(tid as usize, beg, end) {
                None => "null".to_string(),
                Some(chunks) => {
                    if !chunks.is_empty() {
                        non_empty += 1;
                    }
                    chunks
                        .iter()
                        .map(|c: &Chunk| format!("{}:{}", c.start.raw(), c.end.raw()))
                        .collect::<Vec<_>>()
                        .join(",")
                }
            }
        };
        assert_eq!(got, want, "{line}");
    }
    assert!(
        rows > 4000 && non_empty > 1000,
        "{rows} rows, {non_empty} non-empty"
    );
}
