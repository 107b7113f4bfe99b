//! Where an index is looked for when none is given, in the order of htslib 1.16's
//! `hts_idx_check_local` and `idx_filename`: `x.bam.csi`, `x.csi`, `x.bam.bai`, `x.bai` (the
//! last is how Picard and htsjdk name indexes).
//!
//! For a URL the suffix goes before the query string and fragment (an `s3://` URL keeps its
//! `#`, which can be part of a key), and the extension replaced is the last one of the path's
//! last segment. For a local path, htslib replaces from the last `.` anywhere in the path (not
//! at its first byte), which is followed here too. htslib also tries a copy of a remote index
//! in the working directory first; that is deliberately not done (a stale copy is never
//! revalidated).

/// The index locations to try for `location`, in order, without repeats.
///
/// ```
/// use bam::index_name::candidates;
/// assert_eq!(candidates("d/x.bam"), ["d/x.bam.csi", "d/x.csi", "d/x.bam.bai", "d/x.bai"]);
/// assert_eq!(
///     candidates("https://h/d/x.bam?sig=1"),
///     [
///         "https://h/d/x.bam.csi?sig=1",
///         "https://h/d/x.csi?sig=1",
///         "https://h/d/x.bam.bai?sig=1",
///         "https://h/d/x.bai?sig=1",
///     ]
/// );
/// ```
pub fn candidates(location: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(4);
    for ext in [".csi", ".bai"] {
        for name in [appended(location, ext), replaced(location, ext)]
            .into_iter()
            .flatten()
        {
            if !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
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
    hfile::scheme_of(location).is_some_and(|s| s != "file")
}

/// A local location's path (a `file://` URL's path part, as `hts_idx_check_local` takes it).
fn local_path(location: &str) -> &str {
    if let Some(rest) = location.strip_prefix("file://localhost/") {
        return &location[location.len() - rest.len() - 1..];
    }
    location.strip_prefix("file://").unwrap_or(location)
}

fn appended(location: &str, ext: &str) -> Option<String> {
    if is_remote(location) {
        let end = path_end(location);
        return Some(format!("{}{ext}{}", &location[..end], &location[end..]));
    }
    Some(format!("{}{ext}", local_path(location)))
}

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

    #[test]
    fn local_names() {
        assert_eq!(candidates("x"), ["x.csi", "x.bai"]);
        assert_eq!(
            candidates("file:///d/x.bam"),
            ["/d/x.bam.csi", "/d/x.csi", "/d/x.bam.bai", "/d/x.bai"]
        );
        // htslib's quirk: the last dot anywhere in the path.
        assert_eq!(candidates("a.d/x")[1], "a.csi");
    }

    #[test]
    fn remote_names() {
        assert_eq!(
            candidates("http://h/a.d/x#f"),
            ["http://h/a.d/x.csi#f", "http://h/a.d/x.bai#f"]
        );
        // An s3 key may hold '#': the suffix goes at the very end.
        assert_eq!(
            candidates("s3://b/x.bam#1")[..2],
            ["s3://b/x.bam#1.csi", "s3://b/x.csi"]
        );
        assert_eq!(candidates("s3://b/x.bam?v=1")[1], "s3://b/x.csi?v=1");
    }
}
