//! `hts bgzip` against bgzip 1.16's output (`fixtures/tabix/bgzip`, made by `make.sh`): the
//! same compressed bytes at levels 0 to 8 and the default (also on two threads); at level 9
//! (libdeflate's 12, whose output differs between libdeflate versions) the same data.

use std::io::Write;
use std::path::PathBuf;
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
