//! rANS Nx16 (CRAMcodecs section 3, CRAM 3.1's `rANSNx16` method): 4 or 32 interleaved states
//! with 16-bit renormalisation, order 0 or 1, and the transforms a stream may stack on top
//! (striping, bit packing, run lengths, stored bytes).

use super::bytes::Bytes;
use super::slots::Slots;
use super::transform::{
    interleave, stripe_len, unpack, CAT, NO_SIZE, PACK, RLE, STRIPE, STRIPE_DEPTH,
};

/// Flags of the stream's first byte besides the ones the arithmetic coder shares.
const ORDER1: u8 = 0x01;
const X32: u8 = 0x04;

/// A state below this takes another 16 bits.
const LOWER: u32 = 1 << 15;
/// Order-0 frequencies sum to 1 << 12.
const ORDER0_BITS: u32 = 12;

/// Decodes a whole rANS Nx16 stream into `raw_size` bytes.
pub fn decode(data: &[u8], raw_size: usize) -> Result<Vec<u8>, String> {
    let mut b = Bytes::new(data);
    let out = stream(&mut b, raw_size, 0)?;
    if out.len() != raw_size {
        return Err(format!(
            "rANS Nx16 stream decodes to {} bytes, the block declares {raw_size}",
            out.len()
        ));
    }
    Ok(out)
}

/// One stream: flags, size (unless the caller knows it), transforms, then the entropy coder.
/// `expected` bounds every size the stream declares; `depth` counts the stripes around it.
fn stream(b: &mut Bytes<'_>, expected: usize, depth: u32) -> Result<Vec<u8>, String> {
    let flags = b.next()?;
    let size = if flags & NO_SIZE != 0 {
        expected
    } else {
        b.uint7()?
    };
    if size > expected {
        return Err(format!(
            "rANS Nx16 size {size} exceeds the {expected} expected"
        ));
    }
    if flags & STRIPE != 0 {
        if depth >= STRIPE_DEPTH {
            return Err(format!(
                "rANS Nx16 stripes nested deeper than {STRIPE_DEPTH}"
            ));
        }
        return stripe(b, size, depth + 1);
    }
    let ways = if flags & X32 != 0 { 32 } else { 4 };
    let mut len = size;
    let pack = if flags & PACK != 0 {
        let n = usize::from(b.next()?);
        if n == 0 || n > 16 {
            return Err(format!("rANS Nx16 packing of {n} symbols"));
        }
        let symbols = b.take(n)?.to_vec();
        let packed = b.uint7()?;
        if packed > len {
            return Err(format!("rANS Nx16 packed size {packed} exceeds {len}"));
        }
        let unpacked = len;
        len = packed;
        Some((symbols, unpacked))
    } else {
        None
    };
    let rle = if flags & RLE != 0 {
        let meta_len = b.uint7()?;
        let literals = b.uint7()?;
        if literals > len {
            return Err(format!(
                "rANS Nx16 run-length literals {literals} exceed {len}"
            ));
        }
        let meta = rle_meta(b, meta_len, len, ways)?;
        let expanded = len;
        len = literals;
        Some((meta, expanded))
    } else {
        None
    };
    let mut out = if flags & CAT != 0 {
        b.take(len)?.to_vec()
    } else if len == 0 {
        Vec::new()
    } else {
        if flags & ORDER1 != 0 {
            order1(b, len, ways)?
        } else {
            order0(b, len, ways)?
        }
    };
    if let Some((meta, expanded)) = rle {
        out = unrun(&out, &meta, expanded)?;
    }
    if let Some((symbols, unpacked)) = pack {
        out = unpack(&out, &symbols, unpacked)?;
    }
    Ok(out)
}

/// Striped data: `n` sub-streams, the j-th holding bytes j, j+n, j+2n, ...
fn stripe(b: &mut Bytes<'_>, size: usize, depth: u32) -> Result<Vec<u8>, String> {
    let n = usize::from(b.next()?);
    if n == 0 {
        return Err("rANS Nx16 stripe of 0 streams".to_string());
    }
    for _ in 0..n {
        b.uint7()?; // compressed lengths: the streams are read in order, so not needed
    }
    let mut parts = Vec::with_capacity(n);
    for j in 0..n {
        let len = stripe_len(size, n, j);
        let sub = stream(b, len, depth)?;
        if sub.len() != len {
            return Err(format!(
                "rANS Nx16 stripe {j}: {} bytes, {len} expected",
                sub.len()
            ));
        }
        parts.push(sub);
    }
    Ok(interleave(&parts, size))
}

/// Run-length metadata: stored (odd length) or order-0 coded with the stream's own number of
/// states (htscodecs' `rans_dec_func(do_simd, 0)`: 32 in a 32-way stream); `bound` limits its
/// size.
fn rle_meta(
    b: &mut Bytes<'_>,
    meta_len: usize,
    bound: usize,
    ways: usize,
) -> Result<Vec<u8>, String> {
    let raw = meta_len / 2;
    if raw > 5 * bound + 257 {
        return Err(format!("rANS Nx16 run-length metadata of {raw} bytes"));
    }
    if meta_len & 1 != 0 {
        return Ok(b.take(raw)?.to_vec());
    }
    let stored = b.uint7()?;
    let mut inner = Bytes::new(b.take(stored)?);
    order0(&mut inner, raw, ways)
}

fn unrun(literals: &[u8], meta: &[u8], expanded: usize) -> Result<Vec<u8>, String> {
    let mut m = Bytes::new(meta);
    let n = match m.next()? {
        0 => 256,
        n => usize::from(n),
    };
    let mut runs = [false; 256];
    for &s in m.take(n)? {
        runs[usize::from(s)] = true;
    }
    let mut out = Vec::with_capacity(expanded);
    for &s in literals {
        let copies = if runs[usize::from(s)] {
            m.uint7()? + 1
        } else {
            1
        };
        if copies > expanded - out.len() {
            return Err("rANS Nx16 runs exceed the declared size".to_string());
        }
        out.resize(out.len() + copies, s);
    }
    if out.len() != expanded {
        return Err(format!(
            "rANS Nx16 runs make {} bytes, {expanded} declared",
            out.len()
        ));
    }
    Ok(out)
}

/// One distribution scaled to `1 << bits`.
struct Table {
    slots: Slots,
}

impl Table {
    fn new(freq: [u32; 256], bits: u32) -> Result<Table, String> {
        let total: u32 = freq.iter().sum();
        let full = 1u32 << bits;
        let mut t = total;
        let mut shift = 0;
        while t > 0 && t < full {
            t *= 2;
            shift += 1;
        }
        if total != 0 && t != full {
            return Err(format!(
                "rANS Nx16 frequencies sum to {total}, not a power of two"
            ));
        }
        let mut slots = Slots::new(bits);
        for (s, &f) in freq.iter().enumerate() {
            if !slots.push(s as u8, f << shift) {
                return Err(format!("rANS Nx16 frequencies sum past {full}"));
            }
        }
        Ok(Table { slots })
    }

    #[inline(always)]
    fn step(&self, state: &mut u32, b: &mut Bytes<'_>) -> Result<u8, String> {
        let Some((s, mut x)) = self.slots.step(*state) else {
            return Err("rANS Nx16 state outside its frequency table".to_string());
        };
        if x < LOWER {
            let lo = u32::from(b.next()?);
            let hi = u32::from(b.next()?);
            x = (x << 16) | (hi << 8) | lo;
        }
        *state = x;
        Ok(s)
    }
}

/// The symbols present, run-length coded: a symbol followed by its successor starts a run.
fn alphabet(b: &mut Bytes<'_>) -> Result<[bool; 256], String> {
    let mut present = [false; 256];
    let mut sym = usize::from(b.next()?);
    let mut last = sym;
    let mut run = 0u8;
    loop {
        present[sym] = true;
        if run > 0 {
            run -= 1;
            sym += 1;
            if sym > 255 {
                return Err("rANS Nx16 alphabet run goes past 255".to_string());
            }
        } else {
            sym = usize::from(b.next()?);
            if sym == last + 1 {
                run = b.next()?;
            }
        }
        last = sym;
        if sym == 0 {
            return Ok(present);
        }
    }
}

fn states(b: &mut Bytes<'_>, ways: usize) -> Result<Vec<u32>, String> {
    (0..ways).map(|_| b.u32_le()).collect()
}

fn order0(b: &mut Bytes<'_>, n: usize, ways: usize) -> Result<Vec<u8>, String> {
    let present = alphabet(b)?;
    let mut freq = [0u32; 256];
    for s in (0..256).filter(|&s| present[s]) {
        let mut f = u32::from(b.next()?);
        if f >= 0x80 {
            f = ((f & 0x7f) << 7) | u32::from(b.next()? & 0x7f);
        }
        freq[s] = f;
    }
    let t = Table::new(freq, ORDER0_BITS)?;
    let mut r = states(b, ways)?;
    let mut out = vec![0u8; n];
    let mut rounds = out.chunks_exact_mut(ways);
    for round in &mut rounds {
        for (o, state) in round.iter_mut().zip(r.iter_mut()) {
            *o = t.step(state, b)?;
        }
    }
    for (o, state) in rounds.into_remainder().iter_mut().zip(r.iter_mut()) {
        *o = t.step(state, b)?;
    }
    Ok(out)
}

fn order1(b: &mut Bytes<'_>, n: usize, ways: usize) -> Result<Vec<u8>, String> {
    let first = b.next()?;
    let bits = u32::from(first >> 4);
    if bits == 0 || bits > 15 {
        return Err(format!("rANS Nx16 order-1 frequency bits {bits}"));
    }
    let tables = if first & 1 != 0 {
        let raw = b.uint7()?;
        let stored = b.uint7()?;
        if raw > 1 << 20 {
            return Err(format!("rANS Nx16 frequency table of {raw} bytes"));
        }
        let mut inner = Bytes::new(b.take(stored)?);
        let table = order0(&mut inner, raw, 4)?;
        order1_tables(&mut Bytes::new(&table), bits)?
    } else {
        order1_tables(b, bits)?
    };
    let mut r = states(b, ways)?;
    let mut out = vec![0u8; n];
    let part = n / ways;
    let mut ctx = vec![0usize; ways];
    let mut one = |j: usize, at: usize, r: &mut [u32], b: &mut Bytes<'_>| {
        let t = tables[ctx[j]]
            .as_ref()
            .ok_or_else(|| format!("rANS Nx16 context {} has no table", ctx[j]))?;
        let s = t.step(&mut r[j], b)?;
        out[at] = s;
        ctx[j] = usize::from(s);
        Ok::<(), String>(())
    };
    for i in 0..part {
        for j in 0..ways {
            one(j, i + j * part, &mut r, b)?;
        }
    }
    for at in ways * part..n {
        one(ways - 1, at, &mut r, b)?;
    }
    Ok(out)
}

fn order1_tables(b: &mut Bytes<'_>, bits: u32) -> Result<Vec<Option<Table>>, String> {
    let present = alphabet(b)?;
    let mut tables: Vec<Option<Table>> = (0..256).map(|_| None).collect();
    for i in (0..256).filter(|&i| present[i]) {
        let mut freq = [0u32; 256];
        let mut zeros = 0usize;
        for j in (0..256).filter(|&j| present[j]) {
            if zeros > 0 {
                zeros -= 1;
                continue;
            }
            let f = b.uint7()?;
            freq[j] = u32::try_from(f).map_err(|_| "rANS Nx16 frequency too large")?;
            if f > 1 << 16 {
                return Err(format!("rANS Nx16 frequency {f}"));
            }
            if f == 0 {
                // The run of zeros after it is one byte (htscodecs' `decode_freq_d`), not
                // a uint7: a run of 128 or more read as uint7 swallows the next frequency.
                zeros = usize::from(b.next()?);
            }
        }
        tables[i] = Some(Table::new(freq, bits)?);
    }
    Ok(tables)
}

#[cfg(test)]
mod tests {
    use super::{decode, order1_tables, Bytes};

    #[test]
    fn an_order_1_run_of_zeros_is_one_byte() {
        // Symbols 1..=200, each context's table: symbol 1 takes all 4096, then a zero and a
        // run of 198 more: 198 is one byte (0xc6), which as a uint7 would take the next one.
        let mut t = vec![1, 2, 198, 0];
        for _ in 1..=200 {
            t.extend_from_slice(&[0xa0, 0x00, 0x00, 0xc6]);
        }
        let mut b = Bytes::new(&t);
        let tables = order1_tables(&mut b, 12).unwrap();
        assert_eq!(b.rest().len(), 0, "every table read whole");
        assert!(tables[1].is_some() && tables[200].is_some() && tables[201].is_none());
    }

    #[test]
    fn hostile_streams() {
        // (Stored and packed streams: transform.rs tests both coders.)
        // PACK of 17 symbols does not exist.
        assert!(decode(&[0x80, 4, 17], 4).is_err());
        // Truncated anywhere: an error, never a panic.
        let s = [0x40u8, 5, 3, 1];
        for cut in 0..s.len() {
            assert!(decode(&s[..cut], 5).is_err());
        }
    }

    #[test]
    fn stripes_nest_only_a_few_deep() {
        // A stored "abc" (CAT, no size) wrapped in `depth` stripes of one stream each.
        let nested = |depth: usize| {
            let mut s = vec![0x30, b'a', b'b', b'c'];
            for _ in 0..depth {
                s = [vec![0x08, 3, 1, s.len() as u8], s].concat();
            }
            s
        };
        assert_eq!(decode(&nested(1), 3).unwrap(), b"abc");
        assert_eq!(decode(&nested(2), 3).unwrap(), b"abc");
        assert!(decode(&nested(3), 3).is_err());
    }
}
