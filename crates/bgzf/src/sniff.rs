//! Telling the container from the first bytes, as htslib's `bgzf_open` does: BGZF, other gzip,
//! or neither. One reading of them, for the data reader ([`crate::Reader`]) and for index files.

use std::io::{self, Read};

use crate::block::{self, FIXED_HEADER_LEN, HEADER_LEN};
use crate::Format;

/// What the first bytes of an input say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sniffed {
    /// The bytes read to decide, from where the input was: to hand on, or to read again.
    pub peeked: Vec<u8>,
    /// The container; [`Format::Gzip`] for a gzip header cut short.
    pub format: Format,
    /// The input ended before the container could be told for sure: fewer than 4 bytes, or a
    /// gzip header (its extra field included) cut short.
    pub short: bool,
}

/// Appends up to `n` more bytes of `input` to `buf`, fewer only at its end.
fn read_more(input: &mut impl Read, buf: &mut Vec<u8>, n: usize) -> io::Result<()> {
    input.take(n as u64).read_to_end(buf).map(|_| ())
}

/// Reads just enough of `input` to tell the container: 4 bytes when they are not gzip's magic
/// (so that garbage fails before anything more is read), else the whole first header with its
/// extra field, where a BGZF block names its size.
///
/// ```
/// use bgzf::sniff::sniff;
/// use bgzf::Format;
/// let s = sniff(&mut &bgzf::block::EOF_MARKER[..]).unwrap();
/// assert_eq!((s.format, s.short, s.peeked.len()), (Format::Bgzf, false, 18));
/// let s = sniff(&mut &b"BAI\x01rest"[..]).unwrap();
/// assert_eq!((s.format, s.short, &s.peeked[..]), (Format::Raw, false, &b"BAI\x01"[..]));
/// ```
pub fn sniff(input: &mut impl Read) -> io::Result<Sniffed> {
    let mut peeked = Vec::with_capacity(HEADER_LEN);
    read_more(input, &mut peeked, 4)?;
    if !block::has_gzip_magic(&peeked) {
        let short = peeked.len() < 4;
        return Ok(Sniffed {
            peeked,
            format: Format::Raw,
            short,
        });
    }
    let mut want = HEADER_LEN;
    loop {
        let have = peeked.len();
        if have < want {
            read_more(input, &mut peeked, want - have)?;
            if peeked.len() < want {
                return Ok(Sniffed {
                    peeked,
                    format: Format::Gzip,
                    short: true,
                });
            }
        }
        let xlen = usize::from(u16::from_le_bytes([peeked[10], peeked[11]]));
        if peeked[3] & 0x04 != 0 && FIXED_HEADER_LEN + xlen > want {
            want = FIXED_HEADER_LEN + xlen;
            continue;
        }
        let format = if block::is_bgzf_header(&peeked) {
            Format::Bgzf
        } else {
            Format::Gzip
        };
        return Ok(Sniffed {
            peeked,
            format,
            short: false,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_inputs_and_long_extra_fields() {
        let s = sniff(&mut &b"BA"[..]).unwrap();
        assert_eq!((s.format, s.short), (Format::Raw, true));
        let s = sniff(&mut &block::EOF_MARKER[..10]).unwrap();
        assert_eq!(
            (s.format, s.short, s.peeked.len()),
            (Format::Gzip, true, 10)
        );
        // A gzip header with FEXTRA and a 10-byte extra field without `BC`: read to its end.
        let mut member = vec![0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 10, 0];
        member.extend_from_slice(b"XY\x06\0abcdef");
        member.extend_from_slice(b"deflate data");
        let s = sniff(&mut &member[..]).unwrap();
        assert_eq!(
            (s.format, s.short, s.peeked.len()),
            (Format::Gzip, false, 22)
        );
        let s = sniff(&mut &member[..20]).unwrap();
        assert_eq!((s.format, s.short), (Format::Gzip, true));
    }
}
