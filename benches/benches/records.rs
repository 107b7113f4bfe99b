//! The stages after inflation, each as a throughput of uncompressed BAM record bytes so that
//! they compare with each other and with `inflate` (which reports inflated bytes too):
//!
//! - `parse/owned`: `Record::decode` of a copied buffer (what `read_record` costs on top of the
//!   copy);
//! - `parse/in_place`: `Record::decode_in`, the in-place parse `hts view` uses;
//! - `sam/write_sam`: SAM text of decoded records, one `write_sam` each;
//! - `sam/sam_writer`: the same through `SamWriter` (output buffering included), to a sink.
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
    let bytes = set.bytes() as u64;

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
        "records: {} records, {bytes} record bytes, {sam_bytes} SAM bytes from {}",
        set.records.len(),
        path.display()
    );
    let name = benches::short_name(&path);

    let mut group = c.benchmark_group(format!("parse/{name}"));
    group.throughput(Throughput::Bytes(bytes));
    // decode takes ownership of its bytes, so each batch gets a fresh copy made outside the
    // timing.
    group.bench_function("owned", |bench| {
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
    let mut scratch = Vec::new();
    group.bench_function("in_place", |bench| {
        bench.iter(|| {
            let mut flags = 0u64;
            for data in &set.records {
                let r = bam::Record::decode_in(black_box(data), n_ref, &mut scratch)
                    .expect("checked above");
                flags += u64::from(r.flags().bits());
            }
            black_box(flags)
        })
    });
    group.finish();

    let mut group = c.benchmark_group(format!("sam/{name}"));
    group.throughput(Throughput::Bytes(bytes));
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
    group.bench_function("sam_writer", |bench| {
        bench.iter(|| {
            let mut w = bam::SamWriter::new(std::io::sink(), &set.header, 0);
            for r in &decoded {
                w.write_record(black_box(r)).expect("checked above");
            }
            w.finish().expect("a sink takes everything")
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
