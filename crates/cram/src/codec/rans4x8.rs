//! rANS 4x8 (CRAMcodecs section 2, CRAM 3.0's `rANS` method): four interleaved rANS states
//! with 8-bit renormalisation and 12-bit frequencies, order 0 or order 1.

/// Frequencies sum to at most 1 << 12.
const TOTAL: u32 = 1 << 12;
/// A state below this takes another byte.
const LOWER: u32 = 1 << 23;

use super::bytes::Bytes;

/// One symbol distribution: frequencies, their running sums and the slot-to-symbol table.
struct Table {
    freq: [u32; 256],
    cum: [u32; 256],
    slot: Box<[u8; TOTAL as usize]>,
    total: u32,
}

impl Table {
    /// Reads a run-length coded symbol list with a frequency for each symbol.
    fn read(b: &mut Bytes<'_>) -> Result<Table, String> {
        let mut t = Table {
            freq: [0; 256],
            cum: [0; 256],
            slot: Box::new([0; TOTAL as usize]),
            total: 0,
        };
        let mut sym = usize::from(b.next()?);
        let mut run = 0u8;
        loop {
            let mut f = u32::from(b.next()?);
            if f >= 128 {
                f = ((f & 0x7f) << 8) | u32::from(b.next()?);
            }
            let start = t.total;
            t.total += f;
            if t.total > TOTAL {
                return Err(format!("rANS frequencies sum past {TOTAL}"));
            }
            t.freq[sym] = f;
            t.cum[sym] = start;
            t.slot[start as usize..t.total as usize].fill(sym as u8);
            sym = next_symbol(b, sym, &mut run)?;
            if sym == 0 {
                return Ok(t);
            }
        }
    }

    /// Decodes one symbol from `state` and advances it (without renormalising).
    fn step(&self, state: &mut u32) -> Result<u8, String> {
        let m = *state & (TOTAL - 1);
        if m >= self.total {
            return Err(format!("rANS state {m} outside the frequency table"));
        }
        let s = self.slot[m as usize];
        let (f, c) = (self.freq[usize::from(s)], self.cum[usize::from(s)]);
        // A symbol listed twice leaves slots that its final entry does not cover.
        if m < c || m - c >= f {
            return Err("rANS frequency table lists a symbol twice".to_string());
        }
        *state = f * (*state >> 12) + m - c;
        Ok(s)
    }
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

fn renormalise(state: &mut u32, b: &mut Bytes<'_>) -> Result<(), String> {
    while *state < LOWER {
        *state = (*state << 8) | u32::from(b.next()?);
    }
    Ok(())
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

fn order0(b: &mut Bytes<'_>, n: usize) -> Result<Vec<u8>, String> {
    let t = Table::read(b)?;
    let mut r = states(b)?;
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let state = &mut r[i & 3];
        out.push(t.step(state)?);
        renormalise(state, b)?;
    }
    Ok(out)
}

fn order1(b: &mut Bytes<'_>, n: usize) -> Result<Vec<u8>, String> {
    // One table per context (the previous symbol); contexts never seen have none.
    let mut tables: Vec<Option<Table>> = (0..256).map(|_| None).collect();
    let mut ctx = usize::from(b.next()?);
    let mut run = 0u8;
    loop {
        tables[ctx] = Some(Table::read(b)?);
        ctx = next_symbol(b, ctx, &mut run)?;
        if ctx == 0 {
            break;
        }
    }
    let mut r = states(b)?;
    let mut out = vec![0u8; n];
    // Each state decodes one quarter of the output; the last also decodes the remainder.
    let quarter = n / 4;
    let mut last = [0usize; 4];
    let mut one = |j: usize, at: usize, r: &mut [u32; 4], b: &mut Bytes<'_>| {
        let t = tables[last[j]]
            .as_ref()
            .ok_or_else(|| format!("rANS order-1 context {} has no table", last[j]))?;
        let s = t.step(&mut r[j])?;
        renormalise(&mut r[j], b)?;
        out[at] = s;
        last[j] = usize::from(s);
        Ok::<(), String>(())
    };
    for i in 0..quarter {
        for j in 0..4 {
            one(j, i + j * quarter, &mut r, b)?;
        }
    }
    for at in 4 * quarter..n {
        one(3, at, &mut r, b)?;
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
