//! Finding a reference without `-T`, as htslib's `cram_populate_ref` does: by the `@SQ M5`
//! checksum in `REF_CACHE`, then in each entry of `REF_PATH` in turn, a local directory or an
//! `http(s)://` URL (with no `REF_PATH`, htslib's: the EBI's MD5 server, with its default cache
//! under `XDG_CACHE_HOME`, `HOME/.cache`, `TMPDIR` or `/tmp`), each file the bare sequence;
//! else the FASTA the `@SQ UR` tag names. A reference fetched from a URL is stored in the
//! cache, as htslib stores it.

use std::path::{Path, PathBuf};

/// htslib's `REF_PATH` when none is set.
pub const MD5_SERVER: &str = "https://www.ebi.ac.uk/ena/cram/md5/%s";

/// A place a reference may be, by its MD5, in the order htslib looks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Candidate {
    /// A local file of bare sequence.
    Local(PathBuf),
    /// A URL answering with the bare sequence.
    Url(String),
}

/// `%s` takes the rest of the checksum, `%Ns` its next N characters; what is left of it is
/// appended after a `/` (htslib's `expand_cache_path` and `expand_path`).
pub fn expand(template: &str, md5: &str) -> String {
    let mut out = String::new();
    let mut rest = md5;
    let mut chars = template.char_indices().peekable();
    while let Some((_, c)) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut digits = String::new();
        while let Some(&(_, d)) = chars.peek() {
            if !d.is_ascii_digit() {
                break;
            }
            digits.push(d);
            chars.next();
        }
        if chars.peek().map(|&(_, c)| c) == Some('s') {
            chars.next();
            let n = digits
                .parse::<usize>()
                .unwrap_or(usize::MAX)
                .min(rest.len());
            let n = if digits.is_empty() { rest.len() } else { n };
            out.push_str(&rest[..n]);
            rest = &rest[n..];
        } else {
            out.push('%');
            out.push_str(&digits);
        }
    }
    if !rest.is_empty() {
        if !out.is_empty() && !out.ends_with('/') {
            out.push('/');
        }
        out.push_str(rest);
    }
    out
}

/// `REF_PATH`'s entries (`:`-separated, `::` a colon; a `scheme://` entry runs to the next
/// single colon after its `//`, so a URL's port stays in it), as htslib's `find_path` splits
/// them.
fn entries(ref_path: &str) -> Vec<String> {
    let mut entries = Vec::new();
    let mut cur = String::new();
    let mut it = ref_path.chars().peekable();
    while let Some(c) = it.next() {
        if c == ':' {
            if it.peek() == Some(&':') {
                it.next();
                cur.push(':');
            } else if ["http", "https", "ftp", "|http", "|https", "|ftp"].contains(&cur.as_str())
                || cur.starts_with("URL=")
            {
                // A URL's `scheme:`: keep it, then its `//host`; a `:port` after the host
                // is followed by digits, not by another entry.
                cur.push(':');
            } else if cur.contains("://")
                && it.peek().is_some_and(char::is_ascii_digit)
                && !cur[cur.find("://").map_or(0, |i| i + 3)..].contains('/')
            {
                cur.push(':');
            } else {
                entries.push(std::mem::take(&mut cur));
            }
        } else {
            cur.push(c);
        }
    }
    entries.push(cur);
    entries.into_iter().filter(|e| !e.is_empty()).collect()
}

fn cache_base() -> String {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    if let Some(x) = var("XDG_CACHE_HOME") {
        return x;
    }
    if let Some(h) = var("HOME") {
        return format!("{h}/.cache");
    }
    var("TMPDIR")
        .or_else(|| var("TEMP"))
        .unwrap_or_else(|| "/tmp".to_string())
}

fn var(k: &str) -> Option<String> {
    std::env::var(k).ok().filter(|v| !v.is_empty())
}

/// The cache template: `REF_CACHE`, or htslib's default one when `REF_PATH` is not set.
pub fn cache_template() -> Option<String> {
    var("REF_CACHE").or_else(|| {
        var("REF_PATH")
            .is_none()
            .then(|| format!("{}/hts-ref/%2s/%2s/%s", cache_base()))
    })
}

/// The places a reference with checksum `md5` may be, in htslib's order: the cache, then
/// `REF_PATH`'s entries (the MD5 server when it is not set).
pub fn candidates(md5: &str) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = cache_template()
        .iter()
        .map(|c| Candidate::Local(PathBuf::from(expand(c, md5))))
        .collect();
    let ref_path = var("REF_PATH").unwrap_or_else(|| MD5_SERVER.to_string());
    for entry in entries(&ref_path) {
        let entry = entry.strip_prefix("URL=").unwrap_or(&entry);
        let entry = entry.strip_prefix('|').unwrap_or(entry);
        let place = expand(entry, md5);
        out.push(if crate::remote::is_url(&place) {
            Candidate::Url(place)
        } else {
            Candidate::Local(PathBuf::from(place))
        });
    }
    out
}

/// The FASTA an `@SQ UR` tag names, if it is a local file.
pub fn ur_file(ur: &str) -> Option<PathBuf> {
    let path = ur
        .strip_prefix("file://")
        .or_else(|| ur.strip_prefix("file:"))
        .unwrap_or(ur);
    Path::new(path).is_file().then(|| PathBuf::from(path))
}

/// Stores `bases` (checked against `md5`) in the cache, as htslib does after a fetch: written
/// to a temporary file beside it, then renamed; a failure only costs the next run a fetch.
pub fn store(md5: &str, bases: &[u8]) {
    let Some(template) = cache_template() else {
        return;
    };
    let path = PathBuf::from(expand(&template, md5));
    let Some(dir) = path.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    if std::fs::write(&tmp, bases).is_ok() && std::fs::rename(&tmp, &path).is_ok() {
        return;
    }
    let _ = std::fs::remove_file(&tmp);
}

#[cfg(test)]
mod tests {
    use super::{entries, expand};

    #[test]
    fn templates_expand_as_htslib_expands_them() {
        let m = "0123456789abcdef0123456789abcdef";
        assert_eq!(expand("/c/%2s/%2s/%s", m), format!("/c/01/23/{}", &m[4..]));
        assert_eq!(expand("/c/%s", m), format!("/c/{m}"));
        assert_eq!(expand("/c", m), format!("/c/{m}"));
        assert_eq!(expand("/c/", m), format!("/c/{m}"));
        assert_eq!(expand("/c/%2s", m), format!("/c/01/{}", &m[2..]));
        assert_eq!(expand("/c%x", m), format!("/c%x/{m}"));
    }

    #[test]
    fn ref_path_entries() {
        assert_eq!(entries("/a:/b/%s::x"), vec!["/a", "/b/%s:x"]);
        assert_eq!(
            entries("/a:https://www.ebi.ac.uk/ena/cram/md5/%s:/b"),
            vec!["/a", "https://www.ebi.ac.uk/ena/cram/md5/%s", "/b"]
        );
        assert_eq!(
            entries("http://127.0.0.1:8080/md5/%2s/%s:/c"),
            vec!["http://127.0.0.1:8080/md5/%2s/%s", "/c"]
        );
    }
}
