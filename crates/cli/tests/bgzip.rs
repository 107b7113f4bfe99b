//! `hts bgzip` against bgzip 1.16's output (`fixtures/tabix/bgzip`, made by `make.sh`): the
//! same compressed bytes at levels 0 to 8 and the default (also on two threads); at level 9
//! (libdeflate's 12, whose output differs between libdeflate versions) the same data; `.gzi`
//! indexes from `-i` and `-r` byte for byte, `-b`/`-s` reads, `-g` recompression and `-t`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use testkit::hts;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/tabix/bgzip")
}

fn read(name: &str) -> Vec<u8> {
    std::fs::read(dir().join(name)).expect("fixture")
}

/// `hts bgzip ARGS` with `input` on standard input; its standard output.
fn bgzip(args: &[&str], input: &[u8]) -> Vec<u8> {
    let mut child = testkit::command(hts())
        .arg("bgzip")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let data = input.to_vec();
    let feeder = std::thread::spawn(move || stdin.write_all(&data));
    let out = child.wait_with_output().expect("wait");
    assert!(feeder.join().is_ok_and(|r| r.is_ok()));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn compressed_bytes_equal_bgzips_at_levels_0_to_8() {
    let input = read("input.txt");
    assert_eq!(bgzip(&["-c"], &input), read("default.gz"));
    assert_eq!(bgzip(&["-c", "-@", "2"], &input), read("default.gz"));
    for l in ["0", "1", "6", "8"] {
        assert_eq!(
            bgzip(&["-c", "-l", l], &input),
            read(&format!("l{l}.gz")),
            "level {l}"
        );
    }
}

#[test]
fn level_9_and_decompression_give_the_same_data() {
    let input = read("input.txt");
    let ours = bgzip(&["-c", "-l", "9"], &input);
    assert_eq!(bgzip(&["-dc"], &ours), input);
    for g in ["l9.gz", "l0.gz", "default.gz"] {
        assert_eq!(bgzip(&["-d", "-c"], &read(g)), input, "{g}");
    }
}

#[test]
fn files_are_replaced_kept_or_refused_as_bgzip_does() {
    let d = std::env::temp_dir().join(format!("hts-bgzip-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("dir");
    let f = d.join("x.txt");
    std::fs::write(&f, read("input.txt")).expect("write");
    let run = |args: &[&str]| {
        testkit::command(hts())
            .arg("bgzip")
            .args(args)
            .output()
            .expect("run")
            .status
            .success()
    };
    let name = f.display().to_string();
    assert!(run(&["-k", &name]));
    assert!(f.exists(), "-k keeps the input");
    assert_eq!(
        std::fs::read(d.join("x.txt.gz")).expect("gz"),
        read("default.gz")
    );
    assert!(
        !run(&[&name]),
        "an existing x.txt.gz is not overwritten without -f"
    );
    assert!(run(&["-f", &name]));
    assert!(!f.exists(), "the input is removed without -k");
    assert!(run(&["-d", &format!("{name}.gz")]));
    assert_eq!(std::fs::read(&f).expect("txt"), read("input.txt"));
    assert!(!d.join("x.txt.gz").exists());
    let _ = std::fs::remove_dir_all(&d);
}

fn tabix_fixture(name: &str) -> PathBuf {
    dir().join("..").join(name)
}

/// `hts bgzip ARGS` in `cwd`: (exit code, stdout, stderr).
fn run_in(cwd: &Path, args: &[&str]) -> (i32, Vec<u8>, String) {
    let out = testkit::command(hts())
        .current_dir(cwd)
        .arg("bgzip")
        .args(args)
        .output()
        .expect("run");
    (
        out.status.code().unwrap_or(-1),
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hts-bgzip-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("dir");
    d
}

#[test]
fn gzi_indexes_equal_bgzips() {
    let d = scratch("gzi");
    std::fs::write(d.join("input.txt"), read("input.txt")).expect("write");
    let (rc, _, err) = run_in(&d, &["-i", "-k", "input.txt"]);
    assert_eq!(rc, 0, "{err}");
    assert_eq!(
        std::fs::read(d.join("input.txt.gz")).expect("gz"),
        read("default.gz")
    );
    assert_eq!(
        std::fs::read(d.join("input.txt.gz.gzi")).expect("gzi"),
        read("default.gz.gzi")
    );
    // -I names the index; on two threads the blocks and the index are the same.
    let (rc, out, err) = run_in(&d, &["-i", "-I", "two.gzi", "-c", "-@", "2", "input.txt"]);
    assert_eq!((rc, out == read("default.gz")), (0, true), "{err}");
    assert_eq!(
        std::fs::read(d.join("two.gzi")).expect("gzi"),
        read("default.gz.gzi")
    );
    // -r rebuilds it from the compressed file.
    std::fs::copy(tabix_fixture("many.vcf.gz"), d.join("many.vcf.gz")).expect("copy");
    let (rc, _, err) = run_in(&d, &["-r", "many.vcf.gz"]);
    assert_eq!(rc, 0, "{err}");
    assert_eq!(
        std::fs::read(d.join("many.vcf.gz.gzi")).expect("gzi"),
        read("many.gzi")
    );
    // Standard input needs -I; a plain gzip file cannot be indexed.
    assert_eq!(run_in(&d, &["-i", "-"]).0, 1);
    std::fs::write(d.join("plain.gz"), gzip(b"some text\n")).expect("write");
    assert_eq!(run_in(&d, &["-r", "plain.gz"]).0, 1);
    assert!(!d.join("plain.gz.gzi").exists());
    let _ = std::fs::remove_dir_all(&d);
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).expect("gzip");
    e.finish().expect("gzip")
}

#[test]
fn offsets_sizes_and_rebgzip_read_as_bgzip_does() {
    let d = scratch("offsets");
    std::fs::copy(tabix_fixture("many.vcf.gz"), d.join("many.vcf.gz")).expect("copy");
    let gzi = dir().join("many.gzi").display().to_string();
    for (args, golden) in [
        (&["-b", "70000", "-s", "100"][..], "b70000_s100.out"),
        (&["-b", "65280", "-s", "5"], "b65280_s5.out"),
        (&["-b", "780000"], "b780000.out"),
    ] {
        let mut all = args.to_vec();
        all.extend(["-I", &gzi, "many.vcf.gz"]);
        let (rc, out, err) = run_in(&d, &all);
        assert_eq!((rc, out == read(golden)), (0, true), "{args:?}: {err}");
    }
    // Without -I the index is FILE.gzi, which must exist.
    assert_eq!(run_in(&d, &["-b", "10", "many.vcf.gz"]).0, 1);
    std::fs::copy(dir().join("many.gzi"), d.join("many.vcf.gz.gzi")).expect("copy");
    let (rc, out, _) = run_in(&d, &["-b", "70000", "-s", "100", "many.vcf.gz"]);
    assert_eq!((rc, out), (0, read("b70000_s100.out")));
    // At the end of the data, or past it, there is nothing to read: an error, as in bgzip.
    assert_eq!(run_in(&d, &["-b", "814411", "many.vcf.gz"]).0, 1);
    assert_eq!(run_in(&d, &["-b", "900000", "many.vcf.gz"]).0, 1);
    // -g puts the same data in the same blocks.
    let text = bgzip(&["-dc"], &std::fs::read(d.join("many.vcf.gz")).expect("gz"));
    let out = bgzip(&["-g", "-I", &gzi, "-c"], &text);
    assert_eq!(blocks(&out), blocks(&read("rebgzip.gz")));
    assert!(
        out == read("rebgzip.gz"),
        "the same bytes with this libdeflate"
    );
    assert!(
        d.join("many.vcf.gz").exists(),
        "-b and -s write to standard output"
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// Each block's uncompressed size, from its ISIZE.
fn blocks(bgzf: &[u8]) -> Vec<u32> {
    let mut out = Vec::new();
    let mut at = 0;
    while at + 18 <= bgzf.len() {
        let len = usize::from(u16::from_le_bytes([bgzf[at + 16], bgzf[at + 17]])) + 1;
        let end = (at + len).min(bgzf.len());
        out.push(u32::from_le_bytes(
            bgzf[end - 4..end].try_into().expect("isize"),
        ));
        at += len;
    }
    out
}

#[test]
fn test_mode_checks_without_writing() {
    let d = scratch("test");
    let whole = std::fs::read(tabix_fixture("many.vcf.gz")).expect("gz");
    std::fs::write(d.join("ok.gz"), &whole).expect("write");
    std::fs::write(d.join("cut.gz"), &whole[..5000]).expect("write");
    let (rc, out, err) = run_in(&d, &["-t", "ok.gz"]);
    assert_eq!((rc, out.len()), (0, 0), "{err}");
    let (rc, out, _) = run_in(&d, &["-t", "cut.gz"]);
    assert_eq!((rc, out.len()), (1, 0), "a truncated file fails the test");
    assert!(d.join("ok.gz").exists() && !d.join("ok").exists());
    let _ = std::fs::remove_dir_all(&d);
}
