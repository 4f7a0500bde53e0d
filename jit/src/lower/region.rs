//! A loop region run lane-wise, as one function ([`crate::lanewise`]).
//!
//! Per batch of `w` quads with a lane in the loop: the registers the region
//! touches, the predicate channels and the ALU result are read once into
//! SSA variables; the iterations then run the region's clauses one after
//! another with the full-batch lowering ([`super::fast`]) on those
//! variables — no loads, stores, blends or lane masks. A break tests its
//! lanes; when one leaves, a cold block copies the batch's state aside for
//! it (registers into their own memory, which the loop never reads; masks
//! into `*_saved` variables), records where it left (its event) and drops
//! it from the batch's lanes in the loop; when none is left, or the count
//! runs out, the batch writes back what each lane had when it left (or has
//! now) and its events ([`crate::state::LoopState::events`]). Raw
//! registers are written back raw; [`crate::lanewise::settle`] makes them
//! canonical where a lane wrote them. The function returns
//! 0; [`crate::lanewise::settle`] makes the rest of the state.
//!
//! Signature: [`crate::state::LoopFn`].

use super::fast::{Lazy, RegFile, Writes};
use super::{GROUP_QUADS, Lowering};
use crate::ir::{Fc, Index, Program, Term};
use crate::lanewise::Lanewise;
use crate::regions::LoopRegion;
use crate::state::{LANE_STAYED, io_offsets, loop_offsets, offsets};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Type, Value, types};
use cranelift_frontend::{FunctionBuilder, Variable};

/// The SSA variables of a batch.
struct Vars {
    /// Per register of [`Lanewise::regs`], per quad: the current vectors.
    /// (Lanes that leave are captured in the registers' memory, which the
    /// loop never reads.)
    cur: Vec<[Variable; GROUP_QUADS]>,
    /// Predicate channels and the ALU result (I32X4 lane masks), current
    /// and captured.
    pred: [[Variable; GROUP_QUADS]; 4],
    pred_saved: [[Variable; GROUP_QUADS]; 4],
    alu: [Variable; GROUP_QUADS],
    alu_saved: [Variable; GROUP_QUADS],
    /// Lanes still in the loop.
    alive: [Variable; GROUP_QUADS],
    /// Where each lane left ([`crate::state::LoopState::events`]).
    event: [Variable; GROUP_QUADS],
    /// Iterations completed, and aL.
    it: Variable,
    al: Variable,
}

/// Registers and masks in the batch's variables.
struct InVars<'v> {
    lw: &'v Lanewise,
    vars: &'v Vars,
}

impl InVars<'_> {
    fn position(&self, index: u8, chan: u8) -> usize {
        self.lw
            .regs
            .iter()
            .position(|r| r.index == index && r.chan == chan)
            .expect("the region's analysis lists every register it touches")
    }
}

impl RegFile for InVars<'_> {
    fn read(
        &mut self,
        l: &mut Lowering<'_, '_>,
        index: u8,
        chan: u8,
    ) -> ([Value; GROUP_QUADS], Lazy) {
        let p = self.position(index, chan);
        let cur = self.vars.cur[p];
        let q = l.each(|l, k| l.b.use_var(cur[k]));
        let lazy = if self.lw.regs[p].raw {
            Lazy::Canon
        } else {
            Lazy::No
        };
        (q, lazy)
    }

    fn write_back(&mut self, l: &mut Lowering<'_, '_>, out: &Writes) {
        debug_assert!(out.written.is_empty(), "regions write no outputs");
        for &(index, chan) in &out.dirty {
            let p = self.position(index, chan);
            let v = out.regs[&(index, chan)];
            let q = if self.lw.regs[p].raw {
                debug_assert!(
                    !matches!(l.lazy[v.0 as usize], Lazy::Sign(..)),
                    "raw registers are written with modifier outputs"
                );
                l.get(v).q
            } else {
                l.canonical(v)
            };
            define(l, &self.vars.cur[p], &q);
        }
        for (c, p) in out.pred.iter().enumerate() {
            if let Some(p) = p {
                define(l, &self.vars.pred[c], p);
            }
        }
        if let Some(a) = &out.alu {
            define(l, &self.vars.alu, a);
        }
    }
}

/// Sets the batch's quads of `vars` to `q`.
fn define(l: &mut Lowering<'_, '_>, vars: &[Variable; GROUP_QUADS], q: &[Value; GROUP_QUADS]) {
    for (&var, &x) in vars.iter().zip(q).take(l.w) {
        l.b.def_var(var, x);
    }
}

/// Stores the current value of every register the loop writes into its
/// lanes' memory, in the lanes of quad `k` set in `masks[k]`.
fn store_written(l: &mut Lowering<'_, '_>, lw: &Lanewise, v: &Vars, masks: &[Value]) {
    for (p, reg) in lw.regs.iter().enumerate() {
        if reg.first_write.is_none() {
            continue;
        }
        let index = Index {
            base: reg.index,
            rel: false,
        };
        let (at, o) = l.temp_addr(index, reg.chan);
        for (k, &m) in masks.iter().enumerate() {
            let (x, s) = (l.b.use_var(v.cur[p][k]), l.load_vec(at, o, k));
            let x = l.select_f(m, x, s);
            l.store_vec(x, at, o, k);
        }
    }
}

fn vars(b: &mut FunctionBuilder<'_>, lw: &Lanewise) -> Vars {
    let mut quad =
        |ty: Type| -> [Variable; GROUP_QUADS] { std::array::from_fn(|_| b.declare_var(ty)) };
    let cur = lw.regs.iter().map(|_| quad(types::F32X4)).collect();
    let pred = std::array::from_fn(|_| quad(types::I32X4));
    let pred_saved = std::array::from_fn(|_| quad(types::I32X4));
    let (alu, alu_saved) = (quad(types::I32X4), quad(types::I32X4));
    let (alive, event) = (quad(types::I32X4), quad(types::I32X4));
    Vars {
        cur,
        pred,
        pred_saved,
        alu,
        alu_saved,
        alive,
        event,
        it: b.declare_var(types::I32),
        al: b.declare_var(types::I32),
    }
}

impl Lowering<'_, '_> {
    /// The lanes of quad `k` that want a break's jump (`exec_fc`'s jump
    /// function, as the lock-step driver computes it), as a lane mask.
    fn want_vec(&mut self, fc: &Fc, vars: &Vars, bools: Value, k: usize) -> Value {
        let alu = self.b.use_var(vars.alu[k]);
        let ones = self.splat_i(u32::MAX);
        let p = match fc.pred.0 {
            Some(c) => self.b.use_var(vars.pred[usize::from(c & 3)][k]),
            None => ones,
        };
        let p = if fc.pred.1 { self.b.ins().bnot(p) } else { p };
        let b = self.b.ins().ushr_imm_s(bools, i64::from(fc.bool_addr & 31));
        let b = self.b.ins().band_imm_s(b, 1);
        let mut want = self.splat_i(0);
        for a in 0..2u32 {
            let f = |q: u32| (u32::from(fc.func) >> (a * 4 + q * 2)) & 3;
            // The same for both predicate values: the predicate is moot.
            let moot = f(0) == f(1);
            for q in 0..2u32 {
                let f = f(q);
                if f == 0 || (moot && q == 1) {
                    continue;
                }
                let am = if a == 1 { alu } else { self.b.ins().bnot(alu) };
                let mut term = if moot {
                    am
                } else {
                    let pm = if q == 1 { p } else { self.b.ins().bnot(p) };
                    self.b.ins().band(am, pm)
                };
                if f != 3 {
                    let on = if f == 2 {
                        b
                    } else {
                        self.b.ins().bxor_imm_s(b, 1)
                    };
                    let on = self.b.ins().ineg(on);
                    let on = self.b.ins().splat(types::I32X4, on);
                    term = self.b.ins().band(term, on);
                }
                want = self.b.ins().bor(want, term);
            }
        }
        want
    }

    /// Whether any lane of the batch's masks `m` is set (scalar, non-zero).
    fn any_lane(&mut self, m: &[Value]) -> Value {
        let mut acc = m[0];
        for &v in &m[1..] {
            acc = self.b.ins().bor(acc, v);
        }
        self.b.ins().vhigh_bits(types::I32, acc)
    }
}

/// Builds the lane-wise function of `region` into `b` (a function with the
/// [`crate::state::LoopFn`] signature), batches of `w` quads.
pub(crate) fn lower_lanewise(
    b: &mut FunctionBuilder<'_>,
    program: &Program,
    region: &LoopRegion,
    lw: &Lanewise,
    w: usize,
    ptr: Type,
    call_conv: cranelift_codegen::isa::CallConv,
) {
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let params = b.block_params(entry).to_vec();
    let (lanes, uni, io, st) = (params[0], params[1], params[2], params[3]);
    let trusted = MemFlagsData::trusted();
    let quads = b
        .ins()
        .load(types::I32, trusted, lanes, offsets::QUADS as i32);
    let count = b
        .ins()
        .load(types::I32, trusted, st, loop_offsets::COUNT as i32);
    let al0 = b
        .ins()
        .load(types::I32, trusted, st, loop_offsets::AL as i32);
    let step = b
        .ins()
        .load(types::I32, trusted, st, loop_offsets::STEP as i32);
    let bools = b
        .ins()
        .load(types::I32, trusted, uni, io_offsets::BOOLS as i32);
    let values = region
        .clauses
        .iter()
        .map(|&ci| program.clauses[ci as usize].values)
        .max()
        .unwrap_or(0);
    let v = vars(b, lw);
    let mut l = Lowering::new(b, w, ptr, call_conv, [lanes, uni, io], values, al0);
    let none = l.splat_i(u32::MAX);
    let stayed = l.splat_i(LANE_STAYED as u32);
    let entry_consts = l.consts.clone();

    // head(q0): q0 < quads ? batch : exit; a batch is skipped when none
    // of its lanes is in the loop.
    let (head, exit, next, off) = l.batch_loop(quads, ptr);
    let st_base = l.b.ins().iadd(st, off);
    let running = l.load_bits(offsets::RUNNING);
    let active = l.load_bits(offsets::ACTIVE);
    let both = l.b.ins().band(running, active);
    let bits = l.b.ins().ushr(both, l.lane0);
    let bits = l.b.ins().band_imm_s(bits, (1i64 << (4 * w)) - 1);
    let work = l.b.create_block();
    l.b.ins().brif(bits, work, &[], head, &[next.into()]);

    // work: the batch's state into variables.
    l.b.switch_to_block(work);
    for k in 0..w {
        let alive = l.quad_mask(both, k);
        l.b.def_var(v.alive[k], alive);
        l.b.def_var(v.event[k], none);
    }
    for (p, r) in lw.regs.iter().enumerate() {
        let index = Index {
            base: r.index,
            rel: false,
        };
        let (at, o) = l.temp_addr(index, r.chan);
        for k in 0..w {
            let x = l.load_vec(at, o, k);
            l.b.def_var(v.cur[p][k], x);
        }
    }
    let masks: Vec<(usize, [Variable; GROUP_QUADS], [Variable; GROUP_QUADS])> = (0..4)
        .filter(|&c| lw.pred[c])
        .map(|c| (offsets::PRED + 4 * c, v.pred[c], v.pred_saved[c]))
        .chain(lw.alu.then_some((offsets::ALU_RESULT, v.alu, v.alu_saved)))
        .collect();
    for &(o, cur, saved) in &masks {
        let m = l.mask_vecs(o);
        for k in 0..w {
            l.b.def_var(cur[k], m[k]);
            l.b.def_var(saved[k], m[k]);
        }
    }
    let zero = l.b.ins().iconst(types::I32, 0);
    l.b.def_var(v.it, zero);
    l.b.def_var(v.al, al0);
    let iter = l.b.create_block();
    let out = l.b.create_block();
    l.b.ins().jump(iter, &[]);

    // iter: one iteration of every clause.
    l.b.switch_to_block(iter);
    l.al = l.b.use_var(v.al);
    let r = region.clauses.len() as i64;
    for (j, &ci) in region.clauses.iter().enumerate() {
        let clause = &program.clauses[ci as usize];
        l.uniforms(clause);
        #[cfg(feature = "fault-injection")]
        crate::fault::check(clause, crate::fault::Site::Region);
        l.full_nodes(clause, &mut InVars { lw, vars: &v });
        let Term::Fc { fc, .. } = &clause.term else {
            continue;
        };
        if j + 1 < region.clauses.len() {
            // A break: lanes that leave are captured.
            let want: Vec<Value> = (0..w)
                .map(|k| {
                    let m = l.want_vec(fc, &v, bools, k);
                    let alive = l.b.use_var(v.alive[k]);
                    l.b.ins().band(m, alive)
                })
                .collect();
            let any = l.any_lane(&want);
            let (capture, cont) = (l.b.create_block(), l.b.create_block());
            l.b.ins().brif(any, capture, &[], cont, &[]);
            l.b.switch_to_block(capture);
            let consts = l.consts.clone();
            store_written(&mut l, lw, &v, &want);
            for &(_, cur, saved) in &masks {
                for (k, &m) in want.iter().enumerate() {
                    let (x, s) = (l.b.use_var(cur[k]), l.b.use_var(saved[k]));
                    let s = l.b.ins().bitselect(m, x, s);
                    l.b.def_var(saved[k], s);
                }
            }
            let it = l.b.use_var(v.it);
            let e = l.b.ins().imul_imm_s(it, r);
            let e = l.b.ins().iadd_imm_s(e, j as i64);
            let e = l.b.ins().splat(types::I32X4, e);
            let mut left = Vec::with_capacity(w);
            for (k, &m) in want.iter().enumerate() {
                let ev = l.b.use_var(v.event[k]);
                let ev = l.b.ins().bitselect(m, e, ev);
                l.b.def_var(v.event[k], ev);
                let alive = l.b.use_var(v.alive[k]);
                let alive = l.b.ins().band_not(alive, m);
                l.b.def_var(v.alive[k], alive);
                left.push(alive);
            }
            let some = l.any_lane(&left);
            l.b.ins().brif(some, cont, &[], out, &[]);
            l.consts = consts;
            l.b.switch_to_block(cont);
        } else {
            // The ENDLOOP/ENDREP: the next iteration, or the count is out.
            let it = l.b.use_var(v.it);
            let it = l.b.ins().iadd_imm_s(it, 1);
            let done = l.b.ins().icmp(IntCC::Equal, it, count);
            let (stay, back) = (l.b.create_block(), l.b.create_block());
            l.b.ins().brif(done, stay, &[], back, &[]);
            l.b.switch_to_block(stay);
            for k in 0..w {
                let (alive, ev) = (l.b.use_var(v.alive[k]), l.b.use_var(v.event[k]));
                let ev = l.b.ins().bitselect(alive, stayed, ev);
                l.b.def_var(v.event[k], ev);
            }
            l.b.ins().jump(out, &[]);
            l.b.switch_to_block(back);
            l.b.def_var(v.it, it);
            let al = l.b.ins().iadd(l.al, step);
            l.b.def_var(v.al, al);
            l.b.ins().jump(iter, &[]);
        }
    }

    // out: what each lane had when it left (or has now), written back.
    l.b.switch_to_block(out);
    l.consts = entry_consts;
    let alive: Vec<Value> = (0..w).map(|k| l.b.use_var(v.alive[k])).collect();
    let events: Vec<Value> = (0..w).map(|k| l.b.use_var(v.event[k])).collect();
    // Raw registers are made canonical by `settle`, for the lanes that
    // wrote them in the loop.
    store_written(&mut l, lw, &v, &alive);
    for &(o, cur, saved) in &masks {
        let m: Vec<Value> = (0..w)
            .map(|k| {
                let (x, s) = (l.b.use_var(cur[k]), l.b.use_var(saved[k]));
                l.b.ins().bitselect(alive[k], x, s)
            })
            .collect();
        l.store_bits(o, &m, false);
    }
    for (k, &ev) in events.iter().enumerate() {
        l.store_vec(ev, st_base, loop_offsets::EVENTS as i32, k);
    }
    l.b.ins().jump(head, &[next.into()]);

    l.finish(exit);
}
