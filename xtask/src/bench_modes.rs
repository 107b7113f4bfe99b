//! The ways `bench-remote` runs a query (modes), how each reaches the file (transports), and
//! the formats queried.

use std::path::{Path, PathBuf};

use crate::bench_remote::Options;
/// A way of running a query, and whether a second (warm) run follows each cold one.
pub(crate) struct Mode {
    pub(crate) name: String,
    pub(crate) program: PathBuf,
    /// The arguments before the file: the subcommand (`view`, `tabix`) and options.
    pub(crate) extra: Vec<String>,
    pub(crate) warm: bool,
    pub(crate) transport: Transport,
}

impl Mode {
    /// A mode run cold and warm.
    pub(crate) fn new(name: &str, program: &Path, extra: &[&str], transport: Transport) -> Mode {
        Mode {
            name: name.to_string(),
            program: program.to_path_buf(),
            extra: extra.iter().map(|s| s.to_string()).collect(),
            warm: true,
            transport,
        }
    }
}

/// How a mode reaches the benchmark BAM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Transport {
    /// Plain HTTP from the benchmark server.
    Http,
    /// `s3://bench/...` from s3s-fs behind the same link (hts's signer).
    S3,
    /// `s3+http://bench/...` through htslib's S3 plugin (samtools).
    HtslibS3,
    /// Plain HTTP GETs of boto3's pre-signed URLs (the signature in the query) from the same
    /// s3s-fs behind the same link: the store's cost without the client's signing, what users
    /// of pre-signed URLs see.
    Presigned,
    /// Plain HTTP from the file server through the same proxy and link as s3s-fs: the test
    /// bed's proxy without the store.
    Proxied,
}

/// What is queried: the benchmark BAM by `view -X` against samtools, or the benchmark VCF by
/// `tabix` against tabix 1.16.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Bam,
    Vcf,
    /// The benchmark CRAM by `view -T REF -X` against samtools (`bench_remote_cram`).
    Cram,
}

impl Format {
    /// The program hts is compared with.
    pub fn baseline(self) -> &'static str {
        match self {
            Format::Bam | Format::Cram => "samtools",
            Format::Vcf => "tabix",
        }
    }

    /// The index served beside the data (the one the URL's users would have).
    pub(crate) fn index_ext(self) -> &'static str {
        match self {
            Format::Bam => "bai",
            Format::Vcf => "tbi",
            Format::Cram => "crai",
        }
    }

    /// The arguments of a query of `url` after the mode's own: samtools and hts view name the
    /// index (`-X`); tabix finds it beside the data as a user's `tabix URL REGION` does.
    pub(crate) fn query_args(
        self,
        url: String,
        index_url: String,
        regions: &[String],
    ) -> Vec<String> {
        let mut args = match self {
            Format::Bam => vec!["-X".to_string(), url, index_url],
            Format::Vcf => vec![url],
            Format::Cram => crate::bench_remote_cram::query_args(url, index_url),
        };
        args.extend(regions.iter().cloned());
        args
    }
}

pub(crate) fn vcf_modes(hts: &Path, tabix: Option<&Path>, opts: &Options) -> Vec<Mode> {
    let mode = Mode::new;
    let mut modes = vec![mode("hts", hts, &["tabix"], Transport::Http)];
    if let Some(t) = tabix {
        modes.push(mode("tabix", t, &[], Transport::Http));
    }
    if opts.s3 {
        modes.push(mode("hts-s3", hts, &["tabix"], Transport::S3));
        if let Some(t) = tabix {
            modes.push(mode("tabix-s3", t, &[], Transport::HtslibS3));
        }
    }
    modes
}

pub(crate) fn modes(hts: &Path, samtools: Option<&Path>, opts: &Options) -> Vec<Mode> {
    let hts_mode = |name: &str, extra: &[&str], warm: bool| Mode {
        name: name.to_string(),
        program: hts.to_path_buf(),
        extra: std::iter::once("view")
            .chain(extra.iter().copied())
            .map(str::to_string)
            .collect(),
        warm,
        transport: Transport::Http,
    };
    let threads = opts.threads.to_string();
    let mut modes = vec![
        hts_mode(
            "htslib",
            &["--fetch-mode", "open-ended", "--no-cache"],
            false,
        ),
        hts_mode(
            "pr1998",
            &["--fetch-mode", "per-chunk", "--no-cache"],
            false,
        ),
        hts_mode("hts", &["-@", &threads], true),
    ];
    if opts.fetchers_sweep {
        for f in ["1", "2", "4", "8"] {
            modes.push(hts_mode(
                &format!("hts f{f}"),
                &["-@", &threads, "--fetchers", f],
                false,
            ));
        }
    }
    for (name, extra) in &opts.variants {
        let mut args = vec!["-@", &threads];
        args.extend(extra.iter().map(String::as_str));
        modes.push(hts_mode(&format!("hts {name}"), &args, false));
    }
    if let Some(old) = &opts.old_hts {
        modes.push(Mode {
            program: old.clone(),
            ..hts_mode("old", &["-@", &threads], false)
        });
    }
    let samtools_mode = |name: &str, program: &Path, transport| Mode {
        name: name.to_string(),
        program: program.to_path_buf(),
        extra: vec!["view".to_string()],
        warm: true,
        transport,
    };
    if let Some(s) = samtools {
        modes.push(samtools_mode("samtools", s, Transport::Http));
    }
    if opts.s3 {
        modes.push(Mode {
            transport: Transport::S3,
            ..hts_mode("hts-s3", &["-@", &threads], true)
        });
        // Cold only: they take the gap apart, the signing client's share (hts-s3 against
        // hts-presigned), the store's (hts-presigned against hts-proxied) and the proxy's.
        modes.push(Mode {
            transport: Transport::Presigned,
            ..hts_mode("hts-presigned", &["-@", &threads], false)
        });
        modes.push(Mode {
            transport: Transport::Proxied,
            ..hts_mode("hts-proxied", &["-@", &threads], false)
        });
        if let Some(old) = &opts.old_hts {
            modes.push(Mode {
                program: old.clone(),
                transport: Transport::S3,
                ..hts_mode("old-s3", &["-@", &threads], false)
            });
        }
        if let Some(s) = samtools {
            modes.push(samtools_mode("samtools-s3", s, Transport::HtslibS3));
        }
    }
    modes
}
