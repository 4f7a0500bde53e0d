//! Rewrites of clauses that both engines profit from: removing operations
//! whose results nothing uses.

use super::*;

impl Clause {
    /// Removes operations without effects whose results nothing uses
    /// (e.g. the operands of an alpha unit that writes nothing). Fetches
    /// stay: a texture read can fault and is counted even if unused.
    ///
    /// ```
    /// use ctm_jit::ir::{Clause, FetchKind, Gate, Index, Node, Op, Term, Unary, V};
    /// let r0 = Index { base: 0, rel: false };
    /// let node = |op| Node { pc: 0, op };
    /// let mut c = Clause {
    ///     start: 0,
    ///     len: 1,
    ///     nodes: vec![
    ///         node(Op::Temp { dst: V(0), index: r0, chan: 0 }),
    ///         node(Op::Unary { dst: V(1), op: Unary::Canon, a: V(0) }), // unused
    ///         node(Op::Fetch {
    ///             dst: [V(2), V(3), V(4), V(5)],
    ///             kind: FetchKind::Lookup,
    ///             input: 0,
    ///             unscaled: true,
    ///             coords: [V(0); 4],
    ///             inactive: false,
    ///         }), // unused, but a fetch
    ///     ],
    ///     values: 6,
    ///     term: Term::End,
    /// };
    /// c.prune();
    /// assert_eq!(c.nodes.len(), 2);
    /// assert!(matches!(c.nodes[0].op, Op::Temp { .. }));
    /// assert!(matches!(c.nodes[1].op, Op::Fetch { .. }));
    /// ```
    pub fn prune(&mut self) {
        let mut used = vec![false; self.values as usize];
        let mut keep = vec![true; self.nodes.len()];
        for (k, node) in self.nodes.iter().enumerate().rev() {
            let pure = !node.op.has_effect();
            let defs = node.op.defs();
            if pure
                && !defs
                    .iter()
                    .any(|d| used.get(d.0 as usize).copied().unwrap_or(true))
            {
                keep[k] = false;
                continue;
            }
            for u in node.op.uses() {
                if let Some(x) = used.get_mut(u.0 as usize) {
                    *x = true;
                }
            }
        }
        let mut k = 0;
        self.nodes.retain(|_| {
            k += 1;
            keep[k - 1]
        });
    }
}

/// A set of (temporary, channel) pairs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Regs([u64; TEMPS * 4 / 64]);

impl Regs {
    const ALL: Regs = Regs([!0; TEMPS * 4 / 64]);

    fn bit(index: u8, chan: u8) -> (usize, u64) {
        let k = (usize::from(index) % TEMPS) * 4 + usize::from(chan & 3);
        (k / 64, 1 << (k % 64))
    }

    fn insert(&mut self, index: u8, chan: u8) {
        let (w, b) = Regs::bit(index, chan);
        self.0[w] |= b;
    }

    pub(crate) fn contains(&self, index: u8, chan: u8) -> bool {
        let (w, b) = Regs::bit(index, chan);
        self.0[w] & b != 0
    }

    pub(crate) fn union(&mut self, other: &Regs) {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a |= b;
        }
    }
}

impl Clause {
    /// Whether a register write with an unpredicated, active-lanes gate
    /// leaves nothing of the old value observable to the rest of the clause:
    /// no operation acts on inactive lanes, none reads a neighbouring lane
    /// (MDH/MDV) and none kills. Lanes that do not write then never expose
    /// what a later read gives them.
    fn writes_cover(&self) -> bool {
        self.nodes.iter().all(|n| {
            !n.op.writes_inactive() && !matches!(n.op, Op::QuadLane { .. } | Op::Kill { .. })
        })
    }

    /// Reads of a register channel after a covering write of it in the
    /// same clause ([`Clause::writes_cover`]) take the written value.
    fn forward_writes(&mut self) {
        if !self.writes_cover() {
            return;
        }
        let mut held: Vec<Option<V>> = vec![None; TEMPS * 4];
        let mut rename: Vec<Option<V>> = vec![None; self.values as usize];
        let slot =
            |index: &Index, chan: u8| (usize::from(index.base) % TEMPS) * 4 + usize::from(chan & 3);
        self.nodes.retain_mut(|node| {
            for u in node.op.uses_mut() {
                if let Some(&Some(to)) = rename.get(u.0 as usize) {
                    *u = to;
                }
            }
            match &node.op {
                Op::Temp { dst, index, chan } if !index.rel => {
                    if let Some(v) = held[slot(index, *chan)] {
                        if let Some(r) = rename.get_mut(dst.0 as usize) {
                            *r = Some(v);
                        }
                        return false;
                    }
                }
                Op::SetTemp { index, .. } if index.rel => held.fill(None),
                Op::SetTemp {
                    index,
                    chan,
                    v,
                    gate,
                    ..
                } => {
                    held[slot(index, *chan)] =
                        (gate.pred.is_none() && !gate.inactive).then_some(*v);
                }
                _ => {}
            }
            true
        });
    }

    /// The register channels the clause reads from before it (all of them
    /// when it reads relative to aL).
    fn reads(&self) -> Regs {
        let mut r = Regs::default();
        for node in &self.nodes {
            if let Op::Temp { index, chan, .. } = &node.op {
                if index.rel {
                    return Regs::ALL;
                }
                r.insert(index.base, *chan);
            }
        }
        r
    }

    /// Which operations are needed when the register channels `live_out`
    /// may be read after the clause, and the channels those read from
    /// before it (all of them where one reads relative to aL): effects
    /// (outputs, lookups, kills, predicates, uncached writes, the
    /// semaphore), register writes that `live_out` or a needed read later
    /// in the clause may see, and what needed operations use. (A read
    /// after a covering write of the clause counts as a read from before
    /// it: more than needed, never less.)
    fn needed(&self, live_out: &Regs) -> (Vec<bool>, Regs) {
        let mut used = vec![false; self.values as usize];
        let mut need = vec![false; self.nodes.len()];
        let mut reads = Regs::default();
        for (k, node) in self.nodes.iter().enumerate().rev() {
            need[k] = match &node.op {
                Op::SetTemp { index, chan, .. } => {
                    index.rel
                        || live_out.contains(index.base, *chan)
                        || reads.contains(index.base, *chan)
                }
                op if op.has_effect() => true,
                op => op
                    .defs()
                    .iter()
                    .any(|d| used.get(d.0 as usize).copied().unwrap_or(true)),
            };
            if !need[k] {
                continue;
            }
            for u in node.op.uses() {
                if let Some(x) = used.get_mut(u.0 as usize) {
                    *x = true;
                }
            }
            match &node.op {
                Op::Temp { index, .. } if index.rel => reads = Regs::ALL,
                Op::Temp { index, chan, .. } => reads.insert(index.base, *chan),
                _ => {}
            }
        }
        (need, reads)
    }

    /// Uncached writes read their column and row as lookups read their
    /// coordinates (denormals as zeros, every NaN alike: `texel_floor`),
    /// so a write whose column or row is a canonicalisation (`Canon`, or
    /// `Omod(0)`, which equals it) of a value takes the value itself; the
    /// canonicalisation goes where nothing else uses it.
    fn raw_write_coords(&mut self) {
        let mut canon_of: Vec<Option<V>> = vec![None; self.values as usize];
        for node in &mut self.nodes {
            match &mut node.op {
                Op::Unary {
                    dst,
                    op: Unary::Canon | Unary::Omod(0),
                    a,
                } => {
                    if let Some(c) = canon_of.get_mut(dst.0 as usize) {
                        *c = Some(*a);
                    }
                }
                Op::UmrtWrite { x, y, .. } => {
                    for c in [x, y] {
                        if let Some(&Some(a)) = canon_of.get(c.0 as usize) {
                            *c = a;
                        }
                    }
                }
                _ => {}
            }
        }
    }

    /// Gives every write of a channel other than red to a render target
    /// that `narrow` names (float32_1: only its red channel is stored)
    /// the value of the clause's last red write to that target before it,
    /// where there is one: the write, and which lanes made it, stay as
    /// they were, and what computed only the dropped value is left unused.
    fn narrow_outputs(&mut self, narrow: u8) {
        let mut red: [Option<V>; TARGETS] = [None; TARGETS];
        for node in &mut self.nodes {
            if let Op::SetOut {
                target, chan, v, ..
            } = &mut node.op
            {
                let t = usize::from(*target) % TARGETS;
                match (narrow & (1 << t) != 0, *chan, red[t]) {
                    (false, ..) => {}
                    (true, 0, _) => red[t] = Some(*v),
                    (true, _, Some(r)) => *v = r,
                    (true, _, None) => {}
                }
            }
        }
    }
}

impl Program {
    /// The clauses control can reach from the end of clause `c`: the next
    /// instruction, a jump's target (and the instruction after it where a
    /// LOOP/REP skips its ENDLOOP/ENDREP), or, for a return, the
    /// instruction after any call (`returns`).
    fn successors(&self, c: usize, returns: &[u16]) -> Vec<usize> {
        let pcs: Vec<u16> = match &self.clauses[c].term {
            Term::Next(t) => vec![*t],
            Term::Last { pc } => vec![pc + 1],
            Term::End | Term::Undefined { .. } => vec![],
            Term::Fc { pc, fc } => {
                let mut v = vec![pc + 1];
                if fc.stack == StackOp::Pop {
                    v.extend_from_slice(returns);
                } else {
                    v.push(fc.target);
                    if fc.skip_target {
                        v.push(fc.target.saturating_add(1));
                    }
                }
                v
            }
        };
        pcs.into_iter()
            .filter_map(|pc| self.clause_at(pc))
            .map(|c| c as usize)
            .collect()
    }

    /// Removes register writes that nothing can observe, in both engines'
    /// program: a read after a covering write in the same clause takes the
    /// written value instead (`Clause::writes_cover`), and a write is
    /// dropped when no needed read after it, in its clause or in a clause
    /// reachable after it, reads that register channel — a needed read
    /// being one whose value reaches an output, a lookup, a predicate or
    /// another effect, or a needed write (`Clause::needed`), so a register
    /// that only feeds its own next value is dead too. What fed only such
    /// writes is pruned. Where the program says which render targets are
    /// float32_1 ([`Program::narrow`]), their channels other than red,
    /// which no output stores, are written red's value first
    /// (`Clause::narrow_outputs`), so what computed only them goes too; and
    /// uncached writes take their column and row uncanonicalised
    /// (`Clause::raw_write_coords`).
    /// Register contents are never outputs, so the results are the same.
    /// (Gated writes keep inactive lanes' old values, so no write ends a
    /// register's liveness across clauses.) The hazard checker must see
    /// every write: programs it checks are built without this.
    pub fn drop_dead_writes(&mut self) {
        if let Some(narrow) = self.narrow {
            for c in &mut self.clauses {
                c.narrow_outputs(narrow);
            }
        }
        for c in &mut self.clauses {
            c.forward_writes();
            c.raw_write_coords();
        }
        let live_out = self.needed_live_out();
        for (c, out) in self.clauses.iter_mut().zip(&live_out) {
            let (need, _) = c.needed(out);
            let mut k = 0;
            c.nodes.retain(|n| {
                k += 1;
                need[k - 1] || !matches!(n.op, Op::SetTemp { .. })
            });
            c.prune();
        }
    }

    /// The pc after each CALL: where a return may resume.
    fn returns(&self) -> Vec<u16> {
        self.clauses
            .iter()
            .filter_map(|c| match &c.term {
                Term::Fc { pc, fc } if fc.stack == StackOp::Push => Some(pc + 1),
                _ => None,
            })
            .collect()
    }

    /// Each clause's successors (`Program::successors`).
    fn successor_lists(&self) -> Vec<Vec<usize>> {
        let returns = self.returns();
        (0..self.clauses.len())
            .map(|c| self.successors(c, &returns))
            .collect()
    }

    /// Per clause, the register channels that a read at or after its start
    /// (live in) and after its end (live out) may see.
    pub(crate) fn liveness(&self) -> (Vec<Regs>, Vec<Regs>) {
        let reads: Vec<Regs> = self.clauses.iter().map(Clause::reads).collect();
        self.live_fixpoint(|c, _| reads[c])
    }

    /// Per clause, the register channels a needed read after its end may
    /// see (`Clause::needed`), so a channel read only to compute its own
    /// next value (an accumulator no output sees) is not live.
    fn needed_live_out(&self) -> Vec<Regs> {
        self.live_fixpoint(|c, out| self.clauses[c].needed(out).1).1
    }

    /// The least fixed point of live_in(c) = read(c, live_out(c)) ∪
    /// live_out(c), live_out(c) = ∪ live_in of c's successors, where
    /// `read(c, out)` is what clause `c` reads from before it when `out` is
    /// live after it (growing with `out`): (live in, live out) per clause.
    fn live_fixpoint(&self, read: impl Fn(usize, &Regs) -> Regs) -> (Vec<Regs>, Vec<Regs>) {
        let succ = self.successor_lists();
        let n = self.clauses.len();
        let (mut live_in, mut live_out) = (vec![Regs::default(); n], vec![Regs::default(); n]);
        let mut changed = true;
        while changed {
            changed = false;
            for c in (0..n).rev() {
                let mut out = Regs::default();
                for &s in &succ[c] {
                    out.union(&live_in[s]);
                }
                let mut i = read(c, &out);
                i.union(&out);
                if out != live_out[c] || i != live_in[c] {
                    (live_out[c], live_in[c]) = (out, i);
                    changed = true;
                }
            }
        }
        (live_in, live_out)
    }
}
