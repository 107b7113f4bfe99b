//! The BAM header: magic, SAM header text and the binary reference list, read and tidied the way
//! htslib 1.16 does (`bam_hdr_read` followed by `sam_hdr_sanitise`).

use region::RefId;
use std::collections::HashSet;
use std::io::{self, Read};
use std::sync::OnceLock;

use crate::error::{Error, HeaderError};
use crate::header_lines::HeaderLines;

/// Header text and names are read in pieces of this size, so that a length field that lies only
/// costs what the stream really holds.
const READ_PIECE: usize = 64 * 1024;

/// Room reserved up front for the reference list; more grows as entries are actually read.
const INITIAL_REFS: usize = 4096;

/// One entry of the binary reference list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    /// The name as htslib sees it: the stored bytes up to the first NUL.
    pub name: Vec<u8>,
    /// `l_ref`, the reference length.
    pub len: u32,
}

/// A parsed BAM header.
#[derive(Debug, Clone)]
pub struct Header {
    text: Vec<u8>,
    refs: Vec<Reference>,
    /// The text parsed as htslib parses it for name lookups and `@PG` lines, or htslib's
    /// complaint about it; parsed when first needed, as htslib does.
    lines: OnceLock<Result<HeaderLines, String>>,
    /// The reference list once the parsed text changed it (see [`Header::targets`]).
    filled: OnceLock<Vec<Reference>>,
    warnings: Vec<String>,
}

impl Header {
    /// Reads the header from the start of a decompressed BAM stream, leaving `r` at the first
    /// record. `name` is the file or URL, used in errors.
    ///
    /// Lengths read from the stream are never trusted for allocation: text and names are read in
    /// bounded pieces, so a huge `l_text`, `l_name` or `n_ref` ends in a truncation error.
    pub fn read<R: Read>(r: &mut R, name: &str) -> Result<Header, Error> {
        let mut src = Source {
            inner: r,
            offset: 0,
            name,
        };
        let mut magic = [0u8; 4];
        src.exact(&mut magic, "magic")?;
        if &magic != b"BAM\x01" {
            return Err(src.header_error(0, HeaderError::BadMagic));
        }

        let l_text_at = src.offset;
        let l_text = src.i32("l_text")?;
        if l_text < 0 {
            return Err(src.header_error(l_text_at, HeaderError::NegativeTextLength(l_text)));
        }
        let text = src.bounded(l_text as usize, "header text")?;

        let n_ref_at = src.offset;
        let n_ref = src.i32("n_ref")?;
        if n_ref < 0 {
            return Err(src.header_error(n_ref_at, HeaderError::NegativeRefCount(n_ref)));
        }
        let n_ref = n_ref as usize;
        let mut refs = Vec::with_capacity(n_ref.min(INITIAL_REFS));
        for index in 0..n_ref {
            let l_name_at = src.offset;
            let l_name = src.i32("reference name length")?;
            if l_name <= 0 {
                return Err(
                    src.header_error(l_name_at, HeaderError::BadNameLength { index, l_name })
                );
            }
            let mut ref_name = src.bounded(l_name as usize, "reference name")?;
            if let Some(nul) = ref_name.iter().position(|&b| b == 0) {
                ref_name.truncate(nul);
            }
            let len = src.u32("reference length")?;
            crate::lengths::room_for(&mut refs, 1).map_err(|_| {
                let len = n_ref.saturating_mul(std::mem::size_of::<Reference>());
                src.header_error(
                    n_ref_at,
                    HeaderError::OutOfMemory {
                        field: "reference list",
                        len,
                    },
                )
            })?;
            refs.push(Reference {
                name: ref_name,
                len,
            });
        }

        Header::from_parts(text, refs).map_err(|kind| src.header_error(l_text_at + 4, kind))
    }

    /// Builds a header from stored text and references, applying htslib's `sam_hdr_sanitise`:
    /// every text line before the first NUL must start with `@`, and a missing final newline is
    /// added (over the first NUL padding byte if there is one).
    pub fn from_parts(mut text: Vec<u8>, refs: Vec<Reference>) -> Result<Header, HeaderError> {
        let mut warnings = Vec::new();
        sanitise(&mut text, &mut warnings)?;
        Ok(Header {
            text,
            refs,
            lines: OnceLock::new(),
            filled: OnceLock::new(),
            warnings,
        })
    }

    /// The stored header text after sanitising (NUL padding kept, as htslib keeps it).
    pub fn text(&self) -> &[u8] {
        &self.text
    }

    /// The header as `samtools view -h --no-PG` prints it: the stored text verbatim, then, if the
    /// text has no `@SQ` line, one `@SQ\tSN:name\tLN:len` line per binary reference.
    pub fn text_for_output(&self) -> Vec<u8> {
        let mut out = self.text.clone();
        if !has_sq_line(&self.text) {
            for r in &self.refs {
                out.extend_from_slice(b"@SQ\tSN:");
                out.extend_from_slice(&r.name);
                out.extend_from_slice(b"\tLN:");
                // htslib prints the length through an `int`, so lengths above 2^31 wrap.
                crate::sam::push_i64(&mut out, i64::from(r.len as i32));
                out.push(b'\n');
            }
        }
        out
    }

    /// The binary reference list, in `refID` order.
    pub fn refs(&self) -> &[Reference] {
        &self.refs
    }

    /// The `refID` of a reference name (or of an `AN:` alternative name from the `@SQ` lines), as
    /// htslib's `sam_hdr_name2tid` finds it: binary names, then names the `@SQ` lines add (with
    /// `refID`s past the binary list). Always `None` when the header text cannot be parsed (see
    /// [`Header::text_error`]) or the reference list holds a name twice, because htslib then
    /// fails to build its name table.
    pub fn tid(&self, name: impl AsRef<[u8]>) -> Option<RefId> {
        let lines = self.parsed().as_ref().ok()?;
        lines.ref_names.get(name.as_ref()).copied().map(RefId::new)
    }

    /// htslib's message when it cannot parse the header text into lines and fields (it then
    /// resolves no reference name and cannot add an `@PG` line).
    pub fn text_error(&self) -> Option<&str> {
        self.parsed().as_ref().err().map(String::as_str)
    }

    /// The header without the lines of type `kind` whose `key` field is not in `keep`, as
    /// htslib's `sam_hdr_remove_lines(h, kind, key, hash)` leaves it (for `@RG` and `@CO`
    /// lines, which no other table refers to): when a line goes, the text is rebuilt from
    /// htslib's model of it, as htslib writes an edited header; a text htslib cannot parse is
    /// left as it is, and so is a header from which nothing is removed.
    pub fn remove_lines(&self, kind: [u8; 2], key: [u8; 2], keep: &HashSet<Vec<u8>>) -> Header {
        let Ok(lines) = self.lines() else {
            return self.clone();
        };
        let mut lines = lines.clone();
        let mut removed = false;
        for at in lines.lines_of(kind) {
            if !lines.lines[at].tag(&key).is_some_and(|v| keep.contains(v)) {
                lines.remove_line(at);
                removed = true;
            }
        }
        if !removed {
            return self.clone();
        }
        let refs = lines.binary_refs(self.refs());
        Header::from_parts(lines.text(), refs).unwrap_or_else(|_| self.clone())
    }

    pub(crate) fn lines(&self) -> Result<&HeaderLines, String> {
        self.parsed().as_ref().map_err(Clone::clone)
    }

    fn parsed(&self) -> &Result<HeaderLines, String> {
        self.lines
            .get_or_init(|| HeaderLines::parse(&self.refs, &self.text))
    }

    /// The name of reference `tid` in [`Header::targets`], if there is one.
    pub fn ref_name(&self, tid: RefId) -> Option<&[u8]> {
        self.targets().get(tid.get()).map(|r| r.name.as_slice())
    }

    /// The reference list as htslib's header holds it at this point, for the `refID` range check
    /// of records and for names in SAM text: the binary list, until the text is parsed (a
    /// reference name looked up, an `@PG` line added); from then on, when the text's `@SQ` lines
    /// added references, the list with them (`sam_hdr_fill_hrecs` rebuilds the target arrays).
    /// So a BAM whose binary list is shorter than its `@SQ` lines reads as in samtools: its
    /// regions resolve and print, while `view --no-PG` of the whole file fails on the first
    /// record of a reference only the text names.
    #[inline]
    pub fn targets(&self) -> &[Reference] {
        match self.lines.get() {
            Some(Ok(lines)) if lines.refs_changed => {
                self.filled.get_or_init(|| lines.binary_refs(&self.refs))
            }
            _ => &self.refs,
        }
    }

    /// Warnings htslib prints while reading this header, in its words (one line each, without
    /// the newline), e.g. `[W::sam_hdr_sanitise] Missing trailing newline on SAM header.
    /// Possibly truncated`.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }
}

/// Region strings resolve against the header as htslib's `sam_hdr_name2tid` resolves them
/// ([`Header::tid`]), with the reference list htslib holds ([`Header::targets`]).
impl region::Names for Header {
    fn tid(&self, name: &[u8]) -> Option<RefId> {
        Header::tid(self, name)
    }

    fn count(&self) -> usize {
        self.targets().len()
    }

    fn name(&self, tid: RefId) -> Option<&[u8]> {
        self.ref_name(tid)
    }
}

/// Implements `sam_hdr_sanitise`.
fn sanitise(text: &mut Vec<u8>, warnings: &mut Vec<String>) -> Result<(), HeaderError> {
    if text.is_empty() {
        return Ok(());
    }
    let mut line = 0u32;
    let mut last = b'\n';
    let mut i = 0;
    while i < text.len() {
        let c = text[i];
        if c == 0 {
            break;
        }
        if last == b'\n' {
            line += 1;
            if c != b'@' {
                return Err(HeaderError::MalformedText { line });
            }
        }
        last = c;
        i += 1;
    }
    if i < text.len() && text[i..].iter().any(|&b| b != 0) {
        warnings.push(
            "[W::sam_hdr_sanitise] Unexpected NUL character in header. Possibly truncated"
                .to_string(),
        );
    }
    if last != b'\n' {
        warnings.push(
            "[W::sam_hdr_sanitise] Missing trailing newline on SAM header. Possibly truncated"
                .to_string(),
        );
        if i < text.len() {
            text[i] = b'\n';
        } else {
            text.push(b'\n');
        }
    }
    Ok(())
}

/// True when the text (up to its first NUL, as C's `strstr` sees it) has a line starting with
/// `@SQ\t`.
fn has_sq_line(text: &[u8]) -> bool {
    let end = text.iter().position(|&b| b == 0).unwrap_or(text.len());
    let text = &text[..end];
    text.starts_with(b"@SQ\t") || text.windows(5).any(|w| w == b"\n@SQ\t")
}

/// The stream being read, with the position reached (for error offsets).
struct Source<'a, R: Read> {
    inner: &'a mut R,
    offset: u64,
    name: &'a str,
}

impl<R: Read> Source<'_, R> {
    fn header_error(&self, offset: u64, kind: HeaderError) -> Error {
        Error::Header {
            name: self.name.to_string(),
            offset,
            kind,
        }
    }

    fn exact(&mut self, buf: &mut [u8], field: &'static str) -> Result<(), Error> {
        let mut filled = 0;
        while filled < buf.len() {
            match self.inner.read(&mut buf[filled..]) {
                Ok(0) => {
                    return Err(self.header_error(self.offset, HeaderError::Truncated { field }))
                }
                Ok(n) => {
                    filled += n;
                    self.offset += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                    return Err(self.header_error(self.offset, HeaderError::Truncated { field }))
                }
                Err(source) => return Err(Error::from_io(source, self.name, self.offset)),
            }
        }
        Ok(())
    }

    fn i32(&mut self, field: &'static str) -> Result<i32, Error> {
        let mut b = [0u8; 4];
        self.exact(&mut b, field)?;
        Ok(i32::from_le_bytes(b))
    }

    fn u32(&mut self, field: &'static str) -> Result<u32, Error> {
        let mut b = [0u8; 4];
        self.exact(&mut b, field)?;
        Ok(u32::from_le_bytes(b))
    }

    /// Reads `len` bytes, growing the buffer only as data arrives.
    fn bounded(&mut self, len: usize, field: &'static str) -> Result<Vec<u8>, Error> {
        let mut out = Vec::with_capacity(len.min(READ_PIECE));
        while out.len() < len {
            let start = out.len();
            let piece = (len - start).min(READ_PIECE);
            crate::lengths::grow(&mut out, start + piece).map_err(|_| {
                self.header_error(self.offset, HeaderError::OutOfMemory { field, len })
            })?;
            self.exact(&mut out[start..], field)?;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bam_header(text: &[u8], refs: &[(&[u8], u32)]) -> Vec<u8> {
        let mut v = b"BAM\x01".to_vec();
        v.extend_from_slice(&(text.len() as i32).to_le_bytes());
        v.extend_from_slice(text);
        v.extend_from_slice(&(refs.len() as i32).to_le_bytes());
        for (name, len) in refs {
            v.extend_from_slice(&(name.len() as i32 + 1).to_le_bytes());
            v.extend_from_slice(name);
            v.push(0);
            v.extend_from_slice(&len.to_le_bytes());
        }
        v
    }

    fn kind(bytes: &[u8]) -> HeaderError {
        match Header::read(&mut &bytes[..], "t.bam") {
            Err(Error::Header { kind, .. }) => kind,
            other => panic!("expected a header error, got {other:?}"),
        }
    }

    #[test]
    fn reads_text_and_refs() {
        let bytes = bam_header(b"@HD\tVN:1.6\n", &[(b"chr1", 1000), (b"chr2", 20)]);
        let mut rest = &bytes[..];
        let h = Header::read(&mut rest, "t.bam").unwrap();
        assert!(rest.is_empty());
        assert_eq!(h.text(), b"@HD\tVN:1.6\n");
        assert_eq!(h.refs().len(), 2);
        assert_eq!(h.refs()[1].name, b"chr2");
        assert_eq!(h.refs()[1].len, 20);
        assert_eq!(h.tid("chr2"), Some(RefId::new(1)));
        assert_eq!(h.tid("chr3"), None);
        assert_eq!(
            h.text_for_output(),
            b"@HD\tVN:1.6\n@SQ\tSN:chr1\tLN:1000\n@SQ\tSN:chr2\tLN:20\n"
        );
    }

    #[test]
    fn sq_lines_present_means_verbatim() {
        let text = b"@HD\tVN:1.6\n@SQ\tSN:a\tLN:5\n";
        let h = Header::from_parts(
            text.to_vec(),
            vec![Reference {
                name: b"a".to_vec(),
                len: 5,
            }],
        )
        .unwrap();
        assert_eq!(h.text_for_output(), text);
    }

    #[test]
    fn sq_after_nul_is_not_seen() {
        let h = Header::from_parts(
            b"@HD\tVN:1.6\n\0@SQ\tSN:a\tLN:5\n".to_vec(),
            vec![Reference {
                name: b"a".to_vec(),
                len: 5,
            }],
        )
        .unwrap();
        assert!(h.text_for_output().ends_with(b"\n@SQ\tSN:a\tLN:5\n"));
        assert_eq!(h.warnings().len(), 1);
    }

    #[test]
    fn missing_newline_is_added_over_padding() {
        let h = Header::from_parts(b"@HD\tVN:1.6\0\0".to_vec(), vec![]).unwrap();
        assert_eq!(h.text(), b"@HD\tVN:1.6\n\0");
        let h = Header::from_parts(b"@HD\tVN:1.6".to_vec(), vec![]).unwrap();
        assert_eq!(h.text(), b"@HD\tVN:1.6\n");
        assert_eq!(
            h.warnings(),
            ["[W::sam_hdr_sanitise] Missing trailing newline on SAM header. Possibly truncated"]
        );
        let h = Header::from_parts(Vec::new(), vec![]).unwrap();
        assert_eq!(h.text(), b"");
    }

    #[test]
    fn nul_padding_kept() {
        let h = Header::from_parts(b"@CO\tx\n\0\0\0".to_vec(), vec![]).unwrap();
        assert_eq!(h.text_for_output(), b"@CO\tx\n\0\0\0");
        assert!(h.warnings().is_empty());
    }

    #[test]
    fn malformed_text_line() {
        assert_eq!(
            Header::from_parts(b"@HD\tVN:1.6\n\n@CO\tx\n".to_vec(), vec![]).unwrap_err(),
            HeaderError::MalformedText { line: 2 }
        );
        assert_eq!(
            Header::from_parts(b"HD\n".to_vec(), vec![]).unwrap_err(),
            HeaderError::MalformedText { line: 1 }
        );
    }

    #[test]
    fn bad_magic() {
        let mut bytes = bam_header(b"", &[]);
        bytes[3] = 2;
        assert_eq!(kind(&bytes), HeaderError::BadMagic);
        assert_eq!(kind(b"BA"), HeaderError::Truncated { field: "magic" });
        assert_eq!(kind(b""), HeaderError::Truncated { field: "magic" });
    }

    #[test]
    fn l_text_negative_and_huge() {
        let mut bytes = b"BAM\x01".to_vec();
        bytes.extend_from_slice(&(-1i32).to_le_bytes());
        assert_eq!(kind(&bytes), HeaderError::NegativeTextLength(-1));
        let mut bytes = b"BAM\x01".to_vec();
        bytes.extend_from_slice(&0x7fff_ff00i32.to_le_bytes());
        bytes.extend_from_slice(&[b'@'; 1000]);
        assert_eq!(
            kind(&bytes),
            HeaderError::Truncated {
                field: "header text"
            }
        );
    }

    #[test]
    fn n_ref_negative_and_huge() {
        let mut bytes = bam_header(b"", &[]);
        let n = bytes.len();
        bytes[n - 4..].copy_from_slice(&(-1i32).to_le_bytes());
        assert_eq!(kind(&bytes), HeaderError::NegativeRefCount(-1));
        bytes[n - 4..].copy_from_slice(&i32::MAX.to_le_bytes());
        assert_eq!(
            kind(&bytes),
            HeaderError::Truncated {
                field: "reference name length"
            }
        );
    }

    #[test]
    fn l_name_invalid() {
        let mut bytes = bam_header(b"", &[(b"c", 5)]);
        let at = 12;
        bytes[at..at + 4].copy_from_slice(&(-5i32).to_le_bytes());
        assert_eq!(
            kind(&bytes),
            HeaderError::BadNameLength {
                index: 0,
                l_name: -5
            }
        );
        bytes[at..at + 4].copy_from_slice(&0i32.to_le_bytes());
        assert_eq!(
            kind(&bytes),
            HeaderError::BadNameLength {
                index: 0,
                l_name: 0
            }
        );
        bytes[at..at + 4].copy_from_slice(&0x7000_0000i32.to_le_bytes());
        assert_eq!(
            kind(&bytes),
            HeaderError::Truncated {
                field: "reference name"
            }
        );
    }

    #[test]
    fn truncation_offsets() {
        let bytes = bam_header(b"@CO\tx\n", &[(b"chr1", 1000)]);
        for cut in 0..bytes.len() {
            match Header::read(&mut &bytes[..cut], "t.bam") {
                Err(Error::Header {
                    kind: HeaderError::Truncated { .. },
                    offset,
                    ..
                }) => assert!(offset <= cut as u64),
                other => panic!("cut {cut}: {other:?}"),
            }
        }
    }

    #[test]
    fn name_without_nul_and_embedded_nul() {
        let mut bytes = b"BAM\x01".to_vec();
        bytes.extend_from_slice(&0i32.to_le_bytes());
        bytes.extend_from_slice(&2i32.to_le_bytes());
        bytes.extend_from_slice(&3i32.to_le_bytes());
        bytes.extend_from_slice(b"abc");
        bytes.extend_from_slice(&7u32.to_le_bytes());
        bytes.extend_from_slice(&4i32.to_le_bytes());
        bytes.extend_from_slice(b"d\0ef");
        bytes.extend_from_slice(&8u32.to_le_bytes());
        let h = Header::read(&mut &bytes[..], "t.bam").unwrap();
        assert_eq!(h.refs()[0].name, b"abc");
        assert_eq!(h.refs()[1].name, b"d");
        assert_eq!(h.tid("d"), Some(RefId::new(1)));
    }

    #[test]
    fn duplicate_names_and_alt_names() {
        let refs = vec![
            Reference {
                name: b"chr1".to_vec(),
                len: 10,
            },
            Reference {
                name: b"chr2".to_vec(),
                len: 10,
            },
        ];
        let h = Header::from_parts(
            b"@SQ\tSN:chr1\tLN:10\tAN:1,one\n@SQ\tSN:chr2\tLN:10\tAN:chr1,2\n".to_vec(),
            refs.clone(),
        )
        .unwrap();
        assert_eq!(h.tid("one"), Some(RefId::new(0)));
        assert_eq!(h.tid("1"), Some(RefId::new(0)));
        assert_eq!(h.tid("2"), Some(RefId::new(1)));
        assert_eq!(h.tid("chr1"), Some(RefId::new(0)));
        let mut dup = refs;
        dup[1].name = b"chr1".to_vec();
        let h = Header::from_parts(Vec::new(), dup).unwrap();
        assert_eq!(h.tid("chr1"), None);
    }

    #[test]
    fn long_length_wraps_like_htslib() {
        let h = Header::from_parts(
            Vec::new(),
            vec![Reference {
                name: b"big".to_vec(),
                len: 3_000_000_000,
            }],
        )
        .unwrap();
        assert_eq!(h.text_for_output(), b"@SQ\tSN:big\tLN:-1294967296\n");
    }
}
