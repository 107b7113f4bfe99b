//! rANS 4x8 (CRAMcodecs section 2, CRAM 3.0's `rANS` method): four interleaved rANS states
//! with 8-bit renormalisation and 12-bit frequencies, order 0 or order 1.

/// Frequencies sum to at most 1 << 12.
const TOTAL: u32 = 1 << 12;
/// A state below this takes another byte.
const LOWER: u32 = 1 << 23;

use super::bytes::Bytes;
use super::slots::{advance, Slots, UNFILLED};

/// Reads a run-length coded symbol list with a frequency for each symbol into a slot table.
fn read_table(b: &mut Bytes<'_>) -> Result<Slots, String> {
    let mut t = Slots::new(12);
    let mut listed = [false; 256];
    let mut sym = usize::from(b.next()?);
    let mut run = 0u8;
    loop {
        let mut f = u32::from(b.next()?);
        if f >= 128 {
            f = ((f & 0x7f) << 8) | u32::from(b.next()?);
        }
        // htscodecs lists each symbol once; a second listing would leave the first one's
        // slots pointing at a frequency they do not belong to.
        if std::mem::replace(&mut listed[sym], true) {
            return Err("rANS frequency table lists a symbol twice".to_string());
        }
        if !t.push(sym as u8, f) {
            return Err(format!("rANS frequencies sum past {TOTAL}"));
        }
        sym = next_symbol(b, sym, &mut run)?;
        if sym == 0 {
            return Ok(t);
        }
    }
}

/// Decodes one symbol from `state` and renormalises it from `b`.
#[inline(always)]
fn step(t: &Slots, state: &mut u32, b: &mut Bytes<'_>) -> Result<u8, String> {
    let Some((s, mut x)) = t.step(*state) else {
        return Err(format!(
            "rANS state {} outside the frequency table",
            *state & (TOTAL - 1)
        ));
    };
    while x < LOWER {
        x = (x << 8) | u32::from(b.next()?);
    }
    *state = x;
    Ok(s)
}

/// The symbol after `sym` in a run-length coded list (0 ends the list): a symbol followed by
/// its successor starts a run whose length is the byte after.
fn next_symbol(b: &mut Bytes<'_>, sym: usize, run: &mut u8) -> Result<usize, String> {
    if *run == 0 && b.peek().map(usize::from) == Some(sym + 1) {
        let s = usize::from(b.next()?);
        *run = b.next()?;
        Ok(s)
    } else if *run > 0 {
        *run -= 1;
        if sym == 255 {
            return Err("rANS symbol run goes past 255".to_string());
        }
        Ok(sym + 1)
    } else {
        Ok(usize::from(b.next()?))
    }
}

/// Decodes a whole rANS 4x8 stream (its 9-byte header included) of `raw_size` bytes.
pub fn decode(data: &[u8], raw_size: usize) -> Result<Vec<u8>, String> {
    let mut b = Bytes::new(data);
    let order = b.next()?;
    let stored = b.u32_le()? as usize;
    let declared = b.u32_le()? as usize;
    if stored != data.len().saturating_sub(9) {
        return Err(format!(
            "rANS stream says {stored} bytes follow its header, the block holds {}",
            data.len().saturating_sub(9)
        ));
    }
    if declared != raw_size {
        return Err(format!(
            "rANS stream decodes to {declared} bytes, the block declares {raw_size}"
        ));
    }
    match order {
        0 => order0(&mut b, raw_size),
        1 => order1(&mut b, raw_size),
        o => Err(format!("rANS order {o} (0 or 1 expected)")),
    }
}

fn states(b: &mut Bytes<'_>) -> Result<[u32; 4], String> {
    Ok([b.u32_le()?, b.u32_le()?, b.u32_le()?, b.u32_le()?])
}

/// One step of the unchecked loops: the symbol of state `x` by the 12-bit tables, `x`
/// renormalised from `data` at `p`, the table entry's mark ORed into `used`. The caller makes
/// sure `data` holds two bytes from `p` and that `x` is at or above LOWER: the step then needs
/// at most those two bytes and leaves `x` at or above LOWER again (a step leaves at least
/// `x >> 12 >= 1 << 11`, two bytes make that at least `1 << 27`), even from an unfilled slot.
#[inline(always)]
fn fast_step(
    (sym, fb): (&[u8; 4096], &[u32; 4096]),
    x: &mut u32,
    data: &[u8],
    p: &mut usize,
    used: &mut u32,
) -> u8 {
    let m = (*x & (TOTAL - 1)) as usize;
    let e = fb[m];
    *used |= e;
    let mut y = advance(e, *x, 12);
    if y < LOWER {
        y = (y << 8) | u32::from(data[*p]);
        *p += 1;
        if y < LOWER {
            y = (y << 8) | u32::from(data[*p]);
            *p += 1;
        }
    }
    *x = y;
    sym[m]
}

fn order0(b: &mut Bytes<'_>, n: usize) -> Result<Vec<u8>, String> {
    let t = read_table(b)?;
    let mut r = states(b)?;
    let mut out = vec![0u8; n];
    let tables = t.arrays_4096().ok_or("rANS table of the wrong size")?;
    // The four states decode in turn with every table entry's mark ORed into `used`, tested
    // once at the end: an unfilled slot is as much an error. Each state takes at most two
    // bytes a step, so the input is checked once for a run of quads that many bytes cover.
    let data = b.rest();
    let (mut p, mut used, mut done) = (0usize, 0u32, 0usize);
    let quads = n / 4;
    if r.iter().all(|&x| x >= LOWER) {
        let [mut x0, mut x1, mut x2, mut x3] = r;
        while done < quads {
            let run = ((data.len() - p) / 8).min(quads - done);
            if run == 0 {
                break;
            }
            for q in out[4 * done..4 * (done + run)].chunks_exact_mut(4) {
                q[0] = fast_step(tables, &mut x0, data, &mut p, &mut used);
                q[1] = fast_step(tables, &mut x1, data, &mut p, &mut used);
                q[2] = fast_step(tables, &mut x2, data, &mut p, &mut used);
                q[3] = fast_step(tables, &mut x3, data, &mut p, &mut used);
            }
            done += run;
        }
        r = [x0, x1, x2, x3];
    }
    if used & UNFILLED != 0 {
        return Err("rANS state outside the frequency table".to_string());
    }
    b.skip(p)?;
    // The last bytes: the checked way.
    for q in out[4 * done..].chunks_mut(4) {
        for (o, state) in q.iter_mut().zip(r.iter_mut()) {
            *o = step(&t, state, b)?;
        }
    }
    Ok(out)
}

/// Order 1's tables: one a context (the previous symbol), read from the stream; contexts
/// never listed have none.
struct Contexts {
    /// Table number of each context; 0 is an empty table (every slot unfilled), so that a
    /// loop indexing by context needs no test for a missing one.
    of: [u16; 256],
    tables: Vec<Slots>,
}

impl Contexts {
    fn read(b: &mut Bytes<'_>) -> Result<Contexts, String> {
        let mut c = Contexts {
            of: [0; 256],
            tables: vec![Slots::new(12)],
        };
        let mut ctx = usize::from(b.next()?);
        let mut run = 0u8;
        loop {
            c.of[ctx] = c.tables.len() as u16;
            c.tables.push(read_table(b)?);
            ctx = next_symbol(b, ctx, &mut run)?;
            if ctx == 0 {
                return Ok(c);
            }
        }
    }

    /// The table of context `c`, for the checked way.
    fn table(&self, c: u8) -> Result<&Slots, String> {
        match self.of[usize::from(c)] {
            0 => Err(format!("rANS order-1 context {c} has no table")),
            k => Ok(&self.tables[usize::from(k)]),
        }
    }
}

fn order1(b: &mut Bytes<'_>, n: usize) -> Result<Vec<u8>, String> {
    let contexts = Contexts::read(b)?;
    let arrays = contexts
        .tables
        .iter()
        .map(Slots::arrays_4096)
        .collect::<Option<Vec<_>>>()
        .ok_or("rANS table of the wrong size")?;
    let mut r = states(b)?;
    let mut out = vec![0u8; n];
    // Each state decodes one quarter of the output; the last also decodes the remainder.
    let quarter = n / 4;
    let mut last = [0u8; 4];
    {
        let (q0, rest) = out.split_at_mut(quarter);
        let (q1, rest) = rest.split_at_mut(quarter);
        let (q2, q3) = rest.split_at_mut(quarter);
        let mut qs = [q0, q1, q2, &mut q3[..quarter]];
        // As order 0 does: while every state is at or above LOWER and the input holds two
        // bytes a state, no step needs a check but the renormalising one; table entries'
        // marks (an unfilled slot, or a context with no table) are tested once at the end.
        let data = b.rest();
        let (mut p, mut used, mut i) = (0usize, 0u32, 0usize);
        if r.iter().all(|&x| x >= LOWER) {
            while i < quarter {
                let run = ((data.len() - p) / 8).min(quarter - i);
                if run == 0 {
                    break;
                }
                for i in i..i + run {
                    for (j, q) in qs.iter_mut().enumerate() {
                        let c = usize::from(contexts.of[usize::from(last[j])]);
                        let s = fast_step(arrays[c], &mut r[j], data, &mut p, &mut used);
                        q[i] = s;
                        last[j] = s;
                    }
                }
                i += run;
            }
        }
        if used & UNFILLED != 0 {
            return Err("rANS state outside the frequency table".to_string());
        }
        b.skip(p)?;
        // The last bytes: the checked way.
        for i in i..quarter {
            for (j, q) in qs.iter_mut().enumerate() {
                let s = step(contexts.table(last[j])?, &mut r[j], b)?;
                q[i] = s;
                last[j] = s;
            }
        }
    }
    for o in &mut out[4 * quarter..] {
        let s = step(contexts.table(last[3])?, &mut r[3], b)?;
        *o = s;
        last[3] = s;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::decode;

    #[test]
    fn hostile_headers_are_errors() {
        assert!(decode(&[], 0).is_err());
        // Order 2 does not exist.
        assert!(decode(&[2, 0, 0, 0, 0, 1, 0, 0, 0], 1).is_err());
        // The stored size disagrees with the block.
        assert!(decode(&[0, 9, 0, 0, 0, 1, 0, 0, 0], 1).is_err());
        // Frequencies summing past 4096: symbol 'a' with 0x7fff.
        let mut s = vec![0, 0, 0, 0, 0, 1, 0, 0, 0, b'a', 0xff, 0xff, 0];
        s[1] = (s.len() - 9) as u8;
        assert!(decode(&s, 1).unwrap_err().contains("sum past"));
    }
}
