//! The cohort manifest: a TSV with a header line, `sample<TAB>file[<TAB>index]`, the format the
//! cohort workflow (`workflows/cohort/cohort.py`) reads, with the same rules: blank lines and
//! `#` comments skipped, sample names `[A-Za-z0-9._-]+` and unique, `FILE##idx##INDEX` naming
//! the index too, URLs (pre-signed, `s3://`, `gs://`) kept verbatim.

use crate::{Error, Result};

/// One sample of a manifest: its name, its file (path or URL), its index when named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample {
    /// The sample's name, as output templates and counts name it.
    pub name: String,
    /// The BAM or CRAM file (without a `##idx##` part).
    pub file: String,
    /// The index, when the manifest names one (else found beside the file as htslib does).
    pub index: Option<String>,
}

/// Reads the manifest at `path` (a local file).
pub fn read_manifest(path: &str) -> Result<Vec<Sample>> {
    let text = std::fs::read(path).map_err(|e| bad(path, format!("cannot read it: {e}")))?;
    let text = String::from_utf8(text).map_err(|_| bad(path, "not UTF-8 text"))?;
    parse_manifest(&text, path)
}

/// Parses a manifest's text; `name` is what errors call it.
pub fn parse_manifest(text: &str, name: &str) -> Result<Vec<Sample>> {
    let mut rows = text
        .lines()
        .enumerate()
        .map(|(i, line)| (i + 1, line.trim_end_matches('\r')))
        .filter(|(_, line)| !line.trim().is_empty() && !line.starts_with('#'));
    let header: Vec<&str> = match rows.next() {
        Some((_, line)) => line.split('\t').map(str::trim).collect(),
        None => return Err(bad(name, "no header line")),
    };
    // The workflow's header says `bam`; a cohort of CRAMs may say `cram` or `file`.
    let known = matches!(
        header.as_slice(),
        ["sample", "bam" | "cram" | "file"] | ["sample", "bam" | "cram" | "file", "index"]
    );
    if !known {
        return Err(bad(
            name,
            "the header must be 'sample<TAB>file[<TAB>index]' (or bam, cram for file)",
        ));
    }
    let width = header.len();
    let mut samples: Vec<Sample> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (n, line) in rows {
        let at = format!("{name}:{n}");
        let fields: Vec<&str> = line.split('\t').map(str::trim).collect();
        if fields.len() != 2 && fields.len() != width {
            let message = format!("{} columns, expected {width}", fields.len());
            return Err(bad(&at, message));
        }
        let sample = fields[0];
        let valid = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
        if sample.is_empty() || !sample.chars().all(valid) {
            return Err(bad(
                &at,
                format!("sample name '{sample}' is not [A-Za-z0-9._-]+"),
            ));
        }
        if !seen.insert(sample.to_string()) {
            return Err(bad(&at, format!("sample '{sample}' is listed twice")));
        }
        let mut index = fields
            .get(2)
            .filter(|i| !i.is_empty())
            .map(|i| i.to_string());
        let split = hfile::split_index(fields[1]);
        if let Some(named) = split.index {
            if index.as_deref().is_some_and(|i| i != named) {
                return Err(bad(&at, format!("two different indexes for '{sample}'")));
            }
            index = Some(named.to_string());
        }
        if split.file.is_empty() {
            return Err(bad(&at, format!("no file for '{sample}'")));
        }
        samples.push(Sample {
            name: sample.to_string(),
            file: split.file.to_string(),
            index,
        });
    }
    if samples.is_empty() {
        return Err(bad(name, "no samples"));
    }
    Ok(samples)
}

fn bad(at: &str, message: impl std::fmt::Display) -> Error {
    Error::Format {
        file: hfile::redact_text(at),
        message: message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workflow_format() {
        let text = "# cohort\nsample\tbam\tindex\ns1\ta.bam\ta.bam.csi\n\ns2\thttps://h/b.cram\n\
                    s3\tc.bam##idx##c.bai\t\n";
        let samples = parse_manifest(text, "m.tsv").unwrap();
        assert_eq!(samples.len(), 3);
        assert_eq!(samples[0].index.as_deref(), Some("a.bam.csi"));
        assert_eq!(
            (samples[1].file.as_str(), samples[1].index.as_ref()),
            ("https://h/b.cram", None)
        );
        assert_eq!(
            (samples[2].file.as_str(), samples[2].index.as_deref()),
            ("c.bam", Some("c.bai"))
        );
    }

    #[test]
    fn bad_manifests_say_where() {
        let e = |text: &str| parse_manifest(text, "m.tsv").unwrap_err().to_string();
        assert!(e("").contains("no header line"));
        assert!(e("name\tpath\n").contains("the header must be"));
        assert!(e("sample\tfile\n").contains("no samples"));
        assert!(e("sample\tfile\na b\tx\n").starts_with("m.tsv:2: sample name"));
        assert!(e("sample\tfile\ns\tx\ns\ty\n").starts_with("m.tsv:3: sample 's' is listed twice"));
        assert!(e("sample\tfile\ns\tx\ty\tz\n").starts_with("m.tsv:2: 4 columns"));
        assert!(e("sample\tfile\tindex\ns\tx##idx##a\tb\n").contains("two different indexes"));
    }
}
