//! Static checks of a program against the assembler rules and hazards of
//! `docs/isa.md` §8 (and the pairing rules of §4.6–§4.7).
//!
//! These are warnings: the hardware would run such programs, usually with
//! undefined results. Each names the instruction and the rule.

use std::fmt;

use super::inst::*;
use super::table::*;

/// One finding, at instruction `index`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// Instruction index.
    pub index: usize,
    /// What is wrong and which rule says so.
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "@{}: {}", self.index, self.message)
    }
}

/// Whether jump function `f` depends on the input of weight `w` (docs/isa.md §6.2:
/// index = alu·4 + pred·2 + bool).
pub fn func_depends_on(f: u8, weight: u32) -> bool {
    (0..8u32)
        .filter(|i| i & weight == 0)
        .any(|i| (f >> i) & 1 != (f >> (i | weight)) & 1)
}

/// Maximum static nesting of loop constructs (docs/isa.md §6.8).
const MAX_LOOP_DEPTH: usize = 32;

/// Checks a decoded program; undecodable slots are skipped (the decoder
/// reports them).
pub fn validate(slots: &[Result<Inst, DecodeError>]) -> Vec<Warning> {
    let mut out = Vec::new();
    let mut warn = |index: usize, message: String| out.push(Warning { index, message });
    let n = slots.len();
    let mut alu_result_written = false;
    let mut loops: Vec<(usize, FcOp)> = Vec::new();
    for (index, slot) in slots.iter().enumerate() {
        let Ok(inst) = slot else { continue };
        let prev = index.checked_sub(1).and_then(|p| slots[p].as_ref().ok());
        let c = &inst.cmn;
        match &inst.body {
            Body::Alu(a) => {
                alu_checks(index, inst, a, prev, &mut warn);
                if a.rgb.alu_wmask {
                    alu_result_written = true;
                }
            }
            Body::Tex(t) => {
                if t.inst.sem_acquire && !c.tex_sem_wait {
                    warn(
                        index,
                        "TEX_SEM_ACQUIRE without TEX_SEM_WAIT on the same instruction (docs/isa.md §5.3, §8.3)"
                            .into(),
                    );
                }
            }
            Body::Fc(f) => {
                let func = f.inst.jump_func;
                if func_depends_on(func, 4) && !alu_result_written {
                    warn(index, "reads the ALU result, but no instruction since the previous flow-control instruction wrote it (docs/isa.md §4.8.5, §8.5)".into());
                }
                alu_result_written = false;
                if func_depends_on(func, 2)
                    && !matches!(
                        c.rgb_pred_sel,
                        PredSel::Rrrr | PredSel::Gggg | PredSel::Bbbb | PredSel::Aaaa
                    )
                {
                    warn(
                        index,
                        format!(
                            "jump predicate uses RGB_PRED_SEL={}, not a replicate selection (docs/isa.md §6.1, §8.7)",
                            c.rgb_pred_sel
                        ),
                    );
                }
                if !c.alu_wait {
                    warn(index, "flow control without ALU_WAIT (recommended on every FC instruction, docs/isa.md §8.13)".into());
                }
                let pops_stack = f.inst.a_op == AOp::Pop;
                if !pops_stack && usize::from(f.addr.jump_addr) >= n {
                    warn(
                        index,
                        format!(
                            "jump target @{} is past the end of the program ({n} instructions)",
                            f.addr.jump_addr
                        ),
                    );
                }
                loop_structure(index, f.inst.op, &mut loops, &mut warn);
            }
        }
    }
    for (index, op) in loops {
        warn(
            index,
            format!("{op} without a matching end (docs/isa.md §8.8)"),
        );
    }
    match slots.last() {
        Some(Ok(last)) => {
            if last.cmn.ty != InstType::Out {
                warn(
                    n - 1,
                    format!(
                        "the last instruction is {}, not an OUTPUT instruction (docs/isa.md §2.2, §8.4)",
                        last.cmn.ty
                    ),
                );
            }
            if !last.cmn.tex_sem_wait {
                warn(
                    n - 1,
                    "the last instruction should set TEX_SEM_WAIT (docs/isa.md §5.3, §8.4)".into(),
                );
            }
        }
        Some(Err(_)) => {}
        None => warn(0, "the program has no instructions".into()),
    }
    out
}

fn alu_checks(
    index: usize,
    inst: &Inst,
    a: &Alu,
    prev: Option<&Inst>,
    warn: &mut impl FnMut(usize, String),
) {
    let c = &inst.cmn;
    let (rop, aop) = (a.rgba.op, a.alpha.op);
    if a.rgb.omod == Omod::Disabled && !rop.is_select() {
        warn(
            index,
            format!(
                "OMOD disabled on RGB {rop}; only MIN, MAX, CND, CMP may disable it (docs/isa.md §4.7, §8.6)"
            ),
        );
    }
    if a.alpha.omod == Omod::Disabled && !aop.is_select() {
        warn(
            index,
            format!(
                "OMOD disabled on alpha {aop}; only MIN, MAX, CND, CMP may disable it (docs/isa.md §4.7, §8.6)"
            ),
        );
    }
    if rop == RgbOp::Sop && !aop.is_transcendental() {
        warn(
            index,
            format!(
                "RGB SOP needs an alpha transcendental, found alpha {aop} (docs/isa.md §4.6.2, §8.6)"
            ),
        );
    }
    if aop == AlphaOp::Dp && !rop.is_dot() {
        warn(
            index,
            format!(
                "alpha DP needs RGB DP3, DP4 or D2A, found RGB {rop} (docs/isa.md §4.6.2, §8.6)"
            ),
        );
    }
    if c.ty == InstType::Out && a.rgb.alu_wmask {
        warn(index, "an OUTPUT instruction writes the ALU result (undefined; use an ALU instruction, docs/isa.md §4.8.5)".into());
    }
    let writes_output = c.rgb_omask != 0 || c.alpha_omask || a.alpha.w_omask;
    if c.ty == InstType::Out && !writes_output && !c.last {
        warn(
            index,
            "OUTPUT instruction that writes no output (reserves output FIFO space; use ALU, docs/isa.md §8.12)"
                .into(),
        );
    }
    let Some(prev) = prev else { return };
    let (Body::Alu(p), true) = (&prev.body, !prev.cmn.nop) else {
        return;
    };
    // Presubtract hazard (docs/isa.md §8.1): srcp read right after a write to its inputs.
    let reads_srcp = (0..rop.arity()).any(|i| a.rgb_input(i).sel == Sel::SrcP)
        || (0..a.alpha_arity()).any(|i| a.alpha_input(i).sel == Sel::SrcP);
    if reads_srcp {
        let mut written = Vec::new();
        if prev.cmn.rgb_wmask != 0 {
            written.push((p.rgba.addrd, p.rgba.addrd_rel));
        }
        if prev.cmn.alpha_wmask {
            written.push((p.alpha.addrd, p.alpha.addrd_rel));
        }
        let feeds = [
            a.rgb_addr.src(0),
            a.rgb_addr.src(1),
            a.alpha_addr.src(0),
            a.alpha_addr.src(1),
        ];
        let hazard = feeds.iter().any(|s| match s.kind {
            // Same index, or one side relative to aL and the other not: may alias.
            SrcKind::Temp(t) => written.iter().any(|&(w, wrel)| w == t || wrel != s.rel),
            _ => false,
        });
        if hazard {
            warn(
                index - 1,
                format!(
                    "needs NOP: @{index} presubtracts a register this instruction writes (docs/isa.md §8.1)"
                ),
            );
        }
    }
    // Derivative hazard (docs/isa.md §8.2).
    if matches!(rop, RgbOp::Mdh | RgbOp::Mdv) || matches!(aop, AlphaOp::Mdh | AlphaOp::Mdv) {
        warn(
            index - 1,
            format!("needs NOP: @{index} is MDH/MDV (docs/isa.md §8.2)"),
        );
    }
}

fn loop_structure(
    index: usize,
    op: FcOp,
    loops: &mut Vec<(usize, FcOp)>,
    warn: &mut impl FnMut(usize, String),
) {
    match op {
        FcOp::Loop | FcOp::Rep => {
            loops.push((index, op));
            if loops.len() > MAX_LOOP_DEPTH {
                warn(
                    index,
                    format!(
                        "loops nested {} deep; at most {MAX_LOOP_DEPTH} (docs/isa.md §6.8)",
                        loops.len()
                    ),
                );
            }
        }
        FcOp::EndLoop | FcOp::EndRep => {
            let want = if op == FcOp::EndLoop {
                FcOp::Loop
            } else {
                FcOp::Rep
            };
            match loops.pop() {
                Some((_, open)) if open == want => {}
                Some((at, open)) => warn(
                    index,
                    format!("{op} closes the {open} at @{at} (docs/isa.md §8.8)"),
                ),
                None => warn(
                    index,
                    format!("{op} without an open {want} (docs/isa.md §8.8)"),
                ),
            }
        }
        FcOp::BreakLoop | FcOp::BreakRep => {
            let want = if op == FcOp::BreakLoop {
                FcOp::Loop
            } else {
                FcOp::Rep
            };
            match loops.last() {
                Some(&(_, open)) if open == want => {}
                Some(&(at, open)) => warn(
                    index,
                    format!(
                        "{op} inside the {open} at @{at}; use break{} (docs/isa.md §8.8)",
                        &open.mnemonic()
                    ),
                ),
                None => warn(index, format!("{op} outside any loop (docs/isa.md §8.8)")),
            }
        }
        FcOp::Continue if loops.is_empty() => {
            warn(index, "CONTINUE outside any loop (docs/isa.md §8.8)".into())
        }
        _ => {}
    }
}
