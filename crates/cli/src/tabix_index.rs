//! `hts tabix [-p PRESET] [-s -b -e -S -c -0 -C -m -f] FILE`: tabix 1.16's indexing mode,
//! writing `FILE.tbi` (or `FILE.csi` with `-C` or `-m`) as tabix writes it, with its messages.

use std::process::ExitCode;

use bam::index::build::BuildError;
use bam::index::tbi::{Meta, UCSC_FLAG};
use tabix::build::BuildFailure;

/// What the command line asks of the index.
#[derive(Default)]
pub struct Conf {
    pub preset: Option<String>,
    pub seq: Option<i32>,
    pub beg: Option<i32>,
    pub end: Option<i32>,
    pub skip: Option<i32>,
    pub comment: Option<i32>,
    pub zero: bool,
    pub csi: bool,
    pub min_shift: Option<i32>,
    pub force: bool,
}

fn meta(format: i32, cols: (i32, i32, i32), meta_char: u8) -> Meta {
    Meta {
        format,
        col_seq: cols.0,
        col_beg: cols.1,
        col_end: cols.2,
        meta_char: i32::from(meta_char),
        skip: 0,
        names: Vec::new(),
    }
}

/// tabix's presets (`tbx_conf_*`).
fn preset(name: &str) -> Option<Meta> {
    Some(match name {
        "gff" => meta(0, (1, 4, 5), b'#'),
        "bed" => meta(UCSC_FLAG, (1, 2, 3), b'#'),
        "sam" => meta(1, (3, 4, 0), b'@'),
        "vcf" => meta(2, (1, 2, 0), b'#'),
        _ => return None,
    })
}

/// The preset tabix picks for a file without `-p`, here by its name (tabix 1.16 reads the
/// format from the content for VCF and SAM; names are what users give those files).
fn detected(file: &str) -> Option<Meta> {
    let base = file
        .strip_suffix(".gz")
        .or_else(|| file.strip_suffix(".bgz"))
        .unwrap_or(file);
    let ext = base.rsplit('.').next().unwrap_or("");
    match ext {
        "vcf" => preset("vcf"),
        "bed" => preset("bed"),
        "gff" | "gff3" | "gtf" => preset("gff"),
        "sam" => preset("sam"),
        _ => None,
    }
}

pub fn run(file: &str, c: &Conf) -> ExitCode {
    let mut m = match &c.preset {
        Some(p) => match preset(p) {
            Some(m) => m,
            None => {
                eprintln!("The preset string not recognised: '{p}'");
                return ExitCode::from(1);
            }
        },
        None if c.seq.is_none() && c.beg.is_none() && c.end.is_none() => {
            detected(file).unwrap_or_else(|| meta(0, (1, 4, 5), b'#'))
        }
        None => {
            let mut m = meta(0, (1, 4, 5), b'#');
            m.col_seq = c.seq.unwrap_or(m.col_seq);
            m.col_beg = c.beg.unwrap_or(m.col_beg);
            m.col_end = c.end.unwrap_or(m.col_end);
            m
        }
    };
    if c.zero {
        m.format |= UCSC_FLAG;
    }
    if let Some(s) = c.skip {
        m.skip = s;
    }
    if let Some(ch) = c.comment {
        m.meta_char = ch;
    }
    let min_shift = match (c.min_shift, c.csi) {
        (Some(s), _) if s > 0 => u32::try_from(s).unwrap_or(14),
        (_, true) => 14,
        _ => 0,
    };
    let out = format!("{file}.{}", if min_shift > 0 { "csi" } else { "tbi" });
    if !c.force && std::path::Path::new(&out).exists() {
        eprintln!("[tabix] the index file exists. Please use '-f' to overwrite.");
        return ExitCode::from(1);
    }
    let opened = bam::hfile::open(file, &Default::default())
        .map_err(|e| e.to_string())
        .and_then(|f| bam::bgzf::Reader::with_name(f, file).map_err(|e| e.to_string()));
    let mut data = match opened {
        Ok(d) => d,
        Err(e) => {
            eprintln!("[tabix] {e}");
            return ExitCode::from(1);
        }
    };
    let kind = match m.preset() {
        bam::index::tbi::Preset::Vcf => "TBX_VCF",
        bam::index::tbi::Preset::Sam => "TBX_SAM",
        bam::index::tbi::Preset::Generic => "TBX_GENERIC",
    };
    let mut bad_line = |line: &[u8]| {
        eprintln!(
            "[E::get_intv] Failed to parse {kind}, was wrong -p [type] used?\n\
             The offending line was: \"{}\"",
            String::from_utf8_lossy(line)
        )
    };
    let bytes = match tabix::build::index(&mut data, &m, min_shift, &mut bad_line) {
        Ok(b) => b,
        Err(BuildFailure::NotBgzf) => {
            eprintln!("[tabix] the compression of '{file}' is not BGZF");
            return ExitCode::from(1);
        }
        Err(e) => {
            report(&e);
            eprintln!("tbx_index_build failed: {file}");
            return ExitCode::from(1);
        }
    };
    match std::fs::write(&out, bytes) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("[tabix] cannot write {out}: {e}");
            ExitCode::from(1)
        }
    }
}

fn report(e: &BuildFailure) {
    match e {
        BuildFailure::Push(BuildError::Unsorted { tid, previous, beg }) => eprintln!(
            "[E::hts_idx_push] Unsorted positions on sequence #{}: {} followed by {}",
            tid + 1,
            previous + 1,
            beg + 1
        ),
        BuildFailure::Push(BuildError::NotContiguous { .. }) => {
            eprintln!("[E::hts_idx_push] Chromosome blocks not continuous")
        }
        BuildFailure::Push(other) => eprintln!("[E::hts_idx_push] {other}"),
        BuildFailure::Read(e) => eprintln!("[tabix] {e}"),
        BuildFailure::Write(e) => eprintln!("[tabix] {e}"),
        BuildFailure::NotBgzf => {}
    }
}
