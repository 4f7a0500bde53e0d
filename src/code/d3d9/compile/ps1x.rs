//! What only ps_1_x shaders need (`docs/d3d9.md` §6): constants clamped to
//! [−1, 1] and colour inputs to [0, 1] as they are read, the source
//! modifiers (`_bias`, `_bx2`, `1-`, `_x2`, `_dz`, `_dw`), co-issued pairs
//! (both read their sources before either writes), the texture
//! instructions, and the result left in r0.

use super::dest::dst;
use super::dest::{R, to_scratch, write};
use super::emit::{AluOp, HALF, ONE, Unit, Val, ZERO};
use super::emit::{mad, neg_zero};
use super::{CompileError, Compiler};
use crate::d3d9::{Def, Dst, IDENTITY, Inst, Item, Opcode, Reg, RegKind, Src, SrcMod};
use crate::fp;
use std::collections::BTreeSet;

/// The first of the three scratch temporaries of modified sources.
pub(super) const MOD_SCRATCH: usize = 2;
/// The scratch temporary holding a register a co-issued instruction reads
/// while the instruction before it writes that register.
pub(super) const COISSUE_SCRATCH: usize = 5;

const NEG_ONE: u32 = 0xBF80_0000;

/// A ps_1_x constant as the shader reads it: clamped to [−1, 1] by the
/// DPP's MAX then MIN (so NaN reads as −1).
pub fn clamp_constant(x: u32) -> u32 {
    fp::min(fp::max(x, NEG_ONE), fp::ONE)
}

impl Compiler<'_> {
    /// ps_1_x at the start: colour inputs clamped to [0, 1] where they are
    /// loaded; each constant the shader reads and does not define (the
    /// host's, unknown until the run) clamped into a temporary. Defined
    /// constants are clamped when compiled ([`clamp_constant`]).
    pub(super) fn declare_1x(&mut self) -> R {
        if !self.shader.version.is_1x() {
            return Ok(());
        }
        let colours: Vec<u16> = self
            .inputs
            .iter()
            .filter(|(r, _)| r.kind == RegKind::Input)
            .map(|(_, &(_, t))| t)
            .collect();
        for t in colours {
            let v = Val::temp(t);
            let sat = Unit::exact(AluOp::Max, vec![v.clone(), v], true);
            to_scratch(self, t, 0xF, Some(sat.clone()), Some(sat));
        }
        let defined: BTreeSet<u16> = self
            .shader
            .items
            .iter()
            .filter_map(|i| match i {
                Item::Def(Def::Float(n, _)) => Some(*n),
                _ => None,
            })
            .collect();
        let read: BTreeSet<u16> = self
            .shader
            .insts()
            .flat_map(|i| i.src.iter())
            .filter(|s| s.reg.kind == RegKind::Const && !defined.contains(&s.reg.num))
            .map(|s| s.reg.num)
            .collect();
        for n in read {
            let t = self.fresh()?;
            let low = Unit::exact(
                AluOp::Max,
                vec![Val::konst(n), Val::constant(ONE).negated()],
                false,
            );
            to_scratch(self, t, 0xF, Some(low.clone()), Some(low));
            let high = Unit::exact(AluOp::Min, vec![Val::temp(t), Val::constant(ONE)], false);
            to_scratch(self, t, 0xF, Some(high.clone()), Some(high));
            self.clamped.insert(n, t);
        }
        Ok(())
    }

    /// A source with a ps_1_x modifier: the modified register, computed
    /// into a scratch temporary (one MAD, rounded once), read with the
    /// source's swizzle.
    pub(super) fn modified(&mut self, s: &Src) -> Result<Val, CompileError> {
        let plain = Src {
            swizzle: IDENTITY,
            modifier: SrcMod::None,
            ..*s
        };
        let x = self.val(&plain)?;
        let two = Val::reg(self.constant([2.0; 4])?);
        let (half, one) = (Val::constant(HALF), Val::constant(ONE));
        let u = match s.modifier {
            SrcMod::Bias => mad(x, one, half.negated()),
            SrcMod::BiasNeg => mad(x, one.negated(), half),
            SrcMod::Bx2 => mad(x, two, one.negated()),
            SrcMod::Bx2Neg => mad(x, two.negated(), one),
            SrcMod::Comp => mad(x, one.clone().negated(), one),
            SrcMod::X2 => mad(x, two, neg_zero()),
            SrcMod::X2Neg => mad(x, two.negated(), neg_zero()),
            m => return self.error(format!("{m:?} is not an arithmetic source modifier")),
        };
        let t = self.mod_scratch()?;
        to_scratch(self, t, 0xF, Some(u.clone()), Some(u));
        let mut v = Val::temp(t);
        for (c, x) in v.swz.iter_mut().enumerate() {
            *x = crate::d3d9::swizzle_channel(s.swizzle, c) as u8;
        }
        Ok(v)
    }

    /// The next scratch temporary for a modified source of this
    /// instruction.
    fn mod_scratch(&mut self) -> Result<u16, CompileError> {
        if self.mod_next >= 3 {
            return self.error("more than three modified sources in one instruction");
        }
        self.mod_next += 1;
        self.scratch(MOD_SCRATCH + self.mod_next - 1)
    }

    /// Before instruction `k` of the items: a fresh set of modifier
    /// scratch temporaries; when it is followed by a co-issued instruction
    /// that reads what it writes, that register saved for the second to
    /// read (the pair reads its sources before either writes).
    pub(super) fn before_1x(&mut self, k: usize, inst: &Inst) -> R {
        self.mod_next = 0;
        if inst.coissue {
            self.redirect = self.saved.take();
            return Ok(());
        }
        self.redirect = None;
        let next = self.shader.items[k + 1..]
            .iter()
            .find(|i| !matches!(i, Item::Comment(_)));
        let Some(Item::Inst(next)) = next else {
            return Ok(());
        };
        let Some(d) = inst.dst else {
            return Ok(());
        };
        if !next.coissue || !next.src.iter().any(|s| s.reg == d.reg) {
            return Ok(());
        }
        let ct = self.scratch(COISSUE_SCRATCH)?;
        let t = self.temp(d.reg)?;
        let v = Val::temp(t);
        let mv = Unit::exact(AluOp::Max, vec![v.clone(), v], false);
        to_scratch(self, ct, 0xF, Some(mv.clone()), Some(mv));
        self.saved = Some((d.reg, ct));
        Ok(())
    }

    /// ps_1_x's result: r0 into render target A (`oC0`) at the end.
    pub(super) fn result_1x(&mut self) -> R {
        if !self.shader.version.is_1x() {
            return Ok(());
        }
        let t = self.temp(Reg::new(RegKind::Temp, 0))?;
        let v = Val::temp(t);
        let mv = Unit::exact(AluOp::Max, vec![v.clone(), v], false);
        write(
            self,
            &Dst::full(Reg::new(RegKind::ColorOut, 0)),
            None,
            Some(mv.clone()),
            Some(mv),
        )
    }
}

/// ps_1_x's texture instructions: `tex`, `texcoord`, `texkill`; ps_1_4's
/// `texld`, `texcrd`, `texkill`; the addressing ones and `bem` in
/// [`super::texaddr`].
pub(super) fn tex(c: &mut Compiler, i: &Inst) -> R {
    let d = dst(c, i)?;
    match i.op {
        // `tex tN`: stage N at tN's coordinates; `texld rN, src`: stage N
        // at src.
        Opcode::Tex => {
            let coord = match i.src.first() {
                None => c.val(&Src::plain(d.reg))?,
                Some(s) => coordinates(c, s)?,
            };
            super::tex::sample(c, &d, coord, d.reg.num, IDENTITY, false, None)
        }
        // `texcoord tN`: (u, v, w) clamped to [0, 1], and 1.
        Opcode::Texcoord if i.src.is_empty() => {
            let t = c.val(&Src::plain(d.reg))?;
            let rgb = Unit::exact(AluOp::Max, vec![t.clone(), t], true);
            let one = Val::constant(ONE);
            let a = Unit::exact(AluOp::Max, vec![one.clone(), one], false);
            write(c, &d, None, Some(rgb), Some(a))
        }
        // `texcrd rN, src`: the coordinates as they are (the fourth
        // channel is never written).
        Opcode::Texcoord => {
            let coord = coordinates(c, &i.src[0])?;
            let mv = Unit::exact(AluOp::Max, vec![coord.clone(), coord], false);
            let d = Dst {
                mask: d.mask & 7,
                ..d
            };
            write(c, &d, None, Some(mv), None)
        }
        // Kills where x, y or z is negative.
        Opcode::Texkill => super::tex::kill(c, d.reg, d.mask & 7),
        _ => super::texaddr::lower(c, i),
    }
}

/// The coordinates ps_1_4's `texld`/`texcrd` read: the source with its
/// selector, or with `_dz`/`_dw` (x/z, y/z, 1, 1) — 1 for x and y where
/// the divisor is ±0 — computed into a scratch temporary.
fn coordinates(c: &mut Compiler, s: &Src) -> Result<Val, CompileError> {
    let plain = Src {
        modifier: SrcMod::None,
        ..*s
    };
    let x = c.val(&plain)?;
    let k = match s.modifier {
        SrcMod::Dz => 2,
        SrcMod::Dw => 3,
        _ => return Ok(x),
    };
    let t = c.mod_scratch()?;
    let tv = Val::temp(t);
    to_scratch(
        c,
        t,
        8,
        None,
        Some(Unit::new(AluOp::Rcp, vec![x.clone().scalar(k)])),
    );
    to_scratch(
        c,
        t,
        3,
        Some(mad(x.clone(), tv.clone().scalar(3), neg_zero())),
        None,
    );
    let mut quotient = tv.clone();
    quotient.swz = [0, 1, ONE, ONE];
    let mut divisor = x.scalar(k);
    (divisor.abs, divisor.neg) = (true, true);
    divisor.swz[2] = ZERO;
    let one = Val::constant(ONE);
    // −|divisor| ≥ 0 exactly where it is ±0: then 1.
    let select = Unit::exact(AluOp::Cmp, vec![one.clone(), quotient, divisor], false);
    to_scratch(
        c,
        t,
        0xF,
        Some(select),
        Some(Unit::exact(AluOp::Max, vec![one.clone(), one], false)),
    );
    Ok(tv)
}
