//! What a run's rows leave for the next run's, so that a run again
//! allocates none of it (`docs/dispatch.md`, "Re-runs pay only for work"):
//! the logs of their uncached writes, the vectors of ordered delivery's
//! pixels, its slots and the record of which worker ran each row. A worker
//! keeps logs and pixel vectors of its own ([`keep`]): a log
//! taken and given back through memory both workers lock at every row moved
//! that lock's line between the cores (`scatter`'s two-thread re-runs at
//! 64²: 5.9 → 7.0 ns per pixel). Before the rows, the calling thread tops
//! each worker up to its share from the logs here, beneath the worker's
//! own (the last it used, which its core's cache may still hold), and
//! takes what a worker has beyond it ([`Room::hand_out`]); a worker that
//! runs out takes one of those left here before it makes one. Slots are
//! kept as they are, and emptied only where a row left something in them
//! (a slot the calling thread clears moves to the core of the worker that
//! fills it next).
//!
//! Kept between runs, empty. An uncached run of `scatter` at 64² made 34
//! allocations per re-run for these: a log per quad row, its slots and
//! their results' vector (5.9% of its host instructions were the
//! allocator's).

use super::deliver::Px;
use super::handout::Slot;
use super::rows::Worker;
use crate::mc::UncachedWrite;
use std::sync::atomic::AtomicU64;
use std::sync::{Mutex, MutexGuard};

/// Vectors kept at most of each kind: ordered delivery holds a chunk's
/// (32 rows) at once, writes made while later rows run fewer.
const MOST_KEPT: usize = 64;

/// Bytes kept at most of each kind (a log holds a quad row's writes, 8
/// bytes for each of its pixels; a row's pixels 80 bytes each).
const MOST_BYTES: usize = 8 << 20;

/// Keeps `v`'s room, emptied, in `kept` (a vector without room is not
/// worth keeping): a worker's own logs and pixel vectors, and a bin's.
pub(super) fn keep<T>(kept: &mut Vec<Vec<T>>, mut v: Vec<T>) {
    if v.capacity() > 0 {
        v.clear();
        kept.push(v);
    }
}

/// Empty vectors of one kind, and the bytes they have room for.
struct Bin<T> {
    kept: Vec<Vec<T>>,
    bytes: usize,
}

impl<T> Default for Bin<T> {
    fn default() -> Self {
        Bin {
            kept: Vec::new(),
            bytes: 0,
        }
    }
}

impl<T> Bin<T> {
    fn take(&mut self) -> Option<Vec<T>> {
        let v = self.kept.pop()?;
        self.bytes -= v.capacity() * size_of::<T>();
        Some(v)
    }

    /// Keeps `v`'s room (within [`MOST_KEPT`] and [`MOST_BYTES`]).
    fn give(&mut self, v: Vec<T>) {
        let bytes = v.capacity() * size_of::<T>();
        if self.kept.len() < MOST_KEPT && self.bytes + bytes <= MOST_BYTES {
            self.bytes += bytes;
            keep(&mut self.kept, v);
        }
    }

    /// Leaves each worker up to `share` of its own vectors (`each`), the
    /// last it used on top, takes the rest here, and tops each worker up
    /// to `share` from here, beneath its own.
    fn hand_out(
        &mut self,
        workers: &mut [Worker],
        each: fn(&mut Worker) -> &mut Vec<Vec<T>>,
        share: usize,
    ) {
        for w in workers.iter_mut() {
            let extra = each(w).len().saturating_sub(share);
            for v in each(w).drain(..extra) {
                self.give(v);
            }
        }
        for w in workers.iter_mut() {
            let own = each(w);
            let short = share.saturating_sub(own.len());
            let mut topped = 0;
            while topped < short
                && let Some(v) = self.take()
            {
                own.insert(0, v);
                topped += 1;
            }
        }
    }
}

/// The rows' memory kept for the next run.
#[derive(Default)]
pub(super) struct Room {
    /// Empty logs of uncached writes.
    logs: Mutex<Bin<UncachedWrite>>,
    /// Empty vectors of ordered delivery's pixels.
    pixels: Mutex<Bin<Px>>,
    /// The slots of ordered delivery, none in them.
    slots: Mutex<Vec<Slot>>,
    /// Which rows each worker ran (`overlap::InOrder`), emptied.
    ran: Mutex<Vec<AtomicU64>>,
}

impl std::fmt::Debug for Room {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (logs, pixels) = (lock(&self.logs), lock(&self.pixels));
        f.debug_struct("Room")
            .field("logs", &logs.kept.len())
            .field("log_bytes", &logs.bytes)
            .field("pixels", &pixels.kept.len())
            .field("pixel_bytes", &pixels.bytes)
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Room {
    /// Before `rows` rows run on `workers`: gathers their logs and pixel
    /// vectors here and hands each up to its share of the rows, the rest
    /// left for [`Room::log`] and [`Room::pixels`].
    pub(super) fn hand_out(&self, workers: &mut [Worker], rows: usize) {
        let share = rows.div_ceil(workers.len().max(1));
        lock(&self.logs).hand_out(workers, |w| &mut w.logs, share);
        lock(&self.pixels).hand_out(workers, |w| &mut w.pixels, share);
    }

    /// An empty log of those left here, if any.
    pub(super) fn log(&self) -> Option<Vec<UncachedWrite>> {
        lock(&self.logs).take()
    }

    /// Keeps `log`'s room for a later row.
    pub(super) fn give_log(&self, log: Vec<UncachedWrite>) {
        lock(&self.logs).give(log);
    }

    /// An empty vector for a row's pixels of those left here, if any.
    pub(super) fn pixels(&self) -> Option<Vec<Px>> {
        lock(&self.pixels).take()
    }

    /// Keeps `pixels`' room for a later row.
    pub(super) fn give_pixels(&self, pixels: Vec<Px>) {
        lock(&self.pixels).give(pixels);
    }

    /// `rows` empty slots: those kept are reused as they are, so that a
    /// slot no row filled last time is not written here (a slot the
    /// calling thread wrote moves to the core of the worker filling it).
    pub(super) fn slots(&self, rows: usize) -> Vec<Slot> {
        let mut slots = std::mem::take(&mut *lock(&self.slots));
        slots.truncate(rows);
        slots.resize_with(rows, Slot::default);
        slots
    }

    /// Keeps the slots' vector for a later run, emptied: what is left in
    /// the slots from `from` on is dropped (those before it are empty).
    pub(super) fn give_slots(&self, mut slots: Vec<Slot>, from: usize) {
        for slot in slots.iter_mut().skip(from) {
            let slot = slot.get_mut().unwrap_or_else(|p| p.into_inner());
            if slot.is_some() {
                *slot = None;
            }
        }
        *lock(&self.slots) = slots;
    }

    /// A record of `words` words of rows, none of them run yet.
    pub(super) fn ran(&self, words: usize) -> Vec<AtomicU64> {
        let mut ran = std::mem::take(&mut *lock(&self.ran));
        ran.clear();
        ran.resize_with(words, || AtomicU64::new(0));
        ran
    }

    /// Keeps a record's vector for a later run.
    pub(super) fn give_ran(&self, ran: Vec<AtomicU64>) {
        *lock(&self.ran) = ran;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;

    fn worker() -> Worker {
        Worker::new(
            Box::new(crate::interp::Interpreter::new()),
            ctm_jit::state::Lanes::new_boxed(),
        )
    }

    #[test]
    fn workers_keep_their_own_logs_and_are_topped_up_to_their_share() {
        let room = Room::default();
        let mut log = Vec::with_capacity(100);
        log.push(UncachedWrite {
            addr: 4,
            bytes: [1; 4],
        });
        let at = log.as_ptr();
        room.give_log(log);
        room.give_log(Vec::new());
        for _ in 0..4 {
            room.give_log(Vec::with_capacity(1));
        }
        let mut workers = [worker(), worker()];
        keep(&mut workers[1].logs, Vec::with_capacity(2));
        keep(&mut workers[1].logs, Vec::new());
        // Five logs here (the empty vectors are not kept), one worker 1's;
        // three rows: two each, worker 1's own on top; two left.
        room.hand_out(&mut workers, 3);
        assert_eq!([workers[0].logs.len(), workers[1].logs.len()], [2, 2]);
        assert_eq!(workers[1].logs[1].capacity(), 2, "its own on top");
        assert_eq!(workers[1].logs[0].capacity(), 1, "topped up beneath");
        assert_eq!(lock(&room.logs).kept.len(), 2);
        assert_eq!(
            lock(&room.logs).bytes,
            101 * size_of::<UncachedWrite>(),
            "bytes follow"
        );
        // Beyond its share, a worker's oldest come here.
        keep(&mut workers[0].logs, Vec::with_capacity(3));
        room.hand_out(&mut workers, 3);
        assert_eq!([workers[0].logs.len(), workers[1].logs.len()], [2, 2]);
        assert_eq!(workers[0].logs[1].capacity(), 3, "the last it used");
        assert_eq!(lock(&room.logs).kept.len(), 3);
        let mut left = [
            room.log().unwrap(),
            room.log().unwrap(),
            room.log().unwrap(),
        ];
        assert!(room.log().is_none() && lock(&room.logs).bytes == 0);
        left.sort_by_key(Vec::capacity);
        assert_eq!(left[2].capacity(), 100, "the first given, the last taken");
        assert!(left[2].is_empty() && std::ptr::eq(left[2].as_ptr(), at));
        for _ in 0..MOST_KEPT + 1 {
            room.give_log(Vec::with_capacity(1));
        }
        assert_eq!(lock(&room.logs).kept.len(), MOST_KEPT);
        let room = Room::default();
        let most = MOST_BYTES / size_of::<UncachedWrite>();
        room.give_log(Vec::with_capacity(most / 2 + 1));
        room.give_log(Vec::with_capacity(most / 2 + 1));
        assert_eq!(lock(&room.logs).kept.len(), 1, "over the bytes kept");
    }

    #[test]
    fn slots_and_records_come_back_empty() {
        let room = Room::default();
        let slots = room.slots(3);
        *lock(&slots[1]) = Some(Ok(Default::default()));
        room.give_slots(slots, 1);
        let slots = room.slots(2);
        assert_eq!(slots.len(), 2);
        assert!(slots.iter().all(|s| lock(s).is_none()));
        let ran = room.ran(4);
        ran[2].store(1, Ordering::Relaxed);
        room.give_ran(ran);
        let ran = room.ran(3);
        assert_eq!(ran.len(), 3);
        assert!(ran.iter().all(|r| r.load(Ordering::Relaxed) == 0));
    }
}
