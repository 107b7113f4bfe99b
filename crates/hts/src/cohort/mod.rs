//! Cohorts in one process: the same regions from many BAM and CRAM files (a manifest's
//! samples), every reader on one shared [`hfile::Client`] (one connection pool, one bound on
//! requests in flight, one byte budget, one throttle that slows the whole client down on `429`
//! and `503 SlowDown`), a bounded number of files worked at once, and each file's result handed
//! back as it completes. A file that fails (after hfile's retries) is reported as such and the
//! others go on.
//!
//! Each file is opened, planned and read as one [`crate::alignment::Reader`] reads it alone:
//! a cohort changes only what is shared and how many files are under way.
//!
//! ```
//! # let server = testkit::Server::start(&testkit::workspace_root().join("fixtures")).unwrap();
//! # let url = |path: &str| server.url(path);
//! use hts::cohort::{Cohort, Sample};
//! let samples: Vec<Sample> = ["a", "b", "c"]
//!     .iter()
//!     .map(|name| Sample {
//!         name: name.to_string(),
//!         file: url("conformance/data/rand.bam"),
//!         index: None,
//!     })
//!     .collect();
//! let cohort = Cohort::new(samples, vec!["chr1:10000-10500".to_string()]).jobs(2);
//! let mut counts = vec![0u64; 3];
//! cohort.run(
//!     |_sample, _header, records| {
//!         let mut n = 0;
//!         while records.next_record()?.is_some() {
//!             n += 1;
//!         }
//!         Ok::<u64, hts::Error>(n)
//!     },
//!     |done| counts[done.index] = done.result.unwrap(),
//! );
//! assert!(counts.iter().all(|&n| n > 0 && n == counts[0]));
//! ```

mod manifest;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

pub use manifest::{parse_manifest, read_manifest, Sample};

use crate::alignment::{Reader, Records};
use crate::{Error, Options};

/// Files worked at once when not told: enough to keep a link busy through each file's
/// round trips (its opening, then its spans: response times one after another), few enough
/// that the open files' buffers stay small (about 1 MB each for a small region). An object
/// store answers each request at its own rate, so a cohort of small files is bounded by
/// requests in flight over the response time: 1,000 objects behind the `s3` link profile
/// (`cargo xtask bench-cohort`, 4,000 requests, 20 ms each) took 1.57 s with 32 files and 64
/// requests at once, 0.92 s with 64 and 128 (the link's floor 0.80 s), 0.85 s with 128 and
/// 256 at 1.6 times the memory; 40 regions of 200 objects 2.86, 1.56 and 1.52 s.
pub const DEFAULT_JOBS: usize = 64;

/// Requests in flight over the whole cohort when not told (hfile's default for one file is
/// 8): two for each file worked at once, its opening's requests going out together.
pub const DEFAULT_IN_FLIGHT: usize = 128;

/// A cohort query: samples times one list of regions.
pub struct Cohort {
    samples: Vec<Sample>,
    regions: Vec<String>,
    options: Options,
    client: hfile::Client,
    jobs: usize,
}

/// What one file's work came to, handed back as it completes.
pub struct Done<T, E> {
    /// The sample's place in the list (the manifest's order).
    pub index: usize,
    /// The sample.
    pub sample: Sample,
    /// The work's result, or why the file could not be opened, planned or read.
    pub result: Result<T, E>,
    /// Warnings about this file: regions its header does not know (skipped, as samtools skips
    /// them with the same words).
    pub warnings: Vec<String>,
}

impl Cohort {
    /// The samples (in the order results are numbered) and the regions asked of each, as
    /// `samtools view FILE REGION...` reads them (none: every record of each file).
    pub fn new(samples: Vec<Sample>, regions: Vec<String>) -> Cohort {
        let client = hfile::Client::new(hfile::ClientOptions {
            max_in_flight: DEFAULT_IN_FLIGHT,
            ..hfile::ClientOptions::default()
        });
        Cohort {
            samples,
            regions,
            options: Options::new(),
            client,
            jobs: DEFAULT_JOBS,
        }
    }

    /// How many files are worked at once (at least 1). Default [`DEFAULT_JOBS`].
    pub fn jobs(mut self, jobs: usize) -> Cohort {
        self.jobs = jobs.max(1);
        self
    }

    /// The client every reader shares (its limits, transport settings and cache). Default: a
    /// client of hfile's defaults with [`DEFAULT_IN_FLIGHT`] requests in flight.
    pub fn client(mut self, client: hfile::Client) -> Cohort {
        self.client = client;
        self
    }

    /// The options each file is opened with (reference, threads, cache); their transport is
    /// replaced by the client's, and their index by the manifest's where it names one.
    pub fn options(mut self, options: Options) -> Cohort {
        self.options = options;
        self
    }

    /// The samples.
    pub fn samples(&self) -> &[Sample] {
        &self.samples
    }

    /// The shared client (for its limits and what it holds).
    pub fn shared_client(&self) -> &hfile::Client {
        &self.client
    }

    /// Opens every file, queries it, and gives its header and records to `work`, up to
    /// [`Cohort::jobs`] files at once on as many threads; `done` is called on the calling
    /// thread with each file's outcome as it completes (not in manifest order). A failure,
    /// whether opening, planning or in `work`, ends that file only. Returns when every file is
    /// done.
    pub fn run<T, E, W, D>(&self, work: W, done: D)
    where
        T: Send,
        E: From<Error> + Send,
        W: Fn(&Sample, &bam::Header, &mut Records<'_>) -> Result<T, E> + Sync,
        D: FnMut(Done<T, E>),
    {
        self.run_until(&AtomicBool::new(false), work, done)
    }

    /// [`Cohort::run`], taking no further file once `stop` is set (a consumer that has gone
    /// away): files under way finish as `work` lets them, the rest are never opened.
    pub fn run_until<T, E, W, D>(&self, stop: &AtomicBool, work: W, done: D)
    where
        T: Send,
        E: From<Error> + Send,
        W: Fn(&Sample, &bam::Header, &mut Records<'_>) -> Result<T, E> + Sync,
        D: FnMut(Done<T, E>),
    {
        self.run_planned(
            stop,
            |_sample, reader, header, warnings| {
                self.query_regions(reader, header, warnings)
                    .map_err(E::from)
            },
            work,
            done,
        )
    }

    /// [`Cohort::run_until`] with each file's records chosen by `plan` rather than the regions
    /// one by one: `plan` is given the file opened (its index fetched beside the header when
    /// [`Options::index_ahead`] asks), its header, and the file's warnings to add to, and
    /// returns the records `work` is given (a caller's own query, such as samtools' `-M`
    /// through [`Reader::query_set`]). The regions given to [`Cohort::new`] are then only the
    /// references asked for ahead ([`Options::query_refs`]).
    pub fn run_planned<T, E, P, W, D>(&self, stop: &AtomicBool, plan: P, work: W, mut done: D)
    where
        T: Send,
        E: From<Error> + Send,
        P: for<'r> Fn(
                &Sample,
                &'r mut Reader,
                &bam::Header,
                &mut Vec<String>,
            ) -> Result<Records<'r>, E>
            + Sync,
        W: Fn(&Sample, &bam::Header, &mut Records<'_>) -> Result<T, E> + Sync,
        D: FnMut(Done<T, E>),
    {
        let next = AtomicUsize::new(0);
        let (tx, rx) = mpsc::channel::<Done<T, E>>();
        std::thread::scope(|scope| {
            for _ in 0..self.jobs.min(self.samples.len()) {
                let tx = tx.clone();
                let (next, plan, work) = (&next, &plan, &work);
                scope.spawn(move || loop {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(sample) = self.samples.get(index) else {
                        break;
                    };
                    let mut warnings = Vec::new();
                    let result = self.one(sample, &mut warnings, plan, work);
                    let done = Done {
                        index,
                        sample: sample.clone(),
                        result,
                        warnings,
                    };
                    if tx.send(done).is_err() {
                        break;
                    }
                });
            }
            // The workers hold the only senders now: the loop ends when the last one is done.
            drop(tx);
            for outcome in rx {
                done(outcome);
            }
        });
    }

    /// One file: opened on the shared client, its records chosen by `plan`, given to `work`.
    fn one<T, E, P, W>(
        &self,
        sample: &Sample,
        warnings: &mut Vec<String>,
        plan: &P,
        work: &W,
    ) -> Result<T, E>
    where
        E: From<Error>,
        P: for<'r> Fn(
            &Sample,
            &'r mut Reader,
            &bam::Header,
            &mut Vec<String>,
        ) -> Result<Records<'r>, E>,
        W: Fn(&Sample, &bam::Header, &mut Records<'_>) -> Result<T, E>,
    {
        let mut options = self.options.clone().client(&self.client);
        if !self.regions.is_empty() {
            // A remote BAM's index is asked for beside its header: one round trip for both.
            // A caller's own count (the references of a BED it plans with) when larger.
            let refs = region::distinct_references(&self.regions).max(self.options.query_refs);
            options = options.index_ahead(true).query_refs(refs);
        }
        if let Some(index) = &sample.index {
            options = options.index(index.clone());
        }
        let mut reader = Reader::open(&sample.file, &options)?;
        let header = reader.header().clone();
        let mut records = plan(sample, &mut reader, &header, warnings)?;
        work(sample, &header, &mut records)
    }

    /// The default plan: every record without regions, else the regions parsed against the
    /// file's own header (a name it lacks skipped with samtools' warning), queried as one plan.
    fn query_regions<'r>(
        &self,
        reader: &'r mut Reader,
        header: &bam::Header,
        warnings: &mut Vec<String>,
    ) -> Result<Records<'r>, Error> {
        if self.regions.is_empty() {
            return reader.records();
        }
        let mut targets = Vec::with_capacity(self.regions.len());
        for spec in &self.regions {
            match region::parse_region(spec, header) {
                Ok(target) => targets.push(target),
                Err(e) => {
                    warnings.extend(e.htslib_message());
                    warnings.push(e.samtools_warning());
                }
            }
        }
        reader.query(&targets)
    }
}
