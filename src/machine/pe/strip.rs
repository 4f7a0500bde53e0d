//! Rows through a compiled strip (`docs/design.md`, "Straight programs in
//! one compiled strip"): where the engine offers one for the program, the
//! whole quads of a quad row that lie inside the domain run in one call
//! that writes their float32_4 results straight to memory; the quads at the
//! row's ends, partly outside the domain, go through the shim as usual —
//! the quads before the strip first, those after it last, so that an
//! uncached program's writes (which a strip appends to the row's) keep
//! the row's order.
//!
//! The results are those of the groups the shim would have run — every
//! lane of such a program computes the same thing whatever group it is in
//! — and so are the counters: pixels and pixel-instructions per pixel, and
//! group instructions per group of [`GROUP_QUADS`] quads of the row, as
//! the shim groups them.

use super::deliver::Targets;
use super::rows::{RowResult, RowRun, Worker};
use crate::mc::{Format, RunView};
use crate::runtime::TextureUnit;
use crate::runtime::{Domain, RunError, StripLoopPlan, StripPlan};
use ctm_jit::state::{GROUP_QUADS, LANE_STAYED, Strip};

/// Sets DAZ for `w`'s engine before the first strip row of its run that
/// needs it: it stays set from one strip to the next, as only integer
/// bookkeeping runs between them (the shim sets the environment it needs
/// itself and puts back what it found, and the worker's rows restore the
/// default when they end: `run_rows`). Setting and restoring it around
/// each strip cost `tiny` 4% of its re-runs at 512², reading MXCSR before
/// each 7% of a run at 64².
fn daz_for(w: &mut Worker, kept: &mut RowStrip) {
    if !kept.daz_set && w.engine.wants_daz() {
        ctm_jit::host::set_daz();
        kept.daz_set = true;
    }
}

/// Whether a run that delivers directly may send rows through compiled
/// strips: every output channel enabled, the CO passing every pixel (no
/// test at the DPP), no skipped pairs (`skipping`), no hazard checking
/// (`checked`), no instruction limit (`limited`).
pub(super) fn strips_allowed(
    t: &Targets<'_>,
    skipping: bool,
    checked: bool,
    limited: bool,
) -> bool {
    t.co_passes_all() && t.out_mask & 0xF == 0xF && !skipping && !checked && !limited
}

/// How a strip's run counts the instructions the shim would have
/// executed: `counted` per pass (of all but a loop), and the loop's with
/// its count.
struct Counts<'p> {
    counted: u64,
    looped: Option<(&'p StripLoopPlan, u32)>,
}

/// What a worker found at its first strip row of a run's rows (a
/// [`RowRun`]), kept for its other rows on its own thread's stack: asking
/// the engine for its plan and checking it against the run's targets,
/// inputs and budget cost about as much per row as a one-instruction strip
/// of 64 pixels runs.
#[derive(Default)]
pub(super) enum RowStrips {
    /// Not asked yet (each run's rows start so).
    #[default]
    Unasked,
    /// No row of this run runs in a strip.
    Off,
    /// The engine's settled plan ([`StripPlan::settled`]) and what it
    /// makes of every row.
    On(RowStrip),
}

/// A strip as every row of a run runs it ([`RowStrips::On`]).
pub(super) struct RowStrip {
    plan: StripPlan,
    /// Its first column, whole quads and targets of one channel, as in
    /// [`Strip`].
    i0: u32,
    quads: u32,
    narrow: u32,
    /// The loop's count, for a program that is one loop.
    count: u32,
    /// Whether an earlier row set DAZ for the engine (it stays set until
    /// the worker's rows end: [`RowRun::strip_row_with`]).
    daz_set: bool,
    /// Rows a worker takes at once ([`RowStrips::at_once`]).
    at_once: usize,
}

/// The most rows a worker runs through a strip in one call to its engine
/// ([`RowRun::strip_rows`]).
pub(super) const ROWS_AT_ONCE: usize = 8;

impl RowStrips {
    /// How many rows the worker may take at once: several where each is
    /// the strip alone — no ends through the shim, no uncached writes, not
    /// a loop, no progress reported per row —, else one.
    pub(super) fn at_once(&self) -> usize {
        match self {
            RowStrips::On(kept) => kept.at_once,
            _ => 1,
        }
    }
}

impl RowRun<'_> {
    /// Runs quad row `row` with the engine's compiled strip; `None` where
    /// the run, the row or the program's outputs do not allow one.
    pub(super) fn strip_row(
        &self,
        w: &mut Worker,
        row: u32,
        strips: &mut RowStrips,
        into: &mut RowResult,
    ) -> Option<Result<(), RunError>> {
        let d = self.domain;
        let j = 2 * row;
        // Whole quads only: both pixel rows inside (the columns: `prepare`).
        if !self.strips || j < d.j0 || j + 1 > d.j1 {
            return None;
        }
        match strips {
            RowStrips::Off => None,
            RowStrips::On(kept) => self.strip_row_with(w, row, kept, into),
            RowStrips::Unasked => match self.prepare(w) {
                // No plan now is no plan for any row of the run: the
                // engine tried every form it has for these quads.
                None => {
                    *strips = RowStrips::Off;
                    None
                }
                // A plan still being timed is asked for again at the next
                // row.
                Some(mut fresh) if !fresh.plan.settled => {
                    self.strip_row_with(w, row, &mut fresh, into)
                }
                // Kept for the run's other rows.
                Some(fresh) => {
                    *strips = RowStrips::On(fresh);
                    let RowStrips::On(kept) = strips else {
                        return None;
                    };
                    self.strip_row_with(w, row, kept, into)
                }
            },
        }
    }

    /// What every row of this run makes of the engine's strip; `None`
    /// where the engine offers none, or the run's budget, delivery,
    /// targets or inputs rule it out.
    fn prepare(&self, w: &mut Worker) -> Option<RowStrip> {
        let d = self.domain;
        let (qa, qb) = (d.i0.div_ceil(2), d.i1.div_ceil(2));
        if qa >= qb {
            return None;
        }
        let plan = w.engine.strip(self.program, qb - qa)?;
        // A strip writes its pixels straight to memory: only where the run
        // delivers directly (an uncached run's strips write none).
        if plan.counted > self.options.budget || (plan.targets != 0 && !self.direct) {
            return None;
        }
        // Whole batches; the quads after the last one go through the shim.
        let quads = (qb - qa) / plan.batch.max(1) * plan.batch.max(1);
        if quads == 0 {
            return None;
        }
        // A loop's strip counts per group as the shim groups the row: only
        // where it runs the whole row, and where the loop has iterations.
        let whole_row = d.i0.is_multiple_of(2) && !d.i1.is_multiple_of(2) && quads == qb - qa;
        let mut count = 0;
        if let Some(lp) = &plan.looped {
            let ints = &self.uniforms.ints;
            count = u32::from(ints[usize::from(lp.int_addr) % ints.len()].count);
            // No group may run past the budget (the shim reports that).
            let most = ctm_jit::lanewise::left_at(&lp.lanewise.lens, count, LANE_STAYED).2;
            if !whole_row || count == 0 || plan.counted + most > self.options.budget {
                return None;
            }
        }
        // The strip reads its inputs through their descriptors, unchecked.
        if !self
            .direct_inputs
            .table()
            .covers(plan.inputs, &self.program.forms)
        {
            return None;
        }
        let mut narrow = 0;
        for t in 0..4 {
            if plan.targets & (1 << t) == 0 {
                continue;
            }
            match self.targets.outputs[t].as_ref()?.fmt.format {
                Format::Float32_4 => {}
                Format::Float32_1 => narrow |= 1 << t,
                _ => return None,
            }
            // A program compiled for other formats: the shim.
            if !self.program.narrow_agrees(narrow, 1 << t) {
                return None;
            }
        }
        let alone = whole_row && plan.looped.is_none() && plan.writes == 0;
        Some(RowStrip {
            plan,
            i0: 2 * qa,
            quads,
            narrow,
            count,
            daz_set: false,
            at_once: if alone && self.rows_done.is_none() {
                ROWS_AT_ONCE
            } else {
                1
            },
        })
    }

    /// Runs quad row `row` through the strip `kept` ([`RowRun::prepare`]).
    fn strip_row_with(
        &self,
        w: &mut Worker,
        row: u32,
        kept: &mut RowStrip,
        into: &mut RowResult,
    ) -> Option<Result<(), RunError>> {
        daz_for(w, kept);
        let mut strip = self.strip_of(kept, row)?;
        let plan = &kept.plan;
        let looped = plan.looped.as_ref().map(|lp| {
            w.events.clear();
            w.events.resize(4 * strip.quads as usize, -1);
            strip.events = w.events.as_mut_ptr();
            (lp, kept.count)
        });
        let counts = Counts {
            counted: plan.counted,
            looped,
        };
        Some(self.run_strip(w, row, &strip, counts, plan.writes, into))
    }

    /// Runs quad rows `rows` (at most [`ROWS_AT_ONCE`], each the strip
    /// alone: [`RowStrips::at_once`]) through the strip `kept` in one call
    /// to the engine; `None` where a row is not wholly inside the domain
    /// or its elements are not at hand (then each goes its own way).
    /// `Err`: the row that failed, and why.
    pub(super) fn strip_rows(
        &self,
        w: &mut Worker,
        rows: std::ops::Range<u32>,
        kept: &mut RowStrip,
        into: &mut RowResult,
    ) -> Option<Result<(), (u32, RunError)>> {
        let (d, n) = (self.domain, rows.len());
        if !self.strips || n > ROWS_AT_ONCE || 2 * rows.start < d.j0 || 2 * rows.end > d.j1 + 1 {
            return None;
        }
        // Each row's elements lie two surface rows below the last's, where
        // every target's rows were found in place (else row by row); the
        // first and the last rows' are found as one row's are, so the rows
        // between lie inside the surface too.
        let targets = kept.plan.targets;
        if !(0..4).all(|t| targets & (1 << t) == 0 || self.rows_at[t].is_some()) {
            return None;
        }
        let first = self.strip_of(kept, rows.start)?;
        self.strip_of(kept, rows.end - 1)?;
        let mut strips = [first; ROWS_AT_ONCE];
        for (k, row) in rows.clone().enumerate().skip(1) {
            let s = &mut strips[k];
            s.j = first.j + 2 * k as u32;
            for (t, at) in self.rows_at.iter().enumerate() {
                let Some(r) = at.filter(|_| targets & (1 << t) != 0) else {
                    continue;
                };
                for p in 0..2 {
                    s.rows[t][p] = first.rows[t][p].wrapping_add(2 * k * r.row_bytes());
                }
            }
            debug_assert_eq!(s.rows, self.strip_of(kept, row)?.rows);
        }
        if let Err(e) = self.unstopped((kept.i0, 2 * rows.start)) {
            return Some(Err((rows.start, e)));
        }
        daz_for(w, kept);
        // Rows taken at once make no uncached writes: no log.
        let mut view =
            RunView::new(self.mc, self.inputs, self.out0).with_direct(self.direct_inputs);
        let done = w
            .engine
            .run_strips(self.program, self.uniforms, &mut view, &strips[..n]);
        let ran = done.as_ref().map_or_else(|(k, _)| *k, |()| n);
        let pixels = 4 * u64::from(kept.quads);
        into.stats.pixels += pixels * ran as u64;
        self.count_straight(into, pixels, kept.plan.counted, ran as u64);
        Some(done.map_err(|(k, e)| (rows.start + k as u32, e)))
    }

    /// The strip of quad row `row` as `kept` runs it (without a loop's
    /// events); `None` where a target's elements are not at hand.
    fn strip_of(&self, kept: &RowStrip, row: u32) -> Option<Strip> {
        let plan = &kept.plan;
        let mut strip = Strip {
            rows: [[std::ptr::null_mut(); 2]; 4],
            quads: kept.quads,
            i0: kept.i0,
            j: 2 * row,
            v: self.v,
            events: std::ptr::null_mut(),
            narrow: kept.narrow,
        };
        for (t, rows) in strip.rows.iter_mut().enumerate() {
            if plan.targets & (1 << t) == 0 {
                continue;
            }
            let s = self.targets.outputs[t].as_ref()?;
            for (p, at) in rows.iter_mut().enumerate() {
                let (x, y, n) = (strip.i0, strip.j + p as u32, 2 * strip.quads as usize);
                // The row's elements, found in place where the run found
                // the surface whole in one arena (the same bytes
                // `span_shared` gives; the same guarantees hold for them).
                *at = match &self.rows_at[t] {
                    Some(r) => r.row(x, y, n)?,
                    // SAFETY: direct delivery (`self.strips`): the rows of
                    // a run write disjoint elements of output surfaces that
                    // overlap nothing else the run reads or writes, so
                    // nothing touches these elements while the strip
                    // writes them; only the pointer outlives the slice,
                    // until the call returns.
                    None => unsafe { self.mc.span_shared(s, x, y, n) }?.as_mut_ptr(),
                };
            }
        }
        Some(strip)
    }

    /// The run's stop, if it was pulled, as the error of a strip starting
    /// at `pixel`.
    fn unstopped(&self, pixel: (u32, u32)) -> Result<(), RunError> {
        match self.stop.stopped() {
            Some(why) => Err(RunError::Stopped { pc: 0, why, pixel }),
            None => Ok(()),
        }
    }

    /// Counts `rows` rows of `pixels` pixels each that ran `counted`
    /// instructions straight (no loop), as the shim groups a row's quads.
    fn count_straight(&self, into: &mut RowResult, pixels: u64, counted: u64, rows: u64) {
        let d = self.domain;
        let quads = u64::from(d.i1 / 2 - d.i0 / 2 + 1);
        into.stats.pixel_instructions += rows * pixels * counted;
        into.stats.group_instructions += rows * quads.div_ceil(GROUP_QUADS as u64) * counted;
    }

    /// Runs quad row `row`: the quads before `strip` through the shim,
    /// `strip` (the row's whole quads inside the domain), the quads after
    /// it through the shim — in that order, the order of the row's
    /// uncached writes; `counts`: how to count what the program executed;
    /// `writes`: its uncached writes per pixel (a row whose view keeps no
    /// log of them, or one of another output format than the program was
    /// compiled for, goes through the shim whole).
    fn run_strip(
        &self,
        w: &mut Worker,
        row: u32,
        strip: &Strip,
        counts: Counts<'_>,
        writes: u32,
        into: &mut RowResult,
    ) -> Result<(), RunError> {
        let d = self.domain;
        self.unstopped((strip.i0, strip.j))?;
        let mut view = RunView::new(self.mc, self.inputs, self.out0)
            .with_direct(self.direct_inputs)
            .with_log(self.log(w));
        // Its inputs' descriptors were found when the run's strip was
        // (`prepare`); its uncached writes need a log in the format they
        // were compiled for, else the shim.
        let log = (writes > 0).then(|| view.uncached_log(0));
        if log.is_some_and(|l| l.at.is_null() || !l.agrees(self.program.uncached_unorm)) {
            super::room::keep(&mut w.logs, std::mem::take(&mut view.writes));
            return self.row_part(w, row, d, into);
        }
        let pixels = 4 * u64::from(strip.quads);
        let end = strip.i0 + 2 * strip.quads;
        if d.i0 < strip.i0 {
            self.row_end(w, row, (d.i0, strip.i0), into)?;
        }
        w.engine
            .run_strip(self.program, self.uniforms, &mut view, strip)?;
        // The row's writes so far are the left end's (mostly none): the
        // strip's log becomes the row's rather than being copied.
        super::rows::append(&mut into.writes, &mut view.writes);
        super::room::keep(&mut w.logs, std::mem::take(&mut view.writes));
        into.stats.pixels += pixels;
        if end < d.i1 + 1 {
            self.row_end(w, row, (end, d.i1 + 1), into)?;
        }
        // The shim's groups: the row's quads, GROUP_QUADS at a time.
        match counts.looped {
            None => self.count_straight(into, pixels, counts.counted, 1),
            Some((lp, count)) => {
                // The strip is the whole row (see `strip_row`): each group's
                // lanes ran its loop as long as the last of them stayed.
                for group in w.events.chunks(4 * GROUP_QUADS) {
                    let last = group.iter().copied().max().unwrap_or(0);
                    let (_, _, looped) = ctm_jit::lanewise::left_at(&lp.lanewise.lens, count, last);
                    let n = counts.counted + looped;
                    into.stats.group_instructions += n;
                    into.stats.pixel_instructions += n * group.len() as u64;
                }
            }
        }
        Ok(())
    }

    /// Columns `i0..i1` (not empty) of quad row `row`, a strip's end
    /// partly outside the domain, through the shim, added to `result` —
    /// all but its group instructions, which the caller counts as the shim
    /// groups the whole row. Most strips have no ends: the caller tests
    /// for one, and this is not inlined into its path.
    #[inline(never)]
    fn row_end(
        &self,
        w: &mut Worker,
        row: u32,
        (i0, i1): (u32, u32),
        result: &mut RowResult,
    ) -> Result<(), RunError> {
        let part = Domain {
            i0,
            i1: i1 - 1,
            ..self.domain
        };
        let mut r = RowResult::default();
        self.row_part(w, row, part, &mut r)?;
        super::rows::append(&mut result.pixels, &mut r.pixels);
        super::rows::append(&mut result.writes, &mut r.writes);
        // The end's vectors, where their contents were copied after the
        // row's.
        super::room::keep(&mut w.pixels, std::mem::take(&mut r.pixels));
        super::room::keep(&mut w.logs, std::mem::take(&mut r.writes));
        result.discarded += r.discarded;
        result.stats.pixels += r.stats.pixels;
        result.stats.killed += r.stats.killed;
        result.stats.pixel_instructions += r.stats.pixel_instructions;
        Ok(())
    }
}
