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
    pub(crate) no_cache: bool,
    pub(crate) without_bases: bool,
    pub(crate) index_early: bool,
}

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

    /// The BAM reader's options these amount to (transport, threads, cache, the index asked
    /// for at the open): for a caller that drives a [`bam::Reader`] itself.
    pub fn to_bam(&self) -> bam::OpenOptions {
        let index = match (&self.index, self.index_early) {
            (_, false) => bam::IndexHint::None,
            (Some(at), true) => bam::IndexHint::At(at.clone()),
            (None, true) => bam::IndexHint::Auto,
        };
        bam::OpenOptions {
            transport: self.transport_for_bam(),
            threads: self.threads,
            no_cache: self.no_cache,
            index,
            ..Default::default()
        }
    }

    /// The transport for a BAM or tabix file: the options', else hfile's defaults.
    pub(crate) fn transport_for_bam(&self) -> hfile::OpenOptions {
        self.transport.clone().unwrap_or_default()
    }

    /// The transport for a CRAM: the options', else hfile's defaults with
    /// [`crate::cram_open::FETCHERS`] requests in flight.
    pub(crate) fn transport_for_cram(&self) -> hfile::OpenOptions {
        self.transport
            .clone()
            .unwrap_or_else(crate::cram_open::transport)
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

    /// Asks for a BAM's index beside its header at the open (for a remote file, one round trip
    /// for both), for a reader that will need it whatever it reads: samtools' idxstats
    /// ([`crate::alignment::Reader::bam_index`]). Without it the index is fetched when a query
    /// needs it.
    pub fn index_early(mut self, on: bool) -> Options {
        self.index_early = on;
        self
    }

    /// Leaves the persistent cache of remote headers and indexes alone.
    pub fn no_cache(mut self, no_cache: bool) -> Options {
        self.no_cache = no_cache;
        self
    }
}
