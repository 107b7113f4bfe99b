//! Copy one region of a local or remote BAM file into a new indexed BAM file, as
//! `samtools view -b --write-index -o OUT.bam##idx##OUT.bam.bai IN REGION` does.
//!
//! `cargo run -p hts-bam --example region_to_bam -- FILE_OR_URL REGION OUT.bam`
//! (writes OUT.bam and OUT.bam.bai; the input's index is found next to it)

use bam::index::build::Scheme;
use bam::{parse_region, OpenOptions, OutputFormat, Reader, Writer, WriterOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, region, output] = args.as_slice() else {
        eprintln!("usage: region_to_bam FILE_OR_URL REGION OUT.bam");
        std::process::exit(2);
    };
    let mut reader = Reader::open(input, &OpenOptions::default())?;
    reader.load_index(None)?;
    let target = parse_region(region, reader.header())?;

    let options = WriterOptions {
        format: OutputFormat::Bam,
        index: Some(Scheme::Bai),
        name: output.clone(),
        ..WriterOptions::default()
    };
    let file = std::fs::File::create(output)?;
    let mut writer = Writer::new(file, reader.header(), &options)?;
    let mut n = 0u64;
    for record in reader.query(target)? {
        writer.write_record(&record?)?;
        n += 1;
    }
    let (_, index) = writer.finish()?;
    if let Some(index) = index {
        index.write(std::fs::File::create(format!("{output}.bai"))?)?;
    }
    eprintln!("{region}: {n} records written to {output}");
    Ok(())
}
