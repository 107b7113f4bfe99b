//! The runner of `fixtures/conformance-extra` (its README says what the columns and check
//! items mean): reading the cases, running `hts`, and [`check`], which decides whether one run
//! matches samtools' goldens.
//!
//! Kept apart from the test that drives it, so it can move to a shared test crate as it is.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The scratch folder `make_goldens.py` gave samtools for `{out}` (it appears in goldens'
/// `@PG CL:` values).
pub const GOLDEN_SCRATCH: &str = "/tmp/hts-extra-goldens";

/// One row of `cases.tsv`.
#[derive(Debug, Clone)]
pub struct Case {
    pub id: String,
    /// Starts with the subcommand.
    pub args: Vec<String>,
    pub expected: String,
    pub should_succeed: bool,
    pub check: Vec<Item>,
}

/// One item of the check column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    Stdout(Kind),
    File {
        name: String,
        kind: Kind,
    },
    Index {
        output: String,
        index: String,
    },
    Quickcheck(String),
    Stdin(String),
    /// The exit status must be exactly this (stderr may be empty), stdout equal to the golden.
    Exit(i32),
    /// samtools does not fail (or crashes) where hts fails on purpose: only `make_goldens.py`
    /// reads it; hts is judged by the usual rules of the status column.
    Diverges,
}

/// How two outputs are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kind {
    /// BGZF-decompress both first.
    pub bgzf: bool,
    /// The data is BAM (its header text is found by its length field).
    pub bam: bool,
    /// Normalise the `@PG` lines the programs added.
    pub pg: bool,
}

fn parse_kind(s: &str) -> Result<Kind, String> {
    let (base, pg) = match s.strip_suffix("+pg") {
        Some(b) => (b, true),
        None => (s, false),
    };
    let (bgzf, bam) = match base {
        "text" => (false, false),
        "bgzf" => (true, false),
        "bam" => (true, true),
        other => return Err(format!("unknown kind '{other}'")),
    };
    Ok(Kind { bgzf, bam, pg })
}

fn parse_item(s: &str) -> Result<Item, String> {
    if s == "diverges" {
        return Ok(Item::Diverges);
    }
    let (key, value) = s
        .split_once('=')
        .ok_or_else(|| format!("bad check item '{s}'"))?;
    match key {
        "stdout" => Ok(Item::Stdout(parse_kind(value)?)),
        "file" => {
            let (name, kind) = value.split_once(':').unwrap_or((value, "text"));
            Ok(Item::File {
                name: name.to_string(),
                kind: parse_kind(kind)?,
            })
        }
        "index" => {
            let (output, index) = value
                .split_once(':')
                .ok_or_else(|| format!("index item '{s}' needs OUTPUT:INDEX"))?;
            Ok(Item::Index {
                output: output.to_string(),
                index: index.to_string(),
            })
        }
        "quickcheck" => Ok(Item::Quickcheck(value.to_string())),
        "stdin" => Ok(Item::Stdin(value.to_string())),
        "exit" => value
            .parse()
            .map(Item::Exit)
            .map_err(|_| format!("bad exit status in '{s}'")),
        other => Err(format!("unknown check item '{other}'")),
    }
}

/// Reads `DIR/cases.tsv` (testkit's reader, which keeps the fifth column).
pub fn read_cases(dir: &Path) -> Result<Vec<Case>, String> {
    testkit::corpus::read_cases(dir)?
        .into_iter()
        .map(|c| {
            let check = c
                .check
                .split(',')
                .filter(|i| !i.is_empty())
                .map(parse_item)
                .collect::<Result<_, _>>()
                .map_err(|e| format!("case {}: {e}", c.id))?;
            Ok(Case {
                id: c.id,
                args: c.args,
                expected: c.expected,
                should_succeed: c.should_succeed,
                check,
            })
        })
        .collect()
}

pub use testkit::corpus::Outcome;

/// Data paths made into URLs under `base` (a server of `fixtures/`): `../conformance/...`
/// and this corpus' `data/...`.
pub fn rewrite(arg: &str, base: Option<&str>) -> String {
    let Some(base) = base.map(|b| b.trim_end_matches('/')) else {
        return arg.to_string();
    };
    if let Some(rest) = arg.strip_prefix("../conformance/") {
        return format!("{base}/conformance/{rest}");
    }
    if arg.starts_with("data/") {
        return format!("{base}/conformance-extra/{arg}");
    }
    arg.to_string()
}

/// Runs `hts ARGS` (invoked as `hts`, so `@PG CL:` starts with it) from the corpus folder.
pub fn run_hts(
    hts: &Path,
    dir: &Path,
    case: &Case,
    scratch: &Path,
    base: Option<&str>,
) -> Result<Outcome, String> {
    use std::os::unix::process::CommandExt;
    let args: Vec<String> = case
        .args
        .iter()
        .map(|a| rewrite(a, base).replace("{out}", &scratch.display().to_string()))
        .collect();
    let stdin = match case.check.iter().find_map(|i| match i {
        Item::Stdin(p) => Some(p),
        _ => None,
    }) {
        Some(p) => Stdio::from(fs::File::open(dir.join(p)).map_err(|e| format!("{p}: {e}"))?),
        None => Stdio::null(),
    };
    let out_path = scratch.join(".stdout");
    let err_path = scratch.join(".stderr");
    let mut child = testkit::command(hts)
        .arg0("hts")
        .args(&args)
        .current_dir(dir)
        .stdin(stdin)
        .stdout(fs::File::create(&out_path).map_err(|e| e.to_string())?)
        .stderr(fs::File::create(&err_path).map_err(|e| e.to_string())?)
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", hts.display()))?;
    let start = Instant::now();
    let status = loop {
        match child.try_wait().map_err(|e| e.to_string())? {
            Some(status) => break status,
            None if start.elapsed() > Duration::from_secs(120) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err("timed out after 120 s".to_string());
            }
            None => std::thread::sleep(Duration::from_millis(5)),
        }
    };
    Ok(Outcome {
        code: status.code(),
        stdout: fs::read(&out_path).map_err(|e| e.to_string())?,
        stderr: fs::read(&err_path).map_err(|e| e.to_string())?,
    })
}

/// Decides whether a run of `case` matches samtools: exit status, then every check item
/// (stdout compared as text unless a `stdout=` item says otherwise). `scratch` holds the
/// run's output files; goldens are read from `dir`; `base` is the URL the data was read from,
/// if not local.
pub fn check(
    dir: &Path,
    case: &Case,
    outcome: &Outcome,
    scratch: &Path,
    base: Option<&str>,
) -> Result<(), String> {
    let golden_path = dir.join(&case.expected);
    let golden = fs::read(&golden_path).map_err(|_| format!("golden {} missing", case.expected))?;
    let stdout_kind = case
        .check
        .iter()
        .find_map(|i| match i {
            Item::Stdout(k) => Some(*k),
            _ => None,
        })
        .unwrap_or(Kind {
            bgzf: false,
            bam: false,
            pg: false,
        });
    let plain = stdout_kind
        == Kind {
            bgzf: false,
            bam: false,
            pg: false,
        };
    // run.sh's rules (exit status, stderr, stdout against the golden); for stdout compared in
    // another way below, only the rules on the exit status and stderr.
    let judged = testkit::corpus::Case {
        id: case.id.clone(),
        args: case.args.clone(),
        expected: case.expected.clone(),
        should_succeed: case.should_succeed,
        check: String::new(),
    };
    let stdout_rule = if plain || !case.should_succeed {
        &golden
    } else {
        &outcome.stdout
    };
    let exit = case.check.iter().find_map(|i| match i {
        Item::Exit(n) => Some(*n),
        _ => None,
    });
    if exit.is_none() {
        testkit::corpus::judge(&judged, stdout_rule, outcome)?;
        if !case.should_succeed {
            return Ok(());
        }
    }
    // How command lines in @PG lines are made comparable: scratch folders and URLs back to
    // the spelling of cases.tsv.
    let mut spelled = vec![
        (GOLDEN_SCRATCH.to_string(), "{out}".to_string()),
        (scratch.display().to_string(), "{out}".to_string()),
    ];
    if let Some(b) = base.map(|b| b.trim_end_matches('/')) {
        spelled.push((format!("{b}/conformance-extra/"), String::new()));
        spelled.push((format!("{b}/conformance/"), "../conformance/".to_string()));
    }
    let spelled = spelled.as_slice();
    if let Some(want) = exit {
        return exact_exit(want, &golden, outcome, spelled);
    }
    compare(&golden, &outcome.stdout, stdout_kind, spelled).map_err(|e| format!("stdout: {e}"))?;
    for item in &case.check {
        match item {
            Item::File { name, kind } => {
                let ours = fs::read(scratch.join(name)).map_err(|e| format!("{name}: {e}"))?;
                let theirs = fs::read(dir.join("expected").join(format!("{}.{name}", case.id)))
                    .map_err(|e| format!("golden of {name}: {e}"))?;
                compare(&theirs, &ours, *kind, spelled).map_err(|e| format!("{name}: {e}"))?;
            }
            Item::Index { output, index } => {
                let made = scratch.join(format!("{index}.samtools"));
                let kind = if index.ends_with(".bai") { "-b" } else { "-c" };
                samtools(&[
                    "index",
                    kind,
                    &scratch.join(output).display().to_string(),
                    &made.display().to_string(),
                ])?;
                let ours = fs::read(scratch.join(index)).map_err(|e| format!("{index}: {e}"))?;
                let theirs = fs::read(&made).map_err(|e| e.to_string())?;
                if inflate(&ours)? != inflate(&theirs)? {
                    return Err(format!("{index} differs from samtools index of {output}"));
                }
            }
            Item::Quickcheck(name) => {
                samtools(&[
                    "quickcheck",
                    "-v",
                    &scratch.join(name).display().to_string(),
                ])?;
            }
            Item::Stdout(_) | Item::Stdin(_) | Item::Exit(_) | Item::Diverges => {}
        }
    }
    Ok(())
}

/// An `exit=N` case: exactly that status, no panic, stdout byte for byte (quickcheck's status
/// is a bit mask, and with `-q` it prints nothing on stderr) once the data's URLs in it are
/// spelled as in cases.tsv (`quickcheck -v` prints the names of the files that fail).
fn exact_exit(
    want: i32,
    golden: &[u8],
    outcome: &Outcome,
    spelled: &[(String, String)],
) -> Result<(), String> {
    if String::from_utf8_lossy(&outcome.stderr).contains("panicked at") {
        return Err("panicked".to_string());
    }
    if outcome.code != Some(want) {
        return Err(format!(
            "exit status {:?}, expected {want}; stderr: {}",
            outcome.code,
            String::from_utf8_lossy(&outcome.stderr).trim()
        ));
    }
    let ours = spelled.iter().fold(
        String::from_utf8_lossy(&outcome.stdout).into_owned(),
        |text, (from, to)| text.replace(from.as_str(), to),
    );
    if ours.as_bytes() != golden {
        return Err(format!(
            "stdout differs from the golden ({} bytes vs {}): {ours:?}",
            ours.len(),
            golden.len()
        ));
    }
    Ok(())
}

fn samtools(args: &[&str]) -> Result<(), String> {
    let out = Command::new("samtools")
        .args(args)
        .output()
        .map_err(|e| format!("cannot run samtools (needed for this check): {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "samtools {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(())
}

/// The uncompressed size (ISIZE) of each BGZF block, in order.
fn block_sizes(data: &[u8]) -> Result<Vec<u32>, String> {
    let mut sizes = Vec::new();
    let mut at = 0;
    while at < data.len() {
        let bsize = data
            .get(at + 16..at + 18)
            .map(|b| usize::from(u16::from_le_bytes([b[0], b[1]])) + 1)
            .ok_or_else(|| format!("not BGZF at byte {at}"))?;
        let isize = data
            .get(at + bsize - 4..at + bsize)
            .ok_or_else(|| format!("BGZF block at byte {at} runs past the end"))?;
        sizes.push(u32::from_le_bytes([isize[0], isize[1], isize[2], isize[3]]));
        at += bsize;
    }
    Ok(sizes)
}

/// BGZF (or any gzip) data decompressed; other data as it is.
fn inflate(data: &[u8]) -> Result<Vec<u8>, String> {
    if !data.starts_with(&[0x1f, 0x8b]) {
        return Ok(data.to_vec());
    }
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(data)
        .read_to_end(&mut out)
        .map_err(|e| format!("not valid gzip: {e}"))?;
    Ok(out)
}

fn compare(
    golden: &[u8],
    ours: &[u8],
    kind: Kind,
    spelled: &[(String, String)],
) -> Result<(), String> {
    let (mut g, mut o) = (golden.to_vec(), ours.to_vec());
    if kind.bgzf && !kind.pg {
        // Block boundaries follow htslib's rules, so each block holds what samtools' does.
        let (gb, ob) = (block_sizes(&g)?, block_sizes(&o)?);
        if gb != ob {
            return Err(format!(
                "BGZF blocks differ: {} blocks holding {:?}... vs {} holding {:?}...",
                ob.len(),
                &ob[..ob.len().min(4)],
                gb.len(),
                &gb[..gb.len().min(4)]
            ));
        }
    }
    if kind.bgzf {
        g = inflate(&g).map_err(|e| format!("golden: {e}"))?;
        o = inflate(&o)?;
    }
    if kind.pg {
        g = normalise(&g, kind.bam, spelled)?;
        o = normalise(&o, kind.bam, spelled)?;
    }
    if g == o {
        return Ok(());
    }
    let at = g
        .iter()
        .zip(&o)
        .position(|(a, b)| a != b)
        .unwrap_or(g.len().min(o.len()));
    let show = |d: &[u8]| String::from_utf8_lossy(&d[at..d.len().min(at + 60)]).into_owned();
    Err(format!(
        "differs at byte {at} ({} bytes vs {} expected): {:?} vs {:?}",
        o.len(),
        g.len(),
        show(&o),
        show(&g)
    ))
}

/// The `@PG` normalisation of README.md, on SAM text or (with `bam`) on a BAM's header text.
fn normalise(data: &[u8], bam: bool, spelled: &[(String, String)]) -> Result<Vec<u8>, String> {
    if !bam {
        return Ok(normalise_text(data, spelled));
    }
    if data.len() < 8 || &data[..4] != b"BAM\x01" {
        return Err("not BAM".to_string());
    }
    let l_text = u32::from_le_bytes([data[4], data[5], data[6], data[7]]) as usize;
    let text = data.get(8..8 + l_text).ok_or("truncated BAM header")?;
    let text = normalise_text(text, spelled);
    let mut out = b"BAM\x01".to_vec();
    out.extend_from_slice(&(text.len() as u32).to_le_bytes());
    out.extend_from_slice(&text);
    out.extend_from_slice(&data[8 + l_text..]);
    Ok(out)
}

fn normalise_text(text: &[u8], spelled: &[(String, String)]) -> Vec<u8> {
    let text = String::from_utf8_lossy(text);
    let mut renamed: Vec<(String, String)> = Vec::new();
    let mut lines: Vec<String> = Vec::new();
    for line in text.split('\n') {
        let fields: Vec<&str> = line.split('\t').collect();
        let added =
            fields[0] == "@PG" && fields.iter().any(|f| *f == "PN:samtools" || *f == "PN:hts");
        if !added {
            lines.push(line.to_string());
            continue;
        }
        let name = format!("@PG-{}", renamed.len() + 1);
        let mut out = Vec::new();
        for f in fields {
            if let Some(id) = f.strip_prefix("ID:") {
                renamed.push((id.to_string(), name.clone()));
                out.push(format!("ID:{name}"));
            } else if f.starts_with("PN:") {
                out.push("PN:@".to_string());
            } else if f.starts_with("VN:") {
                out.push("VN:@".to_string());
            } else if let Some(cl) = f.strip_prefix("CL:") {
                let rest = cl.split_once(' ').map_or("", |(_, r)| r);
                let rest = spelled
                    .iter()
                    .fold(rest.to_string(), |r, (from, to)| r.replace(from, to));
                out.push(format!("CL:@ {rest}"));
            } else {
                out.push(f.to_string());
            }
        }
        lines.push(out.join("\t"));
    }
    let relink = |f: &str| match f.strip_prefix("PP:") {
        Some(pp) => match renamed.iter().find(|(old, _)| old == pp) {
            Some((_, new)) => format!("PP:{new}"),
            None => f.to_string(),
        },
        None => f.to_string(),
    };
    lines
        .iter()
        .map(|l| {
            if l.starts_with("@PG\t") {
                l.split('\t').map(relink).collect::<Vec<_>>().join("\t")
            } else {
                l.clone()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        .into_bytes()
}

/// A number for each scratch folder (the local and HTTP runs go on at once).
fn next() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// A fresh scratch folder for one case.
pub fn scratch_for(id: &str) -> Result<PathBuf, String> {
    let dir =
        std::env::temp_dir().join(format!("hts-extra-{}-{id}-{}", std::process::id(), next()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(dir)
}

#[test]
fn normalisation_keeps_foreign_lines_and_renames_links() {
    let ours =
        b"@PG\tID:bwa\tPN:bwa\n@PG\tID:hts\tPN:hts\tPP:bwa\tVN:0.1\tCL:hts view -o /s/o.bam x\n";
    let theirs = format!(
        "@PG\tID:bwa\tPN:bwa\n@PG\tID:samtools\tPN:samtools\tPP:bwa\tVN:1.16.1\tCL:samtools view -o {GOLDEN_SCRATCH}/o.bam x\n"
    );
    let spelled = [
        (GOLDEN_SCRATCH.to_string(), "{out}".to_string()),
        ("/s".to_string(), "{out}".to_string()),
    ];
    let n = |t: &[u8]| normalise_text(t, &spelled);
    assert_eq!(n(ours), n(theirs.as_bytes()));
    assert_ne!(n(ours), n(b"@PG\tID:bwa\tPN:bwa\n"));
}
