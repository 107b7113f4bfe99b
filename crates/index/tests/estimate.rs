//! `Index::estimate_end` on a CSI against the same file's BAI: a CSI has no linear index, and
//! htslib folds small bins into their parents, so its estimate comes from the next bin that
//! exists. It must never fall before the BAI's (the linear index of the same records), or a
//! region query reads on past its planned bytes with one more round trip; and it should
//! cost, on average, less than a BGZF block more.

mod common;

use common::{load_bam, load_index};

#[test]
fn csi_estimates_are_never_before_the_linear_index() {
    let bai = load_index("data/rand.bam.bai");
    let csi = load_index("data/rand.bam.csi");
    let bam = load_bam("data/rand.bam");
    let (mut same, mut compared, mut excess) = (0, 0, 0u64);
    for tid in 0..bai.n_refs() {
        let last = bam
            .recs
            .iter()
            .filter(|r| r.tid == tid as i32)
            .map(|r| r.end)
            .max()
            .unwrap_or(0) as u64;
        for end in (1..last).step_by(997) {
            let (Some(b), Some(c)) = (bai.estimate_end(tid, end), csi.estimate_end(tid, end))
            else {
                continue;
            };
            assert!(
                c >= b,
                "tid {tid}, end {end}: CSI estimate {c:?} before the linear index's {b:?}"
            );
            compared += 1;
            same += usize::from(c == b);
            excess += c.coffset() - b.coffset();
        }
    }
    assert!(compared > 100, "{compared} ends compared");
    let per = excess / compared as u64;
    assert!(same > 0, "no CSI estimate equals the BAI's");
    assert!(
        per < 65_536,
        "{per} bytes more than the BAI's estimate on average ({same} of {compared} equal)"
    );
}
