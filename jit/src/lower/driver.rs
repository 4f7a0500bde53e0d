//! A loop region ([`crate::regions`]) as one function: it calls the
//! region's compiled clauses in turn (or, for a region with IF/ELSE
//! inside, holds their general bodies) and performs, on the group's bit
//! masks, the flow-control transitions that keep the loop going — exactly
//! as the runtime shim's `exec_fc` does (`src/engines/runtime/flow.rs` of the `ctm` crate). Any other
//! transition (leaving the loop, a break of every lane, the count running
//! out) returns to the shim, which then executes it from the unchanged
//! state; so does an iteration whose instructions might run out the
//! runaway budget, before its first clause (the shim finds where it ends).
//!
//! A region's IF, ELSE and ENDIF (forward JUMPs inside it) are performed
//! here too, by a call of [`crate::branch::region_jump`]: `B_ELSE`, the
//! group's decision and the branch counters of
//! [`crate::state::LoopState::branch_counters`], by the shim's own rules.
//!
//! Signature: [`crate::state::LoopFn`]; the return value is
//! [`crate::state::loop_exit`]`::KIND << 16 | j`.

use super::{inline_clause, kills, lookups_of};
use crate::branch::{OVERFLOWS, pack, region_jump};
use crate::ir::{Clause, Fc, FcOp, Program, Term};
use crate::regions::{LoopRegion, jump_target};
use crate::state::{io_offsets, loop_exit, loop_offsets, offsets};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    AbiParam, Block, BlockArg, FuncRef, InstBuilder, MemFlagsData, SigRef, Signature, Type, Value,
    types,
};
use cranelift_frontend::FunctionBuilder;

struct Driver<'a, 'f> {
    b: &'a mut FunctionBuilder<'f>,
    lanes: Value,
    uni: Value,
    io: Value,
    /// The loop's state ([`crate::state::LoopState`]).
    st: Value,
    /// Blocks that return a code, filled at the end.
    leaves: Vec<(Block, u32)>,
    /// The block that returns its parameter from the function.
    exit: Block,
    /// The runaway budget and the lanes that are not helpers
    /// (`LoopState::budget`, `helper`), which no call changes: read once,
    /// in the entry block.
    budget: Value,
    counted: Value,
    /// Where no clause of the region kills, its running lanes, read once
    /// in the entry block (no call changes them then): the pixel
    /// instructions are then added up once, at [`Driver::exit`], from the
    /// instructions executed.
    fixed: Option<Value>,
    /// The instructions of every clause of the region: at most what one
    /// iteration executes (each clause runs at most once between two
    /// passes through the first: every other jump goes forward).
    iteration: i64,
    /// [`region_jump`]'s signature, imported at its first call.
    jump_sig: Option<SigRef>,
}

/// What [`jump_wanted`] reads for `fc`: the ALU result, the predicate,
/// the boolean constant. A jump function the same for both values of one
/// of them does not read it (an ENDLOOP's, which always jumps, reads none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct JumpNeeds {
    pub(super) alu: bool,
    pub(super) pred: bool,
    pub(super) bools: bool,
}

/// The terms of `fc`'s jump function (§6.2) as (ALU literal, predicate
/// literal, b condition): the lanes with that ALU result (any where
/// `None`) and predicate value (any where `None`) want the jump when b
/// satisfies the condition (1: b = 0, 2: b = 1, 3: either).
fn jump_terms(fc: &Fc) -> Vec<(Option<u32>, Option<u32>, u32)> {
    let f = |a: u32, q: u32| (u32::from(fc.func) >> (a * 4 + q * 2)) & 3;
    let alu_moot = (0..2).all(|q| f(0, q) == f(1, q));
    let alus: &[Option<u32>] = if alu_moot {
        &[None]
    } else {
        &[Some(0), Some(1)]
    };
    let mut terms = Vec::new();
    for &a in alus {
        let fa = |q| f(a.unwrap_or(0), q);
        if fa(0) == fa(1) {
            terms.push((a, None, fa(0)));
        } else {
            terms.extend((0..2).map(|q| (a, Some(q), fa(q))));
        }
    }
    terms.retain(|t| t.2 != 0);
    terms
}

/// What the jump function's `terms` read.
fn needs_of(terms: &[(Option<u32>, Option<u32>, u32)]) -> JumpNeeds {
    JumpNeeds {
        alu: terms.iter().any(|t| t.0.is_some()),
        pred: terms.iter().any(|t| t.1.is_some()),
        bools: terms.iter().any(|t| t.2 != 3),
    }
}

/// The lanes that want `fc`'s jump (`exec_fc`'s jump function, §6.3), not
/// yet restricted to the active lanes: `alu` and `pred` (the predicate
/// channel `fc` reads, all ones when it reads none) are lane masks of one
/// type — bits of an I32 word or lanes of an I32X4 — and `zero` is the
/// empty mask of that type. Of `alu`, `pred` and `bools`, only what the
/// jump function's terms need ([`needs_of`]) is read (the others may be
/// any value of their type).
pub(super) fn jump_wanted(
    b: &mut FunctionBuilder<'_>,
    fc: &Fc,
    [alu, pred, zero]: [Value; 3],
    bools: Value,
) -> Value {
    let ty = b.func.dfg.value_type(zero);
    let terms = jump_terms(fc);
    let needs = needs_of(&terms);
    let p = if needs.pred && fc.pred.1 {
        b.ins().bnot(pred)
    } else {
        pred
    };
    let bit = needs.bools.then(|| {
        let bit = b.ins().ushr_imm_s(bools, i64::from(fc.bool_addr & 31));
        b.ins().band_imm_s(bit, 1)
    });
    let mut want: Option<Value> = None;
    for (a, q, f) in terms {
        let am = a.map(|a| if a == 1 { alu } else { b.ins().bnot(alu) });
        let pm = q.map(|q| if q == 1 { p } else { b.ins().bnot(p) });
        let mut term = match (am, pm) {
            (Some(am), Some(pm)) => Some(b.ins().band(am, pm)),
            (m, None) | (None, m) => m,
        };
        if f != 3 {
            // Only for one value of b: all ones when it holds.
            let bit = bit.expect("read where a term depends on b");
            let on = if f == 2 {
                bit
            } else {
                b.ins().bxor_imm_s(bit, 1)
            };
            let on = b.ins().ineg(on);
            let on = if ty.is_vector() {
                b.ins().splat(ty, on)
            } else {
                on
            };
            term = Some(match term {
                Some(t) => b.ins().band(t, on),
                None => on,
            });
        }
        // A term without a literal or condition holds for every lane.
        let term = term.unwrap_or_else(|| b.ins().bnot(zero));
        want = Some(match want {
            Some(w) => b.ins().bor(w, term),
            None => term,
        });
    }
    want.unwrap_or(zero)
}

impl Driver<'_, '_> {
    fn load(&mut self, ty: Type, base: Value, off: usize) -> Value {
        self.b
            .ins()
            .load(ty, MemFlagsData::trusted(), base, off as i32)
    }

    fn store(&mut self, v: Value, base: Value, off: usize) {
        self.b
            .ins()
            .store(MemFlagsData::trusted(), v, base, off as i32);
    }

    /// A block that returns `kind << 16 | j` from the function, whatever
    /// its parameter (a failed call's status).
    fn leave_block(&mut self, kind: u32, j: usize) -> Block {
        let block = self.b.create_block();
        self.leaves.push((block, (kind << 16) | j as u32));
        block
    }

    /// `kind << 16 | j`, made in the current block, for a branch straight
    /// to [`Driver::exit`] (no block of its own).
    fn leave(&mut self, kind: u32, j: usize) -> BlockArg {
        let code = (kind << 16) | j as u32;
        self.b.ins().iconst(types::I32, i64::from(code)).into()
    }

    /// The lanes that want to jump, as bits, not yet restricted to the
    /// active lanes; `None` when every lane does (an ENDLOOP's usual
    /// jump function).
    fn want(&mut self, fc: &Fc) -> Option<Value> {
        let terms = jump_terms(fc);
        if terms.contains(&(None, None, 3)) {
            return None;
        }
        let needs = needs_of(&terms);
        let zero = self.b.ins().iconst(types::I32, 0);
        let alu = match needs.alu {
            true => self.load(types::I32, self.lanes, offsets::ALU_RESULT),
            false => zero,
        };
        let pred = match (needs.pred, fc.pred.0) {
            (true, Some(c)) => self.load(
                types::I32,
                self.lanes,
                offsets::PRED + 4 * usize::from(c & 3),
            ),
            (true, None) => self.b.ins().iconst(types::I32, -1),
            (false, _) => zero,
        };
        let bools = match needs.bools {
            true => self.load(types::I32, self.uni, io_offsets::BOOLS),
            false => zero,
        };
        Some(jump_wanted(self.b, fc, [alu, pred, zero], bools))
    }

    /// The active lanes of `active` that want `fc`'s jump.
    fn active_want(&mut self, fc: &Fc, active: Value) -> Value {
        match self.want(fc) {
            Some(want) => self.b.ins().band(want, active),
            None => active,
        }
    }

    /// Region clause `j` (`clause`, called through `f`) from the current
    /// block: the runaway budget (at the first clause, for a whole
    /// iteration: leaving before it when the iteration could run it out,
    /// or when no lane runs: the shim, exact from any clause, ends the
    /// group there), the counters, the call (leaving when it fails).
    fn call_clause(&mut self, clause: &Clause, j: usize, f: &Body<'_>) {
        let (lanes, st) = (self.lanes, self.st);
        let n = i64::from(clause.counted());
        let running = match self.fixed {
            // The entry block left when no lane ran.
            Some(running) => running,
            None => {
                let before = self.leave(loop_exit::BEFORE, j);
                let any = self.b.create_block();
                let running = self.load(types::I32, lanes, offsets::RUNNING);
                self.b.ins().brif(running, any, &[], self.exit, &[before]);
                self.b.switch_to_block(any);
                running
            }
        };
        let executed = self.load(types::I64, st, loop_offsets::EXECUTED);
        if j == 0 {
            // Where a whole iteration fits in the budget, no clause of it
            // can run the budget out.
            let before = self.leave(loop_exit::BEFORE, j);
            let end = self.b.ins().iadd_imm_s(executed, self.iteration);
            let budget = self.budget;
            let over = self.b.ins().icmp(IntCC::UnsignedGreaterThan, end, budget);
            let run = self.b.create_block();
            self.b.ins().brif(over, self.exit, &[before], run, &[]);
            self.b.switch_to_block(run);
        }
        let executed = self.b.ins().iadd_imm_s(executed, n);
        self.store(executed, st, loop_offsets::EXECUTED);
        if self.fixed.is_none() {
            let live = self.b.ins().band(running, self.counted);
            let live = self.b.ins().popcnt(live);
            let live = self.b.ins().uextend(types::I64, live);
            let add = match n {
                1 => live,
                _ => self.b.ins().imul_imm_s(live, n),
            };
            let pix = self.load(types::I64, st, loop_offsets::PIXEL_INSTRUCTIONS);
            let pix = self.b.ins().iadd(pix, add);
            self.store(pix, st, loop_offsets::PIXEL_INSTRUCTIONS);
        }
        // Handed the failed call's status, which the code replaces.
        let failed = self.leave_block(loop_exit::FAILED, j);
        self.b.append_block_param(failed, types::I32);
        let term = self.b.create_block();
        match *f {
            Body::Call(f) => {
                let call = self.b.ins().call(f, &[lanes, self.uni, self.io]);
                let status = self.b.inst_results(call)[0];
                self.b
                    .ins()
                    .brif(status, failed, &[status.into()], term, &[]);
            }
            Body::Inline { w, program } => {
                let args = [lanes, self.uni, self.io];
                let parts = (lookups_of(clause), program);
                let can_fail = inline_clause(self.b, clause, w, parts, args, (term, failed));
                if !can_fail {
                    self.leaves.retain(|&(b, _)| b != failed);
                }
            }
        }
        self.b.switch_to_block(term);
    }

    /// What clause `j`'s flow-control instruction starts from: the code
    /// that leaves it to the shim, the block that stays in the loop (to be
    /// filled), and the running and active lanes.
    fn terminator(&mut self, j: usize) -> (BlockArg, Block, Value, Value) {
        let at_term = self.leave(loop_exit::AT_TERM, j);
        let running = match self.fixed {
            Some(running) => running,
            None => self.load(types::I32, self.lanes, offsets::RUNNING),
        };
        let active = self.load(types::I32, self.lanes, offsets::ACTIVE);
        (at_term, self.b.create_block(), running, active)
    }

    /// A BREAK or CONTINUE ending clause `j`: the wanting lanes drop out
    /// of the active ones and on to `next`, unless every lane that entered
    /// has then left (the shim takes the jump).
    fn lower_break(&mut self, fc: &Fc, j: usize, next: Block) {
        let (lanes, st) = (self.lanes, self.st);
        let (at_term, stay, running, active0) = self.terminator(j);
        let active = self.b.ins().band(active0, running);
        let want = self.active_want(fc, active);
        let entry_m = self.load(types::I32, st, loop_offsets::ENTRY);
        let broken = self.load(types::I32, st, loop_offsets::BROKEN);
        let continued = self.load(types::I32, st, loop_offsets::CONTINUED);
        let (slot, updated, held) = if fc.op == FcOp::Continue {
            let c = self.b.ins().bor(continued, want);
            (loop_offsets::CONTINUED, c, self.b.ins().bor(broken, c))
        } else {
            let k = self.b.ins().bor(broken, want);
            (loop_offsets::BROKEN, k, k)
        };
        let left = self.b.ins().band(entry_m, running);
        let left = self.b.ins().band_not(left, held);
        self.b.ins().brif(left, stay, &[], self.exit, &[at_term]);
        self.b.switch_to_block(stay);
        self.store(updated, st, slot);
        let active = self.b.ins().band_not(active0, want);
        self.store(active, lanes, offsets::ACTIVE);
        self.b.ins().jump(next, &[]);
    }

    /// The ENDLOOP or ENDREP ending clause `j`: back to `top` for another
    /// iteration when the lanes jump and the count is not out (aL
    /// stepped for a LOOP), else the shim takes it.
    fn lower_end(&mut self, fc: &Fc, j: usize, top: Block) {
        let (lanes, st) = (self.lanes, self.st);
        let (at_term, stay, running, active0) = self.terminator(j);
        let continued = self.load(types::I32, st, loop_offsets::CONTINUED);
        let back = self.b.ins().band(continued, running);
        let active1 = self.b.ins().bor(active0, back);
        let active = self.b.ins().band(active1, running);
        let want = self.active_want(fc, active);
        // Whether the group jumps; `None` where it always does: every
        // active lane wants to (`active_want` then gives `active` itself)
        // and all of them must.
        let jump = if fc.any {
            Some(self.b.ins().icmp_imm_s(IntCC::NotEqual, want, 0))
        } else if want == active {
            None
        } else {
            Some(self.b.ins().icmp(IntCC::Equal, want, active))
        };
        let count = self.load(types::I32, st, loop_offsets::COUNT);
        let count = self.b.ins().iadd_imm_s(count, -1);
        let more = self.b.ins().icmp_imm_s(IntCC::NotEqual, count, 0);
        let again = match jump {
            Some(jump) => self.b.ins().band(jump, more),
            None => more,
        };
        self.b.ins().brif(again, stay, &[], self.exit, &[at_term]);
        self.b.switch_to_block(stay);
        self.store(active1, lanes, offsets::ACTIVE);
        let zero = self.b.ins().iconst(types::I32, 0);
        self.store(zero, st, loop_offsets::CONTINUED);
        self.store(count, st, loop_offsets::COUNT);
        if fc.op == FcOp::EndLoop {
            let al = self.load(types::I32, st, loop_offsets::AL);
            let step = self.load(types::I32, st, loop_offsets::STEP);
            let al = self.b.ins().iadd(al, step);
            self.store(al, st, loop_offsets::AL);
            self.store(al, lanes, offsets::AL);
        }
        self.b.ins().jump(top, &[]);
    }

    /// A JUMP ending clause `j` — IF, ELSE or ENDIF, to `target` when the
    /// group jumps, else on to `next` — through [`region_jump`], the rules
    /// the shim follows (docs/isa.md §6.2–§6.4). Where a branch counter
    /// would overflow, nothing changes and the shim takes the instruction.
    fn lower_jump(&mut self, fc: &Fc, j: usize, next: Block, target: Block) {
        let ptr = self.b.func.dfg.value_type(self.lanes);
        let sig = *self.jump_sig.get_or_insert_with(|| {
            let mut sig = Signature::new(self.b.func.signature.call_conv);
            sig.params = vec![AbiParam::new(ptr); 3];
            sig.params.push(AbiParam::new(types::I32));
            sig.returns.push(AbiParam::new(types::I32));
            self.b.import_signature(sig)
        });
        let f = region_jump as unsafe extern "C" fn(_, _, _, _) -> u32;
        let f = self.b.ins().iconst(ptr, f as usize as i64);
        let packed = self.b.ins().iconst(types::I32, i64::from(pack(fc)));
        let args = [self.lanes, self.uni, self.st, packed];
        let call = self.b.ins().call_indirect(sig, f, &args);
        let went = self.b.inst_results(call)[0];
        let over = self
            .b
            .ins()
            .icmp_imm_s(IntCC::Equal, went, i64::from(OVERFLOWS));
        let at_term = self.leave(loop_exit::AT_TERM, j);
        let decided = self.b.create_block();
        self.b.ins().brif(over, self.exit, &[at_term], decided, &[]);
        self.b.switch_to_block(decided);
        self.b.ins().brif(went, target, &[], next, &[]);
    }
}

/// How the driver runs a clause of its region.
pub(crate) enum Body<'p> {
    /// A call of the clause's compiled function.
    Call(FuncRef),
    /// Its general body, built into the driver for batches of `w` quads
    /// (asked for: [`super::lower_clause`]'s `w`).
    Inline { w: usize, program: &'p Program },
}

/// Builds the driver of `region` into `b` (a function with the
/// [`crate::state::LoopFn`] signature); `bodies[j]` runs the region's
/// clause `j`.
pub(crate) fn lower_loop(
    b: &mut FunctionBuilder<'_>,
    program: &Program,
    region: &LoopRegion,
    bodies: &[Body<'_>],
) {
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let params = b.block_params(entry).to_vec();
    let exit = b.create_block();
    b.append_block_param(exit, types::I32);
    let pre: Vec<Block> = region.clauses.iter().map(|_| b.create_block()).collect();
    let trusted = MemFlagsData::trusted();
    let budget = b
        .ins()
        .load(types::I64, trusted, params[3], loop_offsets::BUDGET as i32);
    let helper = b
        .ins()
        .load(types::I32, trusted, params[3], loop_offsets::HELPER as i32);
    let counted = b.ins().bnot(helper);
    // Only a kill changes the running lanes while the region runs.
    let any_kill = (region.clauses.iter()).any(|&ci| kills(&program.clauses[ci as usize]));
    let fixed = if any_kill {
        b.ins().jump(pre[0], &[]);
        None
    } else {
        let running = b
            .ins()
            .load(types::I32, trusted, params[0], offsets::RUNNING as i32);
        let executed = b.ins().load(
            types::I64,
            trusted,
            params[3],
            loop_offsets::EXECUTED as i32,
        );
        let live = b.ins().band(running, counted);
        let live = b.ins().popcnt(live);
        let live = b.ins().uextend(types::I64, live);
        // When no lane runs, the shim ends the group before clause 0.
        let before = b
            .ins()
            .iconst(types::I32, i64::from(loop_exit::BEFORE << 16));
        b.ins().brif(running, pre[0], &[], exit, &[before.into()]);
        Some((running, live, executed))
    };
    let mut d = Driver {
        b,
        lanes: params[0],
        uni: params[1],
        io: params[2],
        st: params[3],
        leaves: Vec::new(),
        exit,
        budget,
        counted,
        fixed: fixed.map(|(running, _, _)| running),
        iteration: (region.clauses.iter())
            .map(|&ci| i64::from(program.clauses[ci as usize].counted()))
            .sum(),
        jump_sig: None,
    };
    for (j, &ci) in region.clauses.iter().enumerate() {
        let clause = &program.clauses[ci as usize];
        d.b.switch_to_block(pre[j]);
        d.call_clause(clause, j, &bodies[j]);
        let next = pre.get(j + 1).copied().unwrap_or(pre[0]);
        if region.branch && j + 1 == pre.len() {
            // A branch region leaves its last clause's terminator to the
            // shim.
            let at_term = d.leave(loop_exit::AT_TERM, j);
            d.b.ins().jump(d.exit, &[at_term]);
            continue;
        }
        let Term::Fc { fc, .. } = &clause.term else {
            d.b.ins().jump(next, &[]);
            continue;
        };
        match fc.op {
            FcOp::BreakLoop | FcOp::BreakRep | FcOp::Continue => d.lower_break(fc, j, next),
            FcOp::EndLoop | FcOp::EndRep => d.lower_end(fc, j, pre[0]),
            FcOp::Jump => {
                let to = jump_target(program, &region.clauses, j)
                    .expect("a region's JUMPs go forward to its own clauses");
                d.lower_jump(fc, j, next, pre[to]);
            }
            _ => unreachable!("a region holds no other flow control"),
        }
    }
    for (block, code) in std::mem::take(&mut d.leaves) {
        d.b.switch_to_block(block);
        let v = d.b.ins().iconst(types::I32, i64::from(code));
        d.b.ins().jump(exit, &[v.into()]);
    }
    d.b.switch_to_block(exit);
    let code = d.b.block_params(exit)[0];
    if let Some((_, live, executed0)) = fixed {
        // Every lane the region ran executed what the group executed.
        let st = d.st;
        let executed = d.load(types::I64, st, loop_offsets::EXECUTED);
        let ran = d.b.ins().isub(executed, executed0);
        let add = d.b.ins().imul(ran, live);
        let pix = d.load(types::I64, st, loop_offsets::PIXEL_INSTRUCTIONS);
        let pix = d.b.ins().iadd(pix, add);
        d.store(pix, st, loop_offsets::PIXEL_INSTRUCTIONS);
    }
    d.b.ins().return_(&[code]);
    d.b.seal_all_blocks();
}
