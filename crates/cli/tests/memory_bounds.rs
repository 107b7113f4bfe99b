//! Memory bounds (issue 9): every length read from a file or a server is checked against what
//! the input holds before anything is allocated for it. Each hostile length below goes through
//! the `hts` binary; the process's peak resident memory (the kernel's count) must stay within
//! [`SLACK_KIB`] of the same query on sound input, and the run must end at once with one clear
//! error line naming the file. The figures are printed (`--nocapture`).
//!
//! Lengths a file really backs (a compressed bomb) are the other half of the rule: they end in
//! "out of memory" under a memory limit (tests/hostile_files.rs). Index counts are also measured
//! inside the loader with a counting allocator (crates/index/tests/hostile_alloc.rs).

use std::path::{Path, PathBuf};
use std::time::Duration;

use testkit::builders::{bgzf, BamBuilder, Rec};
use testkit::hts;
use testkit::peak::{run_measured, Measured};
use testkit::Server;

/// How far above the sound query's peak a hostile one may go.
const SLACK_KIB: u64 = 8 * 1024;
const CASE_LIMIT: Duration = Duration::from_secs(30);
/// Address space for every run, sound or hostile (`ulimit -v`): memory reserved for a claimed
/// length without being touched does not show in the resident set, but a reservation of a
/// gigabyte or more fails here, and the run with it.
const ADDRESS_LIMIT_KIB: u64 = 1024 * 1024;
/// Sparse files on the server: an index that claims 100 GB.
const HUGE: u64 = 100 << 30;

fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hts-memory-bounds-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("data")).unwrap();
    dir
}

/// Runs `hts view ARGS` under [`ADDRESS_LIMIT_KIB`], measured.
fn measure(args: &[String]) -> Measured {
    let script = format!("ulimit -v {ADDRESS_LIMIT_KIB}; exec \"$0\" \"$@\"");
    let mut full = vec![
        "-c".to_string(),
        script,
        hts().display().to_string(),
        "view".to_string(),
        "--no-cache".to_string(),
    ];
    full.extend(args.iter().cloned());
    run_measured(
        Path::new("sh"),
        &std::env::temp_dir(),
        &full,
        &[],
        CASE_LIMIT,
    )
    .unwrap_or_else(|e| panic!("hts {full:?}: {e}"))
}

fn le32(v: u32) -> [u8; 4] {
    v.to_le_bytes()
}

/// A BAM whose header is `head` and then some bytes, far fewer than `head` declares.
fn short_bam(head: &[u8]) -> Vec<u8> {
    let mut data = head.to_vec();
    data.extend_from_slice(&[0u8; 100]);
    bgzf(&data, 65280)
}

fn header() -> Vec<u8> {
    BamBuilder::new(b"@SQ\tSN:c\tLN:100\n", &[("c", 100)]).header_bytes()
}

/// A record's 32 fixed bytes: refID 0, pos 0, the given name length, n_cigar_op and l_seq.
fn fixed(l_read_name: u8, n_cigar: u16, l_seq: i32) -> Vec<u8> {
    let mut f = vec![0u8; 32];
    f[8] = l_read_name;
    f[12..14].copy_from_slice(&n_cigar.to_le_bytes());
    f[16..20].copy_from_slice(&l_seq.to_le_bytes());
    f
}

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

/// The hostile BAM files: (what, file bytes, the words the error must hold).
fn hostile_bams() -> Vec<(&'static str, Vec<u8>, &'static str)> {
    let magic: &[u8] = b"BAM\x01";
    let ten_refs = cat(&[&le32(2), b"c\0", &le32(100)]).repeat(10);
    // An aux B array claiming 0x7fffffff elements.
    let aux_bam = BamBuilder::new(b"@SQ\tSN:c\tLN:100\n", &[("c", 100)])
        .record(&Rec {
            name: "r",
            cigar: "4M",
            seq: "ACGT",
            aux: cat(&[b"XBBi", &le32(0x7fff_ffff), &le32(7)]),
            ..Rec::default()
        })
        .bytes();
    vec![
        (
            "l_text 0x7fffff00",
            short_bam(&cat(&[magic, &le32(0x7fff_ff00)])),
            "truncated BAM header (in header text)",
        ),
        (
            "n_ref 0x7fffffff",
            bgzf(
                &cat(&[magic, &le32(0), &le32(0x7fff_ffff), &ten_refs]),
                65280,
            ),
            "truncated BAM header (in reference",
        ),
        (
            "l_name 0x7fffffff",
            short_bam(&cat(&[magic, &le32(0), &le32(1), &le32(0x7fff_ffff)])),
            "truncated BAM header (in reference name)",
        ),
        // Fixed fields that fit the block (a long SEQ).
        (
            "block_size 0x7ffffff0",
            short_bam(&cat(&[
                &header(),
                &le32(0x7fff_fff0),
                &fixed(2, 0, 1 << 30),
            ])),
            "2147483632 bytes announced, the data ends first",
        ),
        // In a record of 40 bytes.
        (
            "n_cigar_op 65535",
            short_bam(&cat(&[
                &header(),
                &le32(40),
                &fixed(2, 65535, 0),
                b"r\0\0\0\0\0\0\0",
            ])),
            "need 262142 bytes but the record has 8",
        ),
        (
            "aux B array count 0x7fffffff",
            bgzf(&aux_bam, 65280),
            "corrupted aux data",
        ),
    ]
}

/// An index for `n_ref` references whose first is `first`, then 100 zero bytes.
fn bai(n_ref: u32, first: &[u8]) -> Vec<u8> {
    cat(&[b"BAI\x01", &le32(n_ref), first, &[0u8; 100]])
}

fn hostile_indexes() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("index n_ref 0x7fffffff", bai(0x7fff_ffff, &[])),
        ("index n_bin 0x7fffffff", bai(5, &le32(0x7fff_ffff))),
        (
            "index n_chunk 0x7fffffff",
            bai(5, &cat(&[&le32(1), &le32(4681), &le32(0x7fff_ffff)])),
        ),
        (
            "index n_intv 0xffffffff",
            bai(5, &cat(&[&le32(0), &le32(u32::MAX)])),
        ),
    ]
}

struct Row {
    what: String,
    run: Measured,
    baseline: u64,
}

impl Row {
    fn check(&self, needles: &[String]) -> Result<(), String> {
        let o = &self.run.outcome;
        let err = String::from_utf8_lossy(&o.stderr);
        if o.code != Some(1) {
            return Err(format!("exit {:?}: {err}", o.code));
        }
        if !o.stdout.is_empty() {
            return Err(format!("{} bytes of output", o.stdout.len()));
        }
        if err.lines().count() != 1 {
            return Err(format!("not one error line: {err}"));
        }
        if let Some(n) = needles.iter().find(|n| !err.contains(n.as_str())) {
            return Err(format!("the error lacks '{n}': {err}"));
        }
        if self.run.peak_kib > self.baseline + SLACK_KIB {
            return Err(format!(
                "peak {} KiB, baseline {} KiB",
                self.run.peak_kib, self.baseline
            ));
        }
        Ok(())
    }
}

fn sound(args: &[String]) -> u64 {
    let m = measure(args);
    assert_eq!(
        m.outcome.code,
        Some(0),
        "{}",
        String::from_utf8_lossy(&m.outcome.stderr)
    );
    m.peak_kib
}

/// Makes `path` a sparse file of `len` bytes starting with `head`.
fn sparse(path: &Path, head: &[u8], len: u64) {
    use std::io::Write;
    let mut f = std::fs::File::create(path).unwrap();
    f.write_all(head).unwrap();
    f.set_len(len).unwrap();
}

#[test]
fn hostile_lengths_stay_within_a_few_mib_of_baseline() {
    let dir = scratch();
    let data = testkit::corpus_dir().join("data");
    let bam = data.join("rand.bam").display().to_string();
    let region = "chr1:10000-150600".to_string();

    // Baselines: a sound local query and a sound remote one.
    let local_base = sound(&[
        "-X".into(),
        bam.clone(),
        data.join("rand.bam.bai").display().to_string(),
        region.clone(),
    ]);
    for f in ["rand.bam", "rand.bam.bai"] {
        std::fs::copy(data.join(f), dir.join("data").join(f)).unwrap();
    }
    // Indexes that claim 100 GB: all zeros (no magic), and a BAI whose first reference claims
    // 2^31-1 bins, the rest zeros (sparse on disk).
    sparse(&dir.join("data/zeros.bai"), &[], HUGE);
    let mut claim = b"BAI\x01".to_vec();
    claim.extend(le32(5));
    claim.extend(le32(0x7fff_ffff));
    sparse(&dir.join("data/huge.bai"), &claim, HUGE);
    let server = Server::start(&dir).unwrap();
    let remote_bam = server.url("data/rand.bam");
    let remote_base = sound(&[
        "-X".into(),
        remote_bam.clone(),
        server.url("data/rand.bam.bai"),
        region.clone(),
    ]);

    let mut rows: Vec<(Row, Vec<String>)> = Vec::new();
    let mut failures_early = Vec::new();
    for (what, bytes, word) in hostile_bams() {
        let path = dir.join(format!("{}.bam", what.replace(' ', "_")));
        std::fs::write(&path, bytes).unwrap();
        let p = path.display().to_string();
        let run = measure(std::slice::from_ref(&p));
        rows.push((
            Row {
                what: what.into(),
                run,
                baseline: local_base,
            },
            vec![p.as_str().to_owned(), word.to_string()],
        ));
    }
    for (what, bytes) in hostile_indexes() {
        let path = dir.join(format!("{}.bai", what.replace(' ', "_")));
        std::fs::write(&path, bytes).unwrap();
        let run = measure(&[
            "-X".into(),
            bam.clone(),
            path.display().to_string(),
            region.clone(),
        ]);
        rows.push((
            Row {
                what: what.into(),
                run,
                baseline: local_base,
            },
            vec![path.display().to_string(), "needs at least".to_string()],
        ));
    }
    let run = measure(&["-X".into(), bam.clone(), "/dev/zero".into(), region.clone()]);
    rows.push((
        Row {
            what: "/dev/zero as the index".into(),
            run,
            baseline: local_base,
        },
        vec!["/dev/zero".into(), "not a BAI or CSI index".into()],
    ));
    for (what, name, word) in [
        (
            "100 GB index of zeros over HTTP",
            "zeros.bai",
            "not a BAI or CSI index",
        ),
        (
            "100 GB index claiming 2^31-1 bins over HTTP",
            "huge.bai",
            "invalid index at byte",
        ),
    ] {
        server.reset();
        let run = measure(&[
            "-X".into(),
            remote_bam.clone(),
            server.url(&format!("data/{name}")),
            region.clone(),
        ]);
        // The index is not fetched whole (it was: 129 requests of 8 MiB, then an abort).
        let sent = server.summary();
        if sent.written > 4 << 20 {
            failures_early.push(format!("{what}: {sent}"));
        }
        rows.push((
            Row {
                what: what.into(),
                run,
                baseline: remote_base,
            },
            vec![format!("data/{name}"), word.to_string()],
        ));
    }

    println!("sound query: local {local_base} KiB, remote {remote_base} KiB (peak RSS)");
    println!("| hostile length | peak RSS | over baseline | time | error |");
    println!("|---|---|---|---|---|");
    let mut failures = failures_early;
    for (row, needles) in &rows {
        let err = String::from_utf8_lossy(&row.run.outcome.stderr);
        println!(
            "| {} | {} KiB | {:+} KiB | {:.2} s | {} |",
            row.what,
            row.run.peak_kib,
            row.run.peak_kib as i64 - row.baseline as i64,
            row.run.took.as_secs_f64(),
            err.trim_end().replace(dir.to_str().unwrap(), "DIR")
        );
        if let Err(why) = row.check(needles) {
            failures.push(format!("{}: {why}", row.what));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}
