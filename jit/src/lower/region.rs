//! A loop region run lane-wise, as one function ([`crate::lanewise`]).
//!
//! Per batch of `w` quads with a lane in the loop: the registers the region
//! touches, the predicate channels and the ALU result are read once into
//! SSA variables; the iterations then run the region's clauses one after
//! another with the full walk ([`super::walk`]) on those
//! variables — no loads, stores, blends or lane masks. A break tests its
//! lanes; when one leaves, a cold block copies the batch's state aside for
//! it (registers into their own memory, which the loop never reads; masks
//! into `*_saved` variables), records where it left (its event) and drops
//! it from the batch's lanes in the loop; when none is left, or the count
//! runs out, the batch writes back what each lane had when it left (or has
//! now) and its events ([`crate::state::LoopState::events`]). Registers
//! that no code after the loop reads are neither captured nor written
//! back ([`crate::lanewise::Carried::live_out`]). Raw
//! registers are written back raw; [`crate::lanewise::settle`] makes them
//! canonical where a lane wrote them. The function returns
//! 0; [`crate::lanewise::settle`] makes the rest of the state.
//!
//! Signature: [`crate::state::LoopFn`].

use super::lazy::{Lazy, RegFile, Writes};
use super::{GROUP_QUADS, Lookups, Lowering};
use crate::ir::{Fc, Index, Program, Term};
use crate::lanewise::Lanewise;
use crate::regions::LoopRegion;
use crate::state::{LANE_STAYED, io_offsets, loop_offsets, offsets};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{Block, InstBuilder, MemFlagsData, Type, Value, types};
use cranelift_frontend::{FunctionBuilder, Variable};

/// The SSA variables of a batch.
pub(super) struct Vars {
    /// Per register of [`Lanewise::regs`], per quad: the current vectors.
    /// (Lanes that leave are captured in the registers' memory, which the
    /// loop never reads.)
    pub(super) cur: Vec<[Variable; GROUP_QUADS]>,
    /// Predicate channels and the ALU result (I32X4 lane masks), current
    /// and captured.
    pub(super) pred: [[Variable; GROUP_QUADS]; 4],
    pub(super) pred_saved: [[Variable; GROUP_QUADS]; 4],
    pub(super) alu: [Variable; GROUP_QUADS],
    pub(super) alu_saved: [Variable; GROUP_QUADS],
    /// Lanes still in the loop, as bits: bit `4k + i` for lane `i` of the
    /// batch's quad `k` (in a general register, so that the vector
    /// registers hold the loop's values: Mandelbrot ran 8% faster than
    /// with lane masks).
    pub(super) alive_bits: Variable,
    /// The same as lane masks, kept where the region looks up (its lookups
    /// read them in every iteration).
    pub(super) alive: Option<[Variable; GROUP_QUADS]>,
    /// Where each lane left ([`crate::state::LoopState::events`]).
    pub(super) event: [Variable; GROUP_QUADS],
    /// Iterations completed, and aL.
    pub(super) it: Variable,
    pub(super) al: Variable,
}

/// Registers and masks in the batch's variables.
pub(super) struct InVars<'v> {
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

    /// The lanes still in the loop: lanes that left must not look up (and
    /// be counted outside a surface) as the lock-step run would not.
    fn lanes(&mut self, l: &mut Lowering<'_, '_>) -> Option<[Value; GROUP_QUADS]> {
        let alive = alive_masks(l, self.vars);
        Some(l.each(|_, k| alive[k]))
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

/// Stores the current value of every register the loop writes and code
/// after it may read ([`crate::lanewise::Carried::live_out`]) into its
/// lanes' memory, in the lanes of quad `k` set in `masks[k]`.
fn store_written(l: &mut Lowering<'_, '_>, lw: &Lanewise, v: &Vars, masks: &[Value]) {
    for (p, reg) in lw.regs.iter().enumerate() {
        if reg.carried_out().is_none() {
            continue;
        }
        let index = Index {
            base: reg.index,
            rel: false,
        };
        let (at, o) = l.temp_addr(index, reg.chan);
        for (k, &m) in masks.iter().enumerate() {
            let x = l.b.use_var(v.cur[p][k]);
            l.blend_vec(m, x, at, o, k);
        }
    }
}

/// The batch's lanes still in the loop, as lane masks.
pub(super) fn alive_masks(l: &mut Lowering<'_, '_>, v: &Vars) -> Vec<Value> {
    match v.alive {
        Some(q) => (0..l.w).map(|k| l.b.use_var(q[k])).collect(),
        None => {
            let bits = l.b.use_var(v.alive_bits);
            (0..l.w).map(|k| l.batch_quad_mask(bits, k)).collect()
        }
    }
}

pub(super) fn vars(b: &mut FunctionBuilder<'_>, lw: &Lanewise, looks_up: bool) -> Vars {
    let mut quad =
        |ty: Type| -> [Variable; GROUP_QUADS] { std::array::from_fn(|_| b.declare_var(ty)) };
    let cur = lw.regs.iter().map(|_| quad(types::F32X4)).collect();
    let pred = std::array::from_fn(|_| quad(types::I32X4));
    let pred_saved = std::array::from_fn(|_| quad(types::I32X4));
    let (alu, alu_saved) = (quad(types::I32X4), quad(types::I32X4));
    let event = quad(types::I32X4);
    let alive = looks_up.then(|| quad(types::I32X4));
    let alive_bits = b.declare_var(types::I32);
    Vars {
        cur,
        pred,
        pred_saved,
        alu,
        alu_saved,
        alive,
        alive_bits,
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
        let pred = match fc.pred.0 {
            Some(c) => self.b.use_var(vars.pred[usize::from(c & 3)][k]),
            None => self.splat_i(u32::MAX),
        };
        let zero = self.splat_i(0);
        super::driver::jump_wanted(self.b, fc, [alu, pred, zero], bools)
    }

    /// The batch's lane masks `m` (one I32X4 per quad) as bits: bit
    /// `4k + i` for lane `i` of quad `k`.
    fn lane_bits(&mut self, m: &[Value]) -> Value {
        match *m {
            [a] => self.b.ins().vhigh_bits(types::I32, a),
            [a, b] => {
                let h = self.b.ins().snarrow(a, b);
                self.b.ins().vhigh_bits(types::I32, h)
            }
            [a, b, c, d] => {
                let (ab, cd) = (self.b.ins().snarrow(a, b), self.b.ins().snarrow(c, d));
                let bytes = self.b.ins().snarrow(ab, cd);
                self.b.ins().vhigh_bits(types::I32, bytes)
            }
            _ => unreachable!("batches are 1, 2 or 4 quads"),
        }
    }

    /// Quad `k` of the batch's bits `bits` (bit `4k + i` for its lane `i`)
    /// as an I32X4 lane mask.
    fn batch_quad_mask(&mut self, bits: Value, k: usize) -> Value {
        let b = if k == 0 {
            bits
        } else {
            self.b.ins().ushr_imm_s(bits, 4 * k as i64)
        };
        self.lane_mask(b)
    }
}

/// What the lane-wise function's pieces share: the analysis, the batch's
/// variables, the mask words kept in variables and the loop's scalars.
pub(super) struct Region<'v> {
    pub(super) lw: &'v Lanewise,
    pub(super) v: Vars,
    /// Per mask word kept in variables: its offset in the lanes, the
    /// current and the captured variables.
    pub(super) masks: Vec<(usize, [Variable; GROUP_QUADS], [Variable; GROUP_QUADS])>,
    /// Where a lane that leaves has its registers captured: `None`, their
    /// lanes' memory; else, per register of [`Lanewise::regs`], variables
    /// (a strip's loop, [`super::strip_loop`]).
    pub(super) saved: Option<Vec<[Variable; GROUP_QUADS]>>,
    /// The boolean constants, the trip count and aL's step.
    bools: Value,
    count: Value,
    step: Value,
    /// Clauses per iteration.
    clauses: i64,
}

impl<'v> Region<'v> {
    /// The pieces for `lw`'s region of `clauses` clauses per iteration;
    /// `looks_up`: whether it looks up; `(count, step, bools)`: the trip
    /// count, aL's step and the boolean constants; `saved`: whether lanes
    /// that leave are captured in variables.
    pub(super) fn new(
        b: &mut FunctionBuilder<'_>,
        (lw, clauses, looks_up): (&'v Lanewise, usize, bool),
        (count, step, bools): (Value, Value, Value),
        saved: bool,
    ) -> Region<'v> {
        let v = vars(b, lw, looks_up);
        let masks = (0..4)
            .filter(|&c| lw.pred[c])
            .map(|c| (offsets::PRED + 4 * c, v.pred[c], v.pred_saved[c]))
            .chain(lw.alu.then_some((offsets::ALU_RESULT, v.alu, v.alu_saved)))
            .collect();
        let saved = saved.then(|| {
            lw.regs
                .iter()
                .map(|_| std::array::from_fn(|_| b.declare_var(types::F32X4)))
                .collect()
        });
        Region {
            lw,
            v,
            masks,
            saved,
            bools,
            count,
            step,
            clauses: clauses as i64,
        }
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
    let load = |b: &mut FunctionBuilder<'_>, p, off: usize| {
        b.ins()
            .load(types::I32, MemFlagsData::trusted(), p, off as i32)
    };
    let looks_up = super::region_looks_up(program, &region.clauses);
    let quads = load(b, lanes, offsets::QUADS);
    let al0 = load(b, st, loop_offsets::AL);
    let scalars = (
        load(b, st, loop_offsets::COUNT),
        load(b, st, loop_offsets::STEP),
        load(b, uni, io_offsets::BOOLS),
    );
    let r = Region::new(b, (lw, region.clauses.len(), looks_up), scalars, false);
    let values = region
        .clauses
        .iter()
        .map(|&ci| program.clauses[ci as usize].values)
        .max()
        .unwrap_or(0);
    let mut l = Lowering::new(b, w, ptr, call_conv, [lanes, uni, io], (values, al0), None);
    // The runtime runs this function only where every input the region
    // looks up has a descriptor.
    l.lookups = Lookups::Direct;
    l.forms = program.forms;
    let entry_memo = l.memo.clone();

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

    l.b.switch_to_block(work);
    r.enter(&mut l, bits, al0);
    // The batch's helper lanes, read once for all its iterations' lookups.
    if looks_up {
        l.helpers = Some(l.helpers());
    }
    r.iterate(&mut l, program, region);

    // out: what each lane had when it left (or has now), written back.
    l.memo = entry_memo;
    l.helpers = None;
    r.leave(&mut l, st_base);
    l.b.ins().jump(head, &[next.into()]);

    l.finish(exit);
}

impl Region<'_> {
    /// The batch's state into the variables: its lanes alive where running
    /// and active (`bits`, the batch's), no events, its registers and mask
    /// words, no iteration done, aL = `al0`.
    fn enter(&self, l: &mut Lowering<'_, '_>, bits: Value, al0: Value) {
        let v = &self.v;
        let none = l.splat_i(u32::MAX);
        l.b.def_var(v.alive_bits, bits);
        for k in 0..l.w {
            l.b.def_var(v.event[k], none);
            if let Some(q) = v.alive {
                let alive = l.batch_quad_mask(bits, k);
                l.b.def_var(q[k], alive);
            }
        }
        for (p, r) in self.lw.regs.iter().enumerate() {
            let index = Index {
                base: r.index,
                rel: false,
            };
            let (at, o) = l.temp_addr(index, r.chan);
            for k in 0..l.w {
                let x = l.load_vec(at, o, k);
                l.b.def_var(v.cur[p][k], x);
            }
        }
        for &(o, cur, saved) in &self.masks {
            let m = l.mask_vecs(o);
            for k in 0..l.w {
                l.b.def_var(cur[k], m[k]);
                l.b.def_var(saved[k], m[k]);
            }
        }
        let zero = l.b.ins().iconst(types::I32, 0);
        l.b.def_var(v.it, zero);
        l.b.def_var(v.al, al0);
    }

    /// The batch's iterations, from a new block: every clause of the
    /// region, its breaks and its end; leaves `l` in the block they go on
    /// from when the last lane has left or the count is out.
    pub(super) fn iterate(&self, l: &mut Lowering<'_, '_>, program: &Program, region: &LoopRegion) {
        let (iter, out) = (l.b.create_block(), l.b.create_block());
        l.b.ins().jump(iter, &[]);
        l.b.switch_to_block(iter);
        // What an iteration memoises after its first break does not reach
        // `out`.
        let memo = l.memo.clone();
        l.al = l.b.use_var(self.v.al);
        for (j, &ci) in region.clauses.iter().enumerate() {
            let clause = &program.clauses[ci as usize];
            l.uniforms(clause);
            #[cfg(feature = "fault-injection")]
            crate::fault::check(clause, crate::fault::Site::Region);
            l.full_nodes(
                clause,
                &mut InVars {
                    lw: self.lw,
                    vars: &self.v,
                },
            );
            let Term::Fc { fc, .. } = &clause.term else {
                continue;
            };
            if j + 1 < region.clauses.len() {
                self.lower_break(l, fc, j, out);
            } else {
                self.lower_end(l, iter, out);
            }
        }
        l.rejoin(out, memo);
    }

    /// A break after clause `j` of the iteration: lanes that want its jump
    /// are captured and leave; when none is left, on to `out`.
    fn lower_break(&self, l: &mut Lowering<'_, '_>, fc: &Fc, j: usize, out: Block) {
        let (v, w) = (&self.v, l.w);
        let want: Vec<Value> = (0..w).map(|k| l.want_vec(fc, v, self.bools, k)).collect();
        let want = l.lane_bits(&want);
        let alive = l.b.use_var(v.alive_bits);
        let leaving = l.b.ins().band(want, alive);
        let (capture, cont) = (l.b.create_block(), l.b.create_block());
        l.b.ins().brif(leaving, capture, &[], cont, &[]);
        l.b.switch_to_block(capture);
        let memo = l.memo.clone();
        let want: Vec<Value> = (0..w).map(|k| l.batch_quad_mask(leaving, k)).collect();
        match &self.saved {
            None => store_written(l, self.lw, v, &want),
            Some(saved) => {
                for (p, reg) in self.lw.regs.iter().enumerate() {
                    if reg.carried_out().is_none() {
                        continue;
                    }
                    for (k, &m) in want.iter().enumerate() {
                        let (x, s) = (l.b.use_var(v.cur[p][k]), l.b.use_var(saved[p][k]));
                        let s = l.select_f(m, x, s);
                        l.b.def_var(saved[p][k], s);
                    }
                }
            }
        }
        for &(_, cur, saved) in &self.masks {
            for (k, &m) in want.iter().enumerate() {
                let (x, s) = (l.b.use_var(cur[k]), l.b.use_var(saved[k]));
                let s = l.b.ins().bitselect(m, x, s);
                l.b.def_var(saved[k], s);
            }
        }
        let it = l.b.use_var(v.it);
        let e = l.b.ins().imul_imm_s(it, self.clauses);
        let e = l.b.ins().iadd_imm_s(e, j as i64);
        let e = l.b.ins().splat(types::I32X4, e);
        for (k, &m) in want.iter().enumerate() {
            let ev = l.b.use_var(v.event[k]);
            let ev = l.b.ins().bitselect(m, e, ev);
            l.b.def_var(v.event[k], ev);
            if let Some(q) = v.alive {
                let a = l.b.use_var(q[k]);
                let a = l.b.ins().band_not(a, m);
                l.b.def_var(q[k], a);
            }
        }
        let left = l.b.ins().band_not(alive, leaving);
        l.b.def_var(v.alive_bits, left);
        l.b.ins().brif(left, cont, &[], out, &[]);
        l.memo = memo;
        l.b.switch_to_block(cont);
    }

    /// The ENDLOOP/ENDREP: back to `iter` for the next iteration, or on to
    /// `out` when the count is out (the lanes still in the loop stayed).
    fn lower_end(&self, l: &mut Lowering<'_, '_>, iter: Block, out: Block) {
        let v = &self.v;
        let stayed = l.splat_i(LANE_STAYED as u32);
        let it = l.b.use_var(v.it);
        let it = l.b.ins().iadd_imm_s(it, 1);
        let done = l.b.ins().icmp(IntCC::Equal, it, self.count);
        let (stay, back) = (l.b.create_block(), l.b.create_block());
        l.b.ins().brif(done, stay, &[], back, &[]);
        let memo = l.memo.clone();
        l.arm(stay, &memo);
        let alive = alive_masks(l, v);
        for (k, &alive) in alive.iter().enumerate() {
            let ev = l.b.use_var(v.event[k]);
            let ev = l.b.ins().bitselect(alive, stayed, ev);
            l.b.def_var(v.event[k], ev);
        }
        l.b.ins().jump(out, &[]);
        l.arm(back, &memo);
        l.b.def_var(v.it, it);
        let al = l.b.ins().iadd(l.al, self.step);
        l.b.def_var(v.al, al);
        l.b.ins().jump(iter, &[]);
    }

    /// Writes back what each lane had when it left (or has now), and the
    /// events at `st_base`.
    fn leave(&self, l: &mut Lowering<'_, '_>, st_base: Value) {
        let (v, w) = (&self.v, l.w);
        let alive = alive_masks(l, v);
        let events: Vec<Value> = (0..w).map(|k| l.b.use_var(v.event[k])).collect();
        // Raw registers are made canonical by `settle`, for the lanes that
        // wrote them in the loop.
        store_written(l, self.lw, v, &alive);
        for &(o, cur, saved) in &self.masks {
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
    }
}
