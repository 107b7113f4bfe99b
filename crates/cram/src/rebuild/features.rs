//! The read features applied one by one (htslib's `cram_decode_seq` loop): bases, qualities,
//! CIGAR operations and MD/NM for each kind, then the implicit match to the read's end and the
//! tags written.

use super::{base_index, State, D, H, I, M, N, P, S};
use crate::record::{Feature, FeatureKind};
use crate::Error;

impl State<'_> {
    /// Applies one feature: the bases matched before it, then what it says.
    pub(super) fn feature(&mut self, f: &Feature) -> Result<(), Error> {
        let pos = i64::from(f.position);
        if pos <= 0 {
            return Err(self.bad(format!("feature position {pos} before start of read")));
        }
        if pos > self.seq_pos {
            if pos > self.len + 1 {
                return Err(self.bad(format!("feature position {pos} past the read")));
            }
            let gap = pos - self.seq_pos;
            if self.with_ref {
                self.matched(self.seq_pos, gap, self.ref_pos, false)?;
            }
            self.extend_op(M, gap as u32);
            self.ref_pos += gap;
            self.seq_pos = pos;
        }
        let stored = self.stored;
        match f.kind {
            FeatureKind::SoftClip(bases) => self.soft_clip(pos, stored.bytes(bases))?,
            FeatureKind::Substitution(code) => self.substitution(pos, code)?,
            FeatureKind::Deletion(n) => self.deletion(i64::from(n))?,
            FeatureKind::Insertion(bases) => self.insertion(pos, stored.bytes(bases))?,
            FeatureKind::InsertBase(b) => self.insertion(pos, &[b])?,
            FeatureKind::Bases(bases) => self.bases(pos, stored.bytes(bases))?,
            FeatureKind::Qualities(q) => {
                self.flush_unless(M);
                self.put_qual(pos - 1, stored.bytes(q))?;
                self.cig_op = M;
            }
            FeatureKind::Base { base, quality } => self.base(pos, base, quality)?,
            FeatureKind::Quality(q) => self.put_qual(pos - 1, &[q])?,
            FeatureKind::HardClip(n) => self.extend_op(H, n as u32),
            FeatureKind::Padding(n) => self.extend_op(P, n as u32),
            FeatureKind::RefSkip(n) => {
                self.extend_op(N, n as u32);
                self.ref_pos += i64::from(n);
            }
        }
        Ok(())
    }

    fn soft_clip(&mut self, pos: i64, bases: &[u8]) -> Result<(), Error> {
        if self.cig_len != 0 {
            self.cigar.push((self.cig_len << 4) | self.cig_op);
            self.cig_len = 0;
        }
        self.put_seq(pos - 1, bases)?;
        self.cigar.push(((bases.len() as u32) << 4) | S);
        self.cig_op = S;
        self.seq_pos += bases.len() as i64;
        Ok(())
    }

    /// A base other than the reference's, by its code in the substitution matrix.
    fn substitution(&mut self, pos: i64, code: u8) -> Result<(), Error> {
        self.flush_unless(M);
        let code = usize::from(code & 3);
        if !self.with_ref || self.ref_pos >= self.ref_len {
            if pos - 1 < self.len {
                self.put_seq(pos - 1, &[self.ch.substitution[4][code]])?;
            }
            if self.decode_md || self.decode_nm {
                self.md_number();
                self.md_dist = -1;
                self.nm = self.nm.wrapping_sub(1);
            }
        } else {
            let ref_call = if self.ref_pos < self.ref_end() {
                self.ref_base(self.ref_pos)?
            } else {
                b'N'
            };
            if pos - 1 < self.len {
                let b = self.ch.substitution[base_index(ref_call)][code];
                self.put_seq(pos - 1, &[b])?;
            }
            self.md_char(ref_call);
        }
        self.cig_op = M;
        self.nm = self.nm.wrapping_add(1);
        self.cig_len = self.cig_len.wrapping_add(1);
        self.seq_pos += 1;
        self.ref_pos += 1;
        Ok(())
    }

    fn deletion(&mut self, n: i64) -> Result<(), Error> {
        self.flush_unless(D);
        if self.decode_md || self.decode_nm {
            let (ref_pos, ref_len) = (self.ref_pos, self.ref_len);
            if ref_pos + n > self.ref_end() {
                return Err(self.beyond());
            }
            self.md_number();
            if ref_pos + n <= ref_len {
                if self.decode_md {
                    let run = self.ref_run(ref_pos, n)?;
                    self.md.push(b'^');
                    self.md.extend_from_slice(run);
                    self.md_dist = 0;
                }
                self.nm = self.nm.wrapping_add(n as u32);
            } else {
                let mut dlen = n;
                if ref_len >= ref_pos {
                    if self.decode_md {
                        let run = self.ref_run(ref_pos, ref_len - ref_pos)?;
                        self.md.push(b'^');
                        self.md.extend_from_slice(run);
                        self.md.push(b'0');
                    }
                    dlen = n - (ref_len - ref_pos);
                }
                self.nm = self.nm.wrapping_add((n - dlen) as u32);
                self.md_dist = -1;
            }
        }
        self.cig_op = D;
        self.cig_len = self.cig_len.wrapping_add(n as u32);
        self.ref_pos += n;
        Ok(())
    }

    /// Inserted bases (one or several).
    fn insertion(&mut self, pos: i64, bases: &[u8]) -> Result<(), Error> {
        self.flush_unless(I);
        self.put_seq(pos - 1, bases)?;
        self.cig_op = I;
        self.cig_len = self.cig_len.wrapping_add(bases.len() as u32);
        self.seq_pos += bases.len() as i64;
        self.nm = self.nm.wrapping_add(bases.len() as u32);
        Ok(())
    }

    /// Read bases stored as they are, aligned to the reference.
    fn bases(&mut self, pos: i64, bases: &[u8]) -> Result<(), Error> {
        self.flush_unless(M);
        self.put_seq(pos - 1, bases)?;
        let n = bases.len() as i64;
        if self.decode_md || self.decode_nm {
            self.md_number();
            let mut x = 0;
            while x < n {
                if x > 0 && self.decode_md {
                    self.md.push(b'0');
                }
                if self.ref_pos + x >= self.ref_len || !self.with_ref {
                    self.md_dist = -1;
                    break;
                }
                if self.decode_md {
                    if self.ref_pos + x >= self.ref_end() {
                        return Err(self.beyond());
                    }
                    let b = self.ref_base(self.ref_pos + x)?;
                    self.md.push(b);
                }
                x += 1;
            }
            self.nm = self.nm.wrapping_add(x as u32);
            self.md_dist = 0;
        }
        self.cig_op = M;
        self.cig_len = self.cig_len.wrapping_add(n as u32);
        self.seq_pos += n;
        self.ref_pos += n;
        Ok(())
    }

    /// One read base stored as it is, with its quality.
    fn base(&mut self, pos: i64, base: u8, quality: u8) -> Result<(), Error> {
        self.flush_unless(M);
        self.put_seq(pos - 1, &[base])?;
        if self.decode_md || self.decode_nm {
            self.md_number();
            if self.ref_pos >= self.ref_len || !self.with_ref {
                self.md_dist = -1;
            } else {
                if self.decode_md {
                    if self.ref_pos >= self.ref_end() {
                        return Err(self.beyond());
                    }
                    let b = self.ref_base(self.ref_pos)?;
                    self.md.push(b);
                }
                self.nm = self.nm.wrapping_add(1);
                self.md_dist = 0;
            }
        }
        self.put_qual(pos - 1, &[quality])?;
        self.cig_op = M;
        self.cig_len = self.cig_len.wrapping_add(1);
        self.seq_pos += 1;
        self.ref_pos += 1;
        Ok(())
    }

    /// The bases after the last feature: matched to the reference up to the read's end.
    pub(super) fn read_end(&mut self) -> Result<(), Error> {
        if self.len < self.seq_pos {
            return Ok(());
        }
        let n = self.len - self.seq_pos + 1;
        if self.with_ref {
            let past_end = self.ref_pos + n > self.ref_len;
            self.matched(self.seq_pos, n, self.ref_pos, true)?;
            if !past_end {
                self.ref_pos += n;
            }
        } else if self.r.reference_id >= 0 {
            self.ref_pos += n;
        }
        self.extend_op(M, n as u32);
        Ok(())
    }

    /// The record made: the last CIGAR operation pushed, MD and NM written after its tags.
    pub(super) fn finish(mut self) -> super::Rebuilt {
        if self.decode_md {
            self.md_number();
        }
        if self.cig_len != 0 {
            self.cigar.push((self.cig_len << 4) | self.cig_op);
        }
        if self.decode_md {
            self.md.push(0);
        }
        if self.decode_nm {
            let nm = self.nm;
            self.md.extend_from_slice(b"NM");
            if nm <= 0xff {
                self.md.push(b'C');
                self.md.push(nm as u8);
            } else if nm <= 0xffff {
                self.md.push(b'S');
                self.md.extend_from_slice(&(nm as u16).to_le_bytes());
            } else {
                self.md.push(b'I');
                self.md.extend_from_slice(&nm.to_le_bytes());
            }
        }
        super::Rebuilt {
            seq: self.seq,
            qual: self.qual,
            cigar: self.cigar,
            end: self.ref_pos.max(i64::from(self.r.position)),
            aux: self.md,
        }
    }
}
