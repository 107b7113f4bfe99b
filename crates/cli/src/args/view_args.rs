//! What each `hts view` option does to [`ViewArgs`], and the values options read: seconds, byte
//! counts, `-O` formats and htslib's format options.

use super::{Opt, UsageError};
use crate::numbers::{atoi, str2flag};
use crate::select::SelectArgs;

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
    Sam,
    SamGz,
    Bam,
    Cram,
    Vcf,
    Bcf,
    Fastq,
    FastqGz,
    Fasta,
    FastaGz,
}

/// Parsed `view` options.
#[derive(Debug, Clone, Default)]
pub struct ViewArgs {
    pub header: HeaderMode,
    pub no_pg: bool,
    pub count: bool,
    /// `-f`: FLAG bits that must all be set (an `int` in samtools; `-1` from a bad name).
    pub require_flags: i32,
    /// `-F`: FLAG bits that must all be clear.
    pub exclude_flags: i32,
    /// `-q`, as `atoi` reads it.
    pub min_mapq: i32,
    pub explicit_index: bool,
    pub threads: usize,
    pub verbosity: u8,
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
    pub output: Option<String>,
    /// `-b` ('b') or `-C` ('c'), the last given.
    pub out_format: Option<char>,
    /// `-u` (0) or `-1` (1); -1 when neither.
    pub compress_level: i32,
    pub output_fmt: Option<OutFmt>,
    /// `--output-fmt-option` and `-O FMT,OPT=VAL` options, in order.
    pub fmt_options: Vec<(String, String)>,
    pub write_index: bool,
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
/// A time limit in seconds (`2`, `0.5`): positive and finite.
pub(super) fn seconds(spelled: &str, v: &str) -> Result<std::time::Duration, UsageError> {
    v.trim()
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s > 0.0 && *s < 1e9)
        .map(std::time::Duration::from_secs_f64)
        .ok_or_else(|| {
            UsageError::usage(format!(
                "{spelled} needs a number of seconds above 0, not '{v}'"
            ))
        })
}

/// A byte count with an optional `K`, `M` or `G` suffix (powers of 1024), at least 1.
fn bytes(spelled: &str, v: &str) -> Result<u64, UsageError> {
    let t = v.trim();
    let (digits, shift) = match t.char_indices().last() {
        Some((i, 'k' | 'K')) => (&t[..i], 10),
        Some((i, 'm' | 'M')) => (&t[..i], 20),
        Some((i, 'g' | 'G')) => (&t[..i], 30),
        _ => (t, 0),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(1 << shift))
        .filter(|&n| n >= 1)
        .ok_or_else(|| {
            UsageError::usage(format!(
                "{spelled} needs a byte count of 1 or more (K, M, G suffixes), not '{v}'"
            ))
        })
}

impl ViewArgs {
    /// What one option does (options are applied in command-line order, as samtools does).
    pub(super) fn apply(&mut self, id: Opt, spelled: &str, v: &str) -> Result<(), UsageError> {
        match id {
            Opt::Bam => self.out_format = Some('b'),
            Opt::Fast => self.compress_level = 1,
            Opt::Uncompressed => self.compress_level = 0,
            Opt::WithHeader => {
                if self.header == HeaderMode::None {
                    self.header = HeaderMode::With;
                }
            }
            Opt::HeaderOnly => self.header = HeaderMode::Only,
            Opt::NoHeader => self.header = HeaderMode::None,
            Opt::Count => self.count = true,
            Opt::Output => self.output = Some(v.to_string()),
            Opt::OutputFmt => {
                let (fmt, opts) = parse_format(v)?;
                self.output_fmt = Some(fmt);
                self.fmt_options.extend(opts);
            }
            Opt::OutputFmtOption => self.fmt_options.push(parse_fmt_option(v)?),
            Opt::WriteIndex => self.write_index = true,
            Opt::NoPg => self.no_pg = true,
            Opt::CustomizedIndex => self.explicit_index = true,
            Opt::MinMq => self.min_mapq = atoi(v),
            Opt::RequireFlags => self.require_flags |= str2flag(v),
            Opt::ExcludeFlags => self.exclude_flags |= str2flag(v),
            Opt::Help => self.help = true,
            Opt::Ignored => {}
            Opt::Threads => self.threads = atoi(v).max(0) as usize,
            Opt::Verbosity => self.verbosity = atoi(v).clamp(0, 255) as u8,
            Opt::RequestHeader => {
                let (k, val) = v.split_once(':').ok_or_else(|| {
                    UsageError::usage(format!("{spelled} '{v}' is not of the form 'Name: value'"))
                })?;
                self.request_headers
                    .push((k.trim().to_string(), val.trim().to_string()));
            }
            Opt::FetchMode => {
                if !matches!(v, "planned" | "per-chunk" | "open-ended") {
                    return Err(UsageError::usage(format!(
                        "{spelled} must be planned, per-chunk or open-ended, not '{v}'"
                    )));
                }
                self.fetch_mode = Some(v.to_string());
            }
            Opt::Fetchers => {
                let n = atoi(v);
                if n < 1 {
                    return Err(UsageError::usage(format!(
                        "{spelled} needs a count of 1 or more, not '{v}'"
                    )));
                }
                self.fetchers = Some(n as usize);
            }
            Opt::PartSize => self.part_size = Some(bytes(spelled, v)?),
            Opt::ReadAhead => self.read_ahead = Some(bytes(spelled, v)?),
            Opt::NoCache => self.no_cache = true,
            Opt::Manifest => self.manifest = Some(v.to_string()),
            Opt::Jobs => {
                let n = atoi(v);
                if n < 1 {
                    return Err(UsageError::usage(format!(
                        "{spelled} needs a count of 1 or more, not '{v}'"
                    )));
                }
                self.jobs = Some(n as usize);
            }
            Opt::Timeout => self.timeout = Some(seconds(spelled, v)?),
            Opt::S3Endpoint => self.s3_endpoint = Some(v.to_string()),
            Opt::RequesterPays => self.requester_pays = true,
            Opt::Reference => self.reference = Some(v.to_string()),
            Opt::InputFmtOption => {
                let (key, value) = parse_fmt_option(v)
                    .map_err(|_| UsageError::usage(format!("unknown input format option '{v}'")))?;
                self.input_options.push((key, value));
            }
            _ => match self.select.apply(id, v) {
                Ok(true) => {}
                Ok(false) => {
                    return Err(UsageError::usage(format!(
                        "hts view does not support option {spelled} yet"
                    )))
                }
                Err(refused) => {
                    return Err(UsageError {
                        message: refused.message,
                        show_usage: refused.usage,
                    })
                }
            },
        }
        Ok(())
    }
}

/// `hts_parse_format`: a format keyword (any case), then comma-separated options.
fn parse_format(v: &str) -> Result<(OutFmt, Vec<(String, String)>), UsageError> {
    let (keyword, rest) = v.split_once(',').unwrap_or((v, ""));
    let fmt = match keyword.to_ascii_lowercase().as_str() {
        "sam" => OutFmt::Sam,
        "sam.gz" => OutFmt::SamGz,
        "bam" => OutFmt::Bam,
        "cram" => OutFmt::Cram,
        "vcf" => OutFmt::Vcf,
        "bcf" => OutFmt::Bcf,
        "fastq" | "fq" => OutFmt::Fastq,
        "fastq.gz" | "fq.gz" => OutFmt::FastqGz,
        "fasta" | "fa" => OutFmt::Fasta,
        "fasta.gz" | "fa.gz" => OutFmt::FastaGz,
        _ => {
            return Err(UsageError::usage(format!(
                "unknown output format '{keyword}'"
            )))
        }
    };
    let mut opts = Vec::new();
    for o in rest.split(',').filter(|o| !o.is_empty()) {
        opts.push(parse_fmt_option(o)?);
    }
    Ok((fmt, opts))
}

/// Output format options htslib knows (`hts_opt_add`), lower case.
const KNOWN_FMT_OPTIONS: &[&str] = &[
    "decode_md",
    "verbosity",
    "seqs_per_slice",
    "bases_per_slice",
    "slices_per_container",
    "embed_ref",
    "no_ref",
    "pos_delta",
    "ignore_md5",
    "use_bzip2",
    "use_rans",
    "use_lzma",
    "use_tok",
    "use_fqz",
    "use_arith",
    "fast",
    "normal",
    "small",
    "archive",
    "reference",
    "version",
    "multi_seq_per_slice",
    "nthreads",
    "cache_size",
    "required_fields",
    "lossy_names",
    "name_prefix",
    "store_md",
    "store_nm",
    "block_size",
    "level",
    "filter",
    "fastq_aux",
    "fastq_barcode",
    "fastq_rnum",
    "fastq_casava",
    "fastq_name2",
];

/// `hts_opt_add`: `KEY=VALUE` or `KEY` (meaning `KEY=1`); the key is htslib's (lower or upper
/// case). Returned with the key in lower case.
fn parse_fmt_option(o: &str) -> Result<(String, String), UsageError> {
    let (key, value) = o.split_once('=').unwrap_or((o, "1"));
    let lower = key.to_ascii_lowercase();
    let known = KNOWN_FMT_OPTIONS.contains(&lower.as_str())
        && (key == lower || key == key.to_ascii_uppercase());
    if !known {
        return Err(UsageError::usage(format!(
            "unknown output format option '{key}'"
        )));
    }
    Ok((lower, value.to_string()))
}
