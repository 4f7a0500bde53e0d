//! What an operation defines, reads and touches: the queries the verifier,
//! the rewrites and the back ends ask of an [`Op`].

use super::*;
use smallvec::{SmallVec, smallvec};

/// An operation's operands or definitions: up to four inline (every
/// operation but a dot product's or a lookup's), so that asking costs no
/// allocation.
pub type Operands<T> = SmallVec<[T; 4]>;

/// The operands of `$op` (an `&Op` or an `&mut Op`), each passed through
/// `$f`, in one order for both: `$iter` and `$opt` are `iter` and `as_ref`
/// for a shared operation, `iter_mut` and `as_mut` for a mutable one.
macro_rules! operands {
    ($op:expr, $iter:ident, $opt:ident, $f:expr) => {{
        let f = $f;
        match $op {
            Op::Const { .. } | Op::Imm { .. } | Op::Temp { .. } => smallvec![],
            Op::Unary { a, .. } | Op::QuadLane { a, .. } => smallvec![f(a)],
            Op::Binary { a, b, .. } => smallvec![f(a), f(b)],
            Op::Mad { a, b, c, .. } | Op::Select { c, a, b, .. } => smallvec![f(a), f(b), f(c)],
            Op::Dot { pairs, addend, .. } => pairs
                .$iter()
                .flat_map(|(a, b)| [a, b])
                .chain(addend.$opt())
                .map(f)
                .collect(),
            Op::SetTemp { v, .. }
            | Op::SetOut { v, .. }
            | Op::SetDepth { v, .. }
            | Op::SetPred { v, .. }
            | Op::SetAluResult { v, .. } => smallvec![f(v)],
            Op::Fetch { coords, .. } => coords.$iter().map(f).collect(),
            Op::Kill { checks } => checks.$iter().map(|(v, _)| f(v)).collect(),
            Op::UmrtWrite { value, x, y, .. } => smallvec![f(value), f(x), f(y)],
            Op::SemWait | Op::SemAcquire { .. } => smallvec![],
        }
    }};
}

impl Op {
    /// Values this operation defines.
    pub fn defs(&self) -> Operands<V> {
        match self {
            Op::Const { dst, .. }
            | Op::Imm { dst, .. }
            | Op::Temp { dst, .. }
            | Op::Unary { dst, .. }
            | Op::Binary { dst, .. }
            | Op::Mad { dst, .. }
            | Op::Dot { dst, .. }
            | Op::Select { dst, .. }
            | Op::QuadLane { dst, .. } => smallvec![*dst],
            Op::Fetch { dst, .. } => dst.iter().copied().collect(),
            _ => smallvec![],
        }
    }

    /// Whether this operation does more than define its values: writes
    /// state, reads or writes memory, kills, or waits.
    pub fn has_effect(&self) -> bool {
        matches!(
            self,
            Op::SetTemp { .. }
                | Op::SetOut { .. }
                | Op::SetDepth { .. }
                | Op::SetPred { .. }
                | Op::SetAluResult { .. }
                | Op::Fetch { .. }
                | Op::Kill { .. }
                | Op::UmrtWrite { .. }
                | Op::SemWait
                | Op::SemAcquire { .. }
        )
    }

    /// Whether this operation only computes a value from other values (no
    /// register, output, predicate, memory or lane state).
    pub fn is_value(&self) -> bool {
        !self.has_effect() && !matches!(self, Op::Temp { .. })
    }

    /// Values this operation reads.
    pub fn uses(&self) -> Operands<V> {
        operands!(self, iter, as_ref, |v: &V| *v)
    }

    /// Whether the operation acts on inactive lanes too (`WRITE_INACTIVE`).
    pub fn writes_inactive(&self) -> bool {
        match self {
            Op::SetTemp { gate, .. }
            | Op::SetOut { gate, .. }
            | Op::SetDepth { gate, .. }
            | Op::SetPred { gate, .. }
            | Op::SetAluResult { gate, .. }
            | Op::UmrtWrite { gate, .. } => gate.inactive,
            Op::Fetch { inactive, .. } => *inactive,
            Op::Kill { checks } => checks.iter().any(|c| c.1.inactive),
            _ => false,
        }
    }

    /// The values this operation reads, to rewrite them (same order as
    /// [`Op::uses`]).
    pub fn uses_mut(&mut self) -> Operands<&mut V> {
        operands!(self, iter_mut, as_mut, |v| v)
    }

    /// True for operations whose result may carry an unspecified NaN payload
    /// or an unflushed denormal (IEEE arithmetic); such values must pass
    /// through `Omod` or `Canon` before they are observed (see
    /// [`Program::verify`]).
    pub(super) fn raw_arith(&self) -> bool {
        match self {
            Op::Unary { op, .. } => !matches!(
                op,
                Unary::Neg | Unary::Abs | Unary::Nab | Unary::Omod(_) | Unary::Canon | Unary::Clamp
            ),
            Op::Binary { op, .. } => !matches!(op, Binary::Min | Binary::Max),
            Op::Mad { .. } | Op::Dot { .. } => true,
            _ => false,
        }
    }
}
