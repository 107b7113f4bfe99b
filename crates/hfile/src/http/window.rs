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
}
