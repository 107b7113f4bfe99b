//! [`Selection`]: every record predicate of `samtools view`, applied in samtools' order
//! (`process_aln` in `sam_view.c`).

use std::collections::HashSet;

use super::bed::Targets;
use super::expr::{Context, EvalError, Expression};
use super::readgroup::{read_group, Libraries};
use super::subsample::Subsample;
use bam::{Flags, Header, Record};

use crate::edit::Edit;

/// The FLAG tests: `-f` (all of), `-F` (none of), `--rf` (any of), `-G` (not all of). Values are
/// `int`s as samtools keeps them (a bad flag name is -1: every bit).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FlagTests {
    /// `-f`: every one of these bits must be set.
    pub require_all: i32,
    /// `-F`: none of these bits may be set.
    pub exclude_any: i32,
    /// `--rf`: at least one of these bits must be set (0: no test).
    pub require_any: i32,
    /// `-G`: not all of these bits may be set (0: no test).
    pub exclude_all: i32,
}

impl FlagTests {
    /// True when `flags` pass all four tests.
    pub fn passes(&self, flags: Flags) -> bool {
        let f = i32::from(flags.bits());
        (f & self.require_all) == self.require_all
            && f & self.exclude_any == 0
            && !(self.exclude_all != 0 && (f & self.exclude_all) == self.exclude_all)
            && !(self.require_any != 0 && f & self.require_any == 0)
    }
}

/// The records a filter expression could not judge ([`Selection::evaluation_errors`]).
#[derive(Debug, Clone, Copy)]
pub struct EvaluationErrors<'a> {
    /// How many records failed to evaluate (they were not selected).
    pub count: u64,
    /// The first reason.
    pub first: Option<&'a EvalError>,
}

/// `-d`/`-D`: a tag that must be present, optionally with one of a set of values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagTest {
    /// The tag.
    pub tag: [u8; 2],
    /// `None`: presence is enough.
    pub values: Option<HashSet<Vec<u8>>>,
}

impl TagTest {
    fn passes(&self, r: &Record) -> bool {
        let aux = r.aux();
        let Ok(Some(at)) = bam::aux::find(aux, self.tag) else {
            return false;
        };
        let Some(values) = &self.values else {
            return true;
        };
        let v = &aux[at + 1..];
        let text: Vec<u8> = match aux[at] {
            b'c' => (v[0] as i8).to_string().into_bytes(),
            b'C' => v[0].to_string().into_bytes(),
            b's' => i16::from_le_bytes([v[0], v[1]]).to_string().into_bytes(),
            b'S' => u16::from_le_bytes([v[0], v[1]]).to_string().into_bytes(),
            b'i' => i32::from_le_bytes([v[0], v[1], v[2], v[3]])
                .to_string()
                .into_bytes(),
            b'I' => u32::from_le_bytes([v[0], v[1], v[2], v[3]])
                .to_string()
                .into_bytes(),
            b'A' => v[..1].iter().copied().take_while(|&b| b != 0).collect(),
            // Strings, and for other types their bytes read as a C string, as samtools does.
            _ => v.iter().copied().take_while(|&b| b != 0).collect(),
        };
        values.contains(&text)
    }
}

/// Every selection option of `samtools view` except regions. Build it with the fields, then call
/// [`Selection::select`] on each record in file order.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// `-e`.
    pub expression: Option<Expression>,
    /// `-B`: applied to records that pass `-e`, before the other tests (so `-m` sees the
    /// collapsed CIGAR and `-U` receives the edited record).
    pub remove_backward: bool,
    /// `-m`: query bases from the CIGAR (hard clips counted), when above 0.
    pub min_query_len: i32,
    /// `-q`.
    pub min_mapq: i32,
    /// `-f`, `-F`, `--rf`, `-G`.
    pub flags: FlagTests,
    /// `-L` without `-M`: records must overlap a target (unplaced records never do).
    pub targets: Option<Targets>,
    /// `--subsample` and `--subsample-seed` (or `-s`).
    pub subsample: Option<Subsample>,
    /// `-r`/`-R`: a record with an `RG` tag must be in one of these groups (one without passes).
    pub read_groups: Option<HashSet<Vec<u8>>>,
    /// `-d`/`-D`.
    pub tag: Option<TagTest>,
    /// `-N`.
    pub names: Option<HashSet<Vec<u8>>>,
    /// `-l`.
    pub library: Option<Vec<u8>>,
    /// What selecting learns as it goes (the header's libraries, evaluation errors); leave it
    /// at its default.
    pub state: SelectionState,
}

/// The part of a [`Selection`] that records update.
#[derive(Debug, Clone, Default)]
pub struct SelectionState {
    libraries: Option<Libraries>,
    errors: u64,
    first_error: Option<EvalError>,
}

impl Selection {
    /// Whether samtools would output this record (`process_aln` returning 0). May edit the
    /// record (`-B`). A record whose expression cannot be evaluated is not selected; see
    /// [`Selection::evaluation_errors`].
    pub fn select(&mut self, r: &mut Record, header: &Header) -> bool {
        if let Some(e) = &mut self.expression {
            let libs = self
                .state
                .libraries
                .get_or_insert_with(|| Libraries::from_header(header));
            let ctx = Context::with_libraries(header, libs);
            match e.matches(r, &ctx) {
                Ok(true) => {}
                Ok(false) => return false,
                Err(err) => {
                    self.state.errors += 1;
                    self.state.first_error.get_or_insert(err);
                    return false;
                }
            }
        }
        if self.remove_backward {
            r.remove_backward_ops();
        }
        if self.min_query_len > 0 {
            let qlen: u64 = r
                .cigar()
                .iter()
                .filter(|op| op.consumes_query() || op.code() == 5)
                .map(|op| u64::from(op.len()))
                .sum();
            if (qlen as i64) < i64::from(self.min_query_len) {
                return false;
            }
        }
        if !self.passes_fields(r) {
            return false;
        }
        if let Some(t) = &self.targets {
            // samtools' `bed_overlap` takes the position and end as stored and computed.
            let name = r.ref_id().and_then(|tid| header.ref_name(tid));
            let pos = i64::from(r.stored_coordinates().pos);
            match name {
                Some(name) if t.overlaps(name, pos, r.stored_end_pos()) => {}
                _ => return false,
            }
        }
        if let Some(s) = &self.subsample {
            if !s.keeps(r.name()) {
                return false;
            }
        }
        if let Some(groups) = &self.read_groups {
            if let Some(rg) = read_group(r) {
                if !groups.contains(rg) {
                    return false;
                }
            }
        }
        if let Some(t) = &self.tag {
            if !t.passes(r) {
                return false;
            }
        }
        if let Some(names) = &self.names {
            let name = r.name();
            let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
            if !names.contains(name) {
                return false;
            }
        }
        if let Some(lib) = &self.library {
            let libs = self
                .state
                .libraries
                .get_or_insert_with(|| Libraries::from_header(header));
            if libs.of(r) != Some(lib.as_slice()) {
                return false;
            }
        }
        true
    }

    /// True when only [`Selection::passes_fields`] can turn a record away (no expression, `-B`,
    /// `-m`, targets, subsampling, read groups, tag, names or library): then a record read in
    /// place is judged as it is, with no owned copy.
    pub fn by_fields_only(&self) -> bool {
        self.expression.is_none()
            && !self.remove_backward
            && self.min_query_len <= 0
            && self.targets.is_none()
            && self.subsample.is_none()
            && self.read_groups.is_none()
            && self.tag.is_none()
            && self.names.is_none()
            && self.library.is_none()
    }

    /// True when every record is selected (no test at all): a count then needs only how many
    /// records there are.
    pub fn selects_all(&self) -> bool {
        self.by_fields_only() && self.min_mapq <= 0 && self.flags == FlagTests::default()
    }

    /// The `-q` and flag tests (`-f`, `-F`, `--rf`, `-G`), which read only fixed fields.
    #[inline]
    pub fn passes_fields<D: AsRef<[u8]>>(&self, r: &Record<D>) -> bool {
        i32::from(r.mapq()) >= self.min_mapq && self.flags.passes(r.flags())
    }

    /// How many records failed to evaluate the expression, and the first reason.
    pub fn evaluation_errors(&self) -> EvaluationErrors<'_> {
        EvaluationErrors {
            count: self.state.errors,
            first: self.state.first_error.as_ref(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::testutil::{header, Rec};

    fn sel(s: &mut Selection, rec: &Rec) -> bool {
        s.select(&mut rec.record(), &header())
    }

    #[test]
    fn flag_tests() {
        let f = FlagTests {
            require_any: 0x40 | 0x80,
            exclude_all: 0x1 | 0x400,
            ..FlagTests::default()
        };
        assert!(f.passes(Flags::from_bits(0x41)));
        assert!(!f.passes(Flags::from_bits(0x1)));
        assert!(!f.passes(Flags::from_bits(0x441)));
        assert!(f.passes(Flags::from_bits(0x440)));
        let bad = FlagTests {
            require_all: -1,
            ..FlagTests::default()
        };
        assert!(!bad.passes(Flags::from_bits(0xfff)));
    }

    #[test]
    fn predicates_in_order() {
        let rec = Rec::default().tag_z(b"RG", b"grpA").tag_i(b"NM", b'C', 2);
        let mut s = Selection {
            min_query_len: 8,
            ..Selection::default()
        };
        assert!(sel(&mut s, &rec));
        s.min_query_len = 9;
        assert!(!sel(&mut s, &rec));
        let with_hard = Rec {
            cigar: vec![(1, 5), (2, 4), (6, 0)],
            ..rec.clone()
        };
        assert!(sel(&mut s, &with_hard));

        let mut s = Selection {
            read_groups: Some([b"grpB".to_vec()].into_iter().collect()),
            ..Selection::default()
        };
        assert!(!sel(&mut s, &rec));
        assert!(sel(&mut s, &Rec::default()), "no RG passes -r");

        let mut s = Selection {
            library: Some(b"libA".to_vec()),
            ..Selection::default()
        };
        assert!(sel(&mut s, &rec));
        assert!(!sel(&mut s, &Rec::default()));

        let mut s = Selection {
            tag: Some(TagTest {
                tag: *b"NM",
                values: Some([b"2".to_vec()].into_iter().collect()),
            }),
            ..Selection::default()
        };
        assert!(sel(&mut s, &rec));
        s.tag = Some(TagTest {
            tag: *b"RG",
            values: None,
        });
        assert!(sel(&mut s, &rec));
        assert!(!sel(&mut s, &Rec::default()));

        let mut s = Selection {
            names: Some([b"read1".to_vec()].into_iter().collect()),
            ..Selection::default()
        };
        assert!(sel(&mut s, &rec));
        s.names = Some(HashSet::new());
        assert!(!sel(&mut s, &rec));

        let mut s = Selection {
            targets: Some(Targets::parse("t", b"chr1\t100\t101\n").unwrap()),
            ..Selection::default()
        };
        assert!(sel(&mut s, &rec));
        let unplaced = Rec {
            ref_id: -1,
            ..rec.clone()
        };
        assert!(!sel(&mut s, &unplaced));
    }

    #[test]
    fn expression_errors_are_counted() {
        let mut s = Selection {
            expression: Some(Expression::parse("qname + 1").unwrap()),
            ..Selection::default()
        };
        assert!(!sel(&mut s, &Rec::default()));
        assert!(!sel(&mut s, &Rec::default()));
        assert_eq!(s.evaluation_errors().count, 2);
    }
}
