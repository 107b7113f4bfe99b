//! Telling BAM from what else a user may hand over (SAM, CRAM, VCF, an index ...), so that a
//! wrong input is refused with one line that says what it is, as htslib's format detection
//! lets samtools say.

use std::io::Read;

use crate::header::Header;
use crate::{Error, Result};

/// How many bytes are looked at to name a format that is not BAM.
const SNIFF: usize = 512;

/// Reads the header of a BAM stream after checking its magic; anything else is
/// [`Error::NotBam`] naming the format found.
pub(crate) fn read_header<S: bgzf::Source>(
    bgzf: &mut bgzf::Reader<S>,
    name: &str,
) -> Result<Header> {
    let mut prefix = Vec::with_capacity(4);
    take(bgzf, 4, &mut prefix, name)?;
    if prefix == b"BAM\x01" {
        return Header::read(&mut (&prefix[..]).chain(&mut *bgzf), name);
    }
    if prefix.len() == 4 {
        take(bgzf, SNIFF as u64, &mut prefix, name)?;
    }
    let mut format = describe(&prefix).to_string();
    if bgzf.format() != bgzf::Format::Raw && !prefix.is_empty() {
        format.push_str(&format!(" ({} compressed)", bgzf.format()));
    }
    Err(Error::NotBam {
        name: name.to_string(),
        format,
    })
}

/// Appends up to `n` more bytes of the data to `buf` (fewer at its end).
fn take<S: bgzf::Source>(
    bgzf: &mut bgzf::Reader<S>,
    n: u64,
    buf: &mut Vec<u8>,
    name: &str,
) -> Result<()> {
    let at = buf.len() as u64;
    (&mut *bgzf)
        .take(n)
        .read_to_end(buf)
        .map(drop)
        .map_err(|e| Error::from_io(e, name, at))
}

/// What the first bytes of the (decompressed) data look like.
///
/// ```
/// # use bam::format::describe;
/// assert_eq!(describe(b"CRAM\x03\x00"), "CRAM");
/// assert_eq!(describe(b"@HD\tVN:1.6\n"), "SAM");
/// assert_eq!(describe(b"r1\t0\tchr1\t1\t60\t4M\t*\t0\t0\tACGT\t*\n"), "SAM");
/// assert_eq!(describe(b""), "an empty file");
/// ```
pub fn describe(data: &[u8]) -> &'static str {
    let starts = |m: &[u8]| data.starts_with(m);
    if data.is_empty() {
        return "an empty file";
    }
    if starts(b"CRAM") {
        return "CRAM";
    }
    if starts(b"BAM\x01") {
        return "BAM";
    }
    if starts(b"BAI\x01") {
        return "a BAI index";
    }
    if starts(b"CSI\x01") {
        return "a CSI index";
    }
    if starts(b"TBI\x01") {
        return "a tabix index";
    }
    if starts(b"BCF\x02") || starts(b"BCF\x04") {
        return "BCF";
    }
    if starts(b"##fileformat=VCF") {
        return "VCF";
    }
    let first_line = data.split(|&b| b == b'\n').next().unwrap_or(data);
    let header_line = first_line.len() >= 4
        && first_line[0] == b'@'
        && first_line[1].is_ascii_alphabetic()
        && first_line[2].is_ascii_alphabetic()
        && first_line[3] == b'\t';
    let columns = first_line.split(|&b| b == b'\t').count();
    if header_line || (columns >= 11 && first_line.iter().all(|&b| b >= b' ' || b == b'\t')) {
        return "SAM";
    }
    if data[0] == b'>' {
        return "FASTA";
    }
    if data[0] == b'@' {
        return "FASTQ";
    }
    "not a format hts knows"
}
