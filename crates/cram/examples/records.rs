//! Prints each record of a local CRAM file: name, flag, reference, position, CIGAR, length.
//!
//! ```text
//! cargo run -p hts-cram --example records -- fixtures/cram/aligned-3.0.cram fixtures/cram/ref.fa
//! ```

use std::io::Write;
use std::path::Path;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(file) = args.first() else {
        eprintln!("usage: records FILE.cram [REF.fa]");
        std::process::exit(1);
    };
    let fasta = match args.get(1) {
        Some(r) => Some(cram::Fasta::open(Path::new(r))?),
        None => None,
    };
    let mut reader = cram::Reader::open(std::fs::File::open(file)?, file, fasta)?;
    let names: Vec<String> = reader
        .header()
        .references
        .iter()
        .map(|(n, _)| String::from_utf8_lossy(n).into_owned())
        .collect();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    while let Some(records) = reader.next_container()? {
        for a in records {
            let cigar: String = a
                .cigar
                .iter()
                .map(|c| format!("{}{}", c >> 4, char::from(b"MIDNSHP=X"[(c & 0xf) as usize])))
                .collect();
            let rname = usize::try_from(a.ref_id).map_or("*", |i| names[i].as_str());
            // A closed pipe ends the loop with an error, not a panic.
            writeln!(
                out,
                "{}\t{}\t{rname}\t{}\t{}\t{}",
                String::from_utf8_lossy(&a.name),
                a.flags,
                a.pos,
                if cigar.is_empty() { "*" } else { &cigar },
                a.seq.len()
            )?;
        }
    }
    out.flush()?;
    Ok(())
}
