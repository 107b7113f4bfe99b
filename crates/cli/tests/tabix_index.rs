//! `hts tabix` indexing against tabix 1.16 (`fixtures/tabix`, indexes made by `make.sh` with
//! the same arguments): the same index once decompressed, for every preset, generic and
//! 0-based columns, CSI; and tabix's answers to unsorted data, sequences met twice, an index
//! already there and a file that is not BGZF.

use std::io::Read;
use std::path::{Path, PathBuf};

use testkit::hts;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/tabix")
}

fn inflate(path: &Path) -> Vec<u8> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = Vec::new();
    let read = flate2::read::MultiGzDecoder::new(&bytes[..]).read_to_end(&mut out);
    assert!(read.is_ok(), "{}: {read:?}", path.display());
    out
}

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hts-tabix-index-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("dir");
    d
}

/// Runs `hts tabix ARGS FILE` in `dir`: (exit code, stderr).
fn tabix(dir: &Path, args: &[&str], file: &str) -> (i32, String) {
    let out = testkit::command(hts())
        .current_dir(dir)
        .arg("tabix")
        .args(args)
        .arg(file)
        .output()
        .expect("run");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn indexes_equal_tabixs_once_decompressed() {
    let cases: &[(&str, &[&str], &str)] = &[
        ("small.vcf.gz", &["-p", "vcf"], "tbi"),
        ("small.vcf.gz", &[], "tbi"),
        ("small.csi.vcf.gz", &["-C", "-p", "vcf"], "csi"),
        ("many.vcf.gz", &["-p", "vcf"], "tbi"),
        ("plain.bed.gz", &["-p", "bed"], "tbi"),
        ("small.gff.gz", &["-p", "gff"], "tbi"),
        ("small.sam.gz", &["-p", "sam"], "tbi"),
        (
            "zero.txt.gz",
            &["-0", "-S", "1", "-s", "1", "-b", "2", "-e", "3"],
            "tbi",
        ),
        ("empty.vcf.gz", &["-p", "vcf"], "tbi"),
        ("octal.vcf.gz", &["-p", "vcf"], "tbi"),
        (
            "long.txt.gz",
            &["-C", "-m", "14", "-s", "1", "-b", "3", "-e", "4"],
            "csi",
        ),
    ];
    let d = scratch("same");
    for (file, args, ext) in cases {
        std::fs::copy(fixtures().join(file), d.join(file)).expect("copy");
        let (rc, err) = tabix(&d, &[&["-f"], *args].concat(), file);
        assert_eq!(rc, 0, "{file} {args:?}: {err}");
        let ours = inflate(&d.join(format!("{file}.{ext}")));
        let theirs = inflate(&fixtures().join(format!("{file}.{ext}")));
        assert_eq!(ours, theirs, "{file} {args:?}");
    }
    let _ = std::fs::remove_dir_all(&d);
}

fn bgzipped(dir: &Path, name: &str, text: &str) {
    let mut w = bgzf::Writer::new(std::fs::File::create(dir.join(name)).expect("create"));
    std::io::Write::write_all(&mut w, text.as_bytes()).expect("write");
    w.finish().expect("finish");
}

#[test]
fn bad_input_gets_tabixs_answer() {
    let d = scratch("bad");
    bgzipped(
        &d,
        "u.vcf.gz",
        "c\t300\t.\tA\tC\t.\t.\t.\nc\t200\t.\tA\tC\t.\t.\t.\n",
    );
    let (rc, err) = tabix(&d, &["-p", "vcf"], "u.vcf.gz");
    assert_eq!(rc, 1);
    assert_eq!(
        err,
        "[E::hts_idx_push] Unsorted positions on sequence #1: 300 followed by 200\n\
         tbx_index_build failed: u.vcf.gz\n"
    );
    assert!(
        !d.join("u.vcf.gz.tbi").exists(),
        "no index is left for unsorted data"
    );
    bgzipped(
        &d,
        "n.vcf.gz",
        "c\t3\t.\tA\tC\n\nd\t2\t.\tA\tC\nc\t4\t.\tA\tC\n"
            .replace("\n\n", "\n")
            .as_str(),
    );
    let (rc, err) = tabix(&d, &["-p", "vcf"], "n.vcf.gz");
    assert_eq!(
        (rc, err.lines().next()),
        (
            1,
            Some("[E::hts_idx_push] Chromosome blocks not continuous")
        )
    );
    bgzipped(&d, "ok.vcf.gz", "c\t3\t.\tA\tC\n");
    assert_eq!(tabix(&d, &["-p", "vcf"], "ok.vcf.gz").0, 0);
    let (rc, err) = tabix(&d, &["-p", "vcf"], "ok.vcf.gz");
    assert_eq!(
        (rc, err.as_str()),
        (
            1,
            "[tabix] the index file exists. Please use '-f' to overwrite.\n"
        )
    );
    std::fs::write(d.join("plain.txt"), "a\n").expect("write");
    let (rc, err) = tabix(&d, &["-p", "vcf"], "plain.txt");
    assert_eq!(
        (rc, err.as_str()),
        (1, "[tabix] the compression of 'plain.txt' is not BGZF\n")
    );
    // A line with too few columns: tabix reports it, leaves it out of the index and
    // succeeds; a query that meets it fails.
    bgzipped(&d, "short.bed.gz", "chr1\t1\t5\nchr1\nchr1\t7\t9\n");
    let (rc, err) = tabix(&d, &["-p", "bed"], "short.bed.gz");
    assert_eq!(
        (rc, err.as_str()),
        (
            0,
            "[E::get_intv] Failed to parse TBX_GENERIC, was wrong -p [type] used?\n\
             The offending line was: \"chr1\"\n"
        )
    );
    let out = testkit::command(hts())
        .current_dir(&d)
        .args(["tabix", "short.bed.gz", "chr1"])
        .output()
        .expect("run");
    assert_eq!(
        (out.status.code(), &out.stdout[..]),
        (Some(1), &b"chr1\t1\t5\n"[..])
    );
    let _ = std::fs::remove_dir_all(&d);
}
