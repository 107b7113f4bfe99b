//! Expression results checked against samtools 1.16.1 (`samtools view -c -e EXPR` on records
//! like these; the comments give the reason htslib answers as it does).

use super::*;
use crate::filter::testutil::{header, Rec};

fn run(expr: &str, rec: &Rec) -> Result<bool, EvalError> {
    let h = header();
    let ctx = Context::new(&h);
    let mut e = Expression::parse(expr).unwrap_or_else(|err| panic!("{expr}: {err}"));
    e.matches(&rec.record(), &ctx)
}

fn yes(expr: &str, rec: &Rec) {
    assert_eq!(run(expr, rec), Ok(true), "{expr} should select");
}

fn no(expr: &str, rec: &Rec) {
    assert_eq!(run(expr, rec), Ok(false), "{expr} should not select");
}

fn fails(expr: &str, rec: &Rec) {
    assert!(run(expr, rec).is_err(), "{expr} should fail to evaluate");
}

fn base() -> Rec {
    Rec {
        flag: 0x1 | 0x2 | 0x20 | 0x40,
        next_ref_id: 1,
        next_pos: 499,
        tlen: -150,
        ..Rec::default()
    }
    .tag_i(b"NM", b'C', 0)
    .tag_i(b"AS", b'c', -7)
    .tag_z(b"RG", b"grpA")
    .tag_f(b"XF", 2.5)
    .tag_i(b"XA", b'A', i64::from(b'q'))
    .tag_b(b"ZB", &[1, 2])
}

#[test]
fn fields() {
    let r = base();
    yes("pos == 100 && endpos == 105", &r);
    yes("mapq == 30 && flag == 99", &r);
    yes(
        "flag.paired && flag.proper_pair && flag.mreverse && flag.read1",
        &r,
    );
    no(
        "flag.unmap || flag.munmap || flag.reverse || flag.read2",
        &r,
    );
    no(
        "flag.secondary || flag.qcfail || flag.dup || flag.supplementary",
        &r,
    );
    yes("flag.read1 == 64", &r);
    yes(
        "rname == \"chr1\" && refid == 0 && mrname == \"chr2\" && rnext == \"chr2\"",
        &r,
    );
    yes(
        "mrefid == 1 && mpos == 500 && pnext == 500 && tlen == -150",
        &r,
    );
    yes(
        "qname == \"read1\" && seq == \"ACGTACGT\" && cigar == \"2S6M\"",
        &r,
    );
    yes("ncigar == 2 && qlen == 8 && rlen == 6 && sclen == 2", &r);
    yes("library == \"libA\"", &r);
    yes(
        "min(qual) == 30 && max(qual) == 37 && avg(qual) == 33.5 && length(qual) == 8",
        &r,
    );
    yes("length(seq) == 8 && length(cigar) == 4", &r);
}

#[test]
fn tags() {
    let r = base();
    // A present tag is true even when 0.
    yes("[NM]", &r);
    yes("[NM] == 0", &r);
    yes("[AS] == -7 && [AS] < 0", &r);
    yes("[XF] > 2.4 && [XF] < 2.6", &r);
    yes("[XA] == \"q\"", &r);
    yes("[RG] == \"grpA\" && [RG] =~ \"^grp\"", &r);
    // An absent tag is unknown: every comparison is false, its negation true.
    no("[XX]", &r);
    no("[XX] == 0", &r);
    no("[XX] != 0", &r);
    no("[XX] < 1 || [XX] >= 1", &r);
    yes("!([XX])", &r);
    yes("!([XX] == 1)", &r);
    no("exists([XX])", &r);
    yes("exists([NM])", &r);
    yes("default([XX], 5) == 5", &r);
    yes("default([AS], 5) == -7", &r);
    // B arrays cannot be read.
    fails("[ZB] > 0", &r);
    // Type mismatches: string against number is false for ==, true for !=.
    no("[RG] == 1", &r);
    yes("[RG] != 1", &r);
    no("[NM] == \"0\"", &r);
    no("qname > 5", &r);
}

#[test]
fn unknown_values_and_c_conversions() {
    let r = base();
    // NaN becomes INT64_MIN in C's integer conversion: INT64_MIN % 3 == -2, which is true.
    yes("[XX] % 3", &r);
    // A missing tag's number part is 0, so `% [XX]` is undefined.
    no("5 % [XX]", &r);
    no("[XX] + 1", &r);
    no("1 + [XX]", &r);
    no("-[XX]", &r);
    yes("!-[XX]", &r);
    no("[XX] & 1", &r);
    yes("~0", &r);
    no("~-1", &r);
    // sqrt keeps the "present" truth of its argument even when the value is 0.
    yes("sqrt([NM])", &r);
    no("sqrt(0)", &r);
    no("sqrt(-1)", &r);
    no("log(-1)", &r);
    yes("log(0) < 0", &r);
    yes("exp(0) == 1 && pow(2, 10) == 1024 && sqrt(16) == 4", &r);
    no("pow([XX], 2)", &r);
    // && of an unknown is a defined false; || with a true side is true.
    no("[XX] && 1", &r);
    yes("!([XX] && 1)", &r);
    yes("[XX] || 1", &r);
    no("[XX] || 0", &r);
    // && and || share one level, left to right: (1 || 0) && 0.
    no("1 || 0 && 0", &r);
    yes("0 && 0 || 1", &r);
    // Comparisons chain to the right: 3 > (2 > 1) is 3 > 1.
    yes("3 > 2 > 1", &r);
    no("1 == 2 == 0", &r);
    yes("0 == (2 == 1)", &r);
    yes(
        "2 + 3 * 4 == 14 && (2 + 3) * 4 == 20 && 7 / 2 == 3.5 && 7 % 3 == 1",
        &r,
    );
    yes(
        "-7 % 3 == -1 && 6 & 3 == 2 && (6 | 3) == 7 && (6 ^ 3) == 5",
        &r,
    );
    yes("0x10 == 16 && 1e2 == 100 && .5 == 0.5", &r);
    yes("\"abc\" < \"abd\" && \"b\" > \"abc\" && \"x\" >= \"x\"", &r);
    yes("!0.5", &r);
    yes("!\"\" == 0", &r);
    no("\"\" == 1", &r);
    yes("\"\"", &r);
}

#[test]
fn errors() {
    let r = base();
    fails("qname + 1", &r);
    fails("-qname", &r);
    fails("~qname", &r);
    fails("mapq =~ \"3\"", &r);
    fails("length(mapq)", &r);
    fails("min(5)", &r);
    fails("pow(qname, 2)", &r);
    // A string slot reused in a + chain keeps its buffer, so the absent tag is an empty string
    // and the addition fails.
    fails("1 + length(qname) + [XX]", &r);
    assert!(Expression::parse("qname =~ \"(a\"").is_err());
    assert!(Expression::parse("abs(-1)").is_err());
}

#[test]
fn regex_slots_are_reused_in_order() {
    // htslib keeps the first pattern compiled at each position in an evaluation; the second
    // record finds "^read" in slot 0 and applies it to its RG.
    let h = header();
    let ctx = Context::new(&h);
    let mut e = Expression::parse("[RG] =~ \"^grp\" || qname =~ \"^read\"").unwrap();
    let no_rg = Rec::default();
    assert_eq!(e.matches(&no_rg.record(), &ctx), Ok(true));
    let rg = Rec {
        name: b"other".to_vec(),
        ..Rec::default()
    }
    .tag_z(b"RG", b"grpA");
    assert_eq!(e.matches(&rg.record(), &ctx), Ok(false));
    let mut fresh = Expression::parse("[RG] =~ \"^grp\" || qname =~ \"^read\"").unwrap();
    assert_eq!(fresh.matches(&rg.record(), &ctx), Ok(true));
}

#[test]
fn edge_records() {
    let unmapped = Rec {
        ref_id: -1,
        pos: -1,
        flag: 4,
        cigar: vec![],
        seq: vec![],
        qual: vec![],
        ..Rec::default()
    };
    yes(
        "rname == \"*\" && pos == 0 && cigar == \"*\" && endpos == 0",
        &unmapped,
    );
    yes(
        "seq == \"\" && length(qual) == 0 && library == \"\"",
        &unmapped,
    );
    yes("exists(seq) && exists(library)", &unmapped);
    no("min(qual) < 100 || max(qual) > 0", &unmapped);
    yes("avg(qual) == 0", &unmapped);
    let no_lib = Rec::default().tag_z(b"RG", b"grpC");
    yes("library == \"\"", &no_lib);
}
