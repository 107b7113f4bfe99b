//! Queries: one type, [`Query`], for every way records are read: the whole file in order,
//! targets one after another (`samtools view FILE REGION...`, `*` and `.` among them), htslib's
//! multi-region iterator (`-M`, `--region-file`) and every record overlapping a region set
//! (`-L` through the index). One set-up path makes the plan of the query's regions
//! ([`index::plan`]), tells the byte source the spans in the order they will be read (so a
//! remote one fetches them ahead, several at once), and shows cached parts of the file current
//! before the first record; each kind of query then walks the plan its own way.

mod itr_multi;
mod overlap;
mod planner;
mod setup;

pub use setup::Prepared;
mod targets;

pub(crate) use planner::Planner;

use bgzf::{Source, VirtualOffset};
use hfile::HFile;
use index::plan::Plan;
use index::{Index, Wanted};

use crate::count_check::{Counted, Held};
use crate::record::{Record, RecordRef};
use crate::record_reader::RecordReader;
use crate::{Header, Result};
use region::{Region, RegionSet};

/// How a query's chunks become requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FetchPlan {
    /// One plan for the whole query: chunks a small gap apart fetched as one span, regions'
    /// ends estimated from the index, spans fetched ahead in parallel.
    #[default]
    Planned,
    /// Each run of touching chunks read on its own, one after another, to the end of its last
    /// block (htslib PR #1998's behaviour; with [`hfile::RangeMode::Unbounded`], htslib's).
    PerChunk,
}

/// What a query reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Regions {
    /// Every record, in file order, from where the reader stands (the first record after
    /// opening). Needs no index.
    File,
    /// Each target in turn, as given, each its records in file order (samtools' order for
    /// `samtools view FILE REGION...`); a target given twice is read twice.
    Targets(Vec<Region>),
    /// htslib's multi-region iterator (`samtools view -M`, `--region-file`, `-P`): records
    /// overlapping the regions, once, in file order, as htslib returns them.
    Multi(RegionSet),
    /// Every record overlapping any of the regions, once, in file order.
    Overlapping(RegionSet),
}

impl From<Region> for Regions {
    /// One target: [`Regions::Targets`] of it alone.
    fn from(target: Region) -> Regions {
        Regions::Targets(vec![target])
    }
}

impl From<Vec<Region>> for Regions {
    fn from(targets: Vec<Region>) -> Regions {
        Regions::Targets(targets)
    }
}

/// How a query walks its plan.
enum Walk {
    File,
    Targets(targets::Walk),
    Multi(Box<itr_multi::Walk>),
    Overlapping(overlap::Walk),
}

/// The order the byte source is told the plan's spans in.
enum Advice {
    /// Region by region ([`Plan::read_order`]).
    ReadOrder,
    /// In file order ([`Plan::file_order`]).
    FileOrder,
    /// Not at all: each chunk is fetched when it is read.
    None,
}

/// What the set-up of one kind of query hands back to the common path.
struct Start {
    plan: Plan,
    walk: Walk,
    advice: Advice,
    /// A chunk at or past the end of the file, and the file's size: the index does not fit it.
    past_end: Option<(VirtualOffset, u64)>,
}

/// What planning a query needs to know of the reader (the facade's, or a [`RecordReader`]'s with
/// the index its caller passed in).
struct Context<'a> {
    index: &'a Index,
    /// Known block starts (remote files only).
    starts: &'a [u64],
    /// The file's size (`u64::MAX` when the server does not tell it).
    size: u64,
    options: index::plan::Options,
    fetch: FetchPlan,
    first_record: VirtualOffset,
    location: &'a str,
}

impl Context<'_> {
    /// An index's start offset, where 0 is htslib's "no seek": read on from the first record.
    fn or_first(&self, start: VirtualOffset) -> VirtualOffset {
        if start.raw() == 0 {
            self.first_record
        } else {
            start
        }
    }
}

/// The index's references a region set needs: none for `.` (the whole file), all for `*`
/// (every reference's pseudo-bin says where the unplaced reads start), else the named ones.
fn needs(regions: &RegionSet) -> Wanted {
    if regions.all {
        Wanted::none()
    } else if regions.unplaced {
        Wanted::all()
    } else {
        Wanted::refs(regions.iter().map(|r| r.tid.get()))
    }
}

/// Every chunk holds a record, so one that starts at or past the end of the file shows an
/// index that does not fit it (samtools reads nothing there and exits 0).
fn past_end(plan: &Plan, size: u64) -> Option<(VirtualOffset, u64)> {
    plan.regions
        .iter()
        .flat_map(|r| r.chunks.iter())
        .find(|c| c.start.coffset() >= size)
        .map(|c| (c.start, size))
}

/// A condition on the records a query hands out ([`Query::retain`]).
type Keep<'r> = Box<dyn FnMut(&RecordRef<'_>) -> bool + 'r>;

/// The records of a query ([`crate::Reader::query`], [`RecordReader::query`]), read in place
/// ([`Query::next_record_ref`]) or as owned records (the [`Iterator`]; an error ends the
/// iteration after it is returned). `S`: the byte source records are read from.
///
/// # Examples
///
/// ```no_run
/// use bam::{OpenOptions, Reader};
/// use region::{Position, Region};
/// let mut reader = Reader::open("x.bam", &OpenOptions::default())?;
/// reader.select_index(None)?;
/// let tid = reader.header().tid("chr1").expect("chr1 is in the header");
/// let (beg, end) = (Position::new(10_000), Position::new(20_000));
/// for record in reader.query(Region::Ref { tid, beg, end })? {
///     println!("{:?}", record?.pos());
/// }
/// # Ok::<(), bam::Error>(())
/// ```
pub struct Query<'r, S = HFile> {
    reader: &'r mut RecordReader<S>,
    plan: Plan,
    walk: Walk,
    keep: Option<Keep<'r>>,
    failed: bool,
}

impl<'r, S: Source> Query<'r, S> {
    /// The query `start` describes, on `reader` (its spans already advised).
    fn new(reader: &'r mut RecordReader<S>, start: Start) -> Query<'r, S> {
        Query {
            reader,
            plan: start.plan,
            walk: start.walk,
            keep: None,
            failed: false,
        }
    }

    /// Hands out only the records `keep` accepts (samtools' `-P` keeps the records of its
    /// regions and their mates from a wider query).
    pub fn retain(mut self, keep: impl FnMut(&RecordRef<'_>) -> bool + 'r) -> Query<'r, S> {
        self.keep = Some(Box::new(keep));
        self
    }

    /// The reader being queried: its header, location and last record read.
    pub fn reader(&self) -> &RecordReader<S> {
        self.reader
    }

    /// The header of the file being queried.
    pub fn header(&self) -> &Header {
        self.reader.header()
    }

    /// The plan of the query's regions (its spans are what a remote file is asked for).
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// True when the index cannot answer target `i` of a [`Regions::Targets`] query at all (a
    /// reference beyond the index, an end before the start): samtools warns that the region
    /// is invalid and carries on.
    pub fn is_invalid(&self, i: usize) -> bool {
        match &self.walk {
            Walk::Targets(walk) => walk.is_invalid(&self.plan, i),
            _ => false,
        }
    }

    /// [`RecordReader::has_eof_marker`] of the file being queried.
    pub fn has_eof_marker(&mut self) -> Result<bool> {
        self.reader.has_eof_marker()
    }

    /// The next record read in place: it borrows the block it lies in (only a record that
    /// crosses a block boundary is copied, into a buffer the reader keeps), so reading
    /// allocates nothing. `None` at the end.
    #[inline]
    pub fn next_record_ref(&mut self) -> Result<Option<RecordRef<'_>>> {
        if self.keep.is_none() && matches!(self.walk, Walk::File) {
            return self.reader.read_record_ref();
        }
        loop {
            let held = match &mut self.walk {
                Walk::File => self.reader.read_record_ref_held()?.is_some(),
                Walk::Targets(walk) => walk.advance::<Held, S>(self.reader, &self.plan)?,
                Walk::Multi(walk) => walk.advance::<Held, S>(self.reader, &self.plan)?,
                Walk::Overlapping(walk) => walk.advance::<Held, S>(self.reader)?,
            };
            if !held {
                return Ok(None);
            }
            let kept = match (&mut self.keep, self.reader.last_record_ref()) {
                (Some(keep), Some(record)) => keep(&record),
                _ => true,
            };
            if kept {
                let record = self.reader.last_record_ref();
                debug_assert!(record.is_some(), "the record just read is held");
                return Ok(record);
            }
        }
    }

    /// How many records are left, as counting [`Query::next_record_ref`]'s would give, and the
    /// same error where that would fail. With no condition on the records, each is read only
    /// as far as the count needs ([`RecordReader`]'s quick check: a record that passes it is
    /// stepped over undecoded, where it lies taken from its fixed fields and CIGAR); with one,
    /// each is read in full.
    pub fn count_records(&mut self) -> Result<u64> {
        let mut n = 0u64;
        if self.keep.is_some() {
            while self.next_record_ref()?.is_some() {
                n += 1;
            }
            return Ok(n);
        }
        let reader = &mut *self.reader;
        let plan = &self.plan;
        loop {
            let stepped = match &mut self.walk {
                // A whole file: every record of a block the quick check accepts, at once.
                Walk::File => reader.skip_records()?,
                Walk::Targets(walk) => u64::from(walk.advance::<Counted, S>(reader, plan)?),
                Walk::Multi(walk) => u64::from(walk.advance::<Counted, S>(reader, plan)?),
                Walk::Overlapping(walk) => u64::from(walk.advance::<Counted, S>(reader)?),
            };
            if stepped == 0 {
                return Ok(n);
            }
            n += stepped;
        }
    }

    /// The next record as an owned one; `None` at the end.
    pub fn next_record(&mut self) -> Result<Option<Record>> {
        Ok(self.next_record_ref()?.map(|r| r.to_owned_record()))
    }
}

impl<S: Source> Iterator for Query<'_, S> {
    type Item = Result<Record>;

    fn next(&mut self) -> Option<Result<Record>> {
        if self.failed {
            return None;
        }
        let item = self.next_record().transpose();
        self.failed = matches!(item, Some(Err(_)));
        item
    }
}
