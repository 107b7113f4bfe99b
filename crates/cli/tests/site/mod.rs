//! What the tests of cached and partly read remote indexes share: a served folder of corpus
//! copies, `hts view` run with a cache folder of its own, and the local answer.
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use testkit::{LogEntry, Server};

pub use testkit::hts;

pub fn scratch(tag: &str) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let d = std::env::temp_dir().join(format!(
        "hts-cache-test-{}-{tag}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

/// A folder served over HTTP holding copies of corpus files (so a test may change them).
pub struct Site {
    pub dir: PathBuf,
    pub server: Server,
}

impl Site {
    pub fn new(files: &[(&str, &str)]) -> Site {
        let dir = scratch("site");
        for (from, to) in files {
            fs::copy(testkit::corpus_dir().join("data").join(from), dir.join(to)).unwrap();
        }
        let server = Server::start(&dir).unwrap();
        Site { dir, server }
    }

    pub fn url(&self, name: &str) -> String {
        self.server.url(name)
    }

    /// Replaces `to` with corpus file `from`.
    pub fn replace(&self, from: &str, to: &str) {
        fs::copy(
            testkit::corpus_dir().join("data").join(from),
            self.dir.join(to),
        )
        .unwrap();
    }

    /// Sets the modification time of `name` (what the server's ETag and Last-Modified show).
    pub fn touch(&self, name: &str, at: SystemTime) {
        let f = fs::File::options()
            .write(true)
            .open(self.dir.join(name))
            .unwrap();
        f.set_modified(at).unwrap();
    }
}

/// Runs `hts view ARGS` with its cache in `cache`: (stdout, stderr).
pub fn view(args: &[&str], cache: &Path, env: &[(&str, &str)]) -> (Vec<u8>, String) {
    run("view", args, cache, env)
}

/// Runs `hts COMMAND ARGS` with its cache in `cache`; it must succeed: (stdout, stderr).
pub fn run(command: &str, args: &[&str], cache: &Path, env: &[(&str, &str)]) -> (Vec<u8>, String) {
    let out = testkit::command(hts())
        .env("XDG_CACHE_HOME", cache)
        .envs(env.iter().copied())
        .arg(command)
        .args(args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "hts {command} {args:?}: {err}");
    (out.stdout, err)
}

pub fn local(args: &[&str], bam: &Path) -> Vec<u8> {
    let bam = bam.display().to_string();
    let mut all = vec!["--no-cache", bam.as_str()];
    all.extend_from_slice(args);
    view(&all, &scratch("none"), &[]).0
}

pub const REGIONS: [&str; 3] = ["chr1:10000-10500", "chr2:5000-5400", "chrM:100-300"];

pub fn requests_for<'a>(log: &'a [LogEntry], suffix: &str) -> Vec<&'a LogEntry> {
    log.iter().filter(|e| e.path.ends_with(suffix)).collect()
}

/// The ends of the bounded requests for `name` but those from byte 0 (a header's, an
/// opening's), sorted: a cold span may start later, where the header's request left off.
pub fn span_ends(log: &[LogEntry], name: &str) -> Vec<u64> {
    let mut out: Vec<_> = log
        .iter()
        .filter(|e| e.path.ends_with(&format!("/{name}")))
        .filter_map(|e| e.bounded_range())
        .filter(|r| r.0 > 0)
        .map(|r| r.1)
        .collect();
    out.sort_unstable();
    out
}

/// The header request of a cold open.
pub fn fetched_header(log: &[LogEntry]) -> bool {
    requests_for(log, ".bam")
        .iter()
        .any(|e| e.range.as_deref() == Some("bytes=0-16383"))
}

/// x.bam (rand.bam) and its BAI served, an empty cache folder, and the local output of
/// [`REGIONS`].
pub fn bai_site() -> (Site, PathBuf, Vec<u8>) {
    let site = Site::new(&[("rand.bam", "x.bam"), ("rand.bam.bai", "x.bam.bai")]);
    let expected = local(&REGIONS, &site.dir.join("x.bam"));
    (site, scratch("cache"), expected)
}

/// `hts view URL REGIONS...`'s arguments.
pub fn query_args(url: &str) -> Vec<&str> {
    let mut args = vec![url];
    args.extend(REGIONS);
    args
}
