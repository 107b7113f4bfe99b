//! BAM record decoding (`bam::Record::decode`) and SAM formatting (`bam::write_sam`), measured
//! separately, in records per second.
//!
//! Data: the records of the fixture `rand.bam`, or the first records of `HTS_BENCH_BAM`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};

/// Caps the set for a large `HTS_BENCH_BAM` so one iteration stays in the milliseconds.
const MAX_RECORDS: usize = 20_000;

fn records(c: &mut Criterion) {
    let path = benches::bench_bam("rand.bam");
    let set = benches::read_records(&path, MAX_RECORDS)
        .unwrap_or_else(|e| panic!("cannot read records of {}: {e}", path.display()));
    assert!(!set.records.is_empty(), "{} has no records", path.display());
    let n_ref = set.header.refs().len();

    let decoded: Vec<bam::Record> = set
        .records
        .iter()
        .map(|data| bam::Record::decode(data.clone(), n_ref).expect("fixture record decodes"))
        .collect();
    let mut line = Vec::new();
    for r in &decoded {
        bam::write_sam(r, &set.header, &mut line).expect("fixture record formats");
    }
    let sam_bytes = line.len();
    eprintln!(
        "records: {} records, {} record bytes, {sam_bytes} SAM bytes from {}",
        set.records.len(),
        set.bytes(),
        path.display()
    );

    let mut group = c.benchmark_group(format!("records/{}", benches::short_name(&path)));
    group.throughput(Throughput::Elements(set.records.len() as u64));

    // decode takes ownership of its bytes, so each batch gets a fresh copy made outside the
    // timing.
    group.bench_function("decode", |bench| {
        bench.iter_batched(
            || set.records.clone(),
            |records| {
                // Returned, so criterion frees the records after the timing, as it made them
                // before.
                records
                    .into_iter()
                    .map(|data| bam::Record::decode(data, n_ref).expect("checked above"))
                    .collect::<Vec<bam::Record>>()
            },
            BatchSize::LargeInput,
        )
    });

    let mut out = Vec::with_capacity(sam_bytes);
    group.bench_function("write_sam", |bench| {
        bench.iter(|| {
            out.clear();
            for r in &decoded {
                bam::write_sam(black_box(r), &set.header, &mut out).expect("checked above");
            }
            black_box(out.len())
        })
    });

    group.finish();
}

criterion_group! {
    name = benches;
    config = benches::criterion_config();
    targets = records
}
criterion_main!(benches);
