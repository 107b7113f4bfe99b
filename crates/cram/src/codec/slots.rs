//! rANS Nx16's decoding table: for each slot of the state's low bits, its
//! symbol and, packed in one word, the symbol's frequency and the slot's offset within the
//! symbol's range, so that a step is two loads and a multiply (htscodecs lays its tables out
//! the same way). Built from the frequencies; every slot a step can reach is checked then.

pub(super) struct Slots {
    /// Symbol of each slot.
    sym: Vec<u8>,
    /// `(frequency - 1) << 16 | (slot - cumulative frequency)` of each slot; [`UNFILLED`]
    /// for a slot no symbol has (a state reaching it is an error).
    fb: Vec<u32>,
    bits: u32,
    /// Slots below this are filled.
    total: u32,
}

/// The mark of a slot no symbol has: above any `(frequency - 1) << 16` (frequencies are at
/// most 1 << 15), so that a loop can OR the entries it used and test once.
pub(super) const UNFILLED: u32 = 1 << 31;

impl Slots {
    /// An empty table of `1 << bits` slots (`bits` at most 16).
    pub(super) fn new(bits: u32) -> Slots {
        let n = 1usize << bits;
        Slots {
            sym: vec![0; n],
            fb: vec![UNFILLED; n],
            bits,
            total: 0,
        }
    }

    /// Gives symbol `s` the next `f` slots (`f` at least 1); false when they do not fit.
    pub(super) fn push(&mut self, s: u8, f: u32) -> bool {
        let start = self.total;
        let Some(end) = start.checked_add(f).filter(|&e| e <= 1 << self.bits) else {
            return false;
        };
        if f == 0 {
            return true;
        }
        let (a, b) = (start as usize, end as usize);
        self.sym[a..b].fill(s);
        for (i, e) in self.fb[a..b].iter_mut().enumerate() {
            *e = ((f - 1) << 16) | i as u32;
        }
        self.total = end;
        true
    }

    /// Decodes one symbol from `x`, returning it and the state before renormalisation; `None`
    /// when the state's slot lies outside the table.
    #[inline(always)]
    pub(super) fn step(&self, x: u32) -> Option<(u8, u32)> {
        let m = (x & ((1 << self.bits) - 1)) as usize;
        let (s, e) = (*self.sym.get(m)?, *self.fb.get(m)?);
        if e & UNFILLED != 0 {
            return None;
        }
        Some((s, advance(e, x, self.bits)))
    }
}

/// The state after decoding the symbol of entry `e` from state `x`.
#[inline(always)]
pub(super) fn advance(e: u32, x: u32, bits: u32) -> u32 {
    (((e >> 16) & 0x7fff) + 1)
        .wrapping_mul(x >> bits)
        .wrapping_add(e & 0xffff)
}

#[cfg(test)]
mod tests {
    use super::Slots;

    #[test]
    fn steps_follow_the_frequencies() {
        let mut t = Slots::new(4);
        assert!(t.push(b'a', 3));
        assert!(t.push(b'b', 13));
        assert!(!t.push(b'c', 1), "past 16 slots");
        // Slot 2 is a's last: state 2 + 16 k decodes to a with 3 k + 2.
        assert_eq!(t.step(2 + 16 * 5), Some((b'a', 3 * 5 + 2)));
        // Slot 3 is b's first.
        assert_eq!(t.step(3 + 16 * 5), Some((b'b', 13 * 5)));
        let mut short = Slots::new(4);
        assert!(short.push(b'a', 3));
        assert_eq!(short.step(7), None);
    }
}
