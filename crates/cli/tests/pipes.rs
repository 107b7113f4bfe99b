//! Output into a pipe (issue 21): `hts view big.bam | head -1` ends at once, as samtools does
//! (by the broken pipe, status 141); a slow reader gets every byte, the same as a fast one and
//! as samtools writes; and a damaged input gets the records before the damage at every thread
//! count, as samtools writes them, then the error and a nonzero exit.
//!
//! The input is generated here, large enough (about 12 MB of SAM text) to fill a pipe's buffer
//! and the writer thread's queue many times over. samtools (installed by `.ci/run`) is the
//! reference.

use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use testkit::builders::{bgzf, BamBuilder, Rec};
use testkit::{hts, Rng};

const RECORDS: usize = 40_000;
/// Every run ends within this, or the test fails.
const LIMIT: Duration = Duration::from_secs(60);

fn scratch() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        // In the build's own scratch folder, under one name: each run replaces the last's
        // 70 MB instead of leaving it behind in the system's temporary folder.
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pipes");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    })
}

/// The uncompressed BAM stream of the test input.
fn bam_stream() -> Vec<u8> {
    let mut rng = Rng::new(21);
    let mut builder = BamBuilder::new(
        b"@HD\tVN:1.6\tSO:coordinate\n@SQ\tSN:chr1\tLN:50000000\n",
        &[("chr1", 50_000_000)],
    );
    let mut pos = 0;
    for i in 0..RECORDS {
        pos += rng.below(1000) as i32;
        let seq: String = (0..100).map(|_| b"ACGT"[rng.below(4)] as char).collect();
        let qual: Vec<u8> = (0..100).map(|_| rng.below(41) as u8).collect();
        let name = format!("read{i}");
        builder = builder.record(&Rec {
            name: &name,
            flag: if i % 2 == 0 { 0 } else { 16 },
            pos,
            cigar: "100M",
            seq: &seq,
            qual: Some(qual),
            aux: b"NMC\x01".to_vec(),
            ..Rec::default()
        });
    }
    builder.bytes()
}

/// The test input, BGZF-compressed (blocks of 60,000 bytes).
fn big_bam() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let path = scratch().join("big.bam");
        std::fs::write(&path, bgzf(&bam_stream(), 60_000)).unwrap();
        path
    })
}

/// Waits for `child` at most [`LIMIT`].
fn wait(child: &mut Child, what: &str) -> ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > LIMIT {
            let _ = child.kill();
            panic!("{what} did not end within {LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Runs `program args` and reads its whole stdout, slowly when `pause` is set (a pause after
/// every 4 KiB read); returns the bytes, the status and stderr.
fn read_all(
    program: &Path,
    args: &[&str],
    pause: Option<Duration>,
) -> (Vec<u8>, ExitStatus, String) {
    let mut child = Command::new(program)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let mut all = Vec::new();
    let mut buf = vec![0u8; 4096];
    loop {
        let n = stdout.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        all.extend_from_slice(&buf[..n]);
        if let Some(p) = pause {
            std::thread::sleep(p);
        }
    }
    let status = wait(&mut child, &format!("{} {args:?}", program.display()));
    (all, status, errors.join().unwrap())
}

fn samtools() -> &'static Path {
    Path::new("samtools")
}

/// Reads one line of the output and closes the pipe: the writer must end at once, by the broken
/// pipe, quietly.
fn ends_after_first_line(program: &Path, args: &[&str]) -> (ExitStatus, Duration, String) {
    let start = Instant::now();
    let mut child = Command::new(program)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = Vec::new();
    let mut byte = [0u8; 1];
    while stdout.read(&mut byte).unwrap() == 1 && byte[0] != b'\n' {
        first.push(byte[0]);
    }
    assert!(!first.is_empty(), "{args:?}: no output");
    drop(stdout);
    let status = wait(&mut child, &format!("{} {args:?}", program.display()));
    let mut errors = String::new();
    let _ = child.stderr.take().unwrap().read_to_string(&mut errors);
    (status, start.elapsed(), errors)
}

#[test]
fn head_ends_at_once_like_samtools() {
    let bam = big_bam().display().to_string();
    for options in [&[][..], &["-@", "2"], &["-b", "-@", "2"], &["-u"], &["-b"]] {
        let mut args = vec!["view"];
        args.extend_from_slice(options);
        args.push(&bam);
        let (status, took, errors) = ends_after_first_line(hts(), &args);
        // hts ignores SIGPIPE (its `main` sets that up, as Rust's runtime would) and exits with
        // the status a shell shows for samtools, which the signal kills.
        assert_eq!(status.code(), Some(141), "hts {args:?}: {status}; {errors}");
        assert!(errors.is_empty(), "hts {args:?}: {errors}");
        let (theirs, _, _) = ends_after_first_line(samtools(), &args);
        assert_eq!(theirs.signal(), Some(13), "samtools {args:?}: {theirs}");
        // The whole file takes far longer into a reader that keeps reading.
        assert!(took < Duration::from_secs(10), "hts {args:?} took {took:?}");
    }
}

#[test]
fn a_slow_reader_gets_all_of_it() {
    let bam = big_bam().display().to_string();
    let (reference, status, _) = read_all(samtools(), &["view", &bam], None);
    assert!(status.success());
    assert!(reference.len() > 8 << 20, "{} bytes", reference.len());
    for threads in ["0", "2"] {
        let args = ["view", "-@", threads, &bam];
        let (fast, status, errors) = read_all(hts(), &args, None);
        assert!(status.success(), "{args:?}: {errors}");
        assert!(
            fast == reference,
            "{args:?}: fast reader's output differs from samtools'"
        );
        let (slow, status, errors) = read_all(hts(), &args, Some(Duration::from_micros(300)));
        assert!(status.success(), "{args:?}: {errors}");
        assert!(slow == reference, "{args:?}: slow reader's output differs");
        // BAM too, compressed and not: the same bytes into a slow reader as into a file (no
        // @PG line, which would hold the different command lines).
        for format in ["-b", "-u"] {
            let file = scratch().join(format!("fast-{threads}{format}.bam"));
            let file_arg = file.display().to_string();
            let out = Command::new(hts())
                .args([
                    "view", "--no-PG", format, "-@", threads, "-o", &file_arg, &bam,
                ])
                .output()
                .unwrap();
            assert!(out.status.success());
            let args = ["view", "--no-PG", format, "-@", threads, &bam];
            let (slow, status, errors) = read_all(hts(), &args, Some(Duration::from_micros(300)));
            assert!(status.success(), "{args:?}: {errors}");
            assert!(
                slow == std::fs::read(&file).unwrap(),
                "{args:?}: BAM differs"
            );
        }
        // And a count, as samtools counts.
        let args = ["view", "-c", "-@", threads, &bam];
        let (count, status, errors) = read_all(hts(), &args, Some(Duration::from_micros(300)));
        assert!(status.success(), "{args:?}: {errors}");
        let (expected, _, _) = read_all(samtools(), &args, None);
        assert_eq!(count, expected, "{args:?}");
    }
}

/// `bytes` cut short `keep` bytes in, or with a byte of compressed data changed there.
fn damaged(name: &str, keep: usize, flip: bool) -> String {
    let mut bytes = std::fs::read(big_bam()).unwrap();
    if flip {
        bytes[keep] ^= 0x55;
    } else {
        bytes.truncate(keep);
    }
    let path = scratch().join(name);
    std::fs::write(&path, bytes).unwrap();
    path.display().to_string()
}

#[test]
fn damaged_input_keeps_the_records_before_the_damage_at_every_thread_count() {
    let size = std::fs::metadata(big_bam()).unwrap().len() as usize;
    for (name, flip) in [("truncated.bam", false), ("corrupt.bam", true)] {
        let path = damaged(name, size * 3 / 5, flip);
        let (reference, status, errors) = read_all(samtools(), &["view", &path], None);
        assert_eq!(status.code(), Some(1), "samtools on {name}: {errors}");
        // Many records come before the damage, and not all of them.
        let lines = reference.iter().filter(|&&b| b == b'\n').count();
        assert!(
            lines > RECORDS / 2 && lines < RECORDS,
            "{name}: {lines} lines"
        );
        for threads in ["0", "1", "2"] {
            for into_file in [false, true] {
                let args = ["view", "-@", threads, &path];
                let (out, status, errors) = if into_file {
                    let file = scratch().join(format!("{name}-{threads}.sam"));
                    let file_arg = file.display().to_string();
                    let full = ["view", "-@", threads, "-o", &file_arg, &path];
                    let run = Command::new(hts()).args(full).output().unwrap();
                    let errors = String::from_utf8_lossy(&run.stderr).into_owned();
                    (std::fs::read(&file).unwrap(), run.status, errors)
                } else {
                    read_all(hts(), &args, None)
                };
                let what = format!(
                    "{args:?} into a {}",
                    if into_file { "file" } else { "pipe" }
                );
                assert_eq!(status.code(), Some(1), "{what}: {errors}");
                assert!(
                    errors
                        .lines()
                        .any(|l| l.starts_with("hts view: ") && l.contains(name)),
                    "{what}: {errors}"
                );
                assert!(
                    out == reference,
                    "{what}: {} bytes, samtools {}",
                    out.len(),
                    reference.len()
                );
            }
        }
    }
}
