//! rANS 4x8's decoding table: 4096 slots (12-bit frequencies), each one word holding the
//! slot's symbol, its offset within the symbol's range and the symbol's frequency, so that a
//! step is one load, a multiply and an add (htscodecs packs its tables the same way).
//!
//! Slots are given out from 0 in the order symbols are listed, so the filled ones are exactly
//! those below [`Table12::total`]: a state whose slot is at or past it is an error, which the
//! loops test with one comparison (no mark in the entry, which has no bit to spare).

/// Slots a table has.
pub(super) const SLOTS: usize = 1 << 12;

/// A state below this takes another byte.
pub(super) const LOWER: u32 = 1 << 23;

pub(super) struct Table12 {
    /// `symbol | offset << 8 | (frequency - 1) << 20` of each slot (0 past `total`).
    pub(super) slots: Box<[u32; SLOTS]>,
    /// Slots below this are filled.
    pub(super) total: u32,
}

impl Table12 {
    /// A table with no slot filled (a context never listed: any state reaching it is an error).
    pub(super) fn empty() -> Table12 {
        Table12 {
            slots: Box::new([0; SLOTS]),
            total: 0,
        }
    }

    /// Gives symbol `s` the next `f` slots; false when they do not fit.
    pub(super) fn push(&mut self, s: u8, f: u32) -> bool {
        let start = self.total;
        let Some(end) = start.checked_add(f).filter(|&e| e as usize <= SLOTS) else {
            return false;
        };
        if f == 0 {
            return true;
        }
        let head = u32::from(s) | ((f - 1) << 20);
        for (i, e) in self.slots[start as usize..end as usize]
            .iter_mut()
            .enumerate()
        {
            *e = head | ((i as u32) << 8);
        }
        self.total = end;
        true
    }

    /// The symbol of state `x` and the state after it (before renormalisation); `None` when
    /// the state's slot is not filled.
    #[inline(always)]
    pub(super) fn step(&self, x: u32) -> Option<(u8, u32)> {
        let m = x & (SLOTS as u32 - 1);
        (m < self.total).then(|| {
            let e = self.slots[m as usize];
            (e as u8, advance(e, x))
        })
    }
}

/// The state after decoding the symbol of entry `e` from state `x`: frequency times the
/// state's high bits plus the slot's offset (at most `4096 * (2^20 - 1) + 4095`: no overflow).
#[inline(always)]
pub(super) fn advance(e: u32, x: u32) -> u32 {
    ((e >> 20) + 1)
        .wrapping_mul(x >> 12)
        .wrapping_add((e >> 8) & 0xfff)
}

/// Takes one byte into `y` from `w` at `*k` if `y` is below [`LOWER`], by a conditional move
/// rather than a branch (the byte is read either way: whether a state renormalises follows
/// the data, which a branch predictor cannot learn). The caller makes sure `*k` stays below 8.
#[inline(always)]
pub(super) fn renorm(y: u32, w: &[u8; 8], k: &mut usize) -> u32 {
    let more = (y << 8) | u32::from(w[*k & 7]);
    let take = y < LOWER;
    *k += usize::from(take);
    if take {
        more
    } else {
        y
    }
}

/// One step of the unchecked loops: the symbol of `x` by `t`'s slots, `x` renormalised from
/// `w` at `*k` (at most two bytes). The caller checks the slot (`x`'s low 12 bits) is filled.
/// The caller makes sure `x` is at or above [`LOWER`] and `*k` at most 6: a step then leaves
/// at least `x >> 12 >= 1 << 11` before renormalising and two bytes bring that to at least
/// `1 << 27`, so `x` stays at or above LOWER after each step and each step takes at most two
/// bytes.
#[inline(always)]
pub(super) fn fast_step(slots: &[u32; SLOTS], x: &mut u32, w: &[u8; 8], k: &mut usize) -> u8 {
    let e = slots[(*x as usize) & (SLOTS - 1)];
    let mut y = renorm(advance(e, *x), w, k);
    // A second byte only after a symbol of frequency below 16 (of 4096): rare enough for a
    // branch that is almost never taken.
    if y < LOWER {
        y = (y << 8) | u32::from(w[*k & 7]);
        *k += 1;
    }
    *x = y;
    e as u8
}

#[cfg(test)]
mod tests {
    use super::{renorm, Table12, LOWER};

    #[test]
    fn steps_follow_the_frequencies() {
        let mut t = Table12::empty();
        assert!(t.push(b'a', 3));
        assert!(t.push(b'b', 4093));
        assert!(!t.push(b'c', 1), "past 4096 slots");
        // Slot 2 is a's last: state 2 + 4096 k decodes to a with 3 k + 2.
        assert_eq!(t.step(2 + 4096 * 5), Some((b'a', 3 * 5 + 2)));
        // Slot 3 is b's first.
        assert_eq!(t.step(3 + 4096 * 5), Some((b'b', 4093 * 5)));
        let mut short = Table12::empty();
        assert!(short.push(b'a', 3));
        assert_eq!(short.step(7), None);
        assert_eq!(Table12::empty().step(0), None);
        // A symbol with every slot.
        let mut all = Table12::empty();
        assert!(all.push(7, 4096));
        assert_eq!(all.step(4095 + 4096 * 9), Some((7, 4096 * 9 + 4095)));
    }

    #[test]
    fn renorm_takes_a_byte_only_below_lower() {
        let w = [1, 2, 3, 4, 5, 6, 7, 8];
        let mut k = 0;
        assert_eq!(renorm(LOWER, &w, &mut k), LOWER);
        assert_eq!(k, 0);
        assert_eq!(renorm(LOWER - 1, &w, &mut k), ((LOWER - 1) << 8) | 1);
        assert_eq!(k, 1);
        assert_eq!(renorm(5, &w, &mut k), (5 << 8) | 2);
        assert_eq!(k, 2);
    }
}
