//! The loop of a strip ([`crate::strip::StripLoop`]; `docs/design.md`,
//! "Straight programs in one compiled strip"): the lane-wise iterations of
//! [`super::region`], entered from the strip's registers and left into
//! them, with no lane state behind them.
//!
//! Every lane of a strip's batch enters the loop (none is a helper, all run
//! and are active). The registers the region touches start from the
//! strip's values — made canonical where the region keeps them exact —
//! and its mask words from the predicates and ALU result the clauses
//! before it set (zero where none did). A lane that leaves has its
//! registers captured in variables rather than memory. After the loop each
//! lane's registers are what it had when it left (or has at the end), raw
//! ones made canonical in the lanes that wrote them in the loop, as the
//! shim settles them; registers no code after the loop reads are dropped, as are
//! the mask words (the straight clauses after the loop read none). Each
//! lane's event — where it left — goes to the strip's events, from which
//! the runtime counts the instructions the shim would have.

use super::lazy::Lazy;
use super::region::{Region, alive_masks};
use super::strip::Fresh;
use super::{GROUP_QUADS, Lowering};
use crate::ir::Program;
use crate::state::{io_offsets, offsets};
use crate::strip::StripLoop;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Value, types};

impl Lowering<'_, '_> {
    /// Lowers the loop `lp` of a strip's batch: registers from `file` and
    /// back into it, each lane's event stored at `events` (the batch's
    /// first quad's entries). Leaves `l.al` as the loop left it.
    pub(super) fn strip_loop(
        &mut self,
        program: &Program,
        lp: &StripLoop,
        file: &mut Fresh,
        events: Value,
    ) {
        let region = &lp.region;
        let lw = &lp.lanewise;
        let looks_up = super::region_looks_up(program, &region.clauses);
        // The loop's integer constant: its count, initial aL and step (aL
        // stays 0 for a REP).
        let at = io_offsets::INTS as i32 + 3 * i32::from(region.int_addr);
        let flags = MemFlagsData::trusted();
        let count = self.b.ins().uload8(types::I32, flags, self.uni, at);
        let (al0, step) = if region.is_loop {
            (
                self.b.ins().uload8(types::I32, flags, self.uni, at + 1),
                self.b.ins().sload8(types::I32, flags, self.uni, at + 2),
            )
        } else {
            let zero = self.b.ins().iconst(types::I32, 0);
            (zero, zero)
        };
        let bools = self
            .b
            .ins()
            .load(types::I32, flags, self.uni, io_offsets::BOOLS as i32);
        let r = Region::new(
            self.b,
            (lw, region.clauses.len(), looks_up),
            (count, step, bools),
            true,
        );
        let entry_memo = self.memo.clone();
        let old = self.enter_strip_loop(&r, file, al0);
        r.iterate(self, program, region);
        // Values memoised in the loop do not reach what follows it.
        self.memo = entry_memo;
        self.leave_strip_loop(&r, file, events, &old);
    }

    /// The batch's state into `r`'s variables: every lane in the loop, no
    /// events, the registers and mask words from `file`, no iteration
    /// done, aL = `al0`. Returns, per register of the region, its exact
    /// bits before the loop where the loop keeps it raw and code after the
    /// loop reads it: what a lane that leaves before writing it keeps (a
    /// lookup's result, say, which no write made canonical).
    fn enter_strip_loop(
        &mut self,
        r: &Region<'_>,
        file: &mut Fresh,
        al0: Value,
    ) -> Vec<Option<[Value; GROUP_QUADS]>> {
        let (v, w) = (&r.v, self.w);
        let all = self.b.ins().iconst(types::I32, (1i64 << (4 * w)) - 1);
        self.b.def_var(v.alive_bits, all);
        let none = self.splat_i(u32::MAX);
        for k in 0..w {
            self.b.def_var(v.event[k], none);
            if let Some(q) = v.alive {
                self.b.def_var(q[k], none);
            }
        }
        let saved = r
            .saved
            .as_ref()
            .expect("a strip's loop captures in variables");
        let mut old = Vec::with_capacity(r.lw.regs.len());
        for (p, reg) in r.lw.regs.iter().enumerate() {
            let (q, lazy) = super::lazy::RegFile::read(file, self, reg.index, reg.chan);
            // Fresh values are exact or lazily canonical (`Fresh::write_back`).
            let kept = reg.raw && reg.carried_out().is_some();
            let exact = match lazy {
                Lazy::Canon if kept || !reg.raw => self.each(|l, k| l.omod(q[k], 0)),
                _ => q,
            };
            let q = if reg.raw { q } else { exact };
            old.push(kept.then_some(exact));
            for k in 0..w {
                self.b.def_var(v.cur[p][k], q[k]);
                self.b.def_var(saved[p][k], q[k]);
            }
        }
        let zero = self.splat_i(0);
        for &(o, cur, keep) in &r.masks {
            let set = if o == offsets::ALU_RESULT {
                file.alu
            } else {
                file.pred[(o - offsets::PRED) / 4]
            };
            let m = set.unwrap_or([zero; GROUP_QUADS]);
            for k in 0..w {
                self.b.def_var(cur[k], m[k]);
                self.b.def_var(keep[k], m[k]);
            }
        }
        let zero = self.b.ins().iconst(types::I32, 0);
        self.b.def_var(v.it, zero);
        self.b.def_var(v.al, al0);
        old
    }

    /// What each lane had when it left (or has now) into `file`, and the
    /// events at `events`. A raw register is made canonical in the lanes
    /// that wrote it in the loop (their event at or past the first clause
    /// writing it, as the shim settles it); the others keep `old`'s bits.
    fn leave_strip_loop(
        &mut self,
        r: &Region<'_>,
        file: &mut Fresh,
        events: Value,
        old: &[Option<[Value; GROUP_QUADS]>],
    ) {
        let (v, w) = (&r.v, self.w);
        let alive = alive_masks(self, v);
        let saved = r
            .saved
            .as_ref()
            .expect("a strip's loop captures in variables");
        let event: Vec<Value> = (0..w).map(|k| self.b.use_var(v.event[k])).collect();
        for (p, reg) in r.lw.regs.iter().enumerate() {
            let Some(first) = reg.carried_out() else {
                continue;
            };
            let mut q = self.each(|l, k| {
                let (x, s) = (l.b.use_var(v.cur[p][k]), l.b.use_var(saved[p][k]));
                l.select_f(alive[k], x, s)
            });
            if let Some(old) = old[p] {
                let first = self.splat_i(u32::from(first));
                q = self.each(|l, k| {
                    let wrote =
                        l.b.ins()
                            .icmp(IntCC::SignedGreaterThanOrEqual, event[k], first);
                    let c = l.omod(q[k], 0);
                    l.select_f(wrote, c, old[k])
                });
            }
            file.regs.insert((reg.index, reg.chan), (q, Lazy::No));
        }
        for (k, &ev) in event.iter().enumerate() {
            self.store_vec(ev, events, 0, k);
        }
    }
}
