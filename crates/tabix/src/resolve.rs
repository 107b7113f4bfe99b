//! Region strings as tabix reads them: htslib's grammar (`hts_itr_querys`, the `region`
//! crate's [`region::parse_region`]) against the index's sequence names, where a name the index
//! does not hold, or an empty or reversed range, is a query without lines rather than an error
//! (tabix prints nothing for it and goes on).

use index::tbi::Meta;
use region::{parse_region, Region, RegionError};

/// Resolves `text` against `meta`'s names. `Ok(None)`: a name the index does not hold, or an
/// empty or reversed range (tabix prints nothing and goes on); `Err`: htslib's complaint about
/// the text, without its `[E::hts_parse_region] ` prefix (tabix logs it and goes on).
///
/// # Errors
/// Mismatched braces, an ambiguous name, a coordinate of 0 before a `-`, or text after the
/// numbers.
pub fn resolve(meta: &Meta, text: &str) -> Result<Option<Region>, String> {
    match parse_region(text, meta.names.as_slice()) {
        Ok(region) => Ok(Some(region)),
        Err(RegionError::UnknownReference { .. } | RegionError::Empty { .. }) => Ok(None),
        Err(e) => Err(e.htslib_complaint().unwrap_or_else(|| e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use region::{Position, RefId};

    fn meta() -> Meta {
        Meta {
            format: 2,
            col_seq: 1,
            col_beg: 2,
            col_end: 0,
            meta_char: 35,
            skip: 0,
            names: vec![
                "chr1".into(),
                "HLA:1".into(),
                "HLA".into(),
                "HLA:2-3".into(),
            ],
        }
    }

    #[test]
    fn unknown_names_and_empty_ranges_are_no_lines() {
        let m = meta();
        assert_eq!(resolve(&m, "chrX"), Ok(None));
        assert_eq!(resolve(&m, "chr1:500-100"), Ok(None));
        assert_eq!(
            resolve(&m, "{HLA}:2-3"),
            Ok(Some(Region::Ref {
                tid: RefId::new(2),
                beg: Position::new(1),
                end: Position::new(3)
            }))
        );
        assert_eq!(resolve(&m, "."), Ok(Some(Region::All)));
        assert_eq!(resolve(&m, "*"), Ok(Some(Region::Unplaced)));
    }

    #[test]
    fn complaints_are_htslibs() {
        let m = meta();
        assert_eq!(
            resolve(&m, "chr1:x-9"),
            Err("Unexpected string \"x-9\" after region".to_string())
        );
        assert_eq!(
            resolve(&m, "HLA:2-3"),
            Err("Range is ambiguous. Use {HLA:2-3} or {HLA}:2-3 instead".to_string())
        );
    }
}
