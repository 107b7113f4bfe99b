//! The name tokeniser (CRAMcodecs section 6, CRAM 3.1's `tok3` method, htscodecs'
//! tokenise_name3): each read name split into tokens (text, single characters, numbers with or
//! without leading zeros), each token coded against the same token of an earlier name (match,
//! small numeric delta) or stored, with one stream per token position and type, each stream
//! compressed by rANS Nx16 or the arithmetic coder. Decoded names end in a NUL each.

use super::bytes::Bytes;
use super::{arith, rans_nx16};

/// Token positions per name (position 0 says how the name relates to an earlier one).
const MAX_TOKENS: usize = 128;

// Token types, which are also the stream numbers within a position.
const ALPHA: u8 = 1;
const CHAR: u8 = 2;
const DIGITS0: u8 = 3;
const DZLEN: u8 = 4;
const DUP: u8 = 5;
const DIGITS: u8 = 7;
const DDELTA: u8 = 8;
const DDELTA0: u8 = 9;
const MATCH: u8 = 10;
const NOP: u8 = 11;
const END: u8 = 12;

/// The streams may hold more bytes than the names they make (a number's stream holds 4 bytes
/// for one digit), but not more than this many times the names' size: a bound that refuses
/// hostile sizes before they are decoded.
const STREAM_FACTOR: usize = 8;

/// Decodes a tokenised block into `raw_size` bytes of NUL-terminated names.
pub fn decode(data: &[u8], raw_size: usize) -> Result<Vec<u8>, String> {
    let mut b = Bytes::new(data);
    b.u32_le()?; // the names' size, which the block already gives
    let nreads = b.u32_le()? as usize;
    if nreads == 0 || nreads > raw_size {
        return Err(format!(
            "name tokeniser: {nreads} names cannot fill {raw_size} bytes"
        ));
    }
    let use_arith = b.next()? != 0;
    let mut s = Streams::read(&mut b, data, nreads, use_arith, raw_size)?;
    let mut names = Names {
        out: Vec::with_capacity(raw_size),
        names: Vec::new(),
        tokens: Vec::new(),
        limit: raw_size,
    };
    while names.next(&mut s, nreads)? {}
    if names.out.len() != raw_size {
        return Err(format!(
            "name tokeniser makes {} bytes of names, the block declares {raw_size}",
            names.out.len()
        ));
    }
    Ok(names.out)
}

/// Where a stream's bytes come from.
#[derive(Clone, Copy)]
enum Source {
    /// One of the decoded buffers.
    Stored(usize),
    /// A type stream left out: its first byte, then MATCH for the rest of `len`.
    Implicit(u8, usize),
}

#[derive(Clone, Copy)]
struct Stream {
    source: Source,
    pos: usize,
}

/// Every stream of every token position, indexed `position << 4 | type`.
struct Streams {
    buffers: Vec<Vec<u8>>,
    streams: Vec<Option<Stream>>,
    positions: usize,
}

impl Streams {
    fn read(
        b: &mut Bytes<'_>,
        data: &[u8],
        nreads: usize,
        use_arith: bool,
        raw_size: usize,
    ) -> Result<Streams, String> {
        let mut s = Streams {
            buffers: Vec::new(),
            streams: vec![None; MAX_TOKENS << 4],
            positions: 1,
        };
        let mut budget = raw_size.saturating_mul(STREAM_FACTOR).saturating_add(1024);
        let mut pos: Option<usize> = None;
        while b.position() < data.len() {
            let ttype = b.next()?;
            let dup = if ttype & 64 != 0 {
                let t = b.take(2)?;
                Some(usize::from(t[0]) << 4 | usize::from(t[1]))
            } else {
                None
            };
            if ttype & 128 != 0 {
                let p = pos.map_or(0, |p| p + 1);
                if p >= MAX_TOKENS {
                    return Err(format!("name tokeniser: more than {MAX_TOKENS} tokens"));
                }
                pos = Some(p);
                s.positions = p + 1;
                s.streams[p << 4..(p + 1) << 4].fill(None);
                if ttype & 15 != 0 {
                    // Only the first name's type is stored; the rest match it.
                    s.streams[p << 4] = Some(Stream {
                        source: Source::Implicit(ttype & 15, nreads),
                        pos: 0,
                    });
                }
            }
            let p = pos.ok_or("name tokeniser: a stream before its token")?;
            let i = p << 4 | usize::from(ttype & 15);
            let source = match dup {
                Some(j) => {
                    if j >= i {
                        return Err(format!("name tokeniser: stream {i} copies stream {j}"));
                    }
                    s.streams
                        .get(j)
                        .copied()
                        .flatten()
                        .ok_or_else(|| format!("name tokeniser: stream {i} copies absent {j}"))?
                        .source
                }
                None => {
                    let buf = stream(b, use_arith, &mut budget)?;
                    s.buffers.push(buf);
                    Source::Stored(s.buffers.len() - 1)
                }
            };
            s.streams[i] = Some(Stream { source, pos: 0 });
        }
        Ok(s)
    }

    /// The next byte of stream `i`, or None once it (or the stream) is missing.
    fn byte(&mut self, i: usize) -> Option<u8> {
        let st = self.streams.get_mut(i)?.as_mut()?;
        let b = match st.source {
            Source::Stored(k) => *self.buffers[k].get(st.pos)?,
            Source::Implicit(first, len) if st.pos < len => {
                if st.pos == 0 {
                    first
                } else {
                    MATCH
                }
            }
            Source::Implicit(..) => return None,
        };
        st.pos += 1;
        Some(b)
    }

    fn need(&mut self, i: usize) -> Result<u8, String> {
        self.byte(i)
            .ok_or_else(|| format!("name tokeniser: stream {i} ends early"))
    }

    fn u32(&mut self, i: usize) -> Result<u32, String> {
        let mut v = 0u32;
        for k in 0..4 {
            v |= u32::from(self.need(i)?) << (8 * k);
        }
        Ok(v)
    }
}

/// One compressed stream: its stored length, then a rANS Nx16 or arithmetic coder stream
/// whose size follows its flags byte.
fn stream(b: &mut Bytes<'_>, use_arith: bool, budget: &mut usize) -> Result<Vec<u8>, String> {
    let clen = b.uint7()?;
    let body = b.take(clen)?;
    let size = Bytes::new(body.get(1..).unwrap_or(&[])).uint7()?;
    if size > *budget {
        return Err(format!(
            "name tokeniser: a stream of {size} bytes, more than the names can use"
        ));
    }
    *budget -= size;
    if use_arith {
        arith::decode(body, size)
    } else {
        rans_nx16::decode(body, size)
    }
}

/// A token as a later name may refer to it.
#[derive(Clone, Copy, Default)]
struct Token {
    kind: u8,
    /// The character, the number, or an ALPHA's length.
    int: u32,
    /// A DIGITS0 width or an ALPHA's offset in its name.
    str: u32,
}

/// One decoded name: where its text starts and where its tokens are (shared by duplicates).
/// Offsets fit 32 bits as a block's raw size does; a name has at most 128 tokens.
#[derive(Clone, Copy)]
struct Name {
    start: u32,
    len: u32,
    tokens: u32,
    ntok: u8,
}

struct Names {
    out: Vec<u8>,
    names: Vec<Name>,
    tokens: Vec<Token>,
    limit: usize,
}

impl Names {
    fn push(&mut self, bytes: &[u8]) -> Result<(), String> {
        if bytes.len() > self.limit - self.out.len() {
            return Err(format!(
                "name tokeniser: names exceed the block's {} bytes",
                self.limit
            ));
        }
        self.out.extend_from_slice(bytes);
        Ok(())
    }

    /// Token `ntok` of name `p`, when that name has one there.
    fn earlier(&self, p: Option<Name>, ntok: usize) -> Result<Token, String> {
        p.filter(|p| ntok < usize::from(p.ntok))
            .map(|p| self.tokens[p.tokens as usize + ntok])
            .ok_or_else(|| format!("name tokeniser: token {ntok} refers to a missing token"))
    }

    /// Decodes one name; false once the first position's types run out.
    fn next(&mut self, s: &mut Streams, nreads: usize) -> Result<bool, String> {
        let t0 = s.byte(0);
        // htscodecs counts the call that finds the end as a name too.
        let cnum = self.names.len();
        if cnum > nreads {
            return Err(format!("name tokeniser: more than the {nreads} names"));
        }
        let Some(t0) = t0.filter(|&t| usize::from(t) < s.positions * 16) else {
            return Ok(false);
        };
        let dist = s.u32(usize::from(t0))? as usize;
        if dist > cnum {
            return Err(format!("name tokeniser: name {cnum} refers {dist} back"));
        }
        let prev = self.names.get(cnum - dist).copied();
        if t0 == DUP {
            self.duplicate(prev)?;
            return Ok(true);
        }
        // Every token samtools writes makes at least one byte of a name, so more tokens than
        // the block's bytes (and one more position) can only come from a hostile stream; this
        // bounds the tokens kept for later names to refer to.
        if self.tokens.len() > self.limit + MAX_TOKENS {
            return Err("name tokeniser: more tokens than the names' bytes".to_string());
        }
        let start = self.out.len();
        let first = self.tokens.len() as u32;
        // Position 0 holds no token of the name itself.
        self.tokens.push(Token::default());
        for ntok in 1..s.positions.min(MAX_TOKENS) {
            let at = (self.out.len() - start) as u32;
            match self.token(s, ntok, prev, at)? {
                Some(tok) => self.tokens.push(tok),
                // The end, written or left out (a missing or unknown type ends the name).
                None => {
                    self.push(&[0])?;
                    self.tokens.push(tok(END, 0, 0));
                    self.names.push(Name {
                        start: start as u32,
                        len: (self.out.len() - start) as u32,
                        tokens: first,
                        ntok: ntok as u8,
                    });
                    return Ok(true);
                }
            }
        }
        Err(format!("name tokeniser: name {cnum} has no end"))
    }

    /// A name the same as name `prev`.
    fn duplicate(&mut self, prev: Option<Name>) -> Result<(), String> {
        let p = prev.ok_or("name tokeniser: a name duplicates itself")?;
        let start = self.out.len();
        let from = p.start as usize;
        let text = self.out[from..from + p.len as usize].to_vec();
        self.push(&text)?;
        self.names.push(Name {
            start: start as u32,
            ..p
        });
        Ok(())
    }

    /// Token `ntok` of the name being decoded, its text written at `at` within the name;
    /// `None` at the name's end. `prev` is the name its deltas and matches refer to.
    fn token(
        &mut self,
        s: &mut Streams,
        ntok: usize,
        prev: Option<Name>,
        at: u32,
    ) -> Result<Option<Token>, String> {
        let id = ntok << 4;
        let t = match s.byte(id) {
            Some(CHAR) => {
                let c = s.need(id | usize::from(CHAR))?;
                self.push(&[c])?;
                tok(CHAR, u32::from(c), 0)
            }
            Some(ALPHA) => {
                let mut n = 0u32;
                loop {
                    match s.need(id | usize::from(ALPHA))? {
                        0 => break,
                        c => self.push(&[c])?,
                    }
                    n += 1;
                }
                tok(ALPHA, n, at)
            }
            Some(DIGITS0) => {
                let width = s.need(id | usize::from(DZLEN))?;
                let v = s.u32(id | usize::from(DIGITS0))?;
                self.push(&fixed(v, u32::from(width))?)?;
                tok(DIGITS0, v, u32::from(width))
            }
            Some(DDELTA0) => {
                let e = self.earlier(prev, ntok)?;
                let v = e
                    .int
                    .wrapping_add(u32::from(s.need(id | usize::from(DDELTA0))?));
                self.push(&fixed(v, e.str)?)?;
                tok(DIGITS0, v, e.str)
            }
            Some(DIGITS) => {
                let v = s.u32(id | usize::from(DIGITS))?;
                self.push(&decimal(v))?;
                tok(DIGITS, v, 0)
            }
            Some(DDELTA) => {
                let e = self.earlier(prev, ntok)?;
                let v = e
                    .int
                    .wrapping_add(u32::from(s.need(id | usize::from(DDELTA))?));
                self.push(&decimal(v))?;
                tok(DIGITS, v, 0)
            }
            Some(NOP) => tok(NOP, 0, 0),
            Some(MATCH) => self.matched(prev, ntok, at)?,
            _ => return Ok(None),
        };
        Ok(Some(t))
    }

    /// A token the same as name `prev`'s at position `ntok`, its text written at `at`.
    fn matched(&mut self, prev: Option<Name>, ntok: usize, at: u32) -> Result<Token, String> {
        let e = self.earlier(prev, ntok)?;
        match e.kind {
            CHAR => self.push(&[e.int as u8])?,
            ALPHA => {
                let p = prev.ok_or("name tokeniser: no earlier name")?;
                let from = p.start as usize + e.str as usize;
                let text = self
                    .out
                    .get(from..from + e.int as usize)
                    .ok_or("name tokeniser: a token outside its name")?
                    .to_vec();
                self.push(&text)?;
            }
            DIGITS => self.push(&decimal(e.int))?,
            DIGITS0 => self.push(&fixed(e.int, e.str)?)?,
            k => return Err(format!("name tokeniser: match of a type {k} token")),
        }
        Ok(Token {
            str: if e.kind == ALPHA { at } else { e.str },
            ..e
        })
    }
}

fn tok(kind: u8, int: u32, str: u32) -> Token {
    Token { kind, int, str }
}

/// A number without leading zeros; zero is written as nothing, as htscodecs writes it.
fn decimal(v: u32) -> Vec<u8> {
    if v == 0 {
        Vec::new()
    } else {
        v.to_string().into_bytes()
    }
}

/// A number zero-padded to `width` digits (at most 9). A number too wide for its width keeps
/// the encoder's arithmetic: its leading "digit" is the quotient, whatever character it makes.
fn fixed(v: u32, width: u32) -> Result<Vec<u8>, String> {
    if width > 9 {
        return Err(format!("name tokeniser: a number {width} digits wide"));
    }
    let mut out = Vec::with_capacity(width as usize);
    let mut rest = v;
    for k in (0..width).rev() {
        let p = 10u32.pow(k);
        out.push((rest / p).wrapping_add(u32::from(b'0')) as u8);
        rest %= p;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::{decimal, decode, fixed};

    #[test]
    fn numbers_as_htscodecs_writes_them() {
        assert_eq!(decimal(0), b"");
        assert_eq!(decimal(1050), b"1050");
        assert_eq!(fixed(7, 3).unwrap(), b"007");
        assert_eq!(fixed(0, 0).unwrap(), b"");
        assert_eq!(fixed(12, 1).unwrap(), b"<"); // '0' + 12
        assert!(fixed(1, 10).is_err());
        // The quotient wraps as the encoder's unsigned arithmetic does, never overflows.
        assert_eq!(
            fixed(u32::MAX, 1).unwrap(),
            [(u32::MAX.wrapping_add(48)) as u8]
        );
    }

    /// One stored (CAT) rANS Nx16 stream: clen, flags 0x20, size, bytes.
    fn stored(bytes: &[u8]) -> Vec<u8> {
        let mut s = vec![bytes.len() as u8 + 2, 0x20, bytes.len() as u8];
        s.extend_from_slice(bytes);
        s
    }

    #[test]
    fn two_names_one_matching_the_other() {
        // "ab1\0" then "ab2\0": position 0 types DIFF, DIFF with distances 0 and 1;
        // position 1 ALPHA then MATCH; position 2 DIGITS 1 then DDELTA +1; position 3 END.
        let mut s = vec![8, 0, 0, 0, 2, 0, 0, 0, 0];
        s.push(0x80); // position 0, type stream
        s.extend(stored(&[6, 6]));
        s.push(6); // its DIFF stream
        s.extend(stored(&[0, 0, 0, 0, 1, 0, 0, 0]));
        s.push(0x80);
        s.extend(stored(&[1, 10]));
        s.push(1);
        s.extend(stored(b"ab\0"));
        s.push(0x80);
        s.extend(stored(&[7, 8]));
        s.push(7);
        s.extend(stored(&[1, 0, 0, 0]));
        s.push(8);
        s.extend(stored(&[1]));
        // Position 3: END for both.
        s.push(0x80);
        s.extend(stored(&[12, 12]));
        assert_eq!(decode(&s, 8).unwrap(), b"ab1\0ab2\0");
        // Any truncation is an error.
        for cut in 0..s.len() {
            assert!(decode(&s[..cut], 8).is_err(), "cut {cut}");
        }
    }
}
