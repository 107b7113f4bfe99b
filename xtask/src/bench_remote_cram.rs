//! The CRAM side of `bench-remote` (`--format cram`): the benchmark CRAM served from the cache
//! folder with its `.crai`, queried by `hts view` and `samtools view` with the same local
//! reference (`-T`, the FASTA and its `.fai`): the reference bytes are read from the local disk
//! by both, and only the CRAM and its index cross the emulated link.

use std::path::{Path, PathBuf};

use crate::bench_remote::{Mode, Options, Transport};

/// The arguments of a query before its regions: the reference, then the file and its index.
pub(crate) fn query_args(url: String, index_url: String) -> Vec<String> {
    vec![
        "-T".to_string(),
        crate::bench_cram::ref_path().display().to_string(),
        "-X".to_string(),
        url,
        index_url,
    ]
}

/// hts (`-@ 2`, as the BAM cases run it), the `--old-hts` build and the `--variants` if given, and samtools (its default, one thread), over HTTP and,
/// with the s3 transport, hts over `s3://` and samtools through htslib's S3 plugin.
pub(crate) fn modes(hts: &Path, samtools: Option<&Path>, opts: &Options) -> Vec<Mode> {
    let threads = opts.threads.to_string();
    let mode = Mode::new;
    let hts_args = ["view", "-@", threads.as_str()];
    let mut modes = vec![mode("hts", hts, &hts_args, Transport::Http)];
    // Another build beside this one, cold only, run in turn with it (`--old-hts`).
    let old = |name: &str, transport| {
        let program = opts.old_hts.as_deref()?;
        Some(Mode {
            warm: false,
            ..mode(name, program, &hts_args, transport)
        })
    };
    modes.extend(old("old", Transport::Http));
    // `--variants`: this build with more options, cold only, as for the BAM.
    for (name, extra) in &opts.variants {
        let mut args: Vec<&str> = hts_args.to_vec();
        args.extend(extra.iter().map(String::as_str));
        modes.push(Mode {
            warm: false,
            ..mode(&format!("hts {name}"), hts, &args, Transport::Http)
        });
    }
    if let Some(s) = samtools {
        modes.push(mode("samtools", s, &["view"], Transport::Http));
    }
    if opts.s3 {
        modes.push(mode("hts-s3", hts, &hts_args, Transport::S3));
        modes.extend(old("old-s3", Transport::S3));
        if let Some(s) = samtools {
            modes.push(mode("samtools-s3", s, &["view"], Transport::HtslibS3));
        }
    }
    modes
}

/// The folder served (the cache folder, as for the BAM: clients name the index with `-X`), the
/// CRAM's name in it, and its path.
pub(crate) fn served(args: &[String]) -> Result<(PathBuf, String, PathBuf), String> {
    let (cram, _) = crate::bench_cram::existing(args)?;
    let file = crate::bench_cram::file_name(&cram)?;
    Ok((crate::bench_data::cache_dir(), file, cram))
}
