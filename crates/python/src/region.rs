//! pysam's ways of naming what `fetch` and `count` read, as query targets: `contig`, `start`
//! and `stop` (0-based, half-open), `tid`, or a `region` string in samtools' syntax (parsed by
//! `region::parse_region`: braces, commas, `*` and `.` as samtools reads them, where pysam's own
//! parser splits at the first `:`).

use ::region::{Position, RefId, Region as Target};
use bam::Header;

use crate::alignments::Scope;
use crate::Error;

/// The arguments of pysam's `fetch(contig, start, stop, region, tid, until_eof, reference,
/// end)`; `reference` and `end` are pysam's older names for `contig` and `stop`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FetchArgs {
    /// A reference name (`*`: the unplaced reads).
    pub contig: Option<String>,
    /// The 0-based start.
    pub start: Option<i64>,
    /// The 0-based end, exclusive.
    pub stop: Option<i64>,
    /// A region as samtools writes it (`chr1:1,001-2,000`, `{name:with:colons}:1-9`, `*`).
    pub region: Option<String>,
    /// The reference by number.
    pub tid: Option<i64>,
    /// Every record from the start of the file, unmapped ones too, when no region is named.
    pub until_eof: bool,
}

/// What `args` reads in `header`: one target, every reference in turn (pysam's `fetch()`
/// without a region: the mapped reads and those placed beside their mates), or the whole file
/// (`until_eof`).
pub fn scope(args: &FetchArgs, header: &Header) -> Result<Scope, Error> {
    if let Some(region) = &args.region {
        return Ok(Scope::Targets(vec![parse(region, header)?]));
    }
    let tid = match (&args.contig, args.tid) {
        (Some(_), Some(_)) => {
            return Err(Error::Argument(
                "give either contig or tid, not both".to_string(),
            ))
        }
        (Some(contig), None) if contig == "*" => {
            return Ok(Scope::Targets(vec![Target::Unplaced]));
        }
        (Some(contig), None) => header
            .tid(contig)
            .ok_or_else(|| Error::Argument(format!("invalid contig `{contig}`")))?,
        (None, Some(tid)) => usize::try_from(tid)
            .ok()
            .filter(|&t| t < header.refs().len())
            .map(RefId::new)
            .ok_or_else(|| Error::Argument(format!("tid {tid} out of range")))?,
        (None, None) if args.start.is_some() || args.stop.is_some() => {
            return Err(Error::Argument("start and stop need a contig".to_string()))
        }
        (None, None) if args.until_eof => return Ok(Scope::File),
        (None, None) => {
            let every = (0..header.refs().len()).map(|t| Target::Ref {
                tid: RefId::new(t),
                beg: Position::ZERO,
                end: Position::MAX,
            });
            return Ok(Scope::Targets(every.collect()));
        }
    };
    Ok(Scope::Targets(vec![interval(tid, args.start, args.stop)?]))
}

/// A target from a reference and pysam's 0-based, half-open bounds (either may be absent),
/// refused with pysam's messages when out of order or negative.
pub fn interval(tid: RefId, start: Option<i64>, stop: Option<i64>) -> Result<Target, Error> {
    let beg = start.unwrap_or(0);
    if beg < 0 {
        return Err(Error::Argument(format!("start out of range ({beg})")));
    }
    let end = match stop {
        Some(stop) if stop < beg => {
            return Err(Error::Argument(format!(
                "invalid coordinates: start ({beg}) > stop ({stop})"
            )))
        }
        Some(stop) => Position::saturating_from(stop).min(Position::MAX),
        None => Position::MAX,
    };
    Ok(Target::Ref {
        tid,
        beg: Position::saturating_from(beg),
        end,
    })
}

/// A region string in samtools' syntax; an unknown name or an empty range is refused (pysam
/// raises where samtools warns and goes on).
pub fn parse(region: &str, header: &Header) -> Result<Target, Error> {
    ::region::parse_region(region, header).map_err(|e| Error::Argument(e.to_string()))
}

/// One entry of `fetch_many`: a region string, or `(contig, start, stop)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegionSpec {
    /// samtools' syntax.
    Text(String),
    /// pysam's `contig, start, stop` (0-based, half-open; `None`: open).
    Bounds(String, Option<i64>, Option<i64>),
}

/// The targets of `fetch_many`, in the order given: records come out region by region, as
/// `samtools view FILE REGION...` prints them (a record in two regions comes twice).
pub fn targets(specs: &[RegionSpec], header: &Header) -> Result<Vec<Target>, Error> {
    specs
        .iter()
        .map(|spec| match spec {
            RegionSpec::Text(region) => parse(region, header),
            RegionSpec::Bounds(contig, start, stop) if contig == "*" => {
                if start.is_some() || stop.is_some() {
                    return Err(Error::Argument(
                        "`*` (the unplaced reads) takes no coordinates".to_string(),
                    ));
                }
                Ok(Target::Unplaced)
            }
            RegionSpec::Bounds(contig, start, stop) => {
                let tid = header
                    .tid(contig)
                    .ok_or_else(|| Error::Argument(format!("invalid contig `{contig}`")))?;
                interval(tid, *start, *stop)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use bam::Reference;

    fn header() -> Header {
        let refs = ["chr1", "chr2", "chr1:100"]
            .iter()
            .map(|n| Reference {
                name: n.as_bytes().to_vec(),
                len: 1000,
            })
            .collect();
        Header::from_parts(Vec::new(), refs).unwrap()
    }

    fn at(tid: usize, beg: u64, end: u64) -> Target {
        Target::Ref {
            tid: RefId::new(tid),
            beg: Position::new(beg),
            end: Position::new(end),
        }
    }

    #[test]
    fn contig_start_stop_are_zero_based_half_open() {
        let args = FetchArgs {
            contig: Some("chr2".into()),
            start: Some(10),
            stop: Some(20),
            ..Default::default()
        };
        assert_eq!(
            scope(&args, &header()),
            Ok(Scope::Targets(vec![at(1, 10, 20)]))
        );
    }

    #[test]
    fn regions_use_samtools_grammar() {
        let h = header();
        assert_eq!(parse("chr1:1,001-2,000", &h), Ok(at(0, 1000, 2000)));
        assert_eq!(parse("{chr1:100}:5-6", &h), Ok(at(2, 4, 6)));
        assert_eq!(parse("*", &h), Ok(Target::Unplaced));
        assert!(matches!(parse("chr9", &h), Err(Error::Argument(_))));
        assert!(matches!(parse("chr1:500-400", &h), Err(Error::Argument(_))));
    }

    #[test]
    fn pysam_messages_for_bad_arguments() {
        let h = header();
        let bad = |args: FetchArgs| match scope(&args, &h) {
            Err(Error::Argument(m)) => m,
            other => panic!("{other:?}"),
        };
        let contig = |c: &str| Some(c.to_string());
        assert_eq!(
            bad(FetchArgs {
                contig: contig("nope"),
                ..Default::default()
            }),
            "invalid contig `nope`"
        );
        assert_eq!(
            bad(FetchArgs {
                contig: contig("chr1"),
                start: Some(500),
                stop: Some(400),
                ..Default::default()
            }),
            "invalid coordinates: start (500) > stop (400)"
        );
        assert_eq!(
            bad(FetchArgs {
                contig: contig("chr1"),
                start: Some(-5),
                ..Default::default()
            }),
            "start out of range (-5)"
        );
    }

    #[test]
    fn no_region_is_every_reference_or_the_whole_file() {
        let h = header();
        let all = scope(&FetchArgs::default(), &h);
        assert!(matches!(all, Ok(Scope::Targets(t)) if t.len() == 3));
        let eof = FetchArgs {
            until_eof: true,
            ..Default::default()
        };
        assert_eq!(scope(&eof, &h), Ok(Scope::File));
    }

    #[test]
    fn many_regions_keep_their_order() {
        let h = header();
        let specs = [
            RegionSpec::Text("chr2:1-10".into()),
            RegionSpec::Bounds("chr1".into(), Some(0), None),
            RegionSpec::Bounds("*".into(), None, None),
        ];
        assert_eq!(
            targets(&specs, &h),
            Ok(vec![
                at(1, 0, 10),
                at(0, 0, Position::MAX.get()),
                Target::Unplaced
            ])
        );
    }
}
