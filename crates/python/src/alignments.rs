//! The seam between the package and the alignment readers: open a path or URL, give its
//! header, run a query handing each record to a callback. Everything above (the Python
//! classes, batches, Arrow) goes through [`Alignments`] and [`Shared`] only, so that when the
//! `hts` facade lands (BAM and CRAM by content, one options type, a shared client) the change
//! is here: `bam::Reader` becomes `hts::alignment::Reader`, and CRAM stops being refused.

use std::sync::Arc;

use ::region::Region as Target;
use bam::{Header, RecordError, RecordRef, Regions};

use crate::lending::Lender;
use crate::Error;

/// How files are opened: pysam's arguments and the transport's.
#[derive(Clone, Default)]
pub struct Options {
    /// The index (pysam's `index_filename`); else the names htslib tries beside the file.
    pub index: Option<String>,
    /// A FASTA for CRAM (pysam's `reference_filename`); not used by BAM.
    pub reference: Option<String>,
    /// Threads inflating BGZF blocks besides the reading one (pysam's `threads`).
    pub threads: usize,
    /// Request headers, S3 endpoint, fetchers, retries and the rest, for remote files.
    pub transport: hfile::OpenOptions,
    /// Keep remote headers and index prefixes in the persistent cache (`$XDG_CACHE_HOME/hts`),
    /// as the command line does; off with `cache=False` or `HTS_CACHE=off`.
    pub cache: bool,
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
/// when it prints the record) ends the query with an error naming the file and the record's
/// virtual offset.
pub type Each<'a> = dyn FnMut(&Arc<Header>, &RecordRef<'_>) -> Result<bool, RecordError> + 'a;

/// One open alignment file.
pub struct Alignments {
    location: String,
    options: Options,
    reader: bam::Reader,
    header: Arc<Header>,
    /// The index has been looked for (once, at the first region query).
    index_selected: bool,
    /// Records have been read: a whole-file read must start from a fresh reader.
    used: bool,
    /// Threads inflating besides the reading one.
    threads: usize,
}

impl Alignments {
    /// Opens `location` (a path, `https://`, pre-signed, `s3://` or `gs://` URL, optionally
    /// `FILE##idx##INDEX`) and reads its header.
    pub fn open(location: &str, options: &Options) -> Result<Alignments, Error> {
        let reader = open_reader(location, options, options.cache)?;
        let header = Arc::new(reader.header().clone());
        Ok(Alignments {
            location: location.to_string(),
            options: options.clone(),
            reader,
            header,
            index_selected: false,
            used: false,
            threads: options.threads,
        })
    }

    /// The header.
    pub fn header(&self) -> &Arc<Header> {
        &self.header
    }

    /// Inflates on at least `threads` threads besides the reading one from now on.
    pub fn use_threads(&mut self, threads: usize) {
        if threads > self.threads {
            self.reader.set_threads(threads);
            self.threads = threads;
        }
    }

    /// The file's location as messages show it (a URL without its query string).
    pub fn display_name(&self) -> &str {
        self.reader.location()
    }

    /// Reads the records of `scope`, handing each (with the header it is read with) to `each`
    /// until it returns `false`.
    ///
    /// A header or index taken from the persistent cache is shown current before the first
    /// record; if it turns out stale, the file is opened again without the cache and the query
    /// starts over (nothing was handed out yet), as the command line does.
    pub fn run(&mut self, scope: &Scope, each: &mut Each<'_>) -> Result<(), Error> {
        match self.try_run(scope, each) {
            Err(Failure::Stale) => {
                self.reopen(false)?;
                self.try_run(scope, each).map_err(Failure::into_error)
            }
            other => other.map_err(Failure::into_error),
        }
    }

    fn try_run(&mut self, scope: &Scope, each: &mut Each<'_>) -> Result<(), Failure> {
        let regions = match scope {
            Scope::File => {
                if self.used {
                    // Regions::File reads on from where the reader stands.
                    self.reopen(self.options.cache)?;
                }
                Regions::File
            }
            Scope::Targets(targets) => {
                if !self.index_selected {
                    self.reader.select_index(self.options.index.as_deref())?;
                    self.index_selected = true;
                }
                Regions::Targets(targets.clone())
            }
        };
        self.used = true;
        let header = Arc::clone(&self.header);
        let mut query = self.reader.query(regions)?;
        loop {
            let verdict = match query.next_record_ref()? {
                Some(record) => each(&header, &record),
                None => return Ok(()),
            };
            match verdict {
                Ok(true) => {}
                Ok(false) => return Ok(()),
                // The record is dropped: the reader can say where it was.
                Err(kind) => {
                    return Err(Failure::Error(
                        bam::Error::Record {
                            name: query.reader().location().to_string(),
                            offset: query.reader().last_record_offset(),
                            kind,
                        }
                        .into(),
                    ))
                }
            }
        }
    }

    fn reopen(&mut self, cache: bool) -> Result<(), Error> {
        self.reader = open_reader(&self.location, &self.options, cache)?;
        self.header = Arc::new(self.reader.header().clone());
        self.index_selected = false;
        self.used = false;
        let threads = std::mem::replace(&mut self.threads, self.options.threads);
        self.use_threads(threads);
        Ok(())
    }
}

/// Why a query stopped: a stale cache entry (read again without it) or an error.
enum Failure {
    Stale,
    Error(Error),
}

impl Failure {
    fn into_error(self) -> Error {
        match self {
            Failure::Stale => Error::Read("the cached header or index went stale twice".into()),
            Failure::Error(e) => e,
        }
    }
}

impl From<bam::Error> for Failure {
    fn from(e: bam::Error) -> Failure {
        if e.is_changed() {
            Failure::Stale
        } else {
            Failure::Error(e.into())
        }
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        Failure::Error(e)
    }
}

fn open_reader(location: &str, options: &Options, cache: bool) -> Result<bam::Reader, Error> {
    let hint = match &options.index {
        Some(at) => bam::IndexHint::At(at.clone()),
        None => bam::IndexHint::Auto,
    };
    let bam_options = bam::OpenOptions {
        transport: options.transport.clone(),
        threads: options.threads,
        index: hint,
        no_cache: !cache,
        ..Default::default()
    };
    match bam::Reader::open(location, &bam_options) {
        Ok(reader) => Ok(reader),
        Err(bam::Error::NotBam { name, format }) if format.starts_with("CRAM") => {
            Err(Error::Unsupported(format!(
                "{name}: CRAM is not read by this build of the Python package yet (BAM only \
                 until the hts facade lands)"
            )))
        }
        Err(e) => Err(e.into()),
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
