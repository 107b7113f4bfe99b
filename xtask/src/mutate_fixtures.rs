//! The fixtures `cargo xtask mutate` damages, and the commands each is run with: the whole
//! file and region lists (CRAM at `-@ 0` and `-@ 2`, `-M` among them), with the references
//! the CRAM fixtures need.

use std::path::Path;

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Format {
    Cram,
    Tabix,
}

/// A fixture: its file (in the work's copy of the fixtures), its index's suffix, the options
/// before the file, and the region lists queried.
pub(crate) struct Fixture {
    pub(crate) format: Format,
    pub(crate) file: &'static str,
    pub(crate) index: Option<&'static str>,
    options: &'static [&'static str],
    regions: &'static [&'static [&'static str]],
}

const R1: &[&str] = &["ref1:1000-3000", "ref2", "ref3:700-800"];
const R2: &[&str] = &["ref1:5990", "*"];
const RM: &[&str] = &["-M", "ref1:100-200", "ref2:5-10", "ref3:700-800", "*"];

pub(crate) const FIXTURES: &[Fixture] = &[
    cram("aligned-3.0.cram", true, &["-T", "ref.fa"], &[R1, R2, RM]),
    cram(
        "aligned-3.0-slices.cram",
        true,
        &["-T", "ref.fa"],
        &[R1, R2, RM],
    ),
    cram(
        "aligned-3.0-multi.cram",
        true,
        &["-T", "ref.fa"],
        &[R1, R2, RM],
    ),
    cram("aligned-3.0-embed.cram", true, &[], &[R1, R2]),
    cram(
        "spaced-3.0.cram",
        true,
        &[],
        &[&["chr3:1000-200000", "chr1:1-3000"], &["chr1:90000-100000"]],
    ),
    cram(
        "blockreads-3.0.cram",
        true,
        &["-T", "block.fa.gz"],
        &[&["block:70050-70120", "block:1-1010"]],
    ),
    cram("aligned-2.1.cram", false, &["-T", "ref.fa"], &[]),
    cram("aligned-3.1.cram", false, &["-T", "ref.fa"], &[]),
    cram("aux-3.0.cram", false, &[], &[]),
    cram("binned-3.1-fqz.cram", false, &[], &[]),
    cram("ce1000-3.1-tok.cram", false, &[], &[]),
    cram("rand-3.1-arith.cram", false, &[], &[]),
    cram("long-3.0-noref.cram", false, &[], &[]),
    tabix(
        "many.vcf.gz",
        ".tbi",
        &[
            &["chr1:100000-150000"],
            &["chr2"],
            &["chr10:1000-2000", "chr1:200000-205000"],
        ],
    ),
    tabix(
        "many.csi.vcf.gz",
        ".csi",
        &[
            &["chr1:100000-150000"],
            &["chr2"],
            &["chr10:1000-2000", "chr1:200000-205000"],
        ],
    ),
    tabix("small.vcf.gz", ".tbi", &[&["chr1"], &["chr2:1-60000"]]),
    tabix("small.csi.vcf.gz", ".csi", &[&["chr1:250-350", "chr2"]]),
    tabix("plain.bed.gz", ".tbi", &[&["chr1:1-50", "chr2"]]),
    tabix("small.gff.gz", ".tbi", &[&["ctg1", "ctg2"]]),
    tabix("long.txt.gz", ".csi", &[&["c1"], &["c2"]]),
];

const fn cram(
    file: &'static str,
    crai: bool,
    options: &'static [&'static str],
    regions: &'static [&'static [&'static str]],
) -> Fixture {
    Fixture {
        format: Format::Cram,
        file,
        index: if crai { Some(".crai") } else { None },
        options,
        regions,
    }
}

const fn tabix(
    file: &'static str,
    index: &'static str,
    regions: &'static [&'static [&'static str]],
) -> Fixture {
    Fixture {
        format: Format::Tabix,
        file,
        index: Some(index),
        options: &[],
        regions,
    }
}

/// One command run on a fixture: the arguments after the program (and after `view` or
/// `tabix` for hts), and whether it reads the index.
pub(crate) struct Case {
    pub(crate) args: Vec<String>,
    pub(crate) indexed: bool,
}

impl Fixture {
    pub(crate) fn cases(&self, refs: &Path) -> Vec<Case> {
        let file = self.file.to_string();
        let mut out = Vec::new();
        if self.format == Format::Tabix {
            for r in self.regions {
                let mut args = vec![file.clone()];
                args.extend(r.iter().map(|s| s.to_string()));
                out.push(Case {
                    args,
                    indexed: true,
                });
            }
            return out;
        }
        let options: Vec<String> = self
            .options
            .iter()
            .map(|o| match *o {
                "ref.fa" | "block.fa.gz" => refs.join(o).display().to_string(),
                o => o.to_string(),
            })
            .collect();
        for threads in ["0", "2"] {
            let mut base = vec!["-@".to_string(), threads.to_string()];
            base.extend(options.iter().cloned());
            let mut whole = base.clone();
            whole.push(file.clone());
            out.push(Case {
                args: whole,
                indexed: false,
            });
            for r in self.regions {
                let mut args = base.clone();
                // `-M` goes before the file, as samtools' options do.
                args.extend(
                    r.iter()
                        .filter(|s| s.starts_with('-'))
                        .map(|s| s.to_string()),
                );
                args.push(file.clone());
                args.extend(
                    r.iter()
                        .filter(|s| !s.starts_with('-'))
                        .map(|s| s.to_string()),
                );
                out.push(Case {
                    args,
                    indexed: true,
                });
            }
        }
        out
    }
}
