//! Which bytes to ask for next: the window policy, pure.

use std::ops::Range;

/// The first request past a readahead limit asks for this much; each further one in a row
/// doubles it, up to the request size. A limit slightly too short then costs little.
pub(crate) const OVERRUN_START: u64 = 64 * 1024;

/// The range a read at `pos` asks for when no window holds it: up to the readahead limit (at
/// most `request_size`), or, past the limit, a small request that grows while reads keep going
/// past it (`overrun`, updated). Clamped to the object's size when known; empty at or past it.
pub(crate) fn next_window(
    pos: u64,
    limit: Option<u64>,
    size: Option<u64>,
    request_size: u64,
    overrun: &mut u64,
) -> Range<u64> {
    let request = request_size.max(1);
    let mut end = match limit {
        Some(limit) if limit > pos => {
            *overrun = OVERRUN_START;
            limit.min(pos.saturating_add(request))
        }
        Some(_) => {
            let n = (*overrun).min(request);
            *overrun = overrun.saturating_mul(2);
            pos.saturating_add(n)
        }
        None => pos.saturating_add(request),
    };
    if let Some(size) = size {
        end = end.min(size);
    }
    pos..end.max(pos)
}

/// `ranges` cut into windows of at most `request_size` bytes, in order; empty ranges dropped.
pub(crate) fn split(ranges: &[Range<u64>], request_size: u64) -> Vec<Range<u64>> {
    let request = request_size.max(1);
    let mut out = Vec::new();
    for r in ranges {
        let mut start = r.start;
        while start < r.end {
            let end = r.end.min(start.saturating_add(request));
            out.push(start..end);
            start = end;
        }
    }
    out
}

/// The smallest part a range is cut into so that more fetchers share it: below this a part's
/// transfer is short beside a response's latency (256 KiB at 35 MB/s is 7.5 ms; the `s3` bench
/// profile answers in 20 ms).
pub(crate) const MIN_PART: u64 = 256 * 1024;

/// `r` cut into parts, in order: a range longer than `part` is cut into pieces of the smallest
/// power of two (at least [`MIN_PART`], at most `part`) that leaves no more than `fetchers`
/// pieces, so a range of a few parts' length (the rest of an index, a mid-sized span) keeps
/// every fetcher busy, and a long one goes out as parts of `part` bytes; a range no longer
/// than `part` stays one request (a part size above every range switches parts off). Piece
/// sizes are powers of two from the range's start, so advice repeated for a range whose end
/// moved a little (a span planned from part of an index) is cut at the same bytes.
pub(crate) fn parts(r: Range<u64>, part: u64, fetchers: usize) -> Vec<Range<u64>> {
    let part = part.max(1);
    let fetchers = u64::try_from(fetchers.max(1)).unwrap_or(u64::MAX);
    let len = r.end.saturating_sub(r.start);
    let piece = if len <= part {
        part
    } else {
        len.div_ceil(fetchers)
            .checked_next_power_of_two()
            .unwrap_or(part)
            .max(MIN_PART)
            .min(part)
    };
    split(std::slice::from_ref(&r), piece)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_follow_the_limit_and_overrun_grows() {
        let mut o = OVERRUN_START;
        assert_eq!(next_window(0, Some(500), None, 1000, &mut o), 0..500);
        assert_eq!(next_window(0, Some(5000), None, 1000, &mut o), 0..1000);
        assert_eq!(next_window(0, None, Some(300), 1000, &mut o), 0..300);
        let mut o = 100;
        assert_eq!(next_window(600, Some(500), None, 1000, &mut o), 600..700);
        assert_eq!(next_window(700, Some(500), None, 1000, &mut o), 700..900);
        assert_eq!(next_window(900, Some(500), None, 1000, &mut o), 900..1300);
        assert_eq!(next_window(1300, Some(500), None, 1000, &mut o), 1300..2100);
        assert_eq!(next_window(2100, Some(500), None, 1000, &mut o), 2100..3100);
        // A limit ahead again resets the growth.
        assert_eq!(next_window(0, Some(10), None, 1000, &mut o), 0..10);
        assert_eq!(o, OVERRUN_START);
        // At or past the size: nothing to ask.
        assert!(next_window(300, None, Some(300), 1000, &mut o).is_empty());
    }

    #[test]
    fn advice_is_cut_at_the_request_size() {
        assert_eq!(
            split(&[0..2500, 3000..3000, 5000..5100], 1000),
            vec![0..1000, 1000..2000, 2000..2500, 5000..5100]
        );
    }

    #[test]
    fn a_range_of_a_few_parts_is_shared_by_every_fetcher() {
        const K: u64 = 1024;
        let mib = 1024 * K;
        // The rest of an index (2.38 MB) on 6 fetchers: five parts of 512 KiB, not three of
        // 1 MiB; a long span in parts of the part size; a short one whole.
        let index = 245_760..2_625_536;
        let got = parts(index.clone(), mib, 6);
        assert_eq!(got.len(), 5);
        assert!(got.iter().all(|r| r.end - r.start <= 512 * K));
        assert_eq!((got[0].start, got[4].end), (index.start, index.end));
        assert_eq!(parts(0..40 * mib, mib, 6).len(), 40);
        assert_eq!(parts(0..100 * K, mib, 6), vec![0..100 * K]);
        // Never below MIN_PART, never above the part size (a part size below MIN_PART wins);
        // a range no longer than a part stays whole.
        assert_eq!(parts(0..1200 * K, mib, 8).len(), 5);
        assert_eq!(parts(0..64 * K, 16 * K, 8).len(), 4);
        assert_eq!(parts(0..900 * K, mib, 8).len(), 1);
        // The same cut when the end moved by less than a block: requests already sent are kept.
        let a = parts(index.start..2_600_000, mib, 6);
        assert_eq!(a[..4], got[..4]);
    }
}
