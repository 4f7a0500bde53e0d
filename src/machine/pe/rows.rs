//! The rows of a run (`docs/machine.md` §6): handed out to the workers in
//! order, one worker per thread, and their results delivered in row order.

use super::deliver::{Px, RowSink, Targets, deliver_ordered};
use super::overlap::deliver_uncached;
use super::room::Room;
use super::strip::RowStrips;
use super::{Progress, RunReport};
use crate::mc::{DirectInputs, Mc, RunView, Surface, UncachedWrite};
use crate::runtime::{Domain, Engine, Rows, RunError, RunOptions, RunStats, Runner, Stop};
use ctm_jit::host::DazGuard;
use ctm_jit::ir::Program;
use ctm_jit::state::{Lanes, Uniforms};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// What one row (ordered delivery) or a worker's share of rows (direct
/// delivery) produced.
#[derive(Default)]
pub(super) struct RowResult {
    pub pixels: Vec<Px>,
    pub writes: Vec<UncachedWrite>,
    pub stats: RunStats,
    pub discarded: u64,
}

/// A worker's engine and group state, kept for the whole run. Each on
/// cache lines of its own: a worker may write its own at every row (a
/// loop's strip its events), and two side by side in a vector had shared
/// lines (`tiny`'s two-thread re-runs at 512², while each row wrote its
/// worker: 0.16 → 0.23–0.26 ns per pixel).
#[repr(align(128))]
pub(super) struct Worker {
    pub engine: Box<dyn Engine + Send>,
    pub lanes: Box<Lanes>,
    /// Where a compiled strip of a program that is one loop records each
    /// lane's exit from it (see `strip.rs`).
    pub events: Vec<i32>,
    /// A summed run's counters of this worker's rows and its first error
    /// in row order, left by [`run_rows`] for itself.
    sum: Option<WorkerSum>,
    /// Empty logs for its rows' uncached writes (its own: a log taken and
    /// given back through memory both workers lock moved that lock's line
    /// between the cores at every row).
    pub logs: Vec<Vec<UncachedWrite>>,
    /// Empty vectors for its rows' pixels kept for ordered delivery.
    pub pixels: Vec<Vec<Px>>,
    /// Whether to time its rows (where a run could have taken more
    /// workers), and the host time they took.
    pub timed: bool,
    pub busy: std::time::Duration,
}

impl Worker {
    /// A worker of `engine` and `lanes`.
    pub(super) fn new(engine: Box<dyn Engine + Send>, lanes: Box<Lanes>) -> Worker {
        Worker {
            engine,
            lanes,
            events: Vec::new(),
            sum: None,
            logs: Vec::new(),
            pixels: Vec::new(),
            timed: false,
            busy: std::time::Duration::ZERO,
        }
    }
}

/// What the rows of a run share: the program and what it reads, where
/// its results go, and how the run is stopped and its progress reported.
pub(super) struct RowRun<'a> {
    pub mc: &'a Mc,
    pub inputs: &'a [Option<Surface>; 16],
    /// Uncached memory (output 0 of an uncached program).
    pub out0: Option<Surface>,
    pub direct_inputs: &'a DirectInputs<'a>,
    pub targets: Targets<'a>,
    /// Results written by the workers themselves (else kept for ordered
    /// delivery).
    pub direct: bool,
    pub program: &'a Program,
    pub uniforms: &'a Uniforms,
    pub options: RunOptions,
    pub stop: &'a Stop,
    pub domain: Domain,
    /// The conditional value.
    pub v: u32,
    /// Pairs the PE's conditional test keeps from running.
    pub skip: Option<&'a (dyn Fn(u32, u32) -> bool + Sync)>,
    /// Registers the program uses.
    pub temps: usize,
    /// Whether rows may go through the engine's compiled strip (see
    /// `strip.rs`): direct delivery, every output channel enabled, the CO
    /// passing every pixel, no hazard checking, no skipped pairs and no
    /// instruction limit.
    pub strips: bool,
    /// Where each render target's rows lie in host memory, for strips
    /// (found once per run).
    pub rows_at: [Option<crate::mc::RowsInPlace>; 4],
    /// Rows done so far, counted only where progress is reported (a
    /// count every worker bumps would move its cache line between the
    /// cores at every row).
    pub rows_done: Option<&'a AtomicU64>,
    pub total_rows: u64,
    /// Called after each row (`None` where the run reports per chunk).
    pub progress: Option<&'a Progress>,
    /// The logs a worker takes when its own run out.
    pub room: &'a Room,
}

impl RowRun<'_> {
    /// Runs quad row `row` on worker `w`, its results added to `into`
    /// ([`RowResult::add`]); `strips`: what the worker's earlier rows of
    /// this run found of its compiled strip.
    pub(super) fn row(
        &self,
        w: &mut Worker,
        row: u32,
        strips: &mut RowStrips,
        into: &mut RowResult,
    ) -> Result<(), RunError> {
        match self.strip_row(w, row, strips, into) {
            Some(r) => r?,
            None => self.row_part(w, row, self.domain, into)?,
        }
        if let Some(rows_done) = self.rows_done {
            let done = rows_done.fetch_add(1, Ordering::Relaxed) + 1;
            if let Some(p) = self.progress {
                // The caller's code, in the default environment.
                let _default = DazGuard::new(false);
                p(done, self.total_rows);
            }
        }
        Ok(())
    }

    /// Runs quad rows `rows` on worker `w` as [`RowRun::row`] does, several
    /// in one call to the engine where its strip takes them so
    /// ([`RowStrips::at_once`]); `Err`: the row that failed, and why.
    pub(super) fn rows(
        &self,
        w: &mut Worker,
        rows: std::ops::Range<u32>,
        strips: &mut RowStrips,
        into: &mut RowResult,
    ) -> Result<(), (u32, RunError)> {
        if rows.len() > 1
            && let RowStrips::On(kept) = strips
            && let Some(done) = self.strip_rows(w, rows.clone(), kept, into)
        {
            return done;
        }
        for row in rows {
            self.row(w, row, strips, into).map_err(|e| (row, e))?;
        }
        Ok(())
    }

    /// An empty log for a row's uncached writes on worker `w`: an earlier
    /// row's where the run makes such writes.
    pub(super) fn log(&self, w: &mut Worker) -> Vec<UncachedWrite> {
        match self.out0 {
            Some(_) => w.logs.pop().or_else(|| self.room.log()).unwrap_or_default(),
            None => Vec::new(),
        }
    }

    /// An empty vector for a row's pixels on worker `w`: an earlier row's
    /// where the run keeps pixels for ordered delivery.
    fn pixels(&self, w: &mut Worker) -> Vec<Px> {
        if self.direct {
            return Vec::new();
        }
        w.pixels
            .pop()
            .or_else(|| self.room.pixels())
            .unwrap_or_default()
    }

    /// Runs the part of quad row `row` inside `domain` (the run's domain
    /// or a part of it) on worker `w`, group by group through the shim,
    /// its results added to `into`.
    pub(super) fn row_part(
        &self,
        w: &mut Worker,
        row: u32,
        domain: Domain,
        into: &mut RowResult,
    ) -> Result<(), RunError> {
        // One uncached write per pixel of the row, the common case.
        let pixels = 2 * (domain.i1.saturating_sub(domain.i0) as usize + 2);
        let mut view = RunView::new(self.mc, self.inputs, self.out0)
            .with_direct(self.direct_inputs)
            .with_log(self.log(w))
            .expecting(pixels);
        let mut sink = RowSink {
            targets: self.targets,
            mc: self.mc,
            direct: self.direct,
            pending: self.pixels(w),
            discarded: 0,
        };
        let mut runner =
            Runner::new(self.program, &mut *w.engine, self.uniforms, self.options).stop(self.stop);
        let rows = Rows {
            domain,
            v: self.v,
            rows: row..row + 1,
            skip: self.skip,
        };
        let stats =
            runner.run_rows_prepared(&mut w.lanes, self.temps, rows, &mut view, &mut sink)?;
        into.add(RowResult {
            pixels: sink.pending,
            writes: view.writes,
            stats,
            discarded: sink.discarded,
        });
        Ok(())
    }
}

/// A row's results in row order: its pixels kept for ordered delivery,
/// then its uncached writes (of `len` bytes each: [`write_len`]), their
/// vectors then kept in `room`, then its counters (added to `counts`).
pub(super) fn deliver_row(
    targets: &Targets<'_>,
    mc: &mut Mc,
    counts: &mut RowResult,
    mut row: RowResult,
    len: usize,
    room: &Room,
) {
    counts.discarded += deliver_ordered(targets, mc, &row.pixels);
    deliver_uncached(mc, &row.writes, len);
    room.give_pixels(std::mem::take(&mut row.pixels));
    room.give_log(std::mem::take(&mut row.writes));
    counts.count(row);
}

impl RowResult {
    /// Adds the results of a later part of a row, or of a later row: its
    /// pixels and writes after these, its counters to these.
    pub(super) fn add(&mut self, mut later: RowResult) {
        append(&mut self.pixels, &mut later.pixels);
        append(&mut self.writes, &mut later.writes);
        self.count(later);
    }

    /// Adds a later row's counters to these (its pixels and writes, which
    /// are delivered apart, are dropped); hazards one entry per kind and
    /// instruction.
    pub(super) fn count(&mut self, row: RowResult) {
        self.discarded += row.discarded;
        let (s, r) = (&mut self.stats, row.stats);
        s.pixels += r.pixels;
        s.killed += r.killed;
        s.group_instructions += r.group_instructions;
        s.pixel_instructions += r.pixel_instructions;
        for h in r.hazards {
            match s
                .hazards
                .iter_mut()
                .find(|e| e.kind == h.kind && e.pc == h.pc)
            {
                Some(e) => e.count += h.count,
                None => s.hazards.push(h),
            }
        }
    }

    /// The counters of a whole run, into its report.
    pub(super) fn report_into(self, report: &mut RunReport) {
        report.discarded += self.discarded;
        report.pixels += self.stats.pixels;
        report.killed += self.stats.killed;
        report.group_instructions += self.stats.group_instructions;
        report.pixel_instructions += self.stats.pixel_instructions;
        report.hazards = self.stats.hazards;
    }
}

/// Moves `later`'s elements after `to`'s (the vector itself where `to`
/// is empty, the common case: a row's results come in one part).
pub(super) fn append<T>(to: &mut Vec<T>, later: &mut Vec<T>) {
    if to.is_empty() {
        std::mem::swap(to, later);
    } else {
        to.append(later);
    }
}

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
type WorkerSum = (RowResult, Option<(usize, RunError)>);

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
