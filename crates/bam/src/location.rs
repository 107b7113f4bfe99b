//! What a user names as a BAM location: a path or URL, optionally followed by `##idx##` and the
//! location of its index (htslib's syntax for an index whose name cannot be derived, as with
//! pre-signed URLs).

/// htslib's delimiter between a file and its index (`HTS_IDX_DELIM`).
pub const INDEX_DELIMITER: &str = "##idx##";

/// Splits `FILE##idx##INDEX` into the file and the index, each used verbatim; a location without
/// the delimiter is the file alone.
///
/// ```
/// use bam::split_index;
/// assert_eq!(
///     split_index("https://h/x.bam?X-Amz-Signature=a##idx##https://h/x.bam.bai?X-Amz-Signature=b"),
///     ("https://h/x.bam?X-Amz-Signature=a", Some("https://h/x.bam.bai?X-Amz-Signature=b"))
/// );
/// assert_eq!(split_index("x.bam"), ("x.bam", None));
/// ```
pub fn split_index(location: &str) -> (&str, Option<&str>) {
    match location.split_once(INDEX_DELIMITER) {
        Some((file, index)) => (file, Some(index)),
        None => (location, None),
    }
}

/// `x.bam` + `.bai` -> `x.bam.bai`; for a URL the suffix goes before `?query` and `#fragment`.
/// `None` for a pre-signed URL: its signature covers the path, so no other name can be made
/// from it, and the index must be given (`-X`, or `URL##idx##INDEX_URL`).
pub fn derived_index(location: &str, ext: &str) -> Option<String> {
    if hfile::is_presigned(location) {
        return None;
    }
    Some(crate::sibling(location, ext))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_once_at_the_first_delimiter() {
        assert_eq!(split_index("a.bam##idx##"), ("a.bam", Some("")));
        assert_eq!(
            split_index("a.bam##idx##b.bai##idx##c"),
            ("a.bam", Some("b.bai##idx##c"))
        );
        assert_eq!(
            split_index("s3://b/a.bam##idx##s3://b/i.csi"),
            ("s3://b/a.bam", Some("s3://b/i.csi"))
        );
    }

    #[test]
    fn signed_urls_are_never_altered() {
        assert_eq!(
            derived_index(
                "https://h/x.bam?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=a",
                ".bai"
            ),
            None
        );
        assert_eq!(
            derived_index("https://h/x.bam?v=1", ".bai").as_deref(),
            Some("https://h/x.bam.bai?v=1")
        );
        assert_eq!(
            derived_index("s3://b/x.bam", ".csi").as_deref(),
            Some("s3://b/x.bam.csi")
        );
        assert_eq!(derived_index("x.bam", ".bai").as_deref(), Some("x.bam.bai"));
    }
}
