use super::*;

fn p(s: &str, names: &[&str]) -> Result<Region, RegionError> {
    parse_region(s, names)
}

fn r(tid: usize, beg: u64, end: i64) -> Result<Region, RegionError> {
    Ok(Region::Ref {
        tid: RefId::new(tid),
        beg: Position::new(beg),
        end: Position::new(end as u64),
    })
}

/// What samtools prints on stderr for a skipped region.
fn skip(s: &str, names: &[&str]) -> String {
    match p(s, names) {
        Err(e) => {
            let mut out = e.htslib_message().map(|m| m + "\n").unwrap_or_default();
            out.push_str(&e.samtools_warning());
            out
        }
        other => panic!("{s}: expected skip, got {other:?}"),
    }
}

const COLONS: &[&str] = &[
    "chr1",
    "chr1:100",
    "chr1:100-200",
    "chr2:100-200",
    "chr3",
    "chr1,chr3",
];

#[test]
fn plain_forms() {
    let h = &["chr1", "chr2"];
    assert_eq!(p("chr2", h), r(1, 0, POS_MAX));
    assert_eq!(p("chr1:100", h), r(0, 99, POS_MAX));
    assert_eq!(p("chr1:100-200", h), r(0, 99, 200));
    assert_eq!(p("chr1:1,000-2,000", h), r(0, 999, 2000));
    assert_eq!(p("chr1:123456-123456", h), r(0, 123455, 123456));
    assert_eq!(p("chr1:-100", h), r(0, 0, 100));
    assert_eq!(p("chr1:0-100", h), r(0, 0, 100));
    assert_eq!(p("chr1:100-", h), r(0, 99, POS_MAX));
    assert_eq!(p("chr1:", h), r(0, 0, POS_MAX));
    assert_eq!(p("chr1:-", h), r(0, 0, POS_MAX));
    assert_eq!(p("chr1:0", h), r(0, 0, POS_MAX));
    assert_eq!(p("chr1:0-0", h), r(0, 0, POS_MAX));
    assert_eq!(p("chr1:10-0", h), r(0, 9, POS_MAX));
    assert_eq!(p("chr1:+100", h), r(0, 99, POS_MAX));
    assert_eq!(p("chr1:2k-3k", h), r(0, 1999, 3000));
    assert_eq!(p("chr1:1k-2.5k", h), r(0, 999, 2500));
    assert_eq!(p("chr1:1.5k", h), r(0, 1499, POS_MAX));
    assert_eq!(p("chr1:1e3-2e3", h), r(0, 999, 2000));
    assert_eq!(p("chr1:1e2-1.5e2", h), r(0, 99, 150));
    assert_eq!(p("chr1:250001-300000", h), r(0, 250000, 300000));
    assert_eq!(p("*", h), Ok(Region::Unplaced));
    assert_eq!(p(".", h), Ok(Region::All));
}

#[test]
fn one_coordinate() {
    let h: &[&str] = &["chr1"];
    let one = |s| parse_region_with(s, h, ParseFlags::ONE_COORD);
    assert_eq!(one("chr1:100"), r(0, 99, 100));
    assert_eq!(one("chr1:100-200"), r(0, 99, 200));
    assert_eq!(one("chr1"), r(0, 0, POS_MAX));
}

#[test]
fn unknown_and_invalid() {
    let h = &["chr1", "chrM"];
    assert_eq!(
        skip("nope:1-10", h),
        "[main_samview] region \"nope:1-10\" specifies an invalid region or unknown \
         reference. Continue anyway."
    );
    assert_eq!(
        skip("chr1:500-400", h),
        "[main_samview] region \"chr1:500-400\" specifies an invalid region or unknown \
         reference. Continue anyway."
    );
    assert!(skip("chr1:100-100x", h)
        .starts_with("[E::hts_parse_region] Unexpected string \"x\" after region\n"));
    assert!(skip("chr1:abc", h)
        .starts_with("[E::hts_parse_region] Unexpected string \"abc\" after region\n"));
    assert!(skip("chr1:-5-10", h).starts_with("[E::hts_parse_region] Coordinates must be > 0\n"));
    assert!(p("chr1:100--5", h).is_err());
    assert_eq!(
        p("", h),
        Err(RegionError::UnknownReference {
            region: String::new()
        })
    );
    assert_eq!(
        p("chr1:500-400", h),
        Err(RegionError::Empty {
            region: "chr1:500-400".to_string()
        })
    );
    // Past the reference end is not an error.
    assert_eq!(p("chrM:20000", h), r(1, 19999, POS_MAX));
}

#[test]
fn complaints_as_tabix_logs_them() {
    let h = &["chr1", "HLA:1", "HLA", "HLA:2-3"];
    let e = |s| p(s, h).unwrap_err().htslib_complaint().unwrap();
    assert_eq!(e("chr1:x-9"), "Unexpected string \"x-9\" after region");
    assert_eq!(e("chr1:5-x"), "Unexpected string \"x\" after region");
    assert_eq!(e("chr1:100 "), "Unexpected string \" \" after region");
    assert_eq!(e("chr1:-5-10"), "Coordinates must be > 0");
    assert_eq!(e("{chr1"), "Mismatching braces in \"{chr1\"");
    assert_eq!(
        e("HLA:2-3"),
        "Range is ambiguous. Use {HLA:2-3} or {HLA}:2-3 instead"
    );
    assert_eq!(p("{HLA:1}", h), r(1, 0, POS_MAX));
    assert_eq!(p("{HLA}:2-3", h), r(2, 1, 3));
    assert_eq!(p("HLA:1:5-9", h), r(1, 4, 9));
}

#[test]
fn colon_names() {
    let h = COLONS;
    assert_eq!(
        skip("chr1:100", h),
        "[E::hts_parse_region] Range is ambiguous. Use {chr1:100} or {chr1}:100 instead\n\
         [main_samview] region \"chr1:100\" specifies an invalid region or unknown \
         reference. Continue anyway."
    );
    assert_eq!(p("{chr1}:100", h), r(0, 99, POS_MAX));
    assert_eq!(p("{chr1:100}", h), r(1, 0, POS_MAX));
    assert_eq!(p("{chr1:100-200}", h), r(2, 0, POS_MAX));
    assert_eq!(p("{chr1:100-200}:100-100", h), r(2, 99, 100));
    // chr2 is not a name, so the whole string is.
    assert_eq!(p("chr2:100-200", h), r(3, 0, POS_MAX));
    assert_eq!(p("chr2:100-200:1-100", h), r(3, 0, 100));
    assert_eq!(p("chr1,chr3", h), r(5, 0, POS_MAX));
    assert_eq!(
        skip("{chr1", h),
        "[E::hts_parse_region] Mismatching braces in \"{chr1\"\n[main_samview] region \
         \"{chr1\" specifies an invalid region or unknown reference. Continue anyway."
    );
    // htslib drops the last character of a braced name without looking at it.
    assert_eq!(skip("{chr1}x", h), invalid_region_warning("{chr1}x"));
    assert_eq!(p("{chr3}", h), r(4, 0, POS_MAX));
}

#[test]
fn manyrefs_names() {
    let h = &[
        "HLA-A*01:01:01:01",
        "chrUn:100-200",
        "chr2:50",
        "chr2",
        "weird|name;x=1",
    ];
    assert_eq!(p("HLA-A*01:01:01:01", h), r(0, 0, POS_MAX));
    assert_eq!(p("HLA-A*01:01:01:01:3000-4000", h), r(0, 2999, 4000));
    assert_eq!(p("{HLA-A*01:01:01:01}:9000-9600", h), r(0, 8999, 9600));
    assert_eq!(p("chrUn:100-200", h), r(1, 0, POS_MAX));
    assert_eq!(p("{chrUn:100-200}:1-1000", h), r(1, 0, 1000));
    assert_eq!(p("{chr2}:50", h), r(3, 49, POS_MAX));
    assert_eq!(p("{chr2:50}", h), r(2, 0, POS_MAX));
    assert_eq!(p("{chr2:50}:5000-6000", h), r(2, 4999, 6000));
    assert!(matches!(
        p("chr2:50", h),
        Err(RegionError::Ambiguous { .. })
    ));
    assert_eq!(p("weird|name;x=1:300", h), r(4, 299, POS_MAX));
}
