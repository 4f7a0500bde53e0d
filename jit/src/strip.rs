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

use crate::ir::{FetchKind, Op, Program, TARGETS, Term};

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
        let next = match clause.term {
            Term::End => None,
            Term::Last { pc } if u32::from(pc) + 1 >= u32::from(program.len) => None,
            Term::Next(pc) if pc >= program.len => None,
            Term::Next(pc) => Some(program.clause_at(pc)?),
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
