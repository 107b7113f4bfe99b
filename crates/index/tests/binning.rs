//! The test kit computes the bins of the records it builds on its own (it depends on no crate
//! under test); here its `reg2bin` and `index::binning`'s, the one the crates use, agree.

use index::binning::reg2bin_signed;
use testkit::builders::reg2bin;
use testkit::Rng;

#[test]
fn the_test_kits_bins_are_the_index_crates() {
    // Every level's edges, and random intervals of every length scale.
    let mut cases = vec![
        (0, 1),
        (16383, 16385),
        (0, 1 << 29),
        ((1 << 29) - 1, 1 << 29),
    ];
    for shift in [14, 17, 20, 23, 26] {
        let w = 1i64 << shift;
        cases.extend([
            (w - 1, w),
            (w - 1, w + 1),
            (w, 2 * w),
            (3 * w - 1, 3 * w + 1),
        ]);
    }
    let mut rng = Rng::new(20261206);
    for _ in 0..20_000 {
        let beg = (rng.next_u64() % (1 << 29)) as i64;
        let len = 1 + (rng.next_u64() % (1u64 << (rng.next_u64() % 28))) as i64;
        cases.push((beg, (beg + len).min(1 << 29)));
    }
    for (beg, end) in cases {
        assert_eq!(
            reg2bin(beg, end),
            reg2bin_signed(beg, end, 14, 5),
            "[{beg}, {end})"
        );
    }
}
