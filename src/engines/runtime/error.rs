//! How a run stops: the errors of the runtime shim, each naming the
//! instruction and a pixel.

use super::{MAX_DEPTH, TexFault};
use std::fmt;

/// Which flow-control stack overflowed or underflowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stack {
    /// A processor's branch counter.
    Branch,
    /// The loop stack (LOOP/REP frames).
    Loop,
    /// The address stack (CALL/RET).
    Address,
}

impl fmt::Display for Stack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stack::Branch => "branch counter",
            Stack::Loop => "loop stack",
            Stack::Address => "address stack",
        })
    }
}

/// A program that cannot go on. Every variant names the instruction and a
/// pixel (i, j) it was executing for.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    /// A stack grew past [`MAX_DEPTH`].
    #[error("pc {pc}, pixel {pixel:?}: {stack} overflow (more than {MAX_DEPTH} levels)")]
    Overflow {
        /// Instruction.
        pc: u16,
        /// Stack.
        stack: Stack,
        /// Pixel.
        pixel: (u32, u32),
    },
    /// A pop from an empty stack.
    #[error("pc {pc}, pixel {pixel:?}: {stack} underflow")]
    Underflow {
        /// Instruction.
        pc: u16,
        /// Stack.
        stack: Stack,
        /// Pixel.
        pixel: (u32, u32),
    },
    /// ENDLOOP/BREAKLOOP on a REP frame or ENDREP/BREAKREP on a LOOP frame.
    #[error("pc {pc}, pixel {pixel:?}: {op} does not match the innermost loop frame (a {frame})")]
    FrameMismatch {
        /// Instruction.
        pc: u16,
        /// The FC operation.
        op: &'static str,
        /// The innermost frame's kind.
        frame: &'static str,
        /// Pixel.
        pixel: (u32, u32),
    },
    /// A jump past the end of the program.
    #[error(
        "pc {pc}, pixel {pixel:?}: jump to {target}, past the end of the program ({len} instructions)"
    )]
    JumpOutOfRange {
        /// Instruction.
        pc: u16,
        /// Target.
        target: u16,
        /// Program length.
        len: u16,
        /// Pixel.
        pixel: (u32, u32),
    },
    /// An instruction with an undefined encoding was reached.
    #[error("pc {pc}, pixel {pixel:?}: undefined instruction reached: {reason}")]
    Undefined {
        /// Instruction.
        pc: u16,
        /// Why it cannot execute.
        reason: String,
        /// Pixel.
        pixel: (u32, u32),
    },
    /// The instruction budget ran out: the program does not end.
    #[error(
        "pc {pc}, pixel {pixel:?}: still running after {executed} instructions of one group of quads (budget {budget}); the program looks like it never ends (if it does end, raise the budget: `--budget N`, `Job::budget`)"
    )]
    Runaway {
        /// Where it was.
        pc: u16,
        /// Instructions executed by the group.
        executed: u64,
        /// The budget.
        budget: u64,
        /// Pixel.
        pixel: (u32, u32),
    },
    /// The run was stopped from outside its program: cancelled, or past
    /// its time or instruction limit.
    #[error("pc {pc}, pixel {pixel:?}: stopped: {why}")]
    Stopped {
        /// Where the group was.
        pc: u16,
        /// Why.
        why: super::StopReason,
        /// Pixel.
        pixel: (u32, u32),
    },
    /// The engine could not prepare the program (e.g. code generation
    /// failed as a whole).
    #[error("the {engine} engine cannot run this program: {message}")]
    Engine {
        /// Engine name.
        engine: &'static str,
        /// What went wrong.
        message: String,
    },
    /// The texture unit refused a request.
    #[error("pc {pc}, pixel {pixel:?}: texture unit: {fault}")]
    Texture {
        /// Instruction.
        pc: u16,
        /// The fault.
        fault: TexFault,
        /// Pixel.
        pixel: (u32, u32),
    },
}
