//! BGZF inflate throughput on real blocks: libdeflater against flate2's default backend, on the
//! raw deflate data, the full `bgzf::block::inflate` path (libdeflater plus CRC32 check), and
//! the whole `bgzf::Reader` (reading, inflating and handing out blocks in place) with and
//! without worker threads.
//!
//! Data: the first blocks of `HTS_BENCH_BAM`, else of the fixture `rand.bam`.

use std::hint::black_box;

use bgzf::block::MAX_BLOCK_SIZE;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use flate2::{Decompress, FlushDecompress, Status};

/// Enough blocks (up to ~13 MB inflated) to smooth out block-to-block variation while keeping
/// one iteration short.
const MAX_BLOCKS: usize = 200;

/// Raw-deflate inflate of one payload with flate2; returns the inflated length.
fn flate2_inflate(d: &mut Decompress, payload: &[u8], out: &mut [u8]) -> usize {
    d.reset(false);
    let status = d
        .decompress(payload, out, FlushDecompress::Finish)
        .expect("fixture block inflates with flate2");
    assert_eq!(
        status,
        Status::StreamEnd,
        "flate2 did not reach the block's end"
    );
    d.total_out() as usize
}

/// The benchmark file's non-empty blocks (up to [`MAX_BLOCKS`]), its name, and the blocks'
/// inflated size.
fn load_blocks() -> (String, Vec<bgzf::RawBlock>, usize) {
    let path = benches::bench_bam("rand.bam");
    let name = path.display().to_string();
    let blocks: Vec<bgzf::RawBlock> = benches::read_blocks(&path, MAX_BLOCKS)
        .unwrap_or_else(|e| panic!("cannot split {name} into BGZF blocks: {e}"))
        .into_iter()
        .filter(|b| b.isize() > 0)
        .collect();
    assert!(!blocks.is_empty(), "{name} has no non-empty BGZF block");
    let total: usize = blocks.iter().map(|b| b.isize() as usize).sum();
    let compressed: usize = blocks.iter().map(|b| b.payload().len()).sum();
    eprintln!(
        "inflate: {} blocks, {compressed} deflate bytes -> {total} bytes from {name}",
        blocks.len()
    );
    (name, blocks, total)
}

/// Both decoders must produce what the trailers promise before their speed means anything.
fn check_decoders(
    blocks: &[bgzf::RawBlock],
    libdeflate: &mut libdeflater::Decompressor,
    zlib: &mut Decompress,
    out: &mut [u8],
) {
    for b in blocks {
        let n = libdeflate
            .deflate_decompress(b.payload(), out)
            .expect("fixture block inflates with libdeflater");
        assert_eq!(n, b.isize() as usize, "libdeflater size at {}", b.coffset());
        let n = flate2_inflate(zlib, b.payload(), out);
        assert_eq!(n, b.isize() as usize, "flate2 size at {}", b.coffset());
    }
}

fn inflate(c: &mut Criterion) {
    let (name, blocks, total) = load_blocks();
    let mut out = vec![0u8; MAX_BLOCK_SIZE];
    let mut libdeflate = libdeflater::Decompressor::new();
    let mut zlib = Decompress::new(false);
    check_decoders(&blocks, &mut libdeflate, &mut zlib, &mut out);

    let path = benches::bench_bam("rand.bam");
    let mut group = c.benchmark_group(format!("inflate/{}", benches::short_name(&path)));
    group.throughput(Throughput::Bytes(total as u64));

    group.bench_function("libdeflater", |bench| {
        bench.iter(|| {
            let mut n = 0;
            for b in &blocks {
                n += libdeflate
                    .deflate_decompress(black_box(b.payload()), &mut out)
                    .expect("checked above");
            }
            black_box(n)
        })
    });

    group.bench_function("flate2", |bench| {
        bench.iter(|| {
            let mut n = 0;
            for b in &blocks {
                n += flate2_inflate(&mut zlib, black_box(b.payload()), &mut out);
            }
            black_box(n)
        })
    });

    // What the reader really does per block: inflate, then check CRC32 and ISIZE.
    let mut block_out = Vec::with_capacity(MAX_BLOCK_SIZE);
    group.bench_function("bgzf_block_inflate", |bench| {
        bench.iter(|| {
            let mut n = 0;
            for b in &blocks {
                bgzf::block::inflate(
                    black_box(b.bytes()),
                    b.header_len(),
                    &mut block_out,
                    &mut libdeflate,
                    &name,
                    b.coffset(),
                )
                .expect("fixture block passes its CRC check");
                n += block_out.len();
            }
            black_box(n)
        })
    });

    bench_reader(&mut group, &name, &blocks, total);
    group.finish();
}

/// The whole reader: blocks read from a source, inflated and checked, handed out in place
/// (what `hts view` does before parsing), on the calling thread and on two workers.
fn bench_reader(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    blocks: &[bgzf::RawBlock],
    total: usize,
) {
    let mut file: Vec<u8> = blocks.iter().flat_map(|b| b.bytes().to_vec()).collect();
    file.extend_from_slice(&bgzf::block::EOF_MARKER);
    for threads in [0, 2] {
        group.bench_function(format!("bgzf_reader_{threads}_threads"), |bench| {
            bench.iter(|| {
                let src = hfile::HFile::from_bytes(name, file.clone());
                let mut r = bgzf::Reader::new(src).expect("fixture blocks are BGZF");
                r.set_threads(threads);
                let mut n = 0;
                loop {
                    let len = r.fill_block().expect("checked above").len();
                    if len == 0 {
                        break;
                    }
                    n += len;
                    r.advance(len);
                }
                assert_eq!(n, total);
                black_box(n)
            })
        });
    }
}

criterion_group! {
    name = benches;
    config = benches::criterion_config();
    targets = inflate
}
criterion_main!(benches);
