//! The README's "As a library" example, which this file keeps compiling (`tests/readme.rs`
//! checks the two are the same): the mapped records of a region of a remote CRAM, read with a
//! remote FASTA. Runs against real URLs only; `examples/count.rs` takes its file and regions
//! from the command line.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let options = hts::Options::new().reference("https://host/GRCh38.fa.gz");
    let mut reader = hts::alignment::Reader::open("https://host/x.cram", &options)?;
    let region = region::parse_region("chr1:1,000,000-1,100,000", reader.header())?;
    let mut records = reader.query(&[region])?;
    let mut n = 0;
    while let Some(record) = records.next_record()? {
        n += u64::from(!record.flags().is_unmapped());
    }
    println!("{n} mapped records");
    Ok(())
}
