//! Decoding a container's slices into whole records: blocks, data series, reconstruction
//! against the reference, mates. What needs the reader (its byte source, the FASTA) is done by
//! the [`Reader`]; the rest by a [`Context`], which decoding workers share.

pub(super) use super::slices::Slices;
use super::spare;
use super::*;
use crate::record::{FeatureKind, Stored};

/// A slice's blocks decoded: content type, content id, bytes, offset.
pub(super) type Decoded = (ContentType, i32, Vec<u8>, u64);

/// The reference bases a slice is rebuilt against: bases, first and last 1-based position.
pub(super) type SliceRef = (Vec<u8>, i64, i64);

/// The reference bases a slice's records are rebuilt against: the slice's span, or (for
/// several references) the references' spans its records reach.
pub(super) struct Bases<'a> {
    pub(super) slice: Option<&'a SliceRef>,
    pub(super) whole: &'a BTreeMap<i32, (Vec<u8>, i64)>,
}

impl Bases<'_> {
    /// The reference bases a record is rebuilt against, if any.
    pub(super) fn view(&self, r: &Record) -> Option<RefView<'_>> {
        match self.slice {
            Some((bases, start, end)) => Some(RefView {
                bases,
                start: *start,
                end: *end,
            }),
            None => self
                .whole
                .get(&r.reference_id)
                .map(|(bases, start)| RefView {
                    bases,
                    start: *start,
                    end: start + bases.len() as i64 - 1,
                }),
        }
    }
}

/// What making records whole needs of the reader besides reference bases: read-only, so that
/// decoding workers share it.
pub(super) struct Context {
    pub(super) header: SamHeader,
    pub(super) version: Version,
    pub(super) prefix: String,
    pub(super) decode_md: bool,
}

/// Decodes a slice's blocks.
pub(super) fn decode_blocks(blocks: &[Block<'_>]) -> Result<Vec<Decoded>, Error> {
    blocks
        .iter()
        .map(|b| {
            Ok((
                b.content_type,
                b.content_id,
                b.decode()?.into_owned(),
                b.offset,
            ))
        })
        .collect()
}

impl Reader {
    /// The context records are made whole in, made once the reader's options are set.
    pub(super) fn context(&mut self) -> std::sync::Arc<Context> {
        if let Some(c) = &self.context {
            return std::sync::Arc::clone(c);
        }
        // Decoded with `-T`'s lengths where they contradict `@SQ LN` (htslib's
        // `sanitise_SQ_lines`): a read past the FASTA's end is not an error.
        let header = match (&self.reference, self.explicit) {
            (Some(fasta), true) => self.header.with_lengths_of(fasta),
            _ => self.header.clone(),
        };
        let c = std::sync::Arc::new(Context {
            header,
            version: self.version,
            prefix: self.prefix.clone(),
            decode_md: self.decode_md,
        });
        self.context = Some(std::sync::Arc::clone(&c));
        c
    }

    pub(super) fn decode_container(
        &mut self,
        h: &ContainerHeader,
        body: &[u8],
        body_at: u64,
        laying: Option<&Laying>,
    ) -> Result<(Made, bool), Error> {
        let ctx = self.context();
        let (ch, mut slices) = Slices::new(h, body, body_at, self.version)?;
        let mut out = Made::new(laying);
        let mut ended = false;
        while let Some((sh, blocks, at)) = slices.next_slice()? {
            let blocks = decode_blocks(&blocks)?;
            let stored = ctx.records(&ch, &sh, &blocks, self.range.as_ref(), at)?;
            let slice_ref = self.slice_ref(&ch, &sh, &blocks, at)?;
            if sh.reference_id == crate::slice::MULTI_REF
                && ch.reference_required
                && !self.without_bases
            {
                // htslib reads these references whole; only the bases the slice's records can
                // reach are read here (each record's start to its start plus its length and
                // deletions, more than it aligns to), so a remote FASTA is asked for no more.
                self.whole.clear();
                let mut reach: BTreeMap<i32, (i64, i64)> = BTreeMap::new();
                for r in &stored.records {
                    if r.reference_id >= 0 && r.bam_flags & i32::from(UNMAPPED) == 0 {
                        let (from, to) = record_reach(&stored, r);
                        let e = reach.entry(r.reference_id).or_insert((from, to));
                        *e = (e.0.min(from), e.1.max(to));
                    }
                }
                for (id, (from, to)) in reach {
                    self.load_span(id, from, to, at)?;
                }
            }
            let bases = Bases {
                slice: slice_ref.as_ref(),
                whole: &self.whole,
            };
            let range = self.range.as_ref();
            ended = ctx.finish(&ch, (&sh, stored), bases, range, at, &mut out)?;
            if ended {
                // The range ends in this slice: the records of the slices after it are
                // dropped unread (htslib decodes them).
                break;
            }
        }
        Ok((out, ended))
    }

    /// The reference bases a slice is rebuilt against: embedded in it, from the FASTA, or none
    /// (unplaced reads, a reference-less slice, records wanted without bases, or several
    /// references, loaded whole by the caller).
    pub(super) fn slice_ref(
        &mut self,
        ch: &CompressionHeader,
        sh: &SliceHeader,
        blocks: &[Decoded],
        at: u64,
    ) -> Result<Option<SliceRef>, Error> {
        if sh.reference_id < 0 {
            Ok(None)
        } else if sh.embedded_reference >= 0 {
            let b = blocks
                .iter()
                .find(|b| b.0 == ContentType::External && b.1 == sh.embedded_reference)
                .ok_or_else(|| Error::at(at, "embedded reference block missing"))?;
            if i64::from(sh.span) > b.2.len() as i64 {
                return Err(Error::at(b.3, "embedded reference is too small"));
            }
            self.check_md5(sh, &b.2, at)?;
            let start = i64::from(sh.start);
            Ok(Some((b.2.clone(), start, start + i64::from(sh.span) - 1)))
        } else if !ch.reference_required || self.without_bases {
            Ok(None)
        } else {
            Ok(Some(self.slice_reference(sh, at)?))
        }
    }
}

impl Context {
    /// A slice's records as stored, each read length checked against what the slice holds;
    /// in `range`, none past the one that ends it that no record before needs as its mate.
    pub(super) fn records(
        &self,
        ch: &CompressionHeader,
        sh: &SliceHeader,
        blocks: &[Decoded],
        range: Option<&Range>,
        at: u64,
    ) -> Result<Stored, Error> {
        let core = blocks
            .iter()
            .find(|b| b.0 == ContentType::Core)
            .ok_or_else(|| Error::at(at, "slice without a core block"))?;
        let mut s = Streams::new(
            Bits::new(&core.2, core.3),
            blocks
                .iter()
                .filter(|b| b.0 == ContentType::External)
                .map(|b| (b.1, Cursor::new(&b.2, b.3))),
        );
        let mut stored = spare::stored();
        match range {
            None => read_slice_until(ch, sh, &mut s, &mut stored, |_, _| false)?,
            Some(range) => read_slice_until(ch, sh, &mut s, &mut stored, past_range(range))?,
        }
        // A mapped read's bases come from the reference or from the slice's blocks, so its
        // length is bounded by both together; a larger one is a lie, refused before allocating.
        let stored_bytes: i64 = blocks.iter().map(|b| b.2.len() as i64).sum();
        for r in &stored.records {
            let most = self
                .header
                .reference_len(r.reference_id)
                .max(i64::from(sh.span))
                .saturating_add(stored_bytes);
            if i64::from(r.read_length) > most {
                return Err(Error::at(
                    at,
                    format!(
                        "read length {} exceeds what the slice can hold",
                        r.read_length
                    ),
                ));
            }
        }
        Ok(stored)
    }

    /// A slice's records made whole against `bases`, mates resolved and names given; and whether a record
    /// ended `range`.
    ///
    /// In a range, a record the range drops is not made whole (htslib rebuilds them all): it
    /// keeps what its mates need of it (position, reference, flags, the end its features give,
    /// whether it has a stored name), so that the records kept come out as htslib makes them;
    /// the caller's range filter drops it by the same fields.
    pub(super) fn finish(
        &self,
        ch: &CompressionHeader,
        (sh, stored): (&SliceHeader, Stored),
        bases: Bases<'_>,
        range: Option<&Range>,
        at: u64,
        out: &mut Made,
    ) -> Result<bool, Error> {
        let (keep, ended) = match range {
            Some(range) => self.kept(&stored, range, |r| bases.view(r).is_some(), at)?,
            None => (vec![true; stored.records.len()], false),
        };
        // Laid out, the records are first only placed (what their mates need), in the list
        // kept for it with the buffers of the last slice's; each is made whole after.
        let laid = matches!(out, Made::Laid { .. });
        let mut recs = if laid {
            spare::placed()
        } else {
            spare::alignments()
        };
        let mut links = spare::links();
        let n = stored.records.len();
        // Each is cleared where it is filled.
        recs.resize_with(n, Alignment::default);
        links.reserve(n);
        for (i, r) in stored.records.iter().enumerate() {
            let a = &mut recs[i];
            let view = bases.view(r);
            let link = if keep[i] && !laid {
                self.alignment(ch, (&stored, r), view, a, (i, at))?
            } else {
                self.dropped((&stored, r), view.is_some(), a, (i, at))?
            };
            links.push(link);
        }
        mates::resolve(&mut recs, &mut links, at)?;
        let stored_name = |m: usize| stored.name(&stored.records[m]);
        let naming = (&keep[..], stored_name);
        mates::name_unnamed(&mut recs, &links, naming, &self.prefix, sh.record_counter);
        match out {
            // One slice a container is the rule: its records are taken, not moved one by one.
            Made::Records(v) if v.is_empty() => *v = recs,
            Made::Records(v) => {
                v.append(&mut recs);
                spare::keep(recs);
            }
            Made::Laid { laid, layout, one } => {
                let placed = (&stored, &keep[..], &mut recs[..]);
                self.lay_out_kept(ch, placed, &bases, (laid, layout, one), at)?;
                spare::keep_placed(recs);
            }
        }
        spare::keep_lists(stored, links);
        Ok(ended)
    }

    /// Which records of a slice `range` keeps (htslib's `cram_get_seq` filter, in order: the
    /// first record past the range ends it, and drops every record after it), and whether
    /// one ended it.
    fn kept(
        &self,
        stored: &Stored,
        range: &Range,
        has_ref: impl Fn(&Record) -> bool,
        at: u64,
    ) -> Result<(Vec<bool>, bool), Error> {
        let mut keep = vec![false; stored.records.len()];
        for (i, r) in stored.records.iter().enumerate() {
            // A record starting in the range cannot end before it: its end (a walk of its
            // features) is not needed to tell its fate.
            let (ref_id, pos, end) = if i64::from(r.position) >= range.start {
                self.checked_flags(r, at)?;
                let pos = i64::from(r.position);
                (r.reference_id, pos, pos)
            } else {
                let (_, placed) = self.placement((stored, r), has_ref(r), at)?;
                placed
            };
            match Reader::record_fate(range, ref_id, pos, end) {
                Fate::Keep => keep[i] = true,
                Fate::Skip => {}
                Fate::End => return Ok((keep, true)),
            }
        }
        Ok((keep, false))
    }

    /// A record's checked flags, and its reference, start and end as [`Context::alignment`]
    /// makes them, from its features alone.
    fn placement(
        &self,
        (stored, r): (&Stored, &Record),
        with_ref: bool,
        at: u64,
    ) -> Result<(u16, (i32, i64, i64)), Error> {
        let flags = self.checked_flags(r, at)?;
        let pos = i64::from(r.position);
        let unmapped = r.bam_flags & i32::from(UNMAPPED) != 0;
        let end = if unmapped {
            pos
        } else {
            let ref_len = self.header.reference_len(r.reference_id);
            alignment_end(stored, r, with_ref && r.reference_id >= 0, ref_len)
        };
        Ok((flags, (r.reference_id, pos, end)))
    }

    /// A record a range drops (or one to be laid out, placed first): what its mates need of
    /// it, nothing made whole.
    fn dropped(
        &self,
        record: (&Stored, &Record),
        with_ref: bool,
        a: &mut Alignment,
        (index, at): (usize, u64),
    ) -> Result<Link, Error> {
        let r = record.1;
        let (flags, (ref_id, pos, end)) = self.placement(record, with_ref, at)?;
        a.clear();
        a.slice = at;
        // Its name is not copied: only a kept record's is written, and naming takes a
        // mate's from `stored`.
        a.name_stored = !r.name.is_empty();
        (a.flags, a.ref_id, a.pos, a.end) = (flags, ref_id, pos, end);
        Ok(Self::link(r, a, index))
    }

    /// A record's BAM flags, its reference and its position checked as htslib checks them
    /// (flags past 0xfff are outside its table of them: the slice fails).
    fn checked_flags(&self, r: &Record, at: u64) -> Result<u16, Error> {
        let flags = u16::try_from(r.bam_flags)
            .ok()
            .filter(|&f| f < 0x1000)
            .ok_or_else(|| Error::at(at, format!("BAM flags {} past 0xfff", r.bam_flags)))?;
        let nref = self.header.references.len() as i32;
        if r.reference_id < -1 || r.reference_id >= nref {
            return Err(Error::at(
                at,
                format!("unknown reference id {}", r.reference_id),
            ));
        }
        if flags & UNMAPPED == 0 && r.position <= 0 {
            return Err(Error::at(
                at,
                format!(
                    "read has alignment position {} but no unmapped flag",
                    r.position
                ),
            ));
        }
        Ok(flags)
    }

    /// What mate resolution needs of a record; a detached record's mate fields set on `a`.
    fn link(r: &Record, a: &mut Alignment, index: usize) -> Link {
        let detached = r.cram_flags & cf::DETACHED != 0;
        let mut link = Link {
            mate_line: -1,
            tlen_unset: true,
            detached,
            mate_flags: 0,
        };
        if detached {
            link.mate_flags = r.mate_flags;
            a.mate_ref_id = r.mate_reference_id;
            a.mate_pos = i64::from(r.mate_position);
            a.tlen = i64::from(r.template_size);
            link.tlen_unset = false;
        } else if let Some(d) = r.mate_distance {
            link.mate_line = index as i64 + 1 + i64::from(d);
        }
        link
    }

    /// One record made whole in `a` (its buffers reused), and what mate resolution needs.
    pub(super) fn alignment(
        &self,
        ch: &CompressionHeader,
        record: (&Stored, &Record),
        view: Option<RefView<'_>>,
        a: &mut Alignment,
        (index, at): (usize, u64),
    ) -> Result<Link, Error> {
        let (stored, r) = record;
        let flags = self.checked_flags(r, at)?;
        let (mut has_md, mut has_nm) = (r.md_stored, r.nm_stored);
        if !self.decode_md {
            // As if both were stored: nothing is made.
            (has_md, has_nm) = (true, true);
        }
        let len = usize::try_from(r.read_length).unwrap_or(0);
        a.clear();
        a.slice = at;
        a.name.extend_from_slice(stored.name(r));
        a.name_stored = !r.name.is_empty();
        (a.flags, a.ref_id) = (flags, r.reference_id);
        (a.pos, a.end) = (i64::from(r.position), i64::from(r.position));
        a.aux.extend_from_slice(stored.bytes(r.aux));
        if flags & UNMAPPED == 0 {
            let ref_len = self.header.reference_len(r.reference_id);
            let into = Rebuilt {
                seq: std::mem::take(&mut a.seq),
                qual: std::mem::take(&mut a.qual),
                cigar: std::mem::take(&mut a.cigar),
                aux: std::mem::take(&mut a.aux),
                end: 0,
            };
            let built = rebuild(ch, record, view, ref_len, (has_md, has_nm), into, at)?;
            (a.seq, a.qual, a.cigar, a.aux) = (built.seq, built.qual, built.cigar, built.aux);
            if r.cram_flags & cf::QUALITY_ARRAY != 0 {
                a.qual.clear();
                a.qual.extend_from_slice(stored.qualities(r));
            }
            debug_assert_eq!(
                built.end,
                alignment_end(stored, r, view.is_some() && r.reference_id >= 0, ref_len),
                "the end a dropped record is given is the one rebuilding finds"
            );
            a.end = built.end;
            a.mapq = u8::try_from(r.mapping_quality).unwrap_or(r.mapping_quality as u8);
        } else {
            if r.bases.len() == len {
                a.seq.extend_from_slice(stored.bytes(r.bases));
            } else {
                a.seq.resize(len, if view.is_some() { b'N' } else { b'=' });
            }
            if r.cram_flags & cf::QUALITY_ARRAY != 0 {
                a.qual.extend_from_slice(stored.qualities(r));
            } else {
                a.qual.resize(len, 255);
            }
        }
        if flags & UNMAPPED == 0 && r.cram_flags & cf::NO_SEQUENCE != 0 {
            a.seq.clear();
            a.qual.clear();
        }
        self.read_group(r, &mut a.aux, at)?;
        Ok(Self::link(r, a, index))
    }

    /// RG from the RG series, appended last as htslib appends it.
    fn read_group(&self, r: &Record, aux: &mut Vec<u8>, at: u64) -> Result<(), Error> {
        let rgs = &self.header.read_groups;
        let unknown = rgs.last().is_some_and(|g| g == b"UNKNOWN");
        let rg = if unknown && r.read_group == rgs.len() as i32 - 1 {
            -1
        } else {
            r.read_group
        };
        if rg < -1 || rg >= rgs.len() as i32 {
            return Err(Error::at(at, format!("read group {rg} not in the header")));
        }
        if rg >= 0 {
            aux.extend_from_slice(b"RGZ");
            aux.extend_from_slice(&rgs[rg as usize]);
            aux.push(0);
        }
        Ok(())
    }
}

/// When a slice's records are read no further in `range`: once one has ended it (a record
/// past its end or on a later reference: htslib's filter drops it and all after it), and
/// every record read before links to none after it (a mate downstream, `NF`, whose position,
/// flags and end a kept record's mate fields and template length come from). The end of a
/// record plays no part in ending a range, so the reference is not needed to tell.
fn past_range(range: &Range) -> impl FnMut(&Record, usize) -> bool + '_ {
    let mut ended = false;
    let mut reach: i64 = 0;
    move |r, index| {
        let index = index as i64;
        if let Some(d) = r.mate_distance {
            reach = reach.max(index + 1 + i64::from(d));
        }
        if !ended {
            let pos = i64::from(r.position);
            ended = matches!(
                Reader::record_fate(range, r.reference_id, pos, i64::MAX),
                Fate::End
            );
        }
        ended && index >= reach
    }
}

/// The reference positions (1-based, inclusive) a mapped record can touch: from its start, its
/// read length plus what its deletions and skips pass over (at least what it aligns to).
fn record_reach(stored: &Stored, r: &Record) -> (i64, i64) {
    let passed: i64 = stored
        .features(r)
        .iter()
        .map(|f| match f.kind {
            FeatureKind::Deletion(n) | FeatureKind::RefSkip(n) => i64::from(n.max(0)),
            _ => 0,
        })
        .sum();
    let start = i64::from(r.position);
    (start, start + i64::from(r.read_length.max(0)) + passed)
}

#[cfg(test)]
mod tests {
    use super::record_reach;
    use crate::record::{Feature, FeatureKind, Record, Span, Stored};

    #[test]
    fn a_record_reaches_its_length_and_deletions_past_its_start() {
        let feature = |position, kind| Feature { position, kind };
        let bytes = Span { start: 0, end: 2 };
        let stored = Stored {
            features: vec![
                feature(3, FeatureKind::SoftClip(bytes)),
                feature(10, FeatureKind::Deletion(7)),
                feature(20, FeatureKind::RefSkip(1000)),
                feature(30, FeatureKind::Insertion(bytes)),
            ],
            bytes: b"AC".to_vec(),
            ..Stored::default()
        };
        let r = Record {
            position: 100,
            read_length: 50,
            features: Span { start: 0, end: 4 },
            ..Record::default()
        };
        // Aligned: 46 matched bases, 7 deleted, 1000 skipped (ends at 1152): within 1157.
        assert_eq!(record_reach(&stored, &r), (100, 1157));
    }
}
