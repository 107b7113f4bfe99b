//! rANS 4x8 (CRAMcodecs section 2, CRAM 3.0's `rANS` method): four interleaved rANS states
//! with 8-bit renormalisation and 12-bit frequencies, order 0 or order 1.

use super::bytes::Bytes;
use super::table12::{fast_step, Table12, LOWER, SLOTS};

/// Reads a run-length coded symbol list with a frequency for each symbol into a table.
fn read_table(b: &mut Bytes<'_>) -> Result<Table12, String> {
    let mut t = Table12::empty();
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
            return Err(format!("rANS frequencies sum past {SLOTS}"));
        }
        sym = next_symbol(b, sym, &mut run)?;
        if sym == 0 {
            return Ok(t);
        }
    }
}

/// Decodes one symbol from `state` and renormalises it from `b`, every read checked.
fn step(t: &Table12, state: &mut u32, b: &mut Bytes<'_>) -> Result<u8, String> {
    let Some((s, mut x)) = t.step(*state) else {
        return Err(format!(
            "rANS state {} outside the frequency table",
            *state as usize & (SLOTS - 1)
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
    // A damaged stream is decoded again the checked way alone, for its error: the fast loops
    // only know that something went wrong, the checked way says what and where.
    match order {
        0 => order0(&mut b.clone(), raw_size, true).or_else(|_| order0(&mut b, raw_size, false)),
        1 => order1(&mut b.clone(), raw_size, true).or_else(|_| order1(&mut b, raw_size, false)),
        o => Err(format!("rANS order {o} (0 or 1 expected)")),
    }
}

fn states(b: &mut Bytes<'_>) -> Result<[u32; 4], String> {
    Ok([b.u32_le()?, b.u32_le()?, b.u32_le()?, b.u32_le()?])
}

/// The next 8 input bytes from `p`: a quad of steps takes at most that many (two a state),
/// so one check a quad covers its reads. `None` near the end, left to the checked way.
#[inline(always)]
fn window(data: &[u8], p: usize) -> Option<&[u8; 8]> {
    data.get(p..)?.first_chunk::<8>()
}

const OUTSIDE: &str = "rANS state outside the frequency table";

/// Order 0; the unchecked loop first if `fast`.
fn order0(b: &mut Bytes<'_>, n: usize, fast: bool) -> Result<Vec<u8>, String> {
    let t = read_table(b)?;
    let mut r = states(b)?;
    let mut out = vec![0u8; n];
    // Fast only from states at or above LOWER (see `fast_step`): a hostile stream's others
    // go the checked way.
    let data = b.rest();
    let (mut p, mut done) = (0, 0);
    if fast && r.iter().all(|&x| x >= LOWER) {
        let worst;
        (p, done, worst) = quads0(&t.slots, &mut r, data, &mut out);
        if done > 0 && worst >= t.total {
            return Err(OUTSIDE.to_string());
        }
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

/// Order 0's unchecked loop: the four states decode in turn, a quad's input read from one
/// 8-byte window. Returns the input bytes and the quads decoded, and the largest slot used
/// (one past the table's end is an error, tested once at the end).
// Not inlined: alone, the loop has the registers for every value it keeps.
#[inline(never)]
fn quads0(
    slots: &[u32; SLOTS],
    r: &mut [u32; 4],
    data: &[u8],
    out: &mut [u8],
) -> (usize, usize, u32) {
    // The input left as a slice, not an index into `data`: fewer values live in the loop,
    // which then keeps all of them in registers.
    let (mut rest, mut worst, mut done) = (data, 0u32, 0usize);
    let [mut x0, mut x1, mut x2, mut x3] = *r;
    for q in out.chunks_exact_mut(4) {
        let Some(w) = rest.first_chunk::<8>() else {
            break;
        };
        let mut k = 0;
        worst = worst.max(x0 & 0xfff);
        q[0] = fast_step(slots, &mut x0, w, &mut k);
        worst = worst.max(x1 & 0xfff);
        q[1] = fast_step(slots, &mut x1, w, &mut k);
        worst = worst.max(x2 & 0xfff);
        q[2] = fast_step(slots, &mut x2, w, &mut k);
        worst = worst.max(x3 & 0xfff);
        q[3] = fast_step(slots, &mut x3, w, &mut k);
        rest = &rest[k..];
        done += 1;
    }
    *r = [x0, x1, x2, x3];
    (data.len() - rest.len(), done, worst)
}

/// Order 1's tables: one a context (the previous symbol), read from the stream; contexts
/// never listed have an empty one, which any state reaching it finds outside.
struct Contexts {
    /// Table number of each context; 0 is the empty table.
    of: [u16; 256],
    tables: Vec<Table12>,
}

impl Contexts {
    fn read(b: &mut Bytes<'_>) -> Result<Contexts, String> {
        let mut c = Contexts {
            of: [0; 256],
            tables: vec![Table12::empty()],
        };
        let mut ctx = usize::from(b.next()?);
        let mut run = 0u8;
        loop {
            // A context listed twice would make a table for every listing: a few bytes each,
            // 16 KiB of memory each, without bound (and past 65,535 the numbers would wrap).
            // htscodecs' encoder lists each context once.
            if c.of[ctx] != 0 {
                return Err(format!("rANS order-1 table lists context {ctx} twice"));
            }
            c.of[ctx] = c.tables.len() as u16;
            c.tables.push(read_table(b)?);
            ctx = next_symbol(b, ctx, &mut run)?;
            if ctx == 0 {
                return Ok(c);
            }
        }
    }

    /// [`fast_step`] by context `c`'s table, setting `bad` if the slot is not filled (every
    /// slot of a context with no table).
    #[inline(always)]
    fn fast_step(&self, c: u8, x: &mut u32, w: &[u8; 8], k: &mut usize, bad: &mut bool) -> u8 {
        let t = self.table(c);
        *bad |= *x & 0xfff >= t.total;
        fast_step(&t.slots, x, w, k)
    }

    /// The table of context `c`.
    #[inline(always)]
    fn table(&self, c: u8) -> &Table12 {
        // `of` holds indexes of `tables` only: the lookup cannot miss.
        &self.tables[usize::from(self.of[usize::from(c)])]
    }
}

/// Order 1's checked step: a context with no table is named.
fn step1(contexts: &Contexts, last: u8, state: &mut u32, b: &mut Bytes<'_>) -> Result<u8, String> {
    if contexts.of[usize::from(last)] == 0 {
        return Err(format!("rANS order-1 context {last} has no table"));
    }
    step(contexts.table(last), state, b)
}

/// Order 1; the unchecked loop first if `fast`.
fn order1(b: &mut Bytes<'_>, n: usize, fast: bool) -> Result<Vec<u8>, String> {
    let contexts = Contexts::read(b)?;
    let mut r = states(b)?;
    let mut out = vec![0u8; n];
    // Each state decodes one quarter of the output; the last also decodes the remainder.
    let quarter = n / 4;
    let mut last = [0u8; 4];
    {
        let (q0, rest) = out.split_at_mut(quarter);
        let (q1, rest) = rest.split_at_mut(quarter);
        let (q2, q3) = rest.split_at_mut(quarter);
        let q3 = &mut q3[..quarter];
        // As order 0 does; a context with no table has the empty one, so reaching it sets
        // `bad` like any unfilled slot.
        let data = b.rest();
        let (mut p, mut bad, mut i) = (0usize, false, 0usize);
        if fast && r.iter().all(|&x| x >= LOWER) {
            let [mut x0, mut x1, mut x2, mut x3] = r;
            let [mut l0, mut l1, mut l2, mut l3] = last;
            while i < quarter {
                let Some(w) = window(data, p) else {
                    break;
                };
                let mut k = 0;
                l0 = contexts.fast_step(l0, &mut x0, w, &mut k, &mut bad);
                l1 = contexts.fast_step(l1, &mut x1, w, &mut k, &mut bad);
                l2 = contexts.fast_step(l2, &mut x2, w, &mut k, &mut bad);
                l3 = contexts.fast_step(l3, &mut x3, w, &mut k, &mut bad);
                (q0[i], q1[i], q2[i], q3[i]) = (l0, l1, l2, l3);
                p += k;
                i += 1;
            }
            r = [x0, x1, x2, x3];
            last = [l0, l1, l2, l3];
        }
        if bad {
            return Err(OUTSIDE.to_string());
        }
        b.skip(p)?;
        // The last bytes: the checked way.
        let mut qs = [q0, q1, q2, q3];
        for i in i..quarter {
            for (j, q) in qs.iter_mut().enumerate() {
                let s = step1(&contexts, last[j], &mut r[j], b)?;
                q[i] = s;
                last[j] = s;
            }
        }
    }
    for o in &mut out[4 * quarter..] {
        let s = step1(&contexts, last[3], &mut r[3], b)?;
        *o = s;
        last[3] = s;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::bytes::Bytes;
    use super::{decode, read_table, states, step, step1, Contexts};

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
        // Order 1 listing context 1 twice ('A' with frequency 1 each time): every listing
        // would cost a 16 KiB table for four bytes.
        let body = [1, b'A', 1, 0, 1, b'A', 1, 0, 0, 0, 0, 0x80, 0];
        let err = decode(&stream(1, 4, &body), 4).unwrap_err();
        assert!(err.contains("context 1 twice"), "{err}");
    }

    /// Order 0 the checked way alone, to hold the fast loop to.
    fn slow0(data: &[u8], n: usize) -> Result<Vec<u8>, String> {
        let mut b = Bytes::new(data);
        b.skip(9)?;
        let t = read_table(&mut b)?;
        let mut r = states(&mut b)?;
        let mut out = vec![0; n];
        for q in out.chunks_mut(4) {
            for (o, x) in q.iter_mut().zip(r.iter_mut()) {
                *o = step(&t, x, &mut b)?;
            }
        }
        Ok(out)
    }

    /// Order 1 the checked way alone.
    fn slow1(data: &[u8], n: usize) -> Result<Vec<u8>, String> {
        let mut b = Bytes::new(data);
        b.skip(9)?;
        let c = Contexts::read(&mut b)?;
        let mut r = states(&mut b)?;
        let mut out = vec![0; n];
        let (quarter, mut last) = (n / 4, [0u8; 4]);
        for i in 0..quarter {
            for j in 0..4 {
                last[j] = step1(&c, last[j], &mut r[j], &mut b)?;
                out[j * quarter + i] = last[j];
            }
        }
        for o in &mut out[4 * quarter..] {
            last[3] = step1(&c, last[3], &mut r[3], &mut b)?;
            *o = last[3];
        }
        Ok(out)
    }

    /// A stream: `order`, its sizes, then `body`.
    fn stream(order: u8, n: usize, body: &[u8]) -> Vec<u8> {
        let mut s = vec![order];
        s.extend((body.len() as u32).to_le_bytes());
        s.extend((n as u32).to_le_bytes());
        s.extend(body);
        s
    }

    /// Pseudo-random bytes (a fixed LCG: the same cases every run).
    fn noise(seed: u32, len: usize) -> Vec<u8> {
        let mut x = seed;
        (0..len)
            .map(|_| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                (x >> 16) as u8
            })
            .collect()
    }

    /// Symbols 'a', 'c', 'e' (not consecutive: that would start a run) with frequencies 4000, 80 and `c` (4096 - 4080 or fewer, so that
    /// slots past the end and the two-byte renormalisation both happen).
    fn table0(c: u8) -> Vec<u8> {
        vec![b'a', 0x8f, 0xa0, b'c', 80, b'e', c, 0]
    }

    #[test]
    fn the_fast_loops_agree_with_the_checked_way_on_any_input() {
        let (mut cases, mut long_ok) = (0, [0, 0]);
        for seed in 0..300u32 {
            for n in [0, 1, 3, 4, 7, 8, 9, 31, 64, 257] {
                // Input from none to plenty, so that it runs out mid-quad, and states drawn
                // from the noise, some below LOWER.
                let len = (seed as usize * 7) % (3 * n + 40);
                let tail = noise(seed, 16 + len);
                let mut b0 = table0(if seed % 3 == 0 { 16 } else { 15 });
                let at = b0.len();
                b0.extend(&tail);
                if seed % 4 == 0 {
                    // Every state well above LOWER: the fast loop runs.
                    for i in 0..4 {
                        b0[at + 4 * i + 3] |= 0x40;
                    }
                }
                let s = stream(0, n, &b0);
                let got = decode(&s, n);
                assert_eq!(got, slow0(&s, n), "order 0, seed {seed}, n {n}");
                long_ok[0] += usize::from(n >= 64 && got.is_ok());
                // Order 1: context 0 and 'a' have tables; 'c' and 'e' none.
                let mut b1 = vec![0];
                b1.extend(table0(15));
                b1.push(b'a');
                b1.extend(table0(16));
                b1.push(0);
                b1.extend(&tail);
                let s = stream(1, n, &b1);
                let got = decode(&s, n);
                assert_eq!(got, slow1(&s, n), "order 1, seed {seed}, n {n}");
                long_ok[1] += usize::from(n >= 64 && got.is_ok());
                cases += 1;
            }
        }
        assert_eq!(cases, 3000);
        // Long outputs decoded whole, the fast loops' work, not only errors.
        eprintln!("long outputs decoded: {long_ok:?}");
        assert!(long_ok[0] > 20 && long_ok[1] > 20, "{long_ok:?}");
    }
}
