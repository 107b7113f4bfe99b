//! A CRAM header's references as the names region strings resolve against.

use region::{Names, RefId};

use crate::header::SamHeader;

/// The `@SQ` lines' `SN` names in order, looked up one by one (the first equal name, as the
/// header's own list holds them).
impl Names for SamHeader {
    fn tid(&self, name: &[u8]) -> Option<RefId> {
        self.references
            .iter()
            .position(|(n, _)| n.as_slice() == name)
            .map(RefId::new)
    }

    fn count(&self) -> usize {
        self.references.len()
    }

    fn name(&self, tid: RefId) -> Option<&[u8]> {
        self.references.get(tid.get()).map(|(n, _)| n.as_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_resolve_against_the_sq_lines() {
        let h = SamHeader::from_text(b"@SQ\tSN:chr1\tLN:100\n@SQ\tSN:chr2\tLN:50\n".to_vec());
        let r = region::parse_region("chr2:10-20", &h).unwrap();
        assert_eq!(
            r,
            region::Region::Ref {
                tid: RefId::new(1),
                beg: region::Position::new(9),
                end: region::Position::new(20)
            }
        );
        assert_eq!(h.count(), 2);
        assert_eq!(Names::name(&h, RefId::new(0)), Some(&b"chr1"[..]));
    }
}
