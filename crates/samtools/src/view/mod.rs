//! `samtools view`'s semantics on the facade: its options ([`ViewArgs`], parsed by the CLI),
//! what it reads (the whole file, each region, every region at once, `-P`'s pairs), how it
//! selects and edits each record ([`select`]), and what it writes ([`output`], [`sink`]), in
//! the order `main_samview` does them. [`run`] is `hts view` on one file, [`cohort`] the same
//! for every sample of a manifest.

use std::io;

pub mod cohort;
pub mod input;
pub mod output;
mod pipeline;
pub mod select;
pub mod sink;

pub use pipeline::{command_line, print_count, report_filter_errors, run};
pub use select::{Fate, SelectArgs};

/// The status samtools ends with when its output pipe closes: killed by SIGPIPE, which a shell
/// reports as 128 + 13.
pub const BROKEN_PIPE_STATUS: u8 = 141;

/// Why `view` stopped.
#[derive(Debug)]
pub enum Failure {
    /// The reader of the output went away: stop quietly.
    BrokenPipe,
    /// A cached header or index turned out stale before anything was written: read again
    /// without the cache.
    Stale(String),
    /// Printed as `hts view: MESSAGE`.
    Message(String),
}

impl From<bam::Error> for Failure {
    fn from(e: bam::Error) -> Failure {
        if e.is_broken_pipe() {
            Failure::BrokenPipe
        } else if e.is_changed() {
            Failure::Stale(e.to_string())
        } else {
            Failure::Message(e.to_string())
        }
    }
}

impl From<hts::Error> for Failure {
    fn from(e: hts::Error) -> Failure {
        match e {
            e if e.is_stale() => Failure::Stale(e.to_string()),
            hts::Error::Bam(e) => Failure::from(e),
            e if e.is_broken_pipe() => Failure::BrokenPipe,
            e => Failure::Message(e.to_string()),
        }
    }
}

/// An I/O error while writing `what`: a closed pipe stops quietly.
pub fn io_failure(what: &str, e: io::Error) -> Failure {
    if e.kind() == io::ErrorKind::BrokenPipe {
        Failure::BrokenPipe
    } else {
        Failure::Message(format!("{what}: {e}"))
    }
}

/// Which of the header and the records to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HeaderMode {
    /// Records only (the default).
    #[default]
    None,
    /// `-h`: header, then records.
    With,
    /// `-H`: header only.
    Only,
}

/// A `-O` format (htslib's `hts_parse_format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutFmt {
    /// SAM text.
    Sam,
    /// bgzipped SAM.
    SamGz,
    /// BAM.
    Bam,
    /// CRAM.
    Cram,
    /// VCF.
    Vcf,
    /// BCF.
    Bcf,
    /// FASTQ.
    Fastq,
    /// gzipped FASTQ.
    FastqGz,
    /// FASTA.
    Fasta,
    /// gzipped FASTA.
    FastaGz,
}

/// Parsed `view` options.
#[derive(Debug, Clone, Default)]
pub struct ViewArgs {
    /// `-h`/`-H`: which of the header and the records to print.
    pub header: HeaderMode,
    /// `--no-PG`: no `@PG` line for this command.
    pub no_pg: bool,
    /// `-c`: only the count of selected records.
    pub count: bool,
    /// `-f`: FLAG bits that must all be set (an `int` in samtools; `-1` from a bad name).
    pub require_flags: i32,
    /// `-F`: FLAG bits that must all be clear.
    pub exclude_flags: i32,
    /// `-q`, as `atoi` reads it.
    pub min_mapq: i32,
    /// `-X`: the index is the second positional argument.
    pub explicit_index: bool,
    /// `-@`: threads besides the main one.
    pub threads: usize,
    /// `--verbosity`: 1 or more prints a transfer summary.
    pub verbosity: u8,
    /// `--header NAME: VALUE`: request headers for remote files.
    pub request_headers: Vec<(String, String)>,
    /// `--fetch-mode`: planned (default), per-chunk (PR #1998) or open-ended (htslib).
    pub fetch_mode: Option<String>,
    /// `--fetchers N`: requests in flight at once for a remote file.
    pub fetchers: Option<usize>,
    /// `--part-size BYTES`: the part size of a remote file's long ranges.
    pub part_size: Option<u64>,
    /// `--read-ahead BYTES`: the read-ahead depth of a remote file.
    pub read_ahead: Option<u64>,
    /// `--no-cache`: neither read nor write the index cache.
    pub no_cache: bool,
    /// `--timeout SECS` (else `HTS_TIMEOUT`): the time the whole query may take.
    pub timeout: Option<std::time::Duration>,
    /// When that time is up (set when the run starts).
    pub deadline: Option<hfile::Deadline>,
    /// `--s3-endpoint URL`: an S3-compatible endpoint for `s3://` locations.
    pub s3_endpoint: Option<String>,
    /// `--requester-pays`: the reader pays for `s3://` requests.
    pub requester_pays: bool,
    /// `-o`: the output file (`-` or none: standard output).
    pub output: Option<String>,
    /// `-b` ('b') or `-C` ('c'), the last given.
    pub out_format: Option<char>,
    /// `-u` (0) or `-1` (1); -1 when neither.
    pub compress_level: i32,
    /// `-O`: the output format.
    pub output_fmt: Option<OutFmt>,
    /// `--output-fmt-option` and `-O FMT,OPT=VAL` options, in order.
    pub fmt_options: Vec<(String, String)>,
    /// `--write-index`: index the output as it is written.
    pub write_index: bool,
    /// `--help`.
    pub help: bool,
    /// The selection and processing options (`-L -M -e -r -x -U -p ...`).
    pub select: SelectArgs,
    /// `-T`/`--reference`: the FASTA a CRAM input's slices are rebuilt against.
    pub reference: Option<String>,
    /// `--input-fmt-option OPT=VAL`, in order (CRAM's `reference`, `decode_md` and
    /// `ignore_md5` are used; the others, as for BAM in htslib, change nothing).
    pub input_options: Vec<(String, String)>,
    /// `--manifest FILE`: a cohort's samples; the positional arguments are then regions.
    pub manifest: Option<String>,
    /// `--jobs N`: with `--manifest`, files worked at once.
    pub jobs: Option<usize>,
    /// `FILE [INDEX] REGION...`
    pub positional: Vec<String>,
}
