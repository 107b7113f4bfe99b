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
    /// The records overlapping the set, as far as the index tells (a CRAM: every record).
    Overlapping(&'a RegionSet),
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
        let queries = options.index_ahead.unwrap_or(!options.without_bases);
        let mut parts = RemoteParts::start(file, index, queries, no_cache, transport);
        let reference = options.reference.as_deref();
        // A failure before the cached parts were shown current may come of their being stale.
        let mut reader = match crate::cram_open::open(file, reference, transport, &mut parts) {
            Ok(reader) => reader,
            Err(e) => return Err(parts.stale().unwrap_or(e)),
        };
        reader.set_threads(options.threads);
        if options.without_bases {
            reader.without_bases();
        }
        if let Some(on) = options.decode_md {
            reader.set_decode_md(on);
        }
        if let Some(on) = options.ignore_md5 {
            reader.set_ignore_md5(on);
        }
        let header = match bam_header(reader.header()) {
            Ok(header) => header,
            Err(e) => return Err(parts.stale().unwrap_or_else(|| Error::cram(file, e))),
        };
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

    /// The CRAM reader.
    pub(crate) fn reader(&self) -> &cram::Reader {
        &self.reader
    }

    /// Reads the index now, as a query would.
    pub(crate) fn load_index(&mut self) -> Result<(), Error> {
        match self.read_entries() {
            Err(e) => Err(self.parts.stale().unwrap_or(e)),
            ok => ok,
        }
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
            Asked::File | Asked::Overlapping(_) => Ok(Planned {
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
            laid: None,
            failed: None,
            scratch: Vec::new(),
            slice: 0,
            keep: None,
            ended: false,
        }
    }
}

/// What [`CramRecords::retain`] keeps.
type Keep<'r> = Box<dyn FnMut(&bam::RecordRef<'_>) -> bool + 'r>;

/// A CRAM's records for a query, as BAM records: laid out where they are made whole (on the
/// decoding workers with threads), a container's worth at a time, each handed out in turn
/// where it lies (no copy for a record read in place).
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
    /// The container being handed out: its records, the byte of the next one, its number.
    laid: Option<Box<(cram::reader::LaidOut, usize, usize)>>,
    /// The error that ended the last container's records, due after them.
    failed: Option<Box<Error>>,
    /// Where a long-CIGAR record is rewritten (its CIGAR restored from its `CG` tag).
    scratch: Vec<u8>,
    /// The slice of the record read last.
    slice: u64,
    keep: Option<Keep<'r>>,
    /// Whether every pass has been read to its end.
    ended: bool,
}

impl<'r> CramRecords<'r> {
    /// Hands out only the records `keep` accepts.
    pub(crate) fn retain(mut self, keep: Keep<'r>) -> CramRecords<'r> {
        self.keep = Some(keep);
        self
    }

    /// The next record, as BAM lays it out, owned.
    pub(crate) fn next_record(&mut self) -> Result<Option<Record>, Error> {
        Ok(self.next_record_ref()?.map(|r| r.to_owned_record()))
    }

    /// The next record, read in place in its container's laid-out records (valid until the
    /// next call).
    pub(crate) fn next_record_ref(&mut self) -> Result<Option<bam::RecordRef<'_>>, Error> {
        let judged = self.filter.is_some() || self.keep.is_some();
        let at = loop {
            let Some(at) = self.next_position()? else {
                return Ok(None);
            };
            if !judged || self.kept(at)? {
                break at;
            }
        };
        self.decode(at)
    }

    /// Whether the multi-region walk and `keep` take the record at byte `at`: judged on a
    /// decoding dropped before the record is decoded again to be handed out (only for the
    /// multi-region walk and `-P`'s second pass; the decoding is the layout's checks, no copy).
    fn kept(&mut self, at: usize) -> Result<bool, Error> {
        let (mut filter, mut keep) = (self.filter.take(), self.keep.take());
        let judged = self.decode(at).map(|r| {
            r.is_some_and(|r| {
                let placed = filter
                    .as_mut()
                    .is_none_or(|f| crate::cram_multi::keeps_record(f, &r));
                placed && keep.as_mut().is_none_or(|k| k(&r))
            })
        });
        (self.filter, self.keep) = (filter, keep);
        judged
    }

    /// The record at byte `at` of the container being handed out, decoded in place; an error
    /// names its slice.
    fn decode(&mut self, at: usize) -> Result<Option<bam::RecordRef<'_>>, Error> {
        let Some(held) = self.laid.as_deref() else {
            return Ok(None);
        };
        let bytes = held.0.record_at(at).map_or(&[][..], |(bytes, _)| bytes);
        let slice = self.slice;
        match Record::decode_in(bytes, self.n_ref, &mut self.scratch) {
            Ok(r) => Ok(Some(r)),
            Err(e) => {
                let at = format!("a record of the slice at byte {slice}: {e}");
                Err(Error::cram_at(self.file, slice, at))
            }
        }
    }

    /// Moves on to the next record of the passes: the byte of the container's laid-out
    /// records it starts at (the container held in `laid`, the slice in `slice`); `None` at
    /// the end.
    fn next_position(&mut self) -> Result<Option<usize>, Error> {
        loop {
            if let Some(held) = &mut self.laid {
                let (laid, at, i) = &mut **held;
                if let Some((_, next)) = laid.record_at(*at) {
                    let this = *at;
                    self.slice = laid.slice_of(*i);
                    (*at, *i) = (next, *i + 1);
                    return Ok(Some(this));
                }
                if let Some(held) = self.laid.take() {
                    let (laid, _, _) = *held;
                    self.failed = laid.error().map(|e| Box::new(Error::cram(self.file, e)));
                    self.reader.recycle_laid(laid);
                }
            }
            if let Some(e) = self.failed.take() {
                return Err(*e);
            }
            let Some(pass) = self.passes.front() else {
                self.ended = true;
                return Ok(None);
            };
            if !self.started {
                pass.start(self.reader);
                self.started = true;
            }
            match self.reader.next_laid_out() {
                Ok(Some(laid)) => self.laid = Some(Box::new((laid, 0, 0))),
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

    /// Whether the file ended with its EOF container, once the records are read to the end.
    pub(crate) fn eof_marker(&self) -> Option<bool> {
        self.ended.then(|| !self.reader.ended_without_eof_marker())
    }

    /// The error for a fault found in the record just read, named by its slice.
    pub(crate) fn record_error(&self, kind: bam::RecordError) -> Error {
        let slice = self.slice;
        let at = format!("a record of the slice at byte {slice}: {kind}");
        Error::cram_at(self.file, slice, at)
    }
}
