//! The seeds of each fuzz target, from the conformance corpus (its data and malformed cases, and
//! conformance-extra's) and, for the HTTP checks, responses written here.

use std::path::PathBuf;

use hfile::HFile;

use crate::root;

type Seeds = Vec<(String, Vec<u8>)>;

/// The seeds of `target` as (name, bytes).
pub fn seeds(target: &str) -> Result<Seeds, String> {
    let files = corpus_files()?;
    let with_ext = |exts: &[&str]| -> Seeds {
        files
            .iter()
            .filter(|(name, _)| exts.iter().any(|e| name.ends_with(e)))
            .cloned()
            .collect()
    };
    Ok(match target {
        "bgzf_block" | "bgzf_reader" => with_ext(&[".bam", ".csi", ".gz"]),
        "index_load" => with_ext(&[".bai", ".csi"]),
        // The indexes of rand.bam, the file bam_query reads, good and damaged.
        "bam_query" => with_ext(&[".bai", ".csi"])
            .into_iter()
            .filter(|(n, _)| n.contains("_rand."))
            .collect(),
        "bam_file" => {
            let mut s = with_ext(&[".bam"]);
            // Uncompressed too, so mutations reach the decoder past the CRC checks.
            s.extend(
                with_ext(&[".bam"])
                    .into_iter()
                    .filter_map(|(n, b)| Some((format!("{n}.raw"), inflate(&b)?))),
            );
            s
        }
        "bam_record" => with_ext(&[".bam"])
            .iter()
            .filter_map(|(n, b)| Some((n, records(&inflate(b)?))))
            .flat_map(|(n, recs)| {
                recs.into_iter()
                    .take(16)
                    .enumerate()
                    .map(move |(i, r)| (format!("{n}.{i}"), r))
            })
            .collect(),
        "region" => regions()?,
        "cram_container" | "cram_records" => with_ext(&[".cram"]),
        "cram_codec" => with_ext(&[".cram"])
            .iter()
            .flat_map(|(n, b)| cram_blocks(n, b))
            .collect(),
        "http_response" => HTTP
            .iter()
            .enumerate()
            .map(|(i, r)| (format!("http{i}"), r.as_bytes().to_vec()))
            .collect(),
        other => return Err(format!("no seeds for '{other}'")),
    })
}

/// Every file of the corpora's data and malformed folders, named by folder and file.
fn corpus_files() -> Result<Seeds, String> {
    let fixtures = root().join("fixtures");
    let dirs: Vec<PathBuf> = vec![
        fixtures.join("conformance/data"),
        fixtures.join("conformance/malformed"),
        fixtures.join("conformance-extra/data"),
        fixtures.join("cram"),
    ];
    let mut out = Vec::new();
    for dir in dirs {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map_err(|e| format!("{}: {e}", dir.display()))?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .collect();
        entries.sort();
        for p in entries {
            let bytes = std::fs::read(&p).map_err(|e| format!("{}: {e}", p.display()))?;
            let folder = dir.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            out.push((format!("{folder}_{name}"), bytes));
        }
    }
    Ok(out)
}

/// The first 64 KiB of a BGZF file's data, or `None` if it does not inflate that far.
fn inflate(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut r = bgzf::Reader::new(HFile::from_bytes("seed", bytes.to_vec())).ok()?;
    if r.format() != bgzf::Format::Bgzf {
        return None;
    }
    let mut out = vec![0u8; 64 * 1024];
    let mut n = 0;
    while n < out.len() {
        match r.read_data(&mut out[n..]) {
            Ok(0) | Err(_) => break,
            Ok(k) => n += k,
        }
    }
    out.truncate(n);
    (n > 0).then_some(out)
}

/// The records (bytes after `block_size`) of uncompressed BAM data, as far as it is whole.
fn records(raw: &[u8]) -> Vec<Vec<u8>> {
    let u32_at = |at: usize| -> Option<usize> {
        let b = raw.get(at..at + 4)?;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    };
    let mut out = Vec::new();
    let walk = || -> Option<usize> {
        if !raw.starts_with(b"BAM\x01") {
            return None;
        }
        let mut at = 8 + u32_at(4)?;
        let n_ref = u32_at(at)?;
        at += 4;
        for _ in 0..n_ref {
            at += 4 + u32_at(at)? + 4;
        }
        Some(at)
    };
    let Some(mut at) = walk() else {
        return out;
    };
    while let Some(size) = u32_at(at) {
        let Some(record) = raw.get(at + 4..at + 4 + size) else {
            break;
        };
        out.push(record.to_vec());
        at += 4 + size;
    }
    out
}

/// Region strings of the corpus's cases (arguments after the input file that are not options),
/// and a few more; with a second line naming an extra reference for some.
fn regions() -> Result<Seeds, String> {
    let mut out = Vec::new();
    for file in ["conformance/cases.tsv", "conformance-extra/cases.tsv"] {
        let path = root().join("fixtures").join(file);
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let Some(args) = line.split('\t').nth(1) else {
                continue;
            };
            let words: Vec<&str> = args.split(' ').collect();
            let Some(input) = words.iter().position(|w| w.ends_with(".bam")) else {
                continue;
            };
            for w in &words[input + 1..] {
                if !w.starts_with('-') && !w.contains('/') {
                    out.push((format!("r{}", out.len()), w.as_bytes().to_vec()));
                }
            }
        }
    }
    for extra in [
        "chr1:1-1000",
        "{chr1:100}:5-10",
        "chr1:100-200:1-100",
        "HLA-A*01:01:1-2",
        "{chr,3}",
        "chr1:1,000-2,000",
        "chr1:1k-2M",
        "chr1:1e3-",
        "chr1:-500",
        "*",
        ".",
        "{chr1",
        "new:1-5\nnew",
        "new:10\nnew:10\nnew",
    ] {
        out.push((format!("r{}", out.len()), extra.as_bytes().to_vec()));
    }
    Ok(out)
}

/// Responses for the HTTP checks: what was asked (`R start end want known` or `S n known`), the
/// head, an empty line, the body.
const HTTP: [&str; 12] = [
    "R 10 14 4 -\nHTTP/1.1 206 Partial Content\r\nContent-Range: bytes 10-13/100\r\nContent-Length: 4\r\n\r\nabcd",
    "R 90 120 30 -\nHTTP/1.1 206 Partial Content\r\nContent-Range: bytes 90-99/100\r\n\r\n0123456789",
    "R 0 10 10 -\nHTTP/1.1 200 OK\r\nContent-Length: 20\r\n\r\n01234567890123456789",
    "R 5 10 5 -\nHTTP/1.1 200 OK\r\nContent-Length: 20\r\n\r\n01234567890123456789",
    "R 100 200 100 100\nHTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */100\r\n\r\n",
    "R 50 60 10 100\nHTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */100\r\n\r\n",
    "R 10 - 30 -\nHTTP/1.1 206 Partial Content\r\nContent-Range: bytes 10-99/100\r\n\r\nabcdefghijabcdefghijabcdefghij",
    "S 28 -\nHTTP/1.1 206 Partial Content\r\nContent-Range: bytes 72-99/100\r\n\r\n0123456789012345678901234567",
    "R 0 4 4 -\nHTTP/1.1 302 Found\r\nLocation: /x\r\n\r\nHTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-3/10\r\n\r\nabcd",
    "R 0 4 4 -\nHTTP/1.1 403 Forbidden\r\nContent-Type: application/xml\r\n\r\n<Error><Code>AccessDenied</Code></Error>",
    "R 0 4 4 -\nHTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-3/10\r\nContent-Encoding: gzip\r\n\r\nabcd",
    "R 0 4 4 9\nHTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-3/10\r\n\r\nabcd",
];

/// Each block of a CRAM as the codec target reads it: method byte, raw size (u32 LE), bytes.
fn cram_blocks(name: &str, data: &[u8]) -> Seeds {
    let mut out = Vec::new();
    let Ok(def) = cram::FileDefinition::parse(data) else {
        return out;
    };
    let mut at = cram::FileDefinition::LEN;
    while let Some(rest) = data.get(at..) {
        let Ok(h) = cram::ContainerHeader::parse(rest, at as u64, def.version) else {
            break;
        };
        let body_at = at + h.header_len;
        let mut c = cram::num::Cursor::new(&data[body_at..body_at + h.length], body_at as u64);
        while let Ok(b) = cram::Block::read(&mut c, def.version) {
            let mut seed = vec![b.method as u8];
            seed.extend_from_slice(&(b.raw_size as u32).to_le_bytes());
            seed.extend_from_slice(b.data);
            out.push((format!("{name}.block{}", out.len()), seed));
        }
        at = body_at + h.length;
    }
    out
}
