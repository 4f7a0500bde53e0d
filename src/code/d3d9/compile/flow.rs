//! Flow control: `if`/`if_comp`/`else`/`endif`, `rep`, `loop`, the
//! breaks, `call`/`callnz`, onto the DPP's constructs (`docs/isa.md` §6.9,
//! `docs/d3d9.md` §3.2).

use super::emit::compare;
use super::emit::{Alu, Cond, Dpp, Flow, Label};
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
    c.code.push(Dpp::Alu(Alu {
        alpha: Some(unit),
        res: Some(test),
        ..Alu::default()
    }));
    Ok(())
}

/// The break out of the innermost loop, where `cond` holds.
fn break_of(c: &Compiler, cond: Option<Cond>) -> Result<Dpp, CompileError> {
    let (pop, b) = c.if_depth_in_loop()?;
    let Block::Loop { end_label, rep, .. } = b else {
        unreachable!("if_depth_in_loop returns a loop");
    };
    Ok(Dpp::flow(Flow::Break {
        rep: *rep,
        cond,
        target: end_label.clone(),
        pop,
    }))
}

/// A predicate source's bit (its first swizzle channel) and inversion.
fn pred_bit(p: &Src) -> (bool, u8) {
    (
        p.modifier == SrcMod::Not,
        swizzle_channel(p.swizzle, 0) as u8,
    )
}

/// A call of subroutine `lN`.
fn call(n: u16) -> Dpp {
    Dpp::flow(Flow::Call(format!("l{n}")))
}

/// IF on `cond` to `target`.
fn if_to(cond: Cond, target: &Label, has_else: bool) -> Dpp {
    Dpp::flow(Flow::If {
        cond,
        target: target.clone(),
        has_else,
    })
}

/// A flow-control instruction.
pub(super) fn inst(c: &mut Compiler, i: &Inst) -> R {
    use Opcode::*;
    match i.op {
        If | Ifc | Else | Endif => branch(c, i),
        Rep | Loop | Endrep | Endloop => looping(c, i),
        Break | Breakc | Breakp | Call | Callnz => exit(c, i),
        _ => unreachable!("only flow control comes here"),
    }
}

/// `if`/`if_comp`, `else`, `endif`: IF (patched to jump to the ELSE when one comes), ELSE, ENDIF.
fn branch(c: &mut Compiler, i: &Inst) -> R {
    use Opcode::*;
    match i.op {
        If | Ifc => {
            let cond = if i.op == If {
                Cond::BoolFalse(i.src[0].reg.num)
            } else {
                compare_result(c, i)?;
                Cond::ResultZero
            };
            let (else_label, end_label) = (c.label(), c.label());
            let at = c.code.len();
            c.code.push(if_to(cond.clone(), &end_label, false));
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
            c.code[at] = if_to(cond, &else_label, true);
            c.code.push(Dpp::flow(Flow::Else(end_label)));
            c.code.push(Dpp::Label(else_label));
            Ok(())
        }
        Endif => match c.blocks.pop() {
            Some(Block::If { end_label, .. }) => {
                c.code.push(Dpp::flow(Flow::Endif));
                c.code.push(Dpp::Label(end_label));
                Ok(())
            }
            _ => c.error("endif without if"),
        },
        _ => unreachable!("branch is called for its own opcodes"),
    }
}

/// `rep`/`loop` and their ends: LOOP/REP over the body, ENDLOOP/ENDREP back to it.
fn looping(c: &mut Compiler, i: &Inst) -> R {
    use Opcode::*;
    match i.op {
        Rep | Loop => {
            let int = i.src[if i.op == Loop { 1 } else { 0 }].reg.num;
            let (body_label, end_label) = (c.label(), c.label());
            c.code.push(Dpp::flow(Flow::Loop {
                rep: i.op == Rep,
                int,
                target: end_label.clone(),
            }));
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
                c.code.push(Dpp::flow(Flow::EndLoop {
                    rep,
                    int,
                    target: body_label,
                }));
                c.code.push(Dpp::Label(end_label));
                Ok(())
            }
            _ => c.error(format!(
                "{} without its {}",
                i.op.name(),
                if i.op == Endrep { "rep" } else { "loop" }
            )),
        },
        _ => unreachable!("looping is called for its own opcodes"),
    }
}

/// The breaks out of the innermost loop, and calls.
fn exit(c: &mut Compiler, i: &Inst) -> R {
    use Opcode::*;
    match i.op {
        Break => {
            let b = break_of(c, None)?;
            c.code.push(b);
            Ok(())
        }
        Breakc => {
            let b = break_of(c, Some(Cond::ResultNonZero))?;
            compare_result(c, i)?;
            c.code.push(b);
            Ok(())
        }
        Breakp => {
            let (not, bit) = pred_bit(&i.src[0]);
            let b = break_of(c, Some(Cond::PredNonZero { not, bit }))?;
            c.code.push(b);
            Ok(())
        }
        Call => {
            c.code.push(call(i.src[0].reg.num));
            Ok(())
        }
        Callnz => {
            // IF (switching off the pixels that do not call), CALL, ENDIF.
            let skip = c.label();
            let cond = match i.src[1].reg.kind {
                RegKind::ConstBool => Cond::BoolFalse(i.src[1].reg.num),
                _ => {
                    let (not, bit) = pred_bit(&i.src[1]);
                    Cond::PredZero { not, bit }
                }
            };
            c.code.push(if_to(cond, &skip, false));
            c.code.push(call(i.src[0].reg.num));
            c.code.push(Dpp::flow(Flow::Endif));
            c.code.push(Dpp::Label(skip));
            Ok(())
        }
        _ => unreachable!("exit is called for its own opcodes"),
    }
}
