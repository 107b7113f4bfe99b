//! Index query planning: parsing the index, `Index::query` for a spread of regions, and
//! `index::plan::plan_chunks` over all their chunks, as a multi-region remote query does.
//!
//! Data: `rand.bam.bai` (few references, many bins) and `manyrefs.bam.bai` (5000 references),
//! or the index of `HTS_BENCH_BAM` alone.

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use index::plan::{self, Options};

/// References sampled per file, and windows per reference: a few thousand regions at most.
const MAX_REFS: usize = 200;
const WINDOWS: u64 = 10;
const WIDTH: u64 = 10_000;

fn bams() -> Vec<PathBuf> {
    match std::env::var_os(benches::BAM_ENV) {
        Some(p) if !p.is_empty() => vec![PathBuf::from(p)],
        _ => vec![
            benches::fixture("rand.bam"),
            benches::fixture("manyrefs.bam"),
        ],
    }
}

fn planning(c: &mut Criterion) {
    for bam_path in bams() {
        let index_path = benches::index_path(&bam_path);
        let index_name = index_path.display().to_string();
        let index_bytes =
            std::fs::read(&index_path).unwrap_or_else(|e| panic!("cannot read {index_name}: {e}"));
        let idx = index::Index::from_bytes(&index_name, &index_bytes)
            .unwrap_or_else(|e| panic!("cannot parse {index_name}: {e}"));
        let header = benches::read_header(&bam_path)
            .unwrap_or_else(|e| panic!("cannot read header of {}: {e}", bam_path.display()));
        let size = std::fs::metadata(&bam_path)
            .unwrap_or_else(|e| panic!("cannot stat {}: {e}", bam_path.display()))
            .len();
        let regions = benches::regions(&header, MAX_REFS, WINDOWS, WIDTH);
        assert!(
            !regions.is_empty(),
            "{} has no references",
            bam_path.display()
        );
        let starts = idx.block_starts();
        let chunks: Vec<index::Chunk> = regions
            .iter()
            .flat_map(|r| idx.query(r.tid, r.beg, r.end))
            .collect();
        let options = Options::default();
        eprintln!(
            "planning: {} regions on {} of {} references -> {} chunks, {} spans; {} block starts",
            regions.len(),
            regions
                .iter()
                .map(|r| r.tid)
                .collect::<std::collections::BTreeSet<_>>()
                .len(),
            header.refs().len(),
            chunks.len(),
            plan::plan_chunks(&chunks, &starts, size, &options)
                .spans
                .len(),
            starts.len()
        );

        let mut group = c.benchmark_group(format!("planning/{}", benches::short_name(&index_path)));

        group.throughput(Throughput::Bytes(index_bytes.len() as u64));
        group.bench_function("index_parse", |b| {
            b.iter(|| index::Index::from_bytes(&index_name, black_box(&index_bytes)).is_ok())
        });

        group.throughput(Throughput::Elements(starts.len() as u64));
        group.bench_function("block_starts", |b| b.iter(|| black_box(idx.block_starts())));

        group.throughput(Throughput::Elements(regions.len() as u64));
        group.bench_function("query", |b| {
            b.iter(|| {
                let mut n = 0;
                for r in &regions {
                    n += idx.query(r.tid, r.beg, r.end).len();
                }
                black_box(n)
            })
        });

        group.throughput(Throughput::Elements(chunks.len() as u64));
        group.bench_function("plan", |b| {
            b.iter(|| {
                black_box(plan::plan_chunks(
                    black_box(&chunks),
                    &starts,
                    size,
                    &options,
                ))
            })
        });

        group.throughput(Throughput::Elements(regions.len() as u64));
        group.bench_function("query_and_plan", |b| {
            b.iter(|| {
                let all: Vec<index::Chunk> = regions
                    .iter()
                    .flat_map(|r| idx.query(r.tid, r.beg, r.end))
                    .collect();
                black_box(plan::plan_chunks(&all, &starts, size, &options))
            })
        });

        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = benches::criterion_config();
    targets = planning
}
criterion_main!(benches);
