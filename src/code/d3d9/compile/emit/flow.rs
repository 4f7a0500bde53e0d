//! Flow-control constructs as the compiler builds them (`docs/asm.md`,
//! flow control; `docs/isa.md` §6.9): targets are labels, resolved when
//! the program is encoded.

use super::SWZ;
use std::fmt;

/// A label in the compiler's output.
pub type Label = String;

/// What a flow-control construct tests (`docs/asm.md`, flow control).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cond {
    /// Boolean constant bN is false.
    BoolFalse(u16),
    /// The ALU result is zero.
    ResultZero,
    /// The ALU result is not zero.
    ResultNonZero,
    /// Predicate bit `bit` (inverted when `not`) is zero.
    PredZero {
        /// Inverted.
        not: bool,
        /// Bit 0–3.
        bit: u8,
    },
    /// Predicate bit `bit` (inverted when `not`) is not zero.
    PredNonZero {
        /// Inverted.
        not: bool,
        /// Bit 0–3.
        bit: u8,
    },
}

impl fmt::Display for Cond {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = |f: &mut fmt::Formatter<'_>, not: bool, bit: u8| {
            write!(
                f,
                "{}p.{}",
                if not { "!" } else { "" },
                SWZ[usize::from(bit)]
            )
        };
        match *self {
            Cond::BoolFalse(n) => write!(f, "b{n} == 0"),
            Cond::ResultZero => f.write_str("alu_result == 0"),
            Cond::ResultNonZero => f.write_str("alu_result != 0"),
            Cond::PredZero { not, bit } => {
                p(f, not, bit)?;
                f.write_str(" == 0")
            }
            Cond::PredNonZero { not, bit } => {
                p(f, not, bit)?;
                f.write_str(" != 0")
            }
        }
    }
}

/// A flow-control construct (`docs/asm.md`), its target a label.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Flow {
    /// `IF cond -> target`, with `jump=incr` when an ELSE follows.
    If {
        /// The test.
        cond: Cond,
        /// ENDIF+1, or ELSE+1.
        target: Label,
        /// An ELSE follows.
        has_else: bool,
    },
    /// `ELSE -> target` (ENDIF+1).
    Else(Label),
    /// `ENDIF`.
    Endif,
    /// `LOOP iN -> target` or `REP iN -> target` (past the end).
    Loop {
        /// REP rather than LOOP.
        rep: bool,
        /// Integer constant.
        int: u16,
        /// Past the matching end.
        target: Label,
    },
    /// `ENDLOOP iN -> target` or `ENDREP` (the first body instruction).
    EndLoop {
        /// ENDREP rather than ENDLOOP.
        rep: bool,
        /// Integer constant.
        int: u16,
        /// The first body instruction.
        target: Label,
    },
    /// `BREAKLOOP [cond] -> target pop=d` or `BREAKREP`.
    Break {
        /// BREAKREP rather than BREAKLOOP.
        rep: bool,
        /// Only where this holds.
        cond: Option<Cond>,
        /// Past the loop's end.
        target: Label,
        /// IF levels between the loop and the break.
        pop: usize,
    },
    /// `CALL -> target`.
    Call(Label),
    /// `RET`.
    Ret,
    /// `JUMP -> target`.
    Jump(Label),
}

/// A flow-control instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fc {
    /// The construct.
    pub flow: Flow,
    /// Wait for the texture semaphore.
    pub wait: bool,
    /// An idle cycle after it.
    pub nop: bool,
}

impl From<Flow> for Fc {
    fn from(flow: Flow) -> Fc {
        Fc {
            flow,
            wait: false,
            nop: false,
        }
    }
}

/// A construct's mnemonic and what it sets beyond its template.
pub struct Parts<'a> {
    /// The construct (`docs/asm.md`).
    pub name: &'static str,
    /// Its integer constant.
    pub int: Option<u16>,
    /// Its condition.
    pub cond: Option<&'a Cond>,
    /// Its target.
    pub target: Option<&'a Label>,
    /// Its pop count.
    pub pop: Option<usize>,
    /// `jump=incr` (an IF with an ELSE).
    pub jump_incr: bool,
}

impl Flow {
    /// The construct's mnemonic and operands, for the encoder and the
    /// listing alike.
    pub fn parts(&self) -> Parts<'_> {
        let lp = |rep: bool, a: &'static str, b: &'static str| if rep { a } else { b };
        let mut p = Parts {
            name: "",
            int: None,
            cond: None,
            target: None,
            pop: None,
            jump_incr: false,
        };
        match self {
            Flow::If {
                cond,
                target,
                has_else,
            } => {
                (p.name, p.cond, p.target) = ("IF", Some(cond), Some(target));
                p.jump_incr = *has_else;
            }
            Flow::Else(t) => (p.name, p.target) = ("ELSE", Some(t)),
            Flow::Endif => p.name = "ENDIF",
            Flow::Loop { rep, int, target } => {
                (p.name, p.int, p.target) = (lp(*rep, "REP", "LOOP"), Some(*int), Some(target));
            }
            Flow::EndLoop { rep, int, target } => {
                let name = lp(*rep, "ENDREP", "ENDLOOP");
                (p.name, p.int, p.target) = (name, Some(*int), Some(target));
            }
            Flow::Break {
                rep,
                cond,
                target,
                pop,
            } => {
                p.name = lp(*rep, "BREAKREP", "BREAKLOOP");
                (p.cond, p.target, p.pop) = (cond.as_ref(), Some(target), Some(*pop));
            }
            Flow::Call(t) => (p.name, p.target) = ("CALL", Some(t)),
            Flow::Ret => p.name = "RET",
            Flow::Jump(t) => (p.name, p.target) = ("JUMP", Some(t)),
        }
        p
    }
}
