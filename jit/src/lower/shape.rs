//! The shape of a clause's code: how many quads a batch takes, whether it
//! needs whole groups, whether a batch is live when its lanes are only
//! running, whether the clause has a full-batch body.

use super::Lookups;
use crate::ir::{Clause, FetchKind, Op, Program};
use crate::state::GROUP_QUADS;

/// Whether a clause calls the runtime from its code, which then needs
/// whole-group batches (see the module docs), unless its lookups read
/// memory directly ([`Lookups::Direct`]).
pub(crate) fn needs_whole_group(clause: &Clause) -> bool {
    clause
        .nodes
        .iter()
        .any(|n| matches!(n.op, Op::Fetch { .. } | Op::UmrtWrite { .. }))
}

/// The inputs `clause` looks up (bit `k` = input `k`) if it can run with
/// every lookup reading memory directly ([`Lookups::Direct`]): it looks
/// something up, through the input caches only, and makes at most one
/// uncached write (whose lanes narrow batches then still write in lane
/// order; two would interleave). `None` otherwise.
pub(crate) fn direct_inputs(clause: &Clause) -> Option<u16> {
    let (mut inputs, mut writes) = (0u16, 0);
    for n in &clause.nodes {
        match n.op {
            Op::Fetch {
                kind: FetchKind::Uncached,
                ..
            } => return None,
            Op::UmrtWrite { .. } => writes += 1,
            Op::Fetch { input, .. } => inputs |= 1 << (input & 15),
            _ => {}
        }
    }
    (inputs != 0 && writes <= 1).then_some(inputs)
}

/// How `clause`'s lookups reach memory in code that runs where the runtime
/// has a descriptor for every input it looks up (a clause's own body, a
/// loop region): directly where [`direct_inputs`] allows, else each
/// lookup as its input's descriptor says.
pub(crate) fn lookups_of(clause: &Clause) -> Lookups {
    match direct_inputs(clause) {
        Some(_) => Lookups::Direct,
        None => Lookups::Either,
    }
}

/// Whether a loop region of `program` made of `clauses` looks up inputs
/// (reading memory directly: [`direct_inputs`]).
pub(crate) fn region_looks_up(program: &Program, clauses: &[u32]) -> bool {
    clauses
        .iter()
        .any(|&ci| direct_inputs(&program.clauses[ci as usize]).is_some())
}

/// The batch width, in quads, of `clause` when `w` is asked for (0: the
/// widest whose register channels fit in about 32 vectors; relative
/// addressing counts as many) and its lookups reach memory as `lookups`
/// says.
pub(crate) fn batch_quads(clause: &Clause, w: usize, lookups: Lookups) -> usize {
    if needs_whole_group(clause) && !matches!(lookups, Lookups::Direct | Lookups::Gathered) {
        return GROUP_QUADS;
    }
    if w != 0 {
        return w;
    }
    let mut touched: Vec<(u8, u8)> = Vec::new();
    for n in &clause.nodes {
        if let Op::Temp { index, chan, .. } | Op::SetTemp { index, chan, .. } = &n.op {
            if index.rel {
                return 1;
            }
            if !touched.contains(&(index.base, *chan)) {
                touched.push((index.base, *chan));
            }
        }
    }
    let by_registers = match touched.len() {
        0..=8 => 4,
        9..=16 => 2,
        _ => 1,
    };
    // Values live at once, each one vector per quad of the batch: keep
    // them within the host's sixteen vector registers (with room for
    // constants and temporaries), or the batch spills to the stack.
    let live = peak_live(clause);
    let by_pressure = if live * 4 <= LIVE_VECTORS {
        4
    } else if live * 2 <= LIVE_VECTORS {
        2
    } else {
        1
    };
    by_registers.min(by_pressure)
}

/// Per-lane vectors a batch may keep live before it spills.
const LIVE_VECTORS: usize = 12;

/// Whether optimised code of a strip may run `clause`, to which
/// [`batch_quads`] gives one quad per batch, two quads at a time: where the
/// order the strip lowers it in ([`super::order::grouped`] at two quads)
/// keeps at most [`LIVE_VECTORS`] values live per quad. That order lowers
/// groups of computations that keep about eight values in flight per
/// batch; its peak also counts the values that wait between groups
/// (register channels written by one group and read by a later one), which
/// spill while the groups between them run, at little cost. The bound is
/// measured, not derived: `docs/performance.md`, "Two quads where the
/// grouped order allows". (The strip's lowering groups the clause again
/// for the width chosen; grouping is linear in the clause and runs once
/// per strip compile.)
pub(crate) fn two_quads_grouped(clause: &Clause) -> bool {
    if super::order::relative(clause) {
        return false;
    }
    let peak = match super::order::grouped(clause, 2) {
        Some(g) => peak_live(&g),
        // Already in that order.
        None => peak_live(clause),
    };
    peak <= LIVE_VECTORS
}

/// The most per-lane IR values live at one point of `clause` (uniform
/// values are not counted: they are one vector for any batch width).
pub(crate) fn peak_live(clause: &Clause) -> usize {
    let mut last = vec![usize::MAX; clause.values as usize];
    let mut uniform = vec![false; clause.values as usize];
    for (k, n) in clause.nodes.iter().enumerate() {
        for v in n.op.uses() {
            if let Some(l) = last.get_mut(v.0 as usize) {
                *l = k;
            }
        }
        if let Op::Const { dst, .. } | Op::Imm { dst, .. } = n.op
            && let Some(u) = uniform.get_mut(dst.0 as usize)
        {
            *u = true;
        }
    }
    let (mut live, mut peak) = (0usize, 0usize);
    for (k, n) in clause.nodes.iter().enumerate() {
        for d in n.op.defs() {
            let i = d.0 as usize;
            if !uniform.get(i).copied().unwrap_or(true)
                && last.get(i).is_some_and(|&l| l != usize::MAX)
            {
                live += 1;
            }
        }
        peak = peak.max(live);
        let mut ended = n.op.uses();
        ended.sort_unstable_by_key(|v| v.0);
        ended.dedup();
        for v in ended {
            let i = v.0 as usize;
            if last.get(i) == Some(&k) && !uniform.get(i).copied().unwrap_or(true) {
                live -= 1;
            }
        }
    }
    peak
}

/// Whether an operation of `clause` writes inactive lanes too: a batch is
/// then live when one of its lanes is running (else running and active).
pub(crate) fn writes_inactive(clause: &Clause) -> bool {
    clause.nodes.iter().any(|n| n.op.writes_inactive())
}

/// Whether an operation of `clause` kills lanes: only then does running
/// it change the group's running and active lanes.
pub(crate) fn kills(clause: &Clause) -> bool {
    clause.nodes.iter().any(|n| matches!(n.op, Op::Kill { .. }))
}

/// Whether `clause` has a full-batch body ([`super::walk`]).
pub(crate) fn has_full_body(clause: &Clause) -> bool {
    super::walk::eligible(clause)
}
