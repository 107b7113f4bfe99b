//! What `view` writes and where, decided as samtools 1.16.1 decides it: the format from `-b`,
//! `-O`, the output file's extension and `-u`/`-1` (in `main_samview`, `sam_open_mode` and
//! `hts_open_format`), the compression level from `-u`/`-1` and `level=N`, when the header is
//! written, and the index file `--write-index` makes.

use bam::OutputFormat;
use index::build::Scheme;

use super::{OutFmt, ViewArgs};
use crate::numbers::atoi;

/// htslib's separator between a file name and its index name.
pub const IDX_DELIM: &str = "##idx##";

/// The output, decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// What is written: SAM, BAM, bgzipped SAM.
    pub format: OutputFormat,
    /// samtools-style level (-1: default).
    pub level: i64,
    /// The header is written even for SAM.
    pub force_header: bool,
    /// The file to write (`None`: standard output).
    pub path: Option<String>,
    /// With `--write-index`: where, and which kind.
    pub index: Option<(String, Scheme)>,
    /// samtools' "-u ignored" warning applies.
    pub warn_uncompressed_ignored: bool,
    /// Extra threads asked by `nthreads=N`.
    pub threads: Option<usize>,
}

/// Formats hts cannot write, named for the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported(pub &'static str);

/// `sam_open_mode` on the file's extension (`find_file_extension`): the mode letters.
fn mode_from_extension(path: &str) -> Option<&'static str> {
    let name = path.split(IDX_DELIM).next().unwrap_or(path);
    let b = name.as_bytes();
    let mut ext = b.len();
    let back = |from: usize| {
        let mut e = from;
        while e > 0 && b[e] != b'.' && b[e] != b'/' {
            e -= 1;
        }
        e
    };
    if ext == 0 {
        return None;
    }
    ext = back(ext - 1);
    let tail = &name[ext..];
    if b[ext] == b'.' && (tail == ".gz" || tail == ".bgz") && ext > 0 {
        ext = back(ext - 1);
    }
    let len = b.len() - ext;
    if b[ext] != b'.' || !(3..=9).contains(&len) {
        return None;
    }
    match name[ext + 1..].to_ascii_lowercase().as_str() {
        "bam" => Some("b"),
        "cram" => Some("c"),
        "sam" => Some(""),
        "sam.gz" => Some("z"),
        "fastq" | "fq" => Some("f"),
        "fastq.gz" | "fq.gz" => Some("fz"),
        "fasta" | "fa" => Some("F"),
        "fasta.gz" | "fa.gz" => Some("Fz"),
        _ => None,
    }
}

/// Decides the output to `path` (`-o`, or `-U`'s file) for `args` (samtools `main_samview`'s
/// mode string, then `hts_open_format`'s reading of it).
pub fn plan(args: &ViewArgs, path: Option<&str>) -> Result<Plan, Unsupported> {
    let path_arg = path.filter(|p| *p != "-");
    // out_mode after "w": the extension's letters.
    let mut mode = path_arg
        .and_then(mode_from_extension)
        .unwrap_or("")
        .to_string();
    let is_sam_name =
        path_arg.is_some_and(|p| p.len() >= 4 && p[p.len() - 4..].eq_ignore_ascii_case(".sam"));
    let mut warn = false;
    if args.out_format.is_none() && args.compress_level >= 0 {
        if args.compress_level == 0 && mode.ends_with('z') {
            warn = true;
        }
        if mode.is_empty() && !is_sam_name {
            mode = "b".to_string();
        }
    } else if let Some(f) = args.out_format {
        mode = mode.chars().skip(1).collect::<String>();
        mode.insert(0, f);
    }
    let mode_letter = mode.chars().next();
    // -O overrides the format letter; SAM with a level option is BGZF-compressed SAM.
    let has_level = args.fmt_options.iter().any(|(k, _)| k == "level");
    let mut bgzf = mode.contains('z');
    let kind = match args.output_fmt {
        Some(OutFmt::Bam) => 'b',
        Some(OutFmt::Cram) => 'c',
        Some(OutFmt::Sam) | Some(OutFmt::SamGz) | Some(OutFmt::Vcf) => {
            bgzf |= args.output_fmt == Some(OutFmt::SamGz) || has_level;
            't'
        }
        Some(OutFmt::Bcf) => 'b',
        Some(OutFmt::Fastq) | Some(OutFmt::FastqGz) => 'f',
        Some(OutFmt::Fasta) | Some(OutFmt::FastaGz) => 'F',
        None => mode
            .chars()
            .find(|c| matches!(c, 'b' | 'c' | 'f' | 'F'))
            .unwrap_or('t'),
    };
    let format = match kind {
        'b' if args.output_fmt == Some(OutFmt::Bcf) => return Err(Unsupported("BCF")),
        'b' => OutputFormat::Bam,
        'c' => return Err(Unsupported("CRAM")),
        'f' => return Err(Unsupported("FASTQ")),
        'F' => return Err(Unsupported("FASTA")),
        _ if args.output_fmt == Some(OutFmt::Vcf) => return Err(Unsupported("VCF")),
        _ if bgzf => OutputFormat::SamBgzf,
        _ => OutputFormat::Sam,
    };
    // The level: -u/-1 as the mode's digit, then level=N (applied after opening) wins.
    let mut level = i64::from(args.compress_level.max(-1));
    let mut threads = None;
    for (k, v) in &args.fmt_options {
        match k.as_str() {
            "level" => level = region::strtol(v.as_bytes(), 0).0,
            "nthreads" => threads = Some(atoi(v).max(0) as usize),
            _ => {}
        }
    }
    let force_header = args.write_index
        || matches!(mode_letter, Some('b' | 'c'))
        || !matches!(
            args.output_fmt,
            None | Some(OutFmt::Sam) | Some(OutFmt::SamGz)
        );
    let path = path_arg.map(|p| p.split(IDX_DELIM).next().unwrap_or(p).to_string());
    let index = match (&path, args.write_index) {
        (Some(p), true) => Some(index_for(path_arg.unwrap_or(p), p)),
        _ => None,
    };
    Ok(Plan {
        format,
        level,
        force_header,
        path,
        index,
        warn_uncompressed_ignored: warn,
        threads,
    })
}

/// samtools' `auto_index`: `OUT##idx##NAME` names the index (a `.bai` name makes a BAI),
/// else `OUT.csi`.
fn index_for(spelled: &str, path: &str) -> (String, Scheme) {
    let csi = Scheme::Csi {
        min_shift: 14,
        depth: 0, // replaced once the header's reference lengths are known
    };
    match spelled.split_once(IDX_DELIM) {
        Some((_, idx)) if idx.ends_with(".bai") => (idx.to_string(), Scheme::Bai),
        Some((_, idx)) => (idx.to_string(), csi),
        None => (format!("{path}.csi"), csi),
    }
}
