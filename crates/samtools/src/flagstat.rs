//! `samtools flagstat`: counts by FLAG category, QC-passed and QC-failed apart, printed in
//! samtools 1.16.1's three formats.

use std::io::{self, Write};

use bam::Record;

use crate::warning::{reason, Warning};

/// One count per QC state: index 0 QC-passed, 1 QC-failed.
type Pair = [u64; 2];

/// The flagstat counters (`bam_flagstat_t`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FlagStat {
    /// Every record.
    pub total: Pair,
    /// Records neither secondary nor supplementary.
    pub primary: Pair,
    /// Secondary alignments (0x100).
    pub secondary: Pair,
    /// Supplementary alignments (0x800).
    pub supplementary: Pair,
    /// Duplicates (0x400).
    pub duplicates: Pair,
    /// Primary records that are duplicates.
    pub primary_duplicates: Pair,
    /// Mapped records (0x4 clear).
    pub mapped: Pair,
    /// Primary records that are mapped.
    pub primary_mapped: Pair,
    /// Primary records paired in sequencing (0x1).
    pub paired: Pair,
    /// Paired primary records that are read 1 (0x40).
    pub read1: Pair,
    /// Paired primary records that are read 2 (0x80).
    pub read2: Pair,
    /// Paired primary records mapped in a proper pair (0x2, 0x4 clear).
    pub properly_paired: Pair,
    /// Paired primary records mapped, with their mate mapped.
    pub both_mapped: Pair,
    /// Paired primary records mapped, with their mate unmapped.
    pub singletons: Pair,
    /// Paired primary records mapped with their mate mapped to another reference.
    pub mate_other_chr: Pair,
    /// The same, with MAPQ 5 or more.
    pub mate_other_chr_q5: Pair,
}

/// The output formats of `flagstat -O`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// samtools' text lines (`N + M description`).
    #[default]
    Default,
    /// `-O json`.
    Json,
    /// `-O tsv`.
    Tsv,
}

impl Format {
    /// `json`/`JSON` and `tsv`/`TSV`; anything else is the default format, as in samtools.
    pub fn from_arg(s: &str) -> Format {
        match s {
            "json" | "JSON" => Format::Json,
            "tsv" | "TSV" => Format::Tsv,
            _ => Format::Default,
        }
    }
}

impl FlagStat {
    /// Counts one record (`flagstat_loop`).
    pub fn add<D: AsRef<[u8]>>(&mut self, r: &Record<D>) {
        let f = r.flags();
        let w = usize::from(f.is_qc_fail());
        let unmapped = f.is_unmapped();
        let mate_unmapped = f.is_mate_unmapped();
        self.total[w] += 1;
        if f.is_secondary() {
            self.secondary[w] += 1;
        } else if f.is_supplementary() {
            self.supplementary[w] += 1;
        } else {
            self.primary[w] += 1;
            if f.is_paired() {
                self.paired[w] += 1;
                if f.is_proper_pair() && !unmapped {
                    self.properly_paired[w] += 1;
                }
                if f.is_read1() {
                    self.read1[w] += 1;
                }
                if f.is_read2() {
                    self.read2[w] += 1;
                }
                if mate_unmapped && !unmapped {
                    self.singletons[w] += 1;
                }
                if !unmapped && !mate_unmapped {
                    self.both_mapped[w] += 1;
                    if r.mate_ref_id() != r.ref_id() {
                        self.mate_other_chr[w] += 1;
                        if r.mapq() >= 5 {
                            self.mate_other_chr_q5[w] += 1;
                        }
                    }
                }
            }
            if !unmapped {
                self.primary_mapped[w] += 1;
            }
            if f.is_duplicate() {
                self.primary_duplicates[w] += 1;
            }
        }
        if !unmapped {
            self.mapped[w] += 1;
        }
        if f.is_duplicate() {
            self.duplicates[w] += 1;
        }
    }

    /// The lines of the report in order: the JSON key, the text of the other two formats, the
    /// counts, and what a percentage is taken of (for the lines that have one).
    fn rows(&self) -> [(&'static str, &'static str, &Pair, Option<&Pair>); 16] {
        const QC: &str = "total (QC-passed reads + QC-failed reads)";
        const OTHER: &str = "with mate mapped to a different chr";
        [
            ("total", QC, &self.total, None),
            ("primary", "primary", &self.primary, None),
            ("secondary", "secondary", &self.secondary, None),
            ("supplementary", "supplementary", &self.supplementary, None),
            ("duplicates", "duplicates", &self.duplicates, None),
            (
                "primary duplicates",
                "primary duplicates",
                &self.primary_duplicates,
                None,
            ),
            ("mapped", "mapped", &self.mapped, Some(&self.total)),
            (
                "primary mapped",
                "primary mapped",
                &self.primary_mapped,
                Some(&self.primary),
            ),
            (
                "paired in sequencing",
                "paired in sequencing",
                &self.paired,
                None,
            ),
            ("read1", "read1", &self.read1, None),
            ("read2", "read2", &self.read2, None),
            (
                "properly paired",
                "properly paired",
                &self.properly_paired,
                Some(&self.paired),
            ),
            (
                "with itself and mate mapped",
                "with itself and mate mapped",
                &self.both_mapped,
                None,
            ),
            (
                "singletons",
                "singletons",
                &self.singletons,
                Some(&self.paired),
            ),
            (OTHER, OTHER, &self.mate_other_chr, None),
            (
                "with mate mapped to a different chr (mapQ >= 5)",
                "with mate mapped to a different chr (mapQ>=5)",
                &self.mate_other_chr_q5,
                None,
            ),
        ]
    }

    /// Prints the counts as `samtools flagstat -O FORMAT` does.
    pub fn write(&self, format: Format, out: &mut impl Write) -> io::Result<()> {
        match format {
            Format::Default => {
                for (i, (_, text, p, of)) in self.rows().into_iter().enumerate() {
                    let text = if i == 0 {
                        "in total (QC-passed reads + QC-failed reads)"
                    } else {
                        text
                    };
                    write!(out, "{} + {} {text}", p[0], p[1])?;
                    if let Some(of) = of {
                        let pct = |w: usize| percent(p[w], of[w], "N/A", "%");
                        write!(out, " ({} : {})", pct(0), pct(1))?;
                    }
                    writeln!(out)?;
                }
                Ok(())
            }
            Format::Tsv => {
                for (_, text, p, of) in self.rows() {
                    writeln!(out, "{}\t{}\t{text}", p[0], p[1])?;
                    if let Some(of) = of {
                        let pct = |w: usize| percent(p[w], of[w], "N/A", "%");
                        writeln!(out, "{}\t{}\t{text} %", pct(0), pct(1))?;
                    }
                }
                Ok(())
            }
            Format::Json => {
                write!(out, "{{\n \"QC-passed reads\": {{ \n")?;
                self.json_block(out, 0)?;
                write!(out, " }},\n \"QC-failed reads\": {{ \n")?;
                self.json_block(out, 1)?;
                writeln!(out, " }}\n}}")
            }
        }
    }

    fn json_block(&self, out: &mut impl Write, w: usize) -> io::Result<()> {
        let rows = self.rows();
        for (i, (key, _, p, of)) in rows.iter().enumerate() {
            let sep = if i + 1 < rows.len() { "," } else { "" };
            write!(out, "  \"{key}\": {}", p[w])?;
            if let Some(of) = of {
                write!(
                    out,
                    ", \n  \"{key} %\": {}",
                    percent(p[w], of[w], "null", "")
                )?;
            }
            writeln!(out, "{sep} ")?;
        }
        Ok(())
    }
}

/// samtools' `percent`: `(float)n / total * 100.0` printed with `%.2f`, or `none` when the
/// total is 0.
fn percent(n: u64, total: u64, none: &str, suffix: &str) -> String {
    if total == 0 {
        return none.to_string();
    }
    let v = f64::from(n as f32 / total as f32) * 100.0;
    format!("{v:.2}{suffix}")
}

/// Why `flagstat` of a file failed; the caller words each as samtools does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// A BAM (or what is neither BAM nor CRAM) could not be opened: the reason.
    Open(String),
    /// Reading failed, or a CRAM could not be opened (samtools says "error reading" then):
    /// the reason.
    Read(String),
}

/// `samtools flagstat FILE`: the counts of every record of a BAM or a CRAM (told apart by their
/// first bytes), local, remote or standard input (`-`), read through the facade's reader (a
/// CRAM's without reference or bases: samtools needs neither here). A remote file's cached part
/// found stale is told to `warn`, and the file read again without the cache.
pub fn flagstat(
    file: &str,
    options: &hts::Options,
    warn: &mut dyn FnMut(Warning),
) -> Result<FlagStat, Failure> {
    let options = options.clone().without_bases(true);
    let counted = match count(file, &options, warn) {
        // Found stale once records were being read: the facade read none of the cache's since.
        Err(Counting::Read(e)) if e.is_stale() => {
            warn(Warning::Stale(e.to_string()));
            count(file, &options.no_cache(true), warn)
        }
        other => other,
    };
    counted.map_err(|e| match e {
        Counting::Open(e) => Failure::Open(reason(&e)),
        Counting::Read(e) => Failure::Read(reason(&e)),
    })
}

/// [`Failure`] with the facade's error, until a stale cache entry has been told apart.
enum Counting {
    Open(hts::Error),
    Read(hts::Error),
}

fn count(
    file: &str,
    options: &hts::Options,
    warn: &mut dyn FnMut(Warning),
) -> Result<FlagStat, Counting> {
    let mut reader = hts::alignment::Reader::open(file, options).map_err(|e| match e {
        hts::Error::Bam(_) => Counting::Open(e),
        // A CRAM that cannot be opened is "error reading" in samtools' words.
        e => Counting::Read(e),
    })?;
    let counted = count_records(&mut reader);
    if let Some(why) = reader.take_reopened() {
        warn(Warning::Stale(why));
    }
    counted.map_err(Counting::Read)
}

fn count_records(reader: &mut hts::alignment::Reader) -> hts::Result<FlagStat> {
    let mut stats = FlagStat::default();
    let mut records = reader.records()?;
    while let Some(r) = records.next_record_ref()? {
        stats.add(&r);
    }
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::testutil::Rec;

    #[test]
    fn counts_and_formats() {
        let mut s = FlagStat::default();
        for (flag, next_ref_id, mapq) in [
            (0x1 | 0x2 | 0x40, 0, 30),
            (0x1 | 0x80 | 0x8, 0, 30),
            (0x1 | 0x40, 1, 4),
            (0x1 | 0x40, 1, 5),
            (0x100, 0, 30),
            (0x800 | 0x400, 0, 30),
            (0x4 | 0x200, 0, 0),
        ] {
            s.add(
                &Rec {
                    flag,
                    next_ref_id,
                    mapq,
                    ..Rec::default()
                }
                .record(),
            );
        }
        let mut out = Vec::new();
        s.write(Format::Default, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.starts_with("6 + 1 in total (QC-passed reads + QC-failed reads)\n4 + 1 primary\n")
        );
        assert!(text.contains("6 + 0 mapped (100.00% : 0.00%)\n"));
        assert!(text.contains("1 + 0 singletons (25.00% : N/A)\n"));
        assert!(text.contains("2 + 0 with mate mapped to a different chr\n1 + 0 with mate mapped to a different chr (mapQ>=5)\n"));
        let mut out = Vec::new();
        s.write(Format::Json, &mut out).unwrap();
        let json = String::from_utf8(out).unwrap();
        assert!(json.starts_with("{\n \"QC-passed reads\": { \n  \"total\": 6, \n"));
        assert!(json.contains("  \"singletons %\": null, \n"));
        assert!(json.ends_with("(mapQ >= 5)\": 0 \n }\n}\n"));
        assert_eq!(percent(1, 3, "N/A", "%"), "33.33%");
        assert_eq!(percent(2, 3, "N/A", "%"), "66.67%");
    }
}
