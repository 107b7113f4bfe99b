//! The CRAM side of [`crate::alignment::Reader`]: a CRAM opened through the cache, its
//! regions planned from the `.crai`, and its records laid out as BAM records, pass after pass.

use std::collections::VecDeque;

use bam::Record;
use cram::crai::CraiEntry;
use region::Region;

use crate::cram_cache::RemoteParts;
use crate::cram_layout::{bam_header, to_bam_in};
use crate::cram_regions::{self, Pass, Planning};
use crate::{Error, Options};

/// An open CRAM: the reader, its header as BAM's, its cached parts, and its index once read.
pub(crate) struct CramFile {
    file: String,
    index: Option<String>,
    reader: cram::Reader,
    header: bam::Header,
    parts: RemoteParts,
    /// The index's name and lines, read at the first query.
    entries: Option<(String, Vec<CraiEntry>)>,
    /// The passes of the query being set up, planned and confirmed.
    pub(crate) planned: Option<Vec<Pass>>,
}

impl CramFile {
    /// Opens `file` (`index`: the `.crai` to use instead of the one htslib would find).
    pub(crate) fn open(
        file: &str,
        index: Option<&str>,
        options: &Options,
        no_cache: bool,
    ) -> Result<CramFile, Error> {
        let transport = &options.transport;
        let mut parts = RemoteParts::start(file, index, true, no_cache, transport);
        let mut reader =
            crate::cram_open::open(file, options.reference.as_deref(), transport, &mut parts)?;
        reader.set_threads(options.threads);
        let header = bam_header(reader.header()).map_err(|e| Error::cram(file, e))?;
        Ok(CramFile {
            file: file.to_string(),
            index: index.map(str::to_string),
            reader,
            header,
            parts,
            entries: None,
            planned: None,
        })
    }

    /// The header, as BAM's.
    pub(crate) fn header(&self) -> &bam::Header {
        &self.header
    }

    /// The passes for `regions` (every record for none), announced to the reader; the cached
    /// parts they were planned with shown current (a stale one: an error that
    /// [`Error::is_stale`]).
    pub(crate) fn plan(&mut self, regions: Option<&[Region]>) -> Result<Vec<Pass>, Error> {
        let Some(regions) = regions else {
            self.parts.confirm()?;
            return Ok(vec![Pass::Whole]);
        };
        let planned = self.plan_regions(regions);
        // A failure before the cached parts were shown current may come of their being stale.
        let passes = match planned {
            Ok(passes) => passes,
            Err(e) => return Err(self.parts.stale().unwrap_or(e)),
        };
        self.parts.confirm()?;
        Ok(passes)
    }

    fn plan_regions(&mut self, regions: &[Region]) -> Result<Vec<Pass>, Error> {
        if self.entries.is_none() {
            let parts = &mut self.parts;
            let mut read = |name: &str| parts.read_index(name);
            let read = cram_regions::read_index(&self.file, self.index.as_deref(), &mut read)?;
            self.entries = Some(read);
        }
        let (crai_name, entries) = self.entries.as_ref().map_or(("", &[][..]), |(n, e)| (n, e));
        let at = Planning {
            file: &self.file,
            crai_name,
            entries,
            file_len: self.reader.file_len(),
            data_end: self.reader.data_end(),
        };
        let mut passes = Vec::new();
        for region in regions {
            passes.extend(at.pass(region)?);
        }
        cram_regions::announce(&mut self.reader, &self.file, &passes, entries);
        Ok(passes)
    }

    /// The records of `passes`, in turn.
    pub(crate) fn records(&mut self, passes: Vec<Pass>) -> CramRecords<'_> {
        // Ranges are read as one: their containers are decoded ahead across them.
        let passes = match cram_regions::joined(&passes) {
            Some(joined) => vec![joined],
            None => passes,
        };
        CramRecords {
            file: &self.file,
            n_ref: self.header.refs().len(),
            reader: &mut self.reader,
            passes: passes.into(),
            started: false,
            held: VecDeque::new(),
            spare: Vec::new(),
        }
    }
}

/// A CRAM's records for a query, as BAM records.
pub(crate) struct CramRecords<'r> {
    file: &'r str,
    n_ref: usize,
    reader: &'r mut cram::Reader,
    /// The passes not yet finished; the first is being read once `started`.
    passes: VecDeque<Pass>,
    started: bool,
    /// The records of the container being read, not yet returned.
    held: VecDeque<cram::Alignment>,
    /// A returned record's bytes, reused by the next one's layout.
    spare: Vec<u8>,
}

impl CramRecords<'_> {
    /// The next record, as BAM lays it out.
    pub(crate) fn next_record(&mut self) -> Result<Option<Record>, Error> {
        loop {
            if let Some(a) = self.held.pop_front() {
                let buf = std::mem::take(&mut self.spare);
                return to_bam_in(&a, self.n_ref, buf).map(Some).map_err(|e| {
                    let at = format!("a record of the slice at byte {}: {e}", a.slice);
                    Error::cram_at(self.file, a.slice, at)
                });
            }
            let Some(pass) = self.passes.front() else {
                return Ok(None);
            };
            if !self.started {
                pass.start(self.reader);
                self.started = true;
            }
            match self.reader.next_container() {
                Ok(Some(records)) => self.held.extend(records),
                Ok(None) => {
                    self.passes.pop_front();
                    self.started = false;
                }
                Err(e) => return Err(Error::cram(self.file, e)),
            }
        }
    }

    /// Gives a record's bytes back for the next record's layout.
    pub(crate) fn recycle(&mut self, record: Record) {
        self.spare = record.into_data();
    }
}
