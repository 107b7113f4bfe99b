//! One cache entry: an object's validators and the byte ranges of it that are kept, and the
//! file format that stores them with a checksum.
//!
//! File layout (little-endian): `HTSCACHE`, version (u32), file length (u64), key (u32 length +
//! bytes), object size (u64), ETag and Last-Modified (u32 length, `u32::MAX` for none, + bytes),
//! range count (u32), each range's start and length (u64 + u64), the ranges' bytes, and a
//! CRC32 of everything before it. Every field is checked on load; an entry that fails any check
//! is never used.

use std::fmt;

use super::Key;

const MAGIC: &[u8; 8] = b"HTSCACHE";
const VERSION: u32 = 1;
const NONE: u32 = u32::MAX;

/// At most this many disjoint ranges per entry (a prefix and the EOF-marker suffix are two).
pub const MAX_RANGES: usize = 16;

/// What the server says identifies the current version of an object.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Validators {
    /// The object's size (from `Content-Range: .../total`, `Content-Length` or a HEAD).
    pub size: u64,
    /// The `ETag` header as sent (quotes and any `W/` included).
    pub etag: Option<String>,
    /// The `Last-Modified` header as sent.
    pub last_modified: Option<String>,
}

impl Validators {
    /// Whether `now` (what the server says at present) describes the object these validators
    /// were taken from; see [`Entry::check`].
    ///
    /// # Errors
    /// The [`Change`] found.
    pub fn check(&self, now: &Validators) -> Result<(), Change> {
        let cached = self;
        if cached.size != now.size {
            return Err(Change::Size {
                cached: cached.size,
                now: now.size,
            });
        }
        let etag = same(&cached.etag, &now.etag, |cached, now| Change::ETag {
            cached,
            now,
        })?;
        let lm = same(&cached.last_modified, &now.last_modified, |cached, now| {
            Change::LastModified { cached, now }
        })?;
        let compared = etag || lm;
        if compared {
            Ok(())
        } else {
            Err(Change::Unverifiable)
        }
    }

    /// Whether an object can be cached: without an ETag or a Last-Modified, a later response
    /// could never show that it is unchanged.
    pub fn is_cacheable(&self) -> bool {
        self.etag.is_some() || self.last_modified.is_some()
    }
}

/// Why a cached entry no longer describes the object (its `Display` is the reason to log:
/// "object changed (ETag "a" -> "b")").
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// The size differs.
    Size {
        /// As the cache recorded it.
        cached: u64,
        /// As the server tells it now.
        now: u64,
    },
    /// Both have an ETag, and they differ.
    ETag {
        /// As the cache recorded it.
        cached: String,
        /// As the server tells it now.
        now: String,
    },
    /// Both have a Last-Modified, and they differ.
    LastModified {
        /// As the cache recorded it.
        cached: String,
        /// As the server tells it now.
        now: String,
    },
    /// No validator is present on both sides, so nothing shows the object unchanged.
    Unverifiable,
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Change::Size { cached, now } => {
                write!(f, "object changed (size {cached} -> {now})")
            }
            Change::ETag { cached, now } => write!(f, "object changed (ETag {cached} -> {now})"),
            Change::LastModified { cached, now } => {
                write!(f, "object changed (Last-Modified {cached} -> {now})")
            }
            Change::Unverifiable => write!(
                f,
                "object cannot be shown unchanged (no ETag or Last-Modified in common)"
            ),
        }
    }
}

/// A stretch `[start, start + data.len())` of an object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Range {
    /// Offset of the first byte in the object.
    pub start: u64,
    /// The bytes.
    pub data: Vec<u8>,
}

impl Range {
    /// One past the last byte.
    pub fn end(&self) -> u64 {
        self.start + self.data.len() as u64
    }
}

/// A verified cache entry: the object's validators and the ranges of it that are stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub(crate) key: Key,
    pub(crate) validators: Validators,
    /// Sorted, disjoint, not touching, none empty, all inside the object.
    pub(crate) ranges: Vec<Range>,
}

/// An entry's first bytes with the validators they were stored under ([`Entry::into_prefix`]).
#[derive(Debug, Clone)]
pub struct CachedPrefix {
    /// What the object was when the bytes were stored.
    pub validators: Validators,
    /// The bytes from offset 0 (empty if the entry held none).
    pub prefix: Vec<u8>,
}

impl Entry {
    /// The object this entry is about.
    pub fn key(&self) -> &Key {
        &self.key
    }

    /// The validators the object had when the entry was stored.
    pub fn validators(&self) -> &Validators {
        &self.validators
    }

    /// The stored ranges, in order.
    pub fn ranges(&self) -> &[Range] {
        &self.ranges
    }

    /// The stored bytes from offset 0 (empty if the entry holds no prefix).
    pub fn prefix(&self) -> &[u8] {
        match self.ranges.first() {
            Some(r) if r.start == 0 => &r.data,
            _ => &[],
        }
    }

    /// The validators and the bytes from the object's start, taken without a copy.
    pub fn into_prefix(self) -> CachedPrefix {
        let prefix = match self.ranges.into_iter().next() {
            Some(r) if r.start == 0 => r.data,
            _ => Vec::new(),
        };
        CachedPrefix {
            validators: self.validators,
            prefix,
        }
    }

    /// The bytes `[start, end)` of the object, if the entry holds all of them.
    pub fn get(&self, start: u64, end: u64) -> Option<&[u8]> {
        let r = self
            .ranges
            .iter()
            .find(|r| r.start <= start && end <= r.end())?;
        let from = usize::try_from(start - r.start).ok()?;
        let to = usize::try_from(end.checked_sub(r.start)?).ok()?;
        r.data.get(from..to)
    }

    /// Whether the object, as the server now describes it, is the one the entry was made from.
    pub fn is_valid_for(&self, now: &Validators) -> bool {
        self.check(now).is_ok()
    }

    /// As [`Entry::is_valid_for`], saying what changed: a different size, a different ETag, or
    /// (the same size and) a different Last-Modified; and with no validator on both sides,
    /// nothing shows the object unchanged, so that too counts as changed.
    ///
    /// # Errors
    /// The [`Change`] found.
    pub fn check(&self, now: &Validators) -> Result<(), Change> {
        self.validators.check(now)
    }

    /// Bytes of object data held.
    pub fn stored_bytes(&self) -> u64 {
        self.ranges.iter().map(|r| r.data.len() as u64).sum()
    }
}

/// Compares one validator present on both sides (`Ok(true)`: equal; `Ok(false)`: missing on
/// one side, so nothing was compared).
fn same(
    cached: &Option<String>,
    now: &Option<String>,
    change: fn(String, String) -> Change,
) -> Result<bool, Change> {
    match (cached, now) {
        (Some(a), Some(b)) if a != b => Err(change(a.clone(), b.clone())),
        (Some(_), Some(_)) => Ok(true),
        _ => Ok(false),
    }
}

/// Adds `new` to sorted, disjoint `ranges`, joining ranges that overlap or touch (the new bytes
/// win where they overlap).
pub(crate) fn merge(ranges: &mut Vec<Range>, new: Range) {
    if new.data.is_empty() {
        return;
    }
    let mut out: Vec<Range> = Vec::with_capacity(ranges.len() + 1);
    let mut pending = Some(new);
    for r in ranges.drain(..) {
        match pending.take() {
            Some(n) if r.end() < n.start => {
                out.push(r);
                pending = Some(n);
            }
            Some(n) if n.end() < r.start => {
                out.push(n);
                out.push(r);
            }
            Some(n) => pending = Some(join(r, n)),
            None => out.push(r),
        }
    }
    out.extend(pending);
    *ranges = out;
}

/// Two ranges that overlap or touch, as one; `new`'s bytes win.
fn join(old: Range, new: Range) -> Range {
    let start = old.start.min(new.start);
    let end = old.end().max(new.end());
    let mut data = vec![0u8; (end - start) as usize];
    for r in [&old, &new] {
        let at = (r.start - start) as usize;
        data[at..at + r.data.len()].copy_from_slice(&r.data);
    }
    Range { start, data }
}

fn put_str(out: &mut Vec<u8>, s: Option<&str>) {
    match s {
        Some(s) => {
            out.extend((s.len() as u32).to_le_bytes());
            out.extend(s.as_bytes());
        }
        None => out.extend(NONE.to_le_bytes()),
    }
}

/// The file bytes of an entry.
pub(crate) fn encode(e: &Entry) -> Vec<u8> {
    let data_len: usize = e.ranges.iter().map(|r| r.data.len()).sum();
    let mut out = Vec::with_capacity(128 + e.key.as_str().len() + 16 * e.ranges.len() + data_len);
    out.extend(MAGIC);
    out.extend(VERSION.to_le_bytes());
    out.extend(0u64.to_le_bytes()); // the length, filled in below
    put_str(&mut out, Some(e.key.as_str()));
    out.extend(e.validators.size.to_le_bytes());
    put_str(&mut out, e.validators.etag.as_deref());
    put_str(&mut out, e.validators.last_modified.as_deref());
    out.extend((e.ranges.len() as u32).to_le_bytes());
    for r in &e.ranges {
        out.extend(r.start.to_le_bytes());
        out.extend((r.data.len() as u64).to_le_bytes());
    }
    for r in &e.ranges {
        out.extend(&r.data);
    }
    let total = out.len() as u64 + 4;
    out[12..20].copy_from_slice(&total.to_le_bytes());
    let crc = crc32fast::hash(&out);
    out.extend(crc.to_le_bytes());
    out
}

/// A bounds-checked reader over an entry file, for [`decode`].
struct Fields<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Fields<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], String> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or_else(|| format!("{what} runs past the end at byte {}", self.pos))?;
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], String> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N, what)?);
        Ok(a)
    }

    fn u32(&mut self, what: &str) -> Result<u32, String> {
        self.array(what).map(u32::from_le_bytes)
    }

    fn u64(&mut self, what: &str) -> Result<u64, String> {
        self.array(what).map(u64::from_le_bytes)
    }

    fn string(&mut self, what: &str) -> Result<Option<String>, String> {
        let n = self.u32(what)?;
        if n == NONE {
            return Ok(None);
        }
        let b = self.take(n as usize, what)?;
        String::from_utf8(b.to_vec())
            .map(Some)
            .map_err(|_| format!("{what} is not UTF-8"))
    }
}

/// Checks and parses an entry file; the error says what is wrong with it.
pub(crate) fn decode(bytes: &[u8]) -> Result<Entry, String> {
    if bytes.len() < 24 || &bytes[..8] != MAGIC {
        return Err(format!(
            "not a cache entry ({} bytes, no HTSCACHE magic)",
            bytes.len()
        ));
    }
    let mut f = Fields { bytes, pos: 8 };
    let version = f.u32("version")?;
    if version != VERSION {
        return Err(format!("version {version}, expected {VERSION}"));
    }
    let total = f.u64("length")?;
    if total != bytes.len() as u64 {
        return Err(format!(
            "truncated or padded: {} bytes, its header says {total}",
            bytes.len()
        ));
    }
    let body = &bytes[..bytes.len() - 4];
    let stored = u32::from_le_bytes([
        bytes[bytes.len() - 4],
        bytes[bytes.len() - 3],
        bytes[bytes.len() - 2],
        bytes[bytes.len() - 1],
    ]);
    let computed = crc32fast::hash(body);
    if stored != computed {
        return Err(format!(
            "checksum mismatch (stored {stored:08x}, computed {computed:08x})"
        ));
    }
    let mut f = Fields {
        bytes: body,
        pos: f.pos,
    };
    let key = f.string("key")?.ok_or("no key")?;
    let size = f.u64("object size")?;
    let etag = f.string("ETag")?;
    let last_modified = f.string("Last-Modified")?;
    let n = f.u32("range count")? as usize;
    if n > MAX_RANGES {
        return Err(format!("{n} ranges (at most {MAX_RANGES})"));
    }
    let mut spans = Vec::with_capacity(n);
    for _ in 0..n {
        spans.push((f.u64("range start")?, f.u64("range length")?));
    }
    let mut ranges: Vec<Range> = Vec::with_capacity(n);
    for (start, len) in spans {
        let end = start.checked_add(len).filter(|&e| e <= size && len > 0);
        let end =
            end.ok_or_else(|| format!("range {start}+{len} is empty or outside the object"))?;
        if ranges.last().is_some_and(|p| p.end() >= start) {
            return Err(format!(
                "range {start}-{end} overlaps or touches the one before"
            ));
        }
        let data = f.take(
            usize::try_from(len).map_err(|_| "range too long")?,
            "range data",
        )?;
        ranges.push(Range {
            start,
            data: data.to_vec(),
        });
    }
    if f.pos != body.len() {
        return Err(format!(
            "{} unexplained bytes after the data",
            body.len() - f.pos
        ));
    }
    let entry = Entry {
        key: Key::from_stored(key),
        validators: Validators {
            size,
            etag,
            last_modified,
        },
        ranges,
    };
    if !entry.validators.is_cacheable() {
        return Err("no ETag or Last-Modified".to_string());
    }
    Ok(entry)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(start: u64, data: &[u8]) -> Range {
        Range {
            start,
            data: data.to_vec(),
        }
    }

    #[test]
    fn merging() {
        let mut v = vec![];
        merge(&mut v, r(10, b"klm"));
        merge(&mut v, r(0, b"abc"));
        assert_eq!(v, vec![r(0, b"abc"), r(10, b"klm")]);
        // Touching joins: [0,3) + [3,5).
        merge(&mut v, r(3, b"de"));
        assert_eq!(v, vec![r(0, b"abcde"), r(10, b"klm")]);
        // Bridging both, new bytes win on overlap.
        merge(&mut v, r(4, b"EFGHIJ"));
        assert_eq!(v, vec![r(0, b"abcdEFGHIJklm")]);
        merge(&mut v, r(20, b"z"));
        merge(&mut v, r(15, b""));
        assert_eq!(v, vec![r(0, b"abcdEFGHIJklm"), r(20, b"z")]);
        merge(&mut v, r(2, b"C"));
        assert_eq!(v[0].data, b"abCdEFGHIJklm");
    }

    #[test]
    fn round_trip_and_every_truncation_is_caught() {
        let e = Entry {
            key: Key::from_url("https://h/x.bai").unwrap(),
            validators: Validators {
                size: 100,
                etag: Some("\"abc\"".into()),
                last_modified: None,
            },
            ranges: vec![r(0, b"hello"), r(90, b"0123456789")],
        };
        let bytes = encode(&e);
        assert_eq!(decode(&bytes).unwrap(), e);
        for cut in 0..bytes.len() {
            assert!(decode(&bytes[..cut]).is_err(), "cut {cut}");
        }
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x20;
            assert!(decode(&b).is_err(), "flip {i}");
        }
    }
}
