//! fqzcomp quality values (CRAMcodecs section 5, CRAM 3.1's `fqzcomp_qual` method, htscodecs'
//! fqzcomp_qual format 5): one range coder stream of qualities, each coded by an adaptive
//! model chosen by a 16-bit context built from the previous qualities, the position in the
//! read, the number of changes so far and a per-read selector, as parameter blocks say. Reads
//! may repeat the previous one (dedup) and may have been stored reversed.

use super::bytes::Bytes;
use super::range::{Contexts, Model, RangeDecoder};

/// The only format version CRAM 3.1 uses.
const VERSION: u8 = 5;

// Global flags.
const MULTI_PARAM: u8 = 1;
const HAVE_STAB: u8 = 2;
const DO_REV: u8 = 4;

// Parameter block flags.
const DO_DEDUP: u8 = 2;
const DO_LEN: u8 = 4;
const DO_SEL: u8 = 8;
const HAVE_QMAP: u8 = 16;
const HAVE_PTAB: u8 = 32;
const HAVE_DTAB: u8 = 64;
const HAVE_QTAB: u8 = 128;

/// Contexts are 16 bits.
const CONTEXTS: usize = 1 << 16;

/// One parameter block: how contexts are made and which per-read fields are coded.
struct Param {
    context: u32,
    flags: u8,
    max_sym: usize,
    qmask: u32,
    qshift: u32,
    qloc: u32,
    sloc: u32,
    qmap: [u8; 256],
    qtab: Vec<u32>,
    /// Already shifted to their place in the context.
    ptab: Vec<u32>,
    dtab: Vec<u32>,
}

impl Param {
    fn read(b: &[u8]) -> Result<(Param, usize), String> {
        if b.len() < 7 {
            return Err("fqzcomp parameter block truncated".to_string());
        }
        let flags = b[2];
        let max_sym = usize::from(b[3]);
        let (qbits, qshift) = (b[4] >> 4, u32::from(b[4] & 15));
        let (qloc, sloc) = (u32::from(b[5] >> 4), u32::from(b[5] & 15));
        let (ploc, dloc) = (u32::from(b[6] >> 4), u32::from(b[6] & 15));
        let mut at = 7;
        // Symbols past the map are never coded; htscodecs fills them with INT_MAX, a byte 0xff.
        let mut qmap = [0xffu8; 256];
        if flags & HAVE_QMAP != 0 {
            let m = b
                .get(at..at + max_sym)
                .ok_or("fqzcomp quality map truncated")?;
            qmap[..max_sym].copy_from_slice(m);
            at += max_sym;
        } else {
            for (i, q) in qmap.iter_mut().enumerate() {
                *q = i as u8;
            }
        }
        let mut table = |present: bool, size: usize, identity: bool| {
            if present {
                let (t, used) = read_array(&b[at..], size)?;
                at += used;
                Ok::<_, String>(t)
            } else if identity {
                Ok((0..size as u32).collect())
            } else {
                Ok(vec![0; size])
            }
        };
        // Without quality bits the quality table never reaches a context.
        let qtab = table(qbits > 0 && flags & HAVE_QTAB != 0, 256, true)?;
        let ptab = table(flags & HAVE_PTAB != 0, 1024, false)?;
        let dtab = table(flags & HAVE_DTAB != 0, 256, false)?;
        let p = Param {
            context: u32::from(u16::from_le_bytes([b[0], b[1]])),
            flags,
            max_sym,
            qmask: (1u32 << qbits) - 1,
            qshift,
            qloc,
            sloc,
            qmap,
            qtab,
            ptab: ptab.iter().map(|v| v << ploc).collect(),
            dtab: dtab.iter().map(|v| v << dloc).collect(),
        };
        Ok((p, at))
    }
}

/// A table stored as run lengths of 0, 1, 2, ... (255 continuing a run), those run lengths
/// themselves run-length coded (a value repeated is followed by a count of more copies).
/// Returns the table and the bytes used, as htscodecs' read_array reads it.
fn read_array(b: &[u8], size: usize) -> Result<(Vec<u32>, usize), String> {
    const MAX_RUNS: usize = 1024;
    let err = || "fqzcomp table malformed".to_string();
    let size = size.min(MAX_RUNS);
    let mut runs: Vec<u8> = Vec::with_capacity(MAX_RUNS);
    let (mut i, mut z, mut last) = (0usize, 0usize, None);
    while z < size && i < b.len() {
        let run = b[i];
        runs.push(run);
        z += usize::from(run);
        if last == Some(run) {
            i += 1;
            let copies = usize::from(*b.get(i).ok_or_else(err)?);
            z += usize::from(run) * copies;
            for _ in 0..copies {
                if z > size || runs.len() >= MAX_RUNS {
                    break;
                }
                runs.push(run);
            }
        }
        if runs.len() >= MAX_RUNS {
            return Err(err());
        }
        last = Some(run);
        i += 1;
    }
    let mut table = Vec::with_capacity(size);
    let mut r = runs.iter();
    let mut value = 0u32;
    while table.len() < size {
        let mut len = 0usize;
        loop {
            let part = *r.next().ok_or_else(err)?;
            len += usize::from(part);
            if part != 255 {
                break;
            }
            if r.len() == 0 {
                return Err(err());
            }
        }
        let n = len.min(size - table.len());
        table.resize(table.len() + n, value);
        value += 1;
    }
    Ok((table, i))
}

/// The global parameters: the blocks and how a read's selector picks one.
struct Globals {
    flags: u8,
    params: Vec<Param>,
    max_sel: usize,
    stab: Vec<usize>,
    max_sym: usize,
}

impl Globals {
    fn read(b: &[u8]) -> Result<(Globals, usize), String> {
        if b.len() < 10 {
            return Err("fqzcomp parameters truncated".to_string());
        }
        if b[0] != VERSION {
            return Err(format!("fqzcomp format version {}, not {VERSION}", b[0]));
        }
        let flags = b[1];
        let mut at = 2;
        let n = if flags & MULTI_PARAM != 0 {
            at += 1;
            usize::from(b[2])
        } else {
            1
        };
        if n == 0 {
            return Err("fqzcomp with no parameter blocks".to_string());
        }
        let mut max_sel = if n > 1 { n } else { 0 };
        let stab = if flags & HAVE_STAB != 0 {
            max_sel = usize::from(b[at]);
            let (t, used) = read_array(&b[at + 1..], 256)?;
            at += 1 + used;
            t.into_iter().map(|v| v as usize).collect()
        } else {
            (0..256).map(|i| i.min(n - 1)).collect()
        };
        let mut params = Vec::with_capacity(n);
        for _ in 0..n {
            let (p, used) = Param::read(&b[at..])?;
            if p.flags & DO_SEL != 0 && max_sel == 0 {
                return Err("fqzcomp selector without selector values".to_string());
            }
            at += used;
            params.push(p);
        }
        let max_sym = params.iter().map(|p| p.max_sym).max().unwrap_or(0);
        let g = Globals {
            flags,
            params,
            max_sel,
            stab,
            max_sym,
        };
        Ok((g, at))
    }
}

/// The coder's models: qualities per context, read lengths by byte, reversal, selector, dup.
struct Models {
    qual: Contexts,
    len: [Model; 4],
    rev: Model,
    sel: Model,
    dup: Model,
}

/// Decodes an fqzcomp block into `raw_size` quality bytes.
pub fn decode(data: &[u8], raw_size: usize) -> Result<Vec<u8>, String> {
    let mut b = Bytes::new(data);
    let total = b.uint7()?;
    if total > raw_size {
        return Err(format!(
            "fqzcomp size {total} exceeds the block's {raw_size}"
        ));
    }
    let (g, used) = Globals::read(&data[b.position()..])?;
    let mut rc = RangeDecoder::new(&data[b.position() + used..]);
    let mut m = Models {
        qual: Contexts::new(CONTEXTS, g.max_sym + 1),
        len: std::array::from_fn(|_| Model::new(256)),
        rev: Model::new(2),
        sel: Model::new(g.max_sel + 1),
        dup: Model::new(2),
    };
    // Contexts and quality symbols come from the first parameter block whichever one a read
    // selects (the selected block gives the starting context, the fixed length and dedup),
    // exactly as htscodecs codes them.
    let p0 = &g.params[0];
    let mut out = Vec::with_capacity(total);
    // Reads stored reversed: a bit per output byte where a read starts, and one where a
    // reversed read starts, so the bookkeeping stays a fraction of the output.
    let mut starts = vec![0u64; total.div_ceil(64)];
    let mut reversed = starts.clone();
    let mut first_len = true;
    let mut last_len = 0usize;
    while out.len() < total {
        let i = out.len();
        let s = if p0.flags & DO_SEL != 0 {
            usize::from(m.sel.decode(&mut rc)?)
        } else {
            0
        };
        let x = if g.flags & HAVE_STAB != 0 {
            g.stab[s.min(255)]
        } else {
            s
        };
        let pm = g
            .params
            .get(x)
            .ok_or_else(|| format!("fqzcomp selector {s} picks a missing parameter block"))?;
        let mut len = last_len;
        if pm.flags & DO_LEN == 0 || first_len {
            len = 0;
            for (k, model) in m.len.iter_mut().enumerate() {
                len |= usize::from(model.decode(&mut rc)?) << (8 * k);
            }
            first_len = false;
            last_len = len;
        }
        if len == 0 || len > total - i {
            return Err(format!(
                "fqzcomp read of {len} qualities at byte {i} of {total}"
            ));
        }
        starts[i / 64] |= 1 << (i % 64);
        if g.flags & DO_REV != 0 && m.rev.decode(&mut rc)? != 0 {
            reversed[i / 64] |= 1 << (i % 64);
        }
        if pm.flags & DO_DEDUP != 0 && m.dup.decode(&mut rc)? != 0 {
            // The same qualities as the bytes just before, as stored.
            if len > i {
                return Err(format!("fqzcomp duplicate of {len} bytes at byte {i}"));
            }
            out.extend_from_within(i - len..i);
            continue;
        }
        let mut ctx = pm.context;
        let (mut qctx, mut delta, mut prevq) = (0u32, 0u32, 0u16);
        for p in (1..=len).rev() {
            let q = m.qual.decode(ctx as usize, &mut rc)?;
            qctx = (qctx << p0.qshift).wrapping_add(p0.qtab[usize::from(q)]);
            ctx = ((qctx & p0.qmask) << p0.qloc)
                .wrapping_add(p0.ptab[p.min(1023)])
                .wrapping_add(p0.dtab[(delta as usize).min(255)])
                .wrapping_add((s as u32) << p0.sloc)
                & (CONTEXTS as u32 - 1);
            delta += u32::from(prevq != q);
            prevq = q;
            out.push(p0.qmap[usize::from(q)]);
        }
    }
    unreverse(&mut out, &starts, &reversed);
    Ok(out)
}

/// Reverses each read flagged as stored reversed, in place.
fn unreverse(out: &mut [u8], starts: &[u64], reversed: &[u64]) {
    let bit = |v: &[u64], i: usize| v[i / 64] >> (i % 64) & 1 != 0;
    let mut i = 0;
    while i < out.len() {
        let mut end = i + 1;
        while end < out.len() && !bit(starts, end) {
            end += 1;
        }
        if bit(reversed, i) {
            out[i..end].reverse();
        }
        i = end;
    }
}

#[cfg(test)]
mod tests {
    use super::{decode, read_array};

    #[test]
    fn tables_as_htscodecs_stores_them() {
        // Runs 3 x 0, 4 x 1, 0 x 2, 1 x 3, then the rest (248) of 4.
        let (t, used) = read_array(&[3, 4, 0, 1, 248], 256).unwrap();
        assert_eq!(used, 5);
        assert_eq!(&t[..9], &[0, 0, 0, 1, 1, 1, 1, 3, 4]);
        assert!(t[9..].iter().all(|&v| v == 4));
        // A repeated run is followed by its count of further copies: 64 x 4 runs of 4.
        let (t, used) = read_array(&[4, 4, 62], 256).unwrap();
        assert_eq!(used, 3);
        assert_eq!(t[..8], [0, 0, 0, 0, 1, 1, 1, 1]);
        assert_eq!(t[255], 63);
        // Runs that never reach the size are an error.
        assert!(read_array(&[3, 4], 256).is_err());
        assert!(read_array(&[255], 256).is_err());
    }

    #[test]
    fn hostile_streams_are_errors() {
        // Size past the block's; wrong version; truncated parameters.
        assert!(decode(&[0x84, 0, 5, 0], 10).is_err());
        assert!(decode(&[4, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], 4).is_err());
        let good = [4u8, 5, 0, 0, 0, 0, 3, 0x10, 0, 0];
        for cut in 0..good.len() {
            assert!(decode(&good[..cut], 4).is_err(), "cut {cut}");
        }
    }
}
