//! Texture reads: point sampling at wrapped coordinates (`docs/d3d9.md`
//! §3.1), or at texel coordinates in the ctm dialect (§5); the lookup
//! itself by the DPP's texture unit.

use super::emit::{Dpp, ONE, Unit, Val};
use super::lower::{R, dst, mad, mask_rgba, neg_zero, pred_groups, scratch, to_scratch};
use super::{Compiler, Dialect};
use crate::d3d9::op::TEXLD_PROJECT;
use crate::d3d9::{Inst, Opcode, swizzle_channel};

/// texld, texldp, texldb, texldl, texldd: point sampling at wrapped
/// coordinates (fraction × the input's size, in texels).
pub(super) fn lookup(c: &mut Compiler, i: &Inst) -> R {
    let d = dst(c, i)?;
    let coord = c.val(&i.src[0])?;
    let sampler = i.src[1];
    let (surface, size) = c.sampler(sampler.reg.num)?;
    let s = c.scratch(0)?;
    let sv = scratch(c, 0);
    let mut uv = coord.clone();
    if i.op == Opcode::Tex && i.control == TEXLD_PROJECT {
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
        .map(|k| ['r', 'g', 'b', 'a'][swizzle_channel(sampler.swizzle, k)])
        .collect();
    let t = c.temp(d.reg)?;
    for (m, p, ap) in pred_groups(i.predicate.as_ref(), d.mask) {
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
