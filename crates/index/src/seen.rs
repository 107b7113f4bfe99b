//! The bin numbers of the reference being read, for htslib's duplicate check (`idx_read_core`
//! fails when `kh_put` finds a number present) and for putting the bins in order.
//!
//! Numbers a scheme can hold (below [`SET_LIMIT`]) go in a bit set: a repeat is found as it is
//! read, at the cost of a bit test, where sorting every number (twice: once to check, once to
//! order the bins) was a tenth of loading a BAI. The same bits give each bin its place by
//! number ([`Seen::order`]) with no sort. Other numbers (garbage in a damaged index, or the
//! deepest levels of a CSI of more than six levels) are kept with their offsets and sorted
//! when checked: sorting rather than hashing keeps a hostile set of numbers from costing more
//! than n log n.

/// Bin numbers below this are kept as bits (32 KiB): all of a BAI's (37,450 and the
/// pseudo-bin), all of a CSI's up to depth 5.
const SET_LIMIT: u32 = 1 << 18;

#[derive(Default)]
pub(crate) struct Seen {
    /// One bit per number below `limit`.
    bits: Vec<u64>,
    limit: u32,
    /// The words of `bits` with a bit set, to clear them for the next reference.
    touched: Vec<u32>,
    /// Numbers at or past `limit`, with the offsets of their bins.
    others: Vec<(u32, u64)>,
    /// Numbers recorded, in all.
    count: usize,
}

impl Seen {
    /// Forgets the last reference's numbers; numbers below `ids` (capped at [`SET_LIMIT`])
    /// will be kept as bits.
    pub(crate) fn clear(&mut self, ids: u32) {
        for &w in &self.touched {
            if let Some(word) = self.bits.get_mut(w as usize) {
                *word = 0;
            }
        }
        self.touched.clear();
        self.others.clear();
        self.count = 0;
        self.limit = ids.min(SET_LIMIT);
        let words = self.limit.div_ceil(64) as usize;
        if self.bits.len() < words {
            self.bits.resize(words, 0);
        }
    }

    /// Records bin `id`, read at offset `at`. False when `id` is in the set already (a repeat,
    /// found now); a repeat among the other numbers is found by [`Seen::first_other_repeat`].
    pub(crate) fn insert(&mut self, id: u32, at: u64) -> bool {
        self.count += 1;
        if id >= self.limit {
            self.others.push((id, at));
            return true;
        }
        let (w, bit) = ((id / 64) as usize, 1u64 << (id % 64));
        let Some(word) = self.bits.get_mut(w) else {
            // Not reached: `bits` covers `limit` (kept total).
            self.others.push((id, at));
            return true;
        };
        if *word & bit != 0 {
            return false;
        }
        if *word == 0 {
            self.touched.push(w as u32);
        }
        *word |= bit;
        true
    }

    /// How many numbers are kept outside the set (what a check has to sort).
    pub(crate) fn others(&self) -> usize {
        self.others.len()
    }

    /// The first repeat in file order among the numbers outside the set: `(number, offset)`.
    pub(crate) fn first_other_repeat(&mut self) -> Option<(u32, u64)> {
        self.others.sort_unstable();
        self.others
            .windows(2)
            .filter(|w| w[0].0 == w[1].0)
            .map(|w| w[1])
            .min_by_key(|&(_, at)| at)
    }

    /// For `n` bins whose numbers are exactly those recorded (all in the set, none repeated),
    /// a function giving each number its place among them in increasing order; `None` when
    /// that does not hold (the caller sorts).
    pub(crate) fn order(&self, n: usize) -> Option<impl Fn(u32) -> usize + '_> {
        // A few bins sort for less than counting the set's words (a reference of a draft
        // assembly's hundred thousand holds one or two).
        let words = &self.bits[..(self.limit.div_ceil(64) as usize).min(self.bits.len())];
        if !self.others.is_empty() || self.count != n || n.saturating_mul(16) < words.len() {
            return None;
        }
        // Bins before each word, then the bits below a number within its word.
        let mut before = Vec::with_capacity(words.len());
        let mut total = 0usize;
        for w in words {
            before.push(total);
            total += w.count_ones() as usize;
        }
        if total != n {
            return None;
        }
        Some(move |id: u32| {
            let (w, bit) = ((id / 64) as usize, id % 64);
            let below = self.bits.get(w).map_or(0, |&word| {
                let mask = (1u64 << bit) - 1;
                (word & mask).count_ones() as usize
            });
            before.get(w).copied().unwrap_or(0) + below
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_and_order() {
        let mut s = Seen::default();
        s.clear(37451);
        assert!(s.insert(4681, 10));
        assert!(s.insert(0, 20));
        assert!(s.insert(37450, 30));
        assert!(!s.insert(0, 40), "a repeat in the set is found at once");
        // Placed by number (a set of 5 words for 4 bins).
        s.clear(300);
        for (i, id) in [9, 0, 299, 150].into_iter().enumerate() {
            assert!(s.insert(id, i as u64));
        }
        {
            let place = s.order(4).expect("all in the set");
            let places: Vec<usize> = [0, 9, 150, 299].into_iter().map(&place).collect();
            assert_eq!(places, [0, 1, 2, 3]);
        }
        assert!(s.order(5).is_none());
        // One bin in a set of 586 words: sorted rather than placed.
        s.clear(37451);
        assert!(s.insert(4681, 0));
        assert!(s.order(1).is_none());
        s.clear(37451);
        for (i, id) in [9, 0, 37450, 4681].into_iter().enumerate() {
            assert!(s.insert(id, i as u64));
        }
        // Numbers past the set are checked by sorting; the first repeat in file order.
        assert!(s.insert(1 << 30, 100));
        assert!(s.insert(1 << 31, 110));
        assert!(s.insert(1 << 31, 120));
        assert!(s.insert(1 << 30, 130));
        assert_eq!(s.others(), 4);
        assert_eq!(s.first_other_repeat(), Some((1 << 31, 120)));
        assert!(s.order(8).is_none());
        // Cleared for the next reference: nothing is a repeat.
        s.clear(37451);
        assert!(s.insert(0, 1) && s.insert(1 << 30, 2));
        assert_eq!(s.first_other_repeat(), None);
    }
}
