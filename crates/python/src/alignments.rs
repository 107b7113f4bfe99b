//! The seam between the package and the alignment readers: open a path or URL, give its
//! header, run a query handing each record to a callback. Everything above (the Python
//! classes, batches, Arrow) goes through [`Alignments`] and [`Shared`] only. Underneath is the
//! `hts` facade's reader: BAM or CRAM, told apart by content, one options type; a stale cached
//! header or index is dealt with there (the file opened again before the first record).

use std::sync::Arc;

use ::region::Region as Target;
use bam::{Header, RecordError, RecordRef};

use crate::lending::Lender;
use crate::Error;

/// How files are opened: pysam's arguments and the transport's.
#[derive(Clone, Default)]
pub struct Options {
    /// The index (pysam's `index_filename`); else the names htslib tries beside the file.
    pub index: Option<String>,
    /// A FASTA for CRAM, local or remote (pysam's `reference_filename`); without it a CRAM's
    /// references are found through `REF_PATH`/`REF_CACHE` as htslib finds them. Not used by
    /// BAM.
    pub reference: Option<String>,
    /// Threads decompressing and decoding besides the reading one (pysam's `threads`).
    pub threads: usize,
    /// Request headers, S3 endpoint, fetchers, retries and the rest, for remote files.
    pub transport: hfile::OpenOptions,
    /// Whether `transport` was set by the caller: if not, each format's default transport is
    /// used (a CRAM keeps more requests in flight than hfile's default).
    pub transport_given: bool,
    /// Keep remote headers and index prefixes in the persistent cache (`$XDG_CACHE_HOME/hts`),
    /// as the command line does; off with `cache=False` or `HTS_CACHE=off`.
    pub cache: bool,
}

impl Options {
    /// The facade's options for opening `location`.
    fn facade(&self, location: &str) -> hts::Options {
        // As pysam loads a BAM's index when it opens the file, a remote BAM's index is asked
        // for beside its header (its first piece only: a reference or so of a large BAI), so
        // that the first `fetch` does not wait a round trip for it. A CRAM's `.crai` is asked
        // for ahead by default. A local index is opened when a query needs it.
        let remote = hfile::scheme_of(location).is_some();
        let mut options = hts::Options::new()
            .threads(self.threads)
            .no_cache(!self.cache);
        if remote {
            options = options.index_ahead(true);
        }
        if let Some(index) = &self.index {
            options = options.index(index.clone());
        }
        if let Some(reference) = &self.reference {
            options = options.reference(reference.clone());
        }
        if self.transport_given {
            options = options.transport(self.transport.clone());
        }
        options
    }
}

/// What a query reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// Every record in file order, unmapped ones included (pysam's `until_eof=True`).
    File,
    /// Each target in turn, each its records in file order: what `samtools view FILE
    /// REGION...` prints for the same regions (pysam's `fetch`, one target a call).
    Targets(Vec<Target>),
}

/// What [`Alignments::run`] hands each record to: the header and the record, read in place.
/// `Ok(false)` stops the query; an error about the record (its aux data, as samtools finds it
/// when it prints the record) ends the query with an error naming the file and the record.
pub type Each<'a> = dyn FnMut(&Arc<Header>, &RecordRef<'_>) -> Result<bool, RecordError> + 'a;

/// One open alignment file, BAM or CRAM.
pub struct Alignments {
    reader: hts::alignment::Reader,
    header: Arc<Header>,
    display_name: String,
    /// Threads decompressing and decoding besides the reading one, as set so far.
    threads: usize,
}

impl Alignments {
    /// Opens `location` (a path, `https://`, pre-signed, `s3://` or `gs://` URL, optionally
    /// `FILE##idx##INDEX`) and reads its header; BAM or CRAM by its first bytes.
    pub fn open(location: &str, options: &Options) -> Result<Alignments, Error> {
        let reader = hts::alignment::Reader::open(location, &options.facade(location))?;
        Ok(Alignments {
            header: Arc::new(reader.header().clone()),
            display_name: reader.display_name(),
            reader,
            threads: options.threads,
        })
    }

    /// The header.
    pub fn header(&self) -> &Arc<Header> {
        &self.header
    }

    /// Whether the file is CRAM (else BAM).
    pub fn is_cram(&self) -> bool {
        self.reader.is_cram()
    }

    /// Decompresses and decodes on at least `threads` threads besides the reading one from
    /// now on.
    pub fn use_threads(&mut self, threads: usize) {
        // Never fewer: the reader goes back to the file for its next query.
        if threads > self.threads {
            self.reader.set_threads(threads);
            self.threads = threads;
        }
    }

    /// The file's location as messages show it (a URL without its query string).
    pub fn display_name(&self) -> &str {
        &self.display_name
    }

    /// Reads the records of `scope`, handing each (with the header it is read with) to `each`
    /// until it returns `false`.
    pub fn run(&mut self, scope: &Scope, each: &mut Each<'_>) -> Result<(), Error> {
        let mut records = match scope {
            Scope::File => self.reader.records()?,
            Scope::Targets(targets) => self.reader.query(targets)?,
        };
        if records.header().text() != self.header.text() {
            // A stale cached header: the reader opened the file again, its header is the one.
            self.header = Arc::new(records.header().clone());
        }
        let header = Arc::clone(&self.header);
        loop {
            let verdict = match records.next_record_ref()? {
                Some(record) => each(&header, &record),
                None => return Ok(()),
            };
            match verdict {
                Ok(true) => {}
                Ok(false) => return Ok(()),
                // The record is dropped: the query can say where it was.
                Err(kind) => return Err(records.record_error(kind).into()),
            }
        }
    }
}

/// A file as an `AlignmentFile` holds it: its header, and its readers lent to one query at a
/// time ([`Lender`]).
pub struct Shared {
    header: Arc<Header>,
    display_name: String,
    readers: Lender<Alignments>,
}

impl Shared {
    /// Opens the file (see [`Alignments::open`]).
    pub fn open(location: &str, options: &Options) -> Result<Shared, Error> {
        let first = Alignments::open(location, options)?;
        let (location, options) = (location.to_string(), options.clone());
        Ok(Shared {
            header: Arc::clone(first.header()),
            display_name: first.display_name().to_string(),
            readers: Lender::new(first, move || Alignments::open(&location, &options)),
        })
    }

    /// The header (of the file as first opened).
    pub fn header(&self) -> &Arc<Header> {
        &self.header
    }

    /// The location as messages show it.
    pub fn display_name(&self) -> &str {
        &self.display_name
    }

    /// The reader for a query (see [`Lender::lend`]).
    pub fn lend(&self) -> Result<Alignments, Error> {
        self.readers.lend()
    }

    /// Takes a reader back after its query.
    pub fn give_back(&self, reader: Alignments) {
        self.readers.give_back(reader)
    }

    /// Closes the file (see [`Lender::close`]).
    pub fn close(&self) {
        self.readers.close()
    }

    /// Whether the file was closed.
    pub fn is_closed(&self) -> bool {
        self.readers.is_closed()
    }
}
