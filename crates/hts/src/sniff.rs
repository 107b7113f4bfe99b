//! Telling CRAM from BAM by the first bytes, as htslib's `hts_detect_format` does (not by the
//! name's suffix): a local file or standard input without consuming what the reader that
//! follows needs. A URL is told by its reader ([`crate::alignment::Reader::open`]).

use std::io::BufRead;

/// Whether `path` names a CRAM file without a request: a local file or standard input whose
/// first bytes say so, or a URL whose path ends in `.cram` (the command line's shortcut: a
/// remote file is not opened twice to tell; [`crate::alignment::Reader`] reads the magic).
pub fn is_cram(path: &str) -> bool {
    if path == "-" {
        return stdin_is_cram();
    }
    if hfile::scheme_of(path).is_some() {
        let path_part = path.split_once('?').map_or(path, |(p, _)| p);
        return path_part.to_ascii_lowercase().ends_with(".cram");
    }
    is_local_cram(path)
}

/// Whether `path` names a local CRAM file (its first bytes say so).
pub fn is_local_cram(path: &str) -> bool {
    matches!(sniff_local(path), Sniffed::Cram)
}

/// What an input is, as far as its first bytes tell.
pub enum Sniffed {
    /// A CRAM file.
    Cram,
    /// Anything else; for a local regular file, the file opened to tell, at its start, so that
    /// the BAM reader need not open it again (samtools opens its input once).
    Other(Option<std::fs::File>),
}

/// [`is_cram`], keeping a local regular file open for the reader that follows.
pub fn sniff(path: &str) -> Sniffed {
    if path == "-" || hfile::scheme_of(path).is_some() {
        return if is_cram(path) {
            Sniffed::Cram
        } else {
            Sniffed::Other(None)
        };
    }
    sniff_local(path)
}

/// A local path's first bytes: CRAM, or the regular file opened and rewound.
fn sniff_local(path: &str) -> Sniffed {
    if path == "-" || hfile::scheme_of(path).is_some() {
        return Sniffed::Other(None);
    }
    // Only a regular file is sniffed: reading a pipe's first bytes would take them from the
    // BAM reader that opens it next (and opening a named pipe would wait for a writer).
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return Sniffed::Other(None);
    }
    let Ok(mut file) = std::fs::File::open(path) else {
        return Sniffed::Other(None);
    };
    let mut magic = [0u8; 4];
    if std::io::Read::read_exact(&mut file, &mut magic).is_ok() && &magic == b"CRAM" {
        return Sniffed::Cram;
    }
    let rewound = std::io::Seek::rewind(&mut file).is_ok();
    Sniffed::Other(rewound.then_some(file))
}

/// Whether standard input starts with CRAM's magic, looked at in stdin's own buffer: nothing
/// is consumed, so the BAM reader that opens `-` otherwise gets every byte.
pub fn stdin_is_cram() -> bool {
    std::io::stdin()
        .lock()
        .fill_buf()
        .is_ok_and(|b| b.starts_with(b"CRAM"))
}
