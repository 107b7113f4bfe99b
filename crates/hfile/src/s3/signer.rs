//! The S3 request hook: signs every attempt with SigV4 (the `Range` header included, so a
//! signature covers exactly the span asked for), adds the requester-pays header, and reads S3's
//! refusals, remembering a region that a redirect names so the backend can retry there.

use std::sync::Mutex;

use super::credentials::Credentials;
use super::error_body::{Auth, ErrorBody};
use super::sigv4::{self, RequestParts, SigningParams, SigningTime, EMPTY_PAYLOAD_SHA256};
use crate::hook::{Refusal, Request, RequestHook};

/// Signs requests to one S3 endpoint.
pub struct S3Signer {
    credentials: Option<Credentials>,
    region: String,
    /// The `Host` header: sent explicitly, so that what is signed is what is sent.
    host: String,
    requester_pays: bool,
    /// A region that a refusal said the bucket is in (and that differs from `region`).
    redirect: Mutex<Option<String>>,
    clock: fn() -> SigningTime,
}

impl S3Signer {
    /// A signer; without credentials requests go unsigned (public buckets).
    pub fn new(
        credentials: Option<Credentials>,
        region: &str,
        host: &str,
        requester_pays: bool,
    ) -> S3Signer {
        S3Signer {
            credentials,
            region: region.to_string(),
            host: host.to_string(),
            requester_pays,
            redirect: Mutex::new(None),
            clock: SigningTime::now,
        }
    }

    /// The region a refusal redirected to, once.
    pub fn take_redirect(&self) -> Option<String> {
        self.redirect
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }

    #[cfg(test)]
    fn with_clock(mut self, clock: fn() -> SigningTime) -> S3Signer {
        self.clock = clock;
        self
    }
}

/// The path and query of a URL (`/a/b`, `x=1`).
fn path_and_query(url: &str) -> (&str, &str) {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    let rest = &url[after_scheme..];
    let rest = rest.split('#').next().unwrap_or("");
    let path_start = rest.find(['/', '?']).unwrap_or(rest.len());
    let path_and_query = &rest[path_start..];
    match path_and_query.split_once('?') {
        Some((p, q)) => (if p.is_empty() { "/" } else { p }, q),
        None => (
            if path_and_query.is_empty() {
                "/"
            } else {
                path_and_query
            },
            "",
        ),
    }
}

impl RequestHook for S3Signer {
    fn headers(&self, request: &Request) -> Result<Vec<(String, String)>, String> {
        let mut headers = Vec::new();
        if self.requester_pays {
            headers.push(("x-amz-request-payer".to_string(), "requester".to_string()));
        }
        let Some(credentials) = &self.credentials else {
            return Ok(headers);
        };
        let time = (self.clock)();
        headers.push(("Host".to_string(), self.host.clone()));
        headers.push((
            "x-amz-content-sha256".to_string(),
            EMPTY_PAYLOAD_SHA256.to_string(),
        ));
        headers.push(("x-amz-date".to_string(), time.timestamp()));
        if let Some(token) = &credentials.session_token {
            headers.push((
                "x-amz-security-token".to_string(),
                token.expose().to_string(),
            ));
        }
        let mut signed = headers.clone();
        if let Some(range) = request.range {
            signed.push(("Range".to_string(), range.to_string()));
        }
        let (path, query) = path_and_query(request.url);
        let authorization = sigv4::authorization(
            &SigningParams {
                access_key_id: &credentials.access_key_id,
                secret: &credentials.secret_access_key,
                region: &self.region,
                service: "s3",
                time,
            },
            &RequestParts {
                method: request.method,
                path,
                query,
                headers: &signed,
                payload_hash: EMPTY_PAYLOAD_SHA256,
            },
        );
        headers.push(("Authorization".to_string(), authorization));
        Ok(headers)
    }

    fn explain(&self, refusal: &Refusal) -> Option<String> {
        let body = ErrorBody::parse(refusal.body);
        let region = refusal
            .header("x-amz-bucket-region")
            .map(|r| r.trim().to_string())
            .or_else(|| body.as_ref().and_then(|b| b.region.clone()))
            .filter(|r| !r.is_empty() && *r != self.region);
        if let (301 | 307 | 400, Some(region)) = (refusal.status, &region) {
            *self.redirect.lock().unwrap_or_else(|p| p.into_inner()) = Some(region.clone());
        }
        match (body, region) {
            (Some(body), _) => Some(body.describe(match &self.credentials {
                Some(_) => Auth::Signed,
                None => Auth::Anonymous,
            })),
            // A HEAD has no body; the header alone tells the region.
            (None, Some(region)) => Some(format!(
                "the bucket is in region {region}, not {} (set AWS_REGION={region})",
                self.region
            )),
            (None, None) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::sigv4::Secret;
    use super::*;

    /// The headers for a request, and its `Authorization` header.
    fn authorization(
        signer: &S3Signer,
        method: &str,
        url: &str,
        range: Option<&str>,
    ) -> (Vec<(String, String)>, String) {
        let headers = signer.headers(&Request { method, url, range }).unwrap();
        let auth = headers
            .iter()
            .find(|(n, _)| n == "Authorization")
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        (headers, auth)
    }

    fn example_time() -> SigningTime {
        SigningTime::parse("20130524T000000Z").unwrap_or(SigningTime { unix: 0 })
    }

    /// AWS's S3 example "GET Object" (sig-v4-header-based-auth): the first 10 bytes of
    /// `examplebucket/test.txt`, Range signed.
    #[test]
    fn aws_s3_get_object_example() {
        let signer = S3Signer::new(
            Some(Credentials {
                access_key_id: "AKIAIOSFODNN7EXAMPLE".into(),
                secret_access_key: Secret::new("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
                session_token: None,
                source: "test".into(),
            }),
            "us-east-1",
            "examplebucket.s3.amazonaws.com",
            false,
        )
        .with_clock(example_time);
        let (headers, auth) = authorization(
            &signer,
            "GET",
            "https://examplebucket.s3.amazonaws.com/test.txt",
            Some("bytes=0-9"),
        );
        assert_eq!(
            auth,
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, \
             SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, \
             Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
        );
        // The Range header itself is the transport's to send, not the hook's.
        assert!(!headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("range")));
    }

    #[test]
    fn unsigned_and_requester_pays() {
        let signer = S3Signer::new(None, "us-east-1", "h", true);
        let headers = signer
            .headers(&Request {
                method: "GET",
                url: "https://h/b/k",
                range: Some("bytes=0-1"),
            })
            .unwrap();
        assert_eq!(
            headers,
            vec![("x-amz-request-payer".to_string(), "requester".to_string())]
        );
    }

    #[test]
    fn session_token_is_signed_and_redirects_remembered() {
        let signer = S3Signer::new(
            Some(Credentials {
                access_key_id: "AK".into(),
                secret_access_key: Secret::new("s"),
                session_token: Some(Secret::new("TOKEN")),
                source: "test".into(),
            }),
            "us-east-1",
            "b.s3.amazonaws.com",
            true,
        );
        let (_, auth) = authorization(
            &signer,
            "HEAD",
            "https://b.s3.amazonaws.com/k?versionId=3",
            None,
        );
        assert!(
            auth.contains("SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-request-payer;x-amz-security-token,"),
            "{auth}"
        );
        let h = vec![("x-amz-bucket-region".to_string(), "eu-west-1".to_string())];
        let line = signer
            .explain(&Refusal {
                status: 301,
                headers: &h,
                body: b"",
                presigned: false,
            })
            .unwrap();
        assert!(line.contains("eu-west-1"), "{line}");
        assert_eq!(signer.take_redirect().as_deref(), Some("eu-west-1"));
        assert_eq!(signer.take_redirect(), None);
        // The same region is no redirect; a 403 never is.
        let same = vec![("x-amz-bucket-region".to_string(), "us-east-1".to_string())];
        signer.explain(&Refusal {
            status: 301,
            headers: &same,
            body: b"",
            presigned: false,
        });
        signer.explain(&Refusal {
            status: 403,
            headers: &h,
            body: b"",
            presigned: false,
        });
        assert_eq!(signer.take_redirect(), None);
    }

    #[test]
    fn url_parts() {
        assert_eq!(path_and_query("https://h/a/b?x=1#f"), ("/a/b", "x=1"));
        assert_eq!(path_and_query("https://h"), ("/", ""));
        assert_eq!(path_and_query("https://h?x"), ("/", "x"));
    }
}
