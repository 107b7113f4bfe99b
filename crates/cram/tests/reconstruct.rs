//! Whole records from `cram::Reader` against samtools 1.16.1's `samtools view` of the same
//! files (fixtures/cram/expected, made by make.sh): the eleven SAM fields and the MD and NM
//! tags, with the reference from ref.fa, embedded in the file, or absent; and the layouts the
//! fixtures are meant to hold (multi-reference slices, an embedded reference, no reference,
//! names left out), so that a regenerated fixture cannot lose them unnoticed.

use std::io::Read;
use std::path::PathBuf;

use cram::{Alignment, Fasta, Reader};

fn dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/cram"))
}

fn open(name: &str, reference: bool) -> Reader {
    let f = std::fs::File::open(dir().join(name)).unwrap();
    let fasta = reference.then(|| Fasta::open(&dir().join("ref.fa")).unwrap());
    Reader::open(f, name, fasta).unwrap()
}

fn all(r: &mut Reader) -> Result<Vec<Alignment>, cram::Error> {
    let mut out = Vec::new();
    while let Some(recs) = r.next_container()? {
        out.extend(recs);
    }
    Ok(out)
}

fn golden(name: &str) -> Vec<Vec<String>> {
    let gz = std::fs::read(dir().join(format!("expected/{name}.out.gz"))).unwrap();
    let mut text = String::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_string(&mut text)
        .unwrap();
    text.lines()
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}

fn cigar(a: &Alignment) -> String {
    if a.cigar.is_empty() {
        return "*".into();
    }
    a.cigar
        .iter()
        .map(|c| format!("{}{}", c >> 4, char::from(b"MIDNSHP=X"[(c & 0xf) as usize])))
        .collect()
}

/// MD and NM as SAM prints them, from the record's binary tags.
fn md_nm(aux: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i + 3 <= aux.len() {
        let (tag, ty) = (&aux[i..i + 2], aux[i + 2]);
        i += 3;
        let len = match ty {
            b'A' | b'c' | b'C' => 1,
            b's' | b'S' => 2,
            b'i' | b'I' | b'f' => 4,
            b'Z' | b'H' => aux[i..].iter().position(|&b| b == 0).unwrap() + 1,
            b'B' => {
                let n = u32::from_le_bytes(aux[i + 1..i + 5].try_into().unwrap()) as usize;
                let w = match aux[i] {
                    b'c' | b'C' => 1,
                    b's' | b'S' => 2,
                    _ => 4,
                };
                5 + n * w
            }
            t => panic!("tag type {t}"),
        };
        let v = &aux[i..i + len];
        if tag == b"MD" {
            out.push(format!("MD:Z:{}", String::from_utf8_lossy(&v[..len - 1])));
        }
        if tag == b"NM" {
            let n = match ty {
                b'C' => u32::from(v[0]),
                b'S' => u32::from(u16::from_le_bytes([v[0], v[1]])),
                _ => u32::from_le_bytes([v[0], v[1], v[2], v[3]]),
            };
            out.push(format!("NM:i:{n}"));
        }
        i += len;
    }
    out.sort();
    out
}

fn check(name: &str, reference: bool, gold: &str) {
    let mut r = open(name, reference);
    let got = all(&mut r).unwrap_or_else(|e| panic!("{name}: {e}"));
    let want = golden(gold);
    assert_eq!(got.len(), want.len(), "{name}");
    let refs = r.header().references.clone();
    let rname = |id: i32| {
        usize::try_from(id).ok().map_or("*".to_string(), |i| {
            String::from_utf8_lossy(&refs[i].0).into_owned()
        })
    };
    for (a, w) in got.iter().zip(&want) {
        let qual = if a.qual.first().is_none_or(|&q| q == 0xff) {
            "*".to_string()
        } else {
            a.qual.iter().map(|&q| char::from(q + 33)).collect()
        };
        let fields = [
            String::from_utf8_lossy(&a.name).into_owned(),
            a.flags.to_string(),
            rname(a.ref_id),
            a.pos.to_string(),
            a.mapq.to_string(),
            cigar(a),
            if a.mate_ref_id >= 0 && a.mate_ref_id == a.ref_id {
                "=".into()
            } else {
                rname(a.mate_ref_id)
            },
            a.mate_pos.to_string(),
            a.tlen.to_string(),
            if a.seq.is_empty() {
                "*".into()
            } else {
                String::from_utf8_lossy(&a.seq).into_owned()
            },
            qual,
        ];
        assert_eq!(&fields[..], &w[..11], "{name}: {}", w[0]);
        let mut tags: Vec<String> = w[11..]
            .iter()
            .filter(|t| t.starts_with("MD:") || t.starts_with("NM:"))
            .cloned()
            .collect();
        tags.sort();
        assert_eq!(md_nm(&a.aux), tags, "{name}: {}", w[0]);
    }
}

#[test]
fn aligned_records_match_samtools() {
    check("aligned-3.0.cram", true, "aligned");
    check("aligned-3.1.cram", true, "aligned");
    check("aligned-2.1.cram", true, "aligned-2.1");
    check("aligned-3.0-embed.cram", false, "aligned");
    check("aligned-3.0-multi.cram", true, "aligned");
    check("aligned-3.0-slices.cram", true, "aligned");
    check("aligned-3.0-mdnm.cram", true, "aligned-mdnm");
    check("aligned-3.0-noref.cram", false, "aligned-noref");
    check("aligned-3.0-lossy.cram", true, "aligned-lossy");
}

/// What each fixture is there for, read from its slice and compression headers.
#[test]
fn fixtures_hold_the_layouts_they_are_named_for() {
    use cram::num::Cursor;
    use cram::{Block, CompressionHeader, ContainerHeader, FileDefinition, SliceHeader};
    let layout = |name: &str| {
        let data = std::fs::read(dir().join(name)).unwrap();
        let def = FileDefinition::parse(&data).unwrap();
        let mut at = FileDefinition::LEN;
        let (mut multi, mut embedded, mut no_ref, mut no_names) = (false, false, false, false);
        let mut most_slices = 0;
        let mut first = true;
        while at < data.len() {
            let h = ContainerHeader::parse(&data[at..], at as u64, def.version).unwrap();
            let body = &data[at + h.header_len..at + h.header_len + h.length];
            at += h.header_len + h.length;
            if std::mem::take(&mut first) || h.landmarks.is_empty() {
                continue;
            }
            let mut c = Cursor::new(body, 0);
            let b = Block::read(&mut c, def.version).unwrap();
            let ch = CompressionHeader::parse(&b.decode().unwrap(), 0).unwrap();
            no_ref |= !ch.reference_required;
            most_slices = most_slices.max(h.landmarks.len());
            no_names |= !ch.read_names;
            for &l in &h.landmarks {
                let mut c = Cursor::new(&body[l as usize..], 0);
                let b = Block::read(&mut c, def.version).unwrap();
                let s = SliceHeader::parse(&b.decode().unwrap(), 0, def.version).unwrap();
                multi |= s.reference_id == cram::slice::MULTI_REF;
                embedded |= s.embedded_reference >= 0;
            }
        }
        (multi, embedded, no_ref, no_names, most_slices > 1)
    };
    // samtools puts ref3's few reads and the unmapped ones in one multi-reference slice.
    assert_eq!(
        layout("aligned-3.0.cram"),
        (true, false, false, false, false)
    );
    // Several slices to a container.
    assert!(layout("aligned-3.0-slices.cram").4);
    assert!(layout("aligned-3.0-multi.cram").0);
    assert!(layout("aligned-3.0-embed.cram").1);
    assert!(layout("aligned-3.0-noref.cram").2);
    assert!(layout("aligned-3.0-lossy.cram").3);
}

#[test]
fn a_wrong_reference_is_an_error_naming_it() {
    let f = std::fs::File::open(dir().join("aligned-3.0.cram")).unwrap();
    let fasta = Fasta::open(&dir().join("wrong.fa")).unwrap();
    let mut r = Reader::open(f, "x", Some(fasta)).unwrap();
    let e = all(&mut r).unwrap_err();
    assert!(e.what.contains("MD5") && e.what.contains("ref2"), "{e}");
}

#[test]
fn fasta_ranges_read_across_lines_upper_cased() {
    let mut fa = Fasta::open(&dir().join("ref.fa")).unwrap();
    let all = fa.fetch(b"ref3", 1, 1500).unwrap();
    assert_eq!(all.len(), 1500);
    assert!(all.iter().all(|b| b"ACGTN".contains(b)));
    assert_eq!(fa.fetch(b"ref3", 55, 125).unwrap(), &all[54..125]);
    assert!(fa.fetch(b"nope", 1, 2).is_err());
    assert!(fa.fetch(b"ref3", 1400, 1600).is_err());
}

/// A bgzipped reference read through its `.gzi` across block boundaries, against what
/// `samtools faidx` read from it (expected/faidx-block.out.gz).
#[test]
fn bgzipped_fasta_ranges_match_samtools_faidx() {
    let mut fa = Fasta::open(&dir().join("block.fa.gz")).unwrap();
    let text = String::from_utf8(
        golden("faidx-block")
            .iter()
            .map(|l| l.join("\t") + "\n")
            .collect::<String>()
            .into_bytes(),
    )
    .unwrap();
    let mut got = String::new();
    for (start, end) in [(1, 10), (65000, 65600), (130000, 131000), (143990, 144000)] {
        got.push_str(&format!(">block:{start}-{end}\n"));
        let bases = fa.fetch(b"block", start, end).unwrap();
        for line in bases.chunks(60) {
            got.push_str(std::str::from_utf8(line).unwrap());
            got.push('\n');
        }
    }
    assert_eq!(got, text);
}
