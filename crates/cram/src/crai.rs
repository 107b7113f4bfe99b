//! The `.crai` index: gzipped text, one line a slice (reference id, alignment start and span,
//! the container's offset, the slice's offset within the container's blocks, its size), and
//! where a region query starts reading, as htslib's `cram_index_query` chooses.

use std::io::Read;

use crate::Error;

/// One line of a `.crai`: a slice and the reference range it covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CraiEntry {
    /// The reference id (-1: unplaced).
    pub ref_id: i32,
    /// The 1-based start of the slice's alignments.
    pub start: i64,
    /// The reference length they cover.
    pub span: i64,
    /// The container's byte offset in the file.
    pub container: u64,
    /// The slice's offset from the end of the container header.
    pub slice: u64,
    /// The slice's size in bytes.
    pub size: u64,
}

/// Longest index text accepted (a line per slice: a whole genome's takes a few MB).
const MAX_TEXT: u64 = 1 << 30;

/// Reads a `.crai` (gzipped, or plain text as some tools write it). A file of fewer than two
/// bytes is no index (htslib refuses it too); a line that is not six numbers is an error
/// naming its byte in the inflated text.
pub fn parse(data: &[u8]) -> Result<Vec<CraiEntry>, Error> {
    if data.len() < 2 {
        return Err(Error::at(
            0,
            format!("an index of {} bytes is empty", data.len()),
        ));
    }
    let mut text = Vec::new();
    if data.starts_with(&[0x1f, 0x8b]) {
        // The text is about three times the gzip: one allocation, not a doubling series.
        text.reserve(data.len().saturating_mul(4).min(MAX_TEXT as usize));
        let mut gz = flate2::bufread::MultiGzDecoder::new(data);
        if let Err(e) = (&mut gz).take(MAX_TEXT).read_to_end(&mut text) {
            // Where the inflating stopped: the damage is there or just before.
            let at = data.len() - gz.get_ref().len();
            return Err(Error::at(
                at as u64,
                format!("index does not decompress: {e}"),
            ));
        }
    } else {
        text = data.to_vec();
    }
    let mut out = Vec::new();
    let mut at = 0;
    for (n, line) in text.split(|&b| b == b'\n').enumerate() {
        let line_at = at as u64;
        at += line.len() + 1;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let bad = || {
            Error::at(
                line_at,
                format!("line {} of the inflated index is not six numbers", n + 1),
            )
        };
        // Six numbers between ASCII whitespace, read in place (the index is on a remote
        // query's way to its first container).
        let mut f = [0i64; 6];
        let mut fields = line
            .split(u8::is_ascii_whitespace)
            .filter(|t| !t.is_empty());
        for v in &mut f {
            let t = fields.next().ok_or_else(bad)?;
            *v = std::str::from_utf8(t)
                .ok()
                .and_then(|t| t.parse::<i64>().ok())
                .ok_or_else(bad)?;
        }
        if fields.next().is_some() {
            return Err(bad());
        }
        let [r, s, sp, c, sl, sz] = f;
        if r < -1 {
            // htslib refuses the whole index ("Malformed index file").
            return Err(Error::at(
                line_at,
                format!("line {} of the inflated index names reference {r}", n + 1),
            ));
        }
        let u = |v: i64| u64::try_from(v).map_err(|_| bad());
        out.push(CraiEntry {
            ref_id: i32::try_from(r).map_err(|_| bad())?,
            start: s,
            span: sp,
            container: u(c)?,
            slice: u(sl)?,
            size: u(sz)?,
        });
    }
    Ok(out)
}

/// The lines of `range`'s reference that end at or after its start, and of those the ones
/// that start by its end (that overlap it).
fn reaching<'a>(
    entries: &'a [CraiEntry],
    range: &crate::reader::Range,
) -> (Vec<&'a CraiEntry>, Vec<&'a CraiEntry>) {
    let after: Vec<&CraiEntry> = entries
        .iter()
        .filter(|e| e.ref_id == range.ref_id && e.start.saturating_add(e.span) > range.start)
        .collect();
    let overlapping = after
        .iter()
        .copied()
        .filter(|e| e.start <= range.end)
        .collect();
    (after, overlapping)
}

/// The container a query of `range` starts reading at: the first in file order of those whose
/// lines of its reference overlap it (in a sorted file the earliest that overlaps: a slice
/// starting earlier may reach further); with none, the first in file order that ends at or
/// after the range's start (its header then decides), else the reference's last. `None` when
/// the index has no slice of the reference (the query finds nothing); reference -1 is the
/// unplaced reads, from their first container. [`check_order`] says whether the lines let
/// this choice be trusted.
pub fn start_of(entries: &[CraiEntry], range: &crate::reader::Range) -> Option<u64> {
    let of_ref = || entries.iter().filter(|e| e.ref_id == range.ref_id);
    if range.ref_id < 0 {
        return of_ref().map(|e| e.container).min();
    }
    let (after, overlapping) = reaching(entries, range);
    let first = |lines: &[&CraiEntry]| lines.iter().map(|e| e.container).min();
    first(&overlapping).or_else(|| first(&after)).or_else(|| {
        of_ref()
            .max_by_key(|e| (e.start, e.container, e.slice))
            .map(|e| e.container)
    })
}

/// Checks that the index's lines let [`start_of`]'s choice be trusted, as they do in a sorted
/// file: the lines overlapping `range` come in file order by their starts, and no container
/// before the first of them holds a line that ends past the range's start. Otherwise the index
/// (a line edited or stale) or the file (containers moved) is damaged, and no choice of a first
/// container is sure to find the range's records: an error naming the container whose line is
/// out of place.
pub fn check_order(entries: &[CraiEntry], range: &crate::reader::Range) -> Result<(), Error> {
    if range.ref_id < 0 {
        return Ok(());
    }
    let (after, mut overlapping) = reaching(entries, range);
    overlapping.sort_by_key(|e| (e.container, e.slice));
    let out_of_place = |e: &CraiEntry, before: i64| {
        Error::at(
            e.container,
            format!(
                "the index's line for the container here starts at {}, out of order with the \
                 line at {before}: the index or the file is out of order",
                e.start
            ),
        )
    };
    for pair in overlapping.windows(2) {
        if pair[1].start < pair[0].start {
            return Err(out_of_place(pair[1], pair[0].start));
        }
    }
    if let Some(first) = overlapping.first() {
        if let Some(e) = after.iter().find(|e| e.container < first.container) {
            return Err(out_of_place(e, first.start));
        }
    }
    Ok(())
}

/// Whether a container's header agrees with the index's lines for it: each line of the
/// container's reference (any, for a container of several), and each line's span within the
/// container's for a placed one. Every CRAM and `.crai` that samtools, htsjdk and the
/// hts-specs test data hold agree so; a stale or damaged index does not.
pub fn agrees(lines: &[CraiEntry], h: &crate::ContainerHeader) -> bool {
    let (start, span) = (i64::from(h.start), i64::from(h.span));
    lines.iter().all(|e| match h.reference_id {
        crate::slice::MULTI_REF => true,
        r if r < 0 => e.ref_id == r,
        r => {
            e.ref_id == r
                && e.start >= start
                && e.span >= 0
                && e.start.saturating_add(e.span) <= start.saturating_add(span)
        }
    })
}

/// The containers a region query reads, as byte ranges in file order: from the one
/// [`start_of`] names (read whatever the index says of its start, as htslib's
/// `cram_first_slice` and multi-region iterator read it), every container the reader would
/// decode for `range` (htslib's `CRAM_OPT_RANGE` rules, [`crate::reader::Range`]), up to the
/// first that ends it (of another single reference, or starting past the range's end), as
/// the index tells them. Containers it would skip unread are left out. The reader takes these as a plan only: it reads on by
/// the containers' own headers ([`crate::Reader::read_ranges`]). Each runs from its offset to the next container's; the last in the file to
/// `data_end` (where the EOF container begins). `None` when the index has no slice of the
/// reference.
pub fn containers_for(
    entries: &[CraiEntry],
    range: &crate::reader::Range,
    data_end: u64,
) -> Option<Vec<std::ops::Range<u64>>> {
    let first = start_of(entries, range)?;
    if range.ref_id < 0 {
        // The unplaced reads come last: from the first of them to the end, as htslib's
        // multi-region iterator reads them (a region's reading ends by the headers anyway).
        return Some(std::iter::once(first..data_end.max(first)).collect());
    }
    let mut offsets: Vec<u64> = entries.iter().map(|e| e.container).collect();
    offsets.sort_unstable();
    offsets.dedup();
    let mut out = Vec::new();
    for (i, &offset) in offsets.iter().enumerate().skip_while(|(_, &o)| o < first) {
        let end = offsets.get(i + 1).copied().unwrap_or(data_end).max(offset);
        if offset == first {
            // Read whatever its lines say: its header decides (`cram_first_slice`).
            out.push(offset..end);
            continue;
        }
        let mut of = entries.iter().filter(|e| e.container == offset);
        let Some(one) = of.next() else { continue };
        let (mut lo, mut hi, mut multi) = (one.start, one.start.saturating_add(one.span), false);
        for e in of {
            multi |= e.ref_id != one.ref_id;
            lo = lo.min(e.start);
            hi = hi.max(e.start.saturating_add(e.span));
        }
        if multi {
            out.push(offset..end);
            continue;
        }
        let placed = range.ref_id >= 0;
        if one.ref_id < range.ref_id
            || (placed && one.ref_id == range.ref_id && hi.saturating_sub(1) < range.start)
        {
            continue;
        }
        if one.ref_id != range.ref_id || (placed && lo > range.end) {
            break;
        }
        out.push(offset..end);
    }
    Some(out)
}

/// [`containers_for`] for a region read on by the containers' headers
/// ([`crate::Reader::read_ranges`]): a first container the index says holds nothing of the
/// range (it starts past it, or ends before it) is planned as its header alone (an empty range
/// at its offset, which the reader reads [`crate::reader::HEADER_PEEK`] bytes of): its header
/// decides, as htslib's reading of it does, and a container the index is right about costs a
/// few bytes.
pub fn plan_for_range(
    entries: &[CraiEntry],
    range: &crate::reader::Range,
    data_end: u64,
) -> Option<Vec<std::ops::Range<u64>>> {
    let mut out = containers_for(entries, range, data_end)?;
    if let Some(first) = out.first_mut() {
        let past = entries
            .iter()
            .filter(|e| e.container == first.start)
            .all(|e| {
                let last = e.start.saturating_add(e.span).saturating_sub(1);
                let apart = e.start > range.end || last < range.start;
                range.ref_id >= 0 && e.ref_id == range.ref_id && apart
            });
        if past {
            first.end = first.start;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader::Range;

    fn entry(ref_id: i32, start: i64, span: i64, container: u64) -> CraiEntry {
        CraiEntry {
            ref_id,
            start,
            span,
            container,
            slice: 0,
            size: 0,
        }
    }

    #[test]
    #[allow(clippy::single_range_in_vec_init)] // lists of one container each
    fn index_lines_are_six_numbers() {
        let e = super::parse(b"0 1 100 26 500 1000\n\n-1\t0 0 2000 80 90\r\n").unwrap();
        assert_eq!(e.len(), 2);
        assert_eq!((e[0].ref_id, e[0].span, e[0].size), (0, 100, 1000));
        assert_eq!((e[1].ref_id, e[1].container, e[1].slice), (-1, 2000, 80));
        for bad in [
            &b"0 1 2 3 4\n"[..],
            b"0 1 2 3 4 5 6\n",
            b"0 1 2 3 4 x\n",
            b"0 1 2 3 4 -5\n",
            b"-2 0 0 26 0 10\n",
        ] {
            assert!(
                super::parse(bad).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    #[allow(clippy::single_range_in_vec_init)] // lists of one container each
    fn a_first_container_the_index_puts_past_the_range_is_planned_as_its_header() {
        let entries = [
            entry(0, 1, 100, 100),
            entry(0, 300, 100, 300),
            entry(1, 1, 9, 400),
        ];
        let r = |ref_id, start, end| Range { ref_id, start, end };
        // In the gap between two containers: the second's header decides.
        assert_eq!(
            plan_for_range(&entries, &r(0, 150, 250), 600),
            Some(vec![300..300])
        );
        // Overlapping: read whole, as containers_for says.
        assert_eq!(
            plan_for_range(&entries, &r(0, 150, 350), 600),
            Some(vec![300..400])
        );
        // Past the reference's last line: its container's header decides.
        assert_eq!(
            plan_for_range(&entries, &r(0, 500, 600), 600),
            Some(vec![300..300])
        );
    }

    #[test]
    fn lines_reaching_a_range_come_in_file_order() {
        let r = |start, end| Range {
            ref_id: 0,
            start,
            end,
        };
        let sorted = [entry(0, 3, 100, 100), entry(0, 83, 100, 200)];
        assert!(check_order(&sorted, &r(90, 100)).is_ok());
        let swapped = [entry(0, 83, 100, 100), entry(0, 3, 100, 200)];
        assert_eq!(check_order(&swapped, &r(90, 100)).unwrap_err().offset, 200);
        // Only the lines that reach the range count.
        assert!(check_order(&swapped, &r(150, 170)).is_ok());
        // A container before the first that overlaps, starting past the range: moved.
        assert_eq!(check_order(&swapped, &r(10, 20)).unwrap_err().offset, 100);
        // In a gap, the first container in file order ending past the range's start: its
        // header decides (a start edited past the range hides nothing).
        let edited = [entry(0, 2001, 159, 100), entry(0, 1222, 337, 200)];
        assert_eq!(start_of(&edited, &r(1, 1010)), Some(100));
    }

    #[test]
    fn a_header_agrees_with_lines_of_its_reference_within_its_span() {
        let h = |reference_id, start, span| crate::ContainerHeader {
            length: 0,
            reference_id,
            start,
            span,
            records: 1,
            record_counter: 0,
            bases: 0,
            blocks: 1,
            landmarks: vec![0],
            header_len: 0,
        };
        let lines = [entry(0, 59, 2392, 579), entry(0, 2275, 2060, 579)];
        assert!(agrees(&lines, &h(0, 59, 5690)));
        assert!(!agrees(&lines, &h(0, 60, 5690)), "a line starts before it");
        assert!(!agrees(&lines, &h(0, 59, 4000)), "a line ends after it");
        assert!(!agrees(&lines, &h(1, 59, 5690)), "another reference");
        assert!(agrees(&lines, &h(crate::slice::MULTI_REF, 0, 0)));
        assert!(agrees(&[entry(-1, 0, 1, 9)], &h(-1, 0, 1)));
        assert!(!agrees(&[entry(0, 0, 1, 9)], &h(-1, 0, 1)));
    }

    #[test]
    // The answers are lists of byte ranges; a list of one is meant.
    #[allow(clippy::single_range_in_vec_init)]
    fn a_range_needs_its_containers_and_no_others() {
        let entries = [
            entry(0, 1, 100, 100),
            entry(0, 90, 100, 200),
            entry(0, 300, 100, 300),
            entry(1, 1, 100, 400),
            entry(-1, 0, 1, 500),
        ];
        let r = |ref_id, start, end| Range { ref_id, start, end };
        // From the first overlapping container to the last that starts within the range.
        assert_eq!(
            containers_for(&entries, &r(0, 95, 150), 600),
            Some(vec![100..200, 200..300])
        );
        // Another reference ends the range; the last runs to the EOF container.
        assert_eq!(
            containers_for(&entries, &r(0, 350, 1000), 600),
            Some([300..400].to_vec())
        );
        assert_eq!(
            containers_for(&entries, &r(-1, 0, i64::MAX), 600),
            Some([500..600].to_vec())
        );
        assert_eq!(containers_for(&entries, &r(7, 1, 10), 600), None);
        // A later container's hostile start of i64::MIN ends before anything (its end does not
        // wrap round to the top), so it is passed over.
        // The first container is read whatever its line says of its start (htslib reads it):
        // a region in the gap before it still reads it, alone.
        assert_eq!(
            containers_for(&entries, &r(0, 200, 250), 600),
            Some(vec![300..400])
        );
        let hostile = [entry(0, 10, 100, 100), entry(0, i64::MIN, 0, 200)];
        assert_eq!(
            containers_for(&hostile, &r(0, 5, 50), 600),
            Some([100..200].to_vec())
        );
    }
}
