//! TBI and tabix-made CSI, parsed from indexes Debian's tabix 1.16 wrote
//! (`fixtures/tabix/make.sh`).

use std::path::PathBuf;

use index::tbi::{Meta, Preset};
use index::{Error, Index, Kind};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/tabix")
        .join(name)
}

fn load(name: &str) -> Index {
    match index::read(fixture(name)) {
        Ok(i) => i,
        Err(e) => panic!("{name}: {e}"),
    }
}

fn meta(i: &Index) -> Meta {
    match i.tabix() {
        Ok(Some(m)) => m,
        other => panic!("{}: no tabix meta: {other:?}", i.name()),
    }
}

#[test]
fn vcf_tbi_has_the_vcf_preset_and_both_contigs() {
    let i = load("small.vcf.gz.tbi");
    assert_eq!(i.kind(), Kind::Tbi);
    assert_eq!((i.min_shift(), i.depth(), i.n_refs()), (14, 5, 2));
    let m = meta(&i);
    assert_eq!(m.preset(), Preset::Vcf);
    assert!(!m.zero_based());
    assert_eq!((m.col_seq, m.col_beg, m.col_end), (1, 2, 0));
    assert_eq!((m.meta_char, m.skip), (i32::from(b'#'), 0));
    assert_eq!(m.names, ["chr1", "chr2"]);
    // Every record of chr1 is in the first block; a query finds it, one past the end does not.
    assert_eq!(i.query(0, 0, 1 << 20).len(), 1);
    assert!(i.query(2, 0, 100).is_empty());
}

#[test]
fn csi_made_by_tabix_carries_the_same_meta_in_its_aux() {
    let tbi = meta(&load("small.vcf.gz.tbi"));
    let i = load("small.csi.vcf.gz.csi");
    assert_eq!(i.kind(), Kind::Csi);
    assert_eq!(meta(&i), tbi);
    assert_eq!(Meta::from_bytes(i.aux()).as_ref(), Ok(&tbi));
    assert_eq!(tbi.to_bytes(), i.aux());
}

#[test]
fn bed_is_generic_zero_based() {
    let m = meta(&load("small.bed.gz.tbi"));
    assert_eq!(m.preset(), Preset::Generic);
    assert!(m.zero_based());
    assert_eq!((m.col_seq, m.col_beg, m.col_end), (1, 2, 3));
}

#[test]
fn csi_reaches_past_two_to_the_29() {
    let i = load("long.txt.gz.csi");
    assert!(i.max_position() > 600_000_100);
    let m = meta(&i);
    assert_eq!((m.col_seq, m.col_beg, m.col_end), (1, 3, 4));
    assert_eq!(m.names, ["c1", "c2"]);
    assert_eq!(i.query(0, 599_999_999, 600_000_001).len(), 1);
}

fn inflate(name: &str) -> Vec<u8> {
    use std::io::Read;
    let bytes = std::fs::read(fixture(name)).unwrap_or_default();
    let mut out = Vec::new();
    let read = flate2::read::MultiGzDecoder::new(&bytes[..]).read_to_end(&mut out);
    assert!(read.is_ok(), "{name}: {read:?}");
    out
}

#[test]
fn a_tbi_cut_inside_its_names_names_the_field_and_offset() {
    let raw = inflate("small.vcf.gz.tbi");
    // magic 4, n_ref 4, 28 bytes of meta, then the names.
    match Index::from_bytes("cut.tbi", &raw[..40]) {
        Err(Error::Truncated { what, offset, .. }) => {
            assert_eq!((what, offset), ("tabix sequence names", 36));
        }
        other => panic!("expected truncated names, got {other:?}"),
    }
    let e = Index::from_bytes("cut.tbi", &raw[..20]).map(|_| ());
    assert!(
        matches!(
            e,
            Err(Error::Truncated {
                what: "tabix meta",
                offset: 8,
                ..
            })
        ),
        "{e:?}"
    );
}

#[test]
fn a_hostile_l_nm_is_refused_before_it_is_allocated() {
    let mut raw = inflate("small.vcf.gz.tbi");
    raw[32..36].copy_from_slice(&(-5i32).to_le_bytes());
    let e = Index::from_bytes("neg.tbi", &raw).map(|_| ());
    assert!(
        matches!(&e, Err(Error::Invalid { offset: 32, message, .. }) if message.contains("negative")),
        "{e:?}"
    );
    raw[32..36].copy_from_slice(&i32::MAX.to_le_bytes());
    let e = Index::from_bytes("huge.tbi", &raw).map(|_| ());
    assert!(
        matches!(e, Err(Error::Truncated { offset: 36, .. })),
        "{e:?}"
    );
}
