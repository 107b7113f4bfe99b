use super::*;

fn named(name: &[u8], intervals: &[(u64, u64)]) -> NamedIntervals {
    NamedIntervals {
        name: name.to_vec(),
        intervals: intervals
            .iter()
            .map(|&(b, e)| Interval::new(Position::new(b), Position::new(e)))
            .collect(),
    }
}

fn t(text: &str) -> Targets {
    Targets::parse("t.bed", text.as_bytes()).unwrap()
}

#[test]
fn reads_bed_lines() {
    let b = t("# comment\nbrowser x\ntrack name=y\n\nchr1\t10\t20\n  chr1 30 40 extra\nchr2\t5\n");
    assert!(b.overlaps(b"chr1", 19, 25));
    assert!(!b.overlaps(b"chr1", 20, 30));
    assert!(b.overlaps(b"chr1", 0, 11));
    assert!(!b.overlaps(b"chr1", 0, 10));
    assert!(b.overlaps(b"chr1", 39, 39 + 1));
    // One number is a 1-based position.
    assert!(b.overlaps(b"chr2", 4, 5));
    assert!(!b.overlaps(b"chr2", 5, 6));
    assert!(!b.overlaps(b"chr3", 0, 100));
    // A zero-width query overlaps only strictly inside an interval (samtools -P's mate test).
    assert!(b.overlaps(b"chr1", 15, 15));
    assert!(!b.overlaps(b"chr1", 10, 10));
    // `-1` reads as 2^64-1 (sscanf's %lu), a negative end once signed: it overlaps nothing.
    let b = t("chr1\t16384\t-1\nchr1\t100\t200\n");
    assert!(!b.overlaps(b"chr1", 20000, 30000));
    assert!(b.overlaps(b"chr1", 150, 160));
}

#[test]
fn errors_name_the_line() {
    let e = Targets::parse("x.bed", b"\nchr1\t10\t20\nchr1\n").unwrap_err();
    assert_eq!(e.to_string(), "Parse error reading \"x.bed\" at line 2");
    let e = Targets::parse("x.bed", b"chr1\t20\t10\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "Parse error reading \"x.bed\" at line 1 : end (10) must not be less than start (20)"
    );
    assert!(Targets::parse("x.bed", b"chr1 abc\n").is_err());
    // "browser" with numbers is a reference called browser.
    assert!(t("browser 1 2\n").overlaps(b"browser", 1, 2));
}

#[test]
fn regions_merge_and_intersect() {
    let regs = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let MergedTargets {
        targets: alone,
        filtered,
    } = Targets::merge_regions(
        None,
        &regs(&["chr1:100-200", "chr1:150-300", "chr1:301-400", "chr2"]),
    );
    assert!(!filtered);
    assert_eq!(
        alone.region_list(false),
        // chr1:100-200 and 150-300 merge; 301-400 touches them and joins too.
        vec![
            named(b"chr1", &[(99, 400)]),
            named(b"chr2", &[(0, ParsedRegion::OPEN_END as u64)])
        ]
    );
    let bed = t("chr1\t0\t120\nchr1\t180\t250\nchr3\t0\t10\n");
    let merged = Targets::merge_regions(Some(bed), &regs(&["chr1:100-200", "chr2"]));
    let (cut, filtered) = (merged.targets, merged.filtered);
    assert!(filtered);
    assert_eq!(
        cut.region_list(true),
        vec![named(b"chr1", &[(99, 120), (180, 200)])]
    );
    // chr3 stays in the targets (samtools -P still tests mates against it) but is not iterated.
    assert!(cut.overlaps(b"chr3", 5, 6));
}

#[test]
fn the_index_is_not_rebuilt_after_merging() {
    // bedidx indexes the sorted lines, then merges them without indexing again: the window of
    // 16363 still names the third line, which after the merge is past the end, so samtools
    // finds no overlap there (seen with `view -P`).
    let mut b = t("chrM\t704\t1704\nchrM\t16363\t21363\nchrM\t187\t1187\n");
    assert!(b.overlaps(b"chrM", 16307, 16454));
    b.unify();
    assert!(!b.overlaps(b"chrM", 16307, 16454));
    assert!(b.overlaps(b"chrM", 500, 600));
    assert_eq!(
        b.region_list(false),
        vec![named(b"chrM", &[(187, 1704), (16363, 21363)])]
    );
}
