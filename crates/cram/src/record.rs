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

/// One read feature: its 1-based position in the read and what it says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Feature {
    pub position: i32,
    pub kind: FeatureKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FeatureKind {
    /// `B`: a base and its quality.
    Base { base: u8, quality: u8 },
    /// `X`: a substitution, as a code into the substitution matrix.
    Substitution(u8),
    /// `I`: inserted bases.
    Insertion(Vec<u8>),
    /// `i`: one inserted base.
    InsertBase(u8),
    /// `D`: deleted reference bases.
    Deletion(i32),
    /// `b`: a run of bases.
    Bases(Vec<u8>),
    /// `q`: a run of qualities.
    Qualities(Vec<u8>),
    /// `Q`: one quality.
    Quality(u8),
    /// `S`: soft-clipped bases.
    SoftClip(Vec<u8>),
    /// `H`: hard-clipped length.
    HardClip(i32),
    /// `P`: padding length.
    Padding(i32),
    /// `N`: skipped reference length.
    RefSkip(i32),
}

/// A record as the slice stores it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Record {
    pub bam_flags: i32,
    pub cram_flags: i32,
    pub reference_id: i32,
    pub read_length: i32,
    /// 1-based alignment start.
    pub position: i32,
    pub read_group: i32,
    pub name: Vec<u8>,
    pub mate_flags: i32,
    pub mate_reference_id: i32,
    pub mate_position: i32,
    pub template_size: i32,
    /// Records to skip to the mate, when it is downstream in the slice.
    pub mate_distance: Option<i32>,
    /// Tags as (key, BAM binary value) in the order of their tag line.
    pub tags: Vec<(TagKey, Vec<u8>)>,
    pub features: Vec<Feature>,
    pub mapping_quality: i32,
    /// Bases of an unmapped read (mapped reads rebuild theirs from features).
    pub bases: Vec<u8>,
    /// Qualities as stored (Phred, no +33), when the record keeps them.
    pub qualities: Vec<u8>,
}

/// Reads the `records` of one slice.
pub fn read_slice(
    ch: &CompressionHeader,
    slice: &SliceHeader,
    s: &mut Streams<'_>,
) -> Result<Vec<Record>, Error> {
    let series = Series {
        ch,
        at: slice_at(s),
    };
    let mut out = Vec::with_capacity(usize::try_from(slice.records).unwrap_or(0).min(1 << 20));
    let mut last_position = slice.start;
    for _ in 0..slice.records {
        let mut r = Record {
            bam_flags: series.int(b"BF", s)?,
            cram_flags: series.int(b"CF", s)?,
            ..Record::default()
        };
        r.reference_id = if slice.reference_id == MULTI_REF {
            series.int(b"RI", s)?
        } else {
            slice.reference_id
        };
        r.read_length = series.int(b"RL", s)?;
        let len = usize::try_from(r.read_length)
            .map_err(|_| Error::at(series.at, format!("read length {}", r.read_length)))?;
        let ap = series.int(b"AP", s)?;
        r.position = if ch.ap_delta {
            last_position.wrapping_add(ap)
        } else {
            ap
        };
        last_position = r.position;
        r.read_group = series.int(b"RG", s)?;
        if ch.read_names {
            r.name = series.bytes(b"RN", s)?;
        }
        if r.cram_flags & cf::DETACHED != 0 {
            r.mate_flags = series.int(b"MF", s)?;
            if !ch.read_names {
                r.name = series.bytes(b"RN", s)?;
            }
            r.mate_reference_id = series.int(b"NS", s)?;
            r.mate_position = series.int(b"NP", s)?;
            r.template_size = series.int(b"TS", s)?;
        } else if r.cram_flags & cf::MATE_DOWNSTREAM != 0 {
            r.mate_distance = Some(series.int(b"NF", s)?);
        }
        let line = series.int(b"TL", s)?;
        let keys = usize::try_from(line)
            .ok()
            .and_then(|l| ch.tag_lines.get(l))
            .ok_or_else(|| {
                Error::at(series.at, format!("tag line {line} not in the dictionary"))
            })?;
        for key in keys {
            let id = (i32::from(key[0]) << 16) | (i32::from(key[1]) << 8) | i32::from(key[2]);
            let e = ch.tags.get(&id).ok_or_else(|| {
                Error::at(
                    series.at,
                    format!("no encoding for tag {}", String::from_utf8_lossy(key)),
                )
            })?;
            r.tags.push((*key, e.bytes(s)?));
        }
        if r.bam_flags & BAM_UNMAPPED == 0 {
            r.features = features(&series, s)?;
            r.mapping_quality = series.int(b"MQ", s)?;
        } else if r.cram_flags & cf::NO_SEQUENCE == 0 {
            r.bases = (0..len)
                .map(|_| series.byte(b"BA", s))
                .collect::<Result<_, _>>()?;
        }
        if r.cram_flags & cf::QUALITY_ARRAY != 0 {
            r.qualities = (0..len)
                .map(|_| series.byte(b"QS", s))
                .collect::<Result<_, _>>()?;
        }
        out.push(r);
    }
    Ok(out)
}

fn slice_at(s: &Streams<'_>) -> u64 {
    s.core_offset()
}

fn features(series: &Series<'_>, s: &mut Streams<'_>) -> Result<Vec<Feature>, Error> {
    let n = series.int(b"FN", s)?;
    let n = usize::try_from(n)
        .ok()
        .filter(|&n| n <= 1 << 20)
        .ok_or_else(|| Error::at(series.at, format!("{n} read features")))?;
    let mut out = Vec::with_capacity(n.min(1024));
    let mut position = 0i32;
    for _ in 0..n {
        let code = series.byte(b"FC", s)?;
        position = position.wrapping_add(series.int(b"FP", s)?);
        let kind = match code {
            b'B' => FeatureKind::Base {
                base: series.byte(b"BA", s)?,
                quality: series.byte(b"QS", s)?,
            },
            b'X' => FeatureKind::Substitution(series.byte(b"BS", s)?),
            b'I' => FeatureKind::Insertion(series.bytes(b"IN", s)?),
            b'i' => FeatureKind::InsertBase(series.byte(b"BA", s)?),
            b'D' => FeatureKind::Deletion(series.int(b"DL", s)?),
            b'b' => FeatureKind::Bases(series.bytes(b"BB", s)?),
            b'q' => FeatureKind::Qualities(series.bytes(b"QQ", s)?),
            b'Q' => FeatureKind::Quality(series.byte(b"QS", s)?),
            b'S' => FeatureKind::SoftClip(series.bytes(b"SC", s)?),
            b'H' => FeatureKind::HardClip(series.int(b"HC", s)?),
            b'P' => FeatureKind::Padding(series.int(b"PD", s)?),
            b'N' => FeatureKind::RefSkip(series.int(b"RS", s)?),
            c => {
                return Err(Error::at(
                    series.at,
                    format!("unknown read feature code {c:#04x}"),
                ))
            }
        };
        out.push(Feature { position, kind });
    }
    Ok(out)
}

/// The data series encodings of a container, looked up by key.
struct Series<'a> {
    ch: &'a CompressionHeader,
    at: u64,
}

impl Series<'_> {
    fn get(&self, key: &[u8; 2]) -> Result<&Encoding, Error> {
        self.ch.series.get(key).ok_or_else(|| {
            Error::at(
                self.at,
                format!(
                    "data series {} has no encoding",
                    String::from_utf8_lossy(key)
                ),
            )
        })
    }

    fn int(&self, key: &[u8; 2], s: &mut Streams<'_>) -> Result<i32, Error> {
        self.get(key)?.int(s)
    }

    fn byte(&self, key: &[u8; 2], s: &mut Streams<'_>) -> Result<u8, Error> {
        self.get(key)?.byte(s)
    }

    fn bytes(&self, key: &[u8; 2], s: &mut Streams<'_>) -> Result<Vec<u8>, Error> {
        self.get(key)?.bytes(s)
    }
}
