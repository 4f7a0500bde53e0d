//! Loop regions: innermost LOOP/REP bodies made of straight clauses, which
//! compiled code iterates inside one native call (`docs/design.md`, "The shim
//! defines flow control; the JIT may run it natively").
//!
//! A region is the body of a loop — from the clause its ENDLOOP/ENDREP jumps
//! back to, through that ENDLOOP/ENDREP — whose clauses end only in
//! fall-through, BREAKLOOP/BREAKREP, CONTINUE, or a JUMP forward to one of
//! the region's later clauses (IF, ELSE and ENDIF, with their branch
//! counters and `B_ELSE`). No flow-control instruction touches the address
//! stack, and breaks, continues and the ends touch neither the branch
//! counters nor `B_ELSE` on the path that stays in the loop. Its clauses
//! neither read nor write uncached memory; their lookups of inputs read
//! memory directly (the runtime runs a region only where every input it
//! looks up has a descriptor), so nothing in a region calls the runtime.
//! Within a region the only flow-control state that changes while the loop
//! goes on is the innermost frame (count, broken and continued lanes), aL,
//! the branch counters and the lane masks; every transition that leaves
//! the loop, or does anything else (a branch counter's overflow included),
//! is left to the runtime shim, which executes it from the unchanged state.
//!
//! A **branch region** is the same thing without a loop: IF/ELSE/ENDIF
//! outside loop regions ([`branch_regions`]), entered at its first clause
//! and left at its last clause's terminator, which the shim executes; its
//! driver holds the lanes of every loop frame around it.

use crate::ir::{Counter, Fc, FcOp, FetchKind, Op, Program, StackOp, Term};

/// One loop region, or a branch region (`branch`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopRegion {
    /// The pc the body starts at.
    pub start: u16,
    /// The body's clauses in execution order; the last one ends with the
    /// ENDLOOP/ENDREP (a branch region's with whatever the shim executes
    /// after it).
    pub clauses: Vec<u32>,
    /// A LOOP body (else REP).
    pub is_loop: bool,
    /// The ENDLOOP/ENDREP's integer constant.
    pub int_addr: u8,
    /// A branch region: IF/ELSE/ENDIF outside any loop region, run from
    /// its first clause through its last, which it leaves at its
    /// terminator; no loop frame of its own.
    pub branch: bool,
}

/// Whether `fc` leaves the stacks alone on the path that stays in the loop.
fn plain(fc: &Fc, staying: Counter) -> bool {
    !fc.b_else && fc.stack == StackOp::None && staying == Counter::None
}

/// The regions of `program`: its loop regions, in clause order of their
/// ends, then its branch regions ([`branch_regions`]) in clause order.
pub fn loop_regions(program: &Program) -> Vec<LoopRegion> {
    let mut out = loops_only(program);
    let branches = branch_regions(program, &out);
    out.extend(branches);
    out
}

/// The loop regions of `program`, in clause order of their ends.
fn loops_only(program: &Program) -> Vec<LoopRegion> {
    let mut out = Vec::new();
    for (end, clause) in program.clauses.iter().enumerate() {
        let Term::Fc { fc, .. } = &clause.term else {
            continue;
        };
        let is_loop = match fc.op {
            FcOp::EndLoop => true,
            FcOp::EndRep => false,
            _ => continue,
        };
        // Staying in the loop is the ENDLOOP's jump back.
        if !plain(fc, fc.jump) {
            continue;
        }
        if let Some(clauses) = body(program, fc.target, end as u32, is_loop) {
            out.push(LoopRegion {
                start: fc.target,
                clauses,
                is_loop,
                int_addr: fc.int_addr,
                branch: false,
            });
        }
    }
    out
}

/// Whether a region can hold `clause`: lookups of inputs read memory
/// directly (the runtime runs the region only where every input it looks
/// up has a descriptor); nothing calls the runtime.
fn holdable(clause: &crate::ir::Clause) -> bool {
    clause.nodes.iter().all(|n| {
        !matches!(
            n.op,
            Op::Fetch {
                kind: FetchKind::Uncached,
                ..
            } | Op::UmrtWrite { .. }
        )
    })
}

/// The branch regions of `program`, outside its loop regions `loops`: runs
/// of consecutive clauses from one ending in a JUMP (IF) through the
/// clause where every JUMP among them has landed (after the ENDIF), whose
/// clauses end only in falling through or JUMPs (no address stack) forward
/// to later clauses of the run. The last clause may end in anything: the
/// region leaves the shim its terminator. Regions do not overlap.
pub fn branch_regions(program: &Program, loops: &[LoopRegion]) -> Vec<LoopRegion> {
    let in_loop = |ci: u32| loops.iter().any(|r| r.clauses.contains(&ci));
    let mut out = Vec::new();
    let mut ci = 0u32;
    while (ci as usize) < program.clauses.len() {
        match branch_body(program, ci, &in_loop) {
            Some(clauses) => {
                ci = clauses[clauses.len() - 1] + 1;
                out.push(LoopRegion {
                    start: program.clauses[clauses[0] as usize].start,
                    clauses,
                    is_loop: false,
                    int_addr: 0,
                    branch: true,
                });
            }
            None => ci += 1,
        }
    }
    out
}

/// A plain JUMP (no address stack): IF, ELSE or ENDIF.
fn plain_jump(term: &Term) -> Option<&Fc> {
    match term {
        Term::Fc { fc, .. } if fc.op == FcOp::Jump && fc.stack == StackOp::None => Some(fc),
        _ => None,
    }
}

/// The clauses of the branch region starting at clause `start`, if one does
/// ([`branch_regions`]): the longest run that ends where every JUMP before
/// its last clause has landed.
fn branch_body(program: &Program, start: u32, in_loop: &dyn Fn(u32) -> bool) -> Option<Vec<u32>> {
    plain_jump(&program.clauses[start as usize].term)?;
    let (mut clauses, mut landed, mut ci) = (Vec::new(), start, start);
    // The length of the run at its latest possible end.
    let mut end = None;
    while let Some(clause) = program.clauses.get(ci as usize) {
        if in_loop(ci) || !holdable(clause) {
            break;
        }
        let jump = plain_jump(&clause.term);
        if let Some(fc) = jump
            && !(fc.func == 0 && fc.any)
        {
            // Where it lands: a later clause, or the run ends before it.
            match program.clause_at(fc.target) {
                Some(to) if to > ci => landed = landed.max(to),
                _ => break,
            }
        }
        clauses.push(ci);
        if ci >= landed {
            end = Some(clauses.len());
        }
        // Both ways of a JUMP, and a fall-through inside the run, go on to
        // the next clause.
        let next = match &clause.term {
            Term::Fc { pc, .. } if jump.is_some() => pc + 1,
            Term::Next(t) if ci < landed => *t,
            _ => break,
        };
        if program.clause_at(next) != Some(ci + 1) {
            break;
        }
        ci += 1;
    }
    clauses.truncate(end?);
    // The last clause's terminator is the shim's; every other JUMP lands
    // on a later clause of the run.
    let jumps_inside = (0..clauses.len() - 1).all(|pos| {
        plain_jump(&program.clauses[clauses[pos] as usize].term).is_none()
            || jump_target(program, &clauses, pos).is_some()
    });
    (clauses.len() > 1 && jumps_inside).then_some(clauses)
}

/// The clauses from the one at `start` to `end` if they form a region body.
fn body(program: &Program, start: u16, end: u32, is_loop: bool) -> Option<Vec<u32>> {
    let mut clauses = Vec::new();
    let mut ci = program.clause_at(start)?;
    loop {
        if clauses.len() > program.clauses.len() || clauses.contains(&ci) {
            return None;
        }
        let clause = &program.clauses[ci as usize];
        if !holdable(clause) {
            return None;
        }
        clauses.push(ci);
        if ci == end {
            // Every JUMP goes forward, to a clause of the region.
            let jumps_inside = (0..clauses.len()).all(|pos| {
                let jumps = matches!(
                    &program.clauses[clauses[pos] as usize].term,
                    Term::Fc { fc, .. } if fc.op == FcOp::Jump
                );
                !jumps || jump_target(program, &clauses, pos).is_some()
            });
            return jumps_inside.then_some(clauses);
        }
        let next = match &clause.term {
            Term::Next(t) => *t,
            // Both ways go on in the region: checked once it is whole.
            Term::Fc { pc, fc } if fc.op == FcOp::Jump && fc.stack == StackOp::None => pc + 1,
            Term::Fc { pc, fc } => {
                let fits = match fc.op {
                    FcOp::BreakLoop => is_loop,
                    FcOp::BreakRep => !is_loop,
                    FcOp::Continue => true,
                    _ => false,
                };
                // Not breaking (not continuing) is the stay path.
                if !fits || !plain(fc, fc.stay) {
                    return None;
                }
                pc + 1
            }
            _ => return None,
        };
        ci = program.clause_at(next)?;
    }
}

/// The position in `clauses` (a region's, in execution order) that the
/// JUMP ending the clause at position `pos` goes to, if it is a later one
/// of them. A JUMP no lane ever wants whose group jumps only when one does
/// (ENDIF: function 0, any) never jumps; its target is moot, and the next
/// position stands for it.
pub fn jump_target(program: &Program, clauses: &[u32], pos: usize) -> Option<usize> {
    let Term::Fc { fc, .. } = &program.clauses[*clauses.get(pos)? as usize].term else {
        return None;
    };
    if fc.func == 0 && fc.any {
        return (pos + 1 < clauses.len()).then_some(pos + 1);
    }
    let target = program.clause_at(fc.target)?;
    (pos + 1..clauses.len()).find(|&k| clauses[k] == target)
}
