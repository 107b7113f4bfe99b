//! htslib's filter expressions (`samtools view -e`), with htslib 1.16's semantics.
//!
//! ```
//! use samtools::filter::expr::Expression;
//! let e = Expression::parse("mapq >= 30 && !flag.dup && [NM] < 3").unwrap();
//! let err = Expression::parse("mapq >").unwrap_err();
//! assert_eq!(err.to_string(), "at column 7: expected a value, found the end of the expression");
//! # let _ = e;
//! ```
//!
//! Fields: `pos`, `endpos`, `mapq`, `flag` and `flag.NAME`, `rname`, `refid`, `mrname`/`rnext`,
//! `mrefid`, `mpos`/`pnext`, `tlen`, `qname`, `seq`, `qual`, `cigar`, `ncigar`, `qlen`, `rlen`,
//! `sclen`, `library`, and `[XX]` for tag `XX`. A missing tag is "unknown": comparisons with it
//! are false, `!` of it is true, `exists([XX])` tests for it and `default([XX], v)` replaces it.
//! Functions: `length`, `min`, `max`, `avg` (of a string's bytes), `exists`, `default`, `sqrt`,
//! `log`, `exp`, `pow`. htslib 1.16 has no `abs`.

mod eval;
pub(crate) mod lexer;
mod parser;
mod regex;
mod symbols;

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use ::regex::bytes::Regex;

use crate::filter::readgroup::Libraries;
use bam::{Header, Record};

pub use parser::SyntaxError;

/// Why an expression could not be evaluated for one record (htslib: "Couldn't process filter
/// expression"); the record is then not selected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EvalError {
    /// Arithmetic or a bitwise operator on a string.
    StringArithmetic,
    /// `=~` or `!~` with a number on either side.
    RegexOnNumber,
    /// A pattern computed from the record does not compile.
    BadRegex(String),
    /// `[XX]` of a type expressions cannot read (`B` arrays).
    UnsupportedTag {
        /// The tag.
        tag: [u8; 2],
        /// Its type letter.
        ty: u8,
    },
    /// `length`, `min`, `max` or `avg` of a number.
    NotAString(&'static str),
    /// `%` by a value whose integer part is 0 (htslib crashes on this).
    IntegerDivision,
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvalError::StringArithmetic => write!(f, "arithmetic on a string"),
            EvalError::RegexOnNumber => write!(f, "=~ and !~ need a string on both sides"),
            EvalError::BadRegex(m) => write!(f, "{m}"),
            EvalError::UnsupportedTag { tag, ty } => write!(
                f,
                "tag {}{} has type '{}', which expressions cannot read",
                tag[0] as char, tag[1] as char, *ty as char
            ),
            EvalError::NotAString(func) => write!(f, "{func}() needs a string"),
            EvalError::IntegerDivision => write!(f, "integer remainder by zero"),
        }
    }
}

impl std::error::Error for EvalError {}

/// htslib compiles at most this many patterns per expression and reuses them by the order in
/// which they are met during one evaluation.
const MAX_REGEX: usize = 10;

/// A parsed filter expression.
#[derive(Debug, Clone)]
pub struct Expression {
    text: String,
    tree: parser::Expr,
    /// htslib's `preg[]`: the pattern compiled for the n-th match executed in an evaluation,
    /// kept from the first evaluation that reached it (even if a later one would compute a
    /// different pattern there).
    slots: Vec<Arc<Regex>>,
    /// Compiled patterns by text, so a pattern past the slots is not rebuilt for every record.
    compiled: HashMap<Vec<u8>, Arc<Regex>>,
}

/// What evaluation needs besides the record: the header (reference names) and its libraries.
#[derive(Debug, Clone)]
pub struct Context<'h> {
    pub(crate) header: &'h Header,
    pub(crate) libraries: Cow<'h, Libraries>,
}

impl<'h> Context<'h> {
    /// Reads what expressions need from a header (its `@RG` `ID` to `LB` table).
    pub fn new(header: &'h Header) -> Context<'h> {
        Context {
            header,
            libraries: Cow::Owned(Libraries::from_header(header)),
        }
    }

    /// A context whose library table was read from `header` before.
    pub fn with_libraries(header: &'h Header, libraries: &'h Libraries) -> Context<'h> {
        Context {
            header,
            libraries: Cow::Borrowed(libraries),
        }
    }

    fn library_of(&self, r: &Record) -> Option<&[u8]> {
        self.libraries.of(r)
    }
}

pub(crate) struct Evaluator<'a> {
    record: &'a Record,
    context: &'a Context<'a>,
    slots: &'a mut Vec<Arc<Regex>>,
    compiled: &'a mut HashMap<Vec<u8>, Arc<Regex>>,
    curr_regex: usize,
}

impl Evaluator<'_> {
    /// One `=~`: the n-th pattern of this evaluation is whatever slot n holds.
    fn regex_match(&mut self, pattern: &[u8], text: &[u8]) -> Result<bool, EvalError> {
        let n = self.curr_regex;
        let re = if n < self.slots.len() {
            self.slots[n].clone()
        } else {
            let re = match self.compiled.get(pattern) {
                Some(re) => re.clone(),
                None => {
                    let re = Arc::new(regex::compile(pattern).map_err(EvalError::BadRegex)?);
                    self.compiled.insert(pattern.to_vec(), re.clone());
                    re
                }
            };
            if n < MAX_REGEX {
                self.slots.push(re.clone());
            }
            re
        };
        self.curr_regex += 1;
        Ok(re.is_match(text))
    }
}

impl Expression {
    /// Parses an expression. Patterns given as string literals after `=~`/`!~` are compiled
    /// here, so a bad one is a syntax error rather than a failure on every record.
    pub fn parse(text: &str) -> Result<Expression, SyntaxError> {
        let tree = parser::parse(text.as_bytes())?;
        let mut compiled = HashMap::new();
        for (at, pattern) in parser::literal_patterns(&tree) {
            if compiled.contains_key(&pattern) {
                continue;
            }
            match regex::compile(&pattern) {
                Ok(re) => {
                    compiled.insert(pattern, Arc::new(re));
                }
                Err(message) => return Err(SyntaxError { at, message }),
            }
        }
        Ok(Expression {
            text: text.to_string(),
            tree,
            slots: Vec::new(),
            compiled,
        })
    }

    /// The expression as given.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// True when the record is selected (htslib's `sam_passes_filter` returning 1).
    pub fn matches(&mut self, record: &Record, context: &Context<'_>) -> Result<bool, EvalError> {
        let mut ev = Evaluator {
            record,
            context,
            slots: &mut self.slots,
            compiled: &mut self.compiled,
            curr_regex: 0,
        };
        let mut res = eval::Val::new();
        ev.expr(&self.tree, &mut res)?;
        if res.is_str {
            res.is_true |= res.s.is_some();
        } else if res.exists() {
            res.is_true |= res.d != 0.0;
        }
        Ok(res.is_true)
    }
}

#[cfg(test)]
mod tests;
