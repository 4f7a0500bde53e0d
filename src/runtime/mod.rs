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
pub mod hazard;
mod io;
mod stop;
pub mod texture;

pub use engine::{Ctx, Engine, EngineStats, LoopEntry, LoopExit, check_quads};
pub use error::{RunError, Stack};
use flow::{Flow, exec_fc};
pub use flow::{FlowView, LoopFrame};
pub use io::{Domain, FetchRequest, GroupOut, NoTextures, PixelOut, Sink, TexFault, TextureUnit};
pub use stop::{Cancel, LOOP_SLICE, Stop, StopReason, Watchdog};

use ctm_jit::host::DazGuard;
use ctm_jit::ir::{Program, Term};
use ctm_jit::state::{GROUP_LANES, GROUP_QUADS, Lanes, LoopState, Mask, Uniforms};
use hazard::Hazards;

/// Maximum depth of each flow-control stack (full mode, docs/isa.md §6.8).
pub const MAX_DEPTH: usize = 32;

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

/// A run: program, engine, constants, options.
pub struct Runner<'a, E: Engine> {
    /// The program.
    pub program: &'a Program,
    /// The clause executor.
    pub engine: E,
    /// Constant files.
    pub uniforms: &'a Uniforms,
    /// Options.
    pub options: RunOptions,
    /// Stops the whole run from outside (cancel, time or instruction
    /// limits); `None`: nothing but the program stops it.
    pub stop: Option<&'a Stop>,
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
        self.run_rows_in(&mut lanes, domain, v, rows, skip, tex, sink)
    }

    /// [`Runner::run_rows`] on the caller's group state `lanes` (a worker
    /// keeps one for all its rows).
    #[expect(clippy::too_many_arguments, reason = "run_rows plus the scratch state")]
    pub fn run_rows_in(
        &mut self,
        lanes: &mut Lanes,
        domain: Domain,
        v: u32,
        rows: std::ops::Range<u32>,
        skip: Option<&(dyn Fn(u32, u32) -> bool + Sync)>,
        tex: &mut dyn TextureUnit,
        sink: &mut dyn Sink,
    ) -> Result<RunStats, RunError> {
        self.engine.prepare(self.program)?;
        let temps = self.program.temps_used();
        self.run_rows_prepared(lanes, temps, domain, v, rows, skip, tex, sink)
    }

    /// [`Runner::run_rows_in`] for an engine already prepared for the
    /// program, whose `temps_used` is `temps`: what a worker calls for
    /// each row after preparing once for the run.
    #[expect(
        clippy::too_many_arguments,
        reason = "run_rows_in plus the prepared state"
    )]
    pub(crate) fn run_rows_prepared(
        &mut self,
        lanes: &mut Lanes,
        temps: usize,
        domain: Domain,
        v: u32,
        rows: std::ops::Range<u32>,
        skip: Option<&(dyn Fn(u32, u32) -> bool + Sync)>,
        tex: &mut dyn TextureUnit,
        sink: &mut dyn Sink,
    ) -> Result<RunStats, RunError> {
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
        // rows; delivery switches it off where it needs to (`run_group`).
        let _daz = self.engine.wants_daz().then(|| DazGuard::new(true));
        let quads = rows.flat_map(|qy| (qx0..=qx1).map(move |qx| (qx, qy)));
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
                self.run_group(
                    &group[..n],
                    v,
                    lanes,
                    tex,
                    hazards.as_mut(),
                    sink,
                    &mut stats,
                    temps,
                )?;
                n = 0;
            }
        }
        if let Some(h) = hazards {
            stats.hazards = h.into_reports();
        }
        Ok(stats)
    }

    /// Runs the loop region `entry` natively if the group's innermost frame
    /// is its loop (and the loop has iterations); `None` if not.
    #[expect(clippy::too_many_arguments, reason = "the group's flow state")]
    fn native_loop(
        &mut self,
        entry: LoopEntry,
        lanes: &mut Lanes,
        flow: &mut Flow,
        executed: &mut u64,
        stats: &mut RunStats,
        tex: &mut dyn TextureUnit,
        pixels: &[(u32, u32); GROUP_LANES],
        helper: Mask,
    ) -> Result<Option<LoopExit>, RunError> {
        let k = self.uniforms.ints[usize::from(entry.int_addr) % self.uniforms.ints.len()];
        let Some(top) = flow.loops.last_mut() else {
            return Ok(None);
        };
        if top.is_loop != entry.is_loop || k.count == 0 {
            return Ok(None);
        }
        let mut state = LoopState {
            count: top.count,
            entry: top.entry,
            broken: top.broken,
            continued: top.continued,
            al: lanes.al,
            step: if entry.is_loop { i32::from(k.step) } else { 0 },
            helper,
            pad: 0,
            executed: *executed,
            // A slice at a time, so that the shim checks `stop` often.
            budget: self
                .options
                .budget
                .min((*executed).saturating_add(LOOP_SLICE)),
            pixel_instructions: stats.pixel_instructions,
            events: [-1; GROUP_LANES],
        };
        let mut ctx = Ctx {
            uniforms: self.uniforms,
            tex,
            hazards: None,
            pixels,
        };
        let exit = self
            .engine
            .run_loop(self.program, entry, lanes, &mut ctx, &mut state)?;
        (top.count, top.broken, top.continued) = (state.count, state.broken, state.continued);
        if entry.is_loop
            && let Some(al) = flow.al.last_mut()
        {
            *al = state.al;
        }
        *executed = state.executed;
        stats.pixel_instructions = state.pixel_instructions;
        Ok(Some(exit))
    }

    #[expect(clippy::too_many_arguments, reason = "one group's whole context")]
    fn run_group(
        &mut self,
        group: &[(u32, u32, Mask)],
        v: u32,
        lanes: &mut Lanes,
        tex: &mut dyn TextureUnit,
        mut hazards: Option<&mut Hazards>,
        sink: &mut dyn Sink,
        stats: &mut RunStats,
        temps: usize,
    ) -> Result<(), RunError> {
        let program = self.program;
        let mut pixels = [(0u32, 0u32); GROUP_LANES];
        let mut helper: Mask = 0;
        for (q, &(qx, qy, runs)) in group.iter().enumerate() {
            for l in 0..4 {
                pixels[q * 4 + l] = ctm_jit::quad::pixel_of_lane(qx, qy, l);
            }
            helper |= (!runs & 0xF) << (q * 4);
        }
        lanes.reset(group.len() as u32, temps);
        let present = ctm_jit::state::lanes_mask(group.len() * 4);
        lanes.running = present;
        lanes.active = present;
        lanes.helper = helper;
        init_r0(lanes, &pixels, v);
        if let Some(h) = hazards.as_deref_mut() {
            h.start_group();
        }
        let mut flow = Flow {
            bc: [0; GROUP_LANES],
            loops: Vec::new(),
            al: Vec::new(),
            ret: Vec::new(),
        };
        let mut finished: Mask = 0;
        let mut pc: u16 = 0;
        let mut executed: u64 = 0;
        let budget = self.options.budget;
        let pixel_of = |m: Mask| pixels[first_lane(m)];
        // A clause whose body a loop region already ran: only its
        // terminator is left.
        let mut ran: Option<u32> = None;
        // Off right after a loop region stopped before a clause (the budget
        // runs out there): the shim runs that clause itself.
        let mut enter_loops = true;
        while lanes.running != 0 {
            if ran.is_none() && pc >= program.len {
                finished |= lanes.running;
                lanes.running = 0;
                break;
            }
            let ci = match ran.take() {
                Some(ci) => ci,
                None => {
                    let Some(ci) = program.clause_at(pc) else {
                        return Err(RunError::Undefined {
                            pc,
                            reason:
                                "no clause starts here (a return address that is not after a CALL?)"
                                    .into(),
                            pixel: pixel_of(lanes.running),
                        });
                    };
                    lanes.al = flow.al.last().copied().unwrap_or(0);
                    if std::mem::replace(&mut enter_loops, true)
                        && hazards.is_none()
                        && let Some(entry) = self.engine.loop_at(pc)
                        && let Some(exit) = self.native_loop(
                            entry,
                            lanes,
                            &mut flow,
                            &mut executed,
                            stats,
                            tex,
                            &pixels,
                            helper,
                        )?
                    {
                        match exit {
                            LoopExit::Before(ci) => {
                                pc = program.clauses[ci as usize].start;
                                enter_loops = false;
                            }
                            LoopExit::AtTerm(ci) => ran = Some(ci),
                        }
                        continue;
                    }
                    let clause = &program.clauses[ci as usize];
                    let n =
                        u64::from(clause.len) + u64::from(matches!(clause.term, Term::Fc { .. }));
                    executed += n;
                    stats.pixel_instructions +=
                        n * u64::from((lanes.running & !helper).count_ones());
                    if executed > budget {
                        return Err(RunError::Runaway {
                            pc,
                            executed,
                            budget,
                            pixel: pixel_of(lanes.active | lanes.running),
                        });
                    }
                    if let Some(why) = self.stop.and_then(|s| s.check(executed)) {
                        return Err(RunError::Stopped {
                            pc,
                            why,
                            pixel: pixel_of(lanes.active | lanes.running),
                        });
                    }
                    let mut ctx = Ctx {
                        uniforms: self.uniforms,
                        tex: &mut *tex,
                        hazards: hazards.as_deref_mut(),
                        pixels: &pixels,
                    };
                    self.engine.run_clause(program, ci, lanes, &mut ctx)?;
                    ci
                }
            };
            let clause = &program.clauses[ci as usize];
            match &clause.term {
                Term::Next(t) => pc = *t,
                Term::End => {
                    if let Some(h) = hazards.as_deref_mut() {
                        h.finish(clause.start + clause.len - 1, lanes.running, &pixels);
                    }
                    finished |= lanes.running;
                    lanes.running = 0;
                }
                Term::Last { pc: at } => {
                    let done = lanes.running & lanes.active;
                    if let Some(h) = hazards.as_deref_mut() {
                        h.finish(*at, done, &pixels);
                    }
                    finished |= done;
                    lanes.running &= !done;
                    lanes.active &= !done;
                    pc = at + 1;
                }
                Term::Undefined { pc: at, reason } => {
                    return Err(RunError::Undefined {
                        pc: *at,
                        reason: reason.clone(),
                        pixel: pixel_of(lanes.active | lanes.running),
                    });
                }
                Term::Fc { pc: at, fc } => {
                    if fc.wait
                        && let Some(h) = hazards.as_deref_mut()
                    {
                        h.wait(*at);
                    }
                    pc = exec_fc(
                        fc,
                        *at,
                        lanes,
                        &mut flow,
                        self.uniforms,
                        program.len,
                        &pixels,
                    )?;
                    if self.engine.observes_flow() {
                        self.engine.observe_flow(*at, lanes, &flow.view());
                    }
                }
            }
        }
        stats.group_instructions += executed;
        if let Some(stop) = self.stop {
            stop.spend(executed);
        }
        let present = ctm_jit::state::lanes_mask(lanes.lane_count());
        let domain_lanes = present & !helper;
        let killed = lanes.killed & domain_lanes;
        let done = finished & domain_lanes & !killed;
        stats.killed += u64::from(killed.count_ones());
        stats.pixels += u64::from(done.count_ones());
        if done != 0 {
            // Delivery may convert floats: in the default mode unless the
            // sink says it copies bits only.
            let daz_on = self.engine.wants_daz();
            let _default = (daz_on && !sink.bits_only()).then(|| DazGuard::new(false));
            sink.group(&GroupOut {
                lanes,
                pixels: &pixels,
                done,
            });
        }
        Ok(())
    }
}
