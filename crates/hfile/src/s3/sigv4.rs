//! AWS Signature Version 4 (`AWS4-HMAC-SHA256`): the canonical request, the string to sign, the
//! derived key and the `Authorization` header, as AWS documents them. Pure functions, no I/O, so
//! that each step can be checked against AWS's published test suite
//! (`tests/data/aws-sig-v4-test-suite`).
//!
//! S3 differs from the generic suite in one respect: it does not normalise the path (`a/../b`
//! stays as it is) and encodes it once. The path given here is used as the client sends it, after
//! one canonical percent-encoding pass, which is what both S3 and the suite's non-normalising
//! cases expect.

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

/// The algorithm name that starts a string to sign and an `Authorization` header.
pub const ALGORITHM: &str = "AWS4-HMAC-SHA256";

/// SHA-256 of an empty body: what a GET or HEAD signs as its payload hash.
pub const EMPTY_PAYLOAD_SHA256: &str =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/// A secret (a secret access key or a session token): usable, but never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret value.
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// The secret itself, for signing or for the one header that must carry it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

/// The moment a request is signed, to the second (UTC).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SigningTime {
    /// Seconds since 1970-01-01T00:00:00Z.
    pub unix: u64,
}

impl SigningTime {
    /// The current time of this machine.
    pub fn now() -> SigningTime {
        let unix = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        SigningTime { unix }
    }

    /// `20150830T123600Z`, the form of `X-Amz-Date`.
    pub fn timestamp(&self) -> String {
        let (y, m, d) = civil_from_days(self.unix / 86_400);
        let s = self.unix % 86_400;
        format!(
            "{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z",
            s / 3600,
            s / 60 % 60,
            s % 60
        )
    }

    /// `20150830`, the date of the credential scope.
    pub fn date(&self) -> String {
        let (y, m, d) = civil_from_days(self.unix / 86_400);
        format!("{y:04}{m:02}{d:02}")
    }

    /// Parses `20150830T123600Z`.
    pub fn parse(timestamp: &str) -> Option<SigningTime> {
        let b = timestamp.as_bytes();
        if b.len() != 16 || b[8] != b'T' || b[15] != b'Z' {
            return None;
        }
        let num = |r: std::ops::Range<usize>| -> Option<u64> { timestamp.get(r)?.parse().ok() };
        let (y, mo, d) = (num(0..4)?, num(4..6)?, num(6..8)?);
        let (h, mi, s) = (num(9..11)?, num(11..13)?, num(13..15)?);
        if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
            return None;
        }
        let days = days_from_civil(y, mo, d)?;
        Some(SigningTime {
            unix: days * 86_400 + h * 3600 + mi * 60 + s,
        })
    }
}

/// Days since 1970-01-01 -> (year, month, day), proleptic Gregorian (Howard Hinnant's algorithm).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
}

/// (year, month, day) -> days since 1970-01-01; `None` before 1970.
fn days_from_civil(y: u64, m: u64, d: u64) -> Option<u64> {
    let y = if m <= 2 { y.checked_sub(1)? } else { y };
    let era = y / 400;
    let yoe = y % 400;
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    (era * 146_097 + doe).checked_sub(719_468)
}

/// What the canonical request is made of.
#[derive(Debug, Clone, Copy)]
pub struct RequestParts<'a> {
    /// The HTTP method.
    pub method: &'a str,
    /// The path as sent (percent-encoded or not: it is decoded and encoded canonically).
    pub path: &'a str,
    /// The query string without its `?` (may be empty).
    pub query: &'a str,
    /// The headers to sign, in any order and case; repeated names are joined with commas.
    pub headers: &'a [(String, String)],
    /// Hex SHA-256 of the body ([`EMPTY_PAYLOAD_SHA256`] for none), or `UNSIGNED-PAYLOAD`.
    pub payload_hash: &'a str,
}

/// A canonical request ([`canonical_request`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CanonicalRequest {
    /// The canonical request text, which the string to sign hashes.
    pub text: String,
    /// Its `SignedHeaders` list: the lower-case header names, sorted, joined with `;`.
    pub signed_headers: String,
}

/// The canonical request and its `SignedHeaders` list.
pub fn canonical_request(parts: &RequestParts) -> CanonicalRequest {
    let mut headers: Vec<(String, String)> = Vec::new();
    for (name, value) in parts.headers {
        let name = name.trim().to_ascii_lowercase();
        let value = collapse_spaces(value);
        match headers.iter_mut().find(|(n, _)| *n == name) {
            Some((_, v)) => {
                v.push(',');
                v.push_str(&value);
            }
            None => headers.push((name, value)),
        }
    }
    headers.sort_by(|a, b| a.0.cmp(&b.0));
    let signed = headers
        .iter()
        .map(|(n, _)| n.as_str())
        .collect::<Vec<_>>()
        .join(";");
    let mut canonical = String::new();
    canonical.push_str(parts.method);
    canonical.push('\n');
    canonical.push_str(&canonical_path(parts.path));
    canonical.push('\n');
    canonical.push_str(&canonical_query(parts.query));
    canonical.push('\n');
    for (name, value) in &headers {
        canonical.push_str(name);
        canonical.push(':');
        canonical.push_str(value);
        canonical.push('\n');
    }
    canonical.push('\n');
    canonical.push_str(&signed);
    canonical.push('\n');
    canonical.push_str(parts.payload_hash);
    CanonicalRequest {
        text: canonical,
        signed_headers: signed,
    }
}

/// `<date>/<region>/<service>/aws4_request`.
pub fn credential_scope(time: SigningTime, region: &str, service: &str) -> String {
    format!("{}/{region}/{service}/aws4_request", time.date())
}

/// The string to sign for a canonical request.
pub fn string_to_sign(time: SigningTime, scope: &str, canonical_request: &str) -> String {
    format!(
        "{ALGORITHM}\n{}\n{scope}\n{}",
        time.timestamp(),
        sha256_hex(canonical_request.as_bytes())
    )
}

/// The key derived from the secret for one day, region and service.
pub fn signing_key(secret: &Secret, time: SigningTime, region: &str, service: &str) -> [u8; 32] {
    let k_secret = format!("AWS4{}", secret.expose());
    let k_date = hmac(k_secret.as_bytes(), time.date().as_bytes());
    let k_region = hmac(&k_date, region.as_bytes());
    let k_service = hmac(&k_region, service.as_bytes());
    hmac(&k_service, b"aws4_request")
}

/// The hex signature of a string to sign.
pub fn signature(key: &[u8; 32], string_to_sign: &str) -> String {
    hex(&hmac(key, string_to_sign.as_bytes()))
}

/// Everything the header of one signed request needs.
#[derive(Debug, Clone, Copy)]
pub struct SigningParams<'a> {
    /// The access key id.
    pub access_key_id: &'a str,
    /// The secret access key.
    pub secret: &'a Secret,
    /// The region (`us-east-1`).
    pub region: &'a str,
    /// The service (`s3`).
    pub service: &'a str,
    /// When the request is signed.
    pub time: SigningTime,
}

/// The `Authorization` header value for a request.
pub fn authorization(params: &SigningParams, parts: &RequestParts) -> String {
    let CanonicalRequest {
        text: canonical,
        signed_headers: signed,
    } = canonical_request(parts);
    let scope = credential_scope(params.time, params.region, params.service);
    let sts = string_to_sign(params.time, &scope, &canonical);
    let key = signing_key(params.secret, params.time, params.region, params.service);
    format!(
        "{ALGORITHM} Credential={}/{scope}, SignedHeaders={signed}, Signature={}",
        params.access_key_id,
        signature(&key, &sts)
    )
}

/// Lower-case hex SHA-256.
pub fn sha256_hex(data: &[u8]) -> String {
    hex(&Sha256::digest(data))
}

fn hmac(key: &[u8], data: &[u8]) -> [u8; 32] {
    // HMAC accepts keys of any length; `new_from_slice` cannot fail for it.
    let mut mac = match Hmac::<Sha256>::new_from_slice(key) {
        Ok(mac) => mac,
        Err(_) => unreachable!("HMAC takes keys of any length"),
    };
    mac.update(data);
    mac.finalize().into_bytes().into()
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 15)] as char);
    }
    s
}

/// Trims and turns each run of spaces into one (SigV4's header value rule).
fn collapse_spaces(value: &str) -> String {
    value.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Percent-encodes every byte but `A-Za-z0-9-._~` (and `/` when `keep_slash`), upper-case hex.
pub fn uri_encode(raw: &[u8], keep_slash: bool) -> String {
    let mut s = String::with_capacity(raw.len());
    for &b in raw {
        if b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'.' | b'_' | b'~')
            || (keep_slash && b == b'/')
        {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s
}

/// Decodes `%XX` escapes; a `%` not followed by two hex digits stays as it is.
pub fn percent_decode(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = std::str::from_utf8(&b[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok());
            if let Some(v) = hex {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

fn canonical_path(path: &str) -> String {
    if path.is_empty() {
        return "/".to_string();
    }
    uri_encode(&percent_decode(path), true)
}

fn canonical_query(query: &str) -> String {
    let mut pairs: Vec<(String, String)> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (
                uri_encode(&percent_decode(k), false),
                uri_encode(&percent_decode(v), false),
            )
        })
        .collect();
    pairs.sort();
    pairs
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_forms() {
        let t = SigningTime {
            unix: 1_440_938_160,
        };
        assert_eq!(t.timestamp(), "20150830T123600Z");
        assert_eq!(t.date(), "20150830");
        assert_eq!(SigningTime::parse("20150830T123600Z"), Some(t));
        assert_eq!(
            SigningTime::parse("20000229T000000Z")
                .map(|t| t.date())
                .as_deref(),
            Some("20000229")
        );
        assert_eq!(SigningTime::parse("2015-08-30T12:36:00Z"), None);
        assert_eq!(SigningTime::parse("20151330T123600Z"), None);
        assert_eq!(SigningTime { unix: 0 }.timestamp(), "19700101T000000Z");
    }

    #[test]
    fn encoding() {
        assert_eq!(uri_encode(b"a b/c~", true), "a%20b/c~");
        assert_eq!(uri_encode(b"a b/c", false), "a%20b%2Fc");
        assert_eq!(percent_decode("a%20b%2"), b"a b%2");
        assert_eq!(percent_decode("%zz%41"), b"%zzA");
        assert_eq!(canonical_path("/a%2fb"), "/a/b");
        assert_eq!(canonical_query("b=2&a=&a=1&c"), "a=&a=1&b=2&c=");
    }

    #[test]
    fn secrets_do_not_print() {
        let s = Secret::new("wJalrXUtnFEMI");
        assert!(!format!("{s:?}").contains("wJal"));
    }
}
