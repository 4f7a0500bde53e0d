//! The runtime shim: runs a program over a domain, one group of quads at a
//! time, executing clauses through an [`Engine`] and everything between them
//! itself — the flow-control stacks of `docs/isa.md` §6 (branch counters,
//! loop frames with aL, the address stack), early exit, kills, the runaway
//! budget — and hands finished pixels to a [`Sink`].
//!
//! Emulator decisions (docs/isa.md §1.2–§1.4, §6.8; ctm):
//! * quads are {(2x,2y),(2x+1,2y),(2x,2y+1),(2x+1,2y+1)}; lanes of a quad
//!   outside the domain are *helpers*: they execute (so MDH/MDV have
//!   neighbours) and take part in flow-control votes, but never write outputs,
//!   the conditional value or uncached memory;
//! * at start r0 = (i, j, v, 1.0) as f32, everything else 0 ([`init_r0`]);
//! * branch counters, loop frames and address-stack entries are limited to
//!   [`MAX_DEPTH`] each; overflow and underflow are errors naming pc, stack
//!   and pixel;
//! * [`RunOptions::budget`] bounds the instructions one group executes;
//! * a jump to the end of `.text` ends the program; past it is an error.

mod engine;
mod error;
mod flow;
mod group;
pub mod hazard;
mod io;
mod stop;
pub mod texture;

pub use engine::{
    Ctx, Engine, EngineStats, LoopEntry, LoopExit, StripLoopPlan, StripPlan, check_quads,
};
pub use error::{RunError, Stack};
pub use flow::{FlowView, LoopFrame};
use group::GroupIo;
pub use io::{Domain, FetchRequest, GroupOut, NoTextures, PixelOut, Sink, TexFault, TextureUnit};
pub use stop::{Cancel, LOOP_SLICE, Stop, StopReason, Watchdog};

use ctm_jit::host::DazGuard;
use ctm_jit::ir::Program;
use ctm_jit::state::{GROUP_LANES, GROUP_QUADS, Lanes, Mask, Uniforms};
use hazard::Hazards;

/// Maximum depth of each flow-control stack (full mode, docs/isa.md §6.8).
pub const MAX_DEPTH: usize = ctm_jit::state::STACK_DEPTH;

/// Instructions one group of quads may execute by default: 2^24, a few
/// seconds of an endless loop on the interpreter, far beyond the longest
/// loops real kernels run (a 255 × 255 nested loop of 250 instructions).
pub const DEFAULT_BUDGET: u64 = 1 << 24;

/// Knobs of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunOptions {
    /// Instructions one group may execute before the run is stopped as a
    /// runaway.
    pub budget: u64,
    /// Track the texture semaphore and report hazards.
    pub check_hazards: bool,
    /// Build one clause per instruction (the tracer observes the lanes
    /// between clauses); also keeps every register write.
    pub single_step: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            budget: DEFAULT_BUDGET,
            check_hazards: false,
            single_step: false,
        }
    }
}

/// The first lane set in `m` (or lane 0).
pub(crate) fn first_lane(m: Mask) -> usize {
    if m == 0 {
        0
    } else {
        m.trailing_zeros() as usize
    }
}

/// Sets r0 = (i, j, v, 1.0) in every present lane (docs/isa.md §1.2,
/// "Initial state").
pub fn init_r0(lanes: &mut Lanes, pixels: &[(u32, u32); GROUP_LANES], v: u32) {
    for (l, &(i, j)) in pixels.iter().enumerate().take(lanes.lane_count()) {
        lanes.temps[0][0][l] = (i as f32).to_bits();
        lanes.temps[0][1][l] = (j as f32).to_bits();
        lanes.temps[0][2][l] = v;
        lanes.temps[0][3][l] = 1.0f32.to_bits();
    }
}

/// The part of a run a call executes: the domain, the conditional value
/// `v` (f32 pattern), the quad rows (quad row r holds pixel rows 2r and
/// 2r + 1) and the pairs not to run (see [`Runner::run_rows`]).
#[derive(Clone)]
pub struct Rows<'s> {
    /// The domain.
    pub domain: Domain,
    /// The conditional value.
    pub v: u32,
    /// Quad rows.
    pub rows: std::ops::Range<u32>,
    /// Pairs that act as helpers instead of running.
    pub skip: Option<&'s (dyn Fn(u32, u32) -> bool + Sync)>,
}

/// A run: program, engine, constants, options ([`Runner::new`]).
pub struct Runner<'a, E: Engine> {
    /// The program.
    pub(crate) program: &'a Program,
    /// The clause executor.
    pub(crate) engine: E,
    /// Constant files.
    pub(crate) uniforms: &'a Uniforms,
    /// Options.
    pub(crate) options: RunOptions,
    /// Stops the whole run from outside (cancel, time or instruction
    /// limits); `None`: nothing but the program stops it.
    pub(crate) stop: Option<&'a Stop>,
}

impl<'a, E: Engine> Runner<'a, E> {
    /// A run of `program` on `engine` with the constant files `uniforms`
    /// and `options`, stopped by nothing but the program.
    pub fn new(
        program: &'a Program,
        engine: E,
        uniforms: &'a Uniforms,
        options: RunOptions,
    ) -> Self {
        Runner {
            program,
            engine,
            uniforms,
            options,
            stop: None,
        }
    }

    /// Also stopped from outside by `stop` (cancel, time or instruction
    /// limits).
    pub fn stop(mut self, stop: &'a Stop) -> Self {
        self.stop = Some(stop);
        self
    }

    /// The clause executor (its statistics, after a run).
    pub fn engine(&self) -> &E {
        &self.engine
    }
}

/// Counters of a finished run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Pixels of the domain that ended normally.
    pub pixels: u64,
    /// Pixels killed.
    pub killed: u64,
    /// Instructions executed, summed over groups (lock-step: each counts once
    /// per group).
    pub group_instructions: u64,
    /// Pixel-instructions: instructions × running lanes of the domain.
    pub pixel_instructions: u64,
    /// Hazards found (when checking).
    pub hazards: Vec<hazard::Hazard>,
}

impl<E: Engine> Runner<'_, E> {
    /// Runs the whole domain with conditional value `v` (f32 pattern).
    pub fn run(
        &mut self,
        domain: Domain,
        v: u32,
        tex: &mut dyn TextureUnit,
        sink: &mut dyn Sink,
    ) -> Result<RunStats, RunError> {
        let rows = if domain.is_empty() {
            0..0
        } else {
            domain.j0 / 2..domain.j1 / 2 + 1
        };
        self.run_rows(domain, v, rows, None, tex, sink)
    }

    /// Runs the quad rows `rows` of `domain` (quad row r holds pixel rows 2r
    /// and 2r + 1). Pairs for which `skip` says true are not executed: they
    /// act as helper lanes of their quad, and quads left with no pair to run
    /// are not run at all. `skip` may be called while compiled code's float
    /// mode (MXCSR.DAZ) is set: it must not depend on it.
    pub fn run_rows(
        &mut self,
        domain: Domain,
        v: u32,
        rows: std::ops::Range<u32>,
        skip: Option<&(dyn Fn(u32, u32) -> bool + Sync)>,
        tex: &mut dyn TextureUnit,
        sink: &mut dyn Sink,
    ) -> Result<RunStats, RunError> {
        let mut lanes = Lanes::new_boxed();
        let rows = Rows {
            domain,
            v,
            rows,
            skip,
        };
        self.run_rows_in(&mut lanes, rows, tex, sink)
    }

    /// [`Runner::run_rows`] on the caller's group state `lanes` (a worker
    /// keeps one for all its rows).
    pub fn run_rows_in(
        &mut self,
        lanes: &mut Lanes,
        rows: Rows<'_>,
        tex: &mut dyn TextureUnit,
        sink: &mut dyn Sink,
    ) -> Result<RunStats, RunError> {
        self.engine.prepare(self.program)?;
        let temps = self.program.temps_used();
        self.run_rows_prepared(lanes, temps, rows, tex, sink)
    }

    /// [`Runner::run_rows_in`] for an engine already prepared for the
    /// program, whose `temps_used` is `temps`: what a worker calls for
    /// each row after preparing once for the run.
    pub(crate) fn run_rows_prepared(
        &mut self,
        lanes: &mut Lanes,
        temps: usize,
        rows: Rows<'_>,
        tex: &mut dyn TextureUnit,
        sink: &mut dyn Sink,
    ) -> Result<RunStats, RunError> {
        let Rows {
            domain,
            v,
            rows,
            skip,
        } = rows;
        let mut stats = RunStats::default();
        if domain.is_empty() {
            return Ok(stats);
        }
        let mut hazards = self.options.check_hazards.then(Hazards::default);
        // The lanes of quad (qx, qy) that are pairs of the run (bit = lane).
        let live = |qx: u32, qy: u32| -> Mask {
            let (i, j) = (2 * qx, 2 * qy);
            if skip.is_none() && domain.contains(i, j) && domain.contains(i + 1, j + 1) {
                return 0xF;
            }
            (0..4).fold(0, |m, l| {
                let (i, j) = ctm_jit::quad::pixel_of_lane(qx, qy, l);
                let runs = domain.contains(i, j) && !skip.is_some_and(|s| s(i, j));
                m | Mask::from(runs) << l
            })
        };
        let (qx0, qx1) = (domain.i0 / 2, domain.i1 / 2);
        let rows = rows.start.max(domain.j0 / 2)..rows.end.min(domain.j1 / 2 + 1);
        // Groups take the next GROUP_QUADS quads that run, row after row:
        // (qx, qy, live lanes).
        let mut group = [(0u32, 0u32, 0 as Mask); GROUP_QUADS];
        let mut n = 0;
        // Compiled code reads denormals as zeros. The shim between clauses
        // is integer code, so the mode stays set for all groups of the
        // rows; delivery switches it off where it needs to.
        let _daz = self.engine.wants_daz().then(|| DazGuard::new(true));
        let quads = rows.flat_map(|qy| (qx0..=qx1).map(move |qx| (qx, qy)));
        let mut flow = flow::Flow::default();
        for quad in quads.map(Some).chain(std::iter::once(None)) {
            if let Some((qx, qy)) = quad {
                let runs = live(qx, qy);
                if runs == 0 {
                    continue;
                }
                group[n] = (qx, qy, runs);
                n += 1;
            }
            if n == GROUP_QUADS || (quad.is_none() && n > 0) {
                let io = GroupIo {
                    tex: &mut *tex,
                    sink: &mut *sink,
                    hazards: hazards.as_mut(),
                    stats: &mut stats,
                };
                self.run_group(&group[..n], v, temps, (lanes, &mut flow), io)?;
                n = 0;
            }
        }
        if let Some(h) = hazards {
            stats.hazards = h.into_reports();
        }
        Ok(stats)
    }
}
