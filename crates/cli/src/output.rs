//! What `view` writes and where, decided as samtools 1.16.1 decides it: the format from `-b`,
//! `-O`, the output file's extension and `-u`/`-1` (in `main_samview`, `sam_open_mode` and
//! `hts_open_format`), the compression level from `-u`/`-1` and `level=N`, when the header is
//! written, and the index file `--write-index` makes.

use bam::OutputFormat;
use index::build::Scheme;

use crate::args::{OutFmt, ViewArgs};
use crate::numbers::{atoi, strtol};

/// htslib's separator between a file name and its index name.
pub const IDX_DELIM: &str = "##idx##";

/// The output, decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
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
            "level" => level = strtol(v, 0).0,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::parse_view;

    fn plan_of(args: &[&str]) -> Result<Plan, Unsupported> {
        let mut v: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        v.push("in.bam".to_string());
        let args = parse_view(&v).unwrap();
        plan(&args, args.output.as_deref())
    }

    #[test]
    fn formats_as_samtools_picks_them() {
        let f = |a: &[&str]| plan_of(a).unwrap().format;
        assert_eq!(f(&[]), OutputFormat::Sam);
        assert_eq!(f(&["-b"]), OutputFormat::Bam);
        assert_eq!(f(&["-u"]), OutputFormat::Bam);
        assert_eq!(f(&["-1", "-o", "x.sam"]), OutputFormat::Sam);
        assert_eq!(f(&["-o", "x.bam"]), OutputFormat::Bam);
        assert_eq!(f(&["-o", "x.BAM"]), OutputFormat::Bam);
        assert_eq!(f(&["-o", "x.txt"]), OutputFormat::Sam);
        assert_eq!(f(&["-u", "-o", "x.txt"]), OutputFormat::Bam);
        assert_eq!(f(&["-o", "x.sam.gz"]), OutputFormat::SamBgzf);
        assert_eq!(f(&["-O", "sam", "-o", "x.bam"]), OutputFormat::Sam);
        assert_eq!(f(&["-O", "SAM,level=5"]), OutputFormat::SamBgzf);
        assert_eq!(f(&["-b", "-O", "sam"]), OutputFormat::Sam);
        assert_eq!(plan_of(&["-o", "x.cram"]), Err(Unsupported("CRAM")));
        assert_eq!(plan_of(&["-o", "x.fq"]), Err(Unsupported("FASTQ")));
    }

    #[test]
    fn header_level_and_index() {
        let p = plan_of(&["-b", "-O", "sam"]).unwrap();
        assert!(p.force_header);
        assert!(!plan_of(&["-O", "sam.gz"]).unwrap().force_header);
        assert_eq!(plan_of(&["-u"]).unwrap().level, 0);
        assert_eq!(
            plan_of(&["-u", "--output-fmt-option", "level=9"])
                .unwrap()
                .level,
            9
        );
        assert_eq!(plan_of(&["-b"]).unwrap().level, -1);
        let p = plan_of(&["-b", "--write-index", "-o", "o.bam##idx##o.bam.bai"]).unwrap();
        assert_eq!(p.path.as_deref(), Some("o.bam"));
        assert_eq!(p.index.unwrap(), ("o.bam.bai".to_string(), Scheme::Bai));
        let p = plan_of(&["--write-index", "-o", "o.bam"]).unwrap();
        assert_eq!(p.index.unwrap().0, "o.bam.csi");
        assert!(
            plan_of(&["-u", "-o", "x.sam.gz"])
                .unwrap()
                .warn_uncompressed_ignored
        );
    }
}
