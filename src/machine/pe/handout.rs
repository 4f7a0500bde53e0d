//! Handing a run's rows out to its workers ([`run_rows`]): each worker
//! takes a block of rows of its own first, then helps with the others';
//! where rows should finish about in row order, a block is every `n`-th
//! stripe of a few rows (`docs/threads.md`; `docs/design.md`, "Uncached
//! writes while later rows run").

use super::room::Room;
use super::rows::{RowResult, Worker};
use super::strip::RowStrips;
use crate::runtime::RunError;
use ctm_jit::host::DazGuard;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The rows of a run in one block per worker, each handed out from its
/// start. A worker takes its own block's rows first — the same rows on
/// every run of the same domain, whose memory its core's caches may still
/// hold — then helps with the others' blocks, in turn.
///
/// A block is a run of rows, or, where rows should finish about in row
/// order ([`Handout::in_order`]), every `n`-th stripe of [`Blocks::stripe`]
/// rows: block `b` of `n` is stripes `b`, `b + n`, …
struct Blocks<'a> {
    /// Each block's next row (an index into the run's rows; into the
    /// block's own rows where striped), on a cache line of its own.
    next: &'a [Cursor],
    /// The run's rows (block `b` ends at `rows · (b + 1) / blocks`).
    rows: usize,
    /// The first row, in row order, that failed (`usize::MAX`: none).
    failed_at: AtomicUsize,
    /// Rows per stripe, or 0: blocks are runs of rows.
    stripe: usize,
}

/// Rows per stripe of a run of `rows` rows on `workers` workers that
/// should finish about in row order: stripes of up to 8 rows, at least
/// four per worker. A worker's rows then come several in a row, so that
/// it makes their writes one after the other, and the same rows fall to
/// the same worker on every run (for a transpose into a float32_1
/// surface, 8 quad rows write 16 columns: one cache line per row).
fn stripe(rows: usize, workers: usize) -> usize {
    (rows / (4 * workers.max(1))).clamp(1, 8)
}

#[repr(align(64))]
struct Cursor(AtomicUsize);

impl Blocks<'_> {
    /// Where block `b` of `blocks` starts among `rows` rows.
    fn start(rows: usize, blocks: usize, b: usize) -> usize {
        rows * b / blocks
    }

    /// Worker `w`'s next rows, at most `most` of them in a row, from block
    /// `*block` on (advanced as blocks run out); `None` once every block is
    /// handed out. Rows after one that failed are not handed out; rows
    /// before it still are, so the first error in row order is the one
    /// reported, however the rows fell to the workers.
    #[inline]
    fn take(&self, w: usize, block: &mut usize, most: usize) -> Option<std::ops::Range<usize>> {
        if self.stripe > 0 {
            return self.take_striped(w, block);
        }
        let n = self.next.len();
        while *block < n {
            let b = (w + *block) % n;
            let k = self.next[b].0.fetch_add(most, Ordering::Relaxed);
            let end = Self::start(self.rows, n, b + 1).min(self.failed_at.load(Ordering::Relaxed));
            if k < end {
                return Some(k..end.min(k + most));
            }
            // This block is handed out, or the rest of it follows a row
            // that failed.
            *block += 1;
        }
        None
    }

    /// [`Blocks::take`] where blocks are stripes: a whole stripe (its
    /// cursor counts stripes), so that a worker helping with another's
    /// block takes rows a stripe at a time too.
    fn take_striped(&self, w: usize, block: &mut usize) -> Option<std::ops::Range<usize>> {
        let (n, k) = (self.next.len(), self.stripe);
        while *block < n {
            let b = (w + *block) % n;
            let p = self.next[b].0.fetch_add(1, Ordering::Relaxed);
            let first = (b + p * n) * k;
            let end = (first + k)
                .min(self.rows)
                .min(self.failed_at.load(Ordering::Relaxed));
            if first < end {
                return Some(first..end);
            }
            *block += 1;
        }
        None
    }
}

/// A row's result, set by the worker that ran it. On lines of its own
/// (two: the host may fetch lines in pairs), since the rows of a stripe
/// and those of the next, run by another worker, are next to each other.
///
/// (Without its lock — a row is handed out once, so no two threads touch
/// a slot at once — `scatter`'s two-thread re-runs were slower where a line
/// takes 0.4 µs to come from the other core: 1.47–1.51 → 1.64–1.71 ns per
/// pixel, three alternations; no faster where it takes 0.1 µs.)
#[derive(Default)]
#[repr(align(128))]
pub(super) struct Slot(Mutex<Option<RowOutcome>>);

impl std::ops::Deref for Slot {
    type Target = Mutex<Option<RowOutcome>>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for Slot {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

/// The result a row leaves: its row's, or `Err`.
pub(super) type RowOutcome = Result<RowResult, RunError>;

/// What a worker does after each of its rows ([`Handout`]): it is given
/// every row's slot, the index of the row it finished, its own index,
/// itself and the row's result, which it puts in the row's slot unless it
/// delivers it.
pub(super) type AfterRow<'a> = &'a (dyn Fn(&[Slot], usize, usize, &mut Worker, RowOutcome) + Sync);

/// How [`run_rows`] hands rows out and what a worker does after each.
#[derive(Clone, Copy, Default)]
pub(super) struct Handout<'a> {
    /// Rows should finish about in row order: each worker's block is
    /// every `n`-th stripe of a few rows ([`Blocks`]) instead of a run of
    /// rows.
    pub in_order: bool,
    /// The rows deliver their results themselves (direct delivery: no
    /// pixels or writes are left for the caller): each worker sums its
    /// rows' counters, and no row keeps a result of its own. Such a run
    /// calls no `after`.
    pub summed: bool,
    /// Called by every worker after each of its rows, with its result;
    /// without it, the result goes to the row's slot.
    pub after: Option<AfterRow<'a>>,
}

/// A worker's rows of a summed run ([`Handout::summed`]): their results
/// added up, and its first error in row order with that row's index.
pub(super) type WorkerSum = (RowResult, Option<(usize, RunError)>);

/// What runs rows for [`run_rows`]: on worker `w`, quad rows `rows` (one,
/// or several where the worker's strip takes them at once:
/// [`RowStrips::at_once`]), with what the worker's earlier rows found of
/// the run's strip, their results added to the last argument; `Err`: the
/// row that failed and why.
pub(super) type RunRow<'a> = dyn Fn(
        &mut Worker,
        std::ops::Range<u32>,
        &mut RowStrips,
        &mut RowResult,
    ) -> Result<(), (u32, RunError)>
    + Sync
    + 'a;

/// Runs `rows` (each through `run_row`, which adds the row's results to
/// the result it is given, and is given what the worker's earlier rows
/// found of the run's strip) on the workers, one thread each (at
/// most one per row), the calling thread the first ([`Blocks`] says which
/// rows each takes, or the next in row order: [`Handout`]), each worker
/// calling `handout.after` after each of its rows. Returns the
/// rows' results in row order, up to and including the first error (no
/// row after it starts once it failed); for a summed run, one result: the
/// sum of every row's, or the first error in row order.
///
/// Summing in the workers keeps the per-row results out of memory: with
/// a slot per row, written by the workers and read back by the calling
/// thread after every row's output had gone through the caches, reading
/// the slots back took 7.7–8.6 µs of a 162 µs run of `tiny` at 512² (256
/// rows, one thread).
pub(super) fn run_rows(
    rows: std::ops::Range<u32>,
    workers: &mut [Worker],
    pool: Option<&super::pool::Pool>,
    run_row: &RunRow<'_>,
    handout: Handout<'_>,
    room: &Room,
) -> RowsDone {
    let n = rows.len();
    let threads = workers.len().min(n);
    let count = threads.max(1);
    let striped = if handout.in_order {
        stripe(n, count)
    } else {
        0
    };
    let cursor = |b| {
        let first = if striped > 0 {
            0
        } else {
            Blocks::start(n, count, b)
        };
        Cursor(AtomicUsize::new(first))
    };
    super::pool::slots(count, cursor, |next| {
        let blocks = Blocks {
            next,
            rows: n,
            failed_at: AtomicUsize::new(usize::MAX),
            stripe: striped,
        };
        run_blocks(
            rows,
            &blocks,
            &mut workers[..threads],
            pool,
            run_row,
            handout,
            room,
        )
    })
}

/// [`run_rows`] of `rows` handed out by `blocks` to `workers` (one per
/// thread).
fn run_blocks(
    rows: std::ops::Range<u32>,
    blocks: &Blocks<'_>,
    workers: &mut [Worker],
    pool: Option<&super::pool::Pool>,
    run_row: &RunRow<'_>,
    handout: Handout<'_>,
    room: &Room,
) -> RowsDone {
    debug_assert!(!(handout.summed && handout.after.is_some()));
    let first_row = rows.start;
    let rows = rows.len();
    let slots = if handout.summed {
        Vec::new()
    } else {
        room.slots(rows)
    };
    let threads = workers.len();
    let work = |(k, w): (usize, &mut Worker)| {
        let began = w.timed.then(std::time::Instant::now);
        // Strips leave DAZ set between rows (`strip.rs`): the default comes
        // back when this worker's rows end, however they end.
        let _default = DazGuard::new(false);
        let mut block = 0;
        let (mut sum, mut failed) = (RowResult::default(), None);
        // What this worker finds of the strip at its first row, for its
        // others (on its own thread's stack).
        let mut strips = RowStrips::default();
        // A summed run's rows go several at a time where the worker's
        // strip takes them so.
        let most = |strips: &RowStrips| if handout.summed { strips.at_once() } else { 1 };
        while let Some(taken) = blocks.take(k, &mut block, most(&strips)) {
            if handout.summed {
                let row = first_row + taken.start as u32;
                // The rows' counters go straight into the worker's sum
                // (they are all a direct run's rows leave).
                let rows = row..first_row + taken.end as u32;
                let res = run_row(w, rows, &mut strips, &mut sum);
                debug_assert!(sum.pixels.is_empty() && sum.writes.is_empty());
                if let Err((row, e)) = res {
                    let at = (row - first_row) as usize;
                    blocks.failed_at.fetch_min(at, Ordering::Relaxed);
                    // Once a row failed, only rows before it are handed
                    // out: a worker's last error is its first in row order.
                    failed = Some((at, e));
                }
                continue;
            }
            for at in taken {
                // No row after one that failed starts.
                if at > blocks.failed_at.load(Ordering::Relaxed) {
                    break;
                }
                let row = first_row + at as u32;
                let mut result = RowResult::default();
                let res = run_row(w, row..row + 1, &mut strips, &mut result)
                    .map(|()| result)
                    .map_err(|(_, e)| e);
                if res.is_err() {
                    blocks.failed_at.fetch_min(at, Ordering::Relaxed);
                }
                match handout.after {
                    Some(after) => after(&slots, at, k, w, res),
                    None => *slots[at].lock().unwrap_or_else(|p| p.into_inner()) = Some(res),
                }
            }
        }
        if handout.summed {
            w.sum = Some((sum, failed));
        }
        if let Some(began) = began {
            w.busy += began.elapsed();
        }
    };
    if threads <= 1 {
        if let Some(w) = workers.first_mut() {
            work((0, w));
        }
    } else if let Some(pool) = pool {
        // Worker k on the pool's thread k − 1 where each thread takes one
        // (`on_threads`): the rows of its own block stay in that core's
        // caches from one run to the next.
        let mut each = workers.iter_mut();
        let hand = |_| Mutex::new(each.next());
        super::pool::slots(threads, hand, |handed| {
            let handed = &*handed;
            super::pool::on_threads(pool, threads, &|k| {
                let taken = handed[k].lock().unwrap_or_else(|p| p.into_inner()).take();
                if let Some(w) = taken {
                    work((k, w));
                }
            });
        });
    } else {
        std::thread::scope(|s| {
            let (own, rest) = workers.split_at_mut(1);
            let work = &work;
            for w in rest.iter_mut().enumerate().map(|(k, w)| (k + 1, w)) {
                s.spawn(move || work(w));
            }
            work((0, &mut own[0]));
        });
    }
    if handout.summed {
        let mut total = RowResult::default();
        let mut first: Option<(usize, RunError)> = None;
        for (sum, failed) in workers.iter_mut().filter_map(|w| w.sum.take()) {
            total.count(sum);
            if let Some((at, e)) = failed
                && first.as_ref().is_none_or(|f| at < f.0)
            {
                first = Some((at, e));
            }
        }
        return RowsDone::Summed(Some(first.map_or(Ok(total), |(_, e)| Err(e))));
    }
    RowsDone::Each(slots)
}

/// What [`run_rows`] returns: a summed run's one result, or each row's in
/// its slot.
pub(super) enum RowsDone {
    Summed(Option<RowOutcome>),
    Each(Vec<Slot>),
}

impl RowsDone {
    /// Takes the results in row order (a summed run's one), from row
    /// `from` on (the rows before it left none), up to and including the
    /// first error: the rows that ran before any failed.
    pub(super) fn results(&mut self, from: usize) -> impl Iterator<Item = RowOutcome> + '_ {
        let (one, each): (_, &mut [Slot]) = match self {
            RowsDone::Summed(r) => (r.take(), &mut []),
            RowsDone::Each(v) => (None, v.get_mut(from..).unwrap_or_default()),
        };
        let mut stopped = false;
        let each = each.iter_mut().map_while(move |s| {
            if stopped {
                return None;
            }
            let r = s.get_mut().unwrap_or_else(|p| p.into_inner()).take()?;
            stopped = r.is_err();
            Some(r)
        });
        one.into_iter().chain(each)
    }

    /// Keeps the slots' vector in `room` for the next run's (the slots
    /// before `from` are empty).
    pub(super) fn into_room(self, room: &Room, from: usize) {
        if let RowsDone::Each(slots) = self {
            room.give_slots(slots, from);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rows worker `w` takes until none are left.
    fn taken(blocks: &Blocks<'_>, w: usize) -> Vec<usize> {
        let mut block = 0;
        std::iter::from_fn(|| blocks.take(w, &mut block, 1))
            .flatten()
            .collect()
    }

    fn striped(next: &[Cursor], rows: usize, stripe: usize) -> Blocks<'_> {
        Blocks {
            next,
            rows,
            failed_at: AtomicUsize::new(usize::MAX),
            stripe,
        }
    }

    #[test]
    fn stripes_alternate_between_blocks_and_a_worker_then_helps() {
        assert_eq!([stripe(128, 2), stripe(20, 2), stripe(3, 2)], [8, 2, 1]);
        let next = [Cursor(AtomicUsize::new(0)), Cursor(AtomicUsize::new(0))];
        let blocks = striped(&next, 9, 2);
        // Worker 0's stripes, then what is left of worker 1's.
        assert_eq!(taken(&blocks, 0), [0, 1, 4, 5, 8, 2, 3, 6, 7]);
        assert!(taken(&blocks, 1).is_empty());
        let next = [Cursor(AtomicUsize::new(0)), Cursor(AtomicUsize::new(0))];
        let blocks = striped(&next, 9, 2);
        let mut block = 0;
        assert_eq!(blocks.take(1, &mut block, 1), Some(2..4), "a whole stripe");
        assert_eq!(taken(&blocks, 0), [0, 1, 4, 5, 8, 6, 7]);
        // No row after one that failed is handed out.
        let next = [Cursor(AtomicUsize::new(0)), Cursor(AtomicUsize::new(0))];
        let blocks = striped(&next, 9, 2);
        blocks.failed_at.store(5, Ordering::Relaxed);
        assert_eq!(taken(&blocks, 1), [2, 3, 0, 1, 4]);
    }
}
