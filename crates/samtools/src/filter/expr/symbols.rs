//! Record fields and tags by name, as htslib 1.16's `bam_sym_lookup` gives them to expressions.

use super::eval::Val;
use super::parser::Symbol;
use super::{EvalError, Evaluator};
use bam::cigar::{Op, SOFT_CLIP};
use bam::sam::push_i64;
use region::RefId;

/// Operation code of `H` (hard clip).
const HARD_CLIP: u8 = 5;

impl Evaluator<'_> {
    pub(crate) fn symbol(&mut self, sym: Symbol, res: &mut Val) -> Result<(), EvalError> {
        let r = self.record;
        res.is_str = false;
        let number = match sym {
            Symbol::Cigar => {
                let mut text = Vec::with_capacity(4 * r.cigar().len() + 1);
                for op in r.cigar().iter() {
                    push_i64(&mut text, i64::from(op.len()));
                    text.push(op.letter());
                }
                if text.is_empty() {
                    text.push(b'*');
                }
                string(res, &text);
                return Ok(());
            }
            // samtools' expressions see the fields as stored: -1 and all.
            Symbol::Endpos => r.stored_end_pos() as f64,
            Symbol::Flag => f64::from(r.flags().bits()),
            Symbol::FlagBit(bit) => f64::from(r.flags().bits() & bit),
            Symbol::Library => {
                let lib = self.context.library_of(r).unwrap_or(&[]);
                string(res, lib);
                return Ok(());
            }
            Symbol::Mapq => f64::from(r.mapq()),
            Symbol::Mpos => f64::from(r.stored_coordinates().mate_pos) + 1.0,
            Symbol::Mrname => {
                ref_name(self, r.mate_ref_id(), res);
                return Ok(());
            }
            Symbol::Mrefid => f64::from(r.stored_coordinates().mate_ref_id),
            Symbol::Ncigar => r.cigar().len() as f64,
            Symbol::Pos => f64::from(r.stored_coordinates().pos) + 1.0,
            Symbol::Qlen => r.cigar().query_len() as f64,
            Symbol::Qname => {
                string(res, r.name());
                return Ok(());
            }
            Symbol::Qual => {
                res.put_bytes(r.qual());
                res.is_str = true;
                return Ok(());
            }
            Symbol::Rlen => r.cigar().reference_len() as f64,
            Symbol::Rname => {
                ref_name(self, r.ref_id(), res);
                return Ok(());
            }
            Symbol::Refid => f64::from(r.stored_coordinates().ref_id),
            Symbol::Seq => {
                res.put_bytes(&r.seq());
                res.is_str = true;
                return Ok(());
            }
            Symbol::Sclen => soft_clipped(r.cigar().iter().collect()) as f64,
            Symbol::Tlen => f64::from(r.tlen()),
            Symbol::Tag(tag) => return tag_value(r, tag, res),
        };
        res.d = number;
        Ok(())
    }
}

fn string(res: &mut Val, text: &[u8]) {
    res.is_str = true;
    res.put_c_str(text);
}

fn ref_name(ev: &Evaluator<'_>, tid: Option<RefId>, res: &mut Val) {
    let name = tid
        .and_then(|t| ev.context.header.ref_name(t))
        .unwrap_or(b"*");
    string(res, name);
}

/// `sclen`: a soft clip at either end, also behind a hard clip.
fn soft_clipped(ops: Vec<Op>) -> u64 {
    let n = ops.len();
    let mut sclen = 0u64;
    let mut left = 0;
    if n > 0 && ops[0].code() == SOFT_CLIP {
        sclen += u64::from(ops[0].len());
    } else if n > 1 && ops[0].code() == HARD_CLIP && ops[1].code() == SOFT_CLIP {
        left = 1;
        sclen += u64::from(ops[1].len());
    }
    if n > left + 1 && ops[n - 1].code() == SOFT_CLIP {
        sclen += u64::from(ops[n - 1].len());
    } else if n > left + 2 && ops[n - 1].code() == HARD_CLIP && ops[n - 2].code() == SOFT_CLIP {
        sclen += u64::from(ops[n - 2].len());
    }
    sclen
}

/// `[XX]`: a present tag is true even when 0; an absent one is a null string (whose buffer, if
/// the slot had one, survives: see [`Val`]).
fn tag_value(r: &bam::Record, tag: [u8; 2], res: &mut Val) -> Result<(), EvalError> {
    let aux = r.aux();
    let Ok(Some(at)) = bam::aux::find(aux, tag) else {
        res.is_str = true;
        res.clear_str();
        res.d = 0.0;
        res.is_true = false;
        return Ok(());
    };
    res.is_true = true;
    let v = &aux[at + 1..];
    let le = |n: usize| {
        let mut b = [0u8; 8];
        b[..n].copy_from_slice(&v[..n]);
        b
    };
    match aux[at] {
        b'Z' | b'H' => string(res, v),
        b'A' => {
            res.is_str = true;
            res.put_bytes(&v[..1]);
        }
        t @ (b'c' | b'C' | b's' | b'S' | b'i' | b'I') => {
            res.d = match t {
                b'c' => f64::from(v[0] as i8),
                b'C' => f64::from(v[0]),
                b's' => f64::from(i16::from_le_bytes([v[0], v[1]])),
                b'S' => f64::from(u16::from_le_bytes([v[0], v[1]])),
                b'i' => f64::from(i32::from_le_bytes([v[0], v[1], v[2], v[3]])),
                _ => f64::from(u32::from_le_bytes([v[0], v[1], v[2], v[3]])),
            };
        }
        b'f' => res.d = f64::from(f32::from_le_bytes([v[0], v[1], v[2], v[3]])),
        b'd' => res.d = f64::from_le_bytes(le(8)),
        t => return Err(EvalError::UnsupportedTag { tag, ty: t }),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ops(v: &[(u32, u8)]) -> Vec<Op> {
        v.iter().map(|&(l, c)| Op(l << 4 | u32::from(c))).collect()
    }

    #[test]
    fn sclen_rules() {
        assert_eq!(soft_clipped(ops(&[(5, 4), (10, 0), (3, 4)])), 8);
        assert_eq!(
            soft_clipped(ops(&[(2, 5), (5, 4), (10, 0), (3, 4), (1, 5)])),
            8
        );
        assert_eq!(soft_clipped(ops(&[(5, 4)])), 5);
        assert_eq!(soft_clipped(ops(&[(2, 5), (5, 4)])), 5);
        assert_eq!(soft_clipped(ops(&[(5, 4), (3, 4)])), 8);
        assert_eq!(soft_clipped(ops(&[])), 0);
    }
}
