//! The region crate's regions as the CRAM reader's [`Range`]: htslib's `cram_range`, 1-based
//! and inclusive, reference -1 for the unplaced reads.

use region::Region;

use crate::reader::Range;

impl Range {
    /// The range that reads `region` (`hts_itr_query`'s `CRAM_OPT_RANGE`); `None` for `.`,
    /// which is the whole file, not a range.
    pub fn from_region(region: &Region) -> Option<Range> {
        match *region {
            Region::Ref { tid, beg, end } => Some(Range {
                ref_id: i32::try_from(tid.get()).unwrap_or(i32::MAX),
                start: i64::try_from(beg.get())
                    .unwrap_or(i64::MAX)
                    .saturating_add(1),
                end: i64::try_from(end.get()).unwrap_or(i64::MAX),
            }),
            Region::Unplaced => Some(Range {
                ref_id: -1,
                start: 0,
                end: i64::MAX,
            }),
            Region::All => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use region::{Position, RefId};

    #[test]
    fn one_based_inclusive() {
        let r = Region::Ref {
            tid: RefId::new(3),
            beg: Position::new(99),
            end: Position::MAX,
        };
        assert_eq!(
            Range::from_region(&r),
            Some(Range {
                ref_id: 3,
                start: 100,
                end: Position::MAX.get() as i64
            })
        );
        assert_eq!(
            Range::from_region(&Region::Unplaced).map(|r| r.ref_id),
            Some(-1)
        );
        assert_eq!(Range::from_region(&Region::All), None);
    }
}
