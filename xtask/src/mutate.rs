//! `cargo xtask mutate`: a mutation campaign on the CRAM and tabix fixtures. Each mutant is
//! one damage to a fixture or its index (`mutate_cram`, `mutate_crai`, `mutate_tabix`), run
//! through hts and through samtools or tabix 1.16 on the same commands (whole file and
//! regions, CRAM at `-@ 0` and `-@ 2`), and classed against the undamaged file's output
//! (`mutate_run`). The defect looked for: hts exiting 0 with records missing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use testkit::Rng;

use crate::mutate_fixtures::{Fixture, Format, FIXTURES};
use crate::mutate_run::{classify, run, Class, Key, Run};
use crate::{flag_value, root};

pub const HELP: &str = "\
cargo xtask mutate [--seconds N] [--count N] [--seed S] [--only cram|tabix] [--mutant I]
                   [--kind K] [--fixture F] [--jobs J] [--hts PATH] [--keep DIR] [--verbose]
  Damages the CRAM fixtures (fixtures/cram, with their .crai) and the tabix fixtures
  (fixtures/tabix, with TBI and CSI) one mutation at a time: bits flipped in container, block
  and data bytes, fields of container and block headers edited with their CRCs kept right,
  landmarks edited, containers, blocks and slices doubled, dropped or swapped (with the .crai
  as it was, or moved with them), cuts, .crai lines edited, dropped, doubled, swapped or
  shuffled; BGZF blocks repeated, dropped or swapped (under the index as it was, or with its
  offsets moved), lines moved into other sequences' blocks, TBI/CSI name tables, column meta,
  reference counts and offsets edited. Each mutant runs through hts and samtools/tabix on the
  same commands (whole file and regions; CRAM at -@ 0 and -@ 2), each process bounded by a
  timeout and `ulimit -v`, and is classed: identical; same loss (both exit 0 missing the same
  records); both fail; hts whole (hts prints the undamaged output where the tool does not);
  differs; refuses (hts fails where the tool exits 0 with other output than the undamaged
  file's); hts fails (where the tool prints the undamaged output: a regression to look at);
  NAMELESS (an error line without the file's name); LOST (hts exits 0 with records of the
  undamaged file missing that the tool found or failed on: a SAM record known by its name and
  flags, a text line whole); PANIC; HANG.
  Mutant I of seed S is the same on every run: --mutant I runs it alone and prints each command.
  --kind and --fixture keep to one mutation class and one fixture file.
  Runs N seconds (default 60) or N mutants, J at a time (default 2). --keep writes the mutants
  of the failing classes to DIR. Prints the class table by mutation; fails on any LOST, PANIC,
  HANG or NAMELESS.";

/// A process taking longer than this is hung (a fixture's run takes milliseconds).
const TIMEOUT: Duration = Duration::from_secs(30);

/// One damage: what was done, and the new bytes of the data file and of its index (`None`:
/// unchanged).
#[derive(Default)]
pub(crate) struct Mutant {
    pub(crate) what: String,
    pub(crate) data: Option<Vec<u8>>,
    pub(crate) index: Option<Vec<u8>>,
}

/// The campaign's settings.
struct Settings {
    seconds: Option<u64>,
    count: Option<u64>,
    seed: u64,
    only: Option<Format>,
    mutant: Option<u64>,
    jobs: usize,
    keep: Option<PathBuf>,
    verbose: bool,
    kind: Option<String>,
}

impl Settings {
    fn parse(args: &[String]) -> Result<Settings, String> {
        let number = |name: &str| -> Result<Option<u64>, String> {
            flag_value(args, name)
                .map(|v| v.parse().map_err(|_| format!("{name}: not a number: {v}")))
                .transpose()
        };
        let only = match flag_value(args, "--only") {
            None => None,
            Some("cram") => Some(Format::Cram),
            Some("tabix") => Some(Format::Tabix),
            Some(o) => return Err(format!("--only: cram or tabix, not {o}")),
        };
        let (seconds, count) = match (number("--seconds")?, number("--count")?) {
            (None, None) => (Some(60), None),
            sc => sc,
        };
        Ok(Settings {
            seconds,
            count,
            seed: number("--seed")?.unwrap_or(1),
            only,
            mutant: number("--mutant")?,
            jobs: number("--jobs")?.unwrap_or(2).max(1) as usize,
            keep: flag_value(args, "--keep").map(PathBuf::from),
            verbose: args.iter().any(|a| a == "--verbose"),
            kind: flag_value(args, "--kind").map(String::from),
        })
    }
}

/// Everything a worker shares: the fixtures' undamaged outputs, the tally.
struct Campaign {
    hts: PathBuf,
    orig: PathBuf,
    settings: Settings,
    fixtures: Vec<&'static Fixture>,
    /// The tool's output on each undamaged fixture, per case.
    undamaged: Vec<Vec<Vec<u8>>>,
    /// Mutants by (format, kind, class).
    tally: Mutex<BTreeMap<(Format, &'static str, Class), u64>>,
    defects: AtomicU64,
    next: AtomicU64,
    started: Instant,
}

pub fn cmd(args: &[String]) -> Result<(), String> {
    let settings = Settings::parse(args)?;
    crate::setup::ensure(&[crate::setup::SAMTOOLS, crate::setup::TABIX])?;
    let hts = match flag_value(args, "--hts") {
        Some(p) => PathBuf::from(p),
        None => crate::release_hts()?,
    };
    let work = root().join("target/mutate");
    let orig = work.join("orig");
    prepare(&orig)?;
    let named = flag_value(args, "--fixture");
    let fixtures: Vec<&'static Fixture> = FIXTURES
        .iter()
        .filter(|f| settings.only.is_none_or(|o| o == f.format))
        .filter(|f| named.is_none_or(|n| n == f.file))
        .collect();
    if fixtures.is_empty() {
        return Err("no fixture left to mutate".into());
    }
    let mut undamaged = Vec::new();
    for f in &fixtures {
        let mut outs = Vec::new();
        for case in f.cases(&orig) {
            let tool = run_tool(f.format, &case.args, &orig)?;
            let ours = run_hts(&hts, f.format, &case.args, &orig)?;
            if !tool.ok() || ours.stdout != tool.stdout || !ours.ok() {
                return Err(format!(
                    "the undamaged {} already differs from {} on {:?}",
                    f.file,
                    tool_name(f.format),
                    case.args
                ));
            }
            outs.push(tool.stdout);
        }
        undamaged.push(outs);
    }
    let jobs = if settings.mutant.is_some() {
        1
    } else {
        settings.jobs
    };
    let c = Campaign {
        hts,
        orig,
        settings,
        fixtures,
        undamaged,
        tally: Mutex::new(BTreeMap::new()),
        defects: AtomicU64::new(0),
        next: AtomicU64::new(0),
        started: Instant::now(),
    };
    std::thread::scope(|s| {
        for w in 0..jobs {
            let c = &c;
            let dir = work.join(format!("w{w}"));
            s.spawn(move || c.work(&dir));
        }
    });
    let tally = c.tally.into_inner().unwrap_or_else(|p| p.into_inner());
    let n: u64 = tally.values().sum();
    print_table(&tally);
    println!(
        "{n} mutants (seed {}) in {:.0} s",
        c.settings.seed,
        c.started.elapsed().as_secs_f64()
    );
    let defects = c.defects.load(Ordering::Relaxed);
    if defects > 0 {
        return Err(format!(
            "{defects} mutants lost records, panicked, hung or gave a nameless error"
        ));
    }
    Ok(())
}

/// Copies the fixtures into `orig` and makes the multi-block CSI one (tabix -C on many.vcf.gz).
fn prepare(orig: &Path) -> Result<(), String> {
    std::fs::create_dir_all(orig).map_err(|e| format!("{}: {e}", orig.display()))?;
    for dir in ["fixtures/cram", "fixtures/tabix"] {
        let entries = std::fs::read_dir(root().join(dir)).map_err(|e| format!("{dir}: {e}"))?;
        for e in entries.flatten() {
            if e.path().is_file() {
                std::fs::copy(e.path(), orig.join(e.file_name()))
                    .map_err(|err| format!("{}: {err}", e.path().display()))?;
            }
        }
    }
    std::fs::copy(orig.join("many.vcf.gz"), orig.join("many.csi.vcf.gz"))
        .map_err(|e| format!("many.vcf.gz: {e}"))?;
    let made = std::process::Command::new("tabix")
        .args(["-f", "-C", "-p", "vcf", "many.csi.vcf.gz"])
        .current_dir(orig)
        .status()
        .map_err(|e| format!("tabix: {e}"))?;
    if !made.success() {
        return Err("tabix -C on many.csi.vcf.gz failed".into());
    }
    Ok(())
}

/// A generator's seed for mutant `i` of seed `seed` (splitmix64's finaliser: neighbouring
/// numbers give unrelated seeds).
fn mix(seed: u64, i: u64) -> u64 {
    let mut z = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15).wrapping_add(i);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn tool_name(f: Format) -> &'static str {
    match f {
        Format::Cram => "samtools",
        Format::Tabix => "tabix",
    }
}

fn run_tool(f: Format, args: &[String], dir: &Path) -> Result<Run, String> {
    let mut a = Vec::new();
    if f == Format::Cram {
        a.push("view".to_string());
    }
    a.extend_from_slice(args);
    run(Path::new(tool_name(f)), &a, dir, TIMEOUT)
}

fn run_hts(hts: &Path, f: Format, args: &[String], dir: &Path) -> Result<Run, String> {
    let mut a = vec![match f {
        Format::Cram => "view".to_string(),
        Format::Tabix => "tabix".to_string(),
    }];
    a.extend_from_slice(args);
    run(hts, &a, dir, TIMEOUT)
}

impl Campaign {
    /// Takes mutant numbers until the time or the count is up.
    fn work(&self, dir: &Path) {
        if std::fs::create_dir_all(dir).is_err() {
            return;
        }
        loop {
            let i = match self.settings.mutant {
                Some(i) if self.next.fetch_add(1, Ordering::Relaxed) == 0 => i,
                Some(_) => return,
                None => self.next.fetch_add(1, Ordering::Relaxed),
            };
            let timed_out = self
                .settings
                .seconds
                .is_some_and(|s| self.started.elapsed() >= Duration::from_secs(s));
            if timed_out || self.settings.count.is_some_and(|n| i >= n) {
                return;
            }
            if let Err(e) = self.one(i, dir) {
                eprintln!("mutant {i}: {e}");
                self.defects.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Makes mutant `i`, runs its cases and tallies its class.
    fn one(&self, i: u64, dir: &Path) -> Result<(), String> {
        let mut rng = Rng::new(mix(self.settings.seed, i));
        let (fi, kind, m) = self.make(&mut rng).ok_or("no mutation applies")?;
        let f = self.fixtures[fi];
        let data_name = dir.join(f.file);
        let index_name = f.index.map(|x| dir.join(format!("{}{x}", f.file)));
        let original = |name: &str| std::fs::read(self.orig.join(name));
        let write = |path: &Path, bytes: Vec<u8>| {
            std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display()))
        };
        let data = m.data.clone().map_or_else(|| original(f.file), Ok);
        write(&data_name, data.map_err(|e| e.to_string())?)?;
        if let (Some(x), Some(path)) = (f.index, &index_name) {
            let idx = m.index.clone();
            let idx = idx.map_or_else(|| original(&format!("{}{x}", f.file)), Ok);
            write(path, idx.map_err(|e| e.to_string())?)?;
        }
        let mut worst = Class::Identical;
        let mut report = String::new();
        for (ci, case) in f.cases(&self.orig).iter().enumerate() {
            if m.data.is_none() && !case.indexed {
                continue;
            }
            let hts = run_hts(&self.hts, f.format, &case.args, dir)?;
            let tool = run_tool(f.format, &case.args, dir)?;
            // A SAM line is known by its name and flags; a line of text as a whole.
            let key = Key(if f.format == Format::Cram { 2 } else { 0 });
            let class = classify(&hts, &tool, &self.undamaged[fi][ci], &[f.file], key);
            if self.settings.mutant.is_some() {
                println!(
                    "{:?} -> {} (hts {:?}: {}; {} {:?}: {})",
                    case.args,
                    class.label(),
                    hts.exit,
                    hts.last_error_line(),
                    tool_name(f.format),
                    tool.exit,
                    tool.last_error_line()
                );
            }
            if class > worst {
                worst = class;
                report = format!(
                    "{:?}: hts {:?} {:?}, {} {:?} {:?}",
                    case.args,
                    hts.exit,
                    hts.last_error_line(),
                    tool_name(f.format),
                    tool.exit,
                    tool.last_error_line()
                );
            }
        }
        let line = format!(
            "mutant {i} (seed {}): {} {kind}: {}: {} {report}",
            self.settings.seed,
            f.file,
            m.what,
            worst.label()
        );
        if worst.is_defect() {
            self.defects.fetch_add(1, Ordering::Relaxed);
            println!("{line}");
            if let Some(keep) = &self.settings.keep {
                self.keep(keep, i, f, &data_name, index_name.as_deref());
            }
        } else if self.settings.verbose || worst == Class::HtsFails {
            println!("{line}");
        }
        let mut t = self.tally.lock().unwrap_or_else(|p| p.into_inner());
        *t.entry((f.format, kind, worst)).or_insert(0) += 1;
        Ok(())
    }

    /// Picks a fixture and a mutation that applies to it.
    fn make(&self, rng: &mut Rng) -> Option<(usize, &'static str, Mutant)> {
        for _ in 0..50 {
            let fi = rng.below(self.fixtures.len());
            let f = self.fixtures[fi];
            let data = std::fs::read(self.orig.join(f.file)).ok()?;
            let index = f
                .index
                .and_then(|x| std::fs::read(self.orig.join(format!("{}{x}", f.file))).ok());
            let kinds = match f.format {
                Format::Cram => crate::mutate_cram::KINDS,
                Format::Tabix => crate::mutate_tabix::KINDS,
            };
            let kinds: Vec<&'static str> = kinds
                .iter()
                .copied()
                .filter(|k| self.settings.kind.as_deref().is_none_or(|w| w == *k))
                .collect();
            if kinds.is_empty() {
                continue;
            }
            let kind = kinds[rng.below(kinds.len())];
            let m = match f.format {
                Format::Cram => {
                    let crai = index
                        .as_deref()
                        .and_then(|b| crate::mutate_crai::Crai::parse(b).ok());
                    crate::mutate_cram::mutate(kind, &data, crai.as_ref(), rng)
                }
                Format::Tabix => crate::mutate_tabix::mutate(kind, &data, &index?, rng),
            };
            if let Some(m) = m {
                return Some((fi, kind, m));
            }
        }
        None
    }

    fn keep(&self, keep: &Path, i: u64, f: &Fixture, data: &Path, index: Option<&Path>) {
        let dir = keep.join(format!("{i}"));
        let _ = std::fs::create_dir_all(&dir);
        let _ = std::fs::copy(data, dir.join(f.file));
        if let Some(idx) = index {
            if let Some(name) = idx.file_name() {
                let _ = std::fs::copy(idx, dir.join(name));
            }
        }
    }
}

/// The class table: a row per format and mutation, a column per class.
fn print_table(tally: &BTreeMap<(Format, &'static str, Class), u64>) {
    let mut rows: BTreeMap<(Format, &str), BTreeMap<Class, u64>> = BTreeMap::new();
    for (&(f, kind, class), &n) in tally {
        *rows.entry((f, kind)).or_default().entry(class).or_insert(0) += n;
    }
    let mut head = format!("{:<32}", "mutation");
    for c in Class::ALL {
        head.push_str(&format!("{:>10}", c.label()));
    }
    println!("{head}");
    let mut totals: BTreeMap<(Format, Class), u64> = BTreeMap::new();
    for ((f, kind), classes) in &rows {
        let name = format!("{} {kind}", tool_name(*f).replace("samtools", "cram"));
        let mut line = format!("{name:<32}");
        for c in Class::ALL {
            let n = classes.get(&c).copied().unwrap_or(0);
            *totals.entry((*f, c)).or_insert(0) += n;
            line.push_str(&format!("{n:>10}"));
        }
        println!("{line}");
    }
    for f in [Format::Cram, Format::Tabix] {
        if !totals.keys().any(|(g, _)| *g == f) {
            continue;
        }
        let name = tool_name(f).replace("samtools", "cram");
        let mut line = format!("{:<32}", format!("{name} (all)"));
        for c in Class::ALL {
            line.push_str(&format!(
                "{:>10}",
                totals.get(&(f, c)).copied().unwrap_or(0)
            ));
        }
        println!("{line}");
    }
}
