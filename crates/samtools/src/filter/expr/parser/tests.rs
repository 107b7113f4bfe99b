//! The parser's tests.

use super::*;

fn err(s: &str) -> SyntaxError {
    parse(s.as_bytes()).unwrap_err()
}

#[test]
fn accepts_the_grammar() {
    for s in [
        "mapq > 5",
        "flag.paired && !flag.unmap",
        "pos>=100&&pos<200",
        "[NM] == 0 || [XS] > 3",
        "qname =~ \"^SRR\" && seq !~ \"N\"",
        "(1+2)*3 % 4 - -5",
        "~flag & 4 | 1 ^ 2",
        "default([XX],0) + pow(2, 3) + sqrt(4) + log(1) + exp(0) + abs(1)",
        "length(seq) > 10 && min(qual) > 2 && max(qual) < 50 && avg(qual) > 20",
        "exists([RG]) && library == \"lib1\"",
        "rname == \"chr1\" && rnext == mrname && refid == mrefid",
        "mpos + pnext + endpos + qlen + rlen + sclen + ncigar + tlen",
        "cigar =~ \"D\" || 1e3 > 0x10",
    ] {
        let r = parse(s.as_bytes());
        if s.contains("abs(") {
            assert!(r.is_err(), "{s}: htslib 1.16 has no abs()");
        } else {
            assert!(r.is_ok(), "{s}: {r:?}");
        }
    }
}

#[test]
fn errors_name_the_position() {
    assert_eq!(err("mapq >").at, 6);
    assert_eq!(err("mapq > > 3").at, 7);
    assert_eq!(err("bogus").at, 0);
    assert!(err("bogus").message.contains("bogus"));
    assert_eq!(err("position > 3").at, 3);
    assert_eq!(err("(mapq > 3").at, 9);
    assert_eq!(err("qname == \"abc").at, 9);
    assert_eq!(err("flag.paried").at, 0);
    assert_eq!(err("default([XX] ,1)").at, 12);
    assert_eq!(err("sqrt (4)").at, 0);
    assert_eq!(err("mapq = 3").at, 5);
    assert_eq!(err("[N] > 1").at, 0);
    assert_eq!(err("").at, 0);
    assert_eq!(err("--mapq").at, 1);
    assert!(parse(b"--5").is_ok());
    assert_eq!(err("1 +").at, 3);
}

#[test]
fn shapes() {
    // && and || share one level, left to right.
    let e = parse(b"1 || 0 && 0").unwrap();
    assert_eq!(e.rest.len(), 2);
    // == is right-recursive.
    let e = parse(b"1 == 1 == 1").unwrap();
    assert!(e.first.rhs.as_ref().unwrap().2.rhs.is_some());
    // Prefix symbols stop where the name stops.
    assert!(matches!(symbol(b"pnext", 0), Ok(Some((Symbol::Mpos, 5)))));
    assert!(matches!(
        symbol(b"[X ]", 0),
        Ok(Some((Symbol::Tag([b'X', b' ']), 4)))
    ));
}

#[test]
fn nesting_is_bounded() {
    let deep =
        |n: usize, open: &str, close: &str| format!("{}1{}", open.repeat(n), close.repeat(n));
    // The deepest accepted: the whole expression is one level, each `(`, `!`, call or link of
    // a right-associative chain another.
    assert!(parse(deep(63, "(", ")").as_bytes()).is_ok());
    assert!(parse(deep(63, "!", "").as_bytes()).is_ok());
    assert!(parse(deep(63, "1==", "").as_bytes()).is_ok());
    assert!(parse(deep(63, "1<", "").as_bytes()).is_ok());
    assert!(parse(deep(63, "sqrt(", ")").as_bytes()).is_ok());
    assert!(parse(deep(64, "sqrt(", ")").as_bytes()).is_err());
    // Past it an error, however deep, never a stack overflow; the level count is undone after
    // each parse, so the next one starts from zero.
    for n in [64, 10_000, 100_000] {
        let e = err(&deep(n, "(", ")"));
        assert_eq!(e.message, "expression nested more than 64 deep");
        for open in ["~", "1!=", "1>="] {
            assert!(err(&deep(n, open, "")).message.contains("nested more than"));
        }
    }
    assert!(parse(deep(63, "(", ")").as_bytes()).is_ok());
}
