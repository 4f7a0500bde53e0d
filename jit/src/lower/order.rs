//! The order a strip lowers a straight clause's operations in
//! (`docs/performance.md`, "Shared channels": what limits the ALU
//! kernels).
//!
//! Unoptimised code keeps the order it is written in, and ctm's is the
//! program's: every instruction's four channels, for every chain, then the
//! next instruction. A clause of many independent chains then keeps all of
//! them live at once and spills them around every step; one of few chains
//! keeps too few in flight to hide an operation's latency. Here the
//! clause's operations are split into the independent computations they
//! form (those no value, register or ordering joins), and these are
//! lowered in groups that together keep about [`IN_FLIGHT`] values live
//! per batch, each group in the program's order, one group after the
//! other. Only what commutes moves: values, register reads and
//! unpredicated register writes, each after what it reads and, for a
//! register, in its order of reads and writes; every other operation (an
//! output, a predicate, a lookup, a write to memory) stays where it is and
//! nothing moves across it.

use crate::ir::{Clause, Op};

/// Values a group of computations keeps live per batch: about what the
/// host's sixteen vector registers hold beside the constants they use.
const IN_FLIGHT: usize = 8;

/// Whether `op` may move (see the module docs).
fn movable(op: &Op) -> bool {
    match op {
        Op::Temp { .. } => true,
        Op::SetTemp { gate, fetched, .. } => gate.pred.is_none() && !fetched,
        op => op.is_value(),
    }
}

/// Union-find over a clause's operations.
struct Sets(Vec<usize>);

impl Sets {
    fn find(&mut self, mut k: usize) -> usize {
        while self.0[k] != k {
            self.0[k] = self.0[self.0[k]];
            k = self.0[k];
        }
        k
    }

    fn join(&mut self, a: usize, b: usize) {
        let (a, b) = (self.find(a), self.find(b));
        if a != b {
            self.0[a.max(b)] = a.min(b);
        }
    }
}

/// Whether `clause` addresses registers or constants relative to aL.
pub(crate) fn relative(clause: &Clause) -> bool {
    clause.nodes.iter().any(|node| match &node.op {
        Op::Temp { index, .. } | Op::SetTemp { index, .. } | Op::Const { index, .. } => index.rel,
        _ => false,
    })
}

/// `clause` with its operations in the order a strip of batches of
/// `quads` quads should lower them (see the module docs), or `None` where
/// that is the clause's own order (or it addresses registers or constants
/// relative to aL, whose accesses are not told apart here).
pub(crate) fn grouped(clause: &Clause, quads: usize) -> Option<Clause> {
    let nodes = &clause.nodes;
    let n = nodes.len();
    if relative(clause) || n < 2 {
        return None;
    }
    // Which operation defines each value.
    let mut def = vec![usize::MAX; clause.values as usize];
    for (k, node) in nodes.iter().enumerate() {
        for v in node.op.defs() {
            if let Some(d) = def.get_mut(v.0 as usize) {
                *d = k;
            }
        }
    }
    // Runs of movable operations between fixed ones: nothing joins across
    // a fixed one, and each run is ordered on its own.
    let mut run_of = vec![0usize; n];
    let mut run = 0;
    for (k, node) in nodes.iter().enumerate() {
        if !movable(&node.op) {
            run += 1;
            run_of[k] = run;
            run += 1;
        } else {
            run_of[k] = run;
        }
    }
    // Leaves: constants, immediates and reads of a register the run does
    // not write (r0, or what earlier clauses left). They join nothing and
    // go with the first group that uses them.
    let written: super::hash::FastSet<(usize, u8, u8)> = nodes
        .iter()
        .enumerate()
        .filter_map(|(k, node)| match &node.op {
            Op::SetTemp { index, chan, .. } => Some((run_of[k], index.base, *chan)),
            _ => None,
        })
        .collect();
    let leaf: Vec<bool> = nodes
        .iter()
        .enumerate()
        .map(|(k, node)| match &node.op {
            Op::Const { .. } | Op::Imm { .. } => true,
            Op::Temp { index, chan, .. } => !written.contains(&(run_of[k], index.base, *chan)),
            _ => false,
        })
        .collect();
    let mut sets = Sets((0..n).collect());
    // Per register: its last write and the reads since, in this run. A
    // read joins the write before it; a write joins the write and the
    // reads before it.
    let mut regs: super::hash::FastMap<(u8, u8), (Option<usize>, Vec<usize>)> = Default::default();
    for (k, node) in nodes.iter().enumerate() {
        if !movable(&node.op) {
            regs.clear();
            continue;
        }
        if leaf[k] {
            continue;
        }
        for v in node.op.uses() {
            let d = def.get(v.0 as usize).copied().unwrap_or(usize::MAX);
            if d < k && run_of[d] == run_of[k] && !leaf[d] {
                sets.join(d, k);
            }
        }
        match &node.op {
            Op::Temp { index, chan, .. } => {
                let r = regs.entry((index.base, *chan)).or_default();
                if let Some(w) = r.0 {
                    sets.join(w, k);
                }
                r.1.push(k);
            }
            Op::SetTemp { index, chan, .. } => {
                let r = regs.entry((index.base, *chan)).or_default();
                for &j in r.0.iter().chain(&r.1) {
                    sets.join(j, k);
                }
                *r = (Some(k), Vec::new());
            }
            _ => {}
        }
    }
    let mut order: Vec<usize> = Vec::with_capacity(n);
    let mut start = 0;
    while start < n {
        let r = run_of[start];
        let end = (start..n).find(|&k| run_of[k] != r).unwrap_or(n);
        order_run(
            clause,
            &mut sets,
            start..end,
            quads,
            (&def, &leaf),
            &mut order,
        );
        start = end;
    }
    if order.iter().enumerate().all(|(k, &o)| k == o) {
        return None;
    }
    Some(Clause {
        nodes: order.into_iter().map(|k| nodes[k].clone()).collect(),
        start: clause.start,
        len: clause.len,
        values: clause.values,
        term: clause.term.clone(),
    })
}

/// Appends the operations `run` of `clause` to `order`: its computations
/// (the sets of `sets`) in groups of about [`IN_FLIGHT`] live values per
/// batch of `quads`, each group's operations in the clause's order, and
/// each constant or immediate with the first group that uses it.
fn order_run(
    clause: &Clause,
    sets: &mut Sets,
    run: std::ops::Range<usize>,
    quads: usize,
    (def, leaves): (&[usize], &[bool]),
    order: &mut Vec<usize>,
) {
    let nodes = &clause.nodes;
    let leaf = |k: usize| leaves[k];
    // The computations, in the order of their first operation, each with
    // its operations (leaves aside) in the clause's order.
    let mut computations: Vec<(usize, Vec<usize>)> = Vec::new();
    for k in run.clone().filter(|&k| !leaf(k)) {
        let root = sets.find(k);
        match computations.iter_mut().find(|(r, _)| *r == root) {
            Some((_, members)) => members.push(k),
            None => computations.push((root, vec![k])),
        }
    }
    if computations.len() < 2 {
        order.extend(run);
        return;
    }
    // A computation's width: the most of its values that one instruction
    // hands to a later one (its independent chains).
    let width = |members: &[usize]| -> usize {
        let mut span: super::hash::FastMap<u32, (u16, u16)> = Default::default();
        for &k in members {
            let pc = nodes[k].pc;
            for v in nodes[k].op.defs() {
                span.insert(v.0, (pc, pc));
            }
            for v in nodes[k].op.uses() {
                if let Some(s) = span.get_mut(&v.0) {
                    s.1 = s.1.max(pc);
                }
            }
        }
        let mut edges: Vec<(u16, i32)> = Vec::new();
        for &(from, to) in span.values() {
            if to > from {
                edges.push((from, 1));
                edges.push((to, -1));
            }
        }
        edges.sort_unstable();
        let (mut live, mut most) = (0i32, 1i32);
        for (_, d) in edges {
            live += d;
            most = most.max(live);
        }
        most as usize
    };
    let mut group_of = vec![usize::MAX; nodes.len()];
    let (mut group, mut live) = (0, 0);
    for (_, members) in &computations {
        let w = width(members) * quads.max(1);
        if live > 0 && live + w > IN_FLIGHT {
            group += 1;
            live = 0;
        }
        live += w;
        for &k in members {
            group_of[k] = group;
        }
    }
    // A constant or immediate goes with the first group that uses it.
    for k in run.clone() {
        if leaf(k) {
            continue;
        }
        for v in nodes[k].op.uses() {
            let d = def.get(v.0 as usize).copied().unwrap_or(usize::MAX);
            if d < nodes.len() && leaf(d) && run.contains(&d) {
                group_of[d] = group_of[d].min(group_of[k]);
            }
        }
    }
    for g in 0..=group {
        order.extend(run.clone().filter(|&k| group_of[k] == g));
    }
    // Leaves only later runs use (or none) close the run.
    order.extend(run.filter(|&k| group_of[k] == usize::MAX));
}

#[cfg(test)]
mod tests;
