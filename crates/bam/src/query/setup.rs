//! The one set-up path of every query, for both readers: what the regions need of the index, the
//! plan of them, the walk along it, the byte source told the spans. A [`RecordReader`] plans
//! with the index its caller passes in; the facade [`Reader`] first loads what the regions need
//! of its own index (planning the regions of each reference a remote index delivers as it
//! arrives) and shows cached parts current before handing out the query.

use bgzf::Source;
use index::plan::{self, Plan, Region};
use index::{Index, Wanted};

use super::{
    itr_multi, needs, overlap, targets, Advice, Context, FetchPlan, Planner, Query, Regions, Start,
    Walk,
};
use crate::reader::Reader;
use crate::record_reader::RecordReader;
use crate::{Error, Result};

impl Regions {
    /// The index's references a query of these needs and the regions it plans (in the query's
    /// order); `None` for the whole file, which needs no index.
    fn needs(&self) -> Option<(Wanted, Vec<Region>)> {
        match self {
            Regions::File => None,
            Regions::Targets(targets) => Some(targets::needs(targets)),
            Regions::Multi(set) => Some((needs(set), Vec::new())),
            Regions::Overlapping(set) => Some((needs(set), overlap::regions_of(set))),
        }
    }
}

impl Start {
    /// The whole file in order from where the reader stands: no plan, no advice.
    fn file() -> Start {
        Start {
            plan: Plan::default(),
            walk: Walk::File,
            advice: Advice::None,
            past_end: None,
        }
    }

    /// The plan of `planner`'s regions (those not planned yet while the index arrived) and the
    /// walk of `regions` along it.
    fn of(regions: Regions, planner: Planner, cx: &Context<'_>) -> Result<Start> {
        let listed = match regions {
            Regions::Overlapping(_) => planner.regions().to_vec(),
            _ => Vec::new(),
        };
        let plan = match cx.fetch {
            FetchPlan::Planned => planner.finish(cx.index, cx.starts, cx.size, &cx.options),
            FetchPlan::PerChunk => plan::per_chunk(cx.index, planner.regions(), cx.starts, cx.size),
        };
        Ok(match regions {
            Regions::File => Start::file(),
            Regions::Targets(targets) => targets::start(targets, plan, cx),
            Regions::Multi(set) => itr_multi::start(&set, cx)?,
            Regions::Overlapping(set) => overlap::start(set, plan, &listed, cx),
        })
    }

    /// A chunk at or past the end of the file: the index does not fit it.
    fn past_end_error(&self, location: &str) -> Option<Error> {
        self.past_end.map(|(offset, size)| Error::IndexPastEnd {
            name: location.to_string(),
            offset,
            size,
        })
    }

    /// Tells the byte source the plan's spans, in the order the walk reads them.
    fn advise<S: Source>(&self, bgzf: &mut bgzf::Reader<S>) {
        match self.advice {
            Advice::ReadOrder => bgzf.advise(&self.plan.read_order()),
            Advice::FileOrder => bgzf.advise(&self.plan.file_order()),
            Advice::None => {}
        }
    }
}

impl<S: Source> RecordReader<S> {
    /// Starts a query through `index` (loaded by the caller, e.g. with [`index::read`]; it must
    /// hold the references the regions name, or [`Error::Index`]); [`Regions::File`] needs
    /// none. The regions are planned as one query, and the byte source is told the spans in the
    /// order they will be read (a remote [`hfile::HFile`] fetches them ahead).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use bam::{RecordReader, Regions};
    /// use region::parse_region;
    /// let index = index::read("x.bam.bai")?;
    /// let mut reader = RecordReader::new(std::fs::File::open("x.bam")?)?;
    /// let header = reader.header();
    /// let targets = vec![parse_region("chr1:1-1000", header)?, parse_region("*", header)?];
    /// let count = reader.query(&index, Regions::Targets(targets))?.count_records()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn query(&mut self, index: &Index, regions: impl Into<Regions>) -> Result<Query<'_, S>> {
        let regions = regions.into();
        let start = match regions.needs() {
            None => Start::file(),
            Some((wanted, planned)) => {
                index.require(&wanted).map_err(|source| Error::Index {
                    name: self.location().to_string(),
                    source,
                })?;
                // Unknown (`u64::MAX`): the spans bounded by the index alone.
                let size = self.known_size()?.unwrap_or(u64::MAX);
                let cx = Context {
                    index,
                    starts: &[],
                    size,
                    options: plan::Options::default(),
                    fetch: FetchPlan::Planned,
                    first_record: self.first_record(),
                    location: self.location(),
                };
                Start::of(regions, Planner::new(planned), &cx)?
            }
        };
        if let Some(error) = start.past_end_error(self.location()) {
            return Err(error);
        }
        start.advise(self.bgzf_mut());
        Ok(Query::new(self, start))
    }

    /// The records of the whole file from where the reader stands (the first record, after
    /// the header): [`RecordReader::query`] of [`Regions::File`], which needs no index.
    pub fn records(&mut self) -> Query<'_, S> {
        Query::new(self, Start::file())
    }
}

/// A query planned by [`Reader::prepare`], its spans on their way: [`Reader::query_prepared`]
/// reads it.
pub struct Prepared(Start);

impl Reader {
    /// Starts a query. For anything but [`Regions::File`] the index must have been found
    /// ([`Reader::select_index`] or [`Reader::load_index`]); the references the regions name
    /// are loaded here. The regions are planned as one query, the byte source told the spans
    /// (a remote file fetches them ahead), and cached parts of the file are shown current
    /// ([`Reader::confirm`]) before this returns.
    pub fn query(&mut self, regions: impl Into<Regions>) -> Result<Query<'_>> {
        let prepared = self.prepare(regions)?;
        self.query_prepared(prepared)
    }

    /// The first half of [`Reader::query`]: the regions planned and the spans on their way,
    /// the cached parts not yet shown current. For a caller that handles a stale cache itself
    /// ([`Reader::confirm`], then [`Reader::query_prepared`]) without holding a query.
    pub fn prepare(&mut self, regions: impl Into<Regions>) -> Result<Prepared> {
        let regions = regions.into();
        let start = match regions.needs() {
            None => Start::file(),
            Some((wanted, planned)) => {
                let mut planner = Planner::new(planned);
                self.ensure_index_for(&wanted, &mut planner)?;
                // A server that does not tell the size (htslib never asks it) leaves the spans
                // bounded by the index alone and the past-the-end check undone.
                let size = self.known_size()?.unwrap_or(u64::MAX);
                let cx = Context {
                    index: self.loaded_index()?,
                    starts: self.block_starts(),
                    size,
                    options: self.plan_options(),
                    fetch: self.fetch_plan(),
                    first_record: self.record_reader().first_record(),
                    location: self.location(),
                };
                Start::of(regions, planner, &cx)?
            }
        };
        if let Some(error) = start.past_end_error(self.location()) {
            // The size may be a cached one, an older file's: a stale entry is the answer then.
            self.confirm()?;
            return Err(error);
        }
        start.advise(self.record_reader_mut().bgzf_mut());
        Ok(Prepared(start))
    }

    /// The second half of [`Reader::query`]: with the spans on their way, the cached parts
    /// of the file shown current, then the query.
    pub fn query_prepared(&mut self, prepared: Prepared) -> Result<Query<'_>> {
        self.confirm()?;
        Ok(Query::new(self.record_reader_mut(), prepared.0))
    }

    /// The records of the whole file from where the reader stands (the first record, after
    /// opening): [`Reader::query`] of [`Regions::File`].
    pub fn records(&mut self) -> Result<Query<'_>> {
        self.query(Regions::File)
    }
}
