//! The tabix corpus (`fixtures/tabix`, goldens from Debian's tabix 1.16 by `make.sh`): every
//! case's standard output and exit code from `hts tabix`, locally and over HTTP, byte for
//! byte (BGZF output from `-r`: block by block, each block's data and size; the compressed
//! bytes depend on the libdeflate version), over nginx and over s3:// (s3s-fs) too, with
//! pre-signed URLs; and the requests of a remote five-region query, every one bounded.

use std::path::PathBuf;

use testkit::corpus::{apply_env, EnvChange};
use testkit::hts;
use testkit::s3::{self, S3Stack};
use testkit::Server;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/tabix")
}

struct Case {
    id: String,
    input: String,
    args: Vec<String>,
    out: Vec<u8>,
    rc: i32,
}

fn cases() -> Vec<Case> {
    let d = dir();
    let text = std::fs::read_to_string(d.join("cases.tsv")).expect("cases.tsv");
    let mut all = Vec::new();
    for l in text.lines().filter(|l| !l.is_empty()) {
        let mut f = l.splitn(3, '\t');
        let (id, input, args) = (f.next(), f.next(), f.next());
        let (Some(id), Some(input), Some(args)) = (id, input, args) else {
            panic!("bad case line {l:?}");
        };
        let golden = |ext: &str| d.join("golden").join(format!("{id}.{ext}"));
        let out = std::fs::read(golden("out")).expect("golden out");
        let rc = std::fs::read_to_string(golden("rc")).expect("golden rc");
        all.push(Case {
            id: id.to_string(),
            input: input.to_string(),
            args: args.split(' ').map(str::to_string).collect(),
            out,
            rc: rc.trim().parse().expect("golden rc is a number"),
        });
    }
    assert!(all.len() >= 95, "only {} cases", all.len());
    all
}

/// Runs `hts tabix LOCATION ARGS` (as make.sh runs tabix) in an empty directory, an argument
/// naming a file of the corpus (a regions file, a header) given as its full path; (stdout,
/// exit code, stderr). Fails if anything was written to that directory.
fn run(location: &str, args: &[String], env: &[EnvChange]) -> (Vec<u8>, i32, String) {
    let cwd = tempdir();
    let d = dir();
    let args: Vec<String> = args
        .iter()
        .map(|a| match d.join(a) {
            p if p.is_file() => p.display().to_string(),
            _ => a.clone(),
        })
        .collect();
    let mut command = testkit::command(hts());
    apply_env(&mut command, env);
    let out = command
        .current_dir(&cwd)
        .arg("tabix")
        .arg(location)
        .args(&args)
        .output()
        .expect("run hts");
    let left: Vec<_> = std::fs::read_dir(&cwd).expect("cwd").collect();
    assert!(
        left.is_empty(),
        "hts tabix wrote into the working directory: {left:?}"
    );
    let _ = std::fs::remove_dir(&cwd);
    (
        out.stdout,
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A BGZF file's blocks, each as (its data size, its data); `None` if `bytes` is not BGZF.
fn blocks(bytes: &[u8]) -> Option<Vec<(usize, Vec<u8>)>> {
    use std::io::Read;
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let b = bytes.get(at..)?;
        if b.len() < 18 || b[..4] != [0x1f, 0x8b, 8, 4] {
            return None;
        }
        let len = usize::from(u16::from_le_bytes([b[16], b[17]])) + 1;
        let block = b.get(..len)?;
        let mut data = Vec::new();
        flate2::read::DeflateDecoder::new(block.get(18..len - 8)?)
            .read_to_end(&mut data)
            .ok()?;
        out.push((data.len(), data));
        at += len;
    }
    Some(out)
}

/// The output is tabix's: byte for byte, or block for block when both are BGZF.
fn same(ours: &[u8], golden: &[u8]) -> bool {
    if ours == golden {
        return true;
    }
    match (
        golden.starts_with(&[0x1f, 0x8b]),
        blocks(ours),
        blocks(golden),
    ) {
        (true, Some(a), Some(b)) => a == b,
        _ => false,
    }
}

fn tempdir() -> PathBuf {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let d = std::env::temp_dir().join(format!(
        "hts-tabix-cwd-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn run_corpus(label: &str, location: impl Fn(&str) -> String, env: &[EnvChange]) {
    let (mut passed, mut failed) = (0, Vec::new());
    for c in cases() {
        let (out, rc, err) = run(&location(&c.input), &c.args, env);
        if same(&out, &c.out) && rc == c.rc {
            passed += 1;
        } else {
            failed.push(format!(
                "{}: rc {rc} (want {}), {} bytes (want {}); stderr: {err}",
                c.id,
                c.rc,
                out.len(),
                c.out.len()
            ));
        }
    }
    eprintln!(
        "tabix corpus {label}: {passed} passed, {} failed",
        failed.len()
    );
    assert!(failed.is_empty(), "{label}:\n{}", failed.join("\n"));
}

#[test]
fn corpus_locally() {
    let d = dir();
    run_corpus("local", |input| d.join(input).display().to_string(), &[]);
}

#[test]
fn corpus_over_http() {
    let server = Server::start(&dir()).expect("server");
    run_corpus("http", |input| server.url(input), &[]);
    assert_eq!(server.summary().unbounded, 0, "every request was bounded");
}

#[test]
fn a_remote_five_region_query_asks_only_bounded_ranges() {
    let server = Server::start(&dir()).expect("server");
    let case = cases()
        .into_iter()
        .find(|c| c.id == "many_five")
        .expect("many_five case");
    let (out, rc, err) = run(&server.url("many.vcf.gz"), &case.args, &[]);
    assert_eq!((rc, out == case.out), (0, true), "{err}");
    let size = std::fs::metadata(dir().join("many.vcf.gz"))
        .expect("size")
        .len();
    let log = server.log();
    let data: Vec<_> = log
        .iter()
        .filter(|e| e.path.ends_with("many.vcf.gz"))
        .collect();
    assert!(!data.is_empty());
    for e in &log {
        eprintln!("{} {} {:?} -> {}", e.method, e.path, e.range, e.status);
    }
    let mut asked: u64 = 0;
    for e in data {
        let range = e.range.as_deref().unwrap_or("");
        let (a, b) = range
            .strip_prefix("bytes=")
            .and_then(|r| r.split_once('-'))
            .unwrap_or_else(|| panic!("unbounded request {range:?}"));
        if a.is_empty() {
            continue; // a suffix range (the last bytes) is bounded by itself
        }
        let (a, b): (u64, u64) = (
            a.parse().expect("start"),
            b.parse().expect("unbounded range"),
        );
        // The first read asks for one block, which may run past a small file's end.
        assert!(
            a <= b && a < size,
            "range {range} outside the file of {size} bytes"
        );
        asked += b.min(size - 1) + 1 - a;
    }
    // Regions are read one after another, each chunk with its own bounded request (no plan
    // shared between regions yet): a region read again is asked for again, but never more
    // than each region's chunks to the block holding their end.
    eprintln!("asked for {asked} bytes of {size}");
    assert!(asked <= 2 * size, "asked for {asked} of {size} bytes");
}

#[test]
fn corpus_over_nginx() {
    let ng = testkit::nginx::Nginx::start_required(&dir());
    let base = ng.base_url();
    run_corpus("nginx", |input| format!("{base}/{input}"), &[]);
    ng.check_bounded().unwrap_or_else(|e| panic!("{e}"));
}

const BUCKET: &str = "tabix";

/// s3s-fs (checking every signature) behind the logging proxy, the corpus's data and indexes
/// in the bucket `tabix`.
fn s3_stack() -> S3Stack {
    let objects = s3::folder_objects(&dir()).expect("fixtures/tabix");
    S3Stack::start(&[(BUCKET, objects)], testkit::Link::default())
        .unwrap_or_else(|e| panic!("the S3 test bed: {e}"))
}

fn s3_env(stack: &S3Stack) -> Vec<EnvChange> {
    let mut env = stack.env(s3::SECRET_KEY);
    env.push(("HTS_CACHE".into(), Some("off".into())));
    env
}

#[test]
fn corpus_over_s3() {
    let stack = s3_stack();
    run_corpus(
        "s3",
        |input| format!("s3://{BUCKET}/{input}"),
        &s3_env(&stack),
    );
    let summary = stack.proxy.settled_summary();
    assert!(summary.gets > 0);
    assert_eq!(summary.unbounded, 0, "every request was bounded");
}

#[test]
fn presigned_urls_with_idx_read_the_five_regions() {
    let stack = s3_stack();
    let python = s3::boto3_python().unwrap_or_else(|e| panic!("boto3: {e}"));
    let keys = ["many.vcf.gz", "many.vcf.gz.tbi"];
    let urls = s3::presign(&python, &stack.endpoint(), BUCKET, &keys, 3600).expect("presign");
    let case = cases()
        .into_iter()
        .find(|c| c.id == "many_five")
        .expect("many_five case");
    // No AWS settings: the URLs carry their signatures.
    let env: Vec<EnvChange> = stack
        .env(s3::SECRET_KEY)
        .into_iter()
        .map(|(k, _)| (k, None))
        .chain([("HTS_CACHE".to_string(), Some("off".to_string()))])
        .collect();
    stack.proxy.reset();
    let joined = format!("{}##idx##{}", urls[0], urls[1]);
    let (out, rc, err) = run(&joined, &case.args, &env);
    assert_eq!((rc, out == case.out), (0, true), "{err}");
    let signature = |u: &str| u.split("X-Amz-Signature=").nth(1).unwrap_or("").to_string();
    assert!(!err.contains(&signature(&urls[0])) && !err.contains(&signature(&urls[1])));
    let log = stack.proxy.log();
    assert!(log.iter().any(|e| e.path.ends_with("many.vcf.gz.tbi")));
    for e in &log {
        assert_eq!(e.method, "GET", "a pre-signed GET refuses HEAD: {e:?}");
        assert!(e.is_bounded(), "{e:?}");
        let query = e.query.as_deref().unwrap_or("");
        assert!(
            urls.iter().any(|u| u.ends_with(query)),
            "used verbatim: {query}"
        );
    }
    // Without ##idx## no index name can be made from a signed URL: none is asked for.
    stack.proxy.reset();
    let (out, rc, _) = run(&urls[0], &case.args, &env);
    assert_eq!((rc, out.len()), (1, 0));
    assert!(stack
        .proxy
        .log()
        .iter()
        .all(|e| e.path.ends_with("many.vcf.gz")));
}
