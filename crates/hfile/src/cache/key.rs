//! What names a cached object: scheme, host (with port) and path, without the query string,
//! the fragment or any user information, so that pre-signed URLs of one object that differ only
//! in their signature share an entry and no secret ends up in the cache.

use std::fmt;

use crate::registry::scheme_of;

/// The identity of a remote object in the cache.
///
/// ```
/// use hfile::cache::Key;
/// let a = Key::from_url("https://Bucket.s3.amazonaws.com/x.bam.bai?X-Amz-Signature=aaa").unwrap();
/// let b = Key::from_url("https://bucket.s3.amazonaws.com/x.bam.bai?X-Amz-Signature=bbb").unwrap();
/// assert_eq!(a, b);
/// assert_eq!(a.as_str(), "https://bucket.s3.amazonaws.com/x.bam.bai");
/// assert!(Key::from_url("/local/x.bam.bai").is_none());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Key(String);

impl Key {
    /// The key of a URL; `None` for a local path (only remote objects are cached) or a URL
    /// without a host.
    pub fn from_url(url: &str) -> Option<Key> {
        let scheme = scheme_of(url)?;
        let rest = &url[scheme.len() + 3..];
        let rest = &rest[..rest.find(['?', '#']).unwrap_or(rest.len())];
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        // user:password@ never names the object, and must never be written to disk.
        let host_port = authority.rsplit('@').next().unwrap_or(authority);
        let host_port = host_port.to_ascii_lowercase();
        let host_port = match (scheme.as_str(), host_port.rsplit_once(':')) {
            ("https", Some((host, "443"))) | ("http", Some((host, "80"))) => host.to_string(),
            _ => host_port,
        };
        if host_port.is_empty() {
            return None;
        }
        let path = if path.is_empty() { "/" } else { path };
        Some(Key(format!("{scheme}://{host_port}{path}")))
    }

    /// The key as text: `scheme://host[:port]/path`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The base name of the entry's file: a 64-bit FNV-1a hash of the key, in hex. The entry
    /// stores the whole key, so two keys with one hash only ever cost a miss.
    pub(crate) fn file_stem(&self) -> String {
        format!("{:016x}", self.hash64())
    }

    /// The 64-bit FNV-1a hash of the key: its file's name, and its lock's shard.
    pub(crate) fn hash64(&self) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in self.0.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        h
    }

    pub(crate) fn from_stored(text: String) -> Key {
        Key(text)
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(url: &str) -> String {
        Key::from_url(url).map(|k| k.0).unwrap_or_default()
    }

    #[test]
    fn normalised() {
        assert_eq!(
            key("HTTPS://Host.Example:8443/a/B.bai?sig=1#x"),
            "https://host.example:8443/a/B.bai"
        );
        assert_eq!(key("https://host:443/a"), "https://host/a");
        assert_eq!(key("http://host:80/a"), "http://host/a");
        assert_eq!(key("http://host:443/a"), "http://host:443/a");
        assert_eq!(key("https://user:secret@host/a"), "https://host/a");
        assert_eq!(key("s3://bucket/dir/x.bam"), "s3://bucket/dir/x.bam");
        assert_eq!(key("https://host"), "https://host/");
        assert_eq!(key("https://host?x=1"), "https://host/");
        assert_eq!(key("https:///path"), "");
        assert_eq!(key("x.bam"), "");
        assert_ne!(key("https://host/a"), key("https://host/A"));
        assert_ne!(key("https://host/a"), key("http://host/a"));
    }

    #[test]
    fn stems_differ() {
        let a = Key::from_url("https://h/a").unwrap().file_stem();
        let b = Key::from_url("https://h/b").unwrap().file_stem();
        assert_eq!(a.len(), 16);
        assert_ne!(a, b);
    }
}
