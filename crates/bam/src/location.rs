//! What a user names as a BAM location: a path or URL, optionally followed by `##idx##` and the
//! location of its index (htslib's syntax for an index whose name cannot be derived, as with
//! pre-signed URLs).

use crate::IndexHint;

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

/// The index to use: one named with `##idx##` takes the place of a derived one; one given on
/// its own (`-X`) wins over both; a read that needs none stays without.
pub(crate) fn index_hint(hint: &IndexHint, from_location: Option<&str>) -> IndexHint {
    match (hint, from_location) {
        (IndexHint::Auto, Some(at)) => IndexHint::At(at.to_string()),
        _ => hint.clone(),
    }
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
    fn the_named_index_replaces_a_derived_one_only() {
        let at = |s: &str| IndexHint::At(s.to_string());
        assert_eq!(index_hint(&IndexHint::Auto, Some("i.bai")), at("i.bai"));
        assert_eq!(index_hint(&at("x.bai"), Some("i.bai")), at("x.bai"));
        assert_eq!(index_hint(&IndexHint::None, Some("i.bai")), IndexHint::None);
        assert_eq!(index_hint(&IndexHint::Auto, None), IndexHint::Auto);
    }
}
