//! CRAM references from URLs, as htslib finds them: `http(s)://` entries of `REF_PATH` (the
//! MD5 server's protocol, served here by the test server on 127.0.0.1 in place of the EBI's),
//! tried in order, checked by MD5, stored in `REF_CACHE`, bounded in time; and a FASTA given
//! by URL (`-T http://...`), read in bounded ranges holding exactly the bases slices need.

mod cram_shared;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use cram_shared::{dir, golden, one_error_line};
use testkit::{hts, Fault, Rule, Server};

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hts-cram-refs-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// ref.fa's sequences: name, bases (upper case), MD5.
fn sequences() -> Vec<(String, Vec<u8>, String)> {
    let text = std::fs::read_to_string(dir().join("ref.fa")).unwrap();
    text.split('>')
        .skip(1)
        .map(|record| {
            let mut lines = record.lines();
            let name = lines.next().unwrap().split_whitespace().next().unwrap();
            let seq: Vec<u8> = lines.collect::<String>().to_ascii_uppercase().into_bytes();
            let md5 = cram::md5::hex(&cram::md5::digest(&seq));
            (name.to_string(), seq, md5)
        })
        .collect()
}

/// `hts view ARGS` in the fixtures' folder with `env` set.
fn view(args: &[&str], env: &[(&str, String)]) -> Output {
    let mut c = testkit::command(hts());
    c.current_dir(dir()).arg("view").args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

/// REF_PATH's entries in order: a local directory without them, a URL without them (404), then
/// one laid out `%2s/%s`; each reference asked for as one bounded range of its `@SQ LN` bytes,
/// checked, and stored in REF_CACHE, from which a second run reads it without a request.
#[test]
fn ref_path_urls_are_tried_in_order_and_fill_the_cache() {
    let served = scratch("served");
    for (_, seq, md5) in sequences() {
        let at = served.join("split").join(&md5[..2]);
        std::fs::create_dir_all(&at).unwrap();
        std::fs::write(at.join(&md5[2..]), seq).unwrap();
    }
    let server = Server::start(&served).unwrap();
    let base = server.base();
    let cache = scratch("cache");
    let env = [
        (
            "REF_PATH",
            format!("/nonexistent/a:{base}/missing/%s:{base}/split/%2s/%s"),
        ),
        ("REF_CACHE", format!("{}/%2s/%2s/%s", cache.display())),
    ];
    // Multi-reference slices: every reference is needed whole.
    let out = view(&["aligned-3.0-multi.cram"], &env);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout == golden("aligned"));
    let log = server.log();
    assert!(log.iter().all(|e| e.is_bounded()), "{log:#?}");
    for (name, seq, md5) in sequences() {
        let missing = log.iter().position(|e| e.path == format!("/missing/{md5}"));
        let split = format!("/split/{}/{}", &md5[..2], &md5[2..]);
        let found = log.iter().position(|e| e.path == split);
        assert!(missing.is_some() && found.is_some(), "{name}: {log:#?}");
        assert!(missing < found, "{name}: REF_PATH's order");
        let ranges = server.ranges(&split);
        assert_eq!(
            ranges,
            vec![Some(format!("bytes=0-{}", seq.len() - 1))],
            "{name}: one request for exactly its bases"
        );
        let cached = cache.join(&md5[..2]).join(&md5[2..4]).join(&md5[4..]);
        assert_eq!(std::fs::read(&cached).unwrap(), seq, "{name} cached");
    }
    let before = server.log().len();
    let again = view(&["aligned-3.0-multi.cram"], &env);
    assert!(again.status.success());
    assert!(again.stdout == golden("aligned"));
    assert_eq!(
        server.log().len(),
        before,
        "the cache answers the second run"
    );
    let _ = std::fs::remove_dir_all(&served);
    let _ = std::fs::remove_dir_all(&cache);
}

/// A server answering with other bases under a reference's MD5: one error line naming the
/// reference and the URL, and nothing cached.
#[test]
fn a_wrong_reference_from_a_url_is_an_error_naming_it() {
    let served = scratch("wrong");
    let seqs = sequences();
    let (name, _, md5) = &seqs[0];
    let mut other = seqs[1].1.clone();
    other.resize(seqs[0].1.len(), b'A');
    std::fs::write(served.join(md5), other).unwrap();
    for (_, seq, md5) in &seqs[1..] {
        std::fs::write(served.join(md5), seq).unwrap();
    }
    let server = Server::start(&served).unwrap();
    let cache = scratch("wrong-cache");
    let out = view(
        &["aligned-3.0.cram"],
        &[
            ("REF_PATH", format!("{}/%s", server.base())),
            ("REF_CACHE", format!("{}/%s", cache.display())),
        ],
    );
    one_error_line(&out, &["aligned-3.0.cram", name, &server.url(md5), "MD5"]);
    assert!(!cache.join(md5).exists(), "a wrong reference is not cached");
    let _ = std::fs::remove_dir_all(&served);
    let _ = std::fs::remove_dir_all(&cache);
}

/// An MD5 server that sends its headers and then nothing (htslib #412): hts gives up after
/// HTS_REF_TIMEOUT with one error line naming the reference and the URL.
#[test]
fn a_stalling_md5_server_ends_in_an_error_naming_reference_and_url() {
    let served = scratch("stall");
    let seqs = sequences();
    for (_, seq, md5) in &seqs {
        std::fs::write(served.join(md5), seq).unwrap();
    }
    let server = Server::start(&served).unwrap();
    let (name, _, md5) = &seqs[0];
    server.add_rule(Rule {
        path: format!("/{md5}"),
        fault: Fault::Stall { after: Some(0) },
        times: None,
    });
    let started = Instant::now();
    let out = view(
        &["aligned-3.0.cram"],
        &[
            ("REF_PATH", format!("{}/%s", server.base())),
            ("REF_CACHE", String::new()),
            ("HTS_REF_TIMEOUT", "2".to_string()),
        ],
    );
    let took = started.elapsed();
    one_error_line(&out, &[name, &server.url(md5), "time limit"]);
    assert!(took < Duration::from_secs(20), "took {took:?}");
    let _ = std::fs::remove_dir_all(&served);
}

/// `.fai` lines: name -> (offset, line bases, line width).
fn fai(path: &Path) -> Vec<(String, u64, u64, u64)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let n = |i: usize| f[i].parse::<u64>().unwrap();
            (f[0].to_string(), n(2), n(3), n(4))
        })
        .collect()
}

/// `.crai` lines: (reference id, start, span, container offset).
fn crai(path: &Path) -> Vec<(usize, u64, u64, u64)> {
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    text.lines()
        .map(|l| {
            let f: Vec<i64> = l.split('\t').map(|v| v.parse().unwrap()).collect();
            (f[0] as usize, f[1] as u64, f[2] as u64, f[3] as u64)
        })
        .collect()
}

/// Inclusive ranges merged where they overlap or touch.
fn merged(ranges: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let mut v = ranges.to_vec();
    v.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::new();
    for (a, b) in v {
        match out.last_mut() {
            Some(last) if a <= last.1 + 1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// `-T http://.../ref.fa` for a region query: besides the `.fai` and the first two bytes
/// (plain or bgzipped?), ref.fa is asked for exactly the lines of each slice the query
/// decodes (the slices of the container holding ref1:300-400, up to the one where the range
/// ends), each one bounded range.
#[test]
fn a_remote_fasta_is_read_for_exactly_the_bases_slices_need() {
    let server = Server::start(&dir()).unwrap();
    let reference = server.url("ref.fa");
    let out = view(
        &["-T", &reference, "aligned-3.0-slices.cram", "ref1:300-400"],
        &[],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let local = view(
        &["-T", "ref.fa", "aligned-3.0-slices.cram", "ref1:300-400"],
        &[],
    );
    assert!(!out.stdout.is_empty());
    assert!(out.stdout == local.stdout);
    let index = fai(&dir().join("ref.fa.fai"));
    let lens: Vec<u64> = std::fs::read_to_string(dir().join("ref.fa.fai"))
        .unwrap()
        .lines()
        .map(|l| l.split('\t').nth(1).unwrap().parse().unwrap())
        .collect();
    let entries = crai(&dir().join("aligned-3.0-slices.cram.crai"));
    let container = entries
        .iter()
        .find(|e| e.0 == 0 && e.1 <= 300 && e.1 + e.2 > 300)
        .unwrap()
        .3;
    // The container's slices up to the one whose records pass the range's end (here the
    // first that reaches past 400): the slices after it are not decoded, so their bases are
    // not read.
    let mut through_end = false;
    let wanted: Vec<(u64, u64)> = entries
        .iter()
        .filter(|e| e.3 == container)
        .take_while(|e| {
            let before = !through_end;
            through_end |= e.1 + e.2 - 1 > 400;
            before
        })
        .map(|&(tid, start, span, _)| {
            let (_, offset, bases, width) = &index[tid];
            let end = (start + span - 1).min(lens[tid]);
            let place = |p: u64| offset + (p - 1) / bases * width + (p - 1) % bases;
            (place(start), place(end))
        })
        .collect();
    let asked: Vec<(u64, u64)> = server
        .log()
        .iter()
        .filter(|e| e.path == "/ref.fa")
        .map(|e| e.bounded_range().expect("bounded"))
        .collect();
    // The file's first two bytes (bgzipped?), then each slice's lines: where slices overlap,
    // the bytes already read are not asked for again.
    assert_eq!(asked[0], (0, 1));
    assert_eq!(
        merged(&asked[1..]),
        merged(&wanted),
        "{asked:?} for {wanted:?}"
    );
    for (a, b) in &asked[1..] {
        assert!(
            wanted.iter().any(|(x, y)| x <= a && b <= y),
            "{a}-{b} within a slice's bases"
        );
    }
    assert!(server.log().iter().all(|e| e.is_bounded()));
}

/// A bgzipped FASTA by URL (`.fai` and `.gzi` beside it), for reads in four groups far apart
/// (a slice each): each slice's bases come from the BGZF blocks holding them. A query of two
/// regions asks for the two blocks its two slices lie in, not the third.
#[test]
fn a_remote_bgzipped_fasta_is_read_block_by_needed_block() {
    let server = Server::start(&dir()).unwrap();
    let reference = server.url("block.fa.gz");
    let size = std::fs::metadata(dir().join("block.fa.gz")).unwrap().len();
    // The `.gzi`'s second entry: where the third block starts.
    let gzi = std::fs::read(dir().join("block.fa.gz.gzi")).unwrap();
    let third = u64::from_le_bytes(gzi[24..32].try_into().unwrap());
    for (args, gold, most) in [
        (vec!["blockreads-3.0.cram"], "blockreads", size),
        (
            vec!["blockreads-3.0.cram", "block:70050-70120", "block:1-1010"],
            "blockreads-r",
            third,
        ),
    ] {
        let mut all = vec!["-T", reference.as_str()];
        all.extend(args);
        let out = view(&all, &[]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.stdout == golden(gold), "{gold}");
        let log = server.take_log();
        assert!(log.iter().all(|e| e.is_bounded()), "{log:#?}");
        let data: Vec<(u64, u64)> = log
            .iter()
            .filter(|e| e.path == "/block.fa.gz")
            .filter_map(|e| e.bounded_range())
            .filter(|&r| r != (0, 1))
            .collect();
        assert!(!data.is_empty());
        let served: u64 = data.iter().map(|&(a, b)| b.min(size - 1) + 1 - a).sum();
        assert!(served <= most, "{gold}: {data:?}, {served} of {most} bytes");
    }
}

/// A remote CRAM region query against a remote bgzipped FASTA: every request bounded; of the
/// CRAM, its opening and the one container the `.crai` names for the region; of the reference,
/// its indexes and the one BGZF block that holds the slice's bases. The log (printed) is the one
/// in docs/CRAM.md.
#[test]
fn a_remote_region_query_fetches_the_reference_only_where_its_slice_needs_it() {
    let server = Server::start(&dir()).unwrap();
    let out = view(
        &[
            "-T",
            &server.url("block.fa.gz"),
            &server.url("blockreads-3.0.cram"),
            "block:70050-70120",
        ],
        // Cold, whatever this process ran before (the log is of a first query).
        &[("HTS_CACHE", "off".to_string())],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 3);
    let log = server.log();
    for e in &log {
        println!(
            "{} {} {} -> {} ({} bytes)",
            e.method,
            e.path,
            e.range.as_deref().unwrap_or("-"),
            e.status,
            e.content_length
        );
    }
    // Every GET bounded (a HEAD has no body).
    assert!(
        log.iter().all(|e| e.method == "HEAD" || e.is_bounded()),
        "{log:#?}"
    );
    let entries = crai(&dir().join("blockreads-3.0.cram.crai"));
    let container = entries.iter().find(|e| e.1 == 70001).unwrap().3;
    let next = entries
        .iter()
        .map(|e| e.3)
        .find(|&c| c > container)
        .unwrap();
    let cram: Vec<(u64, u64)> = log
        .iter()
        .filter(|e| e.path == "/blockreads-3.0.cram")
        .filter_map(|e| e.bounded_range())
        .collect();
    // The opening (the 26-byte file definition and up to 16 KiB of header container, asked
    // for at once, before the size, which comes with it: no HEAD; this small file then comes
    // whole), then exactly the container unless the opening already held it; nothing else.
    let (first, rest) = cram.split_first().unwrap();
    assert!(first.0 == 0 && first.1 < 26 + 16 * 1024, "{cram:?}");
    assert!(
        !log.iter()
            .any(|e| e.method == "HEAD" && e.path == "/blockreads-3.0.cram"),
        "{log:#?}"
    );
    assert!(
        rest.iter()
            .all(|&r| r == (container, next - 1) || r.1 < entries[0].3),
        "{cram:?}"
    );
    assert!(
        first.1 >= next - 1 || rest.contains(&(container, next - 1)),
        "{cram:?}"
    );
    let gzi = std::fs::read(dir().join("block.fa.gz.gzi")).unwrap();
    let word = |i: usize| u64::from_le_bytes(gzi[i..i + 8].try_into().unwrap());
    let (second, third) = (word(8), word(24));
    let reference: Vec<(u64, u64)> = log
        .iter()
        .filter(|e| e.path == "/block.fa.gz")
        .filter_map(|e| e.bounded_range())
        .collect();
    assert_eq!(reference, vec![(0, 1), (second, third - 1)]);
}
