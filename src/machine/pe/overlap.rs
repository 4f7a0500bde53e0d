//! Making a run's uncached writes: after its rows, in row order, or while
//! later rows run (`docs/design.md`, "Uncached writes while later rows
//! run").
//!
//! With several workers, rows are handed out in row order. After each of
//! its rows a worker makes the uncached writes of the next rows in row
//! order, as long as it ran them itself: a row's log is read by the core
//! that wrote it, while its cache still holds it. A row another worker ran
//! waits for that worker's next row (or for the end of the run); the rows
//! after the last one made are delivered after the rows, as before. The
//! writes land in the order one thread would make them; rows keep running
//! meanwhile, which is admitted only where no row can see them
//! (`deliver::deliver_while_running`).

use super::handout::Slot;
use super::room::Room;
use super::rows::Worker;
use crate::mc::{Mc, Surface, UncachedWrite};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, TryLockError};

/// The writes of a run's rows, made in row order as the rows finish.
pub(super) struct InOrder<'a> {
    mc: &'a Mc,
    out0: Surface,
    /// Which worker ran each row (`usize::MAX` until one has).
    ran: Vec<AtomicUsize>,
    /// Rows whose writes are made (a prefix of the run's rows), and the
    /// writes that fell outside `out0`'s bytes, in order, for the caller
    /// to make after the rows (none in practice: see
    /// [`deliver_uncached_shared`]).
    made: Mutex<(usize, Vec<UncachedWrite>)>,
    /// Where the record of who ran each row goes back to.
    room: &'a Room,
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
    /// Writes into output 0's surface `out0`, for a run of `rows` rows.
    ///
    /// # Safety
    /// Until [`InOrder::finish`], nothing but [`InOrder::advance`] may read
    /// or write `out0`'s bytes: the rows do not (they log their uncached
    /// writes and look up no input that overlaps it), nor does the caller.
    /// Its record of who ran each row comes from `room`.
    pub(super) unsafe fn new(
        mc: &'a Mc,
        out0: Surface,
        rows: usize,
        room: &'a Room,
    ) -> InOrder<'a> {
        InOrder {
            mc,
            out0,
            ran: room.ran(rows),
            made: Mutex::new((0, Vec::new())),
            room,
        }
    }

    /// Worker `worker` (`w`) finished row `at` (its result in its slot),
    /// and keeps the logs whose writes it made: makes
    /// the writes of the rows that are done ([`take_writes`]) in row order
    /// from the first whose writes are not made yet, while that row is one
    /// this worker ran. Where another worker is making writes, it returns
    /// at once (the rows it leaves are made later, by their own workers or
    /// after the run).
    ///
    /// Measured on `scatter` (a transpose, two threads): the calling
    /// thread alone making every row's writes read each log on the other
    /// core, which slowed the strips writing the next logs about 1.6×;
    /// with each worker making its own rows' writes, re-runs went from
    /// 3.11–3.20 to 2.46–2.67 ns per pixel (`docs/design.md`).
    pub(super) fn advance(&self, slots: &[Slot], at: usize, worker: usize, w: &mut Worker) {
        // Only this worker stores `worker` anywhere, and only it reads
        // that value back below: program order is all it needs.
        self.ran[at].store(worker, Ordering::Relaxed);
        let mut made = match self.made.try_lock() {
            Ok(made) => made,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => return,
        };
        while self
            .ran
            .get(made.0)
            .is_some_and(|w| w.load(Ordering::Relaxed) == worker)
        {
            let Some(writes) = take_writes(&slots[made.0]) else {
                break;
            };
            // SAFETY: `new`'s caller keeps every other reader and writer
            // away from `out0`'s bytes, and the lock any other call.
            let rest = unsafe { deliver_uncached_shared(self.mc, &self.out0, writes.iter()) };
            made.0 += 1;
            made.1.extend(rest);
            super::room::keep(&mut w.logs, writes);
        }
    }

    /// The writes left for the caller to make after the rows (the rows
    /// whose writes were made keep empty logs).
    pub(super) fn finish(self) -> Vec<UncachedWrite> {
        self.room.give_ran(self.ran);
        self.made.into_inner().unwrap_or_else(|p| p.into_inner()).1
    }
}

/// The bytes of each uncached write of a run whose output 0 is `out0`:
/// its format's channel 0 (a run without one makes no such writes).
pub(super) fn write_len(out0: Option<Surface>) -> usize {
    out0.map_or(4, |s| s.fmt.format.channel0().1)
}

/// Makes a row's uncached writes (of `len` bytes each) in their order;
/// writes outside their surface are counted.
pub(super) fn deliver_uncached(mc: &mut Mc, writes: &[UncachedWrite], len: usize) {
    // A row's writes all go to one surface, which lies in one arena: the
    // arena of the first write takes them, any other through `write`.
    let Some(first) = writes.iter().find(|w| !w.is_outside()) else {
        count_outside(mc, writes.len());
        return;
    };
    let arena = mc
        .mem
        .arenas()
        .iter()
        .position(|a| a.contains(u64::from(first.addr), len as u64));
    let base = arena.map_or(0, |k| u64::from(mc.mem.arenas()[k].base));
    let bytes = arena.map_or(&mut [][..], |k| mc.mem.arena_mut(k));
    let (rest, outside) = write_into(bytes, base, len, writes.iter());
    count_outside(mc, outside);
    write_rest(mc, &rest, len);
}

/// Makes the uncached writes `writes` (consecutive rows' writes, in row
/// order) into output 0's surface `out0`, through a shared reference to
/// the MC; writes outside their surface are counted. Returns the writes
/// that fall outside `out0`'s bytes (none: a write lies inside its
/// surface), for [`write_rest`] to make after.
///
/// # Safety
/// No other thread may read or write `out0`'s bytes while this runs.
pub(super) unsafe fn deliver_uncached_shared<'w>(
    mc: &Mc,
    out0: &Surface,
    writes: impl Iterator<Item = &'w UncachedWrite>,
) -> Vec<UncachedWrite> {
    let base = u64::from(out0.base);
    let len = write_len(Some(*out0));
    // SAFETY: guaranteed by the caller; the slice ends with this function.
    let (rest, outside) = match unsafe { mc.mem.span_shared(base, out0.span() as usize) } {
        Some(bytes) => write_into(bytes, base, len, writes),
        None => write_into(&mut [], base, len, writes),
    };
    count_outside(mc, outside);
    rest
}

/// Counts `outside` writes outside their surface.
fn count_outside(mc: &Mc, outside: usize) {
    if outside > 0 {
        mc.diagnostics
            .out_of_bounds_writes
            .fetch_add(outside as u64, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Makes `writes` (those inside their surface, in order, `len` bytes
/// each) into `bytes`, the memory from address `base` on, in one pass
/// over them; returns those that fall outside `bytes`, in order, and how
/// many lie outside their surface.
fn write_into<'w>(
    bytes: &mut [u8],
    base: u64,
    len: usize,
    writes: impl Iterator<Item = &'w UncachedWrite>,
) -> (Vec<UncachedWrite>, usize) {
    let mut rest = Vec::new();
    let mut outside = 0;
    for w in writes {
        if w.is_outside() {
            outside += 1;
            continue;
        }
        let at = u64::from(w.addr).wrapping_sub(base) as usize;
        if len == 4
            && let Some(dst) = bytes.get_mut(at..).and_then(|b| b.first_chunk_mut::<4>())
        {
            *dst = w.bytes;
        } else if let Some(dst) = bytes.get_mut(at..).and_then(|b| b.get_mut(..len)) {
            dst.copy_from_slice(&w.bytes[..len]);
        } else {
            rest.push(*w);
        }
    }
    (rest, outside)
}

/// Makes writes that [`write_into`] left (`len` bytes each), in order.
/// Unmapped bytes are left alone (the surface was checked to lie in an
/// arena before the run).
pub(super) fn write_rest(mc: &mut Mc, rest: &[UncachedWrite], len: usize) {
    for w in rest {
        let _ = mc.mem.write(u64::from(w.addr), &w.bytes[..len]);
    }
}
