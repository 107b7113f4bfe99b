//! The layering rule as a check that can fail: each crate of [`LAYERS`] names only the crates
//! below it, in its manifest (normal and dev-dependencies) and in its Rust source (`use` lines
//! and paths). The chain is `hfile -> bgzf -> index -> bam -> hts -> samtools -> cli`, with
//! `tabix` and `cram` beside `bam` (on index, bgzf and hfile; none of the three names another),
//! `region` (the region vocabulary) under `index` and the formats, naming no crate itself,
//! `hts` (the facade for applications) on the three formats, and `samtools` (the commands'
//! semantics) on the facade, under the CLI; the Python package on the facade, beside them.
//!
//! Cargo already refuses a dependency cycle, but not a dev-dependency on a crate above, nor a
//! source file that reaches a crate above through a re-export; this check catches both. It
//! also shuts the back door a re-export opens: no crate re-exports another crate of the
//! workspace or its items (`pub use hfile;`, `pub use hfile::Hints;`), and no crate reaches one
//! through another's path (`bam::hfile::HFile`): a crate names each layer it uses itself, and
//! declares it.

use std::fs;
use std::path::{Path, PathBuf};

/// One crate and the workspace crates it may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layer {
    /// The folder under `crates/` and the name the others use (`bam::`, `bam.workspace`).
    pub name: &'static str,
    /// The crates it may name.
    pub below: &'static [&'static str],
}

/// The crates, lowest layer first.
pub const LAYERS: [Layer; 11] = [
    Layer {
        name: "region",
        below: &[],
    },
    Layer {
        name: "hfile",
        below: &[],
    },
    Layer {
        name: "bgzf",
        below: &["hfile"],
    },
    Layer {
        name: "index",
        below: &["bgzf", "hfile", "region"],
    },
    Layer {
        name: "bam",
        below: &["index", "bgzf", "hfile", "region"],
    },
    Layer {
        name: "tabix",
        below: &["index", "bgzf", "hfile", "region"],
    },
    Layer {
        name: "cram",
        below: &["index", "bgzf", "hfile", "region"],
    },
    // The facade: one reader for BAM and CRAM, one for tabix-indexed text.
    Layer {
        name: "hts",
        below: &["tabix", "cram", "bam", "index", "bgzf", "hfile", "region"],
    },
    // samtools' commands: on bam, and on the facade for what differs by format (which one a
    // file is, CRAM's reading); never on cram or tabix themselves.
    Layer {
        name: "samtools",
        below: &["hts", "bam", "index", "bgzf", "hfile", "region"],
    },
    Layer {
        name: "cli",
        below: &[
            "hts", "samtools", "tabix", "cram", "bam", "index", "bgzf", "hfile", "region",
        ],
    },
    // The Python package: on the readers and the facade, beside the CLI.
    Layer {
        name: "python",
        below: &["hts", "tabix", "bam", "index", "bgzf", "hfile", "region"],
    },
];

/// How a crate breaks the layering.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Breach {
    /// It names a crate that is not below it.
    NotBelow,
    /// It re-exports another crate of the workspace, or items of one: a back door through
    /// which its users reach a layer without declaring it.
    ReExport,
    /// It reaches a crate through this other crate's re-export (`bam::hfile::HFile`).
    Through(String),
}

/// One place where a crate breaks the layering.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The crate at fault.
    pub krate: String,
    /// The crate it names, re-exports or reaches through another.
    pub names: String,
    /// The file, and the line (1-based; 0 for a manifest table entry).
    pub file: PathBuf,
    pub line: usize,
    /// How.
    pub breach: Breach,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = format!("{}:{}", self.file.display(), self.line);
        let (krate, names) = (&self.krate, &self.names);
        match &self.breach {
            Breach::NotBelow => write!(f, "{at}: {krate} names {names}, which is not below it"),
            Breach::ReExport => write!(
                f,
                "{at}: {krate} re-exports {names}: its users name {names} themselves"
            ),
            Breach::Through(via) => write!(
                f,
                "{at}: {krate} reaches {names} through {via}: name {names} directly and declare it"
            ),
        }
    }
}

/// Checks every crate of [`LAYERS`] under `crates_dir` (`crates/<name>/`).
pub fn check(crates_dir: &Path) -> Result<Vec<Violation>, String> {
    let mut out = Vec::new();
    for layer in &LAYERS {
        let krate = &layer.name;
        // Every other crate of the workspace that is not below: above it, or beside it.
        let above: Vec<&str> = LAYERS
            .iter()
            .map(|l| l.name)
            .filter(|n| n != krate && !layer.below.contains(n))
            .collect();
        let above = above.as_slice();
        // Every other crate of the workspace: none is re-exported nor reached through another.
        let others: Vec<&str> = LAYERS
            .iter()
            .map(|l| l.name)
            .filter(|n| n != krate)
            .collect();
        let dir = crates_dir.join(krate);
        let manifest = dir.join("Cargo.toml");
        let text =
            fs::read_to_string(&manifest).map_err(|e| format!("{}: {e}", manifest.display()))?;
        for (line, dep) in manifest_dependencies(&text) {
            // A crate may never depend on itself either (a typo would hide there).
            if above.contains(&dep.as_str()) || dep == *krate {
                out.push(Violation {
                    krate: krate.to_string(),
                    names: dep,
                    file: manifest.clone(),
                    line,
                    breach: Breach::NotBelow,
                });
            }
        }
        for file in rust_files(&dir)? {
            let text = fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
            let found = source_references(&text, above)
                .into_iter()
                .map(|(line, name)| (line, name, Breach::NotBelow))
                .chain(
                    re_exports(&text, &others)
                        .into_iter()
                        .map(|(line, name)| (line, name, Breach::ReExport)),
                )
                .chain(
                    reached_through(&text, &others)
                        .into_iter()
                        .map(|(line, name, via)| (line, name, Breach::Through(via))),
                );
            for (line, names, breach) in found {
                out.push(Violation {
                    krate: krate.to_string(),
                    names,
                    file: file.clone(),
                    line,
                    breach,
                });
            }
        }
    }
    Ok(out)
}

/// The crate names of the dependency tables (`[dependencies]`, `[dev-dependencies]`,
/// `[build-dependencies]`), with their line numbers.
pub fn manifest_dependencies(manifest: &str) -> Vec<(usize, String)> {
    let mut deps = Vec::new();
    let mut in_deps = false;
    for (i, line) in manifest.lines().enumerate() {
        let line = line.trim();
        if line.starts_with('[') {
            let table = line.trim_matches(|c| c == '[' || c == ']');
            in_deps = table.ends_with("dependencies");
            // `[dependencies.bam]` style.
            if let Some(name) = table
                .strip_prefix("dependencies.")
                .or_else(|| table.strip_prefix("dev-dependencies."))
            {
                deps.push((i + 1, name.to_string()));
                in_deps = false;
            }
            continue;
        }
        if in_deps {
            if let Some((name, _)) = line.split_once('=') {
                let name = name.trim().trim_end_matches(".workspace").trim_matches('"');
                if !name.is_empty() && !name.starts_with('#') {
                    deps.push((i + 1, name.to_string()));
                }
            }
        }
    }
    deps
}

/// Lines of Rust `source` that name one of `crates` as a path root (`bam::`, `use bam`, `extern
/// crate bam`), comments and string literals aside.
pub fn source_references(source: &str, crates: &[&str]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, raw) in source.lines().enumerate() {
        let line = strip_comment_and_strings(raw);
        for name in crates {
            if names_crate(&line, name) {
                out.push((i + 1, name.to_string()));
            }
        }
    }
    out
}

/// Lines of Rust `source` that re-export one of `crates` or an item of one (`pub use bam;`,
/// `pub use bam::Reader;`), comments and string literals aside. `pub(crate) use` stays inside.
pub fn re_exports(source: &str, crates: &[&str]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, raw) in source.lines().enumerate() {
        let line = strip_comment_and_strings(raw);
        let Some(rest) = line.trim_start().strip_prefix("pub use ") else {
            continue;
        };
        let rest = rest.trim_start().trim_start_matches("::");
        for name in crates {
            let Some(after) = rest.strip_prefix(name) else {
                continue;
            };
            if after.starts_with("::") || after.trim_start().starts_with([';', ' ']) {
                out.push((i + 1, name.to_string()));
            }
        }
    }
    out
}

/// Lines of Rust `source` that reach one of `crates` through another of them (`bam::hfile::x`,
/// `use bam::{hfile, Reader}`): the name, and the crate it is reached through.
pub fn reached_through(source: &str, crates: &[&str]) -> Vec<(usize, String, String)> {
    let mut out = Vec::new();
    for (i, raw) in source.lines().enumerate() {
        let line = strip_comment_and_strings(raw);
        for via in crates {
            for after in path_tails(&line, via) {
                // `via::name...` or `via::{.., name, ..}` (on one line).
                let segment = match after.strip_prefix('{') {
                    Some(group) => group.split('}').next().unwrap_or_default(),
                    None => after,
                };
                let words = segment
                    .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .filter(|w| !w.is_empty());
                let named: Vec<&str> = if after.starts_with('{') {
                    words.collect()
                } else {
                    words.take(1).collect()
                };
                for name in crates.iter().filter(|n| n != &via && named.contains(n)) {
                    out.push((i + 1, name.to_string(), via.to_string()));
                }
            }
        }
    }
    out
}

/// What follows `name::` wherever `line` uses `name` as the first segment of a path.
fn path_tails<'l>(line: &'l str, name: &str) -> Vec<&'l str> {
    standalone(line, name)
        .into_iter()
        .filter_map(|(_, rest)| rest.strip_prefix("::"))
        .collect()
}

/// True when `line` uses `name` as the first segment of a path.
fn names_crate(line: &str, name: &str) -> bool {
    standalone(line, name).into_iter().any(|(head, rest)| {
        if rest.starts_with("::") {
            return true;
        }
        let head = head.trim_end();
        let whole_word = !rest.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_');
        whole_word && (head.ends_with("use") || head.ends_with("extern crate"))
    })
}

/// Each place `name` stands in `line` on its own, not the tail of a longer identifier or of a
/// path (`self::bam::` is a module): what comes before it, and what after.
fn standalone<'l>(line: &'l str, name: &str) -> Vec<(&'l str, &'l str)> {
    line.match_indices(name)
        .filter_map(|(at, _)| {
            let before = at.checked_sub(1).map(|i| line.as_bytes()[i]);
            let tail = before.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':');
            (!tail).then(|| (&line[..at], &line[at + name.len()..]))
        })
        .collect()
}

/// `line` without a `//` comment and with the insides of string literals blanked.
fn strip_comment_and_strings(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut in_string = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if in_string {
            match c {
                '\\' => {
                    chars.next();
                }
                '"' => {
                    in_string = false;
                    out.push('"');
                }
                _ => out.push(' '),
            }
        } else if c == '"' {
            in_string = true;
            out.push('"');
        } else if c == '/' && chars.peek() == Some(&'/') {
            break;
        } else {
            out.push(c);
        }
    }
    out
}

fn rust_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = fs::read_dir(&d).map_err(|e| format!("{}: {e}", d.display()))?;
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "target") {
                    stack.push(path);
                }
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifests() {
        let m = "[package]\nname = \"x\"\n[dependencies]\nbgzf.workspace = true\nfoo = \"1\"\n\
                 [dev-dependencies]\nbam.workspace = true\n[dependencies.cli]\npath = \"x\"\n";
        let names: Vec<String> = manifest_dependencies(m).into_iter().map(|d| d.1).collect();
        assert_eq!(names, vec!["bgzf", "foo", "bam", "cli"]);
    }

    #[test]
    fn sources() {
        let above = ["bam", "cli"];
        let src = "use bam::Reader;\n\
                   // bam::Reader in a comment\n\
                   let s = \"bam::x\";\n\
                   fn f() { let x = bam::parse(); }\n\
                   use bam;\n\
                   let y = self::bam::x; let z = mybam::y;\n\
                   let bam = 3; let w = bam + 1;\n\
                   extern crate cli;\n";
        let found: Vec<usize> = source_references(src, &above)
            .into_iter()
            .map(|(l, _)| l)
            .collect();
        assert_eq!(found, vec![1, 4, 5, 8]);
    }

    #[test]
    fn back_doors() {
        let all = ["hfile", "bgzf", "bam"];
        let src = "pub use hfile;\n\
                   pub use hfile::Hints;\n\
                   pub(crate) use bgzf::Reader;\n\
                   pub use crate::x;\n\
                   // pub use bam;\n\
                   pub use hfilex::y;\n";
        let lines: Vec<usize> = re_exports(src, &all).into_iter().map(|(l, _)| l).collect();
        assert_eq!(lines, vec![1, 2]);
        let src = "use bam::hfile::HFile;\n\
                   use bam::{hfile, Reader};\n\
                   let x = bam::Reader::open;\n\
                   let y = bam::index_name::f;\n\
                   use bam::{Header, Reader};\n\
                   let z = self::bam::hfile::x;\n";
        let found = reached_through(src, &all);
        assert_eq!(
            found,
            vec![
                (1, "hfile".to_string(), "bam".to_string()),
                (2, "hfile".to_string(), "bam".to_string())
            ]
        );
    }
}
