//! How the facade's readers open a file: one builder for both kinds, as noodles-util's
//! `Builder` is (index, reference, threads, transport and cache).

/// Options for [`crate::alignment::Reader`] and [`crate::variant::Reader`].
///
/// ```
/// let options = hts::Options::new().threads(2).reference("ref.fa").index("x.cram.crai");
/// # let _ = options;
/// ```
#[derive(Clone, Default)]
pub struct Options {
    pub(crate) index: Option<String>,
    pub(crate) reference: Option<String>,
    pub(crate) threads: usize,
    /// The caller's transport; `None`: hfile's defaults (with fewer fetchers for CRAM).
    pub(crate) transport: Option<hfile::OpenOptions>,
    /// Changes the caller makes to the format's default transport.
    pub(crate) adjust: Option<Adjust>,
    pub(crate) no_cache: bool,
    /// Whether a query will follow the opening (`None`: each format's default).
    pub(crate) index_ahead: Option<bool>,
    /// How many distinct references the queries will name (0: not known).
    pub(crate) query_refs: usize,
    pub(crate) fetch_plan: bam::FetchPlan,
    /// CRAM's `decode_md` and `ignore_md5` input options.
    pub(crate) decode_md: Option<bool>,
    pub(crate) ignore_md5: Option<bool>,
    /// Whether a stale cached part is read again by the reader itself (the default) or is an
    /// error ([`crate::Error::is_stale`]) for the caller to handle.
    pub(crate) stale_is_error: bool,
    /// A CRAM's records made without their bases ([`Options::without_bases`]).
    pub(crate) without_bases: bool,
}

/// A change to a format's default transport.
pub(crate) type Adjust = std::sync::Arc<dyn Fn(&mut hfile::OpenOptions) + Send + Sync>;

impl Options {
    /// The defaults: the index found beside the file as htslib finds it, no reference (CRAM
    /// references are then found through `REF_PATH`/`REF_CACHE` by each `@SQ` line's `M5`),
    /// no extra threads, hfile's default transport, the persistent cache on (unless
    /// `HTS_CACHE=off`).
    pub fn new() -> Options {
        Options::default()
    }

    /// The index file (path or URL), as samtools' `-X` gives it; without it the index is found
    /// as htslib finds it (`FILE##idx##INDEX`, then `x.bam.csi`, `x.csi`, `x.bam.bai`,
    /// `x.bai`; `x.cram.crai`, `x.crai`; `x.vcf.gz.csi`, `x.vcf.gz.tbi`, ...).
    pub fn index(mut self, index: impl Into<String>) -> Options {
        self.index = Some(index.into());
        self
    }

    /// The reference of a CRAM: a FASTA path or URL (with its `.fai`, and `.gzi` when
    /// bgzipped), as samtools' `-T`.
    pub fn reference(mut self, reference: impl Into<String>) -> Options {
        self.reference = Some(reference.into());
        self
    }

    /// Threads for decompression and decoding besides the calling one (samtools' `-@`).
    pub fn threads(mut self, threads: usize) -> Options {
        self.threads = threads;
        self
    }

    /// The transport of remote files: request headers, timeouts, fetchers in flight, S3
    /// endpoint and profile ([`hfile::OpenOptions`]).
    pub fn transport(mut self, transport: hfile::OpenOptions) -> Options {
        self.transport = Some(transport);
        self
    }

    /// Opens every file through `client`: one connection pool, one bound on requests in
    /// flight, one byte budget and one throttle for all the readers of an application that
    /// opens many files at once (the transport is the client's).
    pub fn client(self, client: &hfile::Client) -> Options {
        self.transport(client.options())
    }

    /// Changes each format's default transport with `adjust` (a CRAM's default has fewer
    /// requests in flight than a BAM's): for a caller that sets some settings, as samtools'
    /// command line does, and leaves the rest to the format. Applied after
    /// [`Options::transport`].
    pub fn adjust_transport(
        mut self,
        adjust: impl Fn(&mut hfile::OpenOptions) + Send + Sync + 'static,
    ) -> Options {
        self.adjust = Some(std::sync::Arc::new(adjust));
        self
    }

    /// Says whether a region query will follow the opening: a remote BAM's index is then
    /// fetched beside its header, and a CRAM's `.crai` looked up with its opening; without
    /// one, neither is touched until a query asks. Default: a BAM's index at its first
    /// query, a CRAM's `.crai` at the opening.
    pub fn index_ahead(mut self, ahead: bool) -> Options {
        self.index_ahead = Some(ahead);
        self
    }

    /// How many distinct references the queries will name (a remote BAM's first index
    /// request asks for about that many references' worth); 0: not known.
    pub fn query_refs(mut self, refs: usize) -> Options {
        self.query_refs = refs;
        self
    }

    /// How a BAM's region queries turn chunks into requests ([`bam::FetchPlan`]).
    pub fn fetch_plan(mut self, plan: bam::FetchPlan) -> Options {
        self.fetch_plan = plan;
        self
    }

    /// CRAM's `decode_md` input option: whether `MD` and `NM` tags are made for records
    /// stored without them (htslib's default: yes).
    pub fn decode_md(mut self, on: bool) -> Options {
        self.decode_md = Some(on);
        self
    }

    /// CRAM's `ignore_md5` input option: slices whose reference MD5 does not match are read
    /// anyway.
    pub fn ignore_md5(mut self, on: bool) -> Options {
        self.ignore_md5 = Some(on);
        self
    }

    /// Makes a cached header or index found stale an error for the caller
    /// ([`crate::Error::is_stale`], before any record is read) instead of the reader opening
    /// the file again by itself: for a caller that made something of the header first (an
    /// output's header) and must start over.
    pub fn stale_is_error(mut self, on: bool) -> Options {
        self.stale_is_error = on;
        self
    }

    /// The BAM reader's options these amount to (transport, threads, cache, the index asked
    /// for at the open when a query will follow, the query's plan): for a caller that drives
    /// a [`bam::Reader`] itself.
    pub fn to_bam(&self) -> bam::OpenOptions {
        let index = match (self.index_ahead, &self.index) {
            (Some(true), Some(at)) => bam::IndexHint::At(at.clone()),
            (Some(true), None) => bam::IndexHint::Auto,
            _ => bam::IndexHint::None,
        };
        bam::OpenOptions {
            transport: self.transport_for_bam(),
            threads: self.threads,
            no_cache: self.no_cache,
            index,
            query_refs: self.query_refs,
            fetch_plan: self.fetch_plan,
            ..Default::default()
        }
    }

    /// The transport for a BAM or tabix file: the options', else hfile's defaults.
    pub(crate) fn transport_for_bam(&self) -> hfile::OpenOptions {
        self.adjusted(self.transport.clone().unwrap_or_default())
    }

    /// The transport for a CRAM: the options', else hfile's defaults with
    /// [`crate::cram_open::FETCHERS`] requests in flight.
    pub(crate) fn transport_for_cram(&self) -> hfile::OpenOptions {
        let transport = self
            .transport
            .clone()
            .unwrap_or_else(crate::cram_open::transport);
        self.adjusted(transport)
    }

    fn adjusted(&self, mut transport: hfile::OpenOptions) -> hfile::OpenOptions {
        if let Some(adjust) = &self.adjust {
            adjust(&mut transport);
        }
        transport
    }

    /// Makes a CRAM's records without their bases: no reference is read, a sequence is wrong
    /// where the reference would give it and MD/NM are not made again, but flags, positions,
    /// CIGARs, mates and tags are whole. For counting whole files (samtools' flagstat), not
    /// for printing: a remote CRAM's `.crai` is not asked for ahead, nor its opening cached. A
    /// BAM's records are read whole.
    pub fn without_bases(mut self, on: bool) -> Options {
        self.without_bases = on;
        self
    }

    /// Leaves the persistent cache of remote headers and indexes alone.
    pub fn no_cache(mut self, no_cache: bool) -> Options {
        self.no_cache = no_cache;
        self
    }
}
