//! Counts the records of a BAM or CRAM file, or of its regions, local or remote:
//!
//! ```text
//! cargo run -p hts --example count -- FILE [REGION...]
//! HTS_REFERENCE=ref.fa cargo run -p hts --example count -- https://example.org/x.cram chr1:1-1000
//! ```

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(file) = args.first() else {
        eprintln!("usage: count FILE [REGION...]");
        return ExitCode::from(2);
    };
    match count(file, &args[1..]) {
        Ok(n) => {
            println!("{n}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("count: {e}");
            ExitCode::FAILURE
        }
    }
}

fn count(file: &str, given: &[String]) -> Result<u64, Box<dyn std::error::Error>> {
    let mut options = hts::Options::new();
    if let Ok(reference) = std::env::var("HTS_REFERENCE") {
        options = options.reference(reference);
    }
    let mut reader = hts::alignment::Reader::open(file, &options)?;
    let regions = given
        .iter()
        .map(|r| region::parse_region(r, reader.header()))
        .collect::<Result<Vec<_>, _>>()?;
    let records = if regions.is_empty() {
        reader.records()?
    } else {
        reader.query(&regions)?
    };
    let mut n = 0;
    for record in records {
        record?;
        n += 1;
    }
    Ok(n)
}
