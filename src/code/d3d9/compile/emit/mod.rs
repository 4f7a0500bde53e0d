//! DPP instructions as the compiler builds them: typed operands,
//! destinations, predicates and flow control, so that the passes work on
//! registers and opcodes, never on text. [`program_text`] writes the
//! result in the assembly syntax of `docs/asm.md` for the assembler to
//! encode and check.

use crate::d3d9::op::Compare;
use std::fmt::{self, Write};

mod encode;
mod flow;
mod text;
pub use encode::encode;
pub use flow::{Cond, Fc, Flow, Label};
pub use text::program_text;

/// Swizzle codes of a DPP input channel: 0–3 r g b a, then the constants.
pub const ZERO: u8 = 4;
/// The swizzle constant 1.0.
pub const ONE: u8 = 6;
/// The swizzle constant 0.5 (`h`).
pub const HALF: u8 = 5;

const SWZ: [char; 7] = ['r', 'g', 'b', 'a', '0', 'h', '1'];

/// `a · b + c`.
pub fn mad(a: Val, b: Val, c: Val) -> Unit {
    Unit::new(AluOp::Mad, vec![a, b, c])
}

/// `-0.0`: adding it leaves every value (and −0) unchanged.
pub fn neg_zero() -> Val {
    Val::constant(ZERO).negated()
}

/// The value with channel x, y, z, w taken from `perm` of its channels.
pub fn permute(v: &Val, perm: [usize; 4]) -> Val {
    let mut out = v.clone();
    out.swz = perm.map(|k| v.swz[k]);
    out
}

/// The comparison `a CMP b` as (left − right, test against 0) so that the
/// test is true exactly when the comparison is.
pub fn compare(cmp: Compare, a: Val, b: Val) -> (Unit, Test) {
    let diff = |x: Val, y: Val| mad(x, Val::constant(ONE), y.negated());
    match cmp {
        Compare::Gt => (diff(b, a), Test::Lt),
        Compare::Lt => (diff(a, b), Test::Lt),
        Compare::Ge => (diff(a, b), Test::Ge),
        Compare::Le => (diff(b, a), Test::Ge),
        Compare::Eq => (diff(a, b), Test::Eq),
        Compare::Ne => (diff(a, b), Test::Ne),
    }
}

/// The R, G, B, A letters of a write mask (`"rga"`).
pub fn mask_letters(mask: u8) -> String {
    "rgba"
        .chars()
        .enumerate()
        .filter(|(c, _)| mask & (1 << c) != 0)
        .map(|(_, ch)| ch)
        .collect()
}

/// What an instruction reads through a source slot (`srcN=`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Operand {
    /// Temporary rN.
    Temp(u16),
    /// Temporary r[aL+N].
    TempRel(u16),
    /// Constant cN.
    Const(u16),
    /// Constant c[aL+N].
    ConstRel(u16),
    /// An inline constant (one [`crate::isa::inline_code`] encodes).
    Inline(f32),
}

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Operand::Temp(n) => write!(f, "r{n}"),
            Operand::TempRel(n) => write!(f, "r[aL+{n}]"),
            Operand::Const(n) => write!(f, "c{n}"),
            Operand::ConstRel(n) => write!(f, "c[aL+{n}]"),
            Operand::Inline(v) => write!(f, "{v:?}"),
        }
    }
}

/// A register as the passes see it: what an instruction reads or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reg {
    /// Temporary rN.
    Temp(u16),
    /// Constant cN (never written).
    Const(u16),
    /// Render target 0–3.
    Target(u8),
    /// The conditional value.
    Depth,
    /// The predicate bits.
    Pred,
}

impl Operand {
    /// The register it reads; `None` when relative addressing makes it
    /// any (and `Some(None)` for an inline constant, which is none).
    pub fn reg(&self) -> Option<Option<Reg>> {
        match *self {
            Operand::Temp(n) => Some(Some(Reg::Temp(n))),
            Operand::Const(n) => Some(Some(Reg::Const(n))),
            Operand::Inline(_) => Some(None),
            Operand::TempRel(_) | Operand::ConstRel(_) => None,
        }
    }
}

/// A value read by an instruction: an operand, the channel each of x, y,
/// z, w takes, and sign modifiers.
#[derive(Clone, Debug, PartialEq)]
pub struct Val {
    /// The operand (`None`: only swizzle constants are read).
    pub opnd: Option<Operand>,
    /// Per channel: 0–3 a channel of the operand, or ZERO/HALF/ONE.
    pub swz: [u8; 4],
    /// Negate (after abs).
    pub neg: bool,
    /// Absolute value.
    pub abs: bool,
}

impl Val {
    /// The operand with its channels in order.
    pub fn reg(opnd: Operand) -> Val {
        Val {
            opnd: Some(opnd),
            swz: [0, 1, 2, 3],
            neg: false,
            abs: false,
        }
    }

    /// Temporary rN with its channels in order.
    pub fn temp(n: u16) -> Val {
        Val::reg(Operand::Temp(n))
    }

    /// Constant cN with its channels in order.
    pub fn konst(n: u16) -> Val {
        Val::reg(Operand::Const(n))
    }

    /// A swizzle constant in every channel (no operand needed).
    pub fn constant(code: u8) -> Val {
        Val {
            opnd: None,
            swz: [code; 4],
            neg: false,
            abs: false,
        }
    }

    /// The same value negated.
    pub fn negated(mut self) -> Val {
        self.neg = !self.neg;
        self
    }

    /// Channel `c` replicated.
    pub fn scalar(mut self, c: usize) -> Val {
        self.swz = [self.swz[c]; 4];
        self
    }

    /// Whether it reads no operand.
    fn is_constant(&self) -> bool {
        self.swz.iter().all(|&s| s >= ZERO)
    }
}

/// An ALU operation, by its assembly mnemonic (`docs/asm.md`); the same
/// name on either unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum AluOp {
    Mad,
    Max,
    Min,
    Cmp,
    Cnd,
    Dp3,
    Dp4,
    D2a,
    /// The alpha unit's half of a dot product.
    Dp,
    /// The RGB unit's copy of a transcendental alpha result.
    Sop,
    Frc,
    Ex2,
    Ln2,
    Rcp,
    Rsq,
    Sin,
    Cos,
    /// Horizontal derivative.
    Mdh,
    /// Vertical derivative.
    Mdv,
}

impl AluOp {
    /// The mnemonic.
    pub fn name(self) -> &'static str {
        use AluOp::*;
        match self {
            Mad => "mad",
            Max => "max",
            Min => "min",
            Cmp => "cmp",
            Cnd => "cnd",
            Dp3 => "dp3",
            Dp4 => "dp4",
            D2a => "d2a",
            Dp => "dp",
            Sop => "sop",
            Frc => "frc",
            Ex2 => "ex2",
            Ln2 => "ln2",
            Rcp => "rcp",
            Rsq => "rsq",
            Sin => "sin",
            Cos => "cos",
            Mdh => "mdh",
            Mdv => "mdv",
        }
    }

    /// A derivative (needs an idle cycle before it, `docs/isa.md` §8.2).
    pub fn is_derivative(self) -> bool {
        matches!(self, AluOp::Mdh | AluOp::Mdv)
    }
}

/// One unit's operation and inputs.
#[derive(Clone, Debug)]
pub struct Unit {
    /// The operation.
    pub op: AluOp,
    /// Its inputs in order.
    pub inputs: Vec<Val>,
    /// The output modifier: `.off` for bit-exact selections.
    pub off: bool,
    /// Clamp to [0, 1].
    pub sat: bool,
    /// Output scale 2^omod (−3..=3; ps_1_x's result shifts).
    pub omod: i8,
}

impl Unit {
    /// `op(inputs…)`.
    pub fn new(op: AluOp, inputs: Vec<Val>) -> Unit {
        Unit {
            op,
            inputs,
            off: false,
            sat: false,
            omod: 0,
        }
    }

    /// A selection with the modifier disabled (bit-exact), unless clamped.
    pub fn exact(op: AluOp, inputs: Vec<Val>, sat: bool) -> Unit {
        Unit {
            op,
            inputs,
            off: !sat,
            sat,
            omod: 0,
        }
    }

    /// Whether the unit computes a derivative.
    fn is_derivative(u: &Option<Unit>) -> bool {
        u.as_ref().is_some_and(|u| u.op.is_derivative())
    }
}

/// A comparison with zero (`docs/isa.md` §4.8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Test {
    /// `< 0`.
    Lt,
    /// `>= 0`.
    Ge,
    /// `== 0`.
    Eq,
    /// `!= 0`.
    Ne,
}

impl fmt::Display for Test {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Test::Lt => "<0",
            Test::Ge => ">=0",
            Test::Eq => "==0",
            Test::Ne => "!=0",
        })
    }
}

/// Where an ALU or OUTPUT unit writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dst {
    /// Temporary rN, these channels (bit 0 r … bit 3 a).
    Temp(u16, u8),
    /// Render target 0–3 (OUTPUT), these channels.
    Target(u8, u8),
    /// The conditional value (OUTPUT, alpha unit).
    Depth,
    /// Predicate bits of these channels, set where the result passes.
    Pred(u8, Test),
}

impl Dst {
    /// The register written.
    pub fn reg(&self) -> Reg {
        match *self {
            Dst::Temp(n, _) => Reg::Temp(n),
            Dst::Target(k, _) => Reg::Target(k),
            Dst::Depth => Reg::Depth,
            Dst::Pred(..) => Reg::Pred,
        }
    }

    /// Whether it sets predicate bits.
    pub fn is_pred(&self) -> bool {
        matches!(self, Dst::Pred(..))
    }
}

impl fmt::Display for Dst {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Dst::Temp(n, m) => write!(f, "r{n}.{}", mask_letters(m)),
            Dst::Target(k, m) => write!(
                f,
                "rt{}.{}",
                ["A", "B", "C", "D"][usize::from(k & 3)],
                mask_letters(m)
            ),
            Dst::Depth => f.write_str("depth"),
            Dst::Pred(m, t) => write!(f, "p.{}{t}", mask_letters(m)),
        }
    }
}

/// A predicate selection: which predicate bit each of r, g, b, a follows,
/// possibly inverted (`docs/isa.md` §4.9).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pred {
    /// Write where the bit is clear.
    pub not: bool,
    /// The bit (0–3) each channel follows.
    pub chans: [u8; 4],
}

impl Pred {
    /// Each channel its own bit.
    pub fn own(not: bool) -> Pred {
        Pred {
            not,
            chans: [0, 1, 2, 3],
        }
    }

    /// Every channel bit `c`.
    pub fn replicate(not: bool, c: u8) -> Pred {
        Pred { not, chans: [c; 4] }
    }
}

impl fmt::Display for Pred {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.not {
            f.write_str("!")?;
        }
        for c in self.chans {
            f.write_char(SWZ[usize::from(c)])?;
        }
        Ok(())
    }
}

/// An ALU or OUTPUT instruction.
#[derive(Clone, Debug, Default)]
pub struct Alu {
    /// OUTPUT rather than ALU.
    pub out: bool,
    /// RGB unit (None: computes nothing useful, writes nothing).
    pub rgb: Option<Unit>,
    /// Alpha unit.
    pub alpha: Option<Unit>,
    /// RGB destinations.
    pub rgb_dst: Vec<Dst>,
    /// Alpha destinations.
    pub alpha_dst: Vec<Dst>,
    /// The ALU result: the alpha unit's result tested against zero.
    pub res: Option<Test>,
    /// Predication of the RGB unit's writes.
    pub pred: Option<Pred>,
    /// Predication of the alpha unit's writes.
    pub apred: Option<Pred>,
    /// Wait for the texture semaphore.
    pub wait: bool,
    /// An idle cycle after it (before derivatives, `docs/isa.md` §8.2).
    pub nop: bool,
    /// Processors may end after it.
    pub last: bool,
}

impl Alu {
    /// Whether a unit computes a derivative.
    pub fn has_derivative(&self) -> bool {
        Unit::is_derivative(&self.rgb) || Unit::is_derivative(&self.alpha)
    }

    /// The source slots both units share (at most three: the same operand
    /// for the RGB and the alpha address), in order of first use.
    pub fn slots(&self) -> Result<Vec<Operand>, String> {
        let mut slots: Vec<Operand> = Vec::new();
        for u in self.rgb.iter().chain(self.alpha.iter()) {
            for v in &u.inputs {
                if v.is_constant() {
                    continue;
                }
                let Some(o) = v.opnd else { continue };
                if !slots.contains(&o) {
                    slots.push(o);
                }
            }
        }
        if slots.len() > 3 {
            return Err(format!("more than three operands: {slots:?}"));
        }
        Ok(slots)
    }
}

/// A texture instruction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lookup {
    /// `kill` rather than `ld`.
    pub kill: bool,
    /// Destination temporary (for `kill`: the tested one).
    pub dst: u16,
    /// Its channels written (tested).
    pub mask: u8,
    /// Input surface.
    pub input: u8,
    /// Which fetched channel goes to destination r, g, b, a.
    pub chan: [u8; 4],
    /// Coordinate temporary (all four channels).
    pub coord: u16,
    /// Unscaled coordinates.
    pub unscaled: bool,
    /// Take the semaphore (and wait first).
    pub acquire: bool,
    /// Wait before issuing.
    pub wait: bool,
    /// Predication of R, G, B.
    pub pred: Option<Pred>,
    /// Predication of A.
    pub apred: Option<Pred>,
}

impl Lookup {
    /// A lookup of `input` at the texel coordinates in `coord` into all of
    /// `dst`, channels in order, nothing else set.
    pub fn load(dst: u16, input: u8, coord: u16) -> Lookup {
        Lookup {
            kill: false,
            dst,
            mask: 0xF,
            input,
            chan: [0, 1, 2, 3],
            coord,
            unscaled: true,
            acquire: false,
            wait: false,
            pred: None,
            apred: None,
        }
    }
}

/// A DPP instruction (or a label) in the compiler's output.
#[derive(Clone, Debug)]
pub enum Dpp {
    /// A label on the next instruction.
    Label(Label),
    /// ALU or OUTPUT.
    Alu(Alu),
    /// A lookup or a kill.
    Tex(Lookup),
    /// Flow control.
    Fc(Fc),
}

impl Dpp {
    /// Flow control.
    pub fn flow(flow: Flow) -> Dpp {
        Dpp::Fc(flow.into())
    }

    /// Makes the instruction wait for the semaphore.
    pub fn set_wait(&mut self) {
        match self {
            Dpp::Alu(a) => a.wait = true,
            Dpp::Tex(t) => t.wait = true,
            Dpp::Fc(f) => f.wait = true,
            Dpp::Label(_) => {}
        }
    }

    /// Gives the instruction an idle cycle after it (labels and lookups
    /// have none).
    pub fn set_nop(&mut self) {
        match self {
            Dpp::Alu(a) => a.nop = true,
            Dpp::Fc(f) => f.nop = true,
            Dpp::Tex(_) | Dpp::Label(_) => {}
        }
    }
}
