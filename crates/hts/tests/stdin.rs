//! `-` reads standard input, BAM or CRAM told apart by its first bytes. Standard input is the
//! process's own, so the reading runs in a child: this test binary again, running only
//! `child_counts_standard_input` with `HTS_STDIN_CHILD` set and the file as its standard input.

use std::process::{Command, Stdio};

/// In the child: counts the records `hts::alignment::Reader` reads from `-`, printed on a
/// line of its own. In a normal run (no `HTS_STDIN_CHILD`) it does nothing.
#[test]
fn child_counts_standard_input() {
    if std::env::var_os("HTS_STDIN_CHILD").is_none() {
        return;
    }
    let mut reader = hts::alignment::Reader::open("-", &hts::Options::new()).unwrap();
    let mut n = 0u64;
    for record in reader.records().unwrap() {
        record.unwrap();
        n += 1;
    }
    println!("\ncount={n}");
}

fn count_stdin(fixture: &str) -> String {
    let path = testkit::workspace_root().join("fixtures").join(fixture);
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_counts_standard_input", "--nocapture"])
        .env("HTS_STDIN_CHILD", "1")
        .stdin(Stdio::from(std::fs::File::open(path).unwrap()))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{fixture}: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text.lines()
        .find_map(|l| l.strip_prefix("count="))
        .unwrap_or_else(|| panic!("{fixture}: no count in {text}"))
        .to_string()
}

#[test]
fn standard_input_is_read_as_bam_or_cram() {
    let golden = testkit::workspace_root().join("fixtures/conformance/expected/ce1000_all.out");
    let lines = std::fs::read_to_string(golden).unwrap().lines().count();
    assert_eq!(
        count_stdin("conformance/data/ce1000.bam"),
        lines.to_string()
    );
    // The embedded reference needs none given.
    let cram = "cram/aligned-3.0-embed.cram";
    let golden = testkit::workspace_root().join("fixtures/cram/expected/aligned.out.gz");
    let text = std::fs::read(golden).unwrap();
    let mut sam = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&text[..]), &mut sam).unwrap();
    assert_eq!(count_stdin(cram), sam.lines().count().to_string());
}
