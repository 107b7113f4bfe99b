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
pub(crate) fn read_header(bgzf: &mut bgzf::Reader, name: &str) -> Result<Header> {
    let mut prefix = vec![0u8; 4];
    let n = fill(bgzf, &mut prefix)?;
    if n == 4 && &prefix[..] == b"BAM\x01" {
        return Header::read(&mut (&prefix[..]).chain(&mut *bgzf), name);
    }
    prefix.truncate(n);
    if n == 4 {
        let mut more = vec![0u8; SNIFF];
        let m = fill(bgzf, &mut more)?;
        prefix.extend_from_slice(&more[..m]);
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

/// Reads until `buf` is full or the data ends; the count read.
fn fill(bgzf: &mut bgzf::Reader, buf: &mut [u8]) -> Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        let n = bgzf.read(&mut buf[got..])?;
        if n == 0 {
            break;
        }
        got += n;
    }
    Ok(got)
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
