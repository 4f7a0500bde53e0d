//! Texture reads: point sampling at wrapped coordinates (`docs/d3d9.md`
//! §3.1), or at texel coordinates in the ctm dialect (§5); the lookup
//! itself by the DPP's texture unit.

use super::dest::{R, dst, pred_groups, scratch, to_scratch};
use super::emit::{AluOp, Dpp, Lookup, ONE, Unit, Val};
use super::emit::{mad, neg_zero};
use super::{Compiler, Dialect};
use crate::d3d9::op::TEXLD_PROJECT;
use crate::d3d9::{Dst, Inst, Opcode, Src, swizzle_channel};

/// texld, texldp, texldb, texldl, texldd: point sampling at wrapped
/// coordinates (fraction × the input's size, in texels).
pub(super) fn lookup(c: &mut Compiler, i: &Inst) -> R {
    let d = dst(c, i)?;
    let coord = c.val(&i.src[0])?;
    let sampler = i.src[1];
    let project = i.op == Opcode::Tex && i.control == TEXLD_PROJECT;
    sample(
        c,
        &d,
        coord,
        sampler.reg.num,
        sampler.swizzle,
        project,
        i.predicate.as_ref(),
    )
}

/// Sampler `sampler` at `coord` (x, y; divided by w first when
/// `project`), its channels picked by `swizzle`, into `d` under `pred`.
pub(super) fn sample(
    c: &mut Compiler,
    d: &Dst,
    coord: Val,
    sampler: u16,
    swizzle: u8,
    project: bool,
    pred: Option<&Src>,
) -> R {
    let (surface, size) = c.sampler(sampler)?;
    let s = c.scratch(0)?;
    let sv = scratch(c, 0);
    let mut uv = coord.clone();
    if project {
        // (u / w, v / w).
        to_scratch(
            c,
            s,
            8,
            None,
            Some(Unit::new(AluOp::Rcp, vec![coord.clone().scalar(3)])),
        );
        to_scratch(
            c,
            s,
            3,
            Some(mad(coord, sv.clone().scalar(3), neg_zero())),
            None,
        );
        uv = sv.clone();
    }
    match c.dialect {
        // Wrapped, normalised: texel ⌊frc(u)·W⌋.
        Dialect::D3d9 => {
            to_scratch(c, s, 3, Some(Unit::new(AluOp::Frc, vec![uv])), None);
            to_scratch(c, s, 3, Some(mad(sv, Val::konst(size), neg_zero())), None);
        }
        // Texel coordinates as they are: texel ⌊u⌋ (u·1 − 0 is u, bit for
        // bit, after the DPP's own flush and NaN rules).
        Dialect::Ctm => {
            if uv != sv {
                to_scratch(c, s, 3, Some(mad(uv, Val::constant(ONE), neg_zero())), None);
            }
        }
    }
    let chan: [u8; 4] = std::array::from_fn(|k| swizzle_channel(swizzle, k) as u8);
    let t = c.temp(d.reg)?;
    for (m, p, ap) in pred_groups(pred, d.mask) {
        c.code.push(Dpp::Tex(Lookup {
            mask: m,
            chan,
            pred: p,
            apred: ap,
            ..Lookup::load(t, surface, s)
        }));
    }
    Ok(())
}

/// Kills the pixel where a channel of `reg` in `mask` is negative (no
/// channel: nothing to test).
pub(super) fn kill(c: &mut Compiler, reg: crate::d3d9::Reg, mask: u8) -> R {
    let t = c.temp(reg)?;
    if mask & 0xF == 0 {
        return Ok(());
    }
    c.code.push(Dpp::Tex(Lookup {
        kill: true,
        mask: mask & 0xF,
        unscaled: false,
        ..Lookup::load(t, 0, t)
    }));
    Ok(())
}
