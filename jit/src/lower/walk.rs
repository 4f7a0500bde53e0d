//! The one walk over a clause's operations ([`Op`]): the value each node
//! produces, register and output writes, mask updates and runtime calls
//! (`docs/design.md`, "The data path"; numeric rules in [`super::math`],
//! canonicalisation in [`super::lazy`]).
//!
//! A walk is either
//!
//! * **masked** (the general body): gates are lane masks
//!   ([`super::masks`]), registers and outputs live in the lanes' memory and
//!   writes blend the new value into the old one (once per place and
//!   batch where the place is fixed: [`super::masks`]); or
//! * **full** (a batch whose every lane is running and active): a gated
//!   write is a plain write, registers live in SSA values across the
//!   clause — read from a [`RegFile`] on first use, handed back to it once
//!   at the end — and the masks written are collected for the same hand-off.
//!
//! Everything else — operands, arithmetic, lazy canonicalisation, output
//! offsets, the lanes a runtime call covers — is the same code for both.
//! Clauses that kill, use predicated writes or address temporaries relative
//! to aL have only the masked walk ([`eligible`]).

use super::lazy::{Lazy, RegFile, Writes};
use super::masks::Masks;
use super::{CHAN_BYTES, GROUP_QUADS, Lowering, fetch, umrt};
use crate::ir::{Binary, Clause, Gate, Index, Op, Select, Test, Unary, V};
use crate::state::offsets;
use cranelift_codegen::ir::{InstBuilder, Value, types};

/// Whether `clause` has a full-batch walk.
pub(crate) fn eligible(clause: &Clause) -> bool {
    clause.nodes.iter().all(|n| match &n.op {
        Op::Temp { index, .. } => !index.rel,
        Op::SetTemp { index, gate, .. } => !index.rel && gate.pred.is_none(),
        Op::Kill { .. } => false,
        Op::SetOut { gate, .. }
        | Op::SetDepth { gate, .. }
        | Op::SetPred { gate, .. }
        | Op::SetAluResult { gate, .. }
        | Op::UmrtWrite { gate, .. } => gate.pred.is_none(),
        // Listed one by one, so that a new operation is decided here.
        Op::Const { .. }
        | Op::Imm { .. }
        | Op::Unary { .. }
        | Op::Binary { .. }
        | Op::Mad { .. }
        | Op::Dot { .. }
        | Op::Select { .. }
        | Op::QuadLane { .. }
        | Op::Fetch { .. }
        | Op::SemWait
        | Op::SemAcquire { .. } => true,
    })
}

/// Which walk, and the state it carries.
enum Walk<'r> {
    /// Gates as the lane masks in [`Lowering::masks`]; state in memory.
    Masked,
    /// Every lane enabled; registers in SSA values from and back to `file`.
    Full {
        file: &'r mut dyn RegFile,
        out: Box<Writes>,
    },
}

/// The mask bits a node sets: a predicate channel or the ALU result.
#[derive(Clone, Copy)]
enum Bits {
    Pred(usize),
    Alu,
}

impl Lowering<'_, '_> {
    /// Lowers the clause's nodes for a batch whose lanes may be partly
    /// enabled: masks loaded first and stored at the end.
    pub(super) fn masked_batch(&mut self, clause: &Clause) {
        self.masks = Some(self.load_masks(clause));
        self.walk(clause, &mut Walk::Masked);
        self.store_masks();
    }

    /// Lowers the clause's nodes for a full batch, registers in the lanes'
    /// memory.
    pub(super) fn full_batch(&mut self, clause: &Clause) {
        self.full_nodes(clause, &mut super::lazy::Memory);
    }

    /// Lowers the clause's nodes for a full batch, with registers the
    /// clause has not seen yet read from `file`, and what it wrote handed
    /// to `file` at the end.
    pub(super) fn full_nodes(&mut self, clause: &Clause, file: &mut dyn RegFile) {
        let mut walk = Walk::Full {
            file,
            out: Box::default(),
        };
        self.walk(clause, &mut walk);
        if let Walk::Full { file, out } = walk {
            file.write_back(self, &out);
        }
    }

    fn walk(&mut self, clause: &Clause, walk: &mut Walk<'_>) {
        for (i, node) in clause.nodes.iter().enumerate() {
            let mark = self.mark_start(node.pc);
            self.node(i as u32, &node.op, walk);
            self.mark_end(mark, node.pc);
        }
    }

    fn node(&mut self, index: u32, op: &Op, walk: &mut Walk<'_>) {
        match op {
            Op::Const { .. } | Op::Imm { .. } | Op::SemWait | Op::SemAcquire { .. } => {}
            Op::Temp { dst, index, chan } => {
                let (q, lazy) = self.read_temp(*index, *chan, walk);
                self.set_lazy(*dst, q, lazy);
                if let Walk::Full { out, .. } = walk {
                    // From here on the register reads as this value, so a
                    // canonical form computed for it serves both.
                    out.regs.insert((index.base, *chan), *dst);
                }
            }
            Op::Unary { dst, op, a } => self.unary_node(*dst, *op, *a),
            Op::Binary { .. }
            | Op::Mad { .. }
            | Op::Dot { .. }
            | Op::Select { .. }
            | Op::QuadLane { .. } => self.value(op),
            Op::SetTemp { .. } | Op::SetOut { .. } | Op::SetDepth { .. } => self.write(op, walk),
            Op::SetPred {
                chan,
                test,
                v,
                gate,
            } => self.set_bits(Bits::Pred(usize::from(*chan & 3)), *test, *v, *gate, walk),
            Op::SetAluResult { test, v, gate } => self.set_bits(Bits::Alu, *test, *v, *gate, walk),
            Op::Kill { checks } => self.kill(checks),
            Op::Fetch { .. } | Op::UmrtWrite { .. } => self.memory(index, op, walk),
        }
    }

    /// The lanes of the batch a gated operation touches, per quad, or
    /// `None` for every lane (a full walk).
    fn gate(&mut self, gate: Gate, walk: &Walk<'_>) -> Option<Vec<Value>> {
        match walk {
            Walk::Masked => Some(self.enabled(gate)),
            Walk::Full { .. } => None,
        }
    }

    /// The lanes of `enable` (every lane of the batch when `None`) as bits
    /// relative to the batch's first lane.
    pub(super) fn enable_bits(&mut self, enable: Option<&[Value]>) -> Value {
        match enable {
            Some(m) => self.batch_bits(m),
            None => self.b.ins().iconst(types::I32, (1i64 << (4 * self.w)) - 1),
        }
    }

    /// Register channel `(index, chan)` as vectors and how they relate to
    /// its value.
    fn read_temp(
        &mut self,
        index: Index,
        chan: u8,
        walk: &mut Walk<'_>,
    ) -> ([Value; GROUP_QUADS], Lazy) {
        match walk {
            Walk::Masked => {
                let (p, off) = self.temp_addr(index, chan);
                // A held write there, or anywhere when aL picks the place.
                self.make_writes((!index.rel).then_some(off));
                (self.each(|l, k| l.load_vec(p, off, k)), Lazy::No)
            }
            Walk::Full { file, out } => match out.regs.get(&(index.base, chan)) {
                Some(&src) => (self.get(src).q, self.lazy(src)),
                None => file.read(self, index.base, chan),
            },
        }
    }

    fn unary_node(&mut self, dst: V, op: Unary, a: V) {
        let va = self.get(a).q;
        match op {
            Unary::Neg | Unary::Abs | Unary::Nab => {
                let q = self.each_of(&[&va], |l, k| l.sign(op, va[k]));
                let lazy = match self.lazy(a) {
                    Lazy::No => Lazy::No,
                    _ => Lazy::Sign(op, a),
                };
                self.set_lazy(dst, q, lazy);
            }
            Unary::Omod(s) => {
                let q = self.each_of(&[&va], |l, k| l.scale(va[k], s));
                self.set_lazy(dst, q, Lazy::Canon);
            }
            Unary::Canon => self.set_lazy(dst, va, Lazy::Canon),
            Unary::Clamp => {
                let q = self.each_of(&[&va], |l, k| l.clamp(va[k], va[k]));
                self.set_lazy(dst, q, Lazy::No);
            }
            Unary::Frc | Unary::Rcp | Unary::Rsq => {
                let q = self.each_of(&[&va], |l, k| match op {
                    Unary::Frc => l.frc(va[k]),
                    Unary::Rcp => l.rcp(va[k]),
                    _ => l.rsq(va[k]),
                });
                self.set_lazy(dst, q, Lazy::No);
            }
            Unary::Ex2 | Unary::Ln2 | Unary::Sin | Unary::Cos => {
                let q = self.each_of(&[&va], |l, k| l.transcendental(op, va[k]));
                self.set_lazy(dst, q, Lazy::No);
            }
        }
    }

    /// The operations that only compute a value.
    fn value(&mut self, op: &Op) {
        match op {
            Op::Binary { dst, op, a, b } => {
                let q = if matches!(op, Binary::Min | Binary::Max) {
                    let (ra, rb) = (self.canonical(*a), self.canonical(*b));
                    let max = *op == Binary::Max;
                    self.each_of(&[&ra, &rb], |l, k| l.minmax(max, ra[k], rb[k]))
                } else {
                    let (ra, rb) = (self.get(*a).q, self.get(*b).q);
                    self.each_of(&[&ra, &rb], |l, k| l.arith(*op, ra[k], rb[k]))
                };
                self.set_lazy(*dst, q, Lazy::No);
            }
            Op::Mad { dst, a, b, c } => {
                let q = self.mad(*a, *b, *c);
                self.set_lazy(*dst, q, Lazy::No);
            }
            Op::Dot { dst, pairs, addend } => {
                let pairs: Vec<_> = pairs
                    .iter()
                    .map(|&(a, b)| (self.get(a).q, self.get(b).q))
                    .collect();
                let addend = addend.map(|c| self.get(c).q);
                let q = self.each(|l, k| {
                    let p: Vec<_> = pairs.iter().map(|(a, b)| (a[k], b[k])).collect();
                    l.dot(&p, addend.map(|c| c[k]))
                });
                self.set_lazy(*dst, q, Lazy::No);
            }
            Op::Select { dst, op, c, a, b } => {
                let dc = self.get(*c).q;
                let (va, vb) = (self.canonical(*a), self.canonical(*b));
                let cmp = *op == Select::Cmp;
                let q = self.each_of(&[&dc, &va, &vb], |l, k| {
                    l.select_op(cmp, dc[k], va[k], vb[k])
                });
                self.set_lazy(*dst, q, Lazy::No);
            }
            Op::QuadLane { dst, a, lane } => {
                // The shuffle commutes with canonicalisation, not with a
                // lazy sign modifier's deferred operand.
                let lazy = match self.lazy(*a) {
                    Lazy::Sign(..) => {
                        self.canonical(*a);
                        Lazy::No
                    }
                    l => l,
                };
                let va = self.get(*a).q;
                let q = self.each_of(&[&va], |l, k| l.shuffle32(va[k], va[k], [*lane; 4]));
                self.set_lazy(*dst, q, lazy);
            }
            _ => unreachable!("not a value operation: {op:?}"),
        }
    }

    /// `a · b + c`, raw (an arithmetic result). Under DAZ, x · 1 is x,
    /// x + (−0) and (−0) + x are x, and a square plus +0 is the square
    /// (never −0) for every operand: a denormal reads as the zero it is
    /// flushed to, NaN stays NaN and is standardised where observed. Skip
    /// them.
    fn mad(&mut self, a: V, b: V, c: V) -> [Value; GROUP_QUADS] {
        const ONE: u32 = 0x3F80_0000;
        const NEG_ZERO: u32 = 0x8000_0000;
        let is = |l: &Self, v: V, bits| l.imm[v.0 as usize] == Some(bits);
        let (a, b) = if is(self, a, ONE) { (b, a) } else { (a, b) };
        let times_one = is(self, b, ONE);
        if times_one && is(self, a, NEG_ZERO) {
            return self.get(c).q;
        }
        let square_plus_zero = a == b && is(self, c, 0);
        let add = !(is(self, c, NEG_ZERO) || square_plus_zero);
        // −x · 1 + c is c − x: IEEE subtraction is the addition of the
        // negation, bit for bit (signed zeros, infinities; a NaN's sign is
        // not observable, §7.1), and it spares the sign flip.
        if let (true, true, Some(x)) = (times_one, add, self.neg[a.0 as usize]) {
            let (dx, dc) = (self.get(x).q, self.get(c).q);
            return self.each_of(&[&dx, &dc], |l, k| l.b.ins().fsub(dc[k], dx[k]));
        }
        let (da, dc) = (self.get(a).q, self.get(c).q);
        let product = (!times_one).then(|| self.get(b).q);
        let db = product.unwrap_or(da);
        self.each_of(&[&da, &db, &dc], |l, k| {
            let p = match product {
                Some(db) => l.b.ins().fmul(da[k], db[k]),
                None => da[k],
            };
            if add { l.b.ins().fadd(p, dc[k]) } else { p }
        })
    }

    /// Register and output writes.
    fn write(&mut self, op: &Op, walk: &mut Walk<'_>) {
        let (v, gate) = match op {
            Op::SetTemp { v, gate, .. } | Op::SetOut { v, gate, .. } | Op::SetDepth { v, gate } => {
                (*v, *gate)
            }
            _ => unreachable!("not a write: {op:?}"),
        };
        if let (Op::SetTemp { index, chan, .. }, Walk::Full { out, .. }) = (op, &mut *walk) {
            out.regs.insert((index.base, *chan), v);
            out.dirty.insert((index.base, *chan));
            return;
        }
        let m = self.gate(gate, walk);
        // Output channel `target · 4 + chan`, for a register file that
        // takes outputs itself.
        let out_at = match op {
            Op::SetOut { target, chan, .. } => Some(usize::from(*target) * 4 + usize::from(*chan)),
            _ => None,
        };
        let (p, off, written) = match (op, out_at) {
            (Op::SetTemp { index, chan, .. }, _) => {
                let (p, off) = self.temp_addr(*index, *chan);
                (p, off, None)
            }
            (_, Some(at)) => {
                let off = offsets::OUT as i32 + at as i32 * CHAN_BYTES;
                (self.base, off, Some(offsets::OUT_WRITTEN + at * 4))
            }
            _ => (
                self.base,
                offsets::DEPTH as i32,
                Some(offsets::DEPTH_WRITTEN),
            ),
        };
        match (walk, m) {
            (Walk::Masked, Some(m)) => {
                if let Some(w) = written {
                    self.note_written(w, &m);
                }
                match op {
                    Op::SetTemp { index, .. } if index.rel => {
                        self.make_writes(None);
                        let q = self.canonical(v);
                        self.blend_store(q, &m, p, off);
                    }
                    _ => {
                        debug_assert!(p == self.base, "a fixed place is the batch's");
                        self.hold_write(off, m, v)
                    }
                }
            }
            (Walk::Full { file, out }, _) => {
                let q = self.canonical(v);
                if let Some(at) = out_at
                    && file.output(self, at, q)
                {
                    return;
                }
                self.store_batch(q, off);
                out.written.extend(written);
            }
            (Walk::Masked, None) => unreachable!("a masked walk gates every write"),
        }
    }

    /// A predicate channel or the ALU result set to `test(v)` under `gate`.
    fn set_bits(&mut self, bits: Bits, test: Test, v: V, gate: Gate, walk: &mut Walk<'_>) {
        let t = self.truth(v, test);
        let Some(m) = self.gate(gate, walk) else {
            if let Walk::Full { out, .. } = walk {
                match bits {
                    Bits::Pred(c) => out.pred[c] = Some(t),
                    Bits::Alu => out.alu = Some(t),
                }
            }
            return;
        };
        let masks = self.masks.take().expect("masks loaded");
        let old = match bits {
            Bits::Pred(c) => &masks.pred[c],
            Bits::Alu => &masks.alu,
        };
        let new: Vec<_> = (0..self.w)
            .map(|k| self.b.ins().bitselect(m[k], t[k], old[k]))
            .collect();
        let mut masks: Masks = masks;
        masks.changed();
        match bits {
            Bits::Pred(c) => (masks.pred[c], masks.dirty_pred[c]) = (new, true),
            Bits::Alu => (masks.alu, masks.dirty_alu) = (new, true),
        }
        self.masks = Some(masks);
    }

    /// `(x, K)` where `a · b + c` is `x + K`, one of `a`, `b` the
    /// immediate 1 and `c` an immediate `K` (or its negation) that a zero
    /// test may move to the other side: a test of `x + K` against zero is
    /// the same test of `x` against `−K` when `K` is finite and either
    /// reads as zero (±0, a denormal: DAZ) or has a magnitude of at least
    /// 2^-102. Then a nonzero exact sum is at least the smallest normal
    /// (the operands' units in the last place are), so the rounded sum is
    /// never a denormal, has the exact sum's sign, and is +0 exactly when
    /// `x = −K`; NaN, ±Inf and denormal `x` give the same answer on both
    /// sides. Every inline constant of the ISA (0, 2^-9…480) qualifies.
    pub(super) fn shift(
        &self,
        a: crate::ir::V,
        b: crate::ir::V,
        c: crate::ir::V,
    ) -> Option<(crate::ir::V, u32)> {
        const ONE: u32 = 0x3F80_0000;
        const SIGN: u32 = 0x8000_0000;
        let imm = |v: crate::ir::V| self.imm[v.0 as usize];
        let x = match (imm(a), imm(b)) {
            (_, Some(ONE)) => a,
            (Some(ONE), _) => b,
            _ => return None,
        };
        let k = match (imm(c), self.neg[c.0 as usize]) {
            (Some(k), _) => k,
            (None, Some(n)) => imm(n)? ^ SIGN,
            _ => return None,
        };
        let magnitude = f32::from_bits(k & !SIGN);
        let moves = magnitude.is_finite()
            && (magnitude < f32::MIN_POSITIVE || magnitude >= 2f32.powi(-102));
        moves.then_some((x, k))
    }

    /// `test(v)` per lane as masks. A test of `x + K` (an immediate) is
    /// the test of `x` against `−K` (see `Lowering::shift`): one addition
    /// less, which loop exits such as Mandelbrot's `|z|² − 4 ≥ 0` make at
    /// every iteration.
    fn truth(&mut self, v: V, t: Test) -> [Value; GROUP_QUADS] {
        if let Some((x, k)) = self.shifted[v.0 as usize] {
            let d = self.get(x).q;
            let bound = self.splat_f(-f32::from_bits(k));
            return self.each(|l, q| l.test_against(t.code(), d[q], bound));
        }
        let d = self.get(v).q;
        self.each(|l, k| l.test_zero(t.code(), d[k]))
    }

    /// Lanes whose checked value is below zero are killed (masked walk
    /// only: see [`eligible`]).
    fn kill(&mut self, checks: &[(V, Gate)]) {
        let mut kill: Option<Vec<Value>> = None;
        for (v, gate) in checks {
            let m = self.enabled(*gate);
            let t = self.truth(*v, Test::Lt);
            let k: Vec<_> = (0..self.w).map(|k| self.b.ins().band(t[k], m[k])).collect();
            kill = Some(match kill {
                None => k,
                Some(prev) => (0..self.w)
                    .map(|q| self.b.ins().bor(prev[q], k[q]))
                    .collect(),
            });
        }
        let Some(kill) = kill else { return };
        let mut m = self.masks.take().expect("masks loaded");
        for (k, &kill) in kill.iter().enumerate() {
            m.killed[k] = self.b.ins().bor(m.killed[k], kill);
            m.running[k] = self.b.ins().band_not(m.running[k], kill);
            m.active[k] = self.b.ins().band_not(m.active[k], kill);
        }
        m.dirty_flow = true;
        m.changed();
        self.masks = Some(m);
    }

    /// Fetches and uncached writes, with canonical operands.
    fn memory(&mut self, index: u32, op: &Op, walk: &mut Walk<'_>) {
        // The runtime may be called: the lanes' memory is made current.
        self.make_writes(None);
        match op {
            Op::Fetch {
                dst,
                coords,
                inactive,
                kind,
                input,
                unscaled,
            } => {
                let gate = Gate {
                    pred: None,
                    inactive: *inactive,
                };
                // A full walk's lookups fetch for the lanes its register
                // file says execute (a lane-wise loop's lanes still in it).
                let m = match walk {
                    Walk::Full { file, .. } => file.lanes(self).map(|q| q[..self.w].to_vec()),
                    Walk::Masked => self.gate(gate, walk),
                };
                // Compiled reads take the coordinates as numbers: DAZ
                // reads a denormal as zero in rounding, compares and
                // products, and no NaN has a texel, so the raw vectors
                // do. The runtime is handed them canonical (it shows them
                // in traces).
                let host = self.may_ask_runtime(*kind);
                let coords = coords.map(|v| {
                    if host {
                        self.canonical(v)
                    } else {
                        self.get(v).q
                    }
                });
                let op = fetch::Lookup {
                    node: index,
                    kind: *kind,
                    input: *input,
                    unscaled: *unscaled,
                };
                let got = self.fetch(op, coords, m.as_deref());
                for (d, q) in dst.iter().zip(got) {
                    // Fetched channels are raw memory patterns.
                    self.set_lazy(*d, q, Lazy::No);
                }
            }
            Op::UmrtWrite {
                value,
                x,
                y,
                gate,
                index: mode,
                ..
            } => {
                let m = self.gate(*gate, walk);
                let op = umrt::Umrt {
                    node: index,
                    index: *mode,
                    ops: [value, x, y].map(|v| self.canonical(*v)),
                };
                self.uncached_write(op, m.as_deref());
            }
            _ => unreachable!("not a memory operation: {op:?}"),
        }
    }
}
