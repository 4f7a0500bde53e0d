//! Making a run's uncached writes: after its rows, in row order, or while
//! later rows run (`docs/design.md`, "Uncached writes while later rows
//! run").
//!
//! With several workers, each takes stripes of a few rows in turn
//! (`handout.rs`), so rows finish about in row order. After each of its
//! rows a worker makes the uncached writes of the next rows in row order,
//! as long as it ran them itself: a row's log is read by the core that
//! wrote it, while its cache still holds it. A row another worker ran
//! waits for that worker's next row (or for the end of the run); the rows
//! after the last one made are delivered after the rows, as before. The
//! writes land in the order one thread would make them; rows keep running
//! meanwhile, which is admitted only where no row can see them
//! (`deliver::deliver_while_running`).

use super::handout::{RowOutcome, Slot};
use super::room::Room;
use super::rows::Worker;
use crate::mc::{Mc, Surface, UncachedWrite};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// The first row whose writes are not made yet, on a cache line of its
/// own: the one value the workers share at every row.
#[repr(align(128))]
struct Next(AtomicUsize);

/// Words between two workers' records of the rows they ran, beyond what
/// the records take: a cache line, so that no two workers write one.
const GAP: usize = 8;

/// The writes of a run's rows, made in row order as the rows finish.
pub(super) struct InOrder<'a> {
    next: Next,
    mc: &'a Mc,
    out0: Surface,
    /// Which rows each worker ran: worker `w`'s bits from word
    /// `w · stride`, one per row, written only by that worker.
    ran: Vec<AtomicU64>,
    stride: usize,
    /// The writes that fell outside `out0`'s bytes, in order, for the
    /// caller to make after the rows (none in practice: see
    /// [`deliver_uncached_shared`]).
    rest: Mutex<Vec<UncachedWrite>>,
    /// Where the record of who ran each row goes back to.
    room: &'a Room,
}

impl<'a> InOrder<'a> {
    /// Writes into output 0's surface `out0`, for a run of `rows` rows on
    /// `workers` workers.
    ///
    /// # Safety
    /// Until [`InOrder::finish`], nothing but [`InOrder::advance`] may read
    /// or write `out0`'s bytes: the rows do not (they log their uncached
    /// writes and look up no input that overlaps it), nor does the caller.
    /// Its record of who ran each row comes from `room`.
    #[inline(never)]
    pub(super) unsafe fn new(
        mc: &'a Mc,
        out0: Surface,
        rows: usize,
        workers: usize,
        room: &'a Room,
    ) -> InOrder<'a> {
        let stride = rows.div_ceil(64) + GAP;
        InOrder {
            next: Next(AtomicUsize::new(0)),
            mc,
            out0,
            ran: room.ran(stride * workers.max(1)),
            stride,
            rest: Mutex::new(Vec::new()),
            room,
        }
    }

    /// The word of worker `worker`'s record that holds row `at`, and the
    /// row's bit in it.
    fn word(&self, worker: usize, at: usize) -> (&AtomicU64, u64) {
        (&self.ran[worker * self.stride + at / 64], 1 << (at % 64))
    }

    /// Whether worker `worker` ran row `at`.
    fn ran(&self, worker: usize, at: usize) -> bool {
        let (word, bit) = self.word(worker, at);
        word.load(Ordering::Relaxed) & bit != 0
    }

    /// Worker `worker` (`w`) finished row `at` with `row`: makes the writes
    /// of the rows that are done (without error, and without pixels: those
    /// are delivered after the rows, in order, with their writes) in row
    /// order from the first whose writes are not made yet, while that row
    /// is one this worker ran (`row`, or one it left in its slot), adds
    /// their counters to its sum ([`Worker::sum`]) and keeps their logs;
    /// `row`, unless made so, goes to its slot. Where the next row is
    /// another's, it returns at once (the rows it leaves are made later,
    /// by their own workers or after the run).
    ///
    /// Only the worker that ran the first row not made moves it on, so
    /// that row is the one value the workers share, and a row made here
    /// never touches its slot. Before, the workers took turns under a lock
    /// and read a shared record of who ran each row, and every row went
    /// through its slot, which the calling thread had cleared: on a host
    /// where a line takes 0.2 µs to move between the cores, those lines
    /// cost `scatter` most of what its second thread gained
    /// (`docs/design.md`, "Uncached writes while later rows run").
    pub(super) fn advance(
        &self,
        slots: &[Slot],
        at: usize,
        worker: usize,
        w: &mut Worker,
        row: RowOutcome,
    ) {
        // Only this worker writes its words, and only it reads them.
        let (word, bit) = self.word(worker, at);
        word.store(word.load(Ordering::Relaxed) | bit, Ordering::Relaxed);
        let mut held = Some(row);
        // Acquire: the writes made before the row that moved it on.
        let first = self.next.0.load(Ordering::Acquire);
        let mut next = first;
        while next < slots.len() && self.ran(worker, next) {
            let slot = || slots[next].lock().unwrap_or_else(|p| p.into_inner());
            let row = if next == at {
                held.take()
            } else {
                slot().take()
            };
            let mut row = match row {
                Some(Ok(row)) if row.pixels.is_empty() => row,
                // Back where it was (`row` goes to its slot below).
                other if next == at => {
                    held = other;
                    break;
                }
                other => {
                    *slot() = other;
                    break;
                }
            };
            let writes = std::mem::take(&mut row.writes);
            // SAFETY: `new`'s caller keeps every other reader and writer
            // away from `out0`'s bytes, and only the worker that ran row
            // `next` makes writes until it moves `next` on.
            let rest = unsafe { deliver_uncached_shared(self.mc, &self.out0, writes.iter()) };
            if !rest.is_empty() {
                self.rest
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .extend(rest);
            }
            super::room::keep(&mut w.logs, writes);
            w.sum.get_or_insert_default().0.count(row);
            next += 1;
        }
        if next > first {
            // Release: these writes before those of the rows after.
            self.next.0.store(next, Ordering::Release);
        }
        if held.is_some() {
            *slots[at].lock().unwrap_or_else(|p| p.into_inner()) = held;
        }
    }

    /// The rows whose writes were made (the first rows: their results
    /// are in the workers' sums, [`Worker::sum`], their slots empty),
    /// and the writes left for the caller to make after the rows.
    #[inline(never)]
    pub(super) fn finish(self) -> (usize, Vec<UncachedWrite>) {
        self.room.give_ran(self.ran);
        let made = self.next.0.into_inner();
        (
            made,
            self.rest.into_inner().unwrap_or_else(|p| p.into_inner()),
        )
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
    match len {
        4 => write_sized::<4>(bytes, base, writes),
        2 => write_sized::<2>(bytes, base, writes),
        _ => write_sized::<1>(bytes, base, writes),
    }
}

/// [`write_into`] for writes of `N` bytes, with one test per write that
/// lands: the loop, in which `scatter`'s runs spend a third of their time,
/// is a load, a subtraction, a test and a store. The last byte of the
/// address space ([`UncachedWrite::OUTSIDE`], where no write's first byte
/// lies) is left out of the bytes it writes, so that a write outside its
/// surface never lands; one that touches that byte takes the slower way,
/// which counts it or leaves it for [`write_rest`] (no other write of the
/// same size overlaps it but in whole: writes of `N` bytes start at
/// multiples of `N`).
fn write_sized<'w, const N: usize>(
    bytes: &mut [u8],
    base: u64,
    writes: impl Iterator<Item = &'w UncachedWrite>,
) -> (Vec<UncachedWrite>, usize) {
    let below_outside = u64::from(UncachedWrite::OUTSIDE).saturating_sub(base);
    let bytes = match usize::try_from(below_outside) {
        Ok(n) if n < bytes.len() => &mut bytes[..n],
        _ => bytes,
    };
    let mut rest = Vec::new();
    let mut outside = 0;
    for w in writes {
        let at = u64::from(w.addr).wrapping_sub(base) as usize;
        if let Some(dst) = bytes.get_mut(at..).and_then(|b| b.first_chunk_mut::<N>()) {
            *dst = *w.bytes.first_chunk::<N>().expect("N is at most 4");
        } else if w.is_outside() {
            outside += 1;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn at(addr: u32, bytes: [u8; 4]) -> UncachedWrite {
        UncachedWrite { addr, bytes }
    }

    #[test]
    fn writes_land_in_order_and_the_rest_is_left_or_counted() {
        let mut mem = [0u8; 16];
        let writes = [
            at(0x1000, [1, 2, 3, 4]),
            UncachedWrite::outside(),
            at(0x1008, [5, 6, 7, 8]),
            // The same address again: the later write is the one left.
            at(0x1000, [9, 9, 9, 9]),
            // Past the bytes: left for the caller, in order.
            at(0x100E, [1, 1, 1, 1]),
            at(0x2000, [2, 2, 2, 2]),
        ];
        let (rest, outside) = write_into(&mut mem, 0x1000, 4, writes.iter());
        assert_eq!(mem[..12], [9, 9, 9, 9, 0, 0, 0, 0, 5, 6, 7, 8]);
        assert_eq!(mem[12..], [0; 4]);
        assert_eq!(rest, [writes[4], writes[5]]);
        assert_eq!(outside, 1);
        // Two-byte and one-byte writes take their first bytes alone.
        let (rest, outside) = write_into(&mut mem, 0x1000, 2, [at(0x1004, [7, 7, 7, 7])].iter());
        assert_eq!((&mem[4..8], rest.len(), outside), (&[7, 7, 0, 0][..], 0, 0));
        let (rest, outside) = write_into(&mut mem, 0x1000, 1, [at(0x1007, [3, 3, 3, 3])].iter());
        assert_eq!((&mem[4..8], rest.len(), outside), (&[7, 7, 0, 3][..], 0, 0));
    }

    #[test]
    fn a_write_outside_its_surface_never_lands_at_the_top_of_the_address_space() {
        // Memory whose last byte is address 2^32 - 1, the address a write
        // outside its surface carries.
        let base = (1u64 << 32) - 16;
        for len in [1, 2, 4] {
            let mut mem = [0u8; 16];
            let top = u32::MAX - (len as u32 - 1);
            let writes = [
                UncachedWrite::outside(),
                at(base as u32, [9; 4]),
                at(top, [7; 4]),
            ];
            let (rest, outside) = write_into(&mut mem, base, len, writes.iter());
            assert_eq!(mem[..len], [9; 4][..len], "{len} bytes");
            if len == 1 {
                // A write of one byte at the last address is one outside
                // its surface: no channel starts there.
                assert_eq!((outside, mem[15], rest.len()), (2, 0, 0));
            } else {
                assert_eq!(outside, 1, "{len} bytes");
                // A write that reaches the last byte is left for the
                // caller, which makes it through the memory's own writes.
                assert_eq!(rest, [writes[2]], "{len} bytes");
            }
        }
    }
}
