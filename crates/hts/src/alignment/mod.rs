//! Alignment files: BAM or CRAM, told apart by their first bytes, read through one reader
//! whose queries answer BAM records for both (htslib's `sam_open` + `sam_itr_querys`,
//! noodles-util's `alignment::io::Reader`).

use region::{Region, RegionSet};

use crate::cram_alignment::{Asked, CramFile};
use crate::sniff::{self, Sniffed};
use crate::{Error, Options, Result};

mod records;

use records::Kind;
pub use records::Records;

/// An open BAM or CRAM file.
///
/// The header and index of a remote file may come from the persistent cache; before the first
/// record they are shown current, and when one turned out stale the reader opens the file
/// again without the cache by itself.
pub struct Reader {
    /// The data file, without a `##idx##` part.
    location: String,
    /// The index: the options', else the one `##idx##` names.
    index: Option<String>,
    options: Options,
    inner: Inner,
    /// A BAM query planned and confirmed, its spans on their way, for [`Reader::read`].
    prepared: Option<bam::Prepared>,
    /// Whether a query has read records: a BAM reader reads a whole file from where it stands,
    /// so it is opened again for one.
    used: bool,
    /// Whether the cache turned out stale: reopened without it since.
    no_cache: bool,
    /// Why, when it did (the stale part's error, as shown).
    stale: Option<String>,
}

enum Inner {
    Bam(Box<bam::Reader>),
    Cram(Box<CramFile>),
}

impl Reader {
    /// Opens `location` (a path, a URL hfile opens, or `-` for standard input) and reads its
    /// header. Whether it is BAM or CRAM is read from its first bytes, whatever its name. A
    /// URL whose path ends in `.cram` is opened as CRAM, and as BAM when the CRAM reader finds
    /// no CRAM magic; any other URL is opened as BAM, and as CRAM when the BAM reader finds
    /// CRAM's magic (either costs no request more than its reader's). A remote file's header
    /// may come from the persistent cache until the first query shows it current.
    pub fn open(location: &str, options: &Options) -> Result<Reader> {
        let split = hfile::split_index(location);
        let index = options
            .index
            .clone()
            .or_else(|| split.index.map(str::to_string));
        let file = split.file;
        let remote = hfile::scheme_of(file).is_some();
        let inner = if remote && !sniff::is_cram(file) {
            open_remote(location, file, index.as_deref(), options, false)?
        } else if remote {
            // A URL named as a CRAM is opened as one, and as BAM when the CRAM reader finds no
            // CRAM magic: no request more than the reader's own either way.
            match CramFile::open(file, index.as_deref(), options, options.no_cache) {
                Ok(cram) => Inner::Cram(Box::new(cram)),
                Err(Error::Format { .. }) => Inner::Bam(Box::new(bam::Reader::open(
                    location,
                    &bam_options(options, false),
                )?)),
                Err(e) => return Err(e),
            }
        } else {
            let (is_cram, opened) = match sniff::sniff(file) {
                Sniffed::Cram => (true, None),
                Sniffed::Other(opened) => (false, opened),
            };
            if is_cram {
                let cram = CramFile::open(file, index.as_deref(), options, options.no_cache)?;
                Inner::Cram(Box::new(cram))
            } else {
                let bam = match opened {
                    Some(f) => bam::Reader::open_file(location, f, &bam_options(options, false))?,
                    None => bam::Reader::open(location, &bam_options(options, false))?,
                };
                Inner::Bam(Box::new(bam))
            }
        };
        Ok(Reader {
            location: file.to_string(),
            index,
            options: options.clone(),
            inner,
            prepared: None,
            used: false,
            no_cache: false,
            stale: None,
        })
    }

    /// Warnings about the header: a BAM's (`@SQ` lines that disagree with its reference
    /// list), a CRAM's (`@SQ` lengths corrected from the reference), as samtools prints them.
    pub fn warnings(&self) -> Vec<String> {
        match &self.inner {
            Inner::Bam(r) => r
                .header()
                .warnings()
                .iter()
                .map(|w| w.to_string())
                .collect(),
            Inner::Cram(c) => crate::cram_open::length_warnings(c.reader()),
        }
    }

    /// Loads the index now, as a query would (`Options::index`, `##idx##`, else found beside
    /// the file): for a caller that reads the whole file when there is none.
    pub fn load_index(&mut self) -> Result<()> {
        match &mut self.inner {
            Inner::Bam(r) => Ok(r.select_index(self.index.as_deref())?),
            Inner::Cram(c) => c.load_index(),
        }
    }

    /// Whether the file is CRAM (else BAM).
    pub fn is_cram(&self) -> bool {
        matches!(self.inner, Inner::Cram(_))
    }

    /// Why the reader opened the file again without the cache since the last call, if it did:
    /// a part of a remote file that came from the cache turned out stale (the error that
    /// showed it). For a command that tells its user so; what is read since is the file's as
    /// it is now.
    pub fn take_reopened(&mut self) -> Option<String> {
        self.stale.take()
    }

    /// A BAM's index, loaded (the options' index, else found as htslib finds it) and shown
    /// current with the header, for what the index alone tells (samtools' idxstats: the counts
    /// of its pseudo-bins); a stale cached part: the file opened again without the cache
    /// ([`Reader::take_reopened`]). `None` for a CRAM: its `.crai` holds no counts. A reader
    /// that stands at its first record still does: [`Reader::records`] reads from there (a
    /// stream is read once).
    pub fn bam_index(&mut self) -> Result<Option<bam::Confirmed<'_>>> {
        match self.load_bam_index() {
            Err(e) if e.is_stale() => {
                self.stale = Some(e.to_string());
                self.reopen_without_cache()?;
                self.load_bam_index()?;
            }
            other => other?,
        }
        match &mut self.inner {
            Inner::Bam(r) => Ok(Some(r.confirm()?)),
            Inner::Cram(_) => Ok(None),
        }
    }

    fn load_bam_index(&mut self) -> Result<()> {
        if let Inner::Bam(r) = &mut self.inner {
            r.load_index(self.index.as_deref())?;
            r.confirm()?;
        }
        Ok(())
    }

    /// The file's path or URL as messages show it (a URL without its query string).
    pub fn display_name(&self) -> String {
        match &self.inner {
            Inner::Bam(r) => r.location().to_string(),
            Inner::Cram(_) => hfile::redact_text(&self.location),
        }
    }

    /// Decompresses and decodes on `threads` threads besides the reading one from the next
    /// query on (0 leaves the reader as it is): for a caller that chooses per query, as the
    /// Python package's bulk reads (`to_arrow`) do.
    pub fn set_threads(&mut self, threads: usize) {
        if threads == 0 || threads == self.options.threads {
            return;
        }
        self.options.threads = threads;
        match &mut self.inner {
            Inner::Bam(r) => r.set_threads(threads),
            Inner::Cram(c) => c.set_threads(threads),
        }
    }

    /// The header (a CRAM's as BAM's: its text and its `@SQ` references).
    pub fn header(&self) -> &bam::Header {
        match &self.inner {
            Inner::Bam(r) => r.header(),
            Inner::Cram(c) => c.header(),
        }
    }

    /// The records overlapping each region in turn, as `samtools view FILE REGION...` reads
    /// them (a record in two regions comes twice; `.` is every record, `*` the unplaced ones).
    /// Needs the file's index.
    pub fn query(&mut self, regions: &[Region]) -> Result<Records<'_>> {
        self.read(Asked::Targets(regions))
    }

    /// The records overlapping any region of `set`, each once, in file order: htslib's
    /// multi-region iterator (`samtools view -M`, `--region-file`). Needs the file's index.
    pub fn query_set(&mut self, set: &RegionSet) -> Result<Records<'_>> {
        self.read(Asked::Multi(set))
    }

    /// The records overlapping any region of `set`, each once, in file order, as samtools'
    /// `-L` without `-M` keeps them: a BAM's through its index; a CRAM's, all of them (the
    /// caller's BED filter then decides). A superset of what the BED keeps, never less.
    pub fn query_overlapping(&mut self, set: &RegionSet) -> Result<Records<'_>> {
        self.read(Asked::Overlapping(set))
    }

    /// Every record, in file order.
    pub fn records(&mut self) -> Result<Records<'_>> {
        self.read(Asked::File)
    }

    fn read(&mut self, asked: Asked) -> Result<Records<'_>> {
        let rewind = matches!(asked, Asked::File) && self.location != "-";
        if let (true, true, Inner::Bam(_)) = (rewind, self.used, &self.inner) {
            let options = bam_options(&self.options, self.no_cache);
            self.inner = Inner::Bam(Box::new(bam::Reader::open(&self.location, &options)?));
        }
        self.used = true;
        // Cached parts are shown current first; a stale one: the file again, without the cache.
        match self.confirm(asked) {
            Err(e) if e.is_stale() && !self.options.stale_is_error => {
                self.stale = Some(e.to_string());
                self.reopen_without_cache()?;
                self.confirm(asked)?;
            }
            other => other?,
        }
        let inner = match &mut self.inner {
            Inner::Bam(r) => match self.prepared.take() {
                Some(prepared) => Kind::Bam(r.query_prepared(prepared)?),
                // Prepared just now by `confirm`.
                None => return Err(Error::cram(&self.location, "the query was not planned")),
            },
            Inner::Cram(c) => match c.planned.take() {
                Some(planned) => Kind::Cram(c.records(planned)),
                // Planned just now by `confirm`.
                None => return Err(Error::cram(&self.location, "the query was not planned")),
            },
        };
        Ok(Records::new(inner))
    }

    /// Loads what the query needs, plans it (its spans on their way) and shows the cached
    /// parts current: a stale one is found before any record is read, and the spans did not
    /// wait for the check.
    fn confirm(&mut self, asked: Asked) -> Result<()> {
        match &mut self.inner {
            Inner::Bam(r) => {
                if !matches!(asked, Asked::File) {
                    r.select_index(self.index.as_deref())?;
                }
                let regions = match asked {
                    Asked::File => bam::Regions::File,
                    Asked::Targets(regions) => bam::Regions::Targets(regions.to_vec()),
                    Asked::Multi(set) => bam::Regions::Multi(set.clone()),
                    Asked::Overlapping(set) => bam::Regions::Overlapping(set.clone()),
                };
                let prepared = r.prepare(regions)?;
                r.confirm()?;
                self.prepared = Some(prepared);
            }
            Inner::Cram(c) => {
                let planned = c.plan(asked)?;
                c.planned = Some(planned);
            }
        }
        Ok(())
    }

    fn reopen_without_cache(&mut self) -> Result<()> {
        self.no_cache = true;
        let (file, index) = (self.location.as_str(), self.index.as_deref());
        self.inner = match &self.inner {
            // A URL that held BAM when its header was cached may hold CRAM now.
            Inner::Bam(_) if hfile::scheme_of(file).is_some() => {
                open_remote(file, file, index, &self.options, true)?
            }
            Inner::Bam(_) => {
                let options = bam_options(&self.options, true);
                Inner::Bam(Box::new(bam::Reader::open(file, &options)?))
            }
            Inner::Cram(_) => {
                Inner::Cram(Box::new(CramFile::open(file, index, &self.options, true)?))
            }
        };
        Ok(())
    }
}

/// A URL opened as BAM, or as CRAM when the BAM reader finds CRAM's magic at its start.
/// `location` may name the index (`##idx##`); `file` is the data file alone.
fn open_remote(
    location: &str,
    file: &str,
    index: Option<&str>,
    options: &Options,
    no_cache: bool,
) -> Result<Inner> {
    match bam::Reader::open(location, &bam_options(options, no_cache)) {
        Ok(bam) => Ok(Inner::Bam(Box::new(bam))),
        Err(bam::Error::NotBam { format, .. }) if format.starts_with("CRAM") => {
            let no_cache = options.no_cache || no_cache;
            let cram = CramFile::open(file, index, options, no_cache)?;
            Ok(Inner::Cram(Box::new(cram)))
        }
        Err(e) => Err(e.into()),
    }
}

/// The BAM reader's options from the facade's: the index (the options', else found as
/// htslib finds it, `##idx##` included) fetched beside the header when a query will follow.
fn bam_options(options: &Options, no_cache: bool) -> bam::OpenOptions {
    bam::OpenOptions {
        no_cache: options.no_cache || no_cache,
        ..options.to_bam()
    }
}
