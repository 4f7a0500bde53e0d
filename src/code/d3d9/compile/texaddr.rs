//! ps_1_x's texture addressing instructions (`docs/d3d9.md` §6.4): lookups
//! at coordinates computed from an earlier lookup — bump environment
//! mapping (`texbem`, `texbeml`, ps_1_4's `bem`), channel reads
//! (`texreg2ar`, `texreg2gb`, `texreg2rgb`), the 3×2 and 3×3 matrix
//! products (`texm3x2*`, `texm3x3*`, `texdp3*`) — and the depth outputs
//! (`texm3x2depth`, `texdepth`). The destination's number is the texture
//! stage: its sampler, its coordinates and its bump-environment values.

use super::dest::dst;
use super::dest::{R, to_scratch, write};
use super::emit::{AluOp, ONE, Unit, Val, ZERO};
use super::emit::{mad, neg_zero, permute};
use super::tex::sample;
use super::{CompileError, Compiler};
use crate::d3d9::{Dst, IDENTITY, Inst, Opcode, Reg, RegKind, Src};

/// Scratch temporaries of these expansions: the computed coordinates or
/// normal, a second one for the reflection's terms, and the eye vector.
const COORD: usize = 6;
const AUX: usize = 7;
const EYE: usize = 1;

impl Compiler<'_> {
    /// The constant holding stage `n`'s bump-environment matrix (m00,
    /// m01, m10, m11; `bumpenvN` in the map) or, with `luminance`, its
    /// luminance scale and offset (`bumpenvlN`: scale, offset, –, –).
    fn bumpenv(&mut self, n: u16, luminance: bool) -> Result<u16, CompileError> {
        if let Some(&c) = self.bumpenv.get(&(n, luminance)) {
            return Ok(c);
        }
        let c = self.const_slot()?;
        self.bumpenv.insert((n, luminance), c);
        Ok(c)
    }

    /// Texture register `n`'s current value (its coordinates until a
    /// texture instruction writes it).
    fn texture(&mut self, n: u16) -> Result<Val, CompileError> {
        self.val(&Src::plain(Reg::new(RegKind::Texture, n)))
    }

    /// The register `back` numbers below `d`: the pad before a matrix
    /// instruction (an error when there is none).
    fn pad(&mut self, d: &Dst, back: u16) -> Result<Val, CompileError> {
        match d.reg.num.checked_sub(back) {
            Some(n) => self.texture(n),
            None => self.error(format!(
                "{} has no texture register {back} below it for the matrix's rows",
                d.reg
            )),
        }
    }
}

/// A move of `v`'s channels (exact).
fn mov(v: Val) -> Unit {
    Unit::exact(AluOp::Max, vec![v.clone(), v], false)
}

/// The DPP's dot product of R, G, B (both units).
fn dot3(a: Val, b: Val) -> (Option<Unit>, Option<Unit>) {
    (
        Some(Unit::new(AluOp::Dp3, vec![a, b])),
        Some(Unit::new(AluOp::Dp, vec![])),
    )
}

/// `value` with channels `perm` of it.
fn pick(v: &Val, perm: [usize; 4]) -> Val {
    permute(v, perm)
}

/// `(u, v) + (m00, m01)·du + (m10, m11)·dv` into `s`'s R and G: `uv` the
/// coordinates, `d` (du, dv), `bump` the matrix constant; two MADs.
fn bump_step(c: &mut Compiler, s: u16, uv: Val, d: &Val, bump: u16) {
    let m = Val::konst(bump);
    let first = mad(d.clone().scalar(0), pick(&m, [0, 1, 1, 1]), uv);
    to_scratch(c, s, 3, Some(first), None);
    let sv = Val::temp(s);
    let second = mad(d.clone().scalar(1), pick(&m, [2, 3, 3, 3]), sv);
    to_scratch(c, s, 3, Some(second), None);
}

/// `x / y` with 1 where y is ±0, into the depth output: the reciprocal
/// into `s`.a, the product into `s`.r, then the selection.
fn depth(c: &mut Compiler, s: u16, x: Val, y: Val) -> R {
    to_scratch(c, s, 8, None, Some(Unit::new(AluOp::Rcp, vec![y.clone()])));
    let sv = Val::temp(s);
    to_scratch(
        c,
        s,
        1,
        Some(mad(x, sv.clone().scalar(3), neg_zero())),
        None,
    );
    let mut zero = y;
    (zero.abs, zero.neg) = (true, true);
    let select = Unit::exact(
        AluOp::Cmp,
        vec![Val::constant(ONE), sv.scalar(0), zero],
        false,
    );
    let d = Dst {
        mask: 1,
        ..Dst::full(Reg::new(RegKind::DepthOut, 0))
    };
    write(c, &d, None, Some(select), None)
}

/// One texture addressing instruction, or `bem`.
pub(super) fn lower(c: &mut Compiler, i: &Inst) -> R {
    use Opcode::*;
    let d = dst(c, i)?;
    let stage = d.reg.num;
    let whole = Dst {
        mask: 0xF,
        shift: 0,
        sat: false,
        ..d
    };
    if i.op == Texdepth {
        // depth = r5.r / r5.g.
        let r5 = c.val(&Src::plain(d.reg))?;
        let s = c.scratch(COORD)?;
        return depth(c, s, r5.clone().scalar(0), r5.scalar(1));
    }
    if i.op == Bem {
        return bem(c, i, d);
    }
    let own = c.val(&Src::plain(d.reg))?;
    let src = c.val(&i.src[0])?;
    let s = c.scratch(COORD)?;
    let sv = Val::temp(s);
    match i.op {
        Texbem | Texbeml => {
            let bump = c.bumpenv(stage, false)?;
            let lit = i.op == Texbeml;
            if lit {
                // The luminance factor b · scale + offset, in `s`.a.
                let l = Val::konst(c.bumpenv(stage, true)?);
                let f = mad(src.clone().scalar(2), l.clone().scalar(0), l.scalar(1));
                to_scratch(c, s, 8, None, Some(f));
            }
            bump_step(c, s, own, &src, bump);
            sample(c, &whole, sv.clone(), stage, IDENTITY, false, None)?;
            if lit {
                // × (luminance · scale + offset), every channel.
                let t = c.val(&Src::plain(d.reg))?;
                let u = mad(t, sv.scalar(3), neg_zero());
                write(c, &whole, None, Some(u.clone()), Some(u))?;
            }
            Ok(())
        }
        Texreg2ar | Texreg2gb | Texreg2rgb => {
            let perm = match i.op {
                Texreg2ar => [3, 0, 0, 0],
                Texreg2gb => [1, 2, 2, 2],
                _ => [0, 1, 2, 2],
            };
            sample(c, &whole, pick(&src, perm), stage, IDENTITY, false, None)
        }
        Texm3x2pad | Texm3x3pad => {
            // The row's dot product, kept in the register's x.
            let (rgb, alpha) = dot3(own, src);
            write(c, &Dst { mask: 1, ..whole }, None, rgb, alpha)
        }
        Texdp3 => {
            let (rgb, alpha) = dot3(own, src);
            write(c, &whole, None, rgb, alpha)
        }
        Texdp3tex => {
            let (rgb, alpha) = dot3(own, src);
            to_scratch(c, s, 1, rgb, alpha);
            let mut uv = sv;
            uv.swz = [0, ZERO, ZERO, ZERO];
            sample(c, &whole, uv, stage, IDENTITY, false, None)
        }
        Texm3x2tex | Texm3x2depth => {
            let u = c.pad(&d, 1)?;
            to_scratch(c, s, 1, Some(mov(u.scalar(0))), None);
            let (rgb, alpha) = dot3(own, src);
            to_scratch(c, s, 2, rgb, alpha);
            if i.op == Texm3x2depth {
                let aux = c.scratch(AUX)?;
                return depth(c, aux, sv.clone().scalar(0), sv.scalar(1));
            }
            sample(c, &whole, sv, stage, IDENTITY, false, None)
        }
        Texm3x3tex | Texm3x3 | Texm3x3spec | Texm3x3vspec => matrix3(c, i, &whole, own, src),
        op => c.error(format!(
            "`{}` is not a texture addressing instruction",
            op.name()
        )),
    }
}

/// `bem rD.rg, a, b` (ps_1_4): rD.rg = a.rg + (m00, m01)·b.r + (m10,
/// m11)·b.g, the second MAD with the instruction's shift and `_sat`.
fn bem(c: &mut Compiler, i: &Inst, d: Dst) -> R {
    let (a, b) = (c.val(&i.src[0])?, c.val(&i.src[1])?);
    let bump = c.bumpenv(d.reg.num, false)?;
    let s = c.scratch(COORD)?;
    let m = Val::konst(bump);
    to_scratch(
        c,
        s,
        3,
        Some(mad(b.clone().scalar(0), pick(&m, [0, 1, 1, 1]), a)),
        None,
    );
    let last = mad(b.scalar(1), pick(&m, [2, 3, 3, 3]), Val::temp(s));
    let out = Dst {
        mask: d.mask & 3,
        ..d
    };
    write(c, &out, None, Some(last), None)
}

/// The last row of a 3×3 product: N = (row 0 · src, row 1 · src, row 2 ·
/// src) from the two pads below `whole` and its own coordinates `own`;
/// then N itself (`texm3x3`), the lookup at N, or the lookup at N's
/// reflection of the eye vector (`texm3x3spec`: a constant;
/// `texm3x3vspec`: the rows' w coordinates).
fn matrix3(c: &mut Compiler, i: &Inst, whole: &Dst, own: Val, src: Val) -> R {
    let s = c.scratch(COORD)?;
    let sv = Val::temp(s);
    let stage = whole.reg.num;
    let u = c.pad(whole, 2)?;
    let v = c.pad(whole, 1)?;
    to_scratch(c, s, 1, Some(mov(u.clone().scalar(0))), None);
    to_scratch(c, s, 2, Some(mov(v.clone().scalar(0))), None);
    let (rgb, alpha) = dot3(own.clone(), src);
    to_scratch(c, s, 4, rgb, alpha);
    match i.op {
        Opcode::Texm3x3tex => sample(c, whole, sv, stage, IDENTITY, false, None),
        Opcode::Texm3x3 => {
            let one = Val::constant(ONE);
            write(c, whole, None, Some(mov(sv)), Some(mov(one)))
        }
        _ => {
            let eye = if i.op == Opcode::Texm3x3spec {
                c.val(&i.src[1])?
            } else {
                let e = c.scratch(EYE)?;
                to_scratch(c, e, 1, Some(mov(u.scalar(3))), None);
                to_scratch(c, e, 2, Some(mov(v.scalar(3))), None);
                to_scratch(c, e, 4, Some(mov(own.scalar(3))), None);
                Val::temp(e)
            };
            reflect(c, s, eye)?;
            sample(c, whole, sv, stage, IDENTITY, false, None)
        }
    }
}

/// R = 2·(N·E)/(N·N)·N − E into `n`'s R, G, B, N in `n`: the two dot
/// products, the reciprocal, their product doubled, one MAD per channel.
fn reflect(c: &mut Compiler, n: u16, eye: Val) -> R {
    let a = c.scratch(AUX)?;
    let nv = Val::temp(n);
    let av = Val::temp(a);
    let (rgb, alpha) = dot3(nv.clone(), eye.clone());
    to_scratch(c, a, 1, rgb, alpha);
    let (rgb, alpha) = dot3(nv.clone(), nv.clone());
    to_scratch(c, a, 2, rgb, alpha);
    to_scratch(
        c,
        a,
        8,
        None,
        Some(Unit::new(AluOp::Rcp, vec![av.clone().scalar(1)])),
    );
    let mut k = Unit::new(
        AluOp::Mad,
        vec![av.clone().scalar(0), av.clone().scalar(3), neg_zero()],
    );
    k.omod = 1;
    to_scratch(c, a, 1, Some(k), None);
    to_scratch(c, n, 7, Some(mad(av.scalar(0), nv, eye.negated())), None);
    Ok(())
}
