//! Loop regions: innermost LOOP/REP bodies made of straight clauses, which
//! compiled code iterates inside one native call (`docs/design.md`, "The shim
//! defines flow control; the JIT may run it natively").
//!
//! A region is the body of a loop — from the clause its ENDLOOP/ENDREP jumps
//! back to, through that ENDLOOP/ENDREP — whose clauses end only in
//! fall-through, BREAKLOOP/BREAKREP or CONTINUE, and whose flow-control
//! instructions touch neither the address stack nor, on the path that stays
//! in the loop, the branch counters (no `B_ELSE`). Its clauses neither read
//! nor write uncached memory; their lookups of inputs read memory directly
//! (the runtime runs a region only where every input it looks up has a
//! descriptor), so nothing in a region calls the runtime. Within a region the only flow-control state
//! that changes while the loop goes on is the innermost frame (count,
//! broken and continued lanes), aL and the lane masks; every transition
//! that leaves the loop, or does anything else, is left to the runtime
//! shim, which executes it from the unchanged state.

use crate::ir::{Counter, Fc, FcOp, FetchKind, Op, Program, StackOp, Term};

/// One loop region.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopRegion {
    /// The pc the body starts at.
    pub start: u16,
    /// The body's clauses in execution order; the last one ends with the
    /// ENDLOOP/ENDREP.
    pub clauses: Vec<u32>,
    /// A LOOP body (else REP).
    pub is_loop: bool,
    /// The ENDLOOP/ENDREP's integer constant.
    pub int_addr: u8,
}

/// Whether `fc` leaves the stacks alone on the path that stays in the loop.
fn plain(fc: &Fc, staying: Counter) -> bool {
    !fc.b_else && fc.stack == StackOp::None && staying == Counter::None
}

/// The loop regions of `program`, in clause order of their ends.
pub fn loop_regions(program: &Program) -> Vec<LoopRegion> {
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
            });
        }
    }
    out
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
        // Lookups of inputs read memory directly (the runtime runs the
        // region only where every input it looks up has a descriptor);
        // nothing calls the runtime.
        let straight = clause.nodes.iter().all(|n| {
            !matches!(
                n.op,
                Op::Fetch {
                    kind: FetchKind::Uncached,
                    ..
                } | Op::UmrtWrite { .. }
            )
        });
        if !straight {
            return None;
        }
        clauses.push(ci);
        if ci == end {
            return Some(clauses);
        }
        let next = match &clause.term {
            Term::Next(t) => *t,
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
