//! What can be wrong with a token stream ([`super::read`]): every kind,
//! with the offset of the token at fault.

use super::{Reg, Version};
use std::fmt;
use thiserror::Error;

/// What is wrong with a token stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadErrorKind {
    /// No tokens at all.
    Empty,
    /// A byte length that is not a whole number of tokens.
    Bytes(usize),
    /// The first token is not a pixel shader's version token.
    NotPixelShader(u32),
    /// A pixel shader version other than 1.1–1.4, 2.0, 2.x and 3.0.
    Version(u32),
    /// The stream ends inside an item, or before `end`.
    Truncated,
    /// Tokens after `end`.
    AfterEnd(usize),
    /// An operation pixel shaders do not have.
    UnknownOpcode(u16),
    /// An operation the shader's version does not have.
    NotInVersion(&'static str, Version),
    /// Reserved bits set.
    Reserved {
        /// The token.
        token: u32,
        /// The reserved bits that are set.
        bits: u32,
    },
    /// The instruction's length field disagrees with its operands.
    Length {
        /// Tokens the instruction token says follow.
        declared: usize,
        /// Tokens its operands take.
        used: usize,
    },
    /// A parameter token (bit 31 set) where an instruction was expected.
    NotAnInstruction(u32),
    /// An instruction token (bit 31 clear) where an operand was expected.
    NotAParameter(u32),
    /// A register type pixel shaders do not have.
    RegisterType(u32),
    /// A register the version does not have.
    NoSuchRegister(Reg, Version),
    /// An operand of the wrong kind.
    Operand {
        /// Which operand.
        what: String,
        /// The register found.
        found: Reg,
        /// What is allowed there.
        expected: &'static str,
    },
    /// Something else about an operand or declaration.
    Invalid(String),
}

impl fmt::Display for ReadErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ReadErrorKind::*;
        match self {
            Empty => write!(f, "no tokens: a shader starts with its version token"),
            Bytes(n) => write!(f, "{n} bytes is not a whole number of 32-bit tokens"),
            NotPixelShader(t) if t >> 16 == 0xFFFE => {
                write!(f, "version token {t:#010x} is a vertex shader's")
            }
            NotPixelShader(t) => write!(
                f,
                "{t:#010x} is not a pixel shader version token (0xFFFFmmnn)"
            ),
            Version(t) => write!(
                f,
                "pixel shader version {}.{} is not supported (ps_1_1–ps_1_4, ps_2_0, ps_2_x, ps_3_0)",
                (t >> 8) & 0xFF,
                t & 0xFF
            ),
            Truncated => write!(f, "the tokens end inside an item (or before `end`)"),
            AfterEnd(n) => write!(f, "{n} token(s) after `end`"),
            UnknownOpcode(c) => write!(f, "opcode {c} is not a pixel shader operation"),
            NotInVersion(op, v) => write!(f, "`{op}` is not available in {}", v.name()),
            Reserved { token, bits } => {
                write!(f, "token {token:#010x} sets reserved bits {bits:#010x}")
            }
            Length { declared, used } => write!(
                f,
                "the instruction token says {declared} token(s) follow, its operands take {used}"
            ),
            NotAnInstruction(t) => write!(
                f,
                "{t:#010x} is a parameter token (bit 31) where an instruction was expected"
            ),
            NotAParameter(t) => write!(
                f,
                "{t:#010x} is not a parameter token (bit 31 clear) where an operand was expected"
            ),
            RegisterType(c) => write!(f, "register type {c} is not a pixel shader register"),
            NoSuchRegister(r, v) => write!(f, "{} has no register {r}", v.name()),
            Operand {
                what,
                found,
                expected,
            } => write!(f, "{what}: {found} is not allowed (expected {expected})"),
            Invalid(m) => write!(f, "{m}"),
        }
    }
}

/// A token stream that is not a valid pixel shader.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("token {offset}: {kind}")]
pub struct ReadError {
    /// The offending token (0 is the version token).
    pub offset: usize,
    /// What is wrong.
    pub kind: ReadErrorKind,
}
