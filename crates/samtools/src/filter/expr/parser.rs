//! The grammar of htslib 1.16's filter expressions, parsed once into a tree whose shape follows
//! `hts_expr.c` function by function, so that evaluation can reproduce htslib's value handling
//! exactly (htslib parses and evaluates in one pass, for every record).
//!
//! From loosest to tightest: `&&` `||` (one level, left to right); `==` `!=` `=~` `!~` (right to
//! left); `>` `>=` `<` `<=` (right to left); `|`; `^`; `&`; `+` `-`; `*` `/` `%`; unary `+` `-` `!`
//! `~`; then numbers, strings, names, `[XX]` tags, functions and parentheses.
//!
//! Longer than most files: one function per precedence level of htslib's grammar, kept in one
//! file so the levels read in order.

use std::fmt;

use super::lexer::{number, string, ws};

mod nesting;

/// A syntax error: where (0-based byte offset into the expression) and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// Byte offset of the problem in the expression text.
    pub at: usize,
    /// What was expected or found.
    pub message: String,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at column {}: {}", self.at + 1, self.message)
    }
}

impl std::error::Error for SyntaxError {}

/// A record field or tag, as `bam_sym_lookup` names them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Symbol {
    Cigar,
    Endpos,
    Flag,
    FlagBit(u16),
    Library,
    Mapq,
    Mpos,
    Mrname,
    Mrefid,
    Ncigar,
    Pos,
    Qlen,
    Qname,
    Qual,
    Rlen,
    Rname,
    Refid,
    Seq,
    Sclen,
    Tlen,
    Tag([u8; 2]),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Logic {
    And,
    Or,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EqOp {
    Eq,
    Ne,
    Match,
    NoMatch,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CmpOp {
    Ge,
    Gt,
    Le,
    Lt,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ArithOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BitOp {
    And,
    Xor,
    Or,
}

/// `and_expr`: the first comparison, then `&&`/`||` terms left to right.
#[derive(Debug, Clone)]
pub(crate) struct Expr {
    pub(crate) first: Eq,
    pub(crate) rest: Vec<(Logic, Eq)>,
}

/// `eq_expr` (right-recursive).
#[derive(Debug, Clone)]
pub(crate) struct Eq {
    pub(crate) lhs: Cmp,
    /// The operator, where its right-hand side starts, and that side.
    pub(crate) rhs: Option<(EqOp, usize, Box<Eq>)>,
}

/// `cmp_expr` (right-recursive).
#[derive(Debug, Clone)]
pub(crate) struct Cmp {
    pub(crate) lhs: Bits,
    pub(crate) rhs: Option<(CmpOp, Box<Cmp>)>,
}

/// One of the three bitwise levels: `first op rest[0] op rest[1] ...`, or an arithmetic chain.
#[derive(Debug, Clone)]
pub(crate) enum Bits {
    Chain {
        op: BitOp,
        first: Box<Bits>,
        rest: Vec<Bits>,
    },
    Arith(Arith),
}

/// `add_expr` or `mul_expr`: a first term and `(op, term)` pairs.
#[derive(Debug, Clone)]
pub(crate) enum Arith {
    Chain {
        first: Box<Arith>,
        rest: Vec<(ArithOp, Arith)>,
    },
    Unary(Unary),
}

#[derive(Debug, Clone)]
pub(crate) enum Unary {
    Plus(Simple),
    Minus(Simple),
    Not(Box<Unary>),
    BitNot(Box<Unary>),
    Simple(Simple),
}

#[derive(Debug, Clone)]
pub(crate) enum Simple {
    Paren(Box<Expr>),
    Num(f64),
    Str(Vec<u8>),
    Sym(Symbol),
    Func(Box<Func>),
}

#[derive(Debug, Clone)]
pub(crate) enum Func {
    Avg(Expr),
    Default(Expr, Expr),
    Exists(Expr),
    Exp(Expr),
    Length(Expr),
    Log(Expr),
    Min(Expr),
    Max(Expr),
    Pow(Expr, Expr),
    Sqrt(Expr),
}

type Parsed<T> = Result<(T, usize), SyntaxError>;

/// The string literals that are the whole right-hand side of a `=~` or `!~`, with their
/// positions: patterns that can be compiled before any record is read.
pub(crate) fn literal_patterns(e: &Expr) -> Vec<(usize, Vec<u8>)> {
    let mut out = Vec::new();
    walk_expr(e, &mut out);
    out
}

fn walk_expr(e: &Expr, out: &mut Vec<(usize, Vec<u8>)>) {
    walk_eq(&e.first, out);
    for (_, t) in &e.rest {
        walk_eq(t, out);
    }
}

fn walk_eq(e: &Eq, out: &mut Vec<(usize, Vec<u8>)>) {
    walk_cmp(&e.lhs, out);
    if let Some((op, at, rhs)) = &e.rhs {
        if matches!(op, EqOp::Match | EqOp::NoMatch) && rhs.rhs.is_none() && rhs.lhs.rhs.is_none() {
            if let Bits::Arith(Arith::Unary(Unary::Simple(Simple::Str(p)))) = &rhs.lhs.lhs {
                out.push((*at, p.clone()));
            }
        }
        walk_eq(rhs, out);
    }
}

fn walk_cmp(e: &Cmp, out: &mut Vec<(usize, Vec<u8>)>) {
    walk_bits(&e.lhs, out);
    if let Some((_, rhs)) = &e.rhs {
        walk_cmp(rhs, out);
    }
}

fn walk_bits(e: &Bits, out: &mut Vec<(usize, Vec<u8>)>) {
    match e {
        Bits::Chain { first, rest, .. } => {
            walk_bits(first, out);
            rest.iter().for_each(|b| walk_bits(b, out));
        }
        Bits::Arith(a) => walk_arith(a, out),
    }
}

fn walk_arith(e: &Arith, out: &mut Vec<(usize, Vec<u8>)>) {
    match e {
        Arith::Chain { first, rest } => {
            walk_arith(first, out);
            rest.iter().for_each(|(_, a)| walk_arith(a, out));
        }
        Arith::Unary(u) => walk_unary(u, out),
    }
}

fn walk_unary(e: &Unary, out: &mut Vec<(usize, Vec<u8>)>) {
    match e {
        Unary::Plus(s) | Unary::Minus(s) | Unary::Simple(s) => walk_simple(s, out),
        Unary::Not(u) | Unary::BitNot(u) => walk_unary(u, out),
    }
}

fn walk_simple(e: &Simple, out: &mut Vec<(usize, Vec<u8>)>) {
    match e {
        Simple::Paren(x) => walk_expr(x, out),
        Simple::Func(f) => match &**f {
            Func::Default(a, b) | Func::Pow(a, b) => {
                walk_expr(a, out);
                walk_expr(b, out);
            }
            Func::Avg(a)
            | Func::Exists(a)
            | Func::Exp(a)
            | Func::Length(a)
            | Func::Log(a)
            | Func::Min(a)
            | Func::Max(a)
            | Func::Sqrt(a) => walk_expr(a, out),
        },
        Simple::Num(_) | Simple::Str(_) | Simple::Sym(_) => {}
    }
}

/// Parses a whole expression; text left over after it is an error, as in `hts_filter_eval`.
pub(crate) fn parse(s: &[u8]) -> Result<Expr, SyntaxError> {
    let (expr, end) = expression(s, 0)?;
    let rest = ws(s, end);
    if rest < s.len() {
        return Err(SyntaxError {
            at: rest,
            message: format!("unexpected '{}'", snippet(s, rest)),
        });
    }
    Ok(expr)
}

fn snippet(s: &[u8], at: usize) -> String {
    let end = (at + 20).min(s.len());
    String::from_utf8_lossy(&s[at..end]).into_owned()
}

fn starts(s: &[u8], at: usize, word: &[u8]) -> bool {
    s.len() >= at + word.len() && &s[at..at + word.len()] == word
}

fn expression(s: &[u8], i: usize) -> Parsed<Expr> {
    let _level = nesting::Level::enter(i)?;
    let (first, mut end) = eq_expr(s, i)?;
    let mut rest = Vec::new();
    loop {
        let j = ws(s, end);
        let op = if starts(s, j, b"&&") {
            Logic::And
        } else if starts(s, j, b"||") {
            Logic::Or
        } else {
            break;
        };
        let (term, e) = eq_expr(s, j + 2)?;
        rest.push((op, term));
        end = e;
    }
    Ok((Expr { first, rest }, end))
}

fn eq_expr(s: &[u8], i: usize) -> Parsed<Eq> {
    let (lhs, end) = cmp_expr(s, i)?;
    let j = ws(s, end);
    let op = match (s.get(j), s.get(j + 1)) {
        (Some(b'='), Some(b'=')) => EqOp::Eq,
        (Some(b'!'), Some(b'=')) => EqOp::Ne,
        (Some(b'='), Some(b'~')) => EqOp::Match,
        (Some(b'!'), Some(b'~')) => EqOp::NoMatch,
        _ => return Ok((Eq { lhs, rhs: None }, end)),
    };
    // Right to left, so each link of a chain is a level of recursion.
    let _level = nesting::Level::enter(j)?;
    let (rhs, e) = eq_expr(s, j + 2)?;
    Ok((
        Eq {
            lhs,
            rhs: Some((op, ws(s, j + 2), Box::new(rhs))),
        },
        e,
    ))
}

fn cmp_expr(s: &[u8], i: usize) -> Parsed<Cmp> {
    let (lhs, end) = bits(s, i, BitOp::Or)?;
    let j = ws(s, end);
    let (op, len) = match (s.get(j), s.get(j + 1)) {
        (Some(b'>'), Some(b'=')) => (CmpOp::Ge, 2),
        (Some(b'>'), _) => (CmpOp::Gt, 1),
        (Some(b'<'), Some(b'=')) => (CmpOp::Le, 2),
        (Some(b'<'), _) => (CmpOp::Lt, 1),
        _ => return Ok((Cmp { lhs, rhs: None }, end)),
    };
    let _level = nesting::Level::enter(j)?;
    let (rhs, e) = cmp_expr(s, j + len)?;
    Ok((
        Cmp {
            lhs,
            rhs: Some((op, Box::new(rhs))),
        },
        e,
    ))
}

/// `bitor_expr`, `bitxor_expr` and `bitand_expr`; below `&` comes `add_expr`.
fn bits(s: &[u8], i: usize, op: BitOp) -> Parsed<Bits> {
    let inner = |i| match op {
        BitOp::Or => bits(s, i, BitOp::Xor),
        BitOp::Xor => bits(s, i, BitOp::And),
        BitOp::And => arith(s, i, false).map(|(a, e)| (Bits::Arith(a), e)),
    };
    let (first, mut end) = inner(i)?;
    let mut rest = Vec::new();
    loop {
        let j = ws(s, end);
        let found = match op {
            BitOp::Or => s.get(j) == Some(&b'|') && s.get(j + 1) != Some(&b'|'),
            BitOp::Xor => s.get(j) == Some(&b'^'),
            BitOp::And => s.get(j) == Some(&b'&') && s.get(j + 1) != Some(&b'&'),
        };
        if !found {
            break;
        }
        let (term, e) = inner(j + 1)?;
        rest.push(term);
        end = e;
    }
    if rest.is_empty() {
        return Ok((first, end));
    }
    Ok((
        Bits::Chain {
            op,
            first: Box::new(first),
            rest,
        },
        end,
    ))
}

/// `add_expr` (`mul` false) or `mul_expr` (`mul` true).
fn arith(s: &[u8], i: usize, mul: bool) -> Parsed<Arith> {
    let inner = |i| {
        if mul {
            unary_expr(s, i).map(|(u, e)| (Arith::Unary(u), e))
        } else {
            arith(s, i, true)
        }
    };
    let (first, mut end) = inner(i)?;
    let mut rest = Vec::new();
    while end < s.len() {
        let j = ws(s, end);
        let op = match (mul, s.get(j)) {
            (false, Some(b'+')) => ArithOp::Add,
            (false, Some(b'-')) => ArithOp::Sub,
            (true, Some(b'*')) => ArithOp::Mul,
            (true, Some(b'/')) => ArithOp::Div,
            (true, Some(b'%')) => ArithOp::Rem,
            _ => break,
        };
        let (term, e) = inner(j + 1)?;
        rest.push((op, term));
        end = e;
    }
    if rest.is_empty() {
        return Ok((first, end));
    }
    Ok((
        Arith::Chain {
            first: Box::new(first),
            rest,
        },
        end,
    ))
}

fn unary_expr(s: &[u8], i: usize) -> Parsed<Unary> {
    let j = ws(s, i);
    match s.get(j) {
        Some(b'+') => simple_expr(s, j + 1).map(|(x, e)| (Unary::Plus(x), e)),
        Some(b'-') => simple_expr(s, j + 1).map(|(x, e)| (Unary::Minus(x), e)),
        Some(b'!') => {
            let _level = nesting::Level::enter(j)?;
            unary_expr(s, j + 1).map(|(x, e)| (Unary::Not(Box::new(x)), e))
        }
        Some(b'~') => {
            let _level = nesting::Level::enter(j)?;
            unary_expr(s, j + 1).map(|(x, e)| (Unary::BitNot(Box::new(x)), e))
        }
        _ => simple_expr(s, j).map(|(x, e)| (Unary::Simple(x), e)),
    }
}

fn close_paren(s: &[u8], end: usize, what: &str) -> Result<usize, SyntaxError> {
    let k = ws(s, end);
    if s.get(k) == Some(&b')') {
        Ok(k + 1)
    } else {
        Err(SyntaxError {
            at: k,
            message: format!("missing ')' {what}"),
        })
    }
}

fn simple_expr(s: &[u8], i: usize) -> Parsed<Simple> {
    let j = ws(s, i);
    if s.get(j) == Some(&b'(') {
        let (inner, e) = expression(s, j + 1)?;
        let k = close_paren(s, e, "to match '('")?;
        return Ok((Simple::Paren(Box::new(inner)), k));
    }
    if let Some((d, e)) = number(s, j) {
        return Ok((Simple::Num(d), e));
    }
    if s.get(j) == Some(&b'"') {
        return match string(s, j) {
            Ok((v, e)) => Ok((Simple::Str(v), e)),
            Err(at) => Err(SyntaxError {
                at,
                message: "unterminated string".to_string(),
            }),
        };
    }
    if let Some((sym, e)) = symbol(s, j)? {
        return Ok((Simple::Sym(sym), e));
    }
    func_expr(s, j)
}

/// `bam_sym_lookup`'s names, matched as prefixes in its order (so `position` is `pos` followed
/// by the leftover `ition`, an error later).
fn symbol(s: &[u8], j: usize) -> Result<Option<(Symbol, usize)>, SyntaxError> {
    const NAMES: &[(&[u8], Symbol)] = &[
        (b"cigar", Symbol::Cigar),
        (b"endpos", Symbol::Endpos),
        (b"library", Symbol::Library),
        (b"mapq", Symbol::Mapq),
        (b"mpos", Symbol::Mpos),
        (b"mrname", Symbol::Mrname),
        (b"mrefid", Symbol::Mrefid),
        (b"ncigar", Symbol::Ncigar),
        (b"pos", Symbol::Pos),
        (b"pnext", Symbol::Mpos),
        (b"qlen", Symbol::Qlen),
        (b"qname", Symbol::Qname),
        (b"qual", Symbol::Qual),
        (b"rlen", Symbol::Rlen),
        (b"rname", Symbol::Rname),
        (b"rnext", Symbol::Mrname),
        (b"refid", Symbol::Refid),
        (b"seq", Symbol::Seq),
        (b"sclen", Symbol::Sclen),
        (b"tlen", Symbol::Tlen),
    ];
    const FLAGS: &[(&[u8], u16)] = &[
        (b"paired", 0x1),
        (b"proper_pair", 0x2),
        (b"unmap", 0x4),
        (b"munmap", 0x8),
        (b"reverse", 0x10),
        (b"mreverse", 0x20),
        (b"read1", 0x40),
        (b"read2", 0x80),
        (b"secondary", 0x100),
        (b"qcfail", 0x200),
        (b"dup", 0x400),
        (b"supplementary", 0x800),
    ];
    if starts(s, j, b"flag") {
        let k = j + 4;
        if s.get(k) != Some(&b'.') {
            return Ok(Some((Symbol::Flag, k)));
        }
        for &(name, bit) in FLAGS {
            if starts(s, k + 1, name) {
                return Ok(Some((Symbol::FlagBit(bit), k + 1 + name.len())));
            }
        }
        return Err(SyntaxError {
            at: j,
            message: format!("unrecognised flag name '{}'", word(s, j)),
        });
    }
    if s.get(j) == Some(&b'[') && j + 3 < s.len() && s[j + 1] != 0 && s[j + 2] != 0 {
        if s[j + 3] == b']' {
            return Ok(Some((Symbol::Tag([s[j + 1], s[j + 2]]), j + 4)));
        }
        return Ok(None);
    }
    Ok(NAMES
        .iter()
        .find(|(name, _)| starts(s, j, name))
        .map(|&(name, sym)| (sym, j + name.len())))
}

/// The identifier-like text at `j`, for messages.
fn word(s: &[u8], j: usize) -> String {
    let end = s[j..]
        .iter()
        .position(|b| !(b.is_ascii_alphanumeric() || *b == b'_' || *b == b'.'))
        .map_or(s.len(), |n| j + n);
    String::from_utf8_lossy(&s[j..end.max(j + 1).min(s.len())]).into_owned()
}

fn func_expr(s: &[u8], j: usize) -> Parsed<Simple> {
    type One = fn(Expr) -> Func;
    type Two = fn(Expr, Expr) -> Func;
    const ONE: &[(&[u8], One)] = &[
        (b"avg(", Func::Avg),
        (b"exists(", Func::Exists),
        (b"exp(", Func::Exp),
        (b"length(", Func::Length),
        (b"log(", Func::Log),
        (b"min(", Func::Min),
        (b"max(", Func::Max),
        (b"sqrt(", Func::Sqrt),
    ];
    const TWO: &[(&[u8], Two)] = &[(b"default(", Func::Default), (b"pow(", Func::Pow)];
    for &(name, make) in ONE {
        if starts(s, j, name) {
            let (arg, e) = expression(s, j + name.len())?;
            let k = close_paren(s, e, "after the function's argument")?;
            return Ok((Simple::Func(Box::new(make(arg))), k));
        }
    }
    for &(name, make) in TWO {
        if starts(s, j, name) {
            let (a, e) = expression(s, j + name.len())?;
            // htslib wants the comma right after the first argument, without spaces.
            if s.get(e) != Some(&b',') {
                return Err(SyntaxError {
                    at: e,
                    message: format!(
                        "expected ',' right after the first argument of {}",
                        String::from_utf8_lossy(&name[..name.len() - 1])
                    ),
                });
            }
            let (b, e) = expression(s, ws(s, e + 1))?;
            let k = close_paren(s, e, "after the function's arguments")?;
            return Ok((Simple::Func(Box::new(make(a, b))), k));
        }
    }
    let message = if j >= s.len() {
        "expected a value, found the end of the expression".to_string()
    } else {
        format!("expected a value, found '{}'", word(s, j))
    };
    Err(SyntaxError { at: j, message })
}

#[cfg(test)]
mod tests;
