//! Where an instruction's result goes (`docs/d3d9.md` §3.2): the final
//! write of each lowered instruction into a temporary, a render target, the
//! conditional value or the predicate bits — split by the predicate's
//! channels, clamped by `_sat`, scaled by ps_1_x's result shift — and the
//! scratch temporaries that hold the steps of an expansion.

use super::emit::{Alu, Dpp, Unit, Val};
use super::{CompileError, Compiler};
use crate::d3d9::{Dst, RegKind, Src, SrcMod, swizzle_channel};

pub(super) type R = Result<(), CompileError>;

/// The R, G, B letters of a write mask (`"rg"`).
pub(super) fn mask_rgb(mask: u8) -> String {
    mask_rgba(mask & 7)
}

/// The R, G, B, A letters of a write mask (`"rga"`).
pub(super) fn mask_rgba(mask: u8) -> String {
    "rgba"
        .chars()
        .enumerate()
        .filter(|(c, _)| mask & (1 << c) != 0)
        .map(|(_, ch)| ch)
        .collect()
}

const REPLICATE: [&str; 4] = ["rrrr", "gggg", "bbbb", "aaaa"];

/// Groups of written channels that share a predicate selection: (mask,
/// RGB predicate, alpha predicate).
pub(super) fn pred_groups(
    pred: Option<&Src>,
    mask: u8,
) -> Vec<(u8, Option<String>, Option<String>)> {
    let Some(p) = pred else {
        return vec![(mask, None, None)];
    };
    let inv = if p.modifier == SrcMod::Not { "!" } else { "" };
    let comp = |c: usize| swizzle_channel(p.swizzle, c);
    let rgb: Vec<usize> = (0..3).filter(|c| mask & (1 << c) != 0).collect();
    let mut groups: Vec<(u8, Option<String>, Option<String>)> = Vec::new();
    if rgb.iter().all(|&c| comp(c) == c) {
        if !rgb.is_empty() {
            groups.push((
                rgb.iter().map(|c| 1u8 << c).sum(),
                Some(format!("{inv}rgba")),
                None,
            ));
        }
    } else {
        for (k, rep) in REPLICATE.iter().enumerate() {
            let m: u8 = rgb
                .iter()
                .filter(|&&c| comp(c) == k)
                .map(|c| 1u8 << c)
                .sum();
            if m != 0 {
                groups.push((m, Some(format!("{inv}{rep}")), None));
            }
        }
    }
    if mask & 8 != 0 {
        let a = Some(format!("{inv}{}", REPLICATE[comp(3)]));
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

/// A scratch temporary as a value.
pub(super) fn scratch(c: &mut Compiler, k: usize) -> Val {
    Val::reg(format!(
        "r{}",
        c.scratch[k].expect("allocated before it is read")
    ))
}

/// `rN.mask` destinations of an ALU instruction for a temporary.
fn temp_dsts(a: &mut Alu, t: u16, mask: u8) {
    let rgb = mask_rgb(mask);
    if !rgb.is_empty() {
        a.rgb_dst.push(format!("r{t}.{rgb}"));
    }
    if mask & 8 != 0 {
        a.alpha_dst.push(format!("r{t}.a"));
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
    let target = match dst.reg.kind {
        RegKind::ColorOut => Some(["rtA", "rtB", "rtC", "rtD"][usize::from(dst.reg.num & 3)]),
        RegKind::DepthOut => Some("depth"),
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
    let own = format!("r{t}");
    let reads_own = |u: &Option<Unit>| {
        u.as_ref().is_some_and(|u| {
            u.inputs
                .iter()
                .any(|v| v.opnd == own || v.opnd.starts_with("r["))
        })
    };
    if target.is_none() && groups.len() > 1 && (reads_own(&rgb) || reads_own(&alpha)) {
        let s = c.scratch(1)?;
        to_scratch(c, s, dst.mask, clamp(rgb.clone()), clamp(alpha.clone()));
        let sv = scratch(c, 1);
        let mv = Unit::exact("max", vec![sv.clone(), sv], false);
        (rgb, alpha) = (Some(mv.clone()), Some(mv));
    }
    for (m, p, ap) in groups {
        let mut a = Alu::default();
        // SOP copies the alpha result; DP4 takes its fourth products from
        // the alpha unit's inputs.
        let alpha_needed =
            m & 8 != 0 || rgb.as_ref().is_some_and(|u| u.op == "sop" || u.op == "dp4");
        let rgb_needed = m & 7 != 0 || alpha.as_ref().is_some_and(|u| u.op == "dp");
        a.rgb = if rgb_needed { clamp(rgb.clone()) } else { None };
        a.alpha = if alpha_needed {
            clamp(alpha.clone())
        } else {
            None
        };
        match target {
            None => temp_dsts(&mut a, t, m),
            Some("depth") => {
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
                if a.alpha.as_ref().is_some_and(|u| u.op == "dp") {
                    // A dot product's result comes from the RGB unit.
                    a.rgb = clamp(rgb.clone());
                    a.alpha = clamp(alpha.clone());
                }
                a.alpha_dst.push("depth".into());
            }
            Some(rt) => {
                a.out = true;
                let rgbm = mask_rgb(m);
                if !rgbm.is_empty() {
                    a.rgb_dst.push(format!("{rt}.{rgbm}"));
                }
                if m & 8 != 0 {
                    a.alpha_dst.push(format!("{rt}.a"));
                }
            }
        }
        a.pred = p;
        a.apred = ap;
        c.code.push(Dpp::Alu(a));
    }
    Ok(())
}
