//! Texture reads: point sampling at wrapped coordinates (`docs/d3d9.md`
//! §3.1), or at texel coordinates in the ctm dialect (§5); the lookup
//! itself by the DPP's texture unit.

use super::emit::{Dpp, ONE, Unit, Val};
use super::lower::{R, dst, mad, mask_rgba, neg_zero, pred_groups, scratch, to_scratch};
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
            Some(Unit::new("rcp", vec![coord.clone().scalar(3)])),
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
            to_scratch(c, s, 3, Some(Unit::new("frc", vec![uv])), None);
            to_scratch(
                c,
                s,
                3,
                Some(mad(sv, Val::reg(format!("c{size}")), neg_zero())),
                None,
            );
        }
        // Texel coordinates as they are: texel ⌊u⌋ (u·1 − 0 is u, bit for
        // bit, after the DPP's own flush and NaN rules).
        Dialect::Ctm => {
            if uv != sv {
                to_scratch(c, s, 3, Some(mad(uv, Val::constant(ONE), neg_zero())), None);
            }
        }
    }
    let chan: String = (0..4)
        .map(|k| ['r', 'g', 'b', 'a'][swizzle_channel(swizzle, k)])
        .collect();
    let t = c.temp(d.reg)?;
    for (m, p, ap) in pred_groups(pred, d.mask) {
        c.code.push(Dpp::Tex {
            op: "ld",
            dst: format!("r{t}.{}", mask_rgba(m)),
            input: surface,
            chan: chan.clone(),
            coord: format!("r{s}.rgba"),
            unscaled: true,
            acquire: false,
            wait: false,
            pred: p,
            apred: ap,
        });
    }
    Ok(())
}
