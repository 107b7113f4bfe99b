//! Hostile local files through the `hts` binary (issue 9): lengths a compressed bomb really
//! backs, lengths the record cannot hold, and messages that name the file and offset on one
//! line. Each test failed before its fix.

use std::path::PathBuf;
use std::process::Output;

use testkit::builders::{bgzf, bgzf_block, BamBuilder, Rec, EOF_MARKER};
use testkit::hts;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hts-hostile-files-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// `hts view ARGS` under a limit on its address space (`ulimit -v`, in KiB), as a machine with
/// little memory would run it.
fn view_limited(limit_kib: u64, args: &[&str]) -> Output {
    let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
    let script = format!(
        "ulimit -v {limit_kib}; exec '{}' view {}",
        hts().display(),
        quoted.join(" ")
    );
    testkit::command("sh")
        .args(["-c", &script])
        .output()
        .unwrap()
}

fn view(args: &[&str]) -> Output {
    testkit::command(hts())
        .arg("view")
        .args(args)
        .output()
        .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `head` (uncompressed), then `zeros` bytes of zeros in blocks that compress 700-fold, then
/// the EOF marker: a file of a few hundred KB whose declared lengths are really backed.
fn bomb(head: &[u8], zeros: usize) -> Vec<u8> {
    let mut file = bgzf_block(head);
    let block = bgzf_block(&[0u8; 65280]);
    for _ in 0..zeros / 65280 + 1 {
        file.extend_from_slice(&block);
    }
    file.extend_from_slice(&EOF_MARKER);
    file
}

const LIMIT_KIB: u64 = 400 * 1024;
const BEYOND_LIMIT: usize = 600 << 20;

fn assert_out_of_memory(what: &str, out: &Output) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(1), "{what}: {:?} {err}", out.status);
    assert!(err.contains("out of memory"), "{what}: {err}");
    assert!(
        !err.contains("memory allocation of"),
        "{what} aborted: {err}"
    );
    assert_eq!(err.lines().count(), 1, "{what}: {err}");
}

#[test]
fn lengths_a_bomb_backs_end_in_out_of_memory_not_an_abort() {
    // l_text 0x7fffff00, and 600 MiB of zeros to back it (samtools: "Out of memory", exit 1).
    let mut head = b"BAM\x01".to_vec();
    head.extend_from_slice(&0x7fff_ff00u32.to_le_bytes());
    let path = scratch("l_text_bomb.bam");
    std::fs::write(&path, bomb(&head, BEYOND_LIMIT)).unwrap();
    let p = path.to_str().unwrap();
    assert_out_of_memory("l_text", &view_limited(LIMIT_KIB, &[p]));

    // A record with block_size 0x7ffffff0 whose fixed fields are sound (a long SEQ fits), and
    // the zeros to back it.
    let mut fixed = vec![0u8; 32];
    fixed[8] = 1; // l_read_name
    fixed[16..20].copy_from_slice(&1000i32.to_le_bytes()); // l_seq
    let mut head = BamBuilder::new(b"@SQ\tSN:c\tLN:100\n", &[("c", 100)]).header_bytes();
    head.extend_from_slice(&0x7fff_fff0u32.to_le_bytes());
    head.extend_from_slice(&fixed);
    let path = scratch("block_size_bomb.bam");
    std::fs::write(&path, bomb(&head, BEYOND_LIMIT)).unwrap();
    let p = path.to_str().unwrap();
    assert_out_of_memory("block_size", &view_limited(LIMIT_KIB, &[p]));
}

#[test]
fn a_block_size_its_fixed_fields_contradict_fails_before_reading_on() {
    // block_size 0x7ffffff0, l_read_name 0, and then little data: the fixed fields are checked
    // first (as bam_read1 does), so the message is about them, not about the missing 2 GB.
    let mut head = BamBuilder::new(b"@SQ\tSN:c\tLN:100\n", &[("c", 100)]).header_bytes();
    head.extend_from_slice(&0x7fff_fff0u32.to_le_bytes());
    head.extend_from_slice(&[0u8; 32 + 100]);
    let path = scratch("block_size_lie.bam");
    std::fs::write(&path, bgzf(&head, 65280)).unwrap();
    let out = view(&[path.to_str().unwrap()]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("l_read_name is 0"), "{err}");
    assert!(
        err.contains("block_size_lie.bam") && err.contains("virtual offset"),
        "{err}"
    );
    // Fields that need more than block_size - 32 bytes.
    let mut fixed = vec![0u8; 32];
    fixed[8] = 5;
    fixed[16..20].copy_from_slice(&1_000_000i32.to_le_bytes());
    let mut head = BamBuilder::new(b"@SQ\tSN:c\tLN:100\n", &[("c", 100)]).header_bytes();
    head.extend_from_slice(&100u32.to_le_bytes());
    head.extend_from_slice(&fixed);
    head.extend_from_slice(&[0u8; 68]);
    std::fs::write(&path, bgzf(&head, 65280)).unwrap();
    let err = stderr(&view(&[path.to_str().unwrap()]));
    assert!(
        err.contains("need 1500005 bytes but the record has 68"),
        "{err}"
    );
}

#[test]
fn corrupt_aux_data_is_reported_with_the_file_and_virtual_offset() {
    let file = testkit::corpus_dir().join("malformed/aux_bad_type.bam");
    let out = view(&[file.to_str().unwrap()]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("aux_bad_type.bam: invalid BAM record at virtual offset 0:"),
        "{err}"
    );
    assert!(err.contains("corrupted aux data for read III"), "{err}");
}

#[test]
fn corrupt_aux_data_is_named_by_its_record_when_sam_is_formatted_on_threads() {
    // SAM formatting threads must not report the failure later, against another record.
    let file = testkit::corpus_dir().join("malformed/aux_bad_type.bam");
    let single = view(&[file.to_str().unwrap()]);
    let out = view(&["-@", "3", file.to_str().unwrap()]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("aux_bad_type.bam: invalid BAM record at virtual offset 0:"),
        "{err}"
    );
    assert_eq!(err, stderr(&single));
    assert_eq!(
        out.stdout, single.stdout,
        "the records before it, as without threads"
    );
}

#[test]
fn a_read_name_with_a_newline_keeps_the_message_on_one_line() {
    // An aux field of unknown type 'Q' after a name holding a newline and an escape.
    let bam = BamBuilder::new(b"@SQ\tSN:c\tLN:100\n", &[("c", 100)])
        .record(&Rec {
            name: "two\nlines\x1b",
            cigar: "4M",
            seq: "ACGT",
            aux: b"XXQ\x01".to_vec(),
            ..Rec::default()
        })
        .bytes();
    let path = scratch("newline_name.bam");
    std::fs::write(&path, bgzf(&bam, 65280)).unwrap();
    let out = view(&[path.to_str().unwrap()]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(r"two\nlines\u{1b}"), "{err}");
}

#[test]
fn a_seek_in_plain_gzip_names_the_offset() {
    let data = testkit::corpus_dir().join("data");
    let gz = data.join("gz_plain.bam");
    let bai = data.join("edge.bam.bai");
    let out = view(&["-X", gz.to_str().unwrap(), bai.to_str().unwrap(), "e1"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("gz_plain.bam: cannot seek to virtual offset 157:0: the file is plain gzip"),
        "{err}"
    );
}
