//! Damaged CRAM and tabix input through the `hts` binary (issue 36): hts never exits 0 having
//! lost records of the undamaged file, and every error line names the file and, where there
//! is one, the byte. Each test is one group of the issue, built from the fixtures by the damage
//! `cargo xtask mutate` found (the same mutants, made here), and failed before its fix.

mod cram_shared;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Output;

use cram::num::Cursor;
use cram::ContainerHeader;
use testkit::builders::bgzf;

/// A fresh folder for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hts-damaged-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `hts ARGS` run in `dir`.
fn hts_in(dir: &Path, args: &[&str]) -> Output {
    testkit::command(testkit::hts())
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

fn cram_fixture(name: &str) -> Vec<u8> {
    std::fs::read(cram_shared::dir().join(name)).unwrap()
}

fn tabix_fixture(name: &str) -> Vec<u8> {
    std::fs::read(testkit::workspace_root().join("fixtures/tabix").join(name)).unwrap()
}

fn reference() -> String {
    cram_shared::dir().join("ref.fa").display().to_string()
}

/// Either hts failed with one error line naming `file` (and each of `also`), or it printed
/// every line of `undamaged` (nothing lost with exit 0).
fn nothing_lost(out: &Output, undamaged: &[u8], file: &str, also: &[&str]) {
    nothing_lost_but(out, undamaged, (file, also), || None);
}

/// [`nothing_lost`], or (`samtools`: what samtools 1.16 printed on the damaged file, when
/// it exited 0 with no error logged) exit 0 having lost exactly what samtools loses.
fn nothing_lost_but(
    out: &Output,
    undamaged: &[u8],
    (file, also): (&str, &[&str]),
    samtools: impl FnOnce() -> Option<Vec<u8>>,
) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    if out.status.success() {
        let got: Vec<&[u8]> = out.stdout.split(|&b| b == b'\n').collect();
        let lost = undamaged.split(|&b| b == b'\n').find(|l| !got.contains(l));
        if let Some(line) = lost {
            assert!(
                samtools().is_some_and(|s| s == out.stdout),
                "exit 0 without {:?}, and not as samtools loses it",
                String::from_utf8_lossy(line)
            );
        }
        return;
    }
    let last = err.lines().last().unwrap_or("");
    assert!(last.contains(file), "the error names {file}: {err}");
    for a in also {
        assert!(last.contains(a), "the error names {a}: {err}");
    }
}

/// ITF8, as CRAM stores 32-bit integers.
fn itf8(v: i32) -> Vec<u8> {
    cram::num::encode_itf8(v)
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = flate2::Crc::new();
    crc.update(bytes);
    crc.sum()
}

/// A CRAM 3.0 file with the header of the container at `at` edited (its CRC32 made again).
fn edit_container(data: &[u8], at: usize, edit: impl FnOnce(&mut ContainerHeader)) -> Vec<u8> {
    let version = cram::Version { major: 3, minor: 0 };
    let h = ContainerHeader::parse(&data[at..], at as u64, version).unwrap();
    let mut e = h.clone();
    edit(&mut e);
    let mut header = (e.length as i32).to_le_bytes().to_vec();
    for v in [e.reference_id, e.start, e.span, e.records] {
        header.extend(itf8(v));
    }
    // LTF8 agrees with ITF8 below 2^14, where the fixtures' counters and base counts are.
    for v in [e.record_counter, e.bases] {
        assert!(v < 1 << 14);
        header.extend(itf8(v as i32));
    }
    header.extend(itf8(e.blocks));
    header.extend(itf8(e.landmarks.len() as i32));
    for &l in &e.landmarks {
        header.extend(itf8(l));
    }
    header.extend(crc32(&header).to_le_bytes());
    let mut out = data[..at].to_vec();
    out.extend(header);
    out.extend_from_slice(&data[at + h.header_len..]);
    out
}

/// A `.crai`'s lines (six numbers each), and one made of lines.
fn crai_lines(gz: &[u8]) -> Vec<String> {
    let mut text = String::new();
    flate2::read::GzDecoder::new(gz)
        .read_to_string(&mut text)
        .unwrap();
    text.lines().map(String::from).collect()
}

fn crai_of(lines: &[String]) -> Vec<u8> {
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    for l in lines {
        writeln!(gz, "{l}").unwrap();
    }
    gz.finish().unwrap()
}

/// A CRAM and its index written as `x.cram`, `x.cram.crai` in `dir`; the undamaged fixture
/// beside them as `orig.cram` (with its index) for the output to compare with.
fn write_cram(dir: &Path, fixture: &str, data: &[u8], crai: Option<&[u8]>) {
    std::fs::write(dir.join("x.cram"), data).unwrap();
    std::fs::copy(cram_shared::dir().join(fixture), dir.join("orig.cram")).unwrap();
    let index = cram_shared::dir().join(format!("{fixture}.crai"));
    if index.exists() {
        std::fs::copy(&index, dir.join("orig.cram.crai")).unwrap();
        let original = std::fs::read(&index).unwrap();
        std::fs::write(dir.join("x.cram.crai"), crai.unwrap_or(&original)).unwrap();
    }
}

/// `hts view -T ref.fa` with `args` on the damaged file and on the undamaged one, at `-@ 0`
/// and `-@ 2`: nothing lost with exit 0 (or what samtools loses, no more), the error naming
/// `also` too.
fn view_both(dir: &Path, before: &[&str], after: &[&str], also: &[&str]) {
    let refs = reference();
    for threads in ["0", "2"] {
        let args = |file: &'static str| {
            let mut args = vec!["view", "-@", threads, "-T", &refs];
            args.extend_from_slice(before);
            args.push(file);
            args.extend_from_slice(after);
            args
        };
        let undamaged = hts_in(dir, &args("orig.cram"));
        assert!(undamaged.status.success());
        assert!(!undamaged.stdout.is_empty());
        let samtools = || {
            let out = testkit::command("samtools")
                .current_dir(dir)
                .args(args("x.cram"))
                .output()
                .unwrap();
            let clean = !String::from_utf8_lossy(&out.stderr).contains("[E::");
            (out.status.success() && clean).then_some(out.stdout)
        };
        let out = hts_in(dir, &args("x.cram"));
        nothing_lost_but(&out, &undamaged.stdout, ("x.cram", also), samtools);
    }
}

#[test]
fn a_container_holding_more_slices_than_its_landmarks_name_is_an_error() {
    let dir = scratch("landmarks");
    let data = cram_fixture("aligned-3.0-slices.cram");
    // The container at 579 holds three slices; its header is made to name two (records of the
    // third were lost with exit 0), then to count one record less than its slices hold.
    let fewer = edit_container(&data, 579, |h| {
        assert_eq!(h.landmarks.len(), 3);
        h.landmarks.pop();
    });
    let miscounted = edit_container(&data, 579, |h| h.records -= 1);
    for damaged in [fewer, miscounted] {
        write_cram(&dir, "aligned-3.0-slices.cram", &damaged, None);
        view_both(&dir, &[], &[], &["byte 579", "records"]);
        let out = hts_in(&dir, &["view", "-T", &reference(), "x.cram"]);
        cram_shared::one_error_line(&out, &["x.cram", "byte 579"]);
    }
}

#[test]
fn a_region_reads_on_past_a_crai_line_dropped() {
    let dir = scratch("crai-dropped");
    let data = cram_fixture("aligned-3.0-slices.cram");
    let lines = crai_lines(&cram_fixture("aligned-3.0-slices.cram.crai"));
    // ref3's first slice (ref3 is id 2): without it the index says ref3's container starts at
    // 967, and ref3:700-800's records were lost.
    let kept: Vec<String> = lines
        .iter()
        .filter(|l| !l.starts_with("2\t29\t"))
        .cloned()
        .collect();
    assert_eq!(kept.len() + 1, lines.len());
    write_cram(
        &dir,
        "aligned-3.0-slices.cram",
        &data,
        Some(&crai_of(&kept)),
    );
    for regions in [&["ref3:700-800"][..], &["ref2", "ref3:700-800"]] {
        view_both(&dir, &[], regions, &[]);
        view_both(&dir, &["-M"], regions, &[]);
        let out = hts_in(
            &dir,
            &[&["view", "-T", &reference(), "x.cram"][..], regions].concat(),
        );
        assert!(out.status.success() && !out.stdout.is_empty());
    }
}

#[test]
fn a_crai_line_naming_another_references_container_is_an_error() {
    let dir = scratch("crai-offset");
    let data = cram_fixture("aligned-3.0.cram");
    let mut lines = crai_lines(&cram_fixture("aligned-3.0.cram.crai"));
    // ref1's line names ref2's container (at 7605): ref1's records were lost with exit 0.
    assert!(lines[0].starts_with("0\t59\t5942\t579\t"));
    lines[0] = lines[0].replace("\t579\t", "\t7605\t");
    write_cram(&dir, "aligned-3.0.cram", &data, Some(&crai_of(&lines)));
    view_both(&dir, &[], &["ref1:100-200"], &["byte 7605"]);
    let out = hts_in(
        &dir,
        &["view", "-T", &reference(), "x.cram", "ref1:100-200"],
    );
    cram_shared::one_error_line(&out, &["x.cram", "byte 7605", ".crai"]);
}

/// Containers of `data` (after the header's) as byte ranges: each header parsed in turn.
fn containers(data: &[u8]) -> Vec<std::ops::Range<usize>> {
    let version = cram::Version { major: 3, minor: 0 };
    let mut out = Vec::new();
    let mut at = 26;
    while at < data.len() {
        let h = ContainerHeader::parse(&data[at..], at as u64, version).unwrap();
        let end = at + h.header_len + h.length;
        out.push(at..end);
        at = end;
    }
    out
}

#[test]
fn containers_moved_under_a_stale_crai_lose_nothing() {
    let dir = scratch("containers");
    let regions: [(&[&str], &[&str]); 3] = [
        (&[], &["ref1:1000-3000", "ref2", "ref3:700-800"]),
        (&[], &["ref1:5990", "*"]),
        (&["-M"], &["ref1:100-200", "ref2:5-10", "ref3:700-800", "*"]),
    ];
    for fixture in [
        "aligned-3.0.cram",
        "aligned-3.0-multi.cram",
        "aligned-3.0-embed.cram",
    ] {
        let data = cram_fixture(fixture);
        let c = containers(&data);
        // The data containers (not the header's, not the EOF's): each swapped with the next,
        // and each doubled, the index left as it was.
        for i in 1..c.len() - 2 {
            let (a, b) = (&data[c[i].clone()], &data[c[i + 1].clone()]);
            let mut swapped = data[..c[i].start].to_vec();
            swapped.extend_from_slice(b);
            swapped.extend_from_slice(a);
            swapped.extend_from_slice(&data[c[i + 1].end..]);
            let mut doubled = data[..c[i].end].to_vec();
            doubled.extend_from_slice(a);
            doubled.extend_from_slice(&data[c[i].end..]);
            // Swapped again, the index's offsets moved with them (a file out of order under an
            // index that fits it).
            let crai = crai_lines(&cram_fixture(&format!("{fixture}.crai")));
            let (a_at, b_at) = (c[i].start.to_string(), c[i + 1].start.to_string());
            let b_new = (c[i].start + b.len()).to_string();
            let moved: Vec<String> = crai
                .iter()
                .map(|l| {
                    let mut f: Vec<String> = l.split('\t').map(String::from).collect();
                    if f[3] == a_at {
                        f[3] = b_new.clone();
                    } else if f[3] == b_at {
                        f[3] = a_at.clone();
                    }
                    f.join("\t")
                })
                .collect();
            let reindexed = crai_of(&moved);
            for (kind, damaged, index) in [
                ("swapped", swapped.clone(), None),
                ("swapped, reindexed", swapped, Some(&reindexed[..])),
                ("doubled", doubled, None),
            ] {
                write_cram(&dir, fixture, &damaged, index);
                for (before, after) in regions {
                    // Shown when a case fails.
                    eprintln!("{fixture}: container {i} {kind}: {before:?} {after:?}");
                    view_both(&dir, before, after, &[]);
                }
            }
        }
    }
}

/// A fixture with one bit of a block's data flipped and the block's CRC32 made again: data
/// that no check of the framing can tell from the real thing.
fn flipped(fixture: &str, byte: usize, bit: u8, block: usize) -> Vec<u8> {
    let mut data = cram_fixture(fixture);
    data[byte] ^= 1 << bit;
    let mut c = Cursor::new(&data[block..], block as u64);
    let _ = (c.u8("method"), c.u8("type"), c.itf8("id"));
    let size = c.itf8("size").unwrap() as usize;
    let _ = c.itf8("raw size");
    let end = block + c.position() + size;
    let crc = crc32(&data[block..end]);
    data[end..end + 4].copy_from_slice(&crc.to_le_bytes());
    data
}

#[test]
fn damaged_cram_errors_name_the_file_and_the_byte() {
    let dir = scratch("cram-errors");
    let mut magic = cram_fixture("aligned-3.0.cram");
    magic[1] ^= 0x20;
    std::fs::write(dir.join("magic.cram"), &magic).unwrap();
    let out = hts_in(&dir, &["view", "magic.cram"]);
    cram_shared::one_error_line(&out, &["magic.cram", "byte 0"]);

    std::fs::write(dir.join("x.cram"), cram_fixture("aligned-3.0.cram")).unwrap();
    let crai = cram_fixture("aligned-3.0.cram.crai");
    std::fs::write(dir.join("x.cram.crai"), &crai[..30]).unwrap();
    let out = hts_in(&dir, &["view", "-T", &reference(), "x.cram", "ref1"]);
    cram_shared::one_error_line(&out, &["x.cram.crai", "does not decompress", "at byte"]);

    // A record's tags no longer hold together: "standard output: cannot write a record as
    // SAM" named neither the input nor where.
    std::fs::write(
        dir.join("tags.cram"),
        flipped("aux-3.0.cram", 3036, 3, 3025),
    )
    .unwrap();
    for threads in ["0", "2"] {
        let out = hts_in(&dir, &["view", "-@", threads, "tags.cram"]);
        cram_shared::one_error_line(&out, &["tags.cram", "slice at byte 2193", "aux"]);
    }
    // Flags past 0xfff (htslib fails the slice; they were printed).
    let flags = flipped("aligned-3.0-multi.cram", 16985, 7, 16957);
    std::fs::write(dir.join("flags.cram"), flags).unwrap();
    for threads in ["0", "2"] {
        let out = hts_in(
            &dir,
            &["view", "-@", threads, "-T", &reference(), "flags.cram"],
        );
        cram_shared::one_error_line(&out, &["flags.cram", "flags", "at byte"]);
    }
}

/// A one-block bgzipped text fixture with `from` replaced by `to` (as long), bgzipped again:
/// its index still fits every offset.
fn with_line_renamed(fixture: &str, from: &str, to: &str) -> Vec<u8> {
    assert_eq!(from.len(), to.len());
    let mut text = String::new();
    flate2::read::MultiGzDecoder::new(&tabix_fixture(fixture)[..])
        .read_to_string(&mut text)
        .unwrap();
    assert_eq!(text.matches(from).count(), 1);
    bgzf(text.replace(from, to).as_bytes(), 0xff00)
}

/// A tabix index (TBI or CSI, BGZF) inflated, edited, and compressed again.
fn edit_index(fixture: &str, edit: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut bytes = Vec::new();
    flate2::read::MultiGzDecoder::new(&tabix_fixture(fixture)[..])
        .read_to_end(&mut bytes)
        .unwrap();
    edit(&mut bytes);
    bgzf(&bytes, 0xff00)
}

/// `hts tabix x.vcf.gz REGIONS` beside `tabix` on the undamaged fixture's copy: nothing lost
/// with exit 0, the error naming `file`.
fn tabix_both(dir: &Path, fixture: &str, index: &str, regions: &[&str], file: &str) {
    std::fs::copy(
        testkit::workspace_root()
            .join("fixtures/tabix")
            .join(fixture),
        dir.join("orig.vcf.gz"),
    )
    .unwrap();
    std::fs::write(
        dir.join(format!("orig.vcf.gz{index}")),
        tabix_fixture(&format!("{fixture}{index}")),
    )
    .unwrap();
    let run = |file: &str| hts_in(dir, &[&["tabix", file][..], regions].concat());
    let undamaged = run("orig.vcf.gz");
    assert!(undamaged.status.success() && !undamaged.stdout.is_empty());
    let out = run("x.vcf.gz");
    assert!(
        !out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    nothing_lost(&out, &undamaged.stdout, file, &[]);
}

#[test]
fn a_line_of_another_sequence_inside_a_region_is_an_error() {
    let dir = scratch("tabix-lines");
    let tbi = tabix_fixture("small.vcf.gz.tbi");
    std::fs::write(dir.join("x.vcf.gz.tbi"), &tbi).unwrap();
    // A name the index does not hold (tabix: "Reading failed"), and another sequence's name
    // (tabix ends the region there with exit 0): both ended the region with exit 0.
    for (from, to, region) in [
        ("chr1\t300\t", "chrZ\t300\t", "chr1"),
        ("chr2\t1\t", "chr1\t1\t", "chr2"),
    ] {
        std::fs::write(
            dir.join("x.vcf.gz"),
            with_line_renamed("small.vcf.gz", from, to),
        )
        .unwrap();
        tabix_both(&dir, "small.vcf.gz", ".tbi", &[region], "x.vcf.gz");
        let out = hts_in(&dir, &["tabix", "x.vcf.gz", region]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("virtual offset"), "{err}");
    }
}

#[test]
fn an_index_whose_names_or_columns_do_not_fit_is_an_error() {
    let dir = scratch("tabix-index");
    std::fs::write(dir.join("x.vcf.gz"), tabix_fixture("small.csi.vcf.gz")).unwrap();
    // The CSI's name table without chr1 (2 references, one name): chr1 read as no such
    // sequence, chr2 as chr1's lines.
    let csi = edit_index("small.csi.vcf.gz.csi", |b| {
        let l_aux = i32::from_le_bytes(b[12..16].try_into().unwrap());
        let names = 16 + 28;
        assert_eq!(&b[names..names + 5], b"chr1\0");
        b.drain(names..names + 5);
        b[12..16].copy_from_slice(&(l_aux - 5).to_le_bytes());
        b[16 + 24..16 + 28].copy_from_slice(&5i32.to_le_bytes());
    });
    std::fs::write(dir.join("x.vcf.gz.csi"), csi).unwrap();
    tabix_both(&dir, "small.csi.vcf.gz", ".csi", &["chr1"], "x.vcf.gz.csi");
    // The CSI's aux length 64 bytes longer: the sequences read from the wrong place, chr1's
    // lines lost with exit 0 (the damage shows only past chr2, where a whole load ends).
    let csi = edit_index("small.csi.vcf.gz.csi", |b| {
        let l_aux = i32::from_le_bytes(b[12..16].try_into().unwrap());
        b[12..16].copy_from_slice(&(l_aux + 64).to_le_bytes());
    });
    std::fs::write(dir.join("x.vcf.gz.csi"), csi).unwrap();
    tabix_both(
        &dir,
        "small.csi.vcf.gz",
        ".csi",
        &["chr1:250-350", "chr2"],
        "x.vcf.gz.csi",
    );
    std::fs::remove_file(dir.join("x.vcf.gz.csi")).unwrap();
    // The TBI's sequence column moved to the third (the ID, "."): answered with nothing.
    let tbi = edit_index("small.vcf.gz.tbi", |b| {
        b[12..16].copy_from_slice(&3i32.to_le_bytes())
    });
    std::fs::write(dir.join("x.vcf.gz"), tabix_fixture("small.vcf.gz")).unwrap();
    std::fs::write(dir.join("x.vcf.gz.tbi"), tbi).unwrap();
    tabix_both(&dir, "small.vcf.gz", ".tbi", &["chr1"], "x.vcf.gz");
}

/// `many.vcf.gz`'s BGZF blocks (header to ISIZE), the EOF marker last.
fn blocks(data: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < data.len() {
        let size = usize::from(u16::from_le_bytes([data[at + 16], data[at + 17]])) + 1;
        out.push(&data[at..at + size]);
        at += size;
    }
    out
}

#[test]
fn a_bgzf_block_repeated_or_missing_loses_nothing() {
    let dir = scratch("tabix-blocks");
    let data = tabix_fixture("many.vcf.gz");
    std::fs::write(dir.join("x.vcf.gz.tbi"), tabix_fixture("many.vcf.gz.tbi")).unwrap();
    let b = blocks(&data);
    // Block 7 doubled: every chr10 line was lost with exit 0. Block 5 dropped: chr2's.
    let doubled: Vec<u8> = b[..8]
        .iter()
        .chain(&b[7..])
        .flat_map(|x| x.iter().copied())
        .collect();
    let dropped: Vec<u8> = b[..5]
        .iter()
        .chain(&b[6..])
        .flat_map(|x| x.iter().copied())
        .collect();
    for (damaged, region) in [(doubled, "chr10"), (dropped, "chr2")] {
        std::fs::write(dir.join("x.vcf.gz"), damaged).unwrap();
        tabix_both(&dir, "many.vcf.gz", ".tbi", &[region], "x.vcf.gz");
    }
}
