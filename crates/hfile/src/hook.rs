//! Per-request hooks: what the HTTP transport asks of a store before each attempt (headers that
//! depend on the request, such as an S3 signature over the `Range` header and the current time,
//! or a bearer token that may have been refreshed) and after a refusal (a message from the error
//! body). Static headers in [`crate::OpenOptions::headers`] are sent as well.

use std::fmt;

use crate::s3::{Auth, ErrorBody};

/// One attempt of a request, as the transport is about to send it.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// `GET` or `HEAD`.
    pub method: &'a str,
    /// The URL requested, exactly as sent.
    pub url: &'a str,
    /// The `Range` header's value (`bytes=X-Y`), if any.
    pub range: Option<&'a str>,
}

/// A response that refused the request (3xx, 4xx, or 5xx after the retries).
#[derive(Debug, Clone, Copy)]
pub struct Refusal<'a> {
    /// The HTTP status code.
    pub status: u32,
    /// The response's headers (names as received).
    pub headers: &'a [(String, String)],
    /// The start of the body (capped by the transport).
    pub body: &'a [u8],
    /// Whether the request was a pre-signed URL.
    pub presigned: bool,
}

impl Refusal<'_> {
    /// A header's value, by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// What a store adds to the HTTP transport. Called from any thread (prefetching and parallel
/// fetches use their own handles), once per attempt, so retries are signed afresh.
pub trait RequestHook: Send + Sync {
    /// Headers to send with this attempt (`Authorization`, `x-amz-date`, ...). An error stops
    /// the request with that message.
    fn headers(&self, request: &Request) -> Result<Vec<(String, String)>, String>;

    /// A one-line message for a refused request; `None` leaves it to [`explain_refusal`].
    fn explain(&self, refusal: &Refusal) -> Option<String> {
        let _ = refusal;
        None
    }
}

impl fmt::Debug for dyn RequestHook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A hook holds credentials: show that there is one, nothing more.
        f.write_str("RequestHook")
    }
}

/// The message for a refusal without a hook's: an object store's XML error (`Code: Message`,
/// as S3 and Google Cloud Storage send), else `None` for the transport's own wording.
pub fn explain_refusal(refusal: &Refusal) -> Option<String> {
    let auth = if refusal.presigned {
        Auth::Presigned
    } else {
        Auth::Unknown
    };
    ErrorBody::parse(refusal.body).map(|e| e.describe(auth))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusal_headers_and_default_explanation() {
        let headers = vec![("X-Amz-Bucket-Region".to_string(), "eu-west-1".to_string())];
        let r = Refusal {
            status: 403,
            headers: &headers,
            body: b"<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>",
            presigned: true,
        };
        assert_eq!(r.header("x-amz-bucket-region"), Some("eu-west-1"));
        let line = explain_refusal(&r).unwrap();
        assert!(
            line.starts_with("AccessDenied: Request has expired"),
            "{line}"
        );
        assert!(line.contains("make a new pre-signed URL"), "{line}");
        let html = Refusal {
            body: b"<html>no</html>",
            ..r
        };
        assert_eq!(explain_refusal(&html), None);
    }
}
