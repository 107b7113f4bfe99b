//! libcurl's callbacks for one attempt of one request: headers are gathered, the body is checked
//! against the request before its first byte is kept, and accepted bytes go straight to the
//! shared [`Transfer`], where the reader can take them.

use std::sync::Arc;

use super::check::{self, Asked, Verdict};
use super::easy::Info;
use super::transfer::{Told, Transfer};

/// Error pages are read (and dropped) up to this size; beyond it the transfer is abandoned.
const ERROR_BODY_CAP: u64 = 64 * 1024;

/// The most header bytes an attempt takes in (redirects included); a server that goes on is
/// cut off.
const HEADER_CAP: usize = 256 * 1024;

/// What the write callback decided on its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Stop {
    /// Everything asked for has arrived; the rest of the body is not wanted.
    Enough,
    /// The response does not fit the request.
    Protocol(String),
    /// The reader no longer wants the bytes.
    Cancelled,
    /// The server answered a range with the whole object.
    RangeIgnored,
    /// No byte arrived for the stall time: the transfer is given up (and retried).
    Stalled(std::time::Duration),
}

/// The response of one attempt.
#[derive(Debug, Default)]
pub(crate) struct Response {
    pub status: u32,
    pub reason: String,
    pub content_range: Option<String>,
    pub content_length: Option<u64>,
    pub retry_after: Option<u64>,
    pub etag: Option<String>,
    pub last_modified: Option<String>,
    pub content_encoding: Option<String>,
    /// The start of an error page's body (for messages, e.g. S3's XML).
    pub error_body: Vec<u8>,
    /// Every header (the first 100), for a hook reading a refusal (`x-amz-bucket-region`).
    pub headers: Vec<(String, String)>,
}

/// The state libcurl's callbacks fill during one attempt.
#[derive(Default)]
pub(crate) struct Collector {
    /// Where accepted bytes go; `None` for a HEAD.
    pub transfer: Option<Arc<Transfer>>,
    pub asked: Option<Asked>,
    /// Body bytes still acceptable in this attempt.
    pub want: u64,
    pub response: Response,
    /// What the checks made of the response, once its body started (or it ended empty).
    pub verdict: Option<Result<Verdict, String>>,
    pub stop: Option<Stop>,
    /// Body bytes accepted in this attempt.
    pub accepted: u64,
    /// Body bytes that arrived in this attempt, kept or not.
    pub arrived: u64,
    /// Header bytes that arrived in this attempt.
    pub header_bytes: usize,
    /// Body bytes to drop before keeping any (a streamed object read again from its start).
    pub skip: u64,
    /// Give up when no byte arrives for this long (`None`: never).
    pub stall_after: Option<std::time::Duration>,
    /// When `arrived` last grew (or the attempt began).
    last_progress: Option<(u64, std::time::Instant)>,
}

impl Collector {
    /// Ready for an attempt asking `asked`, keeping at most `want` bytes into `transfer`.
    pub(crate) fn begin(&mut self, transfer: Option<Arc<Transfer>>, asked: Asked, want: u64) {
        *self = Collector {
            transfer,
            asked: Some(asked),
            want,
            ..Collector::default()
        };
    }

    /// What this response told about the object.
    pub(crate) fn told(&self) -> Told {
        let total = match &self.verdict {
            Some(Ok(
                Verdict::Data { total, .. }
                | Verdict::PastEnd { total }
                | Verdict::RangeIgnored { total },
            )) => *total,
            _ => None,
        };
        Told {
            total,
            etag: self.response.etag.clone(),
            last_modified: self.response.last_modified.clone(),
        }
    }

    /// Runs the checks once, when the body starts (or at the end for an empty body).
    pub(crate) fn judge(&mut self) {
        if self.verdict.is_some() || !matches!(self.response.status, 200 | 206 | 416) {
            return;
        }
        let Some(asked) = self.asked else {
            return;
        };
        let r = &self.response;
        let verdict = check::check_encoding(r.content_encoding.as_deref()).and_then(|()| {
            check::check(
                r.status,
                r.content_range.as_deref(),
                r.content_length,
                &asked,
            )
        });
        if let Ok(Verdict::Data { first, len, .. }) = verdict {
            self.want = self.want.min(len);
            if let Some(t) = &self.transfer {
                if t.start().is_none() {
                    t.set_start(first);
                }
            }
        }
        if let (Some(t), Ok(_)) = (&self.transfer, &verdict) {
            // Tell the reader what the response says as soon as it is known.
            let told = Told {
                total: match verdict {
                    Ok(
                        Verdict::Data { total, .. }
                        | Verdict::PastEnd { total }
                        | Verdict::RangeIgnored { total },
                    ) => total,
                    Err(_) => None,
                },
                etag: self.response.etag.clone(),
                last_modified: self.response.last_modified.clone(),
            };
            t.tell(&told);
        }
        self.verdict = Some(verdict);
    }
}

/// libcurl's callbacks (`easy`): the body, each header line, the trace and the progress clock.
impl Collector {
    /// Takes a piece of the body; a count short of `data.len()` stops the transfer.
    pub(crate) fn write(&mut self, data: &[u8]) -> usize {
        self.arrived += data.len() as u64;
        if self.transfer.as_ref().is_some_and(|t| t.is_cancelled()) {
            self.stop = Some(Stop::Cancelled);
            return 0;
        }
        if !matches!(self.response.status, 200 | 206) {
            // An error page: keep its start for the message; reading it lets the connection be
            // reused.
            let room = (ERROR_BODY_CAP as usize).saturating_sub(self.response.error_body.len());
            self.response
                .error_body
                .extend_from_slice(&data[..data.len().min(room)]);
            return if self.arrived > ERROR_BODY_CAP {
                0
            } else {
                data.len()
            };
        }
        self.judge();
        match &self.verdict {
            Some(Err(message)) => {
                self.stop = Some(Stop::Protocol(message.clone()));
                return 0;
            }
            Some(Ok(Verdict::RangeIgnored { .. })) => {
                self.stop = Some(Stop::RangeIgnored);
                return 0;
            }
            Some(Ok(Verdict::PastEnd { .. })) => {
                // Nothing of the object lies there (`bytes 0-0/0`, `bytes 72-99/0`): a body is
                // not its bytes, and is read only as far as an error page would be.
                return if self.arrived > ERROR_BODY_CAP {
                    0
                } else {
                    data.len()
                };
            }
            _ => {}
        }
        let whole = data.len();
        let skipped = (data.len() as u64).min(self.skip) as usize;
        self.skip -= skipped as u64;
        // Skipped bytes were handed on by an earlier attempt: they count as delivered.
        self.accepted += skipped as u64;
        let data = &data[skipped..];
        let room = self.want - self.accepted;
        let keep = (data.len() as u64).min(room) as usize;
        if let Some(t) = &self.transfer {
            t.append(&data[..keep]);
        }
        self.accepted += keep as u64;
        if keep < data.len() {
            let bounded =
                self.response.status == 206 && self.asked.is_some_and(|a| a.end.is_some());
            self.stop = Some(if bounded {
                Stop::Protocol(format!(
                    "the body is longer than the {} bytes asked for",
                    self.accepted
                ))
            } else {
                // A 200 to a request at 0, or an open-ended range: what was asked has arrived.
                Stop::Enough
            });
            return 0;
        }
        whole
    }

    /// Takes one header line; false stops the transfer.
    pub(crate) fn header(&mut self, data: &[u8]) -> bool {
        self.header_bytes += data.len();
        if self.header_bytes > HEADER_CAP {
            self.stop = Some(Stop::Protocol(format!(
                "the response headers go on past {} KiB",
                HEADER_CAP / 1024
            )));
            return false;
        }
        let line = String::from_utf8_lossy(data);
        let line = line.trim_end();
        if line.starts_with("HTTP/") {
            // A new response (the first, or the target of a redirect).
            self.response = Response::default();
            let mut parts = line.splitn(3, ' ');
            parts.next();
            self.response.status = parts.next().and_then(|s| s.parse().ok()).unwrap_or(0);
            self.response.reason = parts.next().unwrap_or("").to_string();
        } else if let Some((key, value)) = line.split_once(':') {
            let value = value.trim().to_string();
            let r = &mut self.response;
            if r.headers.len() < 100 {
                r.headers.push((key.trim().to_string(), value.clone()));
            }
            match key.trim().to_ascii_lowercase().as_str() {
                "content-range" => r.content_range = Some(value),
                "content-length" => r.content_length = value.parse().ok(),
                "retry-after" => r.retry_after = value.parse().ok(),
                "etag" => r.etag = Some(value),
                "last-modified" => r.last_modified = Some(value),
                "content-encoding" => r.content_encoding = Some(value),
                _ => {}
            }
        }
        true
    }

    /// libcurl's trace (verbosity 3 and up), without credentials: libcurl's own printer would
    /// show `Authorization` headers and signed query strings.
    pub(crate) fn debug(&mut self, kind: Info, data: &[u8]) {
        let prefix = match kind {
            Info::Text => "*",
            Info::HeaderIn => "<",
            Info::HeaderOut => ">",
            _ => {
                eprintln!("{{ ({} bytes of data)", data.len());
                return;
            }
        };
        let text = crate::redact::redact_text(&String::from_utf8_lossy(data));
        eprint!("{prefix} {text}");
    }

    /// Called about once a second; false stops the transfer.
    pub(crate) fn progress(&mut self) -> bool {
        // Lets a cancelled transfer stop even while no byte arrives.
        if self.transfer.as_ref().is_some_and(|t| t.is_cancelled()) {
            self.stop = Some(Stop::Cancelled);
            return false;
        }
        // A stall: libcurl calls this about once a second while nothing arrives, which is a
        // steadier clock for it than libcurl's own low-speed check.
        if let Some(limit) = self.stall_after {
            let now = std::time::Instant::now();
            match self.last_progress {
                Some((bytes, at)) if bytes == self.arrived => {
                    let quiet = now.duration_since(at);
                    if quiet >= limit && self.accepted < self.want {
                        self.stop = Some(Stop::Stalled(quiet));
                        return false;
                    }
                }
                _ => self.last_progress = Some((self.arrived, now)),
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::transfer::Available;

    fn collector(start: u64, end: u64, status: u32, range: Option<&str>) -> Collector {
        let mut c = Collector::default();
        let t = Arc::new(Transfer::new(Some(start), end - start));
        c.begin(
            Some(t),
            Asked {
                start: Some(start),
                end: Some(end),
                suffix: None,
                known_size: None,
            },
            end - start,
        );
        c.response.status = status;
        c.response.content_range = range.map(str::to_string);
        c
    }

    #[test]
    fn longer_body_than_asked_is_refused() {
        let mut c = collector(0, 4, 206, Some("bytes 0-3/10"));
        assert_eq!(c.write(b"abc"), 3);
        assert_eq!(c.write(b"de"), 0);
        assert!(matches!(c.stop, Some(Stop::Protocol(_))));
        assert_eq!(c.accepted, 4);
    }

    #[test]
    fn ok_at_offset_zero_keeps_only_what_was_asked() {
        let mut c = collector(0, 4, 200, None);
        c.response.content_length = Some(10);
        assert_eq!(c.write(b"abcdef"), 0);
        assert_eq!(c.stop, Some(Stop::Enough));
        assert_eq!(c.accepted, 4);
        assert_eq!(c.told().total, Some(10));
        // Elsewhere, a 200 shows a server that ignores Range: nothing is kept.
        let mut c = collector(5, 9, 200, None);
        assert_eq!(c.write(b"abcdef"), 0);
        assert_eq!(c.stop, Some(Stop::RangeIgnored));
        assert_eq!(c.accepted, 0);
    }

    #[test]
    fn a_stream_read_again_skips_what_was_handed_on() {
        let mut c = collector(0, 100, 200, None);
        c.skip = 4;
        assert_eq!(c.write(b"abc"), 3);
        assert_eq!(c.write(b"defgh"), 5);
        let t = c.transfer.clone().unwrap();
        let mut buf = [0u8; 8];
        // Bytes 4.. of this response are the transfer's first bytes.
        assert!(matches!(t.read_at(0, &mut buf), Ok(Available::Copied(4))));
        assert_eq!(&buf[..4], b"efgh");
        assert_eq!(c.accepted, 8);
    }

    /// Found by the `http_response` fuzz target: a 206 saying the object is empty had its
    /// body kept as the object's bytes.
    #[test]
    fn a_body_past_the_end_of_an_empty_object_is_not_kept() {
        for range in ["bytes 0-0/0", "bytes 72-9190/0"] {
            let mut c = collector(0, 28, 206, Some(range));
            assert_eq!(c.write(b"0123456789"), 10, "{range}");
            assert_eq!(c.accepted, 0, "{range}");
            assert_eq!(c.verdict, Some(Ok(Verdict::PastEnd { total: Some(0) })));
            let t = c.transfer.clone().unwrap();
            t.finish(Ok(()));
            assert!(t.wait_all().unwrap().1.is_empty(), "{range}");
        }
    }

    #[test]
    fn error_pages_are_kept_for_the_message_only() {
        let mut c = collector(0, 4, 403, None);
        assert_eq!(c.write(b"<Error>AccessDenied</Error>"), 27);
        assert_eq!(c.accepted, 0);
        assert_eq!(c.response.error_body, b"<Error>AccessDenied</Error>");
    }

    #[test]
    fn cancelled_transfers_stop() {
        let mut c = collector(0, 4, 206, Some("bytes 0-3/10"));
        if let Some(t) = &c.transfer {
            t.cancel();
        }
        assert_eq!(c.write(b"ab"), 0);
        assert_eq!(c.stop, Some(Stop::Cancelled));
        assert!(!c.progress());
    }
}
