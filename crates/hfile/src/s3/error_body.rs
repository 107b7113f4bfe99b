//! The XML error bodies of S3 and of S3-like stores (Google Cloud Storage's XML API answers the
//! same shape): `<Error><Code>..</Code><Message>..</Message>...</Error>`. Only the elements that
//! help a user are read; `StringToSign`, `CanonicalRequest` and `SignatureProvided` (which S3 puts
//! in a `SignatureDoesNotMatch` body) are never looked at, so they cannot reach a message.

/// The useful parts of an error body.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ErrorBody {
    /// S3's `Code`.
    pub code: String,
    /// What went wrong.
    pub message: Option<String>,
    /// Where the bucket lives (`PermanentRedirect`, `AuthorizationHeaderMalformed`).
    pub region: Option<String>,
    /// The endpoint to use instead (`PermanentRedirect`, `TemporaryRedirect`).
    pub endpoint: Option<String>,
    /// When a pre-signed URL stopped being valid, and the server's time.
    pub expires: Option<String>,
    /// S3's `ServerTime` (sent with a clock-skew refusal).
    pub server_time: Option<String>,
    /// The time the request said it was signed (`RequestTimeTooSkewed`).
    pub request_time: Option<String>,
}

/// How the refused request was authenticated, which decides what a message advises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Auth {
    /// A pre-signed URL: its signature can only be replaced, not fixed.
    Presigned,
    /// Signed with credentials this process found.
    Signed,
    /// Sent unsigned because no credentials were found.
    Anonymous,
    /// Not known (a plain URL, perhaps with a header the user gave).
    Unknown,
}

/// What a well-known code means when the body carries no `Message` (S3-compatible stores often
/// leave it out).
fn default_message(code: &str) -> Option<&'static str> {
    Some(match code {
        "NoSuchKey" => "the object does not exist",
        "NoSuchBucket" => "the bucket does not exist",
        "AccessDenied" => "access denied",
        "SignatureDoesNotMatch" => "the request's signature does not match",
        "InvalidAccessKeyId" => "unknown access key id",
        "ExpiredToken" => "the session token has expired",
        "RequestTimeTooSkewed" => "the request's time is too far from the server's",
        _ => return None,
    })
}

/// Longest element text kept; a hostile server cannot fill a terminal.
const MAX_TEXT: usize = 300;

impl ErrorBody {
    /// Parses an error body; `None` when it is not an S3-style XML error.
    pub fn parse(body: &[u8]) -> Option<ErrorBody> {
        let text = std::str::from_utf8(body).ok()?;
        let inner = element(text, "Error")?;
        let code = element(inner, "Code")
            .map(clean)
            .filter(|c| !c.is_empty())?;
        let get = |name: &str| element(inner, name).map(clean).filter(|v| !v.is_empty());
        Some(ErrorBody {
            code,
            message: get("Message"),
            region: get("Region"),
            endpoint: get("Endpoint"),
            expires: get("Expires"),
            server_time: get("ServerTime"),
            request_time: get("RequestTime"),
        })
    }

    /// One line for a user: `Code: Message`, and what to do about it, given how the request
    /// was authenticated.
    pub fn describe(&self, auth: Auth) -> String {
        let mut line = self.code.clone();
        if let Some(message) = self
            .message
            .as_deref()
            .or_else(|| default_message(&self.code))
        {
            line.push_str(": ");
            line.push_str(message);
        }
        let times = |label: &str, a: &Option<String>, b: &Option<String>| match (a, b) {
            (Some(a), Some(b)) => format!(" ({label} {a}, server time {b})"),
            _ => String::new(),
        };
        let hint = match (self.code.as_str(), auth) {
            ("SignatureDoesNotMatch", Auth::Presigned) => {
                " (the URL does not match its signature: was it altered, e.g. by shell quoting, \
                 or signed for another method or host?)"
                    .to_string()
            }
            ("SignatureDoesNotMatch", _) => {
                " (the secret access key does not belong to the access key id, or the request was \
                 signed for another region or endpoint)"
                    .to_string()
            }
            ("AccessDenied", Auth::Presigned) if self.is_expiry() => format!(
                "{}: make a new pre-signed URL",
                times("expired", &self.expires, &self.server_time)
            ),
            ("AccessDenied", Auth::Anonymous) => " (no AWS credentials were found, so the request \
                 was sent unsigned: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE)"
                .to_string(),
            ("AccessDenied", Auth::Signed) => " (the credentials may lack permission, or the key \
                 may not exist: S3 answers 403 for a missing key when listing is not allowed)"
                .to_string(),
            ("InvalidAccessKeyId", _) => {
                " (the server does not know this access key id)".to_string()
            }
            ("RequestTimeTooSkewed", _) => {
                let skew =
                    " (this machine's clock differs from the server's by more than 15 minutes";
                match (&self.request_time, &self.server_time) {
                    (Some(a), Some(b)) => format!("{skew}: request time {a}, server time {b})"),
                    _ => format!("{skew})"),
                }
            }
            ("ExpiredToken", _) => {
                " (the session token has expired: refresh the credentials)".to_string()
            }
            ("InvalidToken", _) => " (the session token is malformed or not valid)".to_string(),
            ("PermanentRedirect" | "AuthorizationHeaderMalformed" | "TemporaryRedirect", _) => {
                match (&self.region, &self.endpoint) {
                    (Some(r), _) => format!(" (the bucket is in region {r}: set AWS_REGION={r})"),
                    (None, Some(e)) => format!(" (use the endpoint {e})"),
                    _ => String::new(),
                }
            }
            _ => String::new(),
        };
        line.push_str(&hint);
        line
    }

    fn is_expiry(&self) -> bool {
        self.expires.is_some()
            || self
                .message
                .as_deref()
                .is_some_and(|m| m.to_ascii_lowercase().contains("expired"))
    }
}

/// The text between `<name>` (or `<name attr...>`) and `</name>`; the first occurrence.
fn element<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    let mut from = 0;
    loop {
        let start = from + text[from..].find(&format!("<{name}"))?;
        let after = start + 1 + name.len();
        let rest = &text[after..];
        // `<Code>` but not `<CodeX>`.
        match rest.chars().next() {
            Some('>') | Some(' ') | Some('\t') | Some('\n') | Some('\r') => {
                let open_end = after + rest.find('>')? + 1;
                if text[..open_end].ends_with("/>") {
                    return Some("");
                }
                let close = text[open_end..].find(&format!("</{name}>"))?;
                return Some(&text[open_end..open_end + close]);
            }
            _ => from = after,
        }
    }
}

/// Entities decoded, whitespace collapsed, control characters dropped, length capped.
fn clean(raw: &str) -> String {
    let mut out = String::new();
    let mut rest = raw;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        let end = tail.find(';').filter(|&e| e <= 10);
        let decoded = end.and_then(|e| match &tail[1..e] {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            n => n
                .strip_prefix("#x")
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .or_else(|| n.strip_prefix('#').and_then(|d| d.parse().ok()))
                .and_then(char::from_u32),
        });
        match (decoded, end) {
            (Some(c), Some(e)) => {
                out.push(c);
                rest = &tail[e + 1..];
            }
            _ => {
                out.push('&');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    let words: Vec<String> = out
        .split_whitespace()
        .map(|w| w.chars().filter(|c| !c.is_control()).collect())
        .collect();
    let joined = words.join(" ");
    if joined.chars().count() > MAX_TEXT {
        let cut: String = joined.chars().take(MAX_TEXT).collect();
        format!("{cut}...")
    } else {
        joined
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MISMATCH: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not match the signature you provided. Check your key and signing method.</Message><AWSAccessKeyId>AKIAEXAMPLE</AWSAccessKeyId><StringToSign>AWS4-HMAC-SHA256
20240101T000000Z</StringToSign><SignatureProvided>deadbeef</SignatureProvided><CanonicalRequest>GET
/x.bam</CanonicalRequest><RequestId>1</RequestId></Error>"#;

    #[test]
    fn signature_mismatch_shows_no_signing_material() {
        let e = ErrorBody::parse(MISMATCH.as_bytes()).unwrap();
        assert_eq!(e.code, "SignatureDoesNotMatch");
        let line = e.describe(Auth::Signed);
        assert!(
            line.starts_with("SignatureDoesNotMatch: The request signature"),
            "{line}"
        );
        for secret in ["deadbeef", "AWS4-HMAC", "AKIAEXAMPLE", "/x.bam", "\n"] {
            assert!(!line.contains(secret), "{line}");
        }
        assert!(e.describe(Auth::Presigned).contains("altered"));
        let bare = ErrorBody::parse(b"<Error><Code>NoSuchKey</Code></Error>").unwrap();
        assert_eq!(
            bare.describe(Auth::Signed),
            "NoSuchKey: the object does not exist"
        );
        let denied = ErrorBody::parse(b"<Error><Code>AccessDenied</Code></Error>").unwrap();
        assert!(denied
            .describe(Auth::Anonymous)
            .contains("no AWS credentials were found"));
        assert_eq!(
            denied.describe(Auth::Unknown),
            "AccessDenied: access denied"
        );
    }

    #[test]
    fn expiry_redirect_skew_and_entities() {
        let e = ErrorBody::parse(
            b"<Error><Code>AccessDenied</Code><Message>Request has expired</Message>\
              <Expires>2024-01-01T00:00:00Z</Expires><ServerTime>2024-01-02T00:00:00Z</ServerTime></Error>",
        )
        .unwrap();
        let line = e.describe(Auth::Presigned);
        assert!(
            line.contains("expired 2024-01-01T00:00:00Z, server time 2024-01-02"),
            "{line}"
        );
        assert!(line.ends_with("): make a new pre-signed URL"), "{line}");
        let e = ErrorBody::parse(
            b"<Error><Code>PermanentRedirect</Code><Message>a &amp; b &lt;c&gt; &#65;&#x42;</Message>\
              <Endpoint>b.s3.eu-west-1.amazonaws.com</Endpoint><Bucket>b</Bucket></Error>",
        )
        .unwrap();
        assert_eq!(e.message.as_deref(), Some("a & b <c> AB"));
        assert!(e
            .describe(Auth::Signed)
            .contains("use the endpoint b.s3.eu-west-1"));
        let e = ErrorBody::parse(
            b"<Error><Code>AuthorizationHeaderMalformed</Code><Message>m</Message><Region>eu-west-1</Region></Error>",
        )
        .unwrap();
        assert_eq!(e.region.as_deref(), Some("eu-west-1"));
        let e = ErrorBody::parse(
            b"<Error><Code>RequestTimeTooSkewed</Code><Message>The difference is too large.</Message>\
              <RequestTime>20240101T000000Z</RequestTime><ServerTime>2024-01-01T01:00:00Z</ServerTime></Error>",
        )
        .unwrap();
        let line = e.describe(Auth::Signed);
        assert!(
            line.contains("15 minutes: request time 20240101T000000Z, server time"),
            "{line}"
        );
    }

    #[test]
    fn not_xml_errors() {
        assert_eq!(ErrorBody::parse(b"<html>403</html>"), None);
        assert_eq!(ErrorBody::parse(b"<Error><Code></Code></Error>"), None);
        assert_eq!(ErrorBody::parse(&[0xff, 0xfe]), None);
        assert_eq!(ErrorBody::parse(b"<Error><Code>X"), None);
        let e = ErrorBody::parse(b"<Error><CodeX>no</CodeX><Code>Real</Code></Error>").unwrap();
        assert_eq!(e.code, "Real");
        let long = format!(
            "<Error><Code>C</Code><Message>{}</Message></Error>",
            "x".repeat(5000)
        );
        let e = ErrorBody::parse(long.as_bytes()).unwrap();
        assert!(e.message.unwrap().len() < 400);
    }
}
