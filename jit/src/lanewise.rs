//! Loop regions run lane by lane (`docs/design.md`, "Loops in one compiled
//! body").
//!
//! A loop region ([`crate::regions`]) is normally driven in lock step: the
//! whole group runs each clause of an iteration, then the next iteration,
//! as the runtime shim would. When nothing in the region can make one lane
//! depend on another, every lane computes exactly what it would in lock
//! step however far the other lanes have got, so compiled code may run
//! each batch of quads through all its iterations on its own, with the
//! registers in SSA values and no lane masks in the loop at all: a lane
//! that breaks has its registers and masks *captured* (copied aside) and
//! goes on computing values nobody reads. What lock step would have left
//! behind follows from where each lane left the loop ([`settle`]).
//!
//! Lanes are independent when ([`lanewise`]):
//!
//! * the region's clauses only break (BREAKLOOP/BREAKREP, per lane) and
//!   fall through, and its ENDLOOP/ENDREP jumps back for every lane
//!   (function `0xFF`), so that only the count and the lanes that have
//!   not broken decide how long the group loops;
//! * every write is gated by the active lanes alone (no predicated write,
//!   none that writes inactive lanes), nothing kills, writes outputs or the
//!   depth, and temporaries are addressed directly (not relative to aL).
//!
//! At run time the shim also requires that no lane has continued, that the
//! lanes still in the loop are the active ones, and that the whole rest of
//! the loop fits in the runaway budget (so no budget exit can fall in the
//! middle); otherwise it drives the region in lock step.
//!
//! A register written in the region is kept **raw** where possible: its
//! value is the canonical form of the vector (every write stores an
//! output-modifier result, whose NaN standardisation and flush are then
//! left to the write-back), which is exact as long as no read in the region
//! needs the canonical bits themselves (MIN/MAX, the selects, a write to a
//! register kept exact) — every other use reads a value and its canonical
//! form alike (see `crate::lower::lazy`). A lane that never wrote the
//! register in the loop keeps the register's old bits.

use crate::ir::{Clause, FcOp, FetchKind, Gate, Op, Program, Regs, Term, Unary, V};
use crate::regions::LoopRegion;
use crate::state::{GROUP_LANES, LANE_STAYED, Lanes, LoopState, Mask, loop_exit};

/// A register channel a lane-wise region keeps in SSA values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Carried {
    /// Temporary index.
    pub index: u8,
    /// Channel.
    pub chan: u8,
    /// The position in the region of the first clause that writes it
    /// (`None`: only read).
    pub first_write: Option<u16>,
    /// Kept raw (see the module docs); else exact.
    pub raw: bool,
    /// Whether code after the region may read it (a clause reached from
    /// one of the region's exits): else nothing after the loop sees what
    /// the loop left in it, and it is neither written back nor settled.
    pub live_out: bool,
}

impl Carried {
    /// The position of the first clause that writes it, where code after
    /// the loop sees what the loop leaves in it: a lane that leaves
    /// carries it out (captures it, has it written back or settled).
    pub fn carried_out(&self) -> Option<u16> {
        self.first_write.filter(|_| self.live_out)
    }
}

/// What the lane-wise form of a region needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lanewise {
    /// Register channels the region reads or writes.
    pub regs: Vec<Carried>,
    /// Predicate channels the region reads (breaks) or writes.
    pub pred: [bool; 4],
    /// Whether the region reads (breaks) or writes the ALU result.
    pub alu: bool,
    /// Instructions each clause of the region counts (its flow-control
    /// instruction included).
    pub lens: Vec<u32>,
}

impl Lanewise {
    /// Instructions of one whole iteration.
    pub fn body_len(&self) -> u64 {
        self.lens.iter().map(|&n| u64::from(n)).sum()
    }
}

/// The lane-wise form of `region`, if its lanes are independent (see the
/// module docs).
pub fn lanewise(program: &Program, region: &LoopRegion) -> Option<Lanewise> {
    if region.branch {
        return None;
    }
    let last = region.clauses.len().checked_sub(1)?;
    let mut lw = Lanewise {
        regs: Vec::new(),
        pred: [false; 4],
        alu: false,
        lens: Vec::new(),
    };
    for (pos, &ci) in region.clauses.iter().enumerate() {
        let clause = program.clauses.get(ci as usize)?;
        for n in &clause.nodes {
            lw.note(&n.op, pos as u16)?;
        }
        lw.note_term(&clause.term, pos == last)?;
        lw.lens.push(clause.counted());
    }
    lw.keep_exact(program, region);
    let live = live_at_exits(program, region);
    for r in &mut lw.regs {
        r.live_out = live.contains(r.index, r.chan);
    }
    Some(lw)
}

/// The register channels a clause reached from one of `region`'s exits may
/// read: where a break jumps, and what follows the ENDLOOP/ENDREP when the
/// count runs out. (Register contents are never outputs.)
fn live_at_exits(program: &Program, region: &LoopRegion) -> Regs {
    let (live_in, _) = program.liveness();
    let mut live = Regs::default();
    let last = region.clauses.len() - 1;
    for (pos, &ci) in region.clauses.iter().enumerate() {
        let Term::Fc { pc, fc } = &program.clauses[ci as usize].term else {
            continue;
        };
        let exits = if pos == last {
            vec![pc + 1]
        } else if fc.skip_target {
            vec![fc.target, fc.target.saturating_add(1)]
        } else {
            vec![fc.target]
        };
        for c in exits.into_iter().filter_map(|pc| program.clause_at(pc)) {
            live.union(&live_in[c as usize]);
        }
    }
    live
}

impl Lanewise {
    /// Records what operation `op` of the region's clause `pos` touches;
    /// `None` when it makes lanes depend on each other or on more than
    /// the active lanes.
    fn note(&mut self, op: &Op, pos: u16) -> Option<()> {
        match op {
            Op::Temp { index, chan, .. } | Op::SetTemp { index, chan, .. } => {
                if index.rel {
                    return None;
                }
                let write = matches!(op, Op::SetTemp { .. });
                if let Op::SetTemp { gate, .. } = op
                    && *gate != Gate::ACTIVE
                {
                    return None;
                }
                match self
                    .regs
                    .iter_mut()
                    .find(|r| r.index == index.base && r.chan == *chan)
                {
                    Some(r) => {
                        if write && r.first_write.is_none() {
                            r.first_write = Some(pos);
                            r.raw = true;
                        }
                    }
                    None => self.regs.push(Carried {
                        index: index.base,
                        chan: *chan,
                        first_write: write.then_some(pos),
                        raw: write,
                        live_out: true,
                    }),
                }
            }
            Op::SetPred { chan, gate, .. } => {
                if *gate != Gate::ACTIVE {
                    return None;
                }
                self.pred[usize::from(*chan & 3)] = true;
            }
            Op::SetAluResult { gate, .. } => {
                if *gate != Gate::ACTIVE {
                    return None;
                }
                self.alu = true;
            }
            // Lookups of inputs fetch for the lanes still in the loop, as
            // in lock step (never for inactive lanes); uncached reads must
            // see writes in lock-step order.
            Op::Fetch {
                kind: FetchKind::Lookup,
                inactive: false,
                ..
            } => {}
            Op::Kill { .. }
            | Op::SetOut { .. }
            | Op::SetDepth { .. }
            | Op::Fetch { .. }
            | Op::UmrtWrite { .. } => return None,
            Op::Const { .. }
            | Op::Imm { .. }
            | Op::Unary { .. }
            | Op::Binary { .. }
            | Op::Mad { .. }
            | Op::Dot { .. }
            | Op::Select { .. }
            | Op::QuadLane { .. }
            | Op::SemWait
            | Op::SemAcquire { .. } => {}
        }
        Some(())
    }

    /// Checks how a region clause ends: a break before the `last` one, the
    /// ENDLOOP/ENDREP that jumps back for every lane at it.
    fn note_term(&mut self, term: &Term, last: bool) -> Option<()> {
        match term {
            Term::Next(_) if !last => Some(()),
            Term::Fc { fc, .. } => {
                let fits = match fc.op {
                    FcOp::BreakLoop | FcOp::BreakRep => !last,
                    FcOp::EndLoop | FcOp::EndRep => last && fc.func == 0xFF,
                    _ => false,
                };
                if !fits {
                    return None;
                }
                if !last {
                    // A break reads the ALU result and its predicate.
                    self.alu = true;
                    if let Some(c) = fc.pred.0 {
                        self.pred[usize::from(c & 3)] = true;
                    }
                }
                Some(())
            }
            _ => None,
        }
    }

    /// Keeps exact the registers whose canonical bits some read needs; a
    /// write to an exact register needs the written value's canonical
    /// bits, so this repeats until nothing changes.
    fn keep_exact(&mut self, program: &Program, region: &LoopRegion) {
        let regs = &mut self.regs;
        loop {
            let mut changed = false;
            for &ci in &region.clauses {
                let clause = &program.clauses[ci as usize];
                let exact = |index: u8, chan: u8| {
                    regs.iter()
                        .any(|r| r.index == index && r.chan == chan && !r.raw)
                };
                let needs = needs_bits(clause, exact);
                for n in &clause.nodes {
                    match &n.op {
                        Op::Temp { dst, index, chan } if needs[dst.0 as usize] => {
                            changed |= make_exact(regs, index.base, *chan);
                        }
                        Op::SetTemp { index, chan, v, .. } if !is_modifier_output(clause, *v) => {
                            changed |= make_exact(regs, index.base, *chan);
                        }
                        _ => {}
                    }
                }
            }
            if !changed {
                break;
            }
        }
    }
}

fn make_exact(regs: &mut [Carried], index: u8, chan: u8) -> bool {
    match regs.iter_mut().find(|r| r.index == index && r.chan == chan) {
        Some(r) if r.raw => {
            r.raw = false;
            true
        }
        _ => false,
    }
}

/// Whether `v` is the result of an output modifier (`Omod`/`Canon`).
fn is_modifier_output(clause: &Clause, v: V) -> bool {
    clause.nodes.iter().any(
        |n| matches!(n.op, Op::Unary { dst, op: Unary::Omod(_) | Unary::Canon, .. } if dst == v),
    )
}

/// Per value of `clause`: whether the full-batch lowering needs its
/// canonical bits (`exact(index, chan)`: writes to that register do).
fn needs_bits(clause: &Clause, exact: impl Fn(u8, u8) -> bool) -> Vec<bool> {
    let mut needs = vec![false; clause.values as usize];
    let mut sign = vec![false; clause.values as usize];
    for n in &clause.nodes {
        if let Op::Unary {
            dst,
            op: Unary::Neg | Unary::Abs | Unary::Nab,
            ..
        } = n.op
            && let Some(s) = sign.get_mut(dst.0 as usize)
        {
            *s = true;
        }
    }
    let mark = |needs: &mut Vec<bool>, v: V| {
        if let Some(x) = needs.get_mut(v.0 as usize) {
            *x = true;
        }
    };
    for n in clause.nodes.iter().rev() {
        match &n.op {
            Op::Binary {
                op: crate::ir::Binary::Min | crate::ir::Binary::Max,
                a,
                b,
                ..
            }
            | Op::Select { a, b, .. } => {
                mark(&mut needs, *a);
                mark(&mut needs, *b);
            }
            Op::SetTemp { index, chan, v, .. } if exact(index.base, *chan) => {
                mark(&mut needs, *v);
            }
            Op::Unary {
                dst,
                op: Unary::Neg | Unary::Abs | Unary::Nab,
                a,
            } if needs[dst.0 as usize] => mark(&mut needs, *a),
            // A lane pick of a sign-modified value is made canonical first.
            Op::QuadLane { dst, a, .. }
                if needs[dst.0 as usize] || sign.get(a.0 as usize) == Some(&true) =>
            {
                mark(&mut needs, *a)
            }
            _ => {}
        }
    }
    needs
}

/// Where the lock-step run of a region whose clauses count `lens`
/// instructions, entered at the top of an iteration with `count`
/// iterations to go, hands it back when the last of its lanes left at
/// event `last` ([`LoopState::events`]; [`LANE_STAYED`]: the count ran
/// out): the iterations completed before that one, the clause whose
/// terminator is next, and the instructions executed.
pub fn left_at(lens: &[u32], count: u32, last: i32) -> (i64, usize, u64) {
    let body: u64 = lens.iter().map(|&n| u64::from(n)).sum();
    if last == LANE_STAYED {
        return (
            i64::from(count) - 1,
            lens.len() - 1,
            u64::from(count) * body,
        );
    }
    let r = lens.len() as i64;
    let (k, j) = (i64::from(last) / r, (i64::from(last) % r) as usize);
    let prefix: u64 = lens[..=j].iter().map(|&n| u64::from(n)).sum();
    (k, j, k as u64 * body + prefix)
}

/// The lanes whose event is `t` or later (a compare per lane; vectorises).
fn at_least(events: &[i32; GROUP_LANES], t: i32) -> Mask {
    events
        .iter()
        .enumerate()
        .fold(0, |m, (l, &e)| m | Mask::from(e >= t) << l)
}

/// Settles a lane-wise run of `region` (described by `lw`): from the
/// lanes' exit events in `state.events`, sets the loop state, aL, the lane
/// masks and the counters to what the lock-step run would have left when
/// it handed the loop back to the shim, and returns its exit
/// ([`loop_exit`]). `alive` are the lanes that were in the loop when the
/// run started (`state` and `lanes` as they were then, apart from what the
/// compiled code wrote). Raw registers ([`Carried::raw`]) are made
/// canonical here, in the lanes that wrote them in the loop (those code
/// after the loop may read: the others the compiled code did not write
/// back).
pub fn settle(lw: &Lanewise, state: &mut LoopState, lanes: &mut Lanes, alive: Mask) -> u32 {
    let live = u64::from((lanes.running & !state.helper).count_ones());
    let events = &state.events;
    // The last event: the whole count (the ENDLOOP of the last iteration
    // hands over), or the break that took the last lanes out.
    let last = (0..GROUP_LANES)
        .filter(|&l| alive >> l & 1 != 0)
        .map(|l| events[l])
        .max()
        .unwrap_or(0);
    let (iterations, j, executed) = left_at(&lw.lens, state.count, last);
    let before = alive & !at_least(events, last);
    // Raw registers: canonical in the lanes that wrote them in the loop
    // (event at or past the first clause writing them); a lane that left
    // before that keeps the bits it had.
    for reg in lw.regs.iter().filter(|r| r.raw) {
        let Some(first) = reg.carried_out() else {
            continue;
        };
        let wrote = alive & at_least(events, i32::from(first));
        let chan = &mut lanes.temps[usize::from(reg.index)][usize::from(reg.chan & 3)];
        // Every lane computed, the writers' results kept: no branches.
        for (l, x) in chan.iter_mut().enumerate() {
            let c = crate::fp::canon(*x);
            *x = if wrote >> l & 1 != 0 { c } else { *x };
        }
    }
    state.broken |= before;
    lanes.active &= !before;
    state.count -= iterations as u32;
    state.al = state
        .al
        .wrapping_add(state.step.wrapping_mul(iterations as i32));
    lanes.al = state.al;
    state.executed += executed;
    state.pixel_instructions += executed * live;
    (loop_exit::AT_TERM << 16) | j as u32
}
