//! Handing a run's rows out to its workers ([`run_rows`]): each worker
//! takes a block of rows of its own first, then helps with the others'
//! (`docs/threads.md`; `docs/design.md`, "Uncached writes while later rows
//! run").

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
struct Blocks<'a> {
    /// Each block's next row (an index into the run's rows), on a cache
    /// line of its own.
    next: &'a [Cursor],
    /// The run's rows (block `b` ends at `rows · (b + 1) / blocks`).
    rows: usize,
    /// The first row, in row order, that failed (`usize::MAX`: none).
    failed_at: AtomicUsize,
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
    fn take(&self, w: usize, block: &mut usize, most: usize) -> Option<std::ops::Range<usize>> {
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
}

/// A row's result, set by the worker that ran it.
pub(super) type Slot = Mutex<Option<Result<RowResult, RunError>>>;

/// What a worker does after each of its rows ([`Handout`]): it is given
/// every row's slot, the index of the row it finished, its own index and
/// itself.
pub(super) type AfterRow<'a> = &'a (dyn Fn(&[Slot], usize, usize, &mut Worker) + Sync);

/// How [`run_rows`] hands rows out and what a worker does after each.
#[derive(Clone, Copy, Default)]
pub(super) struct Handout<'a> {
    /// Every worker takes the next row in row order (rows then finish
    /// about in order), instead of a block of its own first.
    pub in_order: bool,
    /// The rows deliver their results themselves (direct delivery: no
    /// pixels or writes are left for the caller): each worker sums its
    /// rows' counters, and no row keeps a result of its own. Such a run
    /// calls no `after`.
    pub summed: bool,
    /// Called by every worker after each of its rows, its result in its
    /// slot.
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
    let count = if handout.in_order { 1 } else { threads.max(1) };
    let cursor = |b| Cursor(AtomicUsize::new(Blocks::start(n, count, b)));
    super::pool::slots(count, cursor, |next| {
        let blocks = Blocks {
            next,
            rows: n,
            failed_at: AtomicUsize::new(usize::MAX),
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
        // In row order, every worker takes from the one block there is.
        let own = if handout.in_order { 0 } else { k };
        let (mut sum, mut failed) = (RowResult::default(), None);
        // What this worker finds of the strip at its first row, for its
        // others (on its own thread's stack).
        let mut strips = RowStrips::default();
        // A summed run's rows go several at a time where the worker's
        // strip takes them so.
        let most = |strips: &RowStrips| if handout.summed { strips.at_once() } else { 1 };
        while let Some(taken) = blocks.take(own, &mut block, most(&strips)) {
            let (at, row) = (taken.start, first_row + taken.start as u32);
            if handout.summed {
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
            let mut result = RowResult::default();
            let res = run_row(w, row..row + 1, &mut strips, &mut result)
                .map(|()| result)
                .map_err(|(_, e)| e);
            if res.is_err() {
                blocks.failed_at.fetch_min(at, Ordering::Relaxed);
            }
            *slots[at].lock().unwrap_or_else(|p| p.into_inner()) = Some(res);
            if let Some(after) = handout.after {
                after(&slots, at, k, w);
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
    Summed(Option<Result<RowResult, RunError>>),
    Each(Vec<Slot>),
}

impl RowsDone {
    /// Takes the results in row order (a summed run's one), up to and
    /// including the first error: the rows that ran before any failed.
    pub(super) fn results(&mut self) -> impl Iterator<Item = Result<RowResult, RunError>> + '_ {
        let (one, each): (_, &mut [Slot]) = match self {
            RowsDone::Summed(r) => (r.take(), &mut []),
            RowsDone::Each(v) => (None, v),
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

    /// Keeps the slots' vector in `room` for the next run's.
    pub(super) fn into_room(self, room: &Room) {
        if let RowsDone::Each(slots) = self {
            room.give_slots(slots);
        }
    }
}
