//! HTTP response validation: a response head (status line and headers, as libcurl hands them
//! over) and body replayed through the callbacks and checks of one real request attempt.
//!
//! The input is text: a first line saying what was asked (`R start end want known`, with `-` for
//! an open end or an unknown size, or `S n known` for a suffix), then the head up to an empty
//! line, then the body (handed over in two pieces). Whatever the server says, the bytes kept for
//! the reader are the body's first bytes, no more than were asked for, from the byte asked for.
#![no_main]

use hfile::http_replay::{replay, Asking};
use libfuzzer_sys::fuzz_target;

fn number(s: Option<&str>) -> Option<Option<u64>> {
    match s? {
        "-" => Some(None),
        n => n.parse().ok().map(Some),
    }
}

/// What was asked and the size known, as the backend would ask it (bounded requests are never
/// empty, and no request asks for more than 64 KiB here).
fn asking(line: &str) -> Option<(Asking, Option<u64>)> {
    let mut w = line.split(' ');
    match w.next()? {
        "R" => {
            let start = number(w.next())??;
            let end = number(w.next())?;
            let want = number(w.next())??;
            let known = number(w.next())?;
            let want = match end {
                Some(end) if end <= start || end - start > 1 << 16 => return None,
                Some(end) => end - start,
                None => want.min(1 << 16),
            };
            Some((Asking::Range { start, end, want }, known))
        }
        "S" => {
            let n = number(w.next())??;
            let known = number(w.next())?;
            (n > 0 && n <= 1 << 16).then_some((Asking::Suffix(n), known))
        }
        _ => None,
    }
}

fuzz_target!(|data: &[u8]| {
    let Some(nl) = data.iter().position(|&b| b == b'\n') else {
        return;
    };
    let Ok(first) = std::str::from_utf8(&data[..nl]) else {
        return;
    };
    let Some((asked, known)) = asking(first.trim_end_matches('\r')) else {
        return;
    };
    let rest = &data[nl + 1..];
    // The head ends after its first empty line; the rest is the body.
    let head_end = rest
        .windows(2)
        .position(|w| w == b"\n\n")
        .map(|i| i + 2)
        .or_else(|| {
            rest.windows(4)
                .position(|w| w == b"\r\n\r\n")
                .map(|i| i + 4)
        })
        .unwrap_or(rest.len());
    let (head, body) = rest.split_at(head_end);
    let (one, two) = body.split_at(body.len() / 2);
    let r = replay(asked, known, head, &[one, two]);

    let (kept_start, kept) = &r.kept;
    let (start, want) = match asked {
        Asking::Range { start, want, .. } => (Some(start), want),
        Asking::Suffix(n) => (None, n),
    };
    assert!(
        kept.len() as u64 <= want,
        "kept {} of {want} asked",
        kept.len()
    );
    if kept.is_empty() {
        return;
    }
    assert!(
        matches!(r.status, 200 | 206),
        "bytes kept from a {} response",
        r.status
    );
    assert!(r.refused.is_none(), "bytes kept from a refused response");
    let Some((first, len, total)) = r.data else {
        panic!("bytes kept without a verdict: {r:?}");
    };
    assert_eq!(*kept_start, Some(first));
    assert_eq!(
        &body[..kept.len()],
        &kept[..],
        "the kept bytes are the body's first"
    );
    if let Some(start) = start {
        assert_eq!(
            first, start,
            "kept bytes from another place than asked: {r:?}"
        );
    }
    if let Asking::Range { end: Some(end), .. } = asked {
        assert!(
            first + kept.len() as u64 <= end,
            "kept past the end asked: {r:?}"
        );
    }
    if let Some(total) = total {
        assert!(
            first + kept.len() as u64 <= total,
            "kept past the object's end"
        );
        assert!(
            known.is_none_or(|k| k == total),
            "a size change was let through"
        );
    }
    let _ = len;
});
