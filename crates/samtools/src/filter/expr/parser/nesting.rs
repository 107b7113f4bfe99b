//! A bound on how deep an expression nests. The parser, the evaluator and the tree's own drop
//! all recurse once per level of parentheses, `!`/`~`, function call or link of an `==` or `<`
//! chain (those associate to the right), so a command line of ten thousand `(` would otherwise
//! overflow the stack (a crash, not an error). Written expressions nest a handful of levels;
//! the bound is far above that and far below the stack.

use std::cell::Cell;

use super::SyntaxError;

/// The deepest nesting accepted.
pub(super) const MAX_DEPTH: u32 = 64;

thread_local! {
    /// The levels the parser on this thread is inside; kept here rather than passed through
    /// every precedence level's function, as only four of them open a level.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// One level entered; leaving it (dropping this, also on an early `?`) leaves the level.
pub(super) struct Level(());

impl Level {
    /// Enters a level at byte `at`, or fails once [`MAX_DEPTH`] are open.
    pub(super) fn enter(at: usize) -> Result<Level, SyntaxError> {
        DEPTH.with(|d| {
            if d.get() >= MAX_DEPTH {
                return Err(SyntaxError {
                    at,
                    message: format!("expression nested more than {MAX_DEPTH} deep"),
                });
            }
            d.set(d.get() + 1);
            Ok(Level(()))
        })
    }
}

impl Drop for Level {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}
