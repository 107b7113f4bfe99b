//! A small deterministic random generator (xorshift64*) for generated test inputs and
//! benchmark data: the same seed gives the same sequence, so a failure can be replayed.

/// xorshift64* with a non-zero state.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed` (0 is made non-zero).
    pub fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// One of `items` (not empty).
    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn same_seed_same_sequence() {
        let mut a = super::Rng::new(9);
        let mut b = super::Rng::new(9);
        let va: Vec<u64> = (0..5).map(|_| a.next_u64()).collect();
        let vb: Vec<u64> = (0..5).map(|_| b.next_u64()).collect();
        assert_eq!(va, vb);
        assert_ne!(va[0], va[1]);
        assert!(a.below(3) < 3);
    }
}
