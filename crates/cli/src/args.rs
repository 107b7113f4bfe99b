//! `hts view` arguments: every option of samtools 1.16.1 `view` (from its `sam_view.c` and the
//! global options of `sam_opts.c`), parsed with getopt_long's rules ([`crate::getopt`]).
//!
//! Adding an option is one entry in [`VIEW_OPTIONS`] (its names, whether it takes a value, its
//! help line, or `Support::No` for one samtools has and hts does not yet) and one arm in
//! `ViewArgs::apply` (`args/view_args.rs`, with the values the options read).
//!
//! The option table is samtools view's whole option list in one place, so an option's spelling
//! and help line are read together.

use std::fmt;

use crate::getopt::{self, Spec, Value};

mod select_args;
mod view_args;

use samtools::view::ViewArgs;
use view_args::seconds;

/// Every option `view` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opt {
    // Output.
    Bam,
    Cram,
    Fast,
    Uncompressed,
    WithHeader,
    HeaderOnly,
    NoHeader,
    Count,
    Output,
    OutputUnselected,
    Unmap,
    FetchPairs,
    OutputFmt,
    OutputFmtOption,
    WriteIndex,
    NoPg,
    // Input.
    FaiReference,
    UseIndex,
    RegionFile,
    CustomizedIndex,
    InputFmtOption,
    Reference,
    // Filters.
    TargetFile,
    ReadGroup,
    ReadGroupFile,
    QnameFile,
    Tag,
    TagFile,
    MinMq,
    Library,
    MinQlen,
    Expr,
    RequireFlags,
    ExcludeFlags,
    IncludeFlags,
    ExcludeAllFlags,
    Subsample,
    SubsampleSeed,
    SubsampleLegacy,
    // Processing.
    AddFlags,
    RemoveFlags,
    RemoveTag,
    KeepTag,
    RemoveB,
    // General.
    Help,
    Ignored,
    Threads,
    Verbosity,
    // hts's own.
    RequestHeader,
    FetchMode,
    Fetchers,
    PartSize,
    ReadAhead,
    NoCache,
    Timeout,
    S3Endpoint,
    RequesterPays,
    Manifest,
    Jobs,
}

/// Whether hts does what the option asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Support {
    Yes,
    /// samtools has it; hts does not yet.
    No,
}

/// An option: its names, its value, whether hts supports it, its help line.
#[derive(Debug, Clone, Copy)]
pub struct ViewOption {
    pub spec: Spec<Opt>,
    pub support: Support,
    pub help: &'static str,
}

const fn opt(
    id: Opt,
    short: Option<char>,
    long: &'static [&'static str],
    value: Value,
    support: Support,
    help: &'static str,
) -> ViewOption {
    ViewOption {
        spec: Spec {
            id,
            short,
            long,
            value,
        },
        support,
        help,
    }
}

use Support::{No, Yes};
use Value::{None as Flag, Required as Arg};

/// The options of `view`, in the order of samtools' usage.
#[rustfmt::skip]
pub const VIEW_OPTIONS: &[ViewOption] = &[
    opt(Opt::Bam, Some('b'), &["bam"], Flag, Yes, "Output BAM"),
    opt(Opt::Cram, Some('C'), &["cram"], Flag, No, "Output CRAM"),
    opt(Opt::Fast, Some('1'), &["fast"], Flag, Yes, "Use fast BAM compression (and default to --bam)"),
    opt(Opt::Uncompressed, Some('u'), &["uncompressed"], Flag, Yes, "Uncompressed BAM output (and default to --bam)"),
    opt(Opt::WithHeader, Some('h'), &["with-header"], Flag, Yes, "Include header in SAM output"),
    opt(Opt::HeaderOnly, Some('H'), &["header-only"], Flag, Yes, "Print SAM header only (no alignments)"),
    opt(Opt::NoHeader, None, &["no-header"], Flag, Yes, "Print SAM alignment records only [default]"),
    opt(Opt::Count, Some('c'), &["count"], Flag, Yes, "Print only the count of matching records"),
    opt(Opt::Output, Some('o'), &["output"], Arg, Yes, "FILE  Write output to FILE [standard output]"),
    opt(Opt::OutputUnselected, Some('U'), &["unoutput", "output-unselected"], Arg, Yes, "FILE  Output reads not selected by filters to FILE"),
    opt(Opt::Unmap, Some('p'), &["unmap"], Flag, Yes, "Set flag to UNMAP on reads not selected"),
    opt(Opt::FetchPairs, Some('P'), &["fetch-pairs"], Flag, Yes, "Retrieve complete pairs even when outside of region"),
    opt(Opt::OutputFmt, Some('O'), &["output-fmt"], Arg, Yes, "FORMAT[,level=N]  Output format (SAM, BAM, SAM.gz) and level"),
    opt(Opt::OutputFmtOption, None, &["output-fmt-option"], Arg, Yes, "OPT=VAL  Output format option (level=N)"),
    opt(Opt::WriteIndex, None, &["write-index"], Flag, Yes, "Index the output (CSI; OUT##idx##OUT.bai for BAI)"),
    opt(Opt::NoPg, None, &["no-PG"], Flag, Yes, "Do not add a PG line"),
    opt(Opt::FaiReference, Some('t'), &["fai-reference"], Arg, Yes, "FILE  FILE listing reference names and lengths (ignored: BAM input has its own)"),
    opt(Opt::UseIndex, Some('M'), &["use-index"], Flag, Yes, "Use index and multi-region iterator for regions"),
    opt(Opt::RegionFile, None, &["region-file", "regions-file"], Arg, Yes, "FILE  Use index to include only reads overlapping FILE"),
    opt(Opt::CustomizedIndex, Some('X'), &["customized-index", "customised-index"], Flag, Yes, "Expect extra index file argument after FILE"),
    opt(Opt::InputFmtOption, None, &["input-fmt-option"], Arg, Yes, "OPT=VAL  Input format option (CRAM: reference, decode_md, ignore_md5)"),
    opt(Opt::Reference, Some('T'), &["reference"], Arg, Yes, "FILE  Reference sequence FASTA FILE"),
    opt(Opt::TargetFile, Some('L'), &["target-file", "targets-file"], Arg, Yes, "FILE  ...overlap (BED) regions in FILE"),
    opt(Opt::ReadGroup, Some('r'), &["read-group", "readgroup"], Arg, Yes, "STR  ...are in read group STR"),
    opt(Opt::ReadGroupFile, Some('R'), &["read-group-file", "readgroup-file"], Arg, Yes, "FILE  ...are in a read group listed in FILE"),
    opt(Opt::QnameFile, Some('N'), &["qname-file", "QNAME-file"], Arg, Yes, "FILE  ...whose read name is listed in FILE"),
    opt(Opt::Tag, Some('d'), &["tag"], Arg, Yes, "STR1[:STR2]  ...have a tag STR1 (with value STR2)"),
    opt(Opt::TagFile, Some('D'), &["tag-file"], Arg, Yes, "STR:FILE  ...have a tag STR whose value is listed in FILE"),
    opt(Opt::MinMq, Some('q'), &["min-MQ", "min-mapq", "min-mq"], Arg, Yes, "INT  ...have mapping quality >= INT"),
    opt(Opt::Library, Some('l'), &["library"], Arg, Yes, "STR  ...are in library STR"),
    opt(Opt::MinQlen, Some('m'), &["min-qlen"], Arg, Yes, "INT  ...cover >= INT query bases"),
    opt(Opt::Expr, Some('e'), &["expr", "expression"], Arg, Yes, "STR  ...match the filter expression STR"),
    opt(Opt::RequireFlags, Some('f'), &["require-flags"], Arg, Yes, "FLAG  ...have all of the FLAGs present"),
    opt(Opt::ExcludeFlags, Some('F'), &["excl-flags", "exclude-flags"], Arg, Yes, "FLAG  ...have none of the FLAGs present"),
    opt(Opt::IncludeFlags, None, &["rf", "incl-flags", "include-flags"], Arg, Yes, "FLAG  ...have some of the FLAGs present"),
    opt(Opt::ExcludeAllFlags, Some('G'), &[], Arg, Yes, "FLAG  EXCLUDE reads with all of the FLAGs present"),
    opt(Opt::Subsample, None, &["subsample"], Arg, Yes, "FLOAT  Keep only FLOAT fraction of templates/read pairs"),
    opt(Opt::SubsampleSeed, None, &["subsample-seed"], Arg, Yes, "INT  Influence WHICH reads are kept in subsampling"),
    opt(Opt::SubsampleLegacy, Some('s'), &[], Arg, Yes, "INT.FRAC  Same as --subsample 0.FRAC --subsample-seed INT"),
    opt(Opt::AddFlags, None, &["add-flags"], Arg, Yes, "FLAG  Add FLAGs to reads"),
    opt(Opt::RemoveFlags, None, &["remove-flags"], Arg, Yes, "FLAG  Remove FLAGs from reads"),
    opt(Opt::RemoveTag, Some('x'), &["remove-tag"], Arg, Yes, "STR  Comma-separated read tags to strip"),
    opt(Opt::KeepTag, None, &["keep-tag"], Arg, Yes, "STR  Comma-separated read tags to preserve"),
    opt(Opt::RemoveB, Some('B'), &["remove-B"], Flag, Yes, "Collapse the backward CIGAR operation"),
    opt(Opt::Help, Some('?'), &["help"], Flag, Yes, "Print this help"),
    opt(Opt::Ignored, Some('S'), &[], Flag, Yes, "Ignored (input format is auto-detected)"),
    opt(Opt::Threads, Some('@'), &["threads"], Arg, Yes, "INT  Number of additional threads to use [0]"),
    opt(Opt::Verbosity, Some('v'), &["verbosity"], Arg, Yes, "INT  1 and up: log every remote request, then a summary line, on stderr"),
    opt(Opt::RequestHeader, None, &["header"], Arg, Yes, "'Name: value'  Add a request header for remote files (repeatable)"),
    opt(Opt::FetchMode, None, &["fetch-mode"], Arg, Yes, "MODE  planned (one plan per query, spans fetched in parallel), per-chunk (PR #1998) or open-ended (htslib's bytes=X- requests)"),
    opt(Opt::Fetchers, None, &["fetchers"], Arg, Yes, "N  Remote files: up to N data requests in flight at once (and two tiny probes) [8; CRAM 6; --manifest 128, over all files]"),
    opt(Opt::PartSize, None, &["part-size"], Arg, Yes, "BYTES  Remote files: a range longer than this goes out as parts of this size, fetched at once (K, M suffixes) [1M]"),
    opt(Opt::ReadAhead, None, &["read-ahead"], Arg, Yes, "BYTES  Remote files: start a request ahead only while fewer bytes than this are still to arrive before it [8M]"),
    opt(Opt::NoCache, None, &["no-cache"], Flag, Yes, "Do not use the index cache ($XDG_CACHE_HOME/hts)"),
    opt(Opt::Timeout, None, &["timeout"], Arg, Yes, "SECS  Remote files: fail if the query is not over after SECS seconds [$HTS_TIMEOUT, else none]"),
    opt(Opt::S3Endpoint, None, &["s3-endpoint"], Arg, Yes, "URL  S3-compatible endpoint for s3:// (default: AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the AWS profile, else AWS)"),
    opt(Opt::RequesterPays, None, &["requester-pays"], Flag, Yes, "Pay for s3:// requests to a requester-pays bucket"),
    opt(Opt::Manifest, None, &["manifest"], Arg, Yes, "FILE  A cohort: every sample of FILE (sample<TAB>file[<TAB>index], a header line) in one process; with -c (sample<TAB>count) or -o TEMPLATE naming {sample}"),
    opt(Opt::Jobs, None, &["jobs"], Arg, Yes, "N  With --manifest: files worked at once [64]"),
];

/// A usage error (exit status 1). A bad option is printed as `hts view: <message>` followed by
/// the usage (unless `show_usage` is false: a value samtools refuses without it, such as a BED
/// file it cannot read); an option hts does not support yet is printed as its message alone.
#[derive(Debug)]
pub struct UsageError {
    pub message: String,
    pub show_usage: bool,
}

impl UsageError {
    fn usage(message: String) -> UsageError {
        UsageError {
            message,
            show_usage: true,
        }
    }

    /// True for an option samtools has and hts does not support yet.
    pub fn is_unsupported(&self) -> bool {
        self.message.starts_with("hts view does not support")
    }
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// The usage text, from the table.
pub fn usage() -> String {
    let mut out = String::from(
        "\nUsage: hts view [options] FILE|- [INDEX] [REGION ...]\n\n\
         FILE may be a local path, an http(s):// URL or another registered scheme, or - for\n\
         standard input (BAM or CRAM; no regions). INDEX (with -X) likewise.\n\
         REGION: chr, chr:beg, chr:beg-end, {name}:beg-end, . (all) or * (unplaced reads).\n\nOptions:\n",
    );
    let name = |o: &ViewOption| {
        let mut s = String::new();
        match o.spec.short {
            Some(c) => s.push_str(&format!("  -{c}")),
            None => s.push_str("    "),
        }
        for (i, l) in o.spec.long.iter().enumerate() {
            s.push_str(if i == 0 && o.spec.short.is_some() {
                ", --"
            } else if i == 0 {
                "  --"
            } else {
                ", --"
            });
            s.push_str(l);
        }
        s
    };
    for o in VIEW_OPTIONS.iter().filter(|o| o.support == Yes) {
        let (arg, text) = match o.help.split_once("  ") {
            Some((a, t)) if o.spec.value == Arg => (format!(" {a}"), t),
            _ => (String::new(), o.help),
        };
        let left = format!("{}{arg}", name(o));
        if left.len() > 34 {
            out.push_str(&format!("{left}\n{:<34} {text}\n", ""));
        } else {
            out.push_str(&format!("{left:<34} {text}\n"));
        }
    }
    out.push_str("\nsamtools view options hts does not support yet:\n  ");
    let missing: Vec<String> = VIEW_OPTIONS
        .iter()
        .filter(|o| o.support == No)
        .map(|o| {
            o.spec
                .short
                .map(|c| format!("-{c}"))
                .unwrap_or_else(|| format!("--{}", o.spec.long[0]))
        })
        .collect();
    out.push_str(&missing.join(" "));
    out.push('\n');
    out
}

/// Parses the arguments after `view`.
pub fn parse_view(args: &[String]) -> Result<ViewArgs, UsageError> {
    let table: Vec<Spec<Opt>> = VIEW_OPTIONS.iter().map(|o| o.spec).collect();
    let parsed = getopt::parse(&table, args).map_err(|e| UsageError::usage(e.to_string()))?;
    let mut out = ViewArgs {
        compress_level: -1,
        positional: parsed.positional,
        ..ViewArgs::default()
    };
    for found in parsed.options {
        let info = VIEW_OPTIONS
            .iter()
            .find(|o| o.spec.id == found.id)
            .ok_or_else(|| UsageError::usage(format!("unknown option {}", found.spelled)))?;
        if info.support == No {
            return Err(UsageError::usage(format!(
                "hts view does not support option {} yet",
                found.spelled
            )));
        }
        view_args::apply(
            &mut out,
            found.id,
            &found.spelled,
            found.value.as_deref().unwrap_or(""),
        )?;
    }
    if out.timeout.is_none() {
        if let Some(v) = std::env::var("HTS_TIMEOUT").ok().filter(|v| !v.is_empty()) {
            out.timeout = Some(seconds("HTS_TIMEOUT", &v)?);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use samtools::view::{HeaderMode, OutFmt};

    fn p(args: &[&str]) -> Result<ViewArgs, UsageError> {
        parse_view(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn samtools_spellings() {
        let a = p(&["-hc", "-F4", "-q", "30", "x.bam", "-f", "0x2", "chr1", "*"]).unwrap();
        assert_eq!(a.header, HeaderMode::With);
        assert!(a.count);
        assert_eq!((a.exclude_flags, a.require_flags, a.min_mapq), (4, 2, 30));
        assert_eq!(a.positional, ["x.bam", "chr1", "*"]);
        let a = p(&[
            "--min-MQ=5",
            "--excl-flags",
            "UNMAP,secondary",
            "--with-header",
            "--no-header",
            "-S",
            "x",
        ])
        .unwrap();
        assert_eq!(
            (a.min_mapq, a.exclude_flags, a.header),
            (5, 0x104, HeaderMode::None)
        );
        let a = p(&[
            "--customized-index",
            "--require-flags",
            "010",
            "--header-only",
            "x",
        ])
        .unwrap();
        assert!(a.explicit_index);
        assert_eq!((a.require_flags, a.header), (8, HeaderMode::Only));
    }

    #[test]
    fn output_options() {
        let a = p(&[
            "-O",
            "BAM,level=3",
            "--output-fmt-option",
            "LEVEL=0x2",
            "-u",
            "-o",
            "o.bam",
            "--write-index",
            "x",
        ])
        .unwrap();
        assert_eq!(a.output_fmt, Some(OutFmt::Bam));
        assert_eq!(
            a.fmt_options,
            [
                ("level".to_string(), "3".to_string()),
                ("level".to_string(), "0x2".to_string())
            ]
        );
        assert_eq!((a.compress_level, a.write_index), (0, true));
        assert!(p(&["-O", "xml", "x"]).is_err());
        assert!(p(&["--output-fmt-option", "Level=1", "x"]).is_err());
    }

    #[test]
    fn unsupported_options_say_so() {
        let e = p(&["-C", "x"]).unwrap_err().message;
        assert_eq!(e, "hts view does not support option -C yet");
        assert_eq!(p(&["-Z"]).unwrap_err().message, "invalid option -- 'Z'");
        let e = p(&["-L", "/nonexistent.bed", "x"]).unwrap_err();
        assert!(!e.show_usage && !e.is_unsupported(), "{}", e.message);
        assert!(p(&["-?"]).unwrap().help);
    }

    #[test]
    fn selection_options_reach_select_args() {
        let a = p(&[
            "-M",
            "-q3",
            "--rf",
            "PAIRED",
            "-G",
            "0x10",
            "-e",
            "mapq>1",
            "-r",
            "g1",
            "-x",
            "NM,MD",
            "-U",
            "u.sam",
            "--subsample=0.5",
            "-t",
            "ref.fai",
            "x",
            "chr1",
        ])
        .unwrap();
        let s = &a.select;
        assert!(s.multi_region);
        assert_eq!((a.min_mapq, s.require_any, s.exclude_all), (3, 1, 0x10));
        assert_eq!(s.expression.as_deref(), Some("mapq>1"));
        assert_eq!(s.remove_tags.as_ref().map(|t| t.len()), Some(2));
        assert_eq!(s.unselected.as_deref(), Some("u.sam"));
        assert_eq!(s.subsample_fraction, 0.5);
        assert_eq!(a.positional, ["x", "chr1"]);
        let e = p(&["-x", "NMX", "x"]).unwrap_err();
        assert!(e.show_usage && !e.is_unsupported());
    }

    #[test]
    fn every_samtools_short_option_is_known() {
        for c in "SbBcCt:h1Ho:O:q:f:F:G:ul:r:T:R:N:d:D:L:s:@:m:x:U:MXe:pP"
            .chars()
            .filter(|c| *c != ':')
        {
            assert!(VIEW_OPTIONS.iter().any(|o| o.spec.short == Some(c)), "-{c}");
        }
        assert!(usage().contains("--write-index"));
    }
}

#[cfg(test)]
mod plan_tests;
