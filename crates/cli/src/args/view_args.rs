//! What each `hts view` option does to [`ViewArgs`], and the values options read: seconds, byte
//! counts, `-O` formats and htslib's format options.

use super::{Opt, UsageError};
use samtools::numbers::{atoi, str2flag};
use samtools::view::{HeaderMode, OutFmt, ViewArgs};

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

/// What one option does to `a` (options are applied in command-line order, as samtools does).
pub(super) fn apply(a: &mut ViewArgs, id: Opt, spelled: &str, v: &str) -> Result<(), UsageError> {
    match id {
        Opt::Bam => a.out_format = Some('b'),
        Opt::Fast => a.compress_level = 1,
        Opt::Uncompressed => a.compress_level = 0,
        Opt::WithHeader => {
            if a.header == HeaderMode::None {
                a.header = HeaderMode::With;
            }
        }
        Opt::HeaderOnly => a.header = HeaderMode::Only,
        Opt::NoHeader => a.header = HeaderMode::None,
        Opt::Count => a.count = true,
        Opt::Output => a.output = Some(v.to_string()),
        Opt::OutputFmt => {
            let (fmt, opts) = parse_format(v)?;
            a.output_fmt = Some(fmt);
            a.fmt_options.extend(opts);
        }
        Opt::OutputFmtOption => a.fmt_options.push(parse_fmt_option(v)?),
        Opt::WriteIndex => a.write_index = true,
        Opt::NoPg => a.no_pg = true,
        Opt::CustomizedIndex => a.explicit_index = true,
        Opt::MinMq => a.min_mapq = atoi(v),
        Opt::RequireFlags => a.require_flags |= str2flag(v),
        Opt::ExcludeFlags => a.exclude_flags |= str2flag(v),
        Opt::Help => a.help = true,
        Opt::Ignored => {}
        Opt::Threads => a.threads = atoi(v).max(0) as usize,
        Opt::Verbosity => a.verbosity = atoi(v).clamp(0, 255) as u8,
        Opt::RequestHeader => {
            let (k, val) = v.split_once(':').ok_or_else(|| {
                UsageError::usage(format!("{spelled} '{v}' is not of the form 'Name: value'"))
            })?;
            a.request_headers
                .push((k.trim().to_string(), val.trim().to_string()));
        }
        Opt::FetchMode => {
            if !matches!(v, "planned" | "per-chunk" | "open-ended") {
                return Err(UsageError::usage(format!(
                    "{spelled} must be planned, per-chunk or open-ended, not '{v}'"
                )));
            }
            a.fetch_mode = Some(v.to_string());
        }
        Opt::Fetchers => {
            let n = atoi(v);
            if n < 1 {
                return Err(UsageError::usage(format!(
                    "{spelled} needs a count of 1 or more, not '{v}'"
                )));
            }
            a.fetchers = Some(n as usize);
        }
        Opt::PartSize => a.part_size = Some(bytes(spelled, v)?),
        Opt::ReadAhead => a.read_ahead = Some(bytes(spelled, v)?),
        Opt::NoCache => a.no_cache = true,
        Opt::Manifest => a.manifest = Some(v.to_string()),
        Opt::Jobs => {
            let n = atoi(v);
            if n < 1 {
                return Err(UsageError::usage(format!(
                    "{spelled} needs a count of 1 or more, not '{v}'"
                )));
            }
            a.jobs = Some(n as usize);
        }
        Opt::Timeout => a.timeout = Some(seconds(spelled, v)?),
        Opt::S3Endpoint => a.s3_endpoint = Some(v.to_string()),
        Opt::RequesterPays => a.requester_pays = true,
        Opt::Reference => a.reference = Some(v.to_string()),
        Opt::InputFmtOption => {
            let (key, value) = parse_fmt_option(v)
                .map_err(|_| UsageError::usage(format!("unknown input format option '{v}'")))?;
            a.input_options.push((key, value));
        }
        _ => match super::select_args::apply(&mut a.select, id, v) {
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
