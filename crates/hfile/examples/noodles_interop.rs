//! Another Rust BAM reader (noodles) on our transport: an `HFile` is `Read + BufRead + Seek`, so
//! noodles reads a remote BAM and its index through bounded HTTP requests.
//!
//! `cargo run -p hts-hfile --example noodles_interop -- URL_OR_PATH INDEX REGION`
//! e.g. `... http://127.0.0.1:8000/conformance/data/rand.bam \
//!           http://127.0.0.1:8000/conformance/data/rand.bam.bai chr1:10000-10500`
//! (`cargo xtask serve` serves `fixtures/` on port 8000). Set `HFILE_VERBOSE=1` to see requests.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [file, index, region] = args.as_slice() else {
        eprintln!("usage: noodles_interop URL_OR_PATH INDEX REGION");
        std::process::exit(2);
    };
    let options = hfile::OpenOptions {
        verbosity: u8::from(std::env::var_os("HFILE_VERBOSE").is_some()),
        ..Default::default()
    };
    let index = noodles_bam::bai::io::Reader::new(hfile::open(index, &options)?).read_index()?;
    let mut reader = noodles_bam::io::Reader::new(hfile::open(file, &options)?);
    let header = reader.read_header()?;
    let region = region.parse()?;
    let mut n = 0u64;
    for record in reader.query(&header, &index, &region)?.records() {
        let record = record?;
        n += 1;
        if n <= 3 {
            let name = record.name().map(|n| n.to_string()).unwrap_or_default();
            println!(
                "{name}\tflag {}\t{:?}",
                u16::from(record.flags()),
                record.alignment_start().transpose()?
            );
        }
    }
    println!("{n} records overlap {region}");
    let stats = hfile::transfer_stats();
    println!(
        "{} requests, {} bytes, {} new connection(s), {} unbounded",
        stats.requests, stats.bytes_received, stats.new_connections, stats.unbounded_requests
    );
    Ok(())
}
