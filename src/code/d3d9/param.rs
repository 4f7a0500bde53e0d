//! Reading parameter tokens (Microsoft, "Shader codes"): register number
//! [10:0], type [30:28] and [12:11], relative addressing [13], reserved
//! [15:14], 1 [31]; a destination's write mask [19:16], result modifier
//! [23:20] and ps_1_x result shift [27:24]; a source's swizzle [23:16] and
//! modifier [27:24]; each checked against the shader's version.

use super::error::{ReadError, ReadErrorKind};
use super::{Dst, Reg, RegKind, Rel, Src, SrcMod, Version};

/// The operand tokens of one instruction.
pub(super) struct Operands<'a> {
    pub(super) version: Version,
    pub(super) tokens: &'a [u32],
    /// Offset of `tokens[0]` in the stream.
    pub(super) base: usize,
    pub(super) next: usize,
}

/// What a source operand position accepts.
#[derive(Clone, Copy)]
pub(super) enum Want {
    /// Arithmetic: r, v, c, t, vPos/vFace.
    Value,
    Sampler,
    Bool,
    Int,
    Label,
    Loop,
    Predicate,
    /// `callnz`'s condition: a bool constant or the predicate.
    BoolOrPred,
    /// ps_1_x texture instructions: a texture register t#.
    Texture,
    /// ps_1_4's `texld`/`texcrd`: t# or r#.
    Coordinate,
    /// `texm3x3spec`'s eye vector: a constant c#.
    Const,
}

impl Want {
    fn allows(self, k: RegKind) -> bool {
        use RegKind::*;
        match self {
            Want::Value => matches!(k, Temp | Input | Const | Texture | Misc),
            Want::Sampler => k == Sampler,
            Want::Bool => k == ConstBool,
            Want::Int => k == ConstInt,
            Want::Label => k == Label,
            Want::Loop => k == Loop,
            Want::Predicate => k == Predicate,
            Want::BoolOrPred => matches!(k, ConstBool | Predicate),
            Want::Texture => k == Texture,
            Want::Coordinate => matches!(k, Texture | Temp),
            Want::Const => k == Const,
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Want::Value => "r#, v#, c#, t#, vPos or vFace",
            Want::Sampler => "a sampler s#",
            Want::Bool => "a bool constant b#",
            Want::Int => "an integer constant i#",
            Want::Label => "a label l#",
            Want::Loop => "aL",
            Want::Predicate => "p0",
            Want::BoolOrPred => "b# or p0",
            Want::Texture => "a texture register t#",
            Want::Coordinate => "t# or r#",
            Want::Const => "a constant c#",
        }
    }
}

impl Operands<'_> {
    pub(super) fn err<T>(&self, kind: ReadErrorKind) -> Result<T, ReadError> {
        Err(ReadError {
            offset: self.base + self.next.saturating_sub(1),
            kind,
        })
    }

    /// The next operand token (bit 31 set).
    pub(super) fn token(&mut self) -> Result<u32, ReadError> {
        let t = self.raw()?;
        if t >> 31 == 0 {
            return self.err(ReadErrorKind::NotAParameter(t));
        }
        Ok(t)
    }

    /// The next token as it is (a def's value); running past the declared
    /// length is a length error at the instruction.
    pub(super) fn raw(&mut self) -> Result<u32, ReadError> {
        let Some(&t) = self.tokens.get(self.next) else {
            return Err(ReadError {
                offset: self.base - 1,
                kind: ReadErrorKind::Length {
                    declared: self.tokens.len(),
                    used: self.next + 1,
                },
            });
        };
        self.next += 1;
        Ok(t)
    }

    pub(super) fn reserved(&self, token: u32, bits: u32) -> Result<(), ReadError> {
        if token & bits != 0 {
            return self.err(ReadErrorKind::Reserved {
                token,
                bits: token & bits,
            });
        }
        Ok(())
    }

    /// The register of a parameter token, checked against the version.
    pub(super) fn reg(&self, t: u32) -> Result<Reg, ReadError> {
        let code = ((t >> 28) & 7) | ((t >> 8) & 0x18);
        let Some(kind) = RegKind::from_code(code) else {
            return self.err(ReadErrorKind::RegisterType(code));
        };
        let reg = Reg::new(kind, (t & 0x7FF) as u16);
        if reg.num >= self.version.count(kind) {
            return self.err(ReadErrorKind::NoSuchRegister(reg, self.version));
        }
        Ok(reg)
    }

    pub(super) fn dst(
        &mut self,
        what: &str,
        allowed: &[RegKind],
        expected: &'static str,
    ) -> Result<Dst, ReadError> {
        let t = self.token()?;
        let one_x = self.version.is_1x();
        self.reserved(t, if one_x { 0 } else { 0x0F00_0000 } | 0x0000_C000)?;
        if t & (1 << 13) != 0 {
            return self.err(ReadErrorKind::Invalid(format!(
                "{what}: relative addressing of a destination is not available in pixel shaders"
            )));
        }
        let reg = self.reg(t)?;
        if !allowed.contains(&reg.kind) {
            return self.err(ReadErrorKind::Operand {
                what: what.into(),
                found: reg,
                expected,
            });
        }
        if (t >> 16) & 0xF == 0 {
            return self.err(ReadErrorKind::Invalid(format!(
                "{what}: the write mask is empty"
            )));
        }
        let m = (t >> 20) & 0xF;
        if m & 8 != 0 || (one_x && m & 4 != 0) {
            return self.err(ReadErrorKind::Invalid(format!(
                "{what}: result modifier {m:#x} is not one of _sat, _pp{}",
                if one_x { "" } else { ", _centroid" }
            )));
        }
        let shift = match (t >> 24) & 0xF {
            0 => 0,
            s @ 1..=3 => s as i8,
            s @ 0xD..=0xF => s as i8 - 16,
            s => {
                return self.err(ReadErrorKind::Invalid(format!(
                    "{what}: result shift {s} is not one of _x2, _x4, _x8, _d2, _d4, _d8"
                )));
            }
        };
        if self.version < Version::Ps14 && !(-1..=2).contains(&shift) {
            return self.err(ReadErrorKind::Invalid(format!(
                "{what}: {} has the result shifts _x2, _x4 and _d2 (_x8, _d4, _d8 are ps_1_4's)",
                self.version.name()
            )));
        }
        Ok(Dst {
            reg,
            mask: ((t >> 16) & 0xF) as u8,
            sat: m & 1 != 0,
            pp: m & 2 != 0,
            centroid: m & 4 != 0,
            shift,
        })
    }

    pub(super) fn src(&mut self, what: &str, want: Want) -> Result<Src, ReadError> {
        let t = self.token()?;
        self.reserved(t, 0x0000_C000)?;
        let reg = self.reg(t)?;
        if !want.allows(reg.kind) {
            return self.err(ReadErrorKind::Operand {
                what: what.into(),
                found: reg,
                expected: want.describe(),
            });
        }
        let code = (t >> 24) & 0xF;
        let one_x = self.version.is_1x();
        let modifier = match SrcMod::from_code(code) {
            None => {
                return self.err(ReadErrorKind::Invalid(format!(
                    "{what}: source modifier {code} is not defined"
                )));
            }
            Some(SrcMod::Not) if reg.kind != RegKind::Predicate => {
                return self.err(ReadErrorKind::Invalid(format!(
                    "{what}: `!` applies only to the predicate register"
                )));
            }
            Some(m) if m.is_1x() && !one_x => {
                return self.err(ReadErrorKind::Invalid(format!(
                    "{what}: source modifier {code} exists only in ps_1_x (2.0 and later have -, _abs, !)"
                )));
            }
            Some(SrcMod::Abs | SrcMod::AbsNeg) if one_x => {
                return self.err(ReadErrorKind::Invalid(format!(
                    "{what}: _abs exists in ps_2_0 and later"
                )));
            }
            Some(SrcMod::X2 | SrcMod::X2Neg) if self.version < Version::Ps14 => {
                return self.err(ReadErrorKind::Invalid(format!(
                    "{what}: the source modifier _x2 is ps_1_4's"
                )));
            }
            Some(m) => m,
        };
        let modifiable = matches!(want, Want::Value | Want::Texture | Want::Coordinate);
        if modifier != SrcMod::None && modifier != SrcMod::Not && !modifiable {
            return self.err(ReadErrorKind::Invalid(format!(
                "{what}: {reg} takes no source modifier"
            )));
        }
        let rel = if t & (1 << 13) != 0 {
            if !matches!(reg.kind, RegKind::Const | RegKind::Input) || self.version < Version::Ps30
            {
                return self.err(ReadErrorKind::Invalid(format!(
                    "{what}: relative addressing of {reg} is not available in {}",
                    self.version.name()
                )));
            }
            let a = self.token()?;
            self.reserved(a, 0x0F00_E000)?;
            let ar = self.reg(a)?;
            if ar.kind != RegKind::Loop {
                return self.err(ReadErrorKind::Operand {
                    what: format!("{what}'s relative address"),
                    found: ar,
                    expected: "aL",
                });
            }
            Some(Rel {
                reg: ar,
                swizzle: ((a >> 16) & 0xFF) as u8,
            })
        } else {
            None
        };
        Ok(Src {
            reg,
            rel,
            swizzle: ((t >> 16) & 0xFF) as u8,
            modifier,
        })
    }
}
