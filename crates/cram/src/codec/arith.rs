//! The adaptive arithmetic coder (CRAMcodecs section 4, CRAM 3.1's `arith` method, htscodecs'
//! arith_dynamic): order-0 or order-1 adaptive models over a range coder, optionally with
//! run lengths coded by their own models, under the same transforms as rANS Nx16 (striping,
//! bit packing, stored bytes) plus bzip2 in place of the entropy coder.

use std::io::Read;

use super::bytes::Bytes;
use super::range::{Contexts, Model, RangeDecoder};
use super::transform::{
    interleave, stripe_len, unpack, CAT, NO_SIZE, PACK, RLE, STRIPE, STRIPE_DEPTH,
};

const ORDER: u8 = 0x03;
/// bzip2 in place of the arithmetic coder.
const EXT: u8 = 0x04;

/// Run lengths are coded in pieces of 0..=3, a 3 saying another piece follows.
const RUN_SYMBOLS: usize = 4;
/// Run-length contexts: the literal, then 256 for the second piece, 257 for the rest.
const RUN_CONTEXTS: usize = 258;

/// Decodes a whole arithmetic-coded stream into `raw_size` bytes.
pub fn decode(data: &[u8], raw_size: usize) -> Result<Vec<u8>, String> {
    let out = stream(data, raw_size, 0)?;
    if out.len() != raw_size {
        return Err(format!(
            "arith stream decodes to {} bytes, the block declares {raw_size}",
            out.len()
        ));
    }
    Ok(out)
}

/// One stream, bounded by `expected` (the caller's size, and its size when NO_SIZE is set);
/// `depth` counts the stripes around it.
fn stream(data: &[u8], expected: usize, depth: u32) -> Result<Vec<u8>, String> {
    let mut b = Bytes::new(data);
    let flags = b.next()?;
    if flags & STRIPE != 0 {
        if depth >= STRIPE_DEPTH {
            return Err(format!("arith stripes nested deeper than {STRIPE_DEPTH}"));
        }
        return stripe(data, b, expected, depth + 1);
    }
    let size = if flags & NO_SIZE != 0 {
        expected
    } else {
        b.uint7()?
    };
    if size > expected {
        return Err(format!("arith size {size} exceeds the {expected} expected"));
    }
    // Bit packing: the symbols, then the size of the packed bytes the coder makes.
    let mut len = size;
    let mut pack = None;
    if flags & PACK != 0 {
        let n = match b.next()? {
            0 => 256,
            n => usize::from(n),
        };
        // More than 16 symbols are not packed at all: the bytes pass through.
        let symbols = if n <= 16 {
            b.take(n)?.to_vec()
        } else {
            Vec::new()
        };
        len = b.uint7()?;
        if len > size {
            return Err(format!("arith packed size {len} exceeds {size}"));
        }
        pack = Some(symbols);
    }
    let rest = b.take(data.len() - b.position())?;
    let out = if rest.is_empty() {
        Vec::new()
    } else if flags & CAT != 0 {
        rest.get(..len)
            .ok_or_else(|| format!("arith stored bytes: {len} wanted, {} held", rest.len()))?
            .to_vec()
    } else if flags & EXT != 0 {
        bzip2(rest, len)?
    } else {
        let rle = flags & RLE != 0;
        // Orders 2 and 3 are decoded as order 0, as htscodecs does.
        match (flags & ORDER == 1, rle) {
            (false, false) => order0(rest, len)?,
            (true, false) => order1(rest, len)?,
            (order1, true) => runs(rest, len, order1)?,
        }
    };
    match pack {
        None => Ok(out),
        Some(symbols) if symbols.is_empty() => Ok(out),
        Some(symbols) if symbols.len() == 1 => Ok(vec![symbols[0]; size]),
        Some(symbols) => unpack(&out, &symbols, size),
    }
}

/// Striped data: the size, the number of streams and their stored lengths, then each stream.
fn stripe(data: &[u8], mut b: Bytes<'_>, expected: usize, depth: u32) -> Result<Vec<u8>, String> {
    let size = b.uint7()?;
    if size > expected {
        return Err(format!("arith stripe size {size} exceeds {expected}"));
    }
    let n = usize::from(b.next()?);
    if n == 0 {
        return Err("arith stripe of 0 streams".to_string());
    }
    let lens = (0..n).map(|_| b.uint7()).collect::<Result<Vec<_>, _>>()?;
    let mut at = b.position();
    let end = lens.iter().try_fold(at, |a, &l| {
        if l == 0 {
            return None;
        }
        a.checked_add(l).filter(|&e| e <= data.len())
    });
    let end = end.ok_or("arith stripe lengths do not fit the stream")?;
    let mut parts = Vec::with_capacity(n);
    for (j, l) in lens.iter().enumerate() {
        let want = stripe_len(size, n, j);
        // Each stream may run on past its stated length, up to the last one's end.
        let part = stream(&data[at..end], want, depth)?;
        if part.len() != want {
            return Err(format!(
                "arith stripe {j}: {} bytes, {want} expected",
                part.len()
            ));
        }
        parts.push(part);
        at += l;
    }
    Ok(interleave(&parts, size))
}

fn bzip2(data: &[u8], len: usize) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(len);
    bzip2::read::BzDecoder::new(data)
        .take(len as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| format!("arith bzip2 stream: {e}"))?;
    if out.len() > len {
        return Err(format!("arith bzip2 stream holds more than {len} bytes"));
    }
    Ok(out)
}

/// The number of symbols each model starts with: the stream's first byte, 0 meaning 256.
fn alphabet(data: &[u8]) -> Result<(usize, RangeDecoder<'_>), String> {
    let (&m, rest) = data.split_first().ok_or("arith stream is empty")?;
    let m = if m == 0 { 256 } else { usize::from(m) };
    Ok((m, RangeDecoder::new(rest)))
}

fn order0(data: &[u8], n: usize) -> Result<Vec<u8>, String> {
    let (m, mut rc) = alphabet(data)?;
    let mut model = Model::new(m);
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(model.decode(&mut rc)? as u8);
    }
    Ok(out)
}

fn order1(data: &[u8], n: usize) -> Result<Vec<u8>, String> {
    let (m, mut rc) = alphabet(data)?;
    let mut models = Contexts::new(256, m);
    let mut out = Vec::with_capacity(n);
    let mut last = 0u8;
    for _ in 0..n {
        last = models.decode(usize::from(last), &mut rc)? as u8;
        out.push(last);
    }
    Ok(out)
}

/// Literals (order 0 or 1 on the previous literal) each followed by its run length.
fn runs(data: &[u8], n: usize, order1: bool) -> Result<Vec<u8>, String> {
    let (m, mut rc) = alphabet(data)?;
    let mut literals = Contexts::new(256, m);
    let mut run_models = Contexts::new(RUN_CONTEXTS, RUN_SYMBOLS);
    let mut out = Vec::with_capacity(n);
    let mut last = 0u8;
    while out.len() < n {
        let ctx = if order1 { usize::from(last) } else { 0 };
        last = literals.decode(ctx, &mut rc)? as u8;
        out.push(last);
        let mut run = 0usize;
        let mut rctx = usize::from(last);
        loop {
            let r = usize::from(run_models.decode(rctx, &mut rc)?);
            rctx = if rctx == usize::from(last) {
                256
            } else {
                (rctx + 1).min(RUN_CONTEXTS - 1)
            };
            run += r;
            if r != RUN_SYMBOLS - 1 || run >= n {
                break;
            }
        }
        // A run past the end is cut short, as htscodecs cuts it.
        let copies = run.min(n - out.len());
        out.resize(out.len() + copies, last);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::decode;

    #[test]
    fn stripes_and_hostile_streams() {
        // (Stored and packed streams: transform.rs tests both coders.)
        // Stripe of 2 stored streams (no size): "ace" and "bd" interleave to "abcde".
        let s = [0x08, 5, 2, 4, 3, 0x30, b'a', b'c', b'e', 0x30, b'b', b'd'];
        assert_eq!(decode(&s, 5).unwrap(), b"abcde");
        // Truncated anywhere: an error, never a panic.
        for cut in 0..s.len() {
            assert!(decode(&s[..cut], 5).is_err(), "cut {cut}");
        }
        // Stripes of one stream inside each other: a few levels decode, more are refused.
        let nested = |depth: usize| {
            let mut s = vec![0x30, b'a', b'b', b'c'];
            for _ in 0..depth {
                s = [vec![0x08, 3, 1, s.len() as u8], s].concat();
            }
            s
        };
        assert_eq!(decode(&nested(2), 3).unwrap(), b"abc");
        assert!(decode(&nested(3), 3).is_err());
    }

    #[test]
    fn order0_of_one_symbol_and_runs_of_it() {
        // Order 0 over a one-symbol alphabet: five zeros with no coder bytes read.
        assert_eq!(decode(&[0x00, 5, 1], 5).unwrap(), [0; 5]);
        // The range coder's bytes all zero: each model's first entry every time, so with
        // runs the literal 0 with run piece 0: ten literals.
        let mut s = vec![0x40, 10, 0];
        s.extend([0u8; 16]);
        assert_eq!(decode(&s, 10).unwrap(), [0; 10]);
    }
}
