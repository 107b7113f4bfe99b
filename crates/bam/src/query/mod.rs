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
mod targets;

pub(crate) use planner::Planner;

use bgzf::VirtualOffset;
use index::plan::{self, Plan, Region};
use index::{Index, Wanted};

use crate::reader::Reader;
use crate::record::{Record, RecordRef};
use crate::region::Target;
use crate::region_set::RegionSet;
use crate::{Error, Header, Result};

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
    Targets(Vec<Target>),
    /// htslib's multi-region iterator (`samtools view -M`, `--region-file`, `-P`): records
    /// overlapping the regions, once, in file order, as htslib returns them.
    Multi(RegionSet),
    /// Every record overlapping any of the regions, once, in file order.
    Overlapping(RegionSet),
}

impl From<Target> for Regions {
    /// One target: [`Regions::Targets`] of it alone.
    fn from(target: Target) -> Regions {
        Regions::Targets(vec![target])
    }
}

impl From<Vec<Target>> for Regions {
    fn from(targets: Vec<Target>) -> Regions {
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

/// What planning a query needs to know of the reader.
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
        Wanted::refs(regions.iter().map(|(tid, _)| tid))
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

/// The records of a query ([`Reader::query`]), read in place ([`Query::next_record_ref`]) or as
/// owned records (the [`Iterator`]; an error ends the iteration after it is returned).
///
/// # Examples
///
/// ```no_run
/// use bam::{OpenOptions, Reader, Target};
/// let mut reader = Reader::open("x.bam", &OpenOptions::default())?;
/// reader.select_index(None)?;
/// let tid = reader.header().tid("chr1").expect("chr1 is in the header");
/// let target = Target::Ref { tid, beg: 10_000, end: 20_000 };
/// for record in reader.query(target)? {
///     println!("{}", record?.pos());
/// }
/// # Ok::<(), bam::Error>(())
/// ```
pub struct Query<'r> {
    reader: &'r mut Reader,
    plan: Plan,
    walk: Walk,
    keep: Option<Keep<'r>>,
    failed: bool,
}

impl Reader {
    /// Starts a query. For anything but [`Regions::File`] the index must have been found
    /// ([`Reader::select_index`] or [`Reader::load_index`]); the references the regions name
    /// are loaded here. The regions are planned as one query, the byte source told the spans
    /// (a remote file fetches them ahead), and cached parts of the file are shown current
    /// ([`Reader::confirm`]) before this returns.
    pub fn query(&mut self, regions: impl Into<Regions>) -> Result<Query<'_>> {
        let start = match regions.into() {
            Regions::File => Start {
                plan: Plan::default(),
                walk: Walk::File,
                advice: Advice::None,
                past_end: None,
            },
            Regions::Targets(targets) => {
                let (wanted, regions) = targets::needs(&targets);
                let (cx, plan) = self.prepare(&wanted, regions)?;
                targets::start(targets, plan, &cx)
            }
            Regions::Multi(set) => {
                let (cx, _) = self.prepare(&needs(&set), Vec::new())?;
                itr_multi::start(&set, &cx)?
            }
            Regions::Overlapping(set) => {
                let regions = overlap::regions_of(&set);
                let (cx, plan) = self.prepare(&needs(&set), regions.clone())?;
                overlap::start(set, plan, &regions, &cx)
            }
        };
        if let Some((offset, size)) = start.past_end {
            // The size may be a cached one, an older file's: a stale entry is the answer then.
            self.confirm()?;
            return Err(Error::IndexPastEnd {
                name: self.location().to_string(),
                offset,
                size,
            });
        }
        match start.advice {
            Advice::ReadOrder => self.bgzf_mut().advise(&start.plan.read_order()),
            Advice::FileOrder => self.bgzf_mut().advise(&start.plan.file_order()),
            Advice::None => {}
        }
        // With the spans on their way, show that cached parts of the file are current.
        self.confirm()?;
        Ok(Query {
            reader: self,
            plan: start.plan,
            walk: start.walk,
            keep: None,
            failed: false,
        })
    }

    /// The records of the whole file from where the reader stands (the first record, after
    /// opening): [`Reader::query`] of [`Regions::File`].
    pub fn records(&mut self) -> Result<Query<'_>> {
        self.query(Regions::File)
    }

    /// Loads the references in `wanted`, and plans `regions` (in the query's order) once:
    /// the plan of those on references loaded while a remote index arrives is made as each
    /// arrives ([`Planner`]), the rest's then. Also what planning needs of the reader.
    fn prepare(&mut self, wanted: &Wanted, regions: Vec<Region>) -> Result<(Context<'_>, Plan)> {
        let mut planner = Planner::new(regions);
        self.ensure_index_for(wanted, &mut planner)?;
        // A server that does not tell the size (htslib never asks it) leaves the spans bounded
        // by the index alone and the past-the-end check undone.
        let size = self.known_size()?.unwrap_or(u64::MAX);
        let cx = Context {
            index: self.loaded_index()?,
            starts: self.block_starts(),
            size,
            options: self.plan_options(),
            fetch: self.fetch_plan(),
            first_record: self.first_record(),
            location: self.location(),
        };
        let plan = match cx.fetch {
            FetchPlan::Planned => planner.finish(cx.index, cx.starts, size, &cx.options),
            FetchPlan::PerChunk => plan::per_chunk(cx.index, planner.regions(), cx.starts, size),
        };
        Ok((cx, plan))
    }
}

impl<'r> Query<'r> {
    /// Hands out only the records `keep` accepts (samtools' `-P` keeps the records of its
    /// regions and their mates from a wider query).
    pub fn retain(mut self, keep: impl FnMut(&RecordRef<'_>) -> bool + 'r) -> Query<'r> {
        self.keep = Some(Box::new(keep));
        self
    }

    /// The reader being queried: its header, location and last record read.
    pub fn reader(&self) -> &Reader {
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

    /// [`Reader::has_eof_marker`] of the file being queried.
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
                Walk::Targets(walk) => walk.advance(self.reader, &self.plan)?,
                Walk::Multi(walk) => walk.advance(self.reader, &self.plan)?,
                Walk::Overlapping(walk) => walk.advance(self.reader)?,
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
    /// as far as the count needs ([`Reader`]'s quick check: a record that passes it is stepped
    /// over undecoded, where it lies taken from its fixed fields and CIGAR); with one, each is
    /// read in full.
    pub fn count_records(&mut self) -> Result<u64> {
        use crate::count_check::Counted;
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
                Walk::Targets(walk) => u64::from(walk.advance_by::<Counted>(reader, plan)?),
                Walk::Multi(walk) => u64::from(walk.advance_by::<Counted>(reader, plan)?),
                Walk::Overlapping(walk) => u64::from(walk.advance_by::<Counted>(reader)?),
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

impl Iterator for Query<'_> {
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
