//! Straight programs run along a strip of whole quads (`docs/design.md`,
//! "Straight programs in one compiled strip").
//!
//! A program qualifies ([`strip_shape`]) when it is a chain of clauses
//! from pc 0 that only fall through to the next one and end, each with a
//! full-batch walk, no uncached read, depth write or kill, at most one
//! uncached write in all, and every render target it writes written in
//! all four channels (lookups through the input caches read memory
//! themselves, as a clause compiled for direct lookups does; the uncached
//! write is appended to the row's writes, quad after quad, in the lane
//! order the runtime makes a group's writes in). Started on
//! whole quads with every lane running and active, such a program does the
//! same for every lane: no gate can switch a lane off and nothing a lane
//! does reaches another lane, so a compiled strip
//! ([`crate::state::StripFn`]) runs it for a row of quads with no lane
//! state and writes its results straight to memory.
//!
//! A program that is one loop qualifies too ([`StripLoop`]): such a chain
//! up to a LOOP/REP that never jumps over its body while its count is not
//! zero, then a loop region whose lanes are independent
//! ([`crate::lanewise`]), whose breaks all leave to the instruction after
//! its ENDLOOP/ENDREP and whose end reads the LOOP's count, then such a
//! chain from there to the end. None of these flow-control instructions
//! swaps levels, touches the address stack or increments branch counters,
//! so no lane is ever switched off but by the loop's breaks, and every lane
//! is active again after the loop: each lane computes what it would in
//! lock step, its iterations on its own. The strip records where each lane
//! left the loop; the counters follow from that (the runtime runs such a
//! strip only where its count is not zero).

use crate::ir::{Counter, Fc, FcOp, FetchKind, Op, Program, StackOp, TARGETS, Term};
use crate::lanewise::Lanewise;
use crate::regions::LoopRegion;
use std::sync::Arc;

/// What a strip of a program is: its clauses in order and what they write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StripShape {
    /// The clauses, from the one at pc 0.
    pub clauses: Vec<u32>,
    /// Render targets written (bit `t` = target `t`), each in all four
    /// channels.
    pub targets: u8,
    /// Instructions one pass counts (every clause's, as the budget counts
    /// them).
    pub counted: u64,
    /// The inputs it looks up through the input caches (bit `k` = input
    /// `k`): a strip reads them itself, so it runs only where the runtime
    /// hands over a descriptor for each ([`crate::state::TexTable::covers`]).
    pub inputs: u16,
    /// Uncached writes per pixel (0 or 1): the strip appends them to the
    /// log the caller hands over in `Io::umrt_log`, which must have room for
    /// one entry per pixel.
    pub writes: u8,
    /// The loop of a program that is one loop: `clauses` are then those
    /// before it and those after it, and `counted` theirs alone.
    pub looped: Option<StripLoop>,
}

/// The loop of a strip ([`StripShape::looped`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StripLoop {
    /// How many of the strip's clauses run before the loop.
    pub before: usize,
    /// The loop's body.
    pub region: LoopRegion,
    /// Its lane-wise form (shared with the plans a run makes per row).
    pub lanewise: Arc<Lanewise>,
}

/// The strip shape of `program`, if it has one (see the module docs).
pub fn strip_shape(program: &Program) -> Option<StripShape> {
    let mut ci = program.clause_at(0)?;
    let mut shape = StripShape {
        clauses: Vec::new(),
        targets: 0,
        counted: 0,
        inputs: 0,
        writes: 0,
        looped: None,
    };
    let mut channels = [0u8; TARGETS];
    loop {
        let clause = program.clauses.get(ci as usize)?;
        if shape.clauses.contains(&ci) || !crate::lower::full_walk(clause) {
            return None;
        }
        for n in &clause.nodes {
            match &n.op {
                Op::Fetch {
                    kind: FetchKind::Uncached,
                    ..
                }
                | Op::SetDepth { .. }
                | Op::Kill { .. } => return None,
                // Two writes would interleave differently in batches than
                // in the runtime's groups.
                Op::UmrtWrite { .. } if shape.writes > 0 => return None,
                Op::UmrtWrite { .. } => shape.writes = 1,
                Op::Fetch { input, .. } => shape.inputs |= 1 << (input & 15),
                Op::SetOut { target, chan, .. } => {
                    channels[usize::from(*target) % TARGETS] |= 1 << (chan & 3);
                }
                _ => {}
            }
        }
        shape.clauses.push(ci);
        shape.counted += u64::from(clause.counted());
        let next = match &clause.term {
            Term::End => None,
            Term::Last { pc } if u32::from(*pc) + 1 >= u32::from(program.len) => None,
            Term::Next(pc) if *pc >= program.len => None,
            Term::Next(pc) => Some(program.clause_at(*pc)?),
            Term::Fc { pc, fc } if shape.looped.is_none() => {
                let (l, after) = strip_loop(program, *pc, fc)?;
                for &ci in &l.region.clauses {
                    // Regions look up through the input caches only.
                    shape.inputs |=
                        crate::lower::direct_inputs(&program.clauses[ci as usize]).unwrap_or(0);
                }
                shape.looped = Some(StripLoop {
                    before: shape.clauses.len(),
                    ..l
                });
                if after >= program.len {
                    None
                } else {
                    Some(program.clause_at(after)?)
                }
            }
            _ => return None,
        };
        match next {
            Some(n) => ci = n,
            None => break,
        }
    }
    for (t, &c) in channels.iter().enumerate() {
        match c {
            0 => {}
            0xF => shape.targets |= 1 << t,
            _ => return None,
        }
    }
    Some(shape)
}

/// The loop a LOOP/REP `fc` at `pc` starts, if a strip can run it (see
/// the module docs), and the pc after its end. (`before` is left 0.) The
/// PE's rule for outputs a re-run need not restore
/// (`ctm::kernel`'s `covers`) asks the same of the instruction words,
/// less the lanes' independence: a change to one is a change to both.
fn strip_loop(program: &Program, pc: u16, fc: &Fc) -> Option<(StripLoop, u16)> {
    let plain = |f: &Fc| {
        !f.b_else && f.stack == StackOp::None && f.stay != Counter::Incr && f.jump != Counter::Incr
    };
    let is_loop = match fc.op {
        FcOp::Loop => true,
        FcOp::Rep => false,
        _ => return None,
    };
    // Function 0: no lane ever wants the LOOP's jump over the body.
    if fc.func != 0 || !plain(fc) {
        return None;
    }
    let region = crate::regions::loop_regions(program)
        .into_iter()
        .find(|r| {
            !r.branch && r.start == pc + 1 && r.is_loop == is_loop && r.int_addr == fc.int_addr
        })?;
    let lanewise = Arc::new(crate::lanewise::lanewise(program, &region)?);
    let (&last, body) = region.clauses.split_last()?;
    let Term::Fc { pc: end, fc: back } = &program.clauses[last as usize].term else {
        return None;
    };
    let breaks_past_end = body
        .iter()
        .all(|&ci| match &program.clauses[ci as usize].term {
            Term::Next(_) => true,
            Term::Fc { fc: b, .. } => {
                matches!(b.op, FcOp::BreakLoop | FcOp::BreakRep) && plain(b) && b.target == end + 1
            }
            _ => false,
        });
    if !breaks_past_end || !plain(back) || back.target != pc + 1 {
        return None;
    }
    let l = StripLoop {
        before: 0,
        region,
        lanewise,
    };
    Some((l, end + 1))
}
