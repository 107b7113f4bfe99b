//! The compression header (spec section 8.4): what a container's slices preserve, how each
//! data series and each tag is encoded.

use std::collections::BTreeMap;

use crate::encoding::Encoding;
use crate::num::Cursor;
use crate::Error;

/// A tag as a record carries it: two name characters and the BAM type character.
pub type TagKey = [u8; 3];

/// A container's compression header: how its slices' records are stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompressionHeader {
    /// Read names are stored (RN); otherwise they are generated.
    pub read_names: bool,
    /// Alignment starts are deltas from the previous record's (AP).
    pub ap_delta: bool,
    /// A reference is required to rebuild the bases (RR).
    pub reference_required: bool,
    /// The substitution matrix (SM): for each reference base A, C, G, T, N, the four other
    /// bases in the order their 2-bit codes name them.
    pub substitution: [[u8; 4]; 5],
    /// Tag lines (TD): the tags each record has, by the index a record stores.
    pub tag_lines: Vec<Vec<TagKey>>,
    /// Data series encodings by their two-letter key.
    pub series: BTreeMap<[u8; 2], Encoding>,
    /// Tag encodings by the key `name[0] << 16 | name[1] << 8 | type`.
    pub tags: BTreeMap<i32, Encoding>,
}

impl CompressionHeader {
    /// Parses a decoded compression header block; `base` is its offset, for errors.
    pub fn parse(data: &[u8], base: u64) -> Result<Self, Error> {
        let mut c = Cursor::new(data, base);
        let mut h = CompressionHeader {
            read_names: true,
            ap_delta: true,
            reference_required: true,
            substitution: default_substitution(),
            tag_lines: Vec::new(),
            series: BTreeMap::new(),
            tags: BTreeMap::new(),
        };
        let mut map = section(&mut c, "preservation map")?;
        for _ in 0..count(&mut map, "preservation map")? {
            let at = map.offset();
            let key = map.take(2, "preservation key")?;
            match key {
                b"RN" => h.read_names = map.u8("RN")? != 0,
                b"AP" => h.ap_delta = map.u8("AP")? != 0,
                b"RR" => h.reference_required = map.u8("RR")? != 0,
                b"SM" => h.substitution = substitution(map.take(5, "SM")?),
                b"TD" => h.tag_lines = tag_lines(&mut map)?,
                k => {
                    return Err(Error::at(
                        at,
                        format!("unknown preservation key {}", String::from_utf8_lossy(k)),
                    ))
                }
            }
        }
        let mut ds = section(&mut c, "data series encodings")?;
        for _ in 0..count(&mut ds, "data series")? {
            let k = ds.take(2, "data series key")?;
            h.series.insert([k[0], k[1]], Encoding::read(&mut ds)?);
        }
        let mut tags = section(&mut c, "tag encodings")?;
        for _ in 0..count(&mut tags, "tag encodings")? {
            let key = tags.itf8("tag key")?;
            h.tags.insert(key, Encoding::read(&mut tags)?);
        }
        Ok(h)
    }
}

/// A section: its ITF8 byte length, then exactly that many bytes.
fn section<'a>(c: &mut Cursor<'a>, what: &str) -> Result<Cursor<'a>, Error> {
    let at = c.offset();
    let n = c.itf8(what)?;
    let n = usize::try_from(n).map_err(|_| Error::at(at, format!("negative {what} size {n}")))?;
    let body_at = c.offset();
    Ok(Cursor::new(c.take(n, what)?, body_at))
}

/// An entry count, bounded by the bytes left (each entry takes at least two).
fn count(c: &mut Cursor<'_>, what: &str) -> Result<usize, Error> {
    let at = c.offset();
    let n = c.itf8(what)?;
    usize::try_from(n)
        .ok()
        .filter(|&n| n <= c.remaining())
        .ok_or_else(|| Error::at(at, format!("{what} count {n} exceeds the input")))
}

const BASES: [u8; 5] = *b"ACGTN";

fn default_substitution() -> [[u8; 4]; 5] {
    substitution(&[0x1b; 5])
}

/// Each SM byte holds four 2-bit codes, one for each of the other bases in ACGTN order.
fn substitution(bytes: &[u8]) -> [[u8; 4]; 5] {
    let mut m = [[0u8; 4]; 5];
    for (r, &byte) in bytes.iter().enumerate().take(5) {
        let others: Vec<u8> = BASES.iter().copied().filter(|&b| b != BASES[r]).collect();
        for (i, other) in others.into_iter().enumerate() {
            let code = (byte >> (6 - 2 * i)) & 3;
            m[r][usize::from(code)] = other;
        }
    }
    m
}

/// TD: a byte length, then lists of 3-byte tag keys, each list ended by a 0 byte.
fn tag_lines(c: &mut Cursor<'_>) -> Result<Vec<Vec<TagKey>>, Error> {
    let mut body = section(c, "tag dictionary")?;
    let mut lines = Vec::new();
    let mut line = Vec::new();
    while body.remaining() > 0 {
        if body.peek() == Some(0) {
            body.u8("tag dictionary")?;
            lines.push(std::mem::take(&mut line));
            continue;
        }
        let k = body.take(3, "tag dictionary entry")?;
        line.push([k[0], k[1], k[2]]);
    }
    if !line.is_empty() {
        return Err(Error::at(
            body.offset(),
            "tag dictionary ends inside a list",
        ));
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::substitution;

    #[test]
    fn the_usual_matrix_maps_codes_to_the_other_bases_in_order() {
        let m = substitution(&[0x1b; 5]);
        assert_eq!(&m[0], b"CGTN");
        assert_eq!(&m[4], b"ACGT");
    }
}
