//! A loop region ([`crate::regions`]) as one function: it calls the
//! region's compiled clauses in turn and performs, on the group's bit
//! masks, the flow-control transitions that keep the loop going — exactly
//! as the runtime shim's `exec_fc` does (`src/engines/runtime/flow.rs` of the `ctm` crate). Any other
//! transition (leaving the loop, a break of every lane, the count running
//! out) and the runaway budget's exhaustion return to the shim, which then
//! executes it from the unchanged state.
//!
//! Signature: [`crate::state::LoopFn`]; the return value is
//! [`crate::state::loop_exit`]`::KIND << 16 | j`.

use crate::ir::{Fc, FcOp, Program, Term};
use crate::regions::LoopRegion;
use crate::state::{io_offsets, loop_exit, loop_offsets, offsets};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{Block, FuncRef, InstBuilder, MemFlagsData, Type, Value, types};
use cranelift_frontend::FunctionBuilder;

struct Driver<'a, 'f> {
    b: &'a mut FunctionBuilder<'f>,
    lanes: Value,
    uni: Value,
    /// Blocks that return a code, filled at the end.
    leaves: Vec<(Block, u32)>,
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

    /// A block that returns `kind << 16 | j` from the function.
    fn leave(&mut self, kind: u32, j: usize) -> Block {
        let block = self.b.create_block();
        self.leaves.push((block, (kind << 16) | j as u32));
        block
    }

    /// The lanes that want to jump (`exec_fc`'s jump function, §6.3), not
    /// yet restricted to the active lanes.
    fn want(&mut self, fc: &Fc) -> Value {
        let alu = self.load(types::I32, self.lanes, offsets::ALU_RESULT);
        let p = match fc.pred.0 {
            Some(c) => self.load(
                types::I32,
                self.lanes,
                offsets::PRED + 4 * usize::from(c & 3),
            ),
            None => self.b.ins().iconst(types::I32, -1),
        };
        let p = if fc.pred.1 { self.b.ins().bnot(p) } else { p };
        let bools = self.load(types::I32, self.uni, io_offsets::BOOLS);
        let b = self.b.ins().ushr_imm_s(bools, i64::from(fc.bool_addr & 31));
        let b = self.b.ins().band_imm_s(b, 1);
        let mut want = self.b.ins().iconst(types::I32, 0);
        for a in 0..2u32 {
            for q in 0..2u32 {
                // Bits for b = 0 and b = 1 of this (alu, p) combination.
                let f = (u32::from(fc.func) >> (a * 4 + q * 2)) & 3;
                if f == 0 {
                    continue;
                }
                let am = if a == 1 { alu } else { self.b.ins().bnot(alu) };
                let pm = if q == 1 { p } else { self.b.ins().bnot(p) };
                let mut term = self.b.ins().band(am, pm);
                if f != 3 {
                    // Only for one value of b: all ones when it holds.
                    let on = if f == 2 {
                        b
                    } else {
                        self.b.ins().bxor_imm_s(b, 1)
                    };
                    let on = self.b.ins().ineg(on);
                    term = self.b.ins().band(term, on);
                }
                want = self.b.ins().bor(want, term);
            }
        }
        want
    }
}

/// Builds the driver of `region` into `b` (a function with the
/// [`crate::state::LoopFn`] signature); `clause_fns[j]` calls the region's
/// clause `j`.
pub(crate) fn lower_loop(
    b: &mut FunctionBuilder<'_>,
    program: &Program,
    region: &LoopRegion,
    clause_fns: &[FuncRef],
) {
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let params = b.block_params(entry).to_vec();
    let (lanes, uni, io, st) = (params[0], params[1], params[2], params[3]);
    let exit = b.create_block();
    b.append_block_param(exit, types::I32);
    let pre: Vec<Block> = region.clauses.iter().map(|_| b.create_block()).collect();
    b.ins().jump(pre[0], &[]);
    let mut d = Driver {
        b,
        lanes,
        uni,
        leaves: Vec::new(),
    };
    for (j, &ci) in region.clauses.iter().enumerate() {
        let clause = &program.clauses[ci as usize];
        let n = i64::from(clause.counted());
        // Budget, counters, the clause.
        d.b.switch_to_block(pre[j]);
        let executed = d.load(types::I64, st, loop_offsets::EXECUTED);
        let budget = d.load(types::I64, st, loop_offsets::BUDGET);
        let executed = d.b.ins().iadd_imm_s(executed, n);
        let over = d.b.ins().icmp(IntCC::UnsignedGreaterThan, executed, budget);
        let before = d.leave(loop_exit::BEFORE, j);
        let run = d.b.create_block();
        d.b.ins().brif(over, before, &[], run, &[]);
        d.b.switch_to_block(run);
        d.store(executed, st, loop_offsets::EXECUTED);
        let running = d.load(types::I32, lanes, offsets::RUNNING);
        let helper = d.load(types::I32, st, loop_offsets::HELPER);
        let live = d.b.ins().band_not(running, helper);
        let live = d.b.ins().popcnt(live);
        let live = d.b.ins().uextend(types::I64, live);
        let add = d.b.ins().imul_imm_s(live, n);
        let pix = d.load(types::I64, st, loop_offsets::PIXEL_INSTRUCTIONS);
        let pix = d.b.ins().iadd(pix, add);
        d.store(pix, st, loop_offsets::PIXEL_INSTRUCTIONS);
        let call = d.b.ins().call(clause_fns[j], &[lanes, uni, io]);
        let status = d.b.inst_results(call)[0];
        let failed = d.leave(loop_exit::FAILED, j);
        let term = d.b.create_block();
        d.b.ins().brif(status, failed, &[], term, &[]);
        d.b.switch_to_block(term);
        let next = pre.get(j + 1).copied().unwrap_or(pre[0]);
        let fc = match &clause.term {
            Term::Fc { fc, .. } => fc,
            _ => {
                d.b.ins().jump(next, &[]);
                continue;
            }
        };
        let at_term = d.leave(loop_exit::AT_TERM, j);
        let running = d.load(types::I32, lanes, offsets::RUNNING);
        let active0 = d.load(types::I32, lanes, offsets::ACTIVE);
        let stay = d.b.create_block();
        match fc.op {
            FcOp::BreakLoop | FcOp::BreakRep | FcOp::Continue => {
                let active = d.b.ins().band(active0, running);
                let want = d.want(fc);
                let want = d.b.ins().band(want, active);
                let entry_m = d.load(types::I32, st, loop_offsets::ENTRY);
                let broken = d.load(types::I32, st, loop_offsets::BROKEN);
                let continued = d.load(types::I32, st, loop_offsets::CONTINUED);
                let (slot, updated, held) = if fc.op == FcOp::Continue {
                    let c = d.b.ins().bor(continued, want);
                    (loop_offsets::CONTINUED, c, d.b.ins().bor(broken, c))
                } else {
                    let k = d.b.ins().bor(broken, want);
                    (loop_offsets::BROKEN, k, k)
                };
                let left = d.b.ins().band(entry_m, running);
                let left = d.b.ins().band_not(left, held);
                // Every lane that entered has broken (continued): the shim
                // takes the jump.
                d.b.ins().brif(left, stay, &[], at_term, &[]);
                d.b.switch_to_block(stay);
                d.store(updated, st, slot);
                let active = d.b.ins().band_not(active0, want);
                d.store(active, lanes, offsets::ACTIVE);
                d.b.ins().jump(next, &[]);
            }
            FcOp::EndLoop | FcOp::EndRep => {
                let continued = d.load(types::I32, st, loop_offsets::CONTINUED);
                let back = d.b.ins().band(continued, running);
                let active1 = d.b.ins().bor(active0, back);
                let active = d.b.ins().band(active1, running);
                let want = d.want(fc);
                let want = d.b.ins().band(want, active);
                let jump = if fc.any {
                    d.b.ins().icmp_imm_s(IntCC::NotEqual, want, 0)
                } else {
                    d.b.ins().icmp(IntCC::Equal, want, active)
                };
                let count = d.load(types::I32, st, loop_offsets::COUNT);
                let count = d.b.ins().iadd_imm_s(count, -1);
                let more = d.b.ins().icmp_imm_s(IntCC::NotEqual, count, 0);
                let again = d.b.ins().band(jump, more);
                d.b.ins().brif(again, stay, &[], at_term, &[]);
                d.b.switch_to_block(stay);
                d.store(active1, lanes, offsets::ACTIVE);
                let zero = d.b.ins().iconst(types::I32, 0);
                d.store(zero, st, loop_offsets::CONTINUED);
                d.store(count, st, loop_offsets::COUNT);
                if fc.op == FcOp::EndLoop {
                    let al = d.load(types::I32, st, loop_offsets::AL);
                    let step = d.load(types::I32, st, loop_offsets::STEP);
                    let al = d.b.ins().iadd(al, step);
                    d.store(al, st, loop_offsets::AL);
                    d.store(al, lanes, offsets::AL);
                }
                d.b.ins().jump(pre[0], &[]);
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
    d.b.ins().return_(&[code]);
    d.b.seal_all_blocks();
}
