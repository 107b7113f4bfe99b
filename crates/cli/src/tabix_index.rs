//! `hts tabix [-p PRESET] [-s -b -e -S -c -0 -C -m -f] FILE`: tabix 1.16's indexing mode,
//! writing `FILE.tbi` (or `FILE.csi` with `-C` or `-m`) as tabix writes it, with its messages.

use std::process::ExitCode;

use index::build::BuildError;
use index::tbi::Meta;
use tabix::build::BuildFailure;

use crate::tabix_conf::{preset, preset_by_name, Conf};

/// The columns tabix uses when no option fixed them: the preset the name picks, else VCF's
/// when the data starts as a VCF does (`hts_open`'s format detection), else the default
/// (GFF's columns).
fn detected(file: &str, data: &mut bgzf::Reader<hfile::HFile>) -> Option<Meta> {
    if let Some(m) = preset_by_name(file) {
        return Some(m);
    }
    let head = data.fill_block().ok()?;
    head.starts_with(b"##fileformat=VCF")
        .then(|| preset("vcf"))
        .flatten()
}

pub fn run(file: &str, c: &Conf) -> ExitCode {
    let opened = hfile::open(file, &Default::default())
        .map_err(|e| e.to_string())
        .and_then(|f| bgzf::Reader::with_name(f, file).map_err(|e| e.to_string()));
    let mut data = match opened {
        Ok(d) => d,
        Err(e) => {
            eprintln!("[tabix] {e}");
            return ExitCode::from(1);
        }
    };
    let mut m = c.meta.clone();
    let mut min_shift = c.min_shift;
    if c.detect {
        if let Some(d) = detected(file, &mut data) {
            if d.preset() == index::tbi::Preset::Vcf && min_shift == 0 && c.csi {
                min_shift = 14;
            }
            m = d;
        }
    }
    if c.csi && min_shift == 0 {
        min_shift = 14;
    }
    let csi = c.csi || min_shift != 0;
    let out = format!("{file}.{}", if csi { "csi" } else { "tbi" });
    if !c.force && std::path::Path::new(&out).exists() {
        eprintln!("[tabix] the index file exists. Please use '-f' to overwrite.");
        return ExitCode::from(1);
    }
    let min_shift = if csi {
        u32::try_from(min_shift).unwrap_or(14)
    } else {
        0
    };
    let kind = match m.preset() {
        index::tbi::Preset::Vcf => "TBX_VCF",
        index::tbi::Preset::Sam => "TBX_SAM",
        index::tbi::Preset::Generic => "TBX_GENERIC",
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
