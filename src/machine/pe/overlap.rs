//! Uncached writes made while later rows run (`docs/design.md`, "Uncached
//! writes while later rows run").
//!
//! With several workers, rows are handed out in row order, and after each
//! of its rows the calling thread makes the uncached writes of every row
//! done since the last ones it made, in row order; the rows after the
//! last it made are delivered after the rows, as before. The writes land
//! in the order one thread would make them; rows keep running meanwhile,
//! which is admitted only where no row can see them
//! (`deliver::deliver_while_running`).

use super::rows::{Slot, deliver_uncached_shared};
use crate::mc::{Mc, Surface, UncachedWrite};
use std::sync::Mutex;

/// The writes of a run's rows, made in row order as the rows finish.
pub(super) struct InOrder<'a> {
    mc: &'a Mc,
    out0: Surface,
    /// Rows whose writes are made (a prefix of the run's rows), and the
    /// writes that fell outside `out0`'s bytes, in order, for the caller
    /// to make after the rows (none in practice: see
    /// [`deliver_uncached_shared`]).
    made: Mutex<(usize, Vec<UncachedWrite>)>,
}

/// The writes of a row that may be made while later rows run (done,
/// without error, and without pixels: those are delivered after the
/// rows, in order, with their writes), taken from its slot: their memory
/// is freed once made, for the next rows' to reuse.
fn take_writes(slot: &Slot) -> Option<Vec<UncachedWrite>> {
    match &mut *slot.lock().unwrap_or_else(|p| p.into_inner()) {
        Some(Ok(row)) if row.pixels.is_empty() => Some(std::mem::take(&mut row.writes)),
        _ => None,
    }
}

impl<'a> InOrder<'a> {
    /// Writes into output 0's surface `out0`.
    ///
    /// # Safety
    /// Until [`InOrder::finish`], nothing but [`InOrder::advance`] may read
    /// or write `out0`'s bytes: the rows do not (they log their uncached
    /// writes and look up no input that overlaps it), nor does the caller.
    pub(super) unsafe fn new(mc: &'a Mc, out0: Surface) -> InOrder<'a> {
        InOrder {
            mc,
            out0,
            made: Mutex::new((0, Vec::new())),
        }
    }

    /// Makes the writes of the rows that are done ([`take_writes`]) in
    /// row order from the first whose writes are not made yet. Called by
    /// one thread (the calling thread, between its rows): the output's
    /// cache lines stay with one core, where writes made by whichever
    /// worker finished a row moved them between cores.
    pub(super) fn advance(&self, slots: &[Slot]) {
        let mut made = self.made.lock().unwrap_or_else(|p| p.into_inner());
        while let Some(writes) = slots.get(made.0).and_then(take_writes) {
            // SAFETY: `new`'s caller keeps every other reader and writer
            // away from `out0`'s bytes, and the lock any other call.
            let rest = unsafe { deliver_uncached_shared(self.mc, &self.out0, writes.iter()) };
            made.0 += 1;
            made.1.extend(rest);
        }
    }

    /// How many rows, from the first, had their writes made, and the
    /// writes left for the caller to make after them.
    pub(super) fn finish(self) -> (usize, Vec<UncachedWrite>) {
        self.made.into_inner().unwrap_or_else(|p| p.into_inner())
    }
}
