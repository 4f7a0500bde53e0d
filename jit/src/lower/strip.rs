//! A straight program run along a strip of whole quads, as one function
//! ([`crate::state::StripFn`]; `docs/design.md`, "Straight programs in one
//! compiled strip").
//!
//! For a program of [`crate::strip::strip_shape`], started on whole
//! quads with every lane running and active, the function needs no lane
//! state: per batch of quads it makes r0 = (i, j, v, 1) from the lanes' pixels,
//! starts the other registers at zero (a group's registers start at zero),
//! walks the clauses with registers in SSA values, and writes each target's
//! four channels, canonical, straight into the float32_4 rows the strip
//! names — a 4 × 4 transpose per quad turns channel vectors into elements.
//! Predicates, the ALU result and registers left at the end are not
//! observable after the program ends and are dropped.

use super::hash::FastMap;
use super::lazy::{Lazy, RegFile, Writes};
use super::{GROUP_QUADS, Lowering, batch_quads};
use crate::ir::Program;
use crate::ir::TARGETS;
use crate::state::strip_offsets;
use crate::strip::StripShape;
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Type, Value, types};
use cranelift_frontend::FunctionBuilder;
use std::borrow::Cow;

/// Registers of a strip: r0 made from the pixels, the others zero until
/// written, carried from clause to clause; outputs kept for the stores.
pub(super) struct Fresh {
    /// r0's four channels for the batch.
    r0: [[Value; GROUP_QUADS]; 4],
    zero: Value,
    /// Registers written so far: their vectors and how they relate.
    pub(super) regs: FastMap<(u8, u8), ([Value; GROUP_QUADS], Lazy)>,
    /// Predicate channels and the ALU result as last set (I32X4 lane
    /// masks; zero until set): a strip's loop reads them.
    pub(super) pred: [Option<[Value; GROUP_QUADS]>; 4],
    pub(super) alu: Option<[Value; GROUP_QUADS]>,
    /// Output channels written (target · 4 + channel), canonical.
    outs: FastMap<usize, [Value; GROUP_QUADS]>,
}

impl RegFile for Fresh {
    fn read(
        &mut self,
        _: &mut Lowering<'_, '_>,
        index: u8,
        chan: u8,
    ) -> ([Value; GROUP_QUADS], Lazy) {
        if let Some(&r) = self.regs.get(&(index, chan)) {
            return r;
        }
        match index {
            0 => (self.r0[usize::from(chan & 3)], Lazy::No),
            _ => ([self.zero; GROUP_QUADS], Lazy::No),
        }
    }

    fn write_back(&mut self, l: &mut Lowering<'_, '_>, out: &Writes) {
        for &(index, chan) in &out.dirty {
            let v = out.regs[&(index, chan)];
            // A deferred sign modifier names a value of this clause only.
            let r = match l.lazy(v) {
                Lazy::Sign(..) => (l.canonical(v), Lazy::No),
                lazy => (l.get(v).q, lazy),
            };
            self.regs.insert((index, chan), r);
        }
        for (c, p) in out.pred.iter().enumerate() {
            if let Some(p) = p {
                self.pred[c] = Some(*p);
            }
        }
        if let Some(a) = out.alu {
            self.alu = Some(a);
        }
    }

    fn output(&mut self, _: &mut Lowering<'_, '_>, at: usize, q: [Value; GROUP_QUADS]) -> bool {
        self.outs.insert(at, q);
        true
    }
}

/// The batch width, in quads, of `shape`'s strip when `w` is asked for
/// (0: per clause; the narrowest of its clauses'). Optimised code
/// (`optimised`) runs a clause that would take one quad per batch two at a
/// time where its grouped order allows ([`super::shape::two_quads_grouped`]);
/// quick code keeps one, which compiles in about half the time.
pub(crate) fn strip_batch(
    program: &Program,
    shape: &StripShape,
    w: usize,
    optimised: bool,
) -> usize {
    shape
        .clauses
        .iter()
        .map(|&ci| {
            let clause = &program.clauses[ci as usize];
            match batch_quads(clause, w, super::Lookups::Direct) {
                1 if w == 0 && optimised && super::shape::two_quads_grouped(clause) => 2,
                quads => quads,
            }
        })
        .min()
        .unwrap_or(1)
}

/// Builds the strip function of `shape`'s clauses of `program` into `b`
/// (a function with the [`crate::state::StripFn`] signature), batches of
/// `w` quads ([`strip_batch`]): it runs the strip's quads up to the last
/// whole batch and leaves the rest (fewer than `w`) to its caller.
pub(crate) fn lower_strip(
    b: &mut FunctionBuilder<'_>,
    program: &Program,
    shape: &StripShape,
    w: usize,
    ptr: Type,
    call_conv: cranelift_codegen::isa::CallConv,
) {
    let clauses: Vec<_> = shape
        .clauses
        .iter()
        .map(|&ci| &program.clauses[ci as usize])
        .collect();
    debug_assert!(w.is_power_of_two() && w <= GROUP_QUADS);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let params = b.block_params(entry).to_vec();
    let (strip, uni, io) = (params[0], params[1], params[2]);
    let load = |b: &mut FunctionBuilder<'_>, ty, off: usize| {
        b.ins().load(ty, MemFlagsData::trusted(), strip, off as i32)
    };
    let quads = load(b, types::I32, strip_offsets::QUADS);
    let i0 = load(b, types::I32, strip_offsets::I0);
    let j = load(b, types::I32, strip_offsets::J);
    let v = load(b, types::I32, strip_offsets::V);
    // The rows of the targets the strip writes (a load is lowered even
    // where nothing reads it).
    let rows: Vec<Option<[Value; 2]>> = (0..TARGETS)
        .map(|t| {
            let at = |p: usize| strip_offsets::ROWS + (2 * t + p) * ptr.bytes() as usize;
            (shape.targets & (1 << t) != 0).then(|| [load(b, ptr, at(0)), load(b, ptr, at(1))])
        })
        .collect();
    let looped = shape.looped.as_ref();
    let region_clauses = looped.map_or(&[][..], |lp| &lp.region.clauses[..]);
    let values = clauses
        .iter()
        .map(|c| c.values)
        .chain(
            region_clauses
                .iter()
                .map(|&ci| program.clauses[ci as usize].values),
        )
        .max()
        .unwrap_or(0);
    let al = b.ins().iconst(types::I32, 0);
    let events = looped.map(|_| load(b, ptr, strip_offsets::EVENTS));
    // Where the program says which targets are narrow, the strip does
    // not test its `narrow` bits (its caller runs it only where they agree).
    let narrow = program
        .narrow
        .is_none()
        .then(|| load(b, types::I32, strip_offsets::NARROW));
    let mut l = Lowering::new(b, w, ptr, call_conv, [strip, uni, io], (values, al), None);
    // Lookups read memory themselves (the caller hands over a descriptor
    // for every input the strip reads), and no lane is a helper.
    l.lookups = super::Lookups::Direct;
    l.forms = program.forms;
    l.uncached_unorm = program.uncached_unorm;
    l.whole = true;
    // The pixel rows and v are the same for every batch.
    let jv = l.b.ins().splat(types::I32X4, j);
    let below = l.vconst4([0, 0, 1, 1]);
    let jv = l.b.ins().iadd(jv, below);
    let jf = l.b.ins().fcvt_from_sint(types::F32X4, jv);
    let vv = l.b.ins().splat(types::I32X4, v);
    let vv = l.as_float(vv);
    let right = l.vconst4([0, 1, 0, 1]);
    let zero = l.splat_i(0);
    let zero = l.as_float(zero);
    let entry_memo = l.memo.clone();

    // Whole batches only: never past the strip's last quad.
    let whole = l.b.ins().band_imm_s(quads, !(w as i64 - 1));
    let (head, exit, next, off) = l.batch_loop(whole, ptr);
    // `Io`'s lane areas hold one group: a batch uses them from the start.
    l.io_base = io;
    // Columns: i0 + 2·(q0 + k) + (l & 1), with lane0 = 4·q0.
    let col = l.b.ins().ushr_imm_s(l.lane0, 1);
    let col = l.b.ins().iadd(col, i0);
    let r0 = [0, 1, 2, 3].map(|c| {
        l.each(|l, k| match c {
            0 => {
                let x = l.add_imm(col, 2 * k as i64);
                let x = l.b.ins().splat(types::I32X4, x);
                let x = l.b.ins().iadd(x, right);
                l.b.ins().fcvt_from_sint(types::F32X4, x)
            }
            1 => jf,
            2 => vv,
            _ => l.one(),
        })
    });
    let mut file = Fresh {
        r0,
        zero,
        regs: FastMap::default(),
        pred: [None; 4],
        alu: None,
        outs: FastMap::default(),
    };
    let before = looped.map_or(clauses.len(), |lp| lp.before);
    // A strip lowers the clauses' own code (its loop: the region's).
    #[cfg(feature = "fault-injection")]
    for clause in &clauses {
        crate::fault::check(clause, crate::fault::Site::Clause);
    }
    // Each clause in groups of computations that fit the registers
    // ([`super::order`]).
    let ordered: Vec<Cow<'_, crate::ir::Clause>> = clauses
        .iter()
        .map(|&c| super::order::grouped(c, w).map_or(Cow::Borrowed(c), Cow::Owned))
        .collect();
    for clause in &ordered[..before] {
        l.uniforms(clause);
        l.full_nodes(clause, &mut file);
    }
    if let (Some(lp), Some(events)) = (looped, events) {
        let events = l.b.ins().iadd(events, off);
        l.strip_loop(program, lp, &mut file, events);
        l.al = al;
    }
    for clause in &ordered[before..] {
        l.uniforms(clause);
        l.full_nodes(clause, &mut file);
    }
    // Elements of quad q0 start 32·q0 bytes into each float32_4 row, 8·q0
    // into each float32_1 row.
    let at = l.b.ins().iadd(off, off);
    let at1 = l.b.ins().ushr_imm_s(off, 1);
    for (t, row) in rows.iter().enumerate() {
        if let Some(row) = row {
            let chans = [0, 1, 2, 3].map(|c| file.outs[&(4 * t + c)]);
            let Some(narrow) = narrow else {
                match program.narrow.is_some_and(|n| n & (1 << t) != 0) {
                    true => l.store_reds(chans[0], *row, at1),
                    false => l.store_elements(chans, *row, at),
                }
                continue;
            };
            let (four, one, join) = (l.b.create_block(), l.b.create_block(), l.b.create_block());
            let is_one = l.b.ins().band_imm_s(narrow, 1 << t);
            l.b.ins().brif(is_one, one, &[], four, &[]);
            let memo = l.memo.clone();
            l.arm(four, &memo);
            l.store_elements(chans, *row, at);
            l.b.ins().jump(join, &[]);
            l.arm(one, &memo);
            l.store_reds(chans[0], *row, at1);
            l.b.ins().jump(join, &[]);
            l.rejoin(join, memo);
        }
    }
    l.b.ins().jump(head, &[next.into()]);
    l.memo = entry_memo;
    l.finish(exit);
}

impl Lowering<'_, '_> {
    /// Stores the batch's red vectors as float32_1 elements: quad `k`'s
    /// top lanes (8 bytes) at `rows[0] + at + 8k`, its bottom lanes at
    /// `rows[1] + at + 8k`.
    fn store_reds(&mut self, red: [Value; GROUP_QUADS], rows: [Value; 2], at: Value) {
        let [top, bottom] = rows.map(|r| self.b.ins().iadd(r, at));
        for (k, &r) in red.iter().enumerate().take(self.w) {
            let pairs = self.bitcast(types::I64X2, r);
            for (half, p) in [top, bottom].into_iter().enumerate() {
                let e = self.b.ins().extractlane(pairs, half as u8);
                self.b
                    .ins()
                    .store(MemFlagsData::trusted(), e, p, 8 * k as i32);
            }
        }
    }

    /// Stores the batch's four channel vectors per quad as float32_4
    /// elements: quad `k`'s top lanes at `rows[0] + at + 32k`, its bottom
    /// lanes at `rows[1] + at + 32k`.
    fn store_elements(&mut self, c: [[Value; GROUP_QUADS]; 4], rows: [Value; 2], at: Value) {
        let [top, bottom] = rows.map(|r| self.b.ins().iadd(r, at));
        for k in 0..self.w {
            // Lane l's (r g b a), lanes 0–1 on the top row.
            let lanes = self.transpose4(c.map(|ch| ch[k]));
            for (e, (p, o)) in
                lanes
                    .into_iter()
                    .zip([(top, 0), (top, 16), (bottom, 0), (bottom, 16)])
            {
                let o = 32 * k as i32 + o;
                self.b.ins().store(MemFlagsData::trusted(), e, p, o);
            }
        }
    }
}
