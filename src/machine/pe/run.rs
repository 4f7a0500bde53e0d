//! `start_program`: one run of the current program over the domain
//! (`docs/machine.md` §6).
//!
//! 1. The program at the instruction base — an executable image, or words
//!    the loader placed there — is read through the instruction cache and
//!    built into clause IR, cached by content (`program.rs`).
//! 2. Constants are read through their caches: float constant c at
//!    base + 16c, integer constant c at base + 4c (byte 0 = count, byte 1 =
//!    initial aL, byte 2 = signed step), boolean c at base + 4c (true iff the
//!    word is non-zero). Constants the program references must be mapped; a
//!    file that was never set reads as zero if nothing references it.
//! 3. Every surface the run may touch must lie inside one arena.
//! 4. With the CO at the PE, every pair is tested first (row-major); failing
//!    pairs are not executed.
//! 5. Quad rows are executed, spread over threads in chunks; their results
//!    are delivered in row order — CO test at the DPP (value: the program's
//!    depth output, else v), then output writes under the output mask, then
//!    the row's uncached writes — so any thread count gives the same memory.

use super::deliver::{Targets, deliver_while_running, direct_allowed, uncached_strips};
use super::handout::{AfterRow, Handout, Slot, run_rows};
use super::overlap::{InOrder, write_len, write_rest};
use super::rows::{RowResult, RowRun, Worker, deliver_row};
use super::settings::{RunReport, RunSettings};
use super::strip::{RowStrips, strips_allowed};
use super::{PROCESSORS, Pe, PeError};
use crate::abi::ProgramInfo;
use crate::co::CondLoc;
use crate::engine::EngineKind;
use crate::mc::{CachedInputs, DirectInputs, Mc, Surface};
use crate::runtime::{Domain, Stop, Watchdog};
use ctm_jit::state::Lanes;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Quad rows executed between two deliveries of results when they are
/// delivered in order (see `deliver`).
const CHUNK_ROWS: usize = 32;

/// Runs of the same program, domain and engine between two whose rows are
/// timed: reading the clock at both ends of each worker's rows cost a
/// two-thread run of `tiny` at 96 × 96 about 0.1 µs of its 2.7.
const TIMED_EVERY: u32 = 8;

/// Programs, domains and engines whose work a PE keeps for its next runs
/// (the most recently run first): an application that runs several
/// kernels in turn, as stream programs do, finds each one's.
const PACES_KEPT: usize = 16;

/// The work of the last timed run: its program (held weakly, so that no
/// other program takes its address while this is kept), domain and engine,
/// the host time its workers spent on rows, and the runs since.
#[derive(Clone, Debug)]
pub(super) struct Pace {
    program: std::sync::Weak<ctm_jit::ir::Program>,
    domain: Domain,
    engine: EngineKind,
    work: Duration,
    since: u32,
}

impl Pe {
    pub(super) fn fail(offset: usize, message: impl Into<String>) -> PeError {
        PeError::Command {
            offset,
            name: "start_program",
            message: message.into(),
        }
    }

    fn check_surfaces(
        &self,
        mc: &Mc,
        info: &ProgramInfo,
        uncached: bool,
        offset: usize,
    ) -> Result<(), PeError> {
        // The name is made only for the message: a run checks its surfaces
        // every time it starts.
        let check = |what: &dyn Fn() -> String, s: &Surface| {
            mc.mem.check(u64::from(s.base), s.span()).map_err(|_| {
                Self::fail(
                    offset,
                    format!(
                        "{} at {:#010x} ({} × {} elements of {}, {} bytes) is not inside one mapped arena",
                        what(),
                        s.base,
                        s.fmt.pitch,
                        s.height,
                        s.fmt.format,
                        s.span()
                    ),
                )
            })
        };
        for &k in &info.inputs {
            if let Some(s) = &self.inputs[k as usize & 15] {
                check(&|| format!("input {k}"), s)?;
            }
        }
        for (k, s) in self.outputs.iter().enumerate() {
            if let Some(s) = s
                && (info.outputs.contains(&(k as u32)) || (uncached && k == 0))
            {
                check(&|| format!("output {k}"), s)?;
            }
        }
        if self.co.needs_buffer(self.co.loc) {
            match &self.co.buffer {
                Some(s) => check(&|| "the conditional buffer".into(), s)?,
                None => {
                    return Err(Self::fail(
                        offset,
                        format!(
                            "the conditional test `{}` needs the conditional buffer, which is not set (set_cond_out_fmt)",
                            self.co.test
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Runs the program over the domain, its report into `report` (fresh).
    pub(super) fn start(
        &mut self,
        mc: &mut Mc,
        offset: usize,
        settings: &RunSettings,
        report: &mut RunReport,
    ) -> Result<(), PeError> {
        let (program, info, desc) = self.program(mc, offset, settings.options)?;
        let uncached = desc.uncached;
        let mut uniforms = self.spare_uniforms.take().unwrap_or_default();
        self.uniforms(mc, &info, &desc, offset, &mut uniforms)?;
        self.check_surfaces(mc, &info, uncached, offset)?;
        let surfaces = (&info.inputs[..], &info.outputs[..]);
        let checked = settings.options.check_hazards;
        let direct = direct_allowed(self, mc, surfaces, uncached, checked);
        let before = mc.diagnostics.counts();
        let d = self.domain;
        let v = self.cond_val;
        let co = self.co;

        // §6: the PE-side test decides which pairs run at all.
        let skipped = self.pe_test(mc);
        report.skipped = count_skipped(skipped.as_deref());
        // Used only where the domain is not empty.
        let width = d.i1.wrapping_sub(d.i0).wrapping_add(1) as usize;
        let skip_fn = |i: u32, j: u32| {
            skipped
                .as_ref()
                .is_some_and(|s| s[(j - d.j0) as usize * width + (i - d.i0) as usize])
        };
        let skip: Option<&(dyn Fn(u32, u32) -> bool + Sync)> =
            skipped.is_some().then_some(&skip_fn as _);
        let rows = quad_rows(d);
        let total_rows = rows.len() as u64;
        // At most one worker per row, and no more than the last such run's
        // work paid for.
        let most = settings.threads.clamp(1, rows.len().max(1));
        let found = self.paces.iter().position(|p| {
            std::ptr::eq(p.program.as_ptr(), Arc::as_ptr(&program))
                && (p.domain, p.engine) == (d, settings.engine)
        });
        // The most recently run first.
        if let Some(k) = found {
            self.paces[..=k].rotate_right(1);
        }
        let paced = found.and_then(|_| self.paces.first_mut());
        let (threads, timed) = match paced {
            Some(p) => {
                p.since += 1;
                let paid = p
                    .work
                    .as_nanos()
                    .checked_div(settings.work_per_worker.as_nanos())
                    .map_or(usize::MAX, |n| usize::try_from(n).unwrap_or(usize::MAX));
                (most.min(paid.saturating_add(1)), p.since >= TIMED_EVERY)
            }
            None => (most, true),
        };
        let timed = timed && most > 1;
        let mut workers = self.workers(&program, threads, offset, settings)?;
        for w in &mut workers {
            w.timed = timed;
        }
        let temps = program.temps_used();
        let pool = super::pool::pool(workers.len());
        let out0 = uncached.then_some(self.outputs[0]).flatten();
        let targets = Targets {
            outputs: &self.outputs,
            out_mask: self.out_mask,
            co,
            v,
        };
        let rows_done = AtomicU64::new(0);
        // The watchdog ends with this function (also on an error).
        let (stop, _watchdog) = Self::stop(settings);
        // An uncached program delivers no pixels; its rows' writes are
        // made in order after the rows, so strips may run it too.
        let strips = (direct || (uncached && uncached_strips(self, mc, checked)))
            && strips_allowed(&targets, skip.is_some(), checked, stop.limited());
        let mut counts = RowResult::default();
        // Where no row can see them, the rows' uncached writes are made
        // while later rows run, in row order ([`InOrder`]).
        let overlap = (workers.len() > 1 && uncached)
            .then(|| deliver_while_running(self, mc, &program, checked))
            .flatten();
        // Direct delivery, and writes made while later rows run, need no
        // ordered hand-over between chunks.
        let whole = direct || overlap.is_some();
        let chunk = if whole { rows.len().max(1) } else { CHUNK_ROWS };
        // Strict caches: the inputs the input cache holds whole, copied
        // once (the run changes none of its lines).
        let kept = std::mem::take(&mut self.spare_cached);
        let cached = CachedInputs::new(mc, &self.inputs, &info.inputs, kept);
        let mut page_tables = std::mem::take(&mut self.spare_pages);
        let room = &self.spare.room;
        for rows in chunks(rows, chunk) {
            let (mut results, made, rest) = {
                let mc: &Mc = mc;
                // Built again for every chunk: the borrow of `mc` ends
                // with it, before the chunk's deliveries.
                let direct_inputs =
                    DirectInputs::new(mc, &self.inputs, &cached, std::mem::take(&mut page_tables));
                let run = RowRun {
                    mc,
                    inputs: &self.inputs,
                    out0,
                    direct_inputs: &direct_inputs,
                    targets,
                    direct,
                    program: &program,
                    uniforms: &uniforms.u,
                    options: settings.options,
                    stop: &stop,
                    domain: d,
                    v,
                    skip,
                    temps,
                    strips,
                    rows_at: std::array::from_fn(|t| {
                        let s = targets.outputs[t].as_ref().filter(|_| strips)?;
                        mc.rows_in_place(s)
                    }),
                    rows_done: settings.progress.is_some().then_some(&rows_done),
                    total_rows,
                    progress: settings.progress.as_ref().filter(|_| whole),
                    room,
                };
                // SAFETY: `deliver_while_running` admitted the run: no row
                // reads output 0's bytes, and rows write no memory (an
                // uncached run's rows log their writes; ordered delivery
                // keeps their pixels); this thread touches them only after
                // `finish`.
                let in_order = overlap
                    .map(|out0| unsafe { InOrder::new(mc, out0, rows.len(), workers.len(), room) });
                let advance = in_order.as_ref().map(|o| {
                    move |s: &[Slot], at, k, w: &mut Worker, row| o.advance(s, at, k, w, row)
                });
                let handout = Handout {
                    in_order: in_order.is_some(),
                    summed: direct,
                    after: advance.as_ref().map(|f| f as AfterRow<'_>),
                };
                // The vectors the last rows delivered here left.
                if out0.is_some() || !direct {
                    room.hand_out(&mut workers, rows.len());
                }
                let results = run_rows(
                    rows,
                    &mut workers,
                    pool.as_deref(),
                    &|w: &mut Worker, rows, strips: &mut RowStrips, into: &mut RowResult| {
                        run.rows(w, rows, strips, into)
                    },
                    handout,
                    room,
                );
                page_tables = direct_inputs.into_spare();
                let (made, rest) = in_order.map_or_else(Default::default, InOrder::finish);
                (results, made, rest)
            };
            write_rest(mc, &rest, write_len(out0));
            // The rows the hand-over takes (every row before the first that
            // keeps pixels), whether their writes were made while later rows
            // ran (the first `made`: their counters are the workers') or are
            // made here: as many on every run.
            if made > 0 {
                made_early(made, &mut workers, &mut counts, report);
            }
            let mut handed = overlap.is_some();
            for result in results.results(made) {
                match result {
                    Ok(row) => {
                        handed &= row.pixels.is_empty();
                        report.overlapped_rows += u64::from(handed);
                        deliver_row(&targets, mc, &mut counts, row, write_len(out0), room);
                    }
                    Err(source) => return Err(PeError::Run { offset, source }),
                }
            }
            results.into_room(room, made);
            if !whole && let Some(p) = &settings.progress {
                p(rows_done.load(Ordering::Relaxed), total_rows);
            }
        }
        counts.report_into(report);
        report.workers = workers.len() as u32;
        if timed {
            let pace = Pace {
                program: Arc::downgrade(&program),
                domain: d,
                engine: settings.engine,
                work: workers.iter().map(|w| w.busy).sum(),
                since: 0,
            };
            match found {
                Some(_) => self.paces[0] = pace,
                None => {
                    self.paces.truncate(PACES_KEPT - 1);
                    self.paces.insert(0, pace);
                }
            }
        }
        self.close(report, workers);
        self.spare_uniforms = Some(uniforms);
        self.spare_pages = page_tables;
        self.spare_cached = cached;
        report.diagnostics = mc.diagnostics.counts().since(&before);
        Ok(())
    }

    /// What stops the run — cancellation, the instruction limit, the
    /// timeout — and the watchdog that pulls it when the time is up.
    fn stop(settings: &RunSettings) -> (RunStop, Option<Watchdog>) {
        let stop = Stop::new(
            settings.cancel.clone(),
            settings.max_instructions,
            settings.timeout,
        );
        match settings.timeout {
            None => (RunStop::Here(stop), None),
            Some(t) => {
                let stop = Arc::new(stop);
                let watchdog = Watchdog::start(stop.clone(), t);
                (RunStop::Watched(stop), Some(watchdog))
            }
        }
    }

    /// With the CO at the PE (§6), which pairs of the domain fail its test
    /// and do not run, row-major; `None` when the PE tests nothing.
    fn pe_test(&self, mc: &mut Mc) -> Option<Vec<bool>> {
        let (d, co, v) = (self.domain, self.co, self.cond_val);
        (co.loc == CondLoc::Pe && !d.is_empty()).then(|| {
            let mut s = Vec::with_capacity(((d.i1 - d.i0 + 1) * (d.j1 - d.j0 + 1)) as usize);
            for j in d.j0..=d.j1 {
                for i in d.i0..=d.i1 {
                    s.push(!co.test(mc, CondLoc::Pe, i, j, v));
                }
            }
            s
        })
    }

    /// One engine and one group state for each of `threads` workers, each
    /// engine holding the
    /// program's code (found or compiled once for the run, not per row).
    /// Engines and group states of earlier runs are used again (engines
    /// only while the engine settings are the same).
    fn workers(
        &mut self,
        program: &Arc<ctm_jit::ir::Program>,
        threads: usize,
        offset: usize,
        settings: &RunSettings,
    ) -> Result<Vec<Worker>, PeError> {
        let made = settings
            .engine_factory
            .is_none()
            .then(|| (settings.engine, settings.jit, settings.code_cache.clone()));
        let same = match (&made, &self.spare.made_with) {
            (Some(a), Some(b)) => {
                a.0 == b.0
                    && a.1 == b.1
                    && match (&a.2, &b.2) {
                        (Some(x), Some(y)) => Arc::ptr_eq(x, y),
                        (x, y) => x.is_none() && y.is_none(),
                    }
            }
            _ => false,
        };
        if !same {
            self.spare.engines().clear();
        }
        self.spare.made_with = made;
        let mut workers = self.spare.worker_vec();
        for _ in 0..threads {
            let engine = match (self.spare.engines().pop(), &settings.engine_factory) {
                (Some(kept), _) => kept,
                (None, Some(make)) => make(),
                (None, None) => settings
                    .engine
                    .make_with(settings.jit, settings.code_cache.as_ref())
                    .map_err(|e| Self::fail(offset, e.0))?,
            };
            let lanes = self.spare.lanes.pop().unwrap_or_else(Lanes::new_boxed);
            let mut w = Worker::new(engine, lanes);
            w.logs = self.spare.logs.pop().unwrap_or_default();
            w.pixels = self.spare.pixels.pop().unwrap_or_default();
            workers.push(w);
        }
        for w in &mut workers {
            w.engine
                .prepare_shared(program)
                .map_err(|source| PeError::Run { offset, source })?;
        }
        Ok(workers)
    }

    /// The end of a run: the workers' engine statistics into `report`,
    /// their group states (and engines, when made from the settings) kept
    /// for the next run, the clocks counted.
    fn close(&mut self, report: &mut RunReport, mut workers: Vec<Worker>) {
        // In reverse, so that the next run's worker k (which runs on the
        // same thread) takes back what worker k had.
        for mut w in workers.drain(..).rev() {
            report.engine.merge(&w.engine.take_stats());
            self.spare.lanes.push(w.lanes);
            self.spare.logs.push(w.logs);
            self.spare.pixels.push(w.pixels);
            if self.spare.made_with.is_some() {
                self.spare.engines().push(w.engine);
            }
        }
        *self
            .spare
            .workers
            .get_mut()
            .unwrap_or_else(|p| p.into_inner()) = workers;
        report.clocks = report.pixel_instructions.div_ceil(PROCESSORS);
        if self.counters.counting {
            self.counters.total += report.clocks;
            self.counters.active += report.clocks;
        }
    }
}

/// What stops a run ([`Pe::stop`]): its own, or shared with the watchdog
/// of its timeout.
enum RunStop {
    Here(Stop),
    Watched(Arc<Stop>),
}

impl std::ops::Deref for RunStop {
    type Target = Stop;

    fn deref(&self) -> &Stop {
        match self {
            RunStop::Here(stop) => stop,
            RunStop::Watched(stop) => stop,
        }
    }
}

/// How many pairs the PE's test keeps from running (`skipped`: per pair of
/// the domain, row-major).
fn count_skipped(skipped: Option<&[bool]>) -> u64 {
    skipped.map_or(0, |s| s.iter().filter(|&&b| b).count() as u64)
}

/// The quad rows (pairs of pixel rows) a domain covers.
fn quad_rows(d: crate::runtime::Domain) -> std::ops::Range<u32> {
    if d.is_empty() {
        0..0
    } else {
        d.j0 / 2..d.j1 / 2 + 1
    }
}

/// `rows` in consecutive runs of `chunk` rows (the last may be shorter).
fn chunks(rows: std::ops::Range<u32>, chunk: usize) -> impl Iterator<Item = std::ops::Range<u32>> {
    let chunk = u32::try_from(chunk.max(1)).unwrap_or(u32::MAX);
    (rows.start..rows.end)
        .step_by(chunk as usize)
        .map(move |r| r..rows.end.min(r.saturating_add(chunk)))
}

/// The counters of the first `made` rows of an uncached run, whose writes
/// the workers made while later rows ran: their sums, added to `counts`,
/// and the rows to `report`'s handed over.
#[cold]
fn made_early(made: usize, workers: &mut [Worker], counts: &mut RowResult, report: &mut RunReport) {
    report.overlapped_rows += made as u64;
    for (sum, _) in workers.iter_mut().filter_map(|w| w.sum.take()) {
        counts.count(sum);
    }
}
