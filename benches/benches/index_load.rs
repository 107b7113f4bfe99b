//! Loading an index: the whole file, and only the first reference (what a query on chr1 needs
//! from a remote index: the loader stops after it), for the BAI and the CSI of a BAM.
//!
//! Data: the indexes of `HTS_BENCH_BAM` (e.g. `~/.cache/hts-bench/bench-12500000.bam`), else of
//! the fixtures `manyrefs.bam` (BAI) and `rand.bam` (CSI).

use std::hint::black_box;
use std::path::{Path, PathBuf};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use index::{Index, Loader, Outcome, Wanted};

fn indexes() -> Vec<PathBuf> {
    let with = |bam: &Path, ext: &str| {
        let mut s = bam.as_os_str().to_owned();
        s.push(ext);
        PathBuf::from(s)
    };
    match std::env::var_os(benches::BAM_ENV) {
        Some(p) if !p.is_empty() => {
            let bam = PathBuf::from(p);
            [".bai", ".csi"]
                .iter()
                .map(|e| with(&bam, e))
                .filter(|p| p.exists())
                .collect()
        }
        _ => vec![
            with(&benches::fixture("manyrefs.bam"), ".bai"),
            with(&benches::fixture("rand.bam"), ".csi"),
        ],
    }
}

fn index_load(c: &mut Criterion) {
    for path in indexes() {
        let name = path.display().to_string();
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {name}: {e}"));
        let first = Loader::new(name.as_str()).wanted(Wanted::refs([0]));
        let loaded = first
            .read(&bytes[..])
            .unwrap_or_else(|e| panic!("cannot parse {name}: {e}"));
        let prefix = loaded.consumed_input.map_or(bytes.len(), |n| n as usize);
        eprintln!(
            "index_load: {name}: {} bytes stored; reference 0 ends at byte {} of the stream, \
             byte {prefix} of the file",
            bytes.len(),
            loaded.consumed,
        );

        let mut group = c.benchmark_group(format!("index_load/{}", benches::short_name(&path)));
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_function("whole", |b| {
            b.iter(|| Index::from_bytes(&name, black_box(&bytes)).is_ok())
        });
        group.bench_function("first_ref_of_whole_file", |b| {
            b.iter(|| first.read(black_box(&bytes[..])).is_ok())
        });
        group.throughput(Throughput::Bytes(prefix as u64));
        group.bench_function("first_ref_from_its_prefix", |b| {
            b.iter(|| {
                matches!(
                    first.read_prefix(black_box(&bytes[..prefix])),
                    Ok(Outcome::Loaded(_))
                )
            })
        });
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = benches::criterion_config();
    targets = index_load
}
criterion_main!(benches);
