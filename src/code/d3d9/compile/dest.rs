//! Where an instruction's result goes (`docs/d3d9.md` §3.2): the final
//! write of each lowered instruction into a temporary, a render target, the
//! conditional value or the predicate bits — split by the predicate's
//! channels, clamped by `_sat`, scaled by ps_1_x's result shift — and the
//! scratch temporaries that hold the steps of an expansion.

use super::emit::{Alu, AluOp, Dpp, Dst as Out, Operand, Pred, Unit, Val};
use super::{CompileError, Compiler};
use crate::d3d9::{Dst, Inst, RegKind, Src, SrcMod, swizzle_channel};

/// A group of written channels with its RGB and alpha predication.
pub(super) type PredGroup = (u8, Option<Pred>, Option<Pred>);

pub(super) type R = Result<(), CompileError>;

/// Groups of written channels that share a predicate selection: (mask,
/// RGB predicate, alpha predicate).
pub(super) fn pred_groups(pred: Option<&Src>, mask: u8) -> Vec<PredGroup> {
    let Some(p) = pred else {
        return vec![(mask, None, None)];
    };
    let inv = p.modifier == SrcMod::Not;
    let comp = |c: usize| swizzle_channel(p.swizzle, c);
    let rgb: Vec<usize> = (0..3).filter(|c| mask & (1 << c) != 0).collect();
    let mut groups: Vec<PredGroup> = Vec::new();
    if rgb.iter().all(|&c| comp(c) == c) {
        if !rgb.is_empty() {
            groups.push((
                rgb.iter().map(|c| 1u8 << c).sum(),
                Some(Pred::own(inv)),
                None,
            ));
        }
    } else {
        for k in 0..4u8 {
            let m: u8 = rgb
                .iter()
                .filter(|&&c| comp(c) == usize::from(k))
                .map(|c| 1u8 << c)
                .sum();
            if m != 0 {
                groups.push((m, Some(Pred::replicate(inv, k)), None));
            }
        }
    }
    if mask & 8 != 0 {
        let a = Some(Pred::replicate(inv, comp(3) as u8));
        match groups.first_mut() {
            Some(g) => {
                g.0 |= 8;
                g.2 = a;
            }
            None => groups.push((8, None, a)),
        }
    }
    groups
}

/// The destination of an instruction that has one.
pub(super) fn dst(c: &Compiler, i: &Inst) -> Result<Dst, CompileError> {
    match i.dst {
        Some(d) => Ok(d),
        None => c.error("missing destination"),
    }
}

/// A scratch temporary as a value.
pub(super) fn scratch(c: &mut Compiler, k: usize) -> Val {
    Val::temp(c.scratch[k].expect("allocated before it is read"))
}

/// `rN.mask` destinations of an ALU instruction for a temporary.
fn temp_dsts(a: &mut Alu, t: u16, mask: u8) {
    if mask & 7 != 0 {
        a.rgb_dst.push(Out::Temp(t, mask & 7));
    }
    if mask & 8 != 0 {
        a.alpha_dst.push(Out::Temp(t, 8));
    }
}

/// An unpredicated, unclamped ALU instruction into scratch `t`.
pub(super) fn to_scratch(
    c: &mut Compiler,
    t: u16,
    mask: u8,
    rgb: Option<Unit>,
    alpha: Option<Unit>,
) {
    let mut a = Alu {
        rgb,
        alpha,
        ..Alu::default()
    };
    temp_dsts(&mut a, t, mask);
    c.code.push(Dpp::Alu(a));
}

/// `u` with `dst`'s result modifiers: ps_1_x's shift, then `_sat` (either
/// turns the output modifier on).
fn modified(mut u: Unit, dst: &Dst) -> Unit {
    if dst.sat {
        u.sat = true;
        u.off = false;
    }
    if dst.shift != 0 {
        u.omod = dst.shift;
        u.off = false;
    }
    u
}

/// The final write of an instruction's result into `dst`, predicated
/// (`pred`) and clamped (`_sat`); units not written are dropped unless the
/// other unit needs them (`sop`, `dp`).
pub(super) fn write(
    c: &mut Compiler,
    dst: &Dst,
    pred: Option<&Src>,
    rgb: Option<Unit>,
    alpha: Option<Unit>,
) -> R {
    // An OUTPUT target: a render target or the conditional value.
    let target = match dst.reg.kind {
        RegKind::ColorOut => Some(Some((dst.reg.num & 3) as u8)),
        RegKind::DepthOut => Some(None),
        _ => None,
    };
    if target.is_some() {
        c.wrote_output(dst.reg);
    }
    let t = if target.is_none() {
        c.temp(dst.reg)?
    } else {
        0
    };
    let clamp = |u: Option<Unit>| u.map(|u| modified(u, dst));
    let groups = pred_groups(pred, dst.mask);
    let (mut rgb, mut alpha) = (rgb, alpha);
    // Several predicated writes that read their own destination: the
    // first would change what the next reads, so the result goes to a
    // scratch temporary first (clamped), then moves under the predicates.
    let reads_own = |u: &Option<Unit>| {
        u.as_ref().is_some_and(|u| {
            u.inputs.iter().any(|v| {
                matches!(v.opnd, Some(Operand::TempRel(_))) || v.opnd == Some(Operand::Temp(t))
            })
        })
    };
    if target.is_none() && groups.len() > 1 && (reads_own(&rgb) || reads_own(&alpha)) {
        let s = c.scratch(1)?;
        to_scratch(c, s, dst.mask, clamp(rgb.clone()), clamp(alpha.clone()));
        let sv = scratch(c, 1);
        let mv = Unit::exact(AluOp::Max, vec![sv.clone(), sv], false);
        (rgb, alpha) = (Some(mv.clone()), Some(mv));
    }
    for (m, p, ap) in groups {
        let mut a = Alu::default();
        // SOP copies the alpha result; DP4 takes its fourth products from
        // the alpha unit's inputs.
        let alpha_needed = m & 8 != 0
            || rgb
                .as_ref()
                .is_some_and(|u| matches!(u.op, AluOp::Sop | AluOp::Dp4));
        let rgb_needed = m & 7 != 0 || alpha.as_ref().is_some_and(|u| u.op == AluOp::Dp);
        a.rgb = if rgb_needed { clamp(rgb.clone()) } else { None };
        a.alpha = if alpha_needed {
            clamp(alpha.clone())
        } else {
            None
        };
        match target {
            None => temp_dsts(&mut a, t, m),
            Some(None) => {
                // The conditional value: the alpha unit's result, computed
                // from the sources' first channel.
                a.out = true;
                a.rgb = None;
                a.alpha = clamp(rgb.clone().or(alpha.clone())).map(|mut u| {
                    for v in &mut u.inputs {
                        v.swz[3] = v.swz[0];
                    }
                    u
                });
                if a.alpha.as_ref().is_some_and(|u| u.op == AluOp::Dp) {
                    // A dot product's result comes from the RGB unit.
                    a.rgb = clamp(rgb.clone());
                    a.alpha = clamp(alpha.clone());
                }
                a.alpha_dst.push(Out::Depth);
            }
            Some(Some(rt)) => {
                a.out = true;
                if m & 7 != 0 {
                    a.rgb_dst.push(Out::Target(rt, m & 7));
                }
                if m & 8 != 0 {
                    a.alpha_dst.push(Out::Target(rt, 8));
                }
            }
        }
        a.pred = p;
        a.apred = ap;
        c.code.push(Dpp::Alu(a));
    }
    Ok(())
}
