//! Failures on purpose, for tests (feature `fault-injection`, never part of
//! the tools' builds): [`arm`] makes the lowering panic when it meets an
//! immediate with the given bits, in clause code or in a lane-wise loop
//! region, so that tests can check that a bug in the lowering becomes a
//! fallback with its reason and place instead of a crash.

use crate::ir::{Clause, Op};
use std::sync::Mutex;

/// Where the lowering is when it meets the armed immediate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Site {
    /// A clause's own function (eager or compiled on first use).
    Clause,
    /// The lane-wise function of a loop region.
    Region,
}

static ARMED: Mutex<Vec<(u32, Site)>> = Mutex::new(Vec::new());

/// Makes the lowering at `site` panic on an immediate whose bits are
/// `bits` (pick a pattern no other program uses, e.g. a NaN payload).
pub fn arm(bits: u32, site: Site) {
    ARMED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push((bits, site));
}

/// Panics if `clause` holds an armed immediate for `site`.
pub(crate) fn check(clause: &Clause, site: Site) {
    let armed = ARMED.lock().unwrap_or_else(|p| p.into_inner()).clone();
    for node in &clause.nodes {
        if let Op::Imm { bits, .. } = node.op
            && armed.contains(&(bits, site))
        {
            crate::lower::lowering_at(node.pc);
            panic!("injected fault: immediate {bits:#010x}");
        }
    }
}
