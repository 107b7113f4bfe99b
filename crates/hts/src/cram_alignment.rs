//! The CRAM side of [`crate::alignment::Reader`]: a CRAM opened through the cache, its
//! regions planned from the `.crai`, and its records laid out as BAM records, pass after pass.

use std::collections::VecDeque;

use bam::Record;
use cram::crai::CraiEntry;
use cram::multi::Filter;
use cram::pass::{self, Pass};
use region::{Region, RegionSet};

use crate::cram_cache::RemoteParts;
use crate::cram_layout::{bam_header, lay_out};
use crate::cram_regions::{self, Planning};
use crate::{Error, Options};

/// What a query reads.
#[derive(Clone, Copy)]
pub(crate) enum Asked<'a> {
    /// Every record, in file order.
    File,
    /// Each region in turn.
    Targets(&'a [Region]),
    /// htslib's multi-region iterator over the set.
    Multi(&'a RegionSet),
}

/// A query planned and its cached parts shown current: its passes, and for the multi-region
/// iterator the walk that judges their records.
pub(crate) struct Planned {
    passes: Vec<Pass>,
    filter: Option<Filter>,
}

/// An open CRAM: the reader, its header as BAM's, its cached parts, and its index once read.
pub(crate) struct CramFile {
    file: String,
    index: Option<String>,
    reader: cram::Reader,
    header: bam::Header,
    parts: RemoteParts,
    /// The index's name and lines, read at the first query.
    entries: Option<(String, Vec<CraiEntry>)>,
    /// The query being set up, planned and confirmed.
    pub(crate) planned: Option<Planned>,
    /// Whether the reader lays its records out as BAM (set at the first query).
    laid: bool,
}

impl CramFile {
    /// Opens `file` (`index`: the `.crai` to use instead of the one htslib would find).
    pub(crate) fn open(
        file: &str,
        index: Option<&str>,
        options: &Options,
        no_cache: bool,
    ) -> Result<CramFile, Error> {
        let transport = &options.transport_for_cram();
        // A reader without bases is for counting whole files (samtools' flagstat, idxstats):
        // no `.crai` asked for ahead (a query still reads it, when it comes).
        let queries = !options.without_bases;
        let mut parts = RemoteParts::start(file, index, queries, no_cache, transport);
        let mut reader =
            crate::cram_open::open(file, options.reference.as_deref(), transport, &mut parts)?;
        reader.set_threads(options.threads);
        if options.without_bases {
            reader.without_bases();
        }
        let header = bam_header(reader.header()).map_err(|e| Error::cram(file, e))?;
        Ok(CramFile {
            file: file.to_string(),
            index: index.map(str::to_string),
            reader,
            header,
            parts,
            entries: None,
            planned: None,
            laid: false,
        })
    }

    /// Decodes on `threads` threads besides the reading one from the next query on.
    pub(crate) fn set_threads(&mut self, threads: usize) {
        self.reader.set_threads(threads);
    }

    /// Whether the file is read from a URL.
    fn remote(&self) -> bool {
        hfile::scheme_of(&self.file).is_some()
    }

    /// The header, as BAM's.
    pub(crate) fn header(&self) -> &bam::Header {
        &self.header
    }

    /// The passes for `regions` (every record for none), announced to the reader; the cached
    /// parts they were planned with shown current (a stale one: an error that
    /// [`Error::is_stale`]).
    pub(crate) fn plan(&mut self, asked: Asked) -> Result<Planned, Error> {
        let planned = match asked {
            Asked::File => Ok(Planned {
                passes: vec![Pass::Whole],
                filter: None,
            }),
            Asked::Targets(regions) => self.plan_regions(regions),
            Asked::Multi(set) => self.plan_multi(set),
        };
        // A failure before the cached parts were shown current may come of their being stale.
        let planned = match planned {
            Ok(planned) => planned,
            Err(e) => return Err(self.parts.stale().unwrap_or(e)),
        };
        self.parts.confirm()?;
        Ok(planned)
    }

    /// Reads the index's name and lines, once.
    fn read_entries(&mut self) -> Result<(), Error> {
        if self.entries.is_none() {
            let parts = &mut self.parts;
            let mut read = |name: &str| parts.read_index(name);
            let read = cram_regions::read_index(&self.file, self.index.as_deref(), &mut read)?;
            self.entries = Some(read);
        }
        Ok(())
    }

    fn plan_regions(&mut self, regions: &[Region]) -> Result<Planned, Error> {
        let (file_len, data_end) = (self.reader.file_len(), self.reader.data_end());
        self.read_entries()?;
        let (crai_name, entries) = self.entries.as_ref().map_or(("", &[][..]), |(n, e)| (n, e));
        let at = Planning {
            file: &self.file,
            crai_name,
            entries,
            file_len,
            data_end,
        };
        let mut passes = Vec::new();
        for region in regions {
            passes.extend(at.pass(region)?);
        }
        let remote = self.remote();
        pass::announce(&mut self.reader, remote, &passes, entries);
        Ok(Planned {
            passes,
            filter: None,
        })
    }

    /// htslib's multi-region iterator: every interval's containers, each read once in file
    /// order, a record kept while it overlaps an interval not yet passed.
    fn plan_multi(&mut self, set: &RegionSet) -> Result<Planned, Error> {
        let data_end = self.reader.data_end();
        self.read_entries()?;
        let entries = self.entries.as_ref().map_or(&[][..], |(_, e)| e);
        let multi =
            cram::multi::plan(entries, set, data_end).map_err(|e| Error::cram(&self.file, e))?;
        let pass = multi.containers.map_or(Pass::Whole, Pass::Planned);
        let passes = vec![pass];
        let remote = self.remote();
        pass::announce(&mut self.reader, remote, &passes, entries);
        Ok(Planned {
            passes,
            filter: Some(multi.filter),
        })
    }

    /// The records of a planned query, in turn.
    pub(crate) fn records(&mut self, planned: Planned) -> CramRecords<'_> {
        let Planned { passes, filter } = planned;
        // Ranges are read as one: their containers are decoded ahead across them.
        let passes = match pass::joined(&passes) {
            Some(joined) => vec![joined],
            None => passes,
        };
        if !self.laid {
            // Records are laid out as BAM where they are made whole (on the workers).
            self.reader.set_layout(std::sync::Arc::new(lay_out));
            self.laid = true;
        }
        CramRecords {
            file: &self.file,
            header: &self.header,
            n_ref: self.header.refs().len(),
            reader: &mut self.reader,
            passes: passes.into(),
            filter,
            started: false,
            ready: VecDeque::new(),
            pool: Vec::new(),
            held: None,
        }
    }
}

/// The most record buffers kept for reuse.
const POOL: usize = 1 << 14;

/// A CRAM's records for a query, as BAM records: laid out where they are made whole (on the
/// decoding workers with threads), a container's worth at a time.
pub(crate) struct CramRecords<'r> {
    file: &'r str,
    header: &'r bam::Header,
    n_ref: usize,
    reader: &'r mut cram::Reader,
    /// The passes not yet finished; the first is being read once `started`.
    passes: VecDeque<Pass>,
    /// The multi-region iterator's walk, judging each record.
    filter: Option<Filter>,
    started: bool,
    /// The records of the container being read, not yet returned, and its error after them.
    ready: VecDeque<Result<Record, Error>>,
    /// Records' bytes given back, for the next ones.
    pool: Vec<Vec<u8>>,
    /// The record [`CramRecords::next_record_ref`] lent last.
    held: Option<Record>,
}

impl CramRecords<'_> {
    /// The next record, as BAM lays it out.
    pub(crate) fn next_record(&mut self) -> Result<Option<Record>, Error> {
        loop {
            if let Some(next) = self.ready.pop_front() {
                let r = next?;
                if self
                    .filter
                    .as_mut()
                    .is_some_and(|f| !crate::cram_multi::keeps_record(f, &r))
                {
                    self.recycle(r);
                    continue;
                }
                return Ok(Some(r));
            }
            let Some(pass) = self.passes.front() else {
                return Ok(None);
            };
            if !self.started {
                pass.start(self.reader);
                self.started = true;
            }
            match self.reader.next_laid_out() {
                Ok(Some(laid)) => self.take(laid),
                Ok(None) => {
                    self.passes.pop_front();
                    self.started = false;
                }
                Err(e) => return Err(Error::cram(self.file, e)),
            }
        }
    }

    /// The header the records are read with.
    pub(crate) fn header(&self) -> &bam::Header {
        self.header
    }

    /// The next record, lent until the next call (its buffer then reused).
    pub(crate) fn next_record_ref(&mut self) -> Result<Option<bam::RecordRef<'_>>, Error> {
        if let Some(last) = self.held.take() {
            self.recycle(last);
        }
        self.held = self.next_record()?;
        Ok(self.held.as_ref().map(Record::as_record_ref))
    }

    /// The error for a fault found in the record just read.
    pub(crate) fn record_error(&self, kind: bam::RecordError) -> Error {
        let name = self.held.as_ref().map_or(&b""[..], Record::name);
        let name = String::from_utf8_lossy(name);
        Error::cram(self.file, format!("record {name}: {kind}"))
    }

    /// A container's records, each copied into a record buffer, then its error if any.
    fn take(&mut self, laid: cram::reader::LaidOut) {
        for (i, bytes) in laid.records().enumerate() {
            let mut buf = self.pool.pop().unwrap_or_default();
            buf.clear();
            buf.extend_from_slice(bytes);
            match Record::decode(buf, self.n_ref) {
                Ok(r) => self.ready.push_back(Ok(r)),
                Err(e) => {
                    let slice = laid.slice_of(i);
                    let at = format!("a record of the slice at byte {slice}: {e}");
                    self.ready
                        .push_back(Err(Error::cram_at(self.file, slice, at)));
                    break;
                }
            }
        }
        if let Some(e) = laid.error() {
            self.ready.push_back(Err(Error::cram(self.file, e)));
        }
        self.reader.recycle_laid(laid);
    }

    /// Gives a record's bytes back for a later record.
    pub(crate) fn recycle(&mut self, record: Record) {
        if self.pool.len() < POOL {
            self.pool.push(record.into_data());
        }
    }
}
