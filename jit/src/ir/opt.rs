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
            let pure = !matches!(
                node.op,
                Op::SetTemp { .. }
                    | Op::SetOut { .. }
                    | Op::SetDepth { .. }
                    | Op::SetPred { .. }
                    | Op::SetAluResult { .. }
                    | Op::Fetch { .. }
                    | Op::Kill { .. }
                    | Op::UmrtWrite { .. }
                    | Op::SemWait
                    | Op::SemAcquire { .. }
            );
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

    /// Removes register writes that neither a later read of the clause nor
    /// a later clause (`live_out`) can see.
    fn drop_writes(&mut self, live_out: &Regs) {
        let mut read_later = Regs::default();
        let mut keep = vec![true; self.nodes.len()];
        for (k, node) in self.nodes.iter().enumerate().rev() {
            match &node.op {
                Op::Temp { index, .. } if index.rel => read_later = Regs::ALL,
                Op::Temp { index, chan, .. } => read_later.insert(index.base, *chan),
                Op::SetTemp { index, chan, .. } if !index.rel => {
                    keep[k] = live_out.contains(index.base, *chan)
                        || read_later.contains(index.base, *chan);
                }
                _ => {}
            }
        }
        let mut k = 0;
        self.nodes.retain(|_| {
            k += 1;
            keep[k - 1]
        });
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
    /// dropped when no later read of its clause and no clause reachable
    /// after it reads that register channel; what fed only such writes is
    /// pruned. Register contents are never outputs, so the results are the
    /// same. (Gated writes keep inactive lanes' old values, so no write ends
    /// a register's liveness across clauses.) The hazard checker must see
    /// every write: programs it checks are built without this.
    pub fn drop_dead_writes(&mut self) {
        for c in &mut self.clauses {
            c.forward_writes();
        }
        let (_, live_out) = self.liveness();
        for (c, out) in self.clauses.iter_mut().zip(&live_out) {
            c.drop_writes(out);
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

    /// Per clause, the register channels that a read at or after its start
    /// (live in) and after its end (live out) may see.
    pub(crate) fn liveness(&self) -> (Vec<Regs>, Vec<Regs>) {
        let returns = self.returns();
        let succ: Vec<Vec<usize>> = (0..self.clauses.len())
            .map(|c| self.successors(c, &returns))
            .collect();
        let reads: Vec<Regs> = self.clauses.iter().map(Clause::reads).collect();
        // live_in = reads ∪ live_out; live_out = ∪ live_in of successors.
        let mut live_in = reads.clone();
        let mut live_out = vec![Regs::default(); self.clauses.len()];
        let mut changed = true;
        while changed {
            changed = false;
            for c in (0..self.clauses.len()).rev() {
                let mut out = Regs::default();
                for &s in &succ[c] {
                    out.union(&live_in[s]);
                }
                if out != live_out[c] {
                    live_out[c] = out;
                    let mut i = reads[c];
                    i.union(&out);
                    live_in[c] = i;
                    changed = true;
                }
            }
        }
        (live_in, live_out)
    }
}
