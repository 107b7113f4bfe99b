//! CRAM block decoding throughput on real blocks, by method (rANS 4x8 order 0 and 1, gzip, the
//! others if present), and the MD5 a slice's reference span is checked with.
//!
//! Data: the first containers of `HTS_BENCH_CRAM`, else `~/.cache/hts-bench/bench-12500000.cram`
//! (`cargo xtask bench-data --cram` makes it); none there, the benchmark says so and measures
//! MD5 alone.

use std::hint::black_box;
use std::io::Read;
use std::path::PathBuf;

use cram::num::Cursor;
use cram::{Block, ContainerHeader, FileDefinition, Method};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

/// Bytes read from the file's start: a few dozen containers of the benchmark CRAM (each about
/// 10 000 records), enough for every series' blocks, short enough for one iteration.
const PREFIX: u64 = 24 << 20;

fn cram_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("HTS_BENCH_CRAM") {
        return Some(PathBuf::from(p));
    }
    let home = std::env::var_os("HOME")?;
    let p = PathBuf::from(home).join(".cache/hts-bench/bench-12500000.cram");
    p.exists().then_some(p)
}

/// Every block of the containers wholly within the file's first [`PREFIX`] bytes.
fn load_blocks(data: &[u8]) -> Vec<Block<'_>> {
    let version = FileDefinition::parse(data)
        .expect("benchmark CRAM has a file definition")
        .version;
    let mut blocks = Vec::new();
    let mut pos = FileDefinition::LEN;
    while let Ok(h) = ContainerHeader::parse_header(&data[pos..], pos as u64, version) {
        let body = pos + h.header_len;
        let Some(end) = body.checked_add(h.length).filter(|&e| e <= data.len()) else {
            break;
        };
        let mut c = Cursor::new(&data[body..end], body as u64);
        for _ in 0..h.blocks {
            blocks.push(Block::read(&mut c, version).expect("benchmark CRAM block reads"));
        }
        pos = end;
    }
    blocks
}

/// The method's name with, for rANS 4x8, the order its first byte names.
fn kind(b: &Block<'_>) -> String {
    match b.method {
        Method::Rans4x8 => format!("rans4x8-o{}", b.data.first().copied().unwrap_or(9)),
        m => format!("{m:?}").to_lowercase(),
    }
}

fn bench_blocks(c: &mut Criterion) {
    let Some(path) = cram_path() else {
        eprintln!("cram_codecs: no benchmark CRAM (HTS_BENCH_CRAM unset, none in the cache)");
        return;
    };
    let mut data = Vec::new();
    std::fs::File::open(&path)
        .and_then(|f| f.take(PREFIX).read_to_end(&mut data))
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let blocks = load_blocks(&data);
    let mut kinds: Vec<String> = blocks.iter().map(kind).collect();
    kinds.sort();
    kinds.dedup();
    let mut g = c.benchmark_group("cram_block_decode");
    for k in kinds {
        let these: Vec<&Block<'_>> = blocks
            .iter()
            .filter(|b| kind(b) == k && b.method != Method::Raw)
            .collect();
        let raw: usize = these.iter().map(|b| b.raw_size).sum();
        if raw == 0 {
            continue;
        }
        eprintln!(
            "cram_codecs: {k}: {} blocks, {raw} bytes decoded",
            these.len()
        );
        g.throughput(Throughput::Bytes(raw as u64));
        g.bench_function(&k, |bch| {
            bch.iter(|| {
                for b in &these {
                    black_box(b.decode().expect("benchmark block decodes"));
                }
            })
        });
    }
    g.finish();
}

fn bench_md5(c: &mut Criterion) {
    // MD5's speed does not depend on the bytes: a reference-like span of 4 MB.
    let span: Vec<u8> = (0..4u32 << 20)
        .map(|i| b"ACGT"[(i * 7 % 13 % 4) as usize])
        .collect();
    let mut g = c.benchmark_group("cram_md5");
    g.throughput(Throughput::Bytes(span.len() as u64));
    g.bench_function("digest_4MB", |b| {
        b.iter(|| black_box(cram::md5::digest(&span)))
    });
    g.finish();
}

criterion_group!(benches, bench_blocks, bench_md5);
criterion_main!(benches);
