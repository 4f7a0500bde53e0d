//! The full-batch body of a clause: the code a batch takes when every one
//! of its lanes is running and active (`docs/design.md`, "Canonicalise where
//! values are observed").
//!
//! With every lane enabled, a gated write is a plain write, so:
//!
//! * **registers live in SSA values** across the clause: loaded on first
//!   read, stored once at the end, no blends;
//! * **canonicalisation is lazy**: `Omod`/`Canon` only scale; NaN
//!   standardisation and the denormal flush happen where a value is
//!   observed — register write-back at the end, outputs, the raw-bit
//!   selects MIN/MAX/CND/CMP, which pass operand bits through. That is
//!   exact: compiled code runs under MXCSR.DAZ, where arithmetic reads an
//!   unflushed denormal exactly like the flushed one, NaN-ness survives
//!   every arithmetic operation (and every payload gives the same result
//!   once standardised), and zero tests, clamp and compares ignore payloads
//!   and read denormals as zeros.
//!
//! A sign modifier (NEG/ABS/NAB) of a lazily canonical value is lazy too:
//! its canonical form is the modifier applied to the operand's canonical
//! form (the modifier flips bits of a NaN, so canonicalising afterwards
//! would give a different pattern).
//!
//! Fetches and uncached writes call the runtime for every lane of the
//! batch (such clauses take whole groups), with canonical operands.
//! Clauses that kill, use predicated writes or address temporaries
//! relative to aL take only the general body ([`eligible`]).

use super::{GROUP_QUADS, Lowering, REG_BYTES};
use crate::ir::{Binary, Clause, Op, Select, Unary, V};
use crate::state::{io_offsets, offsets};
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Value, types};
use std::collections::{BTreeMap, BTreeSet};

/// How a value's vectors relate to the IR value they stand for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Lazy {
    /// The vectors are the value.
    No,
    /// The value is `canon(vectors)`.
    Canon,
    /// The value is `op(canonical form of v)`, `op` a sign modifier; the
    /// vectors hold `op(raw vectors of v)`.
    Sign(Unary, V),
}

/// Whether `clause` has a full-batch body.
pub(super) fn eligible(clause: &Clause) -> bool {
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

impl Lowering<'_, '_> {
    fn lazy(&self, v: V) -> Lazy {
        self.lazy[v.0 as usize]
    }

    fn set_lazy(&mut self, v: V, q: [Value; GROUP_QUADS], lazy: Lazy) {
        self.set(v, q);
        self.lazy[v.0 as usize] = lazy;
    }

    /// The canonical vectors of `v` (computed once, then remembered).
    pub(super) fn canonical(&mut self, v: V) -> [Value; GROUP_QUADS] {
        let q = self.get(v).q;
        let c = match self.lazy(v) {
            Lazy::No => return q,
            Lazy::Canon => self.each(|l, k| l.omod(q[k], 0)),
            Lazy::Sign(op, a) => {
                let a = self.canonical(a);
                self.each(|l, k| l.sign(op, a[k]))
            }
        };
        self.set_lazy(v, c, Lazy::No);
        c
    }

    /// Stores the batch's vectors of `q` at `off` in the lanes.
    fn store_batch(&mut self, q: [Value; GROUP_QUADS], off: i32) {
        for (k, &v) in q.iter().enumerate().take(self.w) {
            self.store_vec(v, self.base, off, k);
        }
    }

    /// Lowers the clause's nodes for a full batch (see the module docs),
    /// registers in the lanes' memory.
    pub(super) fn full_batch(&mut self, clause: &Clause) {
        self.full_nodes(clause, &mut Memory);
    }

    /// Lowers the clause's nodes for a full batch, with registers the
    /// clause has not seen yet read from `file`, and what it wrote handed
    /// to `file` at the end.
    pub(super) fn full_nodes(&mut self, clause: &Clause, file: &mut dyn RegFile) {
        let mut out = Writes::default();
        let Writes {
            regs,
            dirty,
            pred,
            alu,
            written,
        } = &mut out;
        for (i, node) in clause.nodes.iter().enumerate() {
            let mark = self.mark_start(node.pc);
            match &node.op {
                Op::Const { .. } | Op::Imm { .. } => {}
                Op::Temp { dst, index, chan } => {
                    let key = (index.base, *chan);
                    match regs.get(&key) {
                        Some(&src) => {
                            let q = self.get(src).q;
                            let lazy = self.lazy(src);
                            self.set_lazy(*dst, q, lazy);
                        }
                        None => {
                            let (q, lazy) = file.read(self, index.base, *chan);
                            self.set_lazy(*dst, q, lazy);
                        }
                    }
                    // From here on the register reads as this value, so a
                    // canonical form computed for it serves both.
                    regs.insert(key, *dst);
                }
                Op::Unary { dst, op, a } => {
                    let va = self.get(*a).q;
                    match op {
                        Unary::Neg | Unary::Abs | Unary::Nab => {
                            let q = self.each(|l, k| l.sign(*op, va[k]));
                            let lazy = match self.lazy(*a) {
                                Lazy::No => Lazy::No,
                                _ => Lazy::Sign(*op, *a),
                            };
                            self.set_lazy(*dst, q, lazy);
                        }
                        Unary::Omod(s) => {
                            let q = self.each(|l, k| l.scale(va[k], *s));
                            self.set_lazy(*dst, q, Lazy::Canon);
                        }
                        Unary::Canon => self.set_lazy(*dst, va, Lazy::Canon),
                        _ => {
                            self.unary(*dst, *op, *a);
                            self.lazy[dst.0 as usize] = Lazy::No;
                        }
                    }
                }
                Op::Binary { dst, op, a, b } => {
                    if matches!(op, Binary::Min | Binary::Max) {
                        let (ra, rb) = (self.canonical(*a), self.canonical(*b));
                        let max = *op == Binary::Max;
                        let q = self.each(|l, k| l.minmax(max, ra[k], rb[k]));
                        self.set_lazy(*dst, q, Lazy::No);
                    } else {
                        let (ra, rb) = (self.get(*a).q, self.get(*b).q);
                        let q = self.each(|l, k| l.arith(*op, ra[k], rb[k]));
                        self.set_lazy(*dst, q, Lazy::No);
                    }
                }
                Op::Select { dst, op, c, a, b } => {
                    let dc = self.get(*c).q;
                    let (va, vb) = (self.canonical(*a), self.canonical(*b));
                    let cmp = *op == Select::Cmp;
                    let q = self.each(|l, k| l.select_op(cmp, dc[k], va[k], vb[k]));
                    self.set_lazy(*dst, q, Lazy::No);
                }
                Op::QuadLane { dst, a, lane } => {
                    let lazy = match self.lazy(*a) {
                        Lazy::Sign(..) => {
                            self.canonical(*a);
                            Lazy::No
                        }
                        l => l,
                    };
                    let va = self.get(*a).q;
                    let q = self.each(|l, k| l.shuffle32(va[k], va[k], [*lane; 4]));
                    self.set_lazy(*dst, q, lazy);
                }
                Op::Mad { .. } | Op::Dot { .. } => {
                    self.node(i as u32, &node.op);
                    let dst = match &node.op {
                        Op::Mad { dst, .. } | Op::Dot { dst, .. } => *dst,
                        _ => unreachable!("matched above"),
                    };
                    self.lazy[dst.0 as usize] = Lazy::No;
                }
                Op::SetTemp { index, chan, v, .. } => {
                    regs.insert((index.base, *chan), *v);
                    dirty.insert((index.base, *chan));
                }
                Op::SetOut {
                    target, chan, v, ..
                } => {
                    let (t, c) = (usize::from(*target), usize::from(*chan));
                    let off = (offsets::OUT + (t * 4 + c) * super::CHAN_BYTES as usize) as i32;
                    let q = self.canonical(*v);
                    self.store_batch(q, off);
                    written.insert(offsets::OUT_WRITTEN + (t * 4 + c) * 4);
                }
                Op::SetDepth { v, .. } => {
                    let q = self.canonical(*v);
                    self.store_batch(q, offsets::DEPTH as i32);
                    written.insert(offsets::DEPTH_WRITTEN);
                }
                Op::SetPred { chan, test, v, .. } => {
                    let t = self.truth(*v, *test);
                    pred[usize::from(*chan & 3)] = Some(t);
                }
                Op::SetAluResult { test, v, .. } => {
                    *alu = Some(self.truth(*v, *test));
                }
                Op::Fetch {
                    dst,
                    coords,
                    kind,
                    input,
                    unscaled,
                    ..
                } => {
                    // Every lane of the (whole-group) batch fetches, with
                    // canonical coordinates.
                    let coords = coords.map(|v| self.canonical(v));
                    let op = super::fetch::Lookup {
                        node: i as u32,
                        kind: *kind,
                        input: *input,
                        unscaled: *unscaled,
                    };
                    let got = self.fetch(op, coords, None);
                    for (d, q) in dst.iter().zip(got) {
                        // Fetched channels are raw memory patterns.
                        self.set_lazy(*d, q, Lazy::No);
                    }
                }
                Op::UmrtWrite { value, x, y, .. } => {
                    for (c, v) in [value, x, y].into_iter().enumerate() {
                        let q = self.canonical(*v);
                        self.store_arg(c, q);
                    }
                    let all = self.b.ins().iconst(types::I32, (1i64 << (4 * self.w)) - 1);
                    let helper = self.load_bits(offsets::HELPER);
                    let helper = self.b.ins().ushr(helper, self.lane0);
                    let bits = self.b.ins().band_not(all, helper);
                    self.host_call(io_offsets::UMRT, i as u32, bits);
                }
                Op::SemWait | Op::SemAcquire { .. } => {}
                Op::Kill { .. } => unreachable!("not eligible for the full-batch body"),
            }
            self.mark_end(mark, node.pc);
        }
        file.write_back(self, &out);
    }
}

/// What a full-batch walk leaves at the end of the clause.
#[derive(Default)]
pub(super) struct Writes {
    /// Registers read or written: (index, channel) → the IR value they hold.
    pub(super) regs: BTreeMap<(u8, u8), V>,
    /// The registers written.
    pub(super) dirty: BTreeSet<(u8, u8)>,
    /// Predicate channels set, per quad of the batch.
    pub(super) pred: [Option<[Value; GROUP_QUADS]>; 4],
    /// The ALU result, if set.
    pub(super) alu: Option<[Value; GROUP_QUADS]>,
    /// Offsets in the lanes of the output-written words to update.
    pub(super) written: BTreeSet<usize>,
}

/// Where a full-batch walk reads the registers a clause has not seen yet
/// and leaves the registers and masks it wrote.
pub(super) trait RegFile {
    /// Register channel `(index, chan)` as vectors and how they relate to
    /// its value.
    fn read(
        &mut self,
        l: &mut Lowering<'_, '_>,
        index: u8,
        chan: u8,
    ) -> ([Value; GROUP_QUADS], Lazy);
    /// Takes what the clause wrote.
    fn write_back(&mut self, l: &mut Lowering<'_, '_>, out: &Writes);
}

/// Registers and masks in the lanes' memory (a clause's function).
pub(super) struct Memory;

impl RegFile for Memory {
    fn read(
        &mut self,
        l: &mut Lowering<'_, '_>,
        index: u8,
        chan: u8,
    ) -> ([Value; GROUP_QUADS], Lazy) {
        let index = crate::ir::Index {
            base: index,
            rel: false,
        };
        let (p, off) = l.temp_addr(index, chan);
        (l.each(|l, k| l.load_vec(p, off, k)), Lazy::No)
    }

    fn write_back(&mut self, l: &mut Lowering<'_, '_>, out: &Writes) {
        // Every register written, canonical.
        for &(index, chan) in &out.dirty {
            let q = l.canonical(out.regs[&(index, chan)]);
            let off = i32::from(index) * REG_BYTES + i32::from(chan) * super::CHAN_BYTES;
            l.store_batch(q, off + offsets::TEMPS as i32);
        }
        for (c, p) in out.pred.iter().enumerate() {
            if let Some(p) = p {
                l.store_bits(offsets::PRED + 4 * c, &p[..l.w], false);
            }
        }
        if let Some(a) = out.alu {
            l.store_bits(offsets::ALU_RESULT, &a[..l.w], false);
        }
        if !out.written.is_empty() {
            let bits = l.b.ins().iconst(types::I32, (1i64 << (4 * l.w)) - 1);
            let bits = l.b.ins().ishl(bits, l.lane0);
            for &off in &out.written {
                let word = l.load_bits(off);
                let word = l.b.ins().bor(word, bits);
                l.b.ins()
                    .store(MemFlagsData::trusted(), word, l.lanes, off as i32);
            }
        }
    }
}
