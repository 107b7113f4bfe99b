//! CRAM records as stored (spec section 10): each data series read in the order the spec
//! lays down, from the streams of one slice. Rebuilding SAM fields (CIGAR, bases against a
//! reference, mates, MD/NM) works on these.

use crate::compression::{CompressionHeader, TagKey};
use crate::encoding::Encoding;
use crate::series::Streams;
use crate::slice::{SliceHeader, MULTI_REF};
use crate::Error;

/// CRAM flags (CF).
pub mod cf {
    /// Quality scores are stored as an array.
    pub const QUALITY_ARRAY: i32 = 0x1;
    /// The mate's fields are stored with the record.
    pub const DETACHED: i32 = 0x2;
    /// The mate is a later record of the slice.
    pub const MATE_DOWNSTREAM: i32 = 0x4;
    /// No bases are stored (SEQ `*`).
    pub const NO_SEQUENCE: i32 = 0x8;
}

const BAM_UNMAPPED: i32 = 0x4;

/// Where a record's variable-length value lies in its slice's [`Stored::bytes`] (or, for its
/// features, in [`Stored::features`]): a slice's records share two buffers instead of owning
/// several small ones each, allocated and freed a record at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Span {
    /// The first index.
    pub start: usize,
    /// One past the last index.
    pub end: usize,
}

impl Span {
    /// The number of items it covers.
    pub fn len(self) -> usize {
        self.end - self.start
    }

    /// It covers none.
    pub fn is_empty(self) -> bool {
        self.end == self.start
    }
}

/// One read feature: its 1-based position in the read and what it says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Feature {
    /// The 1-based position in the read.
    pub position: i32,
    /// What it says.
    pub kind: FeatureKind,
}

/// What a read feature says (runs of bases or qualities lie in the slice's bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FeatureKind {
    /// `B`: a base and its quality.
    Base {
        /// The base.
        base: u8,
        /// Its quality.
        quality: u8,
    },
    /// `X`: a substitution, as a code into the substitution matrix.
    Substitution(u8),
    /// `I`: inserted bases.
    Insertion(Span),
    /// `i`: one inserted base.
    InsertBase(u8),
    /// `D`: deleted reference bases.
    Deletion(i32),
    /// `b`: a run of bases.
    Bases(Span),
    /// `q`: a run of qualities.
    Qualities(Span),
    /// `Q`: one quality.
    Quality(u8),
    /// `S`: soft-clipped bases.
    SoftClip(Span),
    /// `H`: hard-clipped length.
    HardClip(i32),
    /// `P`: padding length.
    Padding(i32),
    /// `N`: skipped reference length.
    RefSkip(i32),
}

/// A record as the slice stores it; its variable-length values are spans of the slice's
/// [`Stored`] buffers.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Record {
    /// The BAM flags.
    pub bam_flags: i32,
    /// CRAM's own flags (quality as array, detached mate, ...).
    pub cram_flags: i32,
    /// The reference id.
    pub reference_id: i32,
    /// The number of bases.
    pub read_length: i32,
    /// 1-based alignment start.
    pub position: i32,
    /// The read group's index in the header (-1: none).
    pub read_group: i32,
    /// The read name (empty when generated).
    pub name: Span,
    /// The mate flags of a detached record.
    pub mate_flags: i32,
    /// The mate's reference id.
    pub mate_reference_id: i32,
    /// The mate's 1-based position.
    pub mate_position: i32,
    /// The template length.
    pub template_size: i32,
    /// Records to skip to the mate, when it is downstream in the slice.
    pub mate_distance: Option<i32>,
    /// Tags in BAM's binary layout (key, type, value) in the order of their tag line, but
    /// CRAM's own `cFC` flags.
    pub aux: Span,
    /// An MD tag is stored, or `cFC` says MD is not to be made.
    pub md_stored: bool,
    /// An NM tag is stored, or `cFC` says NM is not to be made.
    pub nm_stored: bool,
    /// The read features, in order (a span of [`Stored::features`]).
    pub features: Span,
    /// The mapping quality.
    pub mapping_quality: i32,
    /// Bases of an unmapped read (mapped reads rebuild theirs from features).
    pub bases: Span,
    /// Qualities as stored (Phred, no +33), when the record keeps them.
    pub qualities: Span,
}

/// A slice's records as stored, and the buffers their values lie in.
#[derive(Debug, Clone, Default)]
pub struct Stored {
    /// The records, in order.
    pub records: Vec<Record>,
    /// Every record's read features, one after another.
    pub features: Vec<Feature>,
    /// Every record's names, tags, bases and qualities, one after another.
    pub bytes: Vec<u8>,
}

impl Stored {
    /// The memory its records, features and bytes take.
    fn footprint(&self) -> usize {
        self.records.len() * std::mem::size_of::<Record>()
            + self.features.len() * std::mem::size_of::<Feature>()
            + self.bytes.len()
    }

    /// The bytes of `span`.
    pub fn bytes(&self, span: Span) -> &[u8] {
        &self.bytes[span.start..span.end]
    }

    /// A record's read features.
    pub fn features(&self, r: &Record) -> &[Feature] {
        &self.features[r.features.start..r.features.end]
    }

    /// A record's name (empty when generated).
    pub fn name(&self, r: &Record) -> &[u8] {
        self.bytes(r.name)
    }

    /// A record's stored qualities (empty when it keeps none).
    pub fn qualities(&self, r: &Record) -> &[u8] {
        self.bytes(r.qualities)
    }

    /// Empties it, keeping its buffers.
    pub fn clear(&mut self) {
        self.records.clear();
        self.features.clear();
        self.bytes.clear();
    }
}

/// Reads the `records` of one slice.
pub fn read_slice(
    ch: &CompressionHeader,
    slice: &SliceHeader,
    s: &mut Streams<'_>,
) -> Result<Stored, Error> {
    let mut out = Stored::default();
    read_slice_until(ch, slice, s, &mut out, |_, _| false)?;
    Ok(out)
}

/// Reads the records of one slice into `out` (emptied first) until `done` says, of the
/// record just read and its index, that none after it is needed (a range query past its
/// range's end).
pub fn read_slice_until(
    ch: &CompressionHeader,
    slice: &SliceHeader,
    s: &mut Streams<'_>,
    out: &mut Stored,
    mut done: impl FnMut(&Record, usize) -> bool,
) -> Result<(), Error> {
    let series = Series::new(ch, slice_at(s));
    let budget = Budget::of(s);
    out.clear();
    out.records
        .reserve(usize::try_from(slice.records).unwrap_or(0).min(1 << 20));
    let mut last_position = slice.start;
    for _ in 0..slice.records {
        let mut r = Record {
            bam_flags: series.int(ds::BF, s)?,
            cram_flags: series.int(ds::CF, s)?,
            ..Record::default()
        };
        r.reference_id = if slice.reference_id == MULTI_REF {
            series.int(ds::RI, s)?
        } else {
            slice.reference_id
        };
        r.read_length = series.int(ds::RL, s)?;
        // No read is longer than the largest block could hold (a value coded in no bits, such
        // as a one-symbol Huffman code, costs nothing, so the streams alone do not bound it).
        let len = usize::try_from(r.read_length)
            .ok()
            .filter(|&l| l <= crate::block::MAX_RAW_SIZE)
            .ok_or_else(|| Error::at(series.at, format!("read length {}", r.read_length)))?;
        budget.check(&series, out, len)?;
        let ap = series.int(ds::AP, s)?;
        r.position = if ch.ap_delta {
            last_position.wrapping_add(ap)
        } else {
            ap
        };
        last_position = r.position;
        r.read_group = series.int(ds::RG, s)?;
        let bytes = &mut out.bytes;
        if ch.read_names {
            r.name = series.bytes(ds::RN, s, bytes)?;
        }
        mate(ch, &series, s, &mut r, bytes)?;
        tags(&series, s, &mut r, bytes)?;
        if r.bam_flags & BAM_UNMAPPED == 0 {
            r.features = features(&series, s, out, &budget)?;
            r.mapping_quality = series.int(ds::MQ, s)?;
        } else if r.cram_flags & cf::NO_SEQUENCE == 0 {
            r.bases = series.byte_run(ds::BA, s, len, &mut out.bytes)?;
        }
        if r.cram_flags & cf::QUALITY_ARRAY != 0 {
            budget.check(&series, out, len)?;
            r.qualities = series.byte_run(ds::QS, s, len, &mut out.bytes)?;
        }
        let last = done(&r, out.records.len());
        out.records.push(r);
        if last {
            break;
        }
    }
    Ok(())
}

/// A record's mate fields: stored for a detached record (and its name, when names are not
/// stored for all), else the distance to its mate downstream, if any.
fn mate(
    ch: &CompressionHeader,
    series: &Series<'_>,
    s: &mut Streams<'_>,
    r: &mut Record,
    bytes: &mut Vec<u8>,
) -> Result<(), Error> {
    if r.cram_flags & cf::DETACHED != 0 {
        r.mate_flags = series.int(ds::MF, s)?;
        if !ch.read_names {
            r.name = series.bytes(ds::RN, s, bytes)?;
        }
        r.mate_reference_id = series.int(ds::NS, s)?;
        r.mate_position = series.int(ds::NP, s)?;
        r.template_size = series.int(ds::TS, s)?;
    } else if r.cram_flags & cf::MATE_DOWNSTREAM != 0 {
        r.mate_distance = Some(series.int(ds::NF, s)?);
    }
    Ok(())
}

/// A record's tags, by its tag line, into its aux bytes in BAM's layout (CRAM's own `cF`
/// flags read and left out).
fn tags(
    series: &Series<'_>,
    s: &mut Streams<'_>,
    r: &mut Record,
    aux: &mut Vec<u8>,
) -> Result<(), Error> {
    let line = series.int(ds::TL, s)?;
    let keys = usize::try_from(line)
        .ok()
        .and_then(|l| series.tag_lines.get(l))
        .ok_or_else(|| Error::at(series.at, format!("tag line {line} not in the dictionary")))?;
    let first = aux.len();
    for &(key, e) in keys {
        let e = e.ok_or_else(|| {
            Error::at(
                series.at,
                format!("no encoding for tag {}", String::from_utf8_lossy(key)),
            )
        })?;
        let start = aux.len();
        aux.extend_from_slice(key);
        e.bytes_into(s, aux)?;
        r.md_stored |= &key[..2] == b"MD";
        r.nm_stored |= &key[..2] == b"NM";
        if key == b"cFC" && aux.len() == start + 4 {
            // CRAM's own flags: bit 1 keeps MD from being made, bit 2 NM.
            let v = aux[start + 3];
            r.md_stored |= v & 1 != 0;
            r.nm_stored |= v & 2 != 0;
            aux.truncate(start);
        }
    }
    r.aux = Span {
        start: first,
        end: aux.len(),
    };
    Ok(())
}

fn slice_at(s: &Streams<'_>) -> u64 {
    s.core_offset()
}

/// How much memory a slice's stored records may take. Values coded in external blocks are
/// bounded by the blocks, values in the core block by eight a byte; but a code of no bits (a
/// one-symbol Huffman code) makes values for nothing, so without a bound a tiny slice could
/// ask for terabytes. The bound is far above any real slice: eight bytes of records a coded
/// byte, plus one block's worth.
struct Budget(usize);

impl Budget {
    fn of(s: &Streams<'_>) -> Budget {
        Budget(
            s.coded_len()
                .saturating_mul(8)
                .saturating_add(crate::block::MAX_RAW_SIZE),
        )
    }

    /// Refuses `more` bytes beyond what `out` holds if that passes the bound.
    fn check(&self, series: &Series<'_>, out: &Stored, more: usize) -> Result<(), Error> {
        if out.footprint().saturating_add(more) > self.0 {
            return Err(Error::at(
                series.at,
                format!(
                    "the slice's records need more than {} bytes of memory, more than its data can code",
                    self.0
                ),
            ));
        }
        Ok(())
    }
}

fn features(
    series: &Series<'_>,
    s: &mut Streams<'_>,
    out: &mut Stored,
    budget: &Budget,
) -> Result<Span, Error> {
    let n = series.int(ds::FN, s)?;
    let n = usize::try_from(n)
        .ok()
        .filter(|&n| n <= 1 << 20)
        .ok_or_else(|| Error::at(series.at, format!("{n} read features")))?;
    let first = out.features.len();
    let mut position = 0i32;
    for _ in 0..n {
        let code = series.byte(ds::FC, s)?;
        position = position.wrapping_add(series.int(ds::FP, s)?);
        let b = &mut out.bytes;
        let kind = match code {
            b'B' => FeatureKind::Base {
                base: series.byte(ds::BA, s)?,
                quality: series.byte(ds::QS, s)?,
            },
            b'X' => FeatureKind::Substitution(series.byte(ds::BS, s)?),
            b'I' => FeatureKind::Insertion(series.bytes(ds::IN, s, b)?),
            b'i' => FeatureKind::InsertBase(series.byte(ds::BA, s)?),
            b'D' => FeatureKind::Deletion(series.int(ds::DL, s)?),
            b'b' => FeatureKind::Bases(series.bytes(ds::BB, s, b)?),
            b'q' => FeatureKind::Qualities(series.bytes(ds::QQ, s, b)?),
            b'Q' => FeatureKind::Quality(series.byte(ds::QS, s)?),
            b'S' => FeatureKind::SoftClip(series.bytes(ds::SC, s, b)?),
            b'H' => FeatureKind::HardClip(series.int(ds::HC, s)?),
            b'P' => FeatureKind::Padding(series.int(ds::PD, s)?),
            b'N' => FeatureKind::RefSkip(series.int(ds::RS, s)?),
            c => {
                return Err(Error::at(
                    series.at,
                    format!("unknown read feature code {c:#04x}"),
                ))
            }
        };
        out.features.push(Feature { position, kind });
        budget.check(series, out, 0)?;
    }
    Ok(Span {
        start: first,
        end: out.features.len(),
    })
}

/// The data series a record reads, as indexes into [`Series`]' table (looked up once a slice,
/// not once a value).
mod ds {
    pub const AP: usize = 0;
    pub const BA: usize = 1;
    pub const BB: usize = 2;
    pub const BF: usize = 3;
    pub const BS: usize = 4;
    pub const CF: usize = 5;
    pub const DL: usize = 6;
    pub const FC: usize = 7;
    pub const FN: usize = 8;
    pub const FP: usize = 9;
    pub const HC: usize = 10;
    pub const IN: usize = 11;
    pub const MF: usize = 12;
    pub const MQ: usize = 13;
    pub const NF: usize = 14;
    pub const NP: usize = 15;
    pub const NS: usize = 16;
    pub const PD: usize = 17;
    pub const QQ: usize = 18;
    pub const QS: usize = 19;
    pub const RG: usize = 20;
    pub const RI: usize = 21;
    pub const RL: usize = 22;
    pub const RN: usize = 23;
    pub const RS: usize = 24;
    pub const SC: usize = 25;
    pub const TL: usize = 26;
    pub const TS: usize = 27;
    pub const KEYS: [[u8; 2]; 28] = [
        *b"AP", *b"BA", *b"BB", *b"BF", *b"BS", *b"CF", *b"DL", *b"FC", *b"FN", *b"FP", *b"HC",
        *b"IN", *b"MF", *b"MQ", *b"NF", *b"NP", *b"NS", *b"PD", *b"QQ", *b"QS", *b"RG", *b"RI",
        *b"RL", *b"RN", *b"RS", *b"SC", *b"TL", *b"TS",
    ];
}

/// The data series encodings of a container, by [`ds`] index.
struct Series<'a> {
    table: [Option<&'a Encoding>; ds::KEYS.len()],
    /// Each tag line's keys and their encodings (looked up once a slice, not once a tag).
    tag_lines: Vec<Vec<(&'a TagKey, Option<&'a Encoding>)>>,
    at: u64,
}

impl<'a> Series<'a> {
    fn new(ch: &'a CompressionHeader, at: u64) -> Self {
        let encoding = |key: &TagKey| {
            let id = (i32::from(key[0]) << 16) | (i32::from(key[1]) << 8) | i32::from(key[2]);
            ch.tags.get(&id)
        };
        Series {
            table: ds::KEYS.map(|k| ch.series.get(&k)),
            tag_lines: ch
                .tag_lines
                .iter()
                .map(|line| line.iter().map(|k| (k, encoding(k))).collect())
                .collect(),
            at,
        }
    }

    fn get(&self, key: usize) -> Result<&'a Encoding, Error> {
        self.table[key].ok_or_else(|| {
            Error::at(
                self.at,
                format!(
                    "data series {} has no encoding",
                    String::from_utf8_lossy(&ds::KEYS[key])
                ),
            )
        })
    }

    fn int(&self, key: usize, s: &mut Streams<'_>) -> Result<i32, Error> {
        self.get(key)?.int(s)
    }

    fn byte(&self, key: usize, s: &mut Streams<'_>) -> Result<u8, Error> {
        self.get(key)?.byte(s)
    }

    /// A byte array appended to `out`, and where it lies there.
    fn bytes(&self, key: usize, s: &mut Streams<'_>, out: &mut Vec<u8>) -> Result<Span, Error> {
        let start = out.len();
        self.get(key)?.bytes_into(s, out)?;
        Ok(Span {
            start,
            end: out.len(),
        })
    }

    /// `n` byte values appended to `out`, and where they lie there.
    fn byte_run(
        &self,
        key: usize,
        s: &mut Streams<'_>,
        n: usize,
        out: &mut Vec<u8>,
    ) -> Result<Span, Error> {
        let start = out.len();
        self.get(key)?.byte_run_into(s, n, out)?;
        Ok(Span {
            start,
            end: out.len(),
        })
    }
}
