//! The rows of a run (`docs/machine.md` §6): run by the workers (handed out
//! by `handout.rs`), one worker per thread, and their results delivered in
//! row order.

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

use std::sync::atomic::{AtomicU64, Ordering};

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
    /// in row order, left by `handout::run_rows` for itself; or the
    /// counters of the rows whose uncached writes it made while later rows
    /// ran (`overlap::InOrder`), left for the calling thread.
    pub(super) sum: Option<super::handout::WorkerSum>,
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
