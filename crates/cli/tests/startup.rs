//! Start-up (issue 21): a local query never loads or initialises the TLS stack; only opening a
//! remote file does.
//!
//! What is observed: OpenSSL's initialisation reads its configuration file, named by
//! `OPENSSL_CONF`. Pointed at a FIFO with no writer, that read blocks, so a local query that
//! initialised TLS would hang (and fail here by the time limit), while a remote open is seen
//! waiting in it: a FIFO opened for writing without blocking has a reader only then.

use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_secs(30);

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/conformance/data")
        .join(name)
}

/// A FIFO in a fresh directory, for `OPENSSL_CONF`.
fn fifo(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hts-startup-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("openssl.cnf");
    let _ = std::fs::remove_file(&path);
    let status = Command::new("mkfifo").arg(&path).status().unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
    path
}

/// Runs hts with `OPENSSL_CONF=conf`, its output into a file beside `conf` (a pipe nobody reads
/// while the test watches the FIFO could fill).
fn spawn(args: &[&str], conf: &Path) -> Child {
    let out = std::fs::File::create(conf.with_file_name("out")).unwrap();
    Command::new(testkit::hts())
        .args(args)
        .env("OPENSSL_CONF", conf)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// True once some process has `fifo` open for reading (or is blocked opening it).
fn has_reader(fifo: &Path) -> bool {
    match std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(fifo)
    {
        Ok(_) => true,
        Err(e) if e.raw_os_error() == Some(libc::ENXIO) => false,
        Err(e) => panic!("{}: {e}", fifo.display()),
    }
}

#[test]
fn local_queries_never_initialise_tls() {
    let conf = fifo("local");
    let bam = fixture("rand.bam");
    let bam = bam.to_str().unwrap();
    for args in [
        &["--version"][..],
        &["view", "-H", bam],
        &["view", "-c", bam, "chr1:1-1000"],
        &["view", bam, "chr2"],
    ] {
        let mut child = spawn(args, &conf);
        let start = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if start.elapsed() > LIMIT || has_reader(&conf) {
                let _ = child.kill();
                let _ = child.wait();
                panic!("hts {args:?} read OPENSSL_CONF: the TLS stack was initialised");
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let out = child.wait_with_output().unwrap();
        assert!(
            status.success(),
            "hts {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let written = std::fs::read(conf.with_file_name("out")).unwrap();
        assert!(!written.is_empty(), "hts {args:?} wrote nothing");
    }
}

/// The control: the same observation sees a remote open initialise TLS (so the test above can
/// fail).
#[test]
fn a_remote_open_initialises_tls() {
    let conf = fifo("remote");
    // A server that takes the connection and never answers: the query waits, bounded below.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/x.bam", listener.local_addr().unwrap());
    let mut child = spawn(&["view", "-H", &url], &conf);
    let start = Instant::now();
    let seen = loop {
        if has_reader(&conf) {
            break true;
        }
        if start.elapsed() > LIMIT || child.try_wait().unwrap().is_some() {
            break false;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let _ = child.kill();
    let _ = child.wait();
    assert!(seen, "opening {url} never read OPENSSL_CONF");
}
