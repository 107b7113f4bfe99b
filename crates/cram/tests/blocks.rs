//! Every block of samtools 1.16.1's CRAMs (fixtures/cram/make.sh) read and decoded: the CRC32
//! of each block holds, each decodes to the size it declares, and the codec each file was made
//! to use is among the methods met.

use std::collections::BTreeSet;

use cram::num::Cursor;
use cram::{Block, ContainerHeader, ContentType, FileDefinition, Method};

fn fixture(name: &str) -> Vec<u8> {
    let p = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/cram/");
    std::fs::read(format!("{p}{name}")).unwrap()
}

type Decoded = Vec<(ContentType, i32, Vec<u8>)>;

/// Decodes every block of every container; returns the methods met and the decoded blocks.
fn walk(data: &[u8]) -> Result<(BTreeSet<String>, Decoded), cram::Error> {
    let def = FileDefinition::parse(data)?;
    let mut at = FileDefinition::LEN;
    let mut methods = BTreeSet::new();
    let mut blocks = 0;
    let mut decoded = Vec::new();
    while at < data.len() {
        let h = ContainerHeader::parse(&data[at..], at as u64, def.version)?;
        let body_at = at + h.header_len;
        let body = &data[body_at..body_at + h.length];
        let mut c = Cursor::new(body, body_at as u64);
        for _ in 0..h.blocks {
            let b = Block::read(&mut c, def.version)?;
            let out = b.decode()?;
            assert_eq!(out.len(), b.raw_size);
            if blocks == 0 {
                // The SAM header text follows its 4-byte length; samtools pads the header
                // container with a block of zeros after it.
                assert_eq!(b.content_type, ContentType::FileHeader);
                assert!(out[4..].starts_with(b"@HD"), "header block");
            }
            methods.insert(format!("{:?}", b.method));
            if b.method == Method::RansNx16 {
                methods.insert(format!("rANS Nx16 flags {:02x}", b.data[0]));
            }
            if b.method == Method::Arith {
                methods.insert(format!("arith flags {:02x}", b.data[0]));
            }
            if b.method == Method::Fqzcomp {
                methods.insert(fqz_flags(b.data));
            }
            if b.method == Method::Rans4x8 {
                methods.insert(format!("rANS order {}", b.data[0]));
            }
            decoded.push((b.content_type, b.content_id, out.into_owned()));
            blocks += 1;
        }
        assert_eq!(
            c.remaining(),
            0,
            "container at {at}: bytes after its blocks"
        );
        at = body_at + h.length;
    }
    Ok((methods, decoded))
}

/// An fqzcomp block's global flags and its first parameter block's flags, as "gg/pp".
fn fqz_flags(data: &[u8]) -> String {
    // The size (7 bits a byte, high bit set on all but the last), the version, the flags.
    let at = data.iter().position(|&b| b < 0x80).unwrap() + 1;
    let g = data[at + 1];
    // Skip the selector table (its bytes up to runs summing to 256) when there is one.
    let mut p = at + 2;
    if g & 2 != 0 {
        p += 1;
        let mut sum = 0usize;
        while sum < 256 {
            sum += usize::from(data[p]);
            p += 1;
        }
    }
    format!("fqzcomp flags {g:02x}/{:02x}", data[p + 2])
}

#[test]
fn every_block_of_each_codec_fixture_decodes_to_the_same_bytes() {
    let mut first: Option<Decoded> = None;
    for (name, wanted) in [
        ("rand-3.0-rans.cram", Method::Rans4x8),
        ("rand-3.0-bzip2.cram", Method::Bzip2),
        ("rand-3.0-lzma.cram", Method::Lzma),
        ("rand-3.0-gzip.cram", Method::Gzip),
        ("rand-3.1-rans.cram", Method::RansNx16),
        ("aux-3.0.cram", Method::Gzip),
    ] {
        let (methods, blocks) = walk(&fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(blocks.len() > 10, "{name}: {} blocks", blocks.len());
        assert!(
            methods.contains(&format!("{wanted:?}")),
            "{name}: {methods:?}"
        );
        if wanted == Method::RansNx16 {
            // Order 0 and 1, striped, run lengths, packed: the transforms samtools used here.
            for f in ["00", "01", "09", "40", "a0"] {
                assert!(methods.contains(&format!("rANS Nx16 flags {f}")), "{f}");
            }
        }
        if wanted == Method::Rans4x8 {
            assert!(methods.contains("rANS order 0") && methods.contains("rANS order 1"));
        }
        if name.starts_with("aux") {
            continue;
        }
        // The same reads in the same slices: whatever the codec, every block decodes to the
        // same bytes, so one codec's output checks the others'.
        match &first {
            None => first = Some(blocks),
            Some(f) => {
                assert_eq!(f.len(), blocks.len(), "{name}");
                for (i, (a, b)) in f.iter().zip(&blocks).enumerate() {
                    assert!(a == b, "{name}: block {i} ({:?} {}) differs", b.0, b.1);
                }
            }
        }
    }
}

#[test]
fn every_block_of_the_arithmetic_coder_fixture_decodes() {
    // Its records are checked against samtools in records.rs; here, that samtools used the
    // coder's order 0 and 1, run lengths, bit packing and stripes.
    let (methods, blocks) = walk(&fixture("rand-3.1-arith.cram")).unwrap();
    assert!(blocks.len() > 30, "{} blocks", blocks.len());
    for f in ["00", "01", "09", "40"] {
        assert!(
            methods.contains(&format!("arith flags {f}")),
            "{f}: {methods:?}"
        );
    }
}

/// Decodes every block of `name` and checks each equals the same block of `rans` (the same
/// reads in the same slices, made by samtools with rANS Nx16 alone), and that `method` was
/// used; returns the methods met.
fn same_blocks(name: &str, rans: &str, method: Method) -> BTreeSet<String> {
    let (_, want) = walk(&fixture(rans)).unwrap();
    let (methods, got) = walk(&fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(
        methods.contains(&format!("{method:?}")),
        "{name}: {methods:?}"
    );
    assert_eq!(got.len(), want.len(), "{name}");
    for (i, (a, b)) in want.iter().zip(&got).enumerate() {
        assert!(a == b, "{name}: block {i} ({:?} {}) differs", b.0, b.1);
    }
    methods
}

#[test]
fn the_name_tokeniser_fixture_decodes_to_the_same_names() {
    same_blocks(
        "ce1000-3.1-tok.cram",
        "ce1000-3.1-rans.cram",
        Method::NameTokeniser,
    );
    // Mates named alike: each second name a duplicate of the one before.
    same_blocks(
        "binned-3.1-tok.cram",
        "binned-3.1-rans.cram",
        Method::NameTokeniser,
    );
}

#[test]
fn the_fqzcomp_fixture_decodes_to_the_same_qualities() {
    // Reads stored reversed, position and delta tables.
    let m = same_blocks(
        "ce1000-3.1-fqz.cram",
        "ce1000-3.1-rans.cram",
        Method::Fqzcomp,
    );
    assert!(m.contains("fqzcomp flags 04/60"), "{m:?}");
    // A quality map, one length for all, duplicates, a selector and its table.
    let m = same_blocks(
        "binned-3.1-fqz.cram",
        "binned-3.1-rans.cram",
        Method::Fqzcomp,
    );
    assert!(m.contains("fqzcomp flags 06/7e"), "{m:?}");
}

#[test]
fn the_archive_fixture_decodes_to_the_same_bytes() {
    // archive=1: fqzcomp, the tokeniser over arith streams, arith and bzip2 together.
    let methods = same_blocks(
        "ce1000-3.1-archive.cram",
        "ce1000-3.1-rans.cram",
        Method::Fqzcomp,
    );
    for m in ["NameTokeniser", "Arith", "Bzip2"] {
        assert!(methods.contains(m), "{m}: {methods:?}");
    }
}

/// The stored bytes of every block of `name` compressed with one of `methods`.
fn payloads(name: &str, methods: &[Method]) -> Vec<(Method, usize, Vec<u8>)> {
    let data = fixture(name);
    let def = FileDefinition::parse(&data).unwrap();
    let mut at = FileDefinition::LEN;
    let mut out = Vec::new();
    while at < data.len() {
        let h = ContainerHeader::parse(&data[at..], at as u64, def.version).unwrap();
        let body_at = at + h.header_len;
        let mut c = Cursor::new(&data[body_at..body_at + h.length], body_at as u64);
        for _ in 0..h.blocks {
            let b = Block::read(&mut c, def.version).unwrap();
            if methods.contains(&b.method) {
                out.push((b.method, b.raw_size, b.data.to_vec()));
            }
        }
        at = body_at + h.length;
    }
    out
}

#[test]
fn damaged_streams_of_the_3_1_codecs_are_errors_never_panics() {
    // Past the CRC32 (which catches damage in a file), the codecs themselves must refuse
    // truncated and altered streams, or decode them to exactly the size declared.
    let new = [Method::Arith, Method::Fqzcomp, Method::NameTokeniser];
    let mut blocks = payloads("ce1000-3.1-archive.cram", &new);
    blocks.extend(payloads("binned-3.1-fqz.cram", &new));
    blocks.extend(payloads("rand-3.1-arith.cram", &new));
    assert!(blocks.len() > 20, "{} blocks", blocks.len());
    let mut errors = 0;
    for (method, raw_size, data) in &blocks {
        let n = data.len();
        let mut damaged: Vec<Vec<u8>> = [0, 1, n / 3, n / 2, n - 1]
            .iter()
            .map(|&cut| data[..cut].to_vec())
            .collect();
        for at in (0..n).step_by((n / 12).max(1)) {
            for bit in [0x01, 0x80] {
                let mut d = data.clone();
                d[at] ^= bit;
                damaged.push(d);
            }
        }
        for d in &damaged {
            let b = Block {
                method: *method,
                content_type: ContentType::External,
                content_id: 1,
                raw_size: *raw_size,
                data: d,
                offset: 0,
            };
            match b.decode() {
                Ok(out) => assert_eq!(out.len(), *raw_size),
                Err(_) => errors += 1,
            }
        }
    }
    assert!(errors > blocks.len() * 5, "{errors} errors");
}

#[test]
fn a_flipped_bit_in_any_block_is_an_error_never_a_panic() {
    let data = fixture("rand-3.0-rans.cram");
    // Every 331st byte past the file definition: each flip lands in a header (CRC32) or a
    // block (CRC32), so each is caught with an offset inside the file.
    for at in (FileDefinition::LEN..data.len()).step_by(331) {
        let mut d = data.clone();
        d[at] ^= 0x10;
        let e = walk(&d).expect_err("flip not caught");
        assert!(e.offset <= d.len() as u64, "{e}");
    }
}

#[test]
fn blocks_declaring_more_than_the_limit_or_the_input_are_refused() {
    // method raw, content external, id 1, size 5 with only 2 bytes present.
    let short = [0u8, 4, 1, 5, 5, 1, 2];
    let e = Block::read(
        &mut Cursor::new(&short, 1000),
        FileDefinition::parse(&fixture("aux-3.0.cram"))
            .unwrap()
            .version,
    )
    .unwrap_err();
    assert!(e.offset >= 1000, "{e}");
    // gzip block declaring a raw size past MAX_RAW_SIZE: 0x0fffffff as ITF8.
    let huge = [1u8, 4, 1, 0, 0xf2, 0, 0, 0, 0];
    let v = cram::Version { major: 2, minor: 1 };
    let e = Block::read(&mut Cursor::new(&huge, 0), v).unwrap_err();
    assert!(e.what.contains("limit"), "{e}");
}
