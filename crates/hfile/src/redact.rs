//! Keeping secrets out of messages. A pre-signed URL carries its signature (and often a session
//! token) in its query string, a URL may carry a password, and `Authorization` headers carry
//! credentials: none of these may reach a log line, an error or a `Debug` dump. Every name shown
//! to a user goes through [`redact_url`]; every header shown goes through [`redact_header`].

/// The URL for messages: the query string becomes `?...` and a password in the authority
/// becomes `***`. Local paths (no `scheme://`) are returned unchanged, since `?` is a legal file
/// name character there.
///
/// ```
/// use hfile::redact_url;
/// assert_eq!(
///     redact_url("https://b.s3.amazonaws.com/x.bam?X-Amz-Signature=abc"),
///     "https://b.s3.amazonaws.com/x.bam?..."
/// );
/// assert_eq!(redact_url("https://u:pw@h/x"), "https://u:***@h/x");
/// assert_eq!(redact_url("data/what?.bam"), "data/what?.bam");
/// ```
pub fn redact_url(url: &str) -> String {
    let Some(scheme_end) = url.find("://").filter(|_| crate::scheme_of(url).is_some()) else {
        return url.to_string();
    };
    // The fragment never reaches a server but may hold `##idx##` and another signed URL.
    let (without_fragment, fragment) = match url.find('#') {
        Some(i) => (&url[..i], Some(&url[i..])),
        None => (url, None),
    };
    let (base, has_query) = match without_fragment.split_once('?') {
        Some((base, _)) => (base, true),
        None => (without_fragment, false),
    };
    let after_scheme = scheme_end + 3;
    let authority_end = base[after_scheme..]
        .find('/')
        .map_or(base.len(), |i| after_scheme + i);
    let authority = &base[after_scheme..authority_end];
    let mut out = String::with_capacity(url.len());
    out.push_str(&base[..after_scheme]);
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => {
            match userinfo.split_once(':') {
                Some((user, _)) => {
                    out.push_str(user);
                    out.push_str(":***");
                }
                None => out.push_str(userinfo),
            }
            out.push('@');
            out.push_str(host);
        }
        None => out.push_str(authority),
    }
    out.push_str(&base[authority_end..]);
    if has_query {
        out.push_str("?...");
    }
    if let Some(fragment) = fragment {
        match fragment.find("##idx##") {
            // `BAM##idx##INDEX`: the index part is a URL of its own.
            Some(i) => {
                out.push_str(&fragment[..i + 7]);
                out.push_str(&redact_url(&fragment[i + 7..]));
            }
            None => out.push_str(fragment),
        }
    }
    out
}

/// Header names whose values are credentials.
const SECRET_HEADERS: [&str; 6] = [
    "authorization",
    "proxy-authorization",
    "cookie",
    "x-amz-security-token",
    "x-goog-iam-authorization-token",
    "x-api-key",
];

/// `Name: value` for messages, with the value of a credential header replaced by `<redacted>`.
pub fn redact_header(name: &str, value: &str) -> String {
    if SECRET_HEADERS
        .iter()
        .any(|s| s.eq_ignore_ascii_case(name.trim()))
    {
        format!("{name}: <redacted>")
    } else {
        format!("{name}: {value}")
    }
}

/// Lines of protocol text (libcurl's trace: request and response heads, its own notes) for a
/// log: credential headers redacted, and every URL or request target without its query string.
pub fn redact_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches(['\r', '\n']);
        let ending = &line[body.len()..];
        if let Some((name, value)) = body.split_once(':') {
            let is_header =
                !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
            if is_header && SECRET_HEADERS.iter().any(|s| s.eq_ignore_ascii_case(name)) {
                out.push_str(&redact_header(name, value));
                out.push_str(ending);
                continue;
            }
        }
        let words: Vec<String> = body
            .split(' ')
            .map(|word| {
                let bare = word.trim_matches(|c| matches!(c, '\'' | '"' | '<' | '>' | '(' | ')'));
                if bare.contains("://") {
                    word.replace(bare, &redact_url(bare))
                } else if bare.starts_with('/') && bare.contains('?') {
                    // A request target: `GET /key?X-Amz-Signature=... HTTP/1.1`.
                    let cut = bare.find('?').unwrap_or(bare.len());
                    word.replace(bare, &format!("{}?...", &bare[..cut]))
                } else {
                    word.to_string()
                }
            })
            .collect();
        out.push_str(&words.join(" "));
        out.push_str(ending);
    }
    out
}

/// True for a URL signed in its query string (S3 SigV4 or SigV2, Google Cloud Storage, Azure
/// SAS): such a URL must be used exactly as given, since any change breaks the signature.
pub fn is_presigned(url: &str) -> bool {
    let Some((_, query)) = url.split('#').next().unwrap_or("").split_once('?') else {
        return false;
    };
    query.split('&').any(|pair| {
        let name = pair.split('=').next().unwrap_or("");
        ["X-Amz-Signature", "X-Goog-Signature", "Signature", "sig"]
            .iter()
            .any(|s| s.eq_ignore_ascii_case(name))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        assert_eq!(redact_url("https://h/x.bam"), "https://h/x.bam");
        assert_eq!(redact_url("https://h/x.bam?sig=abc"), "https://h/x.bam?...");
        assert_eq!(redact_url("https://h?token=1"), "https://h?...");
        assert_eq!(redact_url("s3://profile@bucket/k"), "s3://profile@bucket/k");
        assert_eq!(redact_url("https://u:p:q@h:1/x"), "https://u:***@h:1/x");
        assert_eq!(
            redact_url("https://h/x.bam?s=1##idx##https://h/x.bai?s=2"),
            "https://h/x.bam?...##idx##https://h/x.bai?..."
        );
        assert_eq!(redact_url("https://h/x.bam#frag"), "https://h/x.bam#frag");
        assert_eq!(redact_url("/tmp/a?b"), "/tmp/a?b");
    }

    #[test]
    fn headers() {
        assert_eq!(
            redact_header("Authorization", "AWS4-HMAC-SHA256 Credential=..."),
            "Authorization: <redacted>"
        );
        assert_eq!(
            redact_header("x-amz-security-token", "t"),
            "x-amz-security-token: <redacted>"
        );
        assert_eq!(redact_header("Range", "bytes=0-9"), "Range: bytes=0-9");
    }

    #[test]
    fn protocol_text() {
        let head = "GET /b/k.bam?X-Amz-Signature=abc HTTP/1.1\r\nHost: h\r\n\
                    Authorization: AWS4-HMAC-SHA256 Credential=AK/x, Signature=abc\r\n\
                    x-amz-security-token: tok\r\nRange: bytes=0-9\r\n\r\n";
        let shown = redact_text(head);
        assert_eq!(
            shown,
            "GET /b/k.bam?... HTTP/1.1\r\nHost: h\r\nAuthorization: <redacted>\r\n\
             x-amz-security-token: <redacted>\r\nRange: bytes=0-9\r\n\r\n"
        );
        assert_eq!(
            redact_text("Issue another request to this URL: 'https://h/x?sig=1'\n"),
            "Issue another request to this URL: 'https://h/x?...'\n"
        );
        assert_eq!(
            redact_text("Location: https://h/y?token=2"),
            "Location: https://h/y?..."
        );
    }

    #[test]
    fn presigned() {
        assert!(is_presigned(
            "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=ab"
        ));
        assert!(is_presigned(
            "https://b.s3.amazonaws.com/k?AWSAccessKeyId=A&Expires=1&Signature=x"
        ));
        assert!(is_presigned(
            "https://storage.googleapis.com/b/k?X-Goog-Signature=x"
        ));
        assert!(is_presigned(
            "https://a.blob.core.windows.net/c/k?sv=1&sig=x"
        ));
        assert!(!is_presigned("https://h/x.bam?version=2"));
        assert!(!is_presigned("https://h/x.bam"));
        assert!(!is_presigned("https://h/x.bam#?sig=1"));
    }
}
