//! One shader instruction → DPP instructions (`docs/d3d9.md` §3.2 lists
//! each expansion). Intermediate values go to scratch temporaries; only
//! the final write to the destination ([`super::dest`]) is predicated and
//! clamped.

use super::Compiler;
use super::dest::write;
use super::dest::{R, dst, pred_groups, scratch, to_scratch};
use super::emit::{Alu, AluOp, Dpp, Dst as Out, ONE, Unit, Val, ZERO};
use super::emit::{compare, mad, neg_zero, permute};
use super::tex::kill;
use crate::d3d9::op::Compare;
use crate::d3d9::{Dst, Inst, Opcode, RegKind};

/// One shader instruction's DPP code.
pub(super) fn inst(c: &mut Compiler, i: &Inst) -> R {
    use Opcode::*;
    match i.op {
        Tex | Texcoord | Texkill if c.shader.version.is_1x() => super::ps1x::tex(c, i),
        Nop => Ok(()),
        Mov | Abs | Add | Sub | Mul | Mad | Min | Max | Cmp | Cnd | Frc | Slt | Sge | Lrp => {
            arith(c, i)
        }
        Dp3 | Dp4 | Dp2add | Nrm | Crs => dots(c, i),
        Rcp | Rsq | Exp | Log | Pow | Sincos => scalar(c, i),
        M4x4 | M4x3 | M3x4 | M3x3 | M3x2 => matrix(c, i),
        Dsx | Dsy => derivative(c, i),
        Texkill => {
            let Some(d) = i.dst else {
                return c.error("texkill without its register");
            };
            kill(c, d.reg, d.mask)
        }
        Texbem | Texbeml | Texreg2ar | Texreg2gb | Texreg2rgb | Texm3x2pad | Texm3x2tex
        | Texm3x2depth | Texm3x3pad | Texm3x3tex | Texm3x3spec | Texm3x3vspec | Texm3x3
        | Texdp3 | Texdp3tex | Texdepth | Bem | Texcoord => super::ps1x::tex(c, i),
        Phase => Ok(()),
        Tex | Texldl | Texldd => super::tex::lookup(c, i),
        Setp => setp(c, i),
        If | Ifc | Else | Endif | Rep | Loop | Endrep | Endloop | Break | Breakc | Breakp
        | Call | Callnz => super::flow::inst(c, i),
        Label | Ret => unreachable!("handled by the body"),
    }
}

/// Moves, arithmetic, selections and comparisons: one or two ALU instructions each.
fn arith(c: &mut Compiler, i: &Inst) -> R {
    use Opcode::*;
    let pred = i.predicate.as_ref();
    let v = |c: &mut Compiler, k: usize| c.val(&i.src[k]);
    match i.op {
        Mov | Abs => {
            let mut a = v(c, 0)?;
            if i.op == Abs {
                (a.abs, a.neg) = (true, false);
            }
            let d = dst(c, i)?;
            write(
                c,
                &d,
                pred,
                Some(Unit::exact(AluOp::Max, vec![a.clone(), a.clone()], false)),
                Some(Unit::exact(AluOp::Max, vec![a.clone(), a], false)),
            )
        }
        Add | Sub | Mul | Mad => {
            let a = v(c, 0)?;
            let b = v(c, 1)?;
            let u = match i.op {
                Add => mad(a, Val::constant(ONE), b),
                Sub => mad(a, Val::constant(ONE), b.negated()),
                Mul => mad(a, b, neg_zero()),
                _ => mad(a, b, v(c, 2)?),
            };
            let d = dst(c, i)?;
            write(c, &d, pred, Some(u.clone()), Some(u))
        }
        Min | Max => {
            let a = v(c, 0)?;
            let b = v(c, 1)?;
            // min: a < b ? a : b; max: a ≥ b ? a : b, as the DPP's MAX with
            // its inputs swapped (b > a ? b : a).
            let u = if i.op == Min {
                Unit::exact(AluOp::Min, vec![a, b], false)
            } else {
                Unit::exact(AluOp::Max, vec![b, a], false)
            };
            let d = dst(c, i)?;
            write(c, &d, pred, Some(u.clone()), Some(u))
        }
        Cmp | Cnd => {
            let (a, b, x) = (v(c, 0)?, v(c, 1)?, v(c, 2)?);
            let op = if i.op == Cmp { AluOp::Cmp } else { AluOp::Cnd };
            let u = Unit::exact(op, vec![b, x, a], false);
            let d = dst(c, i)?;
            write(c, &d, pred, Some(u.clone()), Some(u))
        }
        Frc => {
            let a = v(c, 0)?;
            let u = Unit::new(AluOp::Frc, vec![a]);
            let d = dst(c, i)?;
            write(c, &d, pred, Some(u.clone()), Some(u))
        }
        Slt | Sge => {
            let (a, b) = (v(c, 0)?, v(c, 1)?);
            let s = c.scratch(0)?;
            let diff = mad(a, Val::constant(ONE), b.negated());
            to_scratch(c, s, 0xF, Some(diff.clone()), Some(diff));
            let (t, f) = if i.op == Sge {
                (ONE, ZERO)
            } else {
                (ZERO, ONE)
            };
            let u = Unit::exact(
                AluOp::Cmp,
                vec![Val::constant(t), Val::constant(f), scratch(c, 0)],
                false,
            );
            let d = dst(c, i)?;
            write(c, &d, pred, Some(u.clone()), Some(u))
        }
        Lrp => {
            // a · (b − c) + c.
            let (a, b, x) = (v(c, 0)?, v(c, 1)?, v(c, 2)?);
            let s = c.scratch(0)?;
            let diff = mad(b, Val::constant(ONE), x.clone().negated());
            to_scratch(c, s, 0xF, Some(diff.clone()), Some(diff));
            let u = mad(a, scratch(c, 0), x);
            let d = dst(c, i)?;
            write(c, &d, pred, Some(u.clone()), Some(u))
        }
        _ => unreachable!("arith is called for its own opcodes"),
    }
}

/// Dot products and what is built from them.
fn dots(c: &mut Compiler, i: &Inst) -> R {
    use Opcode::*;
    let pred = i.predicate.as_ref();
    let v = |c: &mut Compiler, k: usize| c.val(&i.src[k]);
    match i.op {
        Dp3 | Dp4 => {
            let (a, b) = (v(c, 0)?, v(c, 1)?);
            let d = dst(c, i)?;
            if i.op == Dp3 {
                write(
                    c,
                    &d,
                    pred,
                    Some(Unit::new(AluOp::Dp3, vec![a, b])),
                    Some(Unit::new(AluOp::Dp, vec![])),
                )
            } else {
                write(
                    c,
                    &d,
                    pred,
                    Some(Unit::new(AluOp::Dp4, vec![a.clone(), b.clone()])),
                    Some(Unit::new(AluOp::Dp, vec![a, b])),
                )
            }
        }
        Dp2add => {
            let (a, b, x) = (v(c, 0)?, v(c, 1)?, v(c, 2)?);
            let d = dst(c, i)?;
            write(
                c,
                &d,
                pred,
                Some(Unit::new(AluOp::D2a, vec![a, b, x.scalar(0)])),
                Some(Unit::new(AluOp::Dp, vec![])),
            )
        }
        Nrm => {
            // a · (1 / √(a.x² + a.y² + a.z²)).
            let a = v(c, 0)?;
            let s = c.scratch(0)?;
            to_scratch(
                c,
                s,
                8,
                Some(Unit::new(AluOp::Dp3, vec![a.clone(), a.clone()])),
                Some(Unit::new(AluOp::Dp, vec![])),
            );
            let sa = scratch(c, 0).scalar(3);
            to_scratch(c, s, 8, None, Some(Unit::new(AluOp::Rsq, vec![sa.clone()])));
            let u = mad(a, sa, neg_zero());
            let d = dst(c, i)?;
            write(c, &d, pred, Some(u.clone()), Some(u))
        }
        Crs => {
            let (a, b) = (v(c, 0)?, v(c, 1)?);
            let s = c.scratch(0)?;
            // S = (a.z·b.y, a.x·b.z, a.y·b.x); d = a.yzx · b.zxy − S.
            to_scratch(
                c,
                s,
                7,
                Some(mad(
                    permute(&a, [2, 0, 1, 3]),
                    permute(&b, [1, 2, 0, 3]),
                    neg_zero(),
                )),
                None,
            );
            let u = mad(
                permute(&a, [1, 2, 0, 3]),
                permute(&b, [2, 0, 1, 3]),
                scratch(c, 0).negated(),
            );
            let mut d = dst(c, i)?;
            d.mask &= 7;
            write(c, &d, pred, Some(u), None)
        }
        _ => unreachable!("dots is called for its own opcodes"),
    }
}

/// The transcendental operations of the alpha unit, their results copied to RGB by SOP.
fn scalar(c: &mut Compiler, i: &Inst) -> R {
    use Opcode::*;
    let pred = i.predicate.as_ref();
    let v = |c: &mut Compiler, k: usize| c.val(&i.src[k]);
    match i.op {
        Rcp | Rsq | Exp | Log => {
            let mut a = v(c, 0)?.scalar(0);
            if matches!(i.op, Rsq | Log) {
                (a.abs, a.neg) = (true, false);
            }
            let op = match i.op {
                Rcp => AluOp::Rcp,
                Rsq => AluOp::Rsq,
                Exp => AluOp::Ex2,
                _ => AluOp::Ln2,
            };
            let d = dst(c, i)?;
            write(
                c,
                &d,
                pred,
                Some(Unit::new(AluOp::Sop, vec![])),
                Some(Unit::new(op, vec![a])),
            )
        }
        Pow => {
            // |a|^b = 2^(b · log2 |a|).
            let mut a = v(c, 0)?.scalar(0);
            (a.abs, a.neg) = (true, false);
            let b = v(c, 1)?.scalar(0);
            let s = c.scratch(0)?;
            to_scratch(c, s, 8, None, Some(Unit::new(AluOp::Ln2, vec![a])));
            let sa = scratch(c, 0).scalar(3);
            to_scratch(c, s, 8, None, Some(mad(sa.clone(), b, neg_zero())));
            let d = dst(c, i)?;
            write(
                c,
                &d,
                pred,
                Some(Unit::new(AluOp::Sop, vec![])),
                Some(Unit::new(AluOp::Ex2, vec![sa])),
            )
        }
        Sincos => {
            // x = cos, y = sin of the angle in radians; the DPP's SIN and
            // COS take turns.
            let a = v(c, 0)?.scalar(0);
            let k = c.constant([1.0 / std::f32::consts::TAU; 4])?;
            let s = c.scratch(0)?;
            to_scratch(
                c,
                s,
                8,
                None,
                Some(mad(a, Val::reg(k).scalar(0), neg_zero())),
            );
            let sa = scratch(c, 0).scalar(3);
            let d = dst(c, i)?;
            for (bit, op) in [(1u8, AluOp::Cos), (2, AluOp::Sin)] {
                if d.mask & bit != 0 {
                    let one = Dst { mask: bit, ..d };
                    write(
                        c,
                        &one,
                        pred,
                        Some(Unit::new(AluOp::Sop, vec![])),
                        Some(Unit::new(op, vec![sa.clone()])),
                    )?;
                }
            }
            Ok(())
        }
        _ => unreachable!("scalar is called for its own opcodes"),
    }
}

/// Screen-space derivatives (MDH, MDV).
fn derivative(c: &mut Compiler, i: &Inst) -> R {
    use Opcode::*;
    let pred = i.predicate.as_ref();
    let v = |c: &mut Compiler, k: usize| c.val(&i.src[k]);
    match i.op {
        Dsx | Dsy => {
            let mut a = v(c, 0)?;
            if a.swz != [0, 1, 2, 3]
                || i.src[0].rel.is_some()
                || i.src[0].reg.kind == RegKind::Const
            {
                // MDH/MDV read their source in its natural order: move it.
                let s = c.scratch(0)?;
                let plain = Val {
                    neg: false,
                    abs: false,
                    ..a.clone()
                };
                let mv = Unit::exact(AluOp::Max, vec![plain.clone(), plain], false);
                to_scratch(c, s, 0xF, Some(mv.clone()), Some(mv));
                a = Val {
                    opnd: Some(super::emit::Operand::Temp(s)),
                    swz: [0, 1, 2, 3],
                    ..a
                };
            }
            let op = if i.op == Dsx { AluOp::Mdh } else { AluOp::Mdv };
            let u = Unit::new(op, vec![a.clone(), Val::constant(ONE).negated(), a]);
            let d = dst(c, i)?;
            write(c, &d, pred, Some(u.clone()), Some(u))
        }
        _ => unreachable!("derivative is called for its own opcodes"),
    }
}

/// Predicate bits from a comparison, under the current predicate.
fn setp(c: &mut Compiler, i: &Inst) -> R {
    use Opcode::*;
    let pred = i.predicate.as_ref();
    let v = |c: &mut Compiler, k: usize| c.val(&i.src[k]);
    match i.op {
        Setp => {
            let Some(cmp) = Compare::from_code(i.control) else {
                return c.error("setp without a comparison");
            };
            let (a, b) = (v(c, 0)?, v(c, 1)?);
            let (u, test) = compare(cmp, a, b);
            let d = i.dst.expect("setp has a destination");
            for (m, p, ap) in pred_groups(pred, d.mask) {
                let mut alu = Alu::default();
                if m & 7 != 0 {
                    alu.rgb = Some(u.clone());
                    alu.rgb_dst.push(Out::Pred(m & 7, test));
                }
                if m & 8 != 0 {
                    alu.alpha = Some(u.clone());
                    alu.alpha_dst.push(Out::Pred(8, test));
                }
                alu.pred = p;
                alu.apred = ap;
                c.code.push(Dpp::Alu(alu));
            }
            Ok(())
        }
        _ => unreachable!("setp is called for its own opcodes"),
    }
}

/// m4x4, m4x3, m3x4, m3x3, m3x2: one dot product per row.
fn matrix(c: &mut Compiler, i: &Inst) -> R {
    let Some((dims, rows)) = i.op.matrix() else {
        return c.error("not a matrix operation");
    };
    let rows = rows as u16;
    let d = dst(c, i)?;
    let a = c.val(&i.src[0])?;
    let aliased = i.src.iter().any(|s| {
        s.reg.kind == d.reg.kind && s.reg.num <= d.reg.num && d.reg.num < s.reg.num + rows
    });
    let s = c.scratch(1)?;
    for row in 0..rows {
        let bit = 1u8 << row;
        if d.mask & bit == 0 {
            continue;
        }
        let mut src = i.src[1];
        src.reg.num += row;
        let b = c.val(&src)?;
        let (rgb, alpha) = if dims == 4 {
            (
                Unit::new(AluOp::Dp4, vec![a.clone(), b.clone()]),
                Unit::new(AluOp::Dp, vec![a.clone(), b]),
            )
        } else {
            (
                Unit::new(AluOp::Dp3, vec![a.clone(), b]),
                Unit::new(AluOp::Dp, vec![]),
            )
        };
        if aliased {
            to_scratch(c, s, bit, Some(rgb), Some(alpha));
        } else {
            let one = Dst { mask: bit, ..d };
            write(c, &one, i.predicate.as_ref(), Some(rgb), Some(alpha))?;
        }
    }
    if aliased {
        let m = d.mask & ((1u8 << rows) - 1);
        let sv = Val::temp(s);
        let mv = Unit::exact(AluOp::Max, vec![sv.clone(), sv], false);
        let out = Dst { mask: m, ..d };
        write(c, &out, i.predicate.as_ref(), Some(mv.clone()), Some(mv))?;
    }
    Ok(())
}
