//! Faults: what servers do on a bad day, served in place of the file server's answer to the
//! requests a rule matches.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::Response;
use futures_util::stream::{self, StreamExt};

use super::link::ConnId;
use super::Shared;

/// One misbehaviour.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// This status (no data), with a body and extra headers (e.g. `Retry-After`).
    Status {
        status: u16,
        body: String,
        headers: Vec<(String, String)>,
    },
    /// The connection is closed before any byte of a response.
    ResetBeforeHeaders,
    /// The headers and `after` body bytes (default: half), then the connection breaks.
    ResetMidBody { after: Option<u64> },
    /// The headers and `after` body bytes (default: half), then nothing: the body never ends.
    Stall { after: Option<u64> },
    /// The headers and `after` body bytes (default: half), then the body ends cleanly, short of
    /// its `Content-Length`.
    ShortBody { after: Option<u64> },
    /// The whole body at this rate.
    Trickle { bytes_per_sec: u64 },
    /// A `Content-Range` (and body) starting `shift` bytes away from what was asked.
    ShiftedRange { shift: i64 },
    /// `extra` more bytes than asked, with a `Content-Range` that says so.
    WideRange { extra: u64 },
    /// `200` and the whole object, as if `Range` was not understood.
    IgnoreRange,
    /// `416` with `Content-Range: bytes */N` (N: the true size unless given).
    RangeNotSatisfiable { total: Option<u64> },
    /// The right bytes, with another object size in `Content-Range`.
    WrongTotal { total: u64 },
    /// The right bytes, with this `ETag` (another version of the object, when other answers
    /// carry another).
    Etag(String),
    /// `302` to `location` (a path on this server or a full URL).
    Redirect { location: String },
    /// The right answer after a delay (a slow or out-of-order response).
    Delay(Duration),
    /// `400` to `HEAD` (pre-signed URLs are signed for one method); other methods are served.
    RefuseHead,
    /// `fault`, only for requests whose `Range` starts at byte `start`; others are served (and
    /// do not count against the rule's `times`).
    OnRange { start: u64, fault: Box<Fault> },
}

impl Fault {
    /// A status answer with an empty body.
    pub fn status(status: u16) -> Fault {
        Fault::Status {
            status,
            body: String::new(),
            headers: Vec::new(),
        }
    }
}

/// Which requests a fault applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// The request path (without the query string) the rule matches.
    pub path: String,
    /// The misbehaviour.
    pub fault: Fault,
    /// How many matching requests get the fault (the first ones); `None`: all of them.
    pub times: Option<usize>,
}

/// A rule with its count of matches so far.
#[derive(Debug)]
pub(crate) struct Armed {
    pub(crate) rule: Rule,
    pub(crate) hits: usize,
}

/// `bytes=A-B`, `bytes=A-` or `bytes=-N` (the last N) against an object of `len` bytes, as an
/// inclusive pair (B clamped).
fn parse_range(headers: &HeaderMap, len: u64) -> Option<(u64, u64)> {
    crate::raw::resolve(headers.get(header::RANGE)?.to_str().ok()?, len)
}

fn build(status: StatusCode, headers: &[(String, String)], body: Body) -> Response {
    let mut r = Response::new(body);
    *r.status_mut() = status;
    for (k, v) in headers {
        if let (Ok(k), Ok(v)) = (
            header::HeaderName::from_bytes(k.as_bytes()),
            header::HeaderValue::from_str(v),
        ) {
            r.headers_mut().append(k, v);
        }
    }
    r
}

fn partial(first: u64, last: u64, total: u64, body: Body) -> Response {
    build(
        StatusCode::PARTIAL_CONTENT,
        &[
            (
                "content-range".into(),
                format!("bytes {first}-{last}/{total}"),
            ),
            ("content-length".into(), (last + 1 - first).to_string()),
        ],
        body,
    )
}

/// The first byte a `Range: bytes=A-...` asks for.
pub(crate) fn range_start(headers: &HeaderMap) -> Option<u64> {
    let value = headers.get(header::RANGE)?.to_str().ok()?;
    value
        .trim()
        .strip_prefix("bytes=")?
        .split('-')
        .next()?
        .parse()
        .ok()
}

/// What a fault answers for `path` (a file under `root`), or `None` to let the file server
/// answer (e.g. [`Fault::Delay`] after its delay, or a fault that does not apply to the method).
pub(crate) async fn answer(
    fault: &Fault,
    shared: &Arc<Shared>,
    conn: ConnId,
    root: &Path,
    method: &str,
    path: &str,
    headers: &HeaderMap,
) -> Option<Response> {
    match fault {
        Fault::OnRange { start, fault } if range_start(headers) == Some(*start) => {
            Box::pin(answer_one(fault, shared, conn, root, method, path, headers)).await
        }
        Fault::OnRange { .. } => None,
        other => answer_one(other, shared, conn, root, method, path, headers).await,
    }
}

async fn answer_one(
    fault: &Fault,
    shared: &Arc<Shared>,
    conn: ConnId,
    root: &Path,
    method: &str,
    path: &str,
    headers: &HeaderMap,
) -> Option<Response> {
    if let Some(answer) = answer_without_file(fault, shared, conn, method).await {
        return answer;
    }
    let file = root.join(path.trim_start_matches('/'));
    let data = Bytes::from(tokio::fs::read(&file).await.ok()?);
    if let Some(response) = answer_whole(fault, &data) {
        return Some(response);
    }
    let Some((a, b)) = parse_range(headers, data.len() as u64) else {
        return Some(build(StatusCode::BAD_REQUEST, &[], Body::empty()));
    };
    answer_range(fault, shared, conn, &data, a, b)
}

/// The faults answered without the file: `Some(answer)` once decided (`Some(None)`: the file
/// server answers after all, as after a delay).
async fn answer_without_file(
    fault: &Fault,
    shared: &Arc<Shared>,
    conn: ConnId,
    method: &str,
) -> Option<Option<Response>> {
    let response = match fault {
        Fault::Delay(d) => {
            tokio::time::sleep(*d).await;
            return Some(None);
        }
        Fault::RefuseHead if method != "HEAD" => return Some(None),
        Fault::RefuseHead => build(StatusCode::BAD_REQUEST, &[], Body::empty()),
        Fault::Status {
            status,
            body,
            headers,
        } => {
            let status = StatusCode::from_u16(*status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            build(status, headers, Body::from(body.clone()))
        }
        Fault::Redirect { location } => build(
            StatusCode::FOUND,
            &[("location".into(), location.clone())],
            Body::empty(),
        ),
        Fault::ResetBeforeHeaders => {
            shared.connections.doom(conn);
            build(StatusCode::OK, &[], Body::empty())
        }
        _ => return None,
    };
    Some(Some(response))
}

/// The faults that answer whatever range was asked: the whole file, or a 416.
fn answer_whole(fault: &Fault, data: &Bytes) -> Option<Response> {
    let len = data.len() as u64;
    match fault {
        Fault::IgnoreRange => Some(build(
            StatusCode::OK,
            &[("content-length".into(), len.to_string())],
            Body::from(data.clone()),
        )),
        Fault::RangeNotSatisfiable { total } => Some(build(
            StatusCode::RANGE_NOT_SATISFIABLE,
            &[(
                "content-range".into(),
                format!("bytes */{}", total.unwrap_or(len)),
            )],
            Body::empty(),
        )),
        _ => None,
    }
}

/// The faults that answer the asked range `a..=b` of `data` wrongly: shifted, widened, with
/// another total or ETag, cut short, or trickled.
fn answer_range(
    fault: &Fault,
    shared: &Arc<Shared>,
    conn: ConnId,
    data: &Bytes,
    a: u64,
    b: u64,
) -> Option<Response> {
    let len = data.len() as u64;
    let slice = |from: u64, to: u64| data.slice(from as usize..=to as usize);
    let response = match fault {
        Fault::ShiftedRange { shift } => {
            let first = a.saturating_add_signed(*shift).min(len - 1);
            let last = b.saturating_add_signed(*shift).min(len - 1).max(first);
            partial(first, last, len, Body::from(slice(first, last)))
        }
        Fault::WideRange { extra } => {
            let last = (b + extra).min(len - 1);
            partial(a, last, len, Body::from(slice(a, last)))
        }
        Fault::WrongTotal { total } => partial(a, b, *total, Body::from(slice(a, b))),
        Fault::Etag(tag) => {
            let mut r = partial(a, b, len, Body::from(slice(a, b)));
            if let Ok(v) = tag.parse() {
                r.headers_mut().insert(header::ETAG, v);
            }
            r
        }
        Fault::ResetMidBody { after } | Fault::Stall { after } | Fault::ShortBody { after } => {
            let n = after.unwrap_or((b + 1 - a) / 2).min(b + 1 - a);
            let head = if n == 0 {
                Bytes::new()
            } else {
                slice(a, a + n - 1)
            };
            partial(a, b, len, cut_body(fault, shared, conn, head))
        }
        Fault::Trickle { bytes_per_sec } => {
            partial(a, b, len, trickle(slice(a, b), *bytes_per_sec))
        }
        _ => return None,
    };
    Some(response)
}

/// `bytes` as a body paced at `bytes_per_sec`, in pieces of at most 1 KiB.
fn trickle(bytes: Bytes, bytes_per_sec: u64) -> Body {
    let rate = bytes_per_sec.max(1);
    let piece = rate.min(1024);
    let chunks: Vec<Bytes> = (0..bytes.len())
        .step_by(piece as usize)
        .map(|i| bytes.slice(i..(i + piece as usize).min(bytes.len())))
        .collect();
    let pause = Duration::from_secs_f64(piece as f64 / rate as f64);
    let body = stream::iter(chunks).then(move |c| async move {
        tokio::time::sleep(pause).await;
        Ok::<Bytes, std::io::Error>(c)
    });
    Body::from_stream(body)
}

/// The body of a response that breaks after `head`: it stalls, ends short, or resets the
/// connection, the last two only once `head` has gone out, so the client has it.
fn cut_body(fault: &Fault, shared: &Arc<Shared>, conn: ConnId, head: Bytes) -> Body {
    let start = stream::iter([Ok::<Bytes, std::io::Error>(head.clone())]);
    if matches!(fault, Fault::Stall { .. }) {
        Body::from_stream(start.chain(stream::pending()))
    } else {
        // Break only once the first part has gone out, so the client has it.
        let short = matches!(fault, Fault::ShortBody { .. });
        let shared = Arc::clone(shared);
        let before = shared.connections.written(conn);
        let tail = stream::once(async move {
            while shared.connections.written(conn) < before + head.len() as u64 {
                let wrote = shared.wrote.notified();
                if shared.connections.written(conn) >= before + head.len() as u64 {
                    break;
                }
                wrote.await;
            }
            if short {
                Ok(Bytes::new())
            } else {
                Err(std::io::Error::new(
                    std::io::ErrorKind::ConnectionReset,
                    "fault: reset",
                ))
            }
        });
        Body::from_stream(start.chain(tail))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(value: &str, len: u64) -> Option<(u64, u64)> {
        let mut h = HeaderMap::new();
        h.insert(header::RANGE, value.parse().unwrap());
        parse_range(&h, len)
    }

    #[test]
    fn ranges_bounded_open_and_suffix() {
        assert_eq!(range("bytes=10-19", 100), Some((10, 19)));
        assert_eq!(range("bytes=10-500", 100), Some((10, 99)));
        assert_eq!(range("bytes=90-", 100), Some((90, 99)));
        assert_eq!(range("bytes=-28", 100), Some((72, 99)));
        assert_eq!(range("bytes=-500", 100), Some((0, 99)));
        assert_eq!(range("bytes=-0", 100), None);
        assert_eq!(range("bytes=50-10", 100), None);
        assert_eq!(range("items=1-2", 100), None);
    }
}
