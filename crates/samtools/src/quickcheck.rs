//! `samtools quickcheck`: can the file be opened, is it sequence data, does its header read (with
//! at least one reference), and does it end with the BGZF EOF marker (a CRAM: its EOF
//! container). Only the start of the file and its end are read: on a remote file, small
//! bounded requests.

use std::io::Read;

use bam::header::Header;
use bam::Error;
use hfile::Hints;

/// Could not be opened (or is an index, which htslib will not open as data).
pub const FAIL_OPEN: u32 = 2;
/// Not BAM or SAM.
pub const NOT_SEQUENCE: u32 = 4;
/// The header does not read, or has no references.
pub const BAD_HEADER: u32 = 8;
/// The BGZF EOF marker is missing (or could not be checked).
pub const NO_EOF_BLOCK: u32 = 16;

/// What one file's check found: the status bits (0 when fine) and the messages samtools prints
/// for them (`problems`, shown unless quiet) and at `-vvv` (`details`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// The bits of [`FAIL_OPEN`], [`NOT_SEQUENCE`], [`BAD_HEADER`] and [`NO_EOF_BLOCK`] found.
    pub state: u32,
    /// The messages samtools prints for them (unless quiet).
    pub problems: Vec<String>,
    /// What samtools prints at `-vvv`.
    pub details: Vec<String>,
}

/// How much of the start of the data is read to tell what it is (and, for SAM, its header).
const PEEK: usize = 64 * 1024;

/// The header's first read is bounded to this, as in [`bam::Reader::open`].
const HEADER_READAHEAD: u64 = 64 * 1024;

impl Report {
    fn problem(&mut self, bit: u32, text: String) {
        self.state |= bit;
        self.problems.push(text);
    }
}

/// Checks one file or URL (`-`: standard input), BAM, SAM or CRAM (the facade tells a CRAM by
/// its first bytes; a URL by its name). `unmapped`: a header without references is fine (`-u`).
pub fn check(location: &str, options: &hts::Options, unmapped: bool) -> Report {
    let transport = &options.to_bam().transport;
    if location != "-" && hts::sniff::is_cram(location) {
        check_cram(location, transport, unmapped)
    } else {
        check_bgzf(location, transport, unmapped)
    }
}

/// A BAM or SAM file, or what is neither.
fn check_bgzf(location: &str, transport: &hfile::OpenOptions, unmapped: bool) -> Report {
    let mut rep = Report::default();
    rep.details.push(format!("checking {location}"));
    let Some(mut bgzf) = open_bgzf(location, transport) else {
        rep.problem(
            FAIL_OPEN,
            format!("{location} could not be opened for reading."),
        );
        return rep;
    };
    // The EOF marker is fetched beside the header, not after it.
    if bgzf.format() == bgzf::Format::Bgzf {
        bgzf.advise_eof_check();
    }
    // The first bytes tell the format; an unreadable first block is "not sequence data".
    let mut head = [0u8; 4];
    let got = read_up_to(&mut bgzf, &mut head);
    let kind = match got {
        Err(_) => Kind::Unknown,
        Ok(n) => classify(&head[..n]),
    };
    match kind {
        Kind::Index | Kind::Binary => {
            rep.problem(
                FAIL_OPEN,
                format!("{location} could not be opened for reading."),
            );
            return rep;
        }
        Kind::Unknown => rep.problem(
            NOT_SEQUENCE,
            format!("{location} was not identified as sequence data."),
        ),
        Kind::Bam | Kind::Sam => {
            rep.details.push(format!("opened {location}"));
            rep.details.push(format!("{location} is sequence data"));
            let n_ref = match kind {
                Kind::Bam => {
                    let n = got.unwrap_or(0);
                    let mut chained = (&head[..n]).chain(&mut bgzf);
                    Header::read(&mut chained, location).map(|h| h.refs().len())
                }
                _ => sam_header_refs(&head, &mut bgzf),
            };
            match n_ref {
                Err(_) => rep.problem(
                    BAD_HEADER,
                    format!("{location} caused an error whilst reading its header."),
                ),
                Ok(0) if !unmapped => {
                    rep.problem(BAD_HEADER, format!("{location} had no targets in header."))
                }
                Ok(n) => rep
                    .details
                    .push(format!("{location} has {n} targets in header.")),
            }
        }
    }
    check_eof(&mut bgzf, location, &mut rep);
    rep
}

/// A CRAM file, local or remote: the definition and header container read (else htslib cannot
/// open it), references in the header, and the EOF container at the end (for a remote file,
/// its last bytes alone).
fn check_cram(location: &str, transport: &hfile::OpenOptions, unmapped: bool) -> Report {
    let mut rep = Report::default();
    rep.details.push(format!("checking {location}"));
    let Ok(mut reader) = hts::cram_open::open_unreferenced(location, transport) else {
        rep.problem(
            FAIL_OPEN,
            format!("{location} could not be opened for reading."),
        );
        return rep;
    };
    rep.details.push(format!("opened {location}"));
    rep.details.push(format!("{location} is sequence data"));
    match reader.header().references.len() {
        0 if !unmapped => rep.problem(BAD_HEADER, format!("{location} had no targets in header.")),
        n => rep
            .details
            .push(format!("{location} has {n} targets in header.")),
    }
    let version = reader.version();
    if !version.has_eof_container() {
        rep.details.push(format!(
            "{location} cannot be checked for EOF block because its filetype does not contain one."
        ));
        return rep;
    }
    match reader.tail(version.eof_len()).ok().flatten() {
        Some(t) if version.is_eof_container(&t) => {
            rep.details.push(format!("{location} has good EOF block."))
        }
        Some(_) => rep.problem(
            NO_EOF_BLOCK,
            format!("{location} was missing EOF block when one should be present."),
        ),
        None => rep.problem(
            NO_EOF_BLOCK,
            format!("{location} caused an error whilst checking for EOF block."),
        ),
    }
    rep
}

/// The EOF marker's part of the report: checked where the file's end can be looked at.
fn check_eof(bgzf: &mut bgzf::Reader<hfile::HFile>, location: &str, rep: &mut Report) {
    if bgzf.format() != bgzf::Format::Bgzf {
        rep.details.push(format!(
            "{location} cannot be checked for EOF block because its filetype does not contain one."
        ));
        return;
    }
    if is_stream(location) {
        rep.details.push(format!(
            "{location} cannot be checked for EOF block as it is not seekable."
        ));
        return;
    }
    match bgzf.check_eof_marker() {
        Ok(true) => rep.details.push(format!("{location} has good EOF block.")),
        Ok(false) => rep.problem(
            NO_EOF_BLOCK,
            format!("{location} was missing EOF block when one should be present."),
        ),
        Err(_) => rep.problem(
            NO_EOF_BLOCK,
            format!("{location} caused an error whilst checking for EOF block."),
        ),
    }
}

/// The file (standard input for `-`) as a BGZF reader whose first read is bounded; `None`
/// when it cannot be opened.
fn open_bgzf(location: &str, transport: &hfile::OpenOptions) -> Option<bgzf::Reader<hfile::HFile>> {
    let mut file = if location == "-" {
        hfile::HFile::new(Box::new(hfile::StreamBackend::stdin()))
    } else {
        hfile::open(location, transport).ok()?
    };
    file.set_readahead_limit(Some(HEADER_READAHEAD));
    bgzf::Reader::new(file).ok()
}

/// Standard input, or a local path that is not a regular file (a named pipe, `<(cat x.bam)`):
/// read once, in order, so its end cannot be looked at first (htslib's `hts_check_EOF` gives
/// 2 for it, and samtools passes it). htslib does seek standard input redirected from a
/// regular file; hts reads standard input as a stream always.
fn is_stream(location: &str) -> bool {
    location == "-"
        || (hfile::scheme_of(location).is_none()
            && std::fs::metadata(location).is_ok_and(|m| !m.is_file()))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Bam,
    Sam,
    Index,
    /// Binary data htslib does not recognise: it refuses to open it.
    Binary,
    /// Empty, unreadable or text that is not SAM: opened, but not sequence data.
    Unknown,
}

fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

fn classify(head: &[u8]) -> Kind {
    match head {
        b"BAM\x01" => Kind::Bam,
        b"BAI\x01" | b"CSI\x01" => Kind::Index,
        [] => Kind::Unknown,
        [b'@', ..] => Kind::Sam,
        _ if head
            .iter()
            .all(|b| b.is_ascii_graphic() || b" \t\r\n".contains(b)) =>
        {
            Kind::Unknown
        }
        _ => Kind::Binary,
    }
}

/// The number of `@SQ` lines with `SN` and `LN` in a SAM text header.
fn sam_header_refs(head: &[u8; 4], rest: &mut impl Read) -> Result<usize, Error> {
    let mut text = head.to_vec();
    let mut chunk = vec![0u8; PEEK];
    loop {
        let n = read_up_to(rest, &mut chunk).unwrap_or(0);
        text.extend_from_slice(&chunk[..n]);
        let header_done = text
            .split(|&b| b == b'\n')
            .any(|l| !l.is_empty() && l[0] != b'@');
        if n < chunk.len() || header_done {
            break;
        }
    }
    Ok(text
        .split(|&b| b == b'\n')
        .take_while(|l| l.first() == Some(&b'@'))
        .filter(|l| l.starts_with(b"@SQ\t"))
        .filter(|l| {
            let has = |k: &[u8]| l.split(|&b| b == b'\t').any(|f| f.starts_with(k));
            has(b"SN:") && has(b"LN:")
        })
        .count())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds() {
        assert_eq!(classify(b"BAM\x01"), Kind::Bam);
        assert_eq!(classify(b"BAM\x02"), Kind::Binary);
        assert_eq!(classify(b"CSI\x01"), Kind::Index);
        assert_eq!(classify(b"@HD\t"), Kind::Sam);
        assert_eq!(classify(b"hell"), Kind::Unknown);
        assert_eq!(classify(b""), Kind::Unknown);
    }
}
