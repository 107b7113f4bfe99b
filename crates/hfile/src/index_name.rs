//! The names of files beside a data location, as htslib 1.16 derives them (`haddextension`,
//! `hts_idx_check_local`, `idx_filename`), once for every format: an index (each format gives
//! its own extensions: BAM `.csi` then `.bai`, tabix `.csi` then `.tbi`, CRAM `.crai`) or a
//! FASTA's `.fai` and `.gzi`.
//!
//! - `FILE##idx##INDEX` names the index; nothing is derived.
//! - A pre-signed URL derives nothing: its signature covers the path, so another name made
//!   from it is refused, and a signed URL is never altered (the caller asks for the index's
//!   own URL instead).
//! - For a URL the extension goes before its `?query` and `#fragment` (an `s3://` URL keeps
//!   its `#`, which can be part of a key), and the extension replaced is the last one of the
//!   path's last segment.
//! - For a local path (a `file://` URL's path part) the extension goes at the end, and htslib
//!   replaces from the last `.` anywhere in the path (not at its first byte), which is followed
//!   here too.
//!
//! htslib also tries a copy of a remote index in the working directory first; that is
//! deliberately not done (a stale copy is never revalidated).

use crate::registry::scheme_of;

/// htslib's delimiter between a file and its index (`HTS_IDX_DELIM`).
pub const INDEX_DELIMITER: &str = "##idx##";

/// A location split at `##idx##` ([`split_index`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileAndIndex<'a> {
    /// The file.
    pub file: &'a str,
    /// The index named after the delimiter, if any.
    pub index: Option<&'a str>,
}

/// Splits `FILE##idx##INDEX` into the file and the index, each used verbatim; a location
/// without the delimiter is the file alone.
///
/// ```
/// use hfile::split_index;
/// let split = split_index("https://h/x.bam?X-Amz-Signature=a##idx##https://h/x.bam.bai?X-Amz-Signature=b");
/// assert_eq!(split.file, "https://h/x.bam?X-Amz-Signature=a");
/// assert_eq!(split.index, Some("https://h/x.bam.bai?X-Amz-Signature=b"));
/// assert_eq!(split_index("x.bam").index, None);
/// ```
pub fn split_index(location: &str) -> FileAndIndex<'_> {
    match location.split_once(INDEX_DELIMITER) {
        Some((file, index)) => FileAndIndex {
            file,
            index: Some(index),
        },
        None => FileAndIndex {
            file: location,
            index: None,
        },
    }
}

/// The index locations to try for `location`, in htslib's order, without repeats: the one
/// `##idx##` names; none for a pre-signed URL; else [`derived_names`].
///
/// ```
/// use hfile::index_candidates;
/// assert_eq!(index_candidates("d/x.cram", &[".crai"]), ["d/x.cram.crai", "d/x.crai"]);
/// assert_eq!(index_candidates("x.vcf.gz##idx##i.tbi", &[".csi", ".tbi"]), ["i.tbi"]);
/// assert!(index_candidates("https://h/x.bam?X-Amz-Signature=s", &[".bai"]).is_empty());
/// ```
pub fn index_candidates(location: &str, extensions: &[&str]) -> Vec<String> {
    let split = split_index(location);
    if let Some(index) = split.index {
        return vec![index.to_string()];
    }
    if crate::is_presigned(location) {
        return Vec::new();
    }
    derived_names(location, extensions)
}

/// The names htslib derives from `location` for an index with these extensions, in its order:
/// for each extension, appended to the name, then in place of its last extension.
///
/// ```
/// use hfile::derived_names;
/// assert_eq!(
///     derived_names("d/x.bam", &[".csi", ".bai"]),
///     ["d/x.bam.csi", "d/x.csi", "d/x.bam.bai", "d/x.bai"]
/// );
/// assert_eq!(
///     derived_names("https://h/d/x.bam?v=1#f", &[".bai"]),
///     ["https://h/d/x.bam.bai?v=1#f", "https://h/d/x.bai?v=1#f"]
/// );
/// ```
pub fn derived_names(location: &str, extensions: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(2 * extensions.len());
    for ext in extensions {
        let appended = Some(add_extension(location, ext));
        for name in [appended, replaced(location, ext)].into_iter().flatten() {
            if !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}

/// `location` with `ext` appended to its name (htslib's `haddextension` without replacing):
/// a URL's before its query string and fragment (`ref.fa?sig` -> `ref.fa.fai?sig`), a local
/// path's at its end (a `file://` URL becomes its path).
///
/// ```
/// assert_eq!(hfile::add_extension("https://h/ref.fa?s=1", ".fai"), "https://h/ref.fa.fai?s=1");
/// assert_eq!(hfile::add_extension("ref.fa", ".fai"), "ref.fa.fai");
/// ```
pub fn add_extension(location: &str, ext: &str) -> String {
    if is_remote(location) {
        let end = path_end(location);
        return format!("{}{ext}{}", &location[..end], &location[end..]);
    }
    format!("{}{ext}", local_path(location))
}

/// Where a URL's path ends (before `?` or `#`; `s3` URLs only before `?`).
fn path_end(url: &str) -> usize {
    let s3 = ["s3://", "s3+http://", "s3+https://"]
        .iter()
        .any(|p| url.starts_with(p));
    let stops: &[char] = if s3 { &['?'] } else { &['?', '#'] };
    url.find(stops).unwrap_or(url.len())
}

fn is_remote(location: &str) -> bool {
    scheme_of(location).is_some_and(|s| s != "file")
}

/// A local location's path (a `file://` URL's path part, as `hts_idx_check_local` takes it).
fn local_path(location: &str) -> &str {
    if let Some(rest) = location.strip_prefix("file://localhost/") {
        return &location[location.len() - rest.len() - 1..];
    }
    location.strip_prefix("file://").unwrap_or(location)
}

/// `location` with its last extension replaced by `ext`; `None` when it has none.
fn replaced(location: &str, ext: &str) -> Option<String> {
    if is_remote(location) {
        let end = path_end(location);
        let path = &location[..end];
        let dot = path
            .rfind(['.', '/'])
            .filter(|&i| path.as_bytes()[i] == b'.')?;
        return Some(format!("{}{ext}{}", &path[..dot], &location[end..]));
    }
    let path = local_path(location);
    let dot = path.rfind('.').filter(|&i| i > 0)?;
    Some(format!("{}{ext}", &path[..dot]))
}

#[cfg(test)]
mod tests {
    use super::*;

    const BAM: &[&str] = &[".csi", ".bai"];

    #[test]
    fn local_names() {
        assert_eq!(derived_names("x", BAM), ["x.csi", "x.bai"]);
        assert_eq!(
            derived_names("file:///d/x.bam", BAM),
            ["/d/x.bam.csi", "/d/x.csi", "/d/x.bam.bai", "/d/x.bai"]
        );
        // htslib's quirk: the last dot anywhere in the path.
        assert_eq!(derived_names("a.d/x", BAM)[1], "a.csi");
        assert_eq!(
            derived_names("c.vcf.gz", &[".csi", ".tbi"]),
            ["c.vcf.gz.csi", "c.vcf.csi", "c.vcf.gz.tbi", "c.vcf.tbi"]
        );
    }

    #[test]
    fn remote_names() {
        assert_eq!(
            derived_names("http://h/a.d/x#f", BAM),
            ["http://h/a.d/x.csi#f", "http://h/a.d/x.bai#f"]
        );
        // An s3 key may hold '#': the suffix goes at the very end.
        assert_eq!(
            derived_names("s3://b/x.bam#1", BAM)[..2],
            ["s3://b/x.bam#1.csi", "s3://b/x.csi"]
        );
        assert_eq!(
            derived_names("s3://b/x.bam?v=1", BAM)[1],
            "s3://b/x.csi?v=1"
        );
        assert_eq!(
            derived_names("https://h/x.cram#frag", &[".crai"]),
            ["https://h/x.cram.crai#frag", "https://h/x.crai#frag"]
        );
    }

    #[test]
    fn named_and_signed() {
        assert_eq!(
            index_candidates("https://h/x.bam?sig=1##idx##https://h/i.bai?sig=2", BAM),
            ["https://h/i.bai?sig=2"]
        );
        assert!(index_candidates("https://h/x.bam?X-Amz-Signature=1", BAM).is_empty());
        assert_eq!(index_candidates("x.bam", BAM).len(), 4);
    }

    #[test]
    fn splits_once_at_the_first_delimiter() {
        let split = |s| {
            let FileAndIndex { file, index } = split_index(s);
            (file, index)
        };
        assert_eq!(split("a.bam##idx##"), ("a.bam", Some("")));
        assert_eq!(
            split("a.bam##idx##b.bai##idx##c"),
            ("a.bam", Some("b.bai##idx##c"))
        );
        assert_eq!(
            split("s3://b/a.bam##idx##s3://b/i.csi"),
            ("s3://b/a.bam", Some("s3://b/i.csi"))
        );
    }
}
