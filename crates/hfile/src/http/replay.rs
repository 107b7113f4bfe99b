//! One response replayed through the callbacks of a real attempt, without a network: its head
//! line by line as libcurl hands it over, then its body in the pieces given. The fuzz target of
//! the response checks (`fuzz/`) feeds it arbitrary heads and bodies; nothing else uses it.

use std::sync::Arc;

use super::check::{Asked, Verdict};
use super::collector::Collector;
use super::transfer::Transfer;

/// A request, as the HTTP backend sends it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asking {
    /// `bytes=start-(end-1)`, or `bytes=start-` when `end` is `None`; `want` bytes are kept.
    Range {
        /// The first byte asked for.
        start: u64,
        /// One past the last byte asked for; `None`: to the end.
        end: Option<u64>,
        /// Bytes kept of the response.
        want: u64,
    },
    /// `bytes=-n`.
    Suffix(u64),
}

/// What the callbacks made of a response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replayed {
    /// The status of the last response head (0 if none could be read).
    pub status: u32,
    /// For data accepted by the checks: the first object byte, the length the response
    /// announced, and the object size if told.
    pub data: Option<(u64, u64, Option<u64>)>,
    /// The checks' refusal, if they refused the response.
    pub refused: Option<String>,
    /// Why the body callback stopped the transfer, if it did.
    pub stopped: Option<String>,
    /// The object offset of the first byte kept, and the bytes kept for the reader.
    pub kept: (Option<u64>, Vec<u8>),
}

/// Replays `head` (CRLF- or LF-separated lines) and then each piece of `body` through the
/// callbacks of one attempt asking `asking` of an object whose size is `known_size` if known.
/// `want` for a range is capped at 16 MiB (the buffer for the kept bytes is made up front).
pub fn replay(asking: Asking, known_size: Option<u64>, head: &[u8], body: &[&[u8]]) -> Replayed {
    let (asked, want, start) = match asking {
        Asking::Range { start, end, want } => (
            Asked {
                start: Some(start),
                end,
                suffix: None,
                known_size,
            },
            want.min(16 << 20),
            Some(start),
        ),
        Asking::Suffix(n) => (
            Asked {
                start: None,
                end: None,
                suffix: Some(n),
                known_size,
            },
            n.min(16 << 20),
            None,
        ),
    };
    let transfer = Arc::new(Transfer::new(start, want));
    let mut c = Collector::default();
    c.begin(Some(Arc::clone(&transfer)), asked, want);
    let mut lines = head.split_inclusive(|&b| b == b'\n');
    let head_ok = lines.all(|line| c.header(line));
    if head_ok {
        for piece in body {
            if c.write(piece) != piece.len() {
                break;
            }
        }
        // An empty body is judged at its end, as after a transfer.
        c.judge();
    }
    transfer.finish(Ok(()));
    let kept = transfer.wait_all().unwrap_or_default();
    let (data, refused) = match &c.verdict {
        Some(Ok(Verdict::Data { first, len, total })) => (Some((*first, *len, *total)), None),
        Some(Err(e)) => (None, Some(e.clone())),
        _ => (None, None),
    };
    Replayed {
        status: c.response.status,
        data,
        refused,
        stopped: c.stop.as_ref().map(|s| format!("{s:?}")),
        kept,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partial_answer_is_kept_and_a_shifted_one_refused() {
        let asking = Asking::Range {
            start: 10,
            end: Some(14),
            want: 4,
        };
        let head = b"HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 10-13/100\r\n\r\n";
        let r = replay(asking, None, head, &[b"ab", b"cd"]);
        assert_eq!(r.status, 206);
        assert_eq!(r.data, Some((10, 4, Some(100))));
        assert_eq!(r.kept, (Some(10), b"abcd".to_vec()));
        let head = b"HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 11-14/100\r\n\r\n";
        let r = replay(asking, None, head, &[b"abcd"]);
        assert!(r.refused.is_some_and(|e| e.contains("does not start")));
        assert!(r.kept.1.is_empty());
    }

    /// The input of the `http_response` fuzz target's first crash: a suffix request answered
    /// `206` with a total of 0 had its body kept.
    #[test]
    fn fuzz_crash_suffix_with_a_total_of_zero() {
        let head = b"HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 72-9190/0\r\n\r\n";
        let r = replay(
            Asking::Suffix(28),
            None,
            head,
            &[b"01234567890123", b"45678901234567"],
        );
        assert_eq!(r.status, 206);
        assert!(r.data.is_none());
        assert!(r.kept.1.is_empty(), "{r:?}");
    }
}
