//! The noodles baseline of `bench-local`: a small program on noodles-bam (pinned exactly, BGZF
//! inflated with libdeflate) that counts records like `samtools view -c`, whole file or by
//! region. It is generated as its own Cargo project in the tools cache and built there with its
//! own target folder, so it never touches the workspace's build.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The versions measured against: noodles-bam 0.98 and the crates it was released with.
const MANIFEST: &str = r#"[package]
name = "noodles-count"
version = "0.1.0"
edition = "2021"
publish = false

[dependencies]
noodles-bam = "=0.98.0"
noodles-bgzf = { version = "=0.52.0", features = ["libdeflate"] }
noodles-core = "=0.21.0"
noodles-csi = "=0.62.0"
noodles-sam = "=0.93.0"

[profile.release]
debug = 1

[workspace]
"#;

const MAIN: &str = r#"//! `noodles-count [-@ N] FILE [REGION...]`: prints the number of records, whole file or
//! overlapping the regions (samtools' `view -c` semantics), read with noodles. `-@ N` inflates
//! on N + 1 worker threads (whole file only), as `hts view -@ N` does.

use std::fs::File;
use std::io;
use std::num::NonZero;

use noodles_bam as bam;
use noodles_bgzf as bgzf;

fn count<R: io::Read>(reader: &mut bam::io::Reader<R>) -> io::Result<u64> {
    reader.read_header()?;
    let mut record = bam::Record::default();
    let mut n = 0;
    while reader.read_record(&mut record)? != 0 {
        n += 1;
    }
    Ok(n)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut threads = 0usize;
    let mut positional = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "-@" {
            threads = args.next().ok_or("-@ needs a number")?.parse()?;
        } else {
            positional.push(arg);
        }
    }
    let (path, regions) = positional.split_first().ok_or("usage: noodles-count [-@ N] FILE [REGION...]")?;
    let n = if regions.is_empty() {
        let file = File::open(path)?;
        match NonZero::new(threads) {
            None => count(&mut bam::io::Reader::new(file))?,
            Some(_) => {
                let workers = NonZero::new(threads + 1).ok_or("too many threads")?;
                let inner = bgzf::io::MultithreadedReader::with_worker_count(workers, file);
                count(&mut bam::io::Reader::from(inner))?
            }
        }
    } else {
        let mut reader = bam::io::indexed_reader::Builder::default().build_from_path(path)?;
        let header = reader.read_header()?;
        let mut n = 0u64;
        for region in regions {
            let region = region.parse()?;
            for record in reader.query(&header, &region)?.records() {
                record?;
                n += 1;
            }
        }
        n
    };
    println!("{n}");
    Ok(())
}
"#;

/// Where the baseline's project lives: `$HTS_TOOLS_DIR`, else `~/.cache/hts-tools`.
fn tools_dir() -> PathBuf {
    if let Ok(d) = std::env::var("HTS_TOOLS_DIR") {
        return PathBuf::from(d);
    }
    let home = std::env::var("HOME").unwrap_or_else(|_| "/tmp".to_string());
    PathBuf::from(home).join(".cache/hts-tools")
}

fn write_if_changed(path: &Path, text: &str) -> Result<(), String> {
    if std::fs::read_to_string(path).ok().as_deref() == Some(text) {
        return Ok(());
    }
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Generates and builds the program (a no-op when it is up to date); returns its path.
pub fn build() -> Result<PathBuf, String> {
    let dir = tools_dir().join("noodles-count-0.98.0");
    std::fs::create_dir_all(dir.join("src")).map_err(|e| format!("{}: {e}", dir.display()))?;
    write_if_changed(&dir.join("Cargo.toml"), MANIFEST)?;
    write_if_changed(&dir.join("src/main.rs"), MAIN)?;
    let target = dir.join("target");
    println!("==> building the noodles baseline in {}", dir.display());
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string()))
        .args(["build", "--release", "--quiet", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target)
        // The workspace's settings (e.g. a shared target folder) are not this project's.
        .env_remove("CARGO_TARGET_DIR")
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err(format!("building {} failed ({status})", dir.display()));
    }
    let exe = target.join("release/noodles-count");
    if exe.exists() {
        Ok(exe)
    } else {
        Err(format!("{} was not built", exe.display()))
    }
}
