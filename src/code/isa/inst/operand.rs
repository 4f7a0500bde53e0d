//! What an instruction reads (`docs/isa.md` §4.3–§4.6): source addresses,
//! inline constants, the ALU's input selections, and what each operation
//! reads.

use super::Alu;
use crate::isa::layout::{FieldError, FieldProblem};
use crate::isa::table::*;

// ----------------------------------------------------------------------------
// Source addresses (§4.3)

/// What a source address names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SrcKind {
    /// Temporary 0–127.
    Temp(u8),
    /// Float constant 0–255.
    Const(u8),
    /// Inline constant, 7-bit code (value: [`inline_value`]).
    Inline(u8),
}

/// One source address with its relative-addressing bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Src {
    /// What is addressed.
    pub kind: SrcKind,
    /// Add aL to the index (never set for inline constants).
    pub rel: bool,
}

impl AddrWord {
    /// Source `k` (0–2).
    pub fn src(&self, k: usize) -> Src {
        let (addr, konst, rel) = self.raw_src(k);
        let kind = if konst {
            SrcKind::Const(addr)
        } else if addr & 0x80 != 0 {
            SrcKind::Inline(addr & 0x7F)
        } else {
            SrcKind::Temp(addr)
        };
        Src { kind, rel }
    }

    /// Sets source `k` (0–2).
    pub fn set_src(&mut self, k: usize, src: Src) {
        let (addr, konst) = match src.kind {
            SrcKind::Temp(n) => (n & 0x7F, false),
            SrcKind::Const(n) => (n, true),
            SrcKind::Inline(x) => (0x80 | (x & 0x7F), false),
        };
        match k {
            0 => (self.addr0, self.addr0_const, self.addr0_rel) = (addr, konst, src.rel),
            1 => (self.addr1, self.addr1_const, self.addr1_rel) = (addr, konst, src.rel),
            2 => (self.addr2, self.addr2_const, self.addr2_rel) = (addr, konst, src.rel),
            _ => panic!("source index {k} out of range"),
        }
    }

    fn raw_src(&self, k: usize) -> (u8, bool, bool) {
        match k {
            0 => (self.addr0, self.addr0_const, self.addr0_rel),
            1 => (self.addr1, self.addr1_const, self.addr1_rel),
            2 => (self.addr2, self.addr2_const, self.addr2_rel),
            _ => panic!("source index {k} out of range"),
        }
    }

    /// Cross-field rule of §4.3: an inline constant must not use `REL`.
    pub fn check(&self) -> Result<(), FieldError> {
        for k in 0..3 {
            let (addr, konst, rel) = self.raw_src(k);
            if !konst && addr & 0x80 != 0 && rel {
                let info = &Self::FIELDS[k * 3 + 2];
                return Err(FieldError {
                    field: info.name,
                    hi: info.hi,
                    lo: info.lo,
                    value: 1,
                    problem: FieldProblem::InlineWithRel,
                });
            }
        }
        Ok(())
    }
}

/// Value of a 7-bit inline constant (§4.3, AMD reading): 4-bit exponent
/// (bias 7), 3-bit mantissa, denormals for exponent 0, no sign.
pub fn inline_value(code: u8) -> f32 {
    let e = i32::from((code >> 3) & 0xF);
    let m = f32::from(code & 7);
    if e == 0 {
        m * 2f32.powi(-9)
    } else {
        (1.0 + m / 8.0) * 2f32.powi(e - 7)
    }
}

/// The inline-constant code whose value is exactly `value`, if any.
pub fn inline_code(value: f32) -> Option<u8> {
    (0..128u8).find(|&c| inline_value(c).to_bits() == value.to_bits())
}

// ----------------------------------------------------------------------------
// Inputs (§4.5)

/// One RGB-unit input: select, per-channel swizzle, modifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct RgbInput {
    /// Which source vector.
    pub sel: Sel,
    /// Swizzle for channels R, G, B.
    pub swz: [Swz; 3],
    /// Modifier applied after the swizzle.
    pub modifier: Mod,
}

/// One alpha-unit input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct AlphaInput {
    /// Which source vector.
    pub sel: Sel,
    /// Component.
    pub swz: Swz,
    /// Modifier applied after the swizzle.
    pub modifier: Mod,
}

impl Alu {
    /// RGB input 0 = A, 1 = B, 2 = C.
    pub fn rgb_input(&self, i: usize) -> RgbInput {
        let (r, c) = (&self.rgb, &self.rgba);
        match i {
            0 => RgbInput {
                sel: r.sel_a,
                swz: [r.red_swiz_a, r.green_swiz_a, r.blue_swiz_a],
                modifier: r.mod_a,
            },
            1 => RgbInput {
                sel: r.sel_b,
                swz: [r.red_swiz_b, r.green_swiz_b, r.blue_swiz_b],
                modifier: r.mod_b,
            },
            2 => RgbInput {
                sel: c.sel_c,
                swz: [c.red_swiz_c, c.green_swiz_c, c.blue_swiz_c],
                modifier: c.mod_c,
            },
            _ => panic!("input index {i} out of range"),
        }
    }

    /// Sets RGB input 0 = A, 1 = B, 2 = C.
    pub fn set_rgb_input(&mut self, i: usize, v: RgbInput) {
        let (r, c) = (&mut self.rgb, &mut self.rgba);
        let [x, y, z] = v.swz;
        match i {
            0 => {
                (
                    r.sel_a,
                    r.red_swiz_a,
                    r.green_swiz_a,
                    r.blue_swiz_a,
                    r.mod_a,
                ) = (v.sel, x, y, z, v.modifier)
            }
            1 => {
                (
                    r.sel_b,
                    r.red_swiz_b,
                    r.green_swiz_b,
                    r.blue_swiz_b,
                    r.mod_b,
                ) = (v.sel, x, y, z, v.modifier)
            }
            2 => {
                (
                    c.sel_c,
                    c.red_swiz_c,
                    c.green_swiz_c,
                    c.blue_swiz_c,
                    c.mod_c,
                ) = (v.sel, x, y, z, v.modifier)
            }
            _ => panic!("input index {i} out of range"),
        }
    }

    /// The alpha inputs the instruction reads: the alpha operation's
    /// arity, and two for an alpha `dp` beside an RGB `dp4`, whose fourth
    /// pair of factors they are (§4.5).
    pub fn alpha_arity(&self) -> usize {
        if self.alpha.op == AlphaOp::Dp && self.rgba.op == RgbOp::Dp4 {
            2
        } else {
            self.alpha.op.arity()
        }
    }

    /// Alpha input 0 = A, 1 = B, 2 = C.
    pub fn alpha_input(&self, i: usize) -> AlphaInput {
        let (a, c) = (&self.alpha, &self.rgba);
        match i {
            0 => AlphaInput {
                sel: a.sel_a,
                swz: a.swiz_a,
                modifier: a.mod_a,
            },
            1 => AlphaInput {
                sel: a.sel_b,
                swz: a.swiz_b,
                modifier: a.mod_b,
            },
            2 => AlphaInput {
                sel: c.alpha_sel_c,
                swz: c.alpha_swiz_c,
                modifier: c.alpha_mod_c,
            },
            _ => panic!("input index {i} out of range"),
        }
    }

    /// Sets alpha input 0 = A, 1 = B, 2 = C.
    pub fn set_alpha_input(&mut self, i: usize, v: AlphaInput) {
        let (a, c) = (&mut self.alpha, &mut self.rgba);
        match i {
            0 => (a.sel_a, a.swiz_a, a.mod_a) = (v.sel, v.swz, v.modifier),
            1 => (a.sel_b, a.swiz_b, a.mod_b) = (v.sel, v.swz, v.modifier),
            2 => (c.alpha_sel_c, c.alpha_swiz_c, c.alpha_mod_c) = (v.sel, v.swz, v.modifier),
            _ => panic!("input index {i} out of range"),
        }
    }
}

impl RgbOp {
    /// Number of inputs (A, B, C) the operation reads.
    pub const fn arity(self) -> usize {
        match self {
            RgbOp::Sop => 0,
            RgbOp::Frc => 1,
            RgbOp::Dp3 | RgbOp::Dp4 | RgbOp::Min | RgbOp::Max => 2,
            RgbOp::Mad | RgbOp::D2a | RgbOp::Cnd | RgbOp::Cmp | RgbOp::Mdh | RgbOp::Mdv => 3,
        }
    }

    /// MIN, MAX, CND, CMP: the only operations that may disable OMOD (§4.7).
    pub const fn is_select(self) -> bool {
        matches!(self, RgbOp::Min | RgbOp::Max | RgbOp::Cnd | RgbOp::Cmp)
    }

    /// DP3, DP4, D2A: the operations an alpha `DP` may pair with (§4.6.2).
    pub const fn is_dot(self) -> bool {
        matches!(self, RgbOp::Dp3 | RgbOp::Dp4 | RgbOp::D2a)
    }
}

impl AlphaOp {
    /// Number of inputs (A, B, C) the operation reads.
    pub const fn arity(self) -> usize {
        match self {
            AlphaOp::Dp => 0,
            AlphaOp::Frc
            | AlphaOp::Ex2
            | AlphaOp::Ln2
            | AlphaOp::Rcp
            | AlphaOp::Rsq
            | AlphaOp::Sin
            | AlphaOp::Cos => 1,
            AlphaOp::Min | AlphaOp::Max => 2,
            AlphaOp::Mad | AlphaOp::Cnd | AlphaOp::Cmp | AlphaOp::Mdh | AlphaOp::Mdv => 3,
        }
    }

    /// MIN, MAX, CND, CMP.
    pub const fn is_select(self) -> bool {
        matches!(
            self,
            AlphaOp::Min | AlphaOp::Max | AlphaOp::Cnd | AlphaOp::Cmp
        )
    }

    /// EX2, LN2, RCP, RSQ, SIN, COS: the operations `SOP` may pair with.
    pub const fn is_transcendental(self) -> bool {
        matches!(
            self,
            AlphaOp::Ex2 | AlphaOp::Ln2 | AlphaOp::Rcp | AlphaOp::Rsq | AlphaOp::Sin | AlphaOp::Cos
        )
    }
}
