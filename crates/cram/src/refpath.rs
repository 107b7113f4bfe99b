//! Finding a reference without `-T`, as htslib's `cram_populate_ref` does on local files: by
//! the `@SQ M5` checksum in `REF_CACHE`, then in the local directories of `REF_PATH` (with no
//! `REF_PATH`, htslib's default cache under `XDG_CACHE_HOME`, `HOME/.cache`, `TMPDIR` or
//! `/tmp`), each file the bare sequence; else the FASTA the `@SQ UR` tag names. The MD5
//! server and `http(s)://` entries are not asked (later work).

use std::path::{Path, PathBuf};

/// Where a reference was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// A file holding the bare sequence (named by its MD5).
    Bare(PathBuf),
    /// A FASTA file (with or without `.fai`).
    Fasta(PathBuf),
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

/// `REF_PATH`'s entries (`:`-separated, `::` a colon), URLs left out.
fn local_entries(ref_path: &str) -> Vec<String> {
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
                // A URL: keep reading to its end (entries after it are lost with it, which
                // only matters for the URLs this reader does not fetch).
                cur.push(':');
                for d in it.by_ref() {
                    cur.push(d);
                }
            } else {
                entries.push(std::mem::take(&mut cur));
            }
        } else {
            cur.push(c);
        }
    }
    entries.push(cur);
    entries
        .into_iter()
        .filter(|e| !e.is_empty())
        .filter(|e| !e.contains("://") && !e.starts_with('|') && !e.starts_with("URL="))
        .collect()
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

/// Looks a reference up by its `M5` and `UR` tags.
pub fn find(md5: Option<&str>, ur: Option<&str>) -> Option<Found> {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    if let Some(md5) = md5 {
        let ref_path = var("REF_PATH");
        let cache = var("REF_CACHE").or_else(|| {
            ref_path
                .is_none()
                .then(|| format!("{}/hts-ref/%2s/%2s/%s", cache_base()))
        });
        let mut candidates: Vec<String> = cache.iter().map(|c| expand(c, md5)).collect();
        if let Some(p) = &ref_path {
            candidates.extend(local_entries(p).iter().map(|e| expand(e, md5)));
        }
        if let Some(hit) = candidates.into_iter().find(|c| Path::new(c).is_file()) {
            return Some(Found::Bare(PathBuf::from(hit)));
        }
    }
    let ur = ur?;
    let path = ur
        .strip_prefix("file://")
        .or_else(|| ur.strip_prefix("file:"))
        .unwrap_or(ur);
    Path::new(path)
        .is_file()
        .then(|| Found::Fasta(PathBuf::from(path)))
}

#[cfg(test)]
mod tests {
    use super::{expand, local_entries};

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
        assert_eq!(local_entries("/a:/b/%s::x"), vec!["/a", "/b/%s:x"]);
        assert_eq!(
            local_entries("/a:https://www.ebi.ac.uk/ena/cram/md5/%s"),
            vec!["/a"]
        );
    }
}
