//! Flow control: `if`/`if_comp`/`else`/`endif`, `rep`, `loop`, the
//! breaks, `call`/`callnz`, onto the DPP's constructs (`docs/isa.md` §6.9,
//! `docs/d3d9.md` §3.2).

use super::emit::{Alu, Dpp};
use super::lower::compare;
use super::{Block, CompileError, Compiler};
use crate::d3d9::op::Compare;
use crate::d3d9::{Inst, Opcode, RegKind, Src, SrcMod, swizzle_channel};

type R = Result<(), CompileError>;

/// Sets the ALU result to the comparison of `inst`'s two scalar sources.
fn compare_result(c: &mut Compiler, inst: &Inst) -> R {
    let Some(cmp) = Compare::from_code(inst.control) else {
        return c.error("missing comparison");
    };
    let a = c.val(&inst.src[0])?.scalar(0);
    let b = c.val(&inst.src[1])?.scalar(0);
    let (unit, test) = compare(cmp, a, b);
    let res = match test {
        "<0" => "a<0",
        ">=0" => "a>=0",
        "==0" => "a==0",
        _ => "a!=0",
    };
    c.code.push(Dpp::Alu(Alu {
        alpha: Some(unit),
        res: Some(res),
        ..Alu::default()
    }));
    Ok(())
}

/// The break instruction of the innermost loop with its pop count.
fn break_of(c: &Compiler) -> Result<(String, String), CompileError> {
    let (d, b) = c.if_depth_in_loop()?;
    let Block::Loop { end_label, rep, .. } = b else {
        unreachable!("if_depth_in_loop returns a loop");
    };
    let op = if *rep { "BREAKREP" } else { "BREAKLOOP" };
    Ok((op.to_string(), format!("-> {end_label} pop={d}")))
}

/// `[!]p.X` of a predicate source (its first swizzle channel).
fn pred_cond(p: &Src) -> String {
    let inv = if p.modifier == SrcMod::Not { "!" } else { "" };
    format!(
        "{inv}p.{}",
        ["r", "g", "b", "a"][swizzle_channel(p.swizzle, 0)]
    )
}

/// A flow-control instruction.
pub(super) fn inst(c: &mut Compiler, i: &Inst) -> R {
    use Opcode::*;
    match i.op {
        If | Ifc => {
            let cond = if i.op == If {
                format!("b{} == 0", i.src[0].reg.num)
            } else {
                compare_result(c, i)?;
                "alu_result == 0".to_string()
            };
            let (else_label, end_label) = (c.label(), c.label());
            let at = c.code.len();
            c.code.push(Dpp::Fc(format!("IF {cond} -> {end_label}")));
            c.push_block(Block::If {
                else_label,
                end_label,
                has_else: false,
                at,
                cond,
            });
            Ok(())
        }
        Else => {
            let Some(Block::If {
                else_label,
                end_label,
                has_else,
                at,
                cond,
            }) = c.blocks.last_mut()
            else {
                return c.error("else without if");
            };
            if *has_else {
                return c.error("a second else");
            }
            *has_else = true;
            let (else_label, end_label, at, cond) =
                (else_label.clone(), end_label.clone(), *at, cond.clone());
            c.code[at] = Dpp::Fc(format!("IF {cond} -> {else_label} jump=incr"));
            c.code.push(Dpp::Fc(format!("ELSE -> {end_label}")));
            c.code.push(Dpp::Label(else_label));
            Ok(())
        }
        Endif => match c.blocks.pop() {
            Some(Block::If { end_label, .. }) => {
                c.code.push(Dpp::Fc("ENDIF".into()));
                c.code.push(Dpp::Label(end_label));
                Ok(())
            }
            _ => c.error("endif without if"),
        },
        Rep | Loop => {
            let int = i.src[if i.op == Loop { 1 } else { 0 }].reg.num;
            let (body_label, end_label) = (c.label(), c.label());
            let op = if i.op == Loop { "LOOP" } else { "REP" };
            c.code.push(Dpp::Fc(format!("{op} i{int} -> {end_label}")));
            c.code.push(Dpp::Label(body_label.clone()));
            c.push_block(Block::Loop {
                end_label,
                body_label,
                int,
                rep: i.op == Rep,
            });
            Ok(())
        }
        Endrep | Endloop => match c.blocks.pop() {
            Some(Block::Loop {
                end_label,
                body_label,
                int,
                rep,
            }) if rep == (i.op == Endrep) => {
                let op = if rep { "ENDREP" } else { "ENDLOOP" };
                c.code.push(Dpp::Fc(format!("{op} i{int} -> {body_label}")));
                c.code.push(Dpp::Label(end_label));
                Ok(())
            }
            _ => c.error(format!(
                "{} without its {}",
                i.op.name(),
                if i.op == Endrep { "rep" } else { "loop" }
            )),
        },
        Break => {
            let (op, rest) = break_of(c)?;
            c.code.push(Dpp::Fc(format!("{op} {rest}")));
            Ok(())
        }
        Breakc => {
            let (op, rest) = break_of(c)?;
            compare_result(c, i)?;
            c.code.push(Dpp::Fc(format!("{op} alu_result != 0 {rest}")));
            Ok(())
        }
        Breakp => {
            let (op, rest) = break_of(c)?;
            let cond = pred_cond(&i.src[0]);
            c.code.push(Dpp::Fc(format!("{op} {cond} != 0 {rest}")));
            Ok(())
        }
        Call => {
            c.code
                .push(Dpp::Fc(format!("CALL -> l{}", i.src[0].reg.num)));
            Ok(())
        }
        Callnz => {
            // IF (switching off the pixels that do not call), CALL, ENDIF.
            let skip = c.label();
            let cond = match i.src[1].reg.kind {
                RegKind::ConstBool => format!("b{} == 0", i.src[1].reg.num),
                _ => format!("{} == 0", pred_cond(&i.src[1])),
            };
            c.code.push(Dpp::Fc(format!("IF {cond} -> {skip}")));
            c.code
                .push(Dpp::Fc(format!("CALL -> l{}", i.src[0].reg.num)));
            c.code.push(Dpp::Fc("ENDIF".into()));
            c.code.push(Dpp::Label(skip));
            Ok(())
        }
        _ => unreachable!("only flow control comes here"),
    }
}
