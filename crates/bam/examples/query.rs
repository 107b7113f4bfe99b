//! Query regions of a local or remote BAM file and print the records as SAM.
//!
//! `cargo run -p hts-bam --example query -- FILE_OR_URL REGION [REGION ...]`
//! (the index is FILE.csi or FILE.bai; set `BAM_INDEX` to name it explicitly)

use std::io::Write;

use bam::{OpenOptions, Reader};
use region::parse_region;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((file, regions)) = args.split_first() else {
        eprintln!("usage: query FILE_OR_URL REGION [REGION ...]");
        std::process::exit(2);
    };
    let mut reader = Reader::open(file, &OpenOptions::default())?;
    reader.load_index(std::env::var("BAM_INDEX").ok().as_deref())?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut line = Vec::new();
    for region in regions {
        let target = match parse_region(region, reader.header()) {
            Ok(target) => target,
            Err(e) => {
                eprintln!("skipped: {e}");
                continue;
            }
        };
        let mut query = reader.query(target)?;
        let mut n = 0u64;
        while let Some(record) = query.next_record()? {
            line.clear();
            bam::write_sam(&record, query.header(), &mut line)?;
            out.write_all(&line)?;
            n += 1;
        }
        eprintln!("{region}: {n} records");
    }
    out.flush()?;
    Ok(())
}
