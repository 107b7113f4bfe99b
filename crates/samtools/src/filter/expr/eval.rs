//! Evaluation with htslib 1.16's value rules (`hts_expr.c`), function by function.
//!
//! htslib's value (`hts_expr_val_t`) is a number or a string, with an "unknown" state (a NaN
//! number or a null string) and an `is_true` flag that forces truth (a present tag is true even
//! when 0). Its string buffer survives being cleared, and a slot that held a string keeps the
//! buffer when it is reused for the next term of a `+` or `*` chain; several results depend on
//! that (an absent tag read into such a slot is an empty string, not null). [`Val`] keeps the same
//! state, and each function below follows its C counterpart, so the answers are the same.

use std::cmp::Ordering;

use super::parser::{Arith, ArithOp, BitOp, Bits, Cmp, CmpOp, Eq, EqOp, Expr, Func, Logic};
use super::parser::{Simple, Unary};
use super::{EvalError, Evaluator};

/// A kstring: `bytes` as a C string reads them (its NUL-terminated content) and `l`, its length
/// field, which clearing sets to 0 without touching the bytes.
#[derive(Debug, Clone, Default)]
pub(crate) struct KStr {
    bytes: Vec<u8>,
    l: usize,
}

impl KStr {
    /// What `strcmp` and `regexec` see: the bytes up to the first NUL.
    pub(crate) fn c_str(&self) -> &[u8] {
        let end = self
            .bytes
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(self.bytes.len());
        &self.bytes[..end]
    }

    /// The `l` bytes `length`, `min`, `max` and `avg` look at.
    fn content(&self) -> &[u8] {
        &self.bytes[..self.l.min(self.bytes.len())]
    }
}

/// htslib's `hts_expr_val_t`.
#[derive(Debug, Clone)]
pub(crate) struct Val {
    pub(crate) is_str: bool,
    pub(crate) is_true: bool,
    pub(crate) s: Option<KStr>,
    pub(crate) d: f64,
}

impl Val {
    /// `HTS_EXPR_VAL_INIT`.
    pub(crate) fn new() -> Val {
        Val {
            is_str: false,
            is_true: false,
            s: None,
            d: 0.0,
        }
    }

    /// `hts_expr_val_exists`.
    pub(crate) fn exists(&self) -> bool {
        if self.is_str {
            self.s.is_some()
        } else {
            !self.d.is_nan()
        }
    }

    /// `hts_expr_val_existsT`.
    fn exists_t(&self) -> bool {
        self.is_true || self.exists()
    }

    /// `hts_expr_val_undef`.
    pub(crate) fn undef(&mut self) {
        self.clear_str();
        self.is_true = false;
        self.is_str = false;
        self.d = f64::NAN;
    }

    /// `ks_clear`: the length goes to 0, the buffer (and its C string) stays.
    pub(crate) fn clear_str(&mut self) {
        if let Some(k) = &mut self.s {
            k.l = 0;
        }
    }

    /// `kputs(text, ks_clear(&s))`: a C string, cut at its first NUL.
    pub(crate) fn put_c_str(&mut self, text: &[u8]) {
        let end = text.iter().position(|&b| b == 0).unwrap_or(text.len());
        self.put_bytes(&text[..end]);
    }

    /// Bytes copied in with their length (as `qual` and `seq` are).
    pub(crate) fn put_bytes(&mut self, bytes: &[u8]) {
        let k = self.s.get_or_insert_with(KStr::default);
        k.bytes.clear();
        k.bytes.extend_from_slice(bytes);
        k.l = bytes.len();
    }

    /// The truth `&&` and `||` test: forced true, a non-null string, or a non-zero number (NaN
    /// included, as in C).
    fn truthy(&self) -> bool {
        self.is_true || (self.is_str && self.s.is_some()) || self.d != 0.0
    }

    fn set_bool(&mut self, t: bool) {
        self.is_true = t;
        self.d = if t { 1.0 } else { 0.0 };
    }

    fn c_str(&self) -> Option<&[u8]> {
        self.s.as_ref().map(KStr::c_str)
    }
}

/// C's `(int64_t)d` on x86-64: NaN and out-of-range values become `i64::MIN`.
fn c_i64(d: f64) -> i64 {
    if !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&d) {
        i64::MIN
    } else {
        d as i64
    }
}

impl Evaluator<'_> {
    pub(crate) fn expr(&mut self, e: &Expr, res: &mut Val) -> Result<(), EvalError> {
        self.eq(&e.first, res)?;
        for (op, term) in &e.rest {
            let mut val = Val::new();
            self.eq(term, &mut val)?;
            match op {
                Logic::And => {
                    if !res.exists_t() || !val.exists_t() {
                        res.undef();
                        res.d = 0.0;
                    } else {
                        let t = res.truthy() && val.truthy();
                        res.set_bool(t);
                        res.is_str = false;
                    }
                }
                Logic::Or => {
                    let (rt, vt) = (res.exists_t(), val.exists_t());
                    let lhs_unknown = !rt && (!vt || !val.truthy());
                    if lhs_unknown || (!vt && !res.truthy()) {
                        res.undef();
                        res.d = 0.0;
                    } else {
                        let t = res.truthy() || val.truthy();
                        res.set_bool(t);
                        res.is_str = false;
                    }
                }
            }
        }
        Ok(())
    }

    fn eq(&mut self, e: &Eq, res: &mut Val) -> Result<(), EvalError> {
        self.cmp(&e.lhs, res)?;
        let Some((op, _, rhs)) = &e.rhs else {
            return Ok(());
        };
        let mut val = Val::new();
        let result = self.eq(rhs, &mut val);
        match op {
            EqOp::Eq | EqOp::Ne => {
                if result.is_err() {
                    res.set_bool(false);
                } else if !res.exists() || !val.exists() {
                    res.undef();
                } else {
                    let t = if res.is_str {
                        match (res.c_str(), val.c_str()) {
                            (Some(a), Some(b)) => (a == b) == (*op == EqOp::Eq),
                            _ => *op == EqOp::Ne,
                        }
                    } else if *op == EqOp::Eq {
                        !val.is_str && res.d == val.d
                    } else {
                        val.is_str || res.d != val.d
                    };
                    res.set_bool(t);
                }
                res.is_str = false;
            }
            EqOp::Match | EqOp::NoMatch => {
                if !val.is_str || !res.is_str {
                    return Err(EvalError::RegexOnNumber);
                }
                match (res.c_str(), val.c_str()) {
                    (Some(text), Some(pattern)) => {
                        let matched = self.regex_match(pattern, text)?;
                        res.set_bool(matched == (*op == EqOp::Match));
                    }
                    _ => res.is_true = false,
                }
                res.is_str = false;
            }
        }
        if !val.exists() || !res.exists() {
            res.undef();
        }
        result
    }

    fn cmp(&mut self, e: &Cmp, res: &mut Val) -> Result<(), EvalError> {
        self.bits(&e.lhs, res)?;
        let Some((op, rhs)) = &e.rhs else {
            return Ok(());
        };
        let mut val = Val::new();
        let result = self.cmp(rhs, &mut val);
        if !res.exists() || !val.exists() {
            res.undef();
        } else {
            let ord = match (res.is_str, res.c_str(), val.is_str, val.c_str()) {
                (true, Some(a), true, Some(b)) => Some(a.cmp(b)),
                _ if !res.is_str && !val.is_str => res.d.partial_cmp(&val.d),
                _ => None,
            };
            let t = ord.is_some_and(|o| match op {
                CmpOp::Ge => o != Ordering::Less,
                CmpOp::Gt => o == Ordering::Greater,
                CmpOp::Le => o != Ordering::Greater,
                CmpOp::Lt => o == Ordering::Less,
            });
            res.set_bool(t);
            res.is_str = false;
        }
        if !val.exists() || !res.exists() {
            res.undef();
        }
        result
    }

    fn bits(&mut self, e: &Bits, res: &mut Val) -> Result<(), EvalError> {
        let (op, first, rest) = match e {
            Bits::Arith(a) => return self.arith(a, res),
            Bits::Chain { op, first, rest } => (op, first, rest),
        };
        self.bits(first, res)?;
        let mut val = Val::new();
        let mut undef = false;
        for term in rest {
            self.bits(term, &mut val)?;
            if !val.exists() || !res.exists() {
                undef = true;
            } else if res.is_str || val.is_str {
                return Err(EvalError::StringArithmetic);
            }
            let (a, b) = (c_i64(res.d), c_i64(val.d));
            res.d = match op {
                BitOp::And => a & b,
                BitOp::Xor => a ^ b,
                BitOp::Or => a | b,
            } as f64;
            res.is_true = res.d != 0.0;
        }
        if undef {
            res.undef();
        }
        Ok(())
    }

    fn arith(&mut self, e: &Arith, res: &mut Val) -> Result<(), EvalError> {
        let (first, rest) = match e {
            Arith::Unary(u) => return self.unary(u, res),
            Arith::Chain { first, rest } => (first, rest),
        };
        self.arith(first, res)?;
        let mut val = Val::new();
        for (op, term) in rest {
            self.arith(term, &mut val)?;
            let undef = !val.exists() || !res.exists();
            if !undef && (val.is_str || res.is_str) {
                return Err(EvalError::StringArithmetic);
            }
            match op {
                // add_expr: the result is undefined afterwards.
                ArithOp::Add | ArithOp::Sub => {
                    if *op == ArithOp::Add {
                        res.d += val.d;
                    } else {
                        res.d -= val.d;
                    }
                    if undef {
                        res.undef();
                    } else {
                        res.is_true = res.d != 0.0;
                    }
                }
                // mul_expr: undefined first, then the operation on NaN (which `%` turns into a
                // number through C's integer conversion).
                ArithOp::Mul | ArithOp::Div | ArithOp::Rem => {
                    if undef {
                        res.undef();
                    }
                    match op {
                        ArithOp::Mul => res.d *= val.d,
                        ArithOp::Div => res.d /= val.d,
                        _ => {
                            if val.d != 0.0 {
                                let (a, b) = (c_i64(res.d), c_i64(val.d));
                                if b == 0 || (a == i64::MIN && b == -1) {
                                    return Err(EvalError::IntegerDivision);
                                }
                                res.d = (a % b) as f64;
                            } else {
                                res.undef();
                            }
                        }
                    }
                    res.is_true = res.exists() && res.d != 0.0;
                }
            }
        }
        Ok(())
    }

    fn unary(&mut self, e: &Unary, res: &mut Val) -> Result<(), EvalError> {
        match e {
            Unary::Simple(s) => self.simple(s, res),
            Unary::Plus(s) | Unary::Minus(s) => {
                let result = self.simple(s, res);
                let mut string = false;
                if !res.exists() {
                    res.undef();
                } else {
                    string = res.is_str;
                    if matches!(e, Unary::Minus(_)) {
                        res.d = -res.d;
                    }
                    res.is_true = res.d != 0.0;
                }
                result?;
                if string {
                    return Err(EvalError::StringArithmetic);
                }
                Ok(())
            }
            Unary::Not(u) => {
                let result = self.unary(u, res);
                if res.is_true {
                    res.set_bool(false);
                } else if !res.exists() {
                    res.set_bool(true);
                } else if res.is_str {
                    let t = res.s.is_none();
                    res.set_bool(t);
                } else {
                    let t = c_i64(res.d) == 0;
                    res.set_bool(t);
                }
                res.is_str = false;
                result
            }
            Unary::BitNot(u) => {
                let result = self.unary(u, res);
                let mut string = false;
                if !res.exists() {
                    res.undef();
                } else {
                    string = res.is_str;
                    res.d = !c_i64(res.d) as f64;
                    res.is_true = res.d != 0.0;
                }
                result?;
                if string {
                    return Err(EvalError::StringArithmetic);
                }
                Ok(())
            }
        }
    }

    fn simple(&mut self, e: &Simple, res: &mut Val) -> Result<(), EvalError> {
        match e {
            Simple::Paren(inner) => self.expr(inner, res),
            Simple::Num(d) => {
                res.is_str = false;
                res.d = *d;
                Ok(())
            }
            Simple::Str(v) => {
                res.is_str = true;
                res.put_bytes(v);
                Ok(())
            }
            Simple::Sym(sym) => self.symbol(*sym, res),
            Simple::Func(f) => {
                // The failed name lookup that led to the function has already cleared this.
                res.is_str = false;
                self.func(f, res)
            }
        }
    }

    fn func(&mut self, f: &Func, res: &mut Val) -> Result<(), EvalError> {
        match f {
            Func::Length(e) | Func::Min(e) | Func::Max(e) | Func::Avg(e) => {
                self.expr(e, res)?;
                let name = match f {
                    Func::Length(_) => "length",
                    Func::Min(_) => "min",
                    Func::Max(_) => "max",
                    _ => "avg",
                };
                if !res.is_str {
                    return Err(EvalError::NotAString(name));
                }
                let bytes = res.s.as_ref().map_or(&[][..], KStr::content);
                res.d = match f {
                    Func::Length(_) => bytes.len() as f64,
                    Func::Min(_) => bytes.iter().min().map_or(f64::NAN, |&b| f64::from(b)),
                    Func::Max(_) => bytes.iter().max().map_or(f64::NAN, |&b| f64::from(b)),
                    _ => {
                        let sum: f64 = bytes.iter().map(|&b| f64::from(b)).sum();
                        if bytes.is_empty() {
                            sum
                        } else {
                            sum / bytes.len() as f64
                        }
                    }
                };
                res.is_str = false;
                Ok(())
            }
            Func::Default(a, b) => {
                self.expr(a, res)?;
                let mut val = Val::new();
                self.expr(b, &mut val)?;
                if !res.exists_t() {
                    *res = val;
                }
                Ok(())
            }
            Func::Exists(e) => {
                self.expr(e, res)?;
                let t = res.exists_t();
                res.set_bool(t);
                res.is_str = false;
                Ok(())
            }
            Func::Exp(e) | Func::Log(e) | Func::Sqrt(e) => {
                self.expr(e, res)?;
                res.d = match f {
                    Func::Exp(_) => res.d.exp(),
                    Func::Log(_) => res.d.ln(),
                    _ => res.d.sqrt(),
                };
                res.is_str = false;
                if res.d.is_nan() {
                    res.undef();
                }
                Ok(())
            }
            Func::Pow(a, b) => {
                self.expr(a, res)?;
                let mut val = Val::new();
                self.expr(b, &mut val)?;
                if !res.exists() || !val.exists() {
                    res.undef();
                } else if res.is_str || val.is_str {
                    return Err(EvalError::StringArithmetic);
                } else {
                    res.d = res.d.powf(val.d);
                    res.is_str = false;
                }
                if res.d.is_nan() {
                    res.undef();
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_conversion() {
        assert_eq!(c_i64(f64::NAN), i64::MIN);
        assert_eq!(c_i64(1e30), i64::MIN);
        assert_eq!(c_i64(-2.7), -2);
        assert_eq!(i64::MIN % 3, -2);
    }

    #[test]
    fn kstring_keeps_its_bytes_when_cleared() {
        let mut v = Val::new();
        v.put_c_str(b"abc\0def");
        assert_eq!(v.s.as_ref().unwrap().content(), b"abc");
        v.clear_str();
        assert!(v.s.as_ref().unwrap().content().is_empty());
        assert_eq!(v.s.as_ref().unwrap().c_str(), b"abc");
        v.put_bytes(b"q\0r");
        assert_eq!(v.s.as_ref().unwrap().content(), b"q\0r");
        assert_eq!(v.s.as_ref().unwrap().c_str(), b"q");
    }
}
