//! Lazy canonicalisation and the register files of a clause walk
//! ([`super::walk`]; `docs/design.md`, "Canonicalise where values are
//! observed").
//!
//! Canonicalisation is lazy: `Omod`/`Canon` only scale; NaN
//! standardisation and the denormal flush happen where a value is
//! observed — a register or output write, an uncached write's operands,
//! a fetch's coordinates handed to the runtime, and the raw-bit selects
//! MIN/MAX/CND/CMP, which pass operand bits through (compiled lookups read
//! coordinates as numbers and take the raw vectors). That is exact:
//! compiled code runs under MXCSR.DAZ, where arithmetic reads an unflushed denormal exactly like the
//! flushed one, NaN-ness survives every arithmetic operation (and every
//! payload gives the same result once standardised), and zero tests, clamp
//! and compares ignore payloads and read denormals as zeros.
//!
//! A sign modifier (NEG/ABS/NAB) of a lazily canonical value is lazy too:
//! its canonical form is the modifier applied to the operand's canonical
//! form (the modifier flips bits of a NaN, so canonicalising afterwards
//! would give a different pattern).
//!
//! A full batch keeps registers in SSA values: where it reads the ones the
//! clause has not seen yet and leaves the ones it wrote is a [`RegFile`]
//! (the lanes' memory for a clause's function, [`Memory`]; a loop region's
//! variables for its lane-wise body).

use super::{GROUP_QUADS, Lowering, REG_BYTES};
use crate::ir::{Unary, V};
use crate::state::offsets;
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

impl Lowering<'_, '_> {
    pub(super) fn lazy(&self, v: V) -> Lazy {
        self.lazy[v.0 as usize]
    }

    pub(super) fn set_lazy(&mut self, v: V, q: [Value; GROUP_QUADS], lazy: Lazy) {
        self.set(v, q);
        self.lazy[v.0 as usize] = lazy;
    }

    /// The canonical vectors of `v` (computed once, then remembered).
    pub(super) fn canonical(&mut self, v: V) -> [Value; GROUP_QUADS] {
        let q = self.get(v).q;
        let c = match self.lazy(v) {
            Lazy::No => return q,
            Lazy::Canon => self.each_of(&[&q], |l, k| l.omod(q[k], 0)),
            Lazy::Sign(op, a) => {
                let a = self.canonical(a);
                self.each_of(&[&a], |l, k| l.sign(op, a[k]))
            }
        };
        self.set_lazy(v, c, Lazy::No);
        c
    }

    /// Stores the batch's vectors of `q` at `off` in the lanes.
    pub(super) fn store_batch(&mut self, q: [Value; GROUP_QUADS], off: i32) {
        for (k, &v) in q.iter().enumerate().take(self.w) {
            self.store_vec(v, self.base, off, k);
        }
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

    /// Takes output channel `at` (target · 4 + channel), written with the
    /// canonical vectors `q`; `false` leaves it to the lanes' memory.
    fn output(&mut self, l: &mut Lowering<'_, '_>, at: usize, q: [Value; GROUP_QUADS]) -> bool {
        let _ = (l, at, q);
        false
    }

    /// The lanes that execute, as I32X4 lane masks per quad, where not
    /// every lane of the batch does: lookups fetch (and count reads outside
    /// their surface) for these alone.
    fn lanes(&mut self, l: &mut Lowering<'_, '_>) -> Option<[Value; GROUP_QUADS]> {
        let _ = l;
        None
    }
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
