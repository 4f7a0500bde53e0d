//! One group of quads from start to delivery (the shim's part of the
//! parent module's rules): its lanes set up, its clauses run through the
//! engine with the flow-control instructions between them, loop regions
//! handed to the engine where it runs them natively, and its finished
//! pixels given to the sink.

use super::flow::{Flow, exec_fc};
use super::hazard::Hazards;
use super::{
    Ctx, Engine, LOOP_SLICE, LoopEntry, LoopExit, RunError, RunStats, Runner, Sink, TextureUnit,
    first_lane, init_r0,
};
use crate::runtime::GroupOut;
use ctm_jit::host::DazGuard;
use ctm_jit::ir::Term;
use ctm_jit::state::{GROUP_LANES, Lanes, LoopState, Mask};

/// Where a group's work goes: the units it talks to and the run's counters.
pub(super) struct GroupIo<'a> {
    pub tex: &'a mut dyn TextureUnit,
    pub sink: &'a mut dyn Sink,
    pub hazards: Option<&'a mut Hazards>,
    pub stats: &'a mut RunStats,
}

/// The state of one group while it runs.
struct Group<'l> {
    lanes: &'l mut Lanes,
    flow: &'l mut Flow,
    /// Each lane's pixel.
    pixels: [(u32, u32); GROUP_LANES],
    /// Lanes outside the domain (or skipped): they run but deliver nothing.
    helper: Mask,
    /// Lanes that ended normally.
    finished: Mask,
    /// Instructions executed (lock-step: once per group).
    executed: u64,
}

impl Group<'_> {
    /// The pixel of the first lane of `m`, for error reports.
    fn pixel_of(&self, m: Mask) -> (u32, u32) {
        self.pixels[first_lane(m)]
    }
}

/// Where the group goes after a clause (or loop region) ran.
enum Next {
    /// Run the clause at this pc (the next step looks for loop regions).
    At(u16),
    /// Run the clause at this pc in the shim, not as a loop region (a
    /// region just stopped before it).
    Shim(u16),
    /// The clause with this index ran already (a loop region ran its body):
    /// execute its terminator.
    Term(u32),
}

impl<E: Engine> Runner<'_, E> {
    /// Runs one group: the quads `(qx, qy, lanes that run)` of `group`,
    /// with conditional value `v`; the program uses `temps` registers.
    /// `lanes` and `flow` are the row's, restarted here.
    pub(super) fn run_group(
        &mut self,
        group: &[(u32, u32, Mask)],
        v: u32,
        temps: usize,
        (lanes, flow): (&mut Lanes, &mut Flow),
        io: GroupIo<'_>,
    ) -> Result<(), RunError> {
        let GroupIo {
            tex,
            sink,
            mut hazards,
            stats,
        } = io;
        let mut g = start_group(group, v, temps, lanes, flow);
        if let Some(h) = hazards.as_deref_mut() {
            h.start_group();
        }
        let mut next = Next::At(0);
        // A clause that ran has its terminator executed even where it
        // stopped every lane, as the step after any clause does (one that
        // a region ran included: the terminator may be an error).
        while g.lanes.running != 0 || matches!(next, Next::Term(_)) {
            let ci = match next {
                Next::Term(ci) => ci,
                Next::At(pc) | Next::Shim(pc) if pc >= self.program.len => {
                    g.finished |= g.lanes.running;
                    g.lanes.running = 0;
                    break;
                }
                Next::At(pc) | Next::Shim(pc) => {
                    let loops = matches!(next, Next::At(_)) && hazards.is_none();
                    match self.clause_at(&mut g, pc, loops, stats, tex, hazards.as_deref_mut())? {
                        Ok(ci) => ci,
                        Err(go_on) => {
                            next = go_on;
                            continue;
                        }
                    }
                }
            };
            next = self.terminate(&mut g, ci, hazards.as_deref_mut())?;
        }
        stats.group_instructions += g.executed;
        if let Some(stop) = self.stop {
            stop.spend(g.executed);
        }
        self.deliver(&g, stats, sink);
        Ok(())
    }

    /// Runs what starts at `pc`: its loop region natively where the engine
    /// has one and `loops` allows (`Err`: where to go on), else the clause
    /// (`Ok`: its index, whose terminator is next).
    #[inline]
    fn clause_at(
        &mut self,
        g: &mut Group<'_>,
        pc: u16,
        loops: bool,
        stats: &mut RunStats,
        tex: &mut dyn TextureUnit,
        hazards: Option<&mut Hazards>,
    ) -> Result<Result<u32, Next>, RunError> {
        let program = self.program;
        let Some(ci) = program.clause_at(pc) else {
            return Err(RunError::Undefined {
                pc,
                reason: "no clause starts here (a return address that is not after a CALL?)".into(),
                pixel: g.pixel_of(g.lanes.running),
            });
        };
        g.lanes.al = g.flow.al.last().copied().unwrap_or(0);
        if loops
            && let Some(entry) = self.engine.loop_at(pc)
            && let Some(exit) = self.native_loop(entry, g, stats, tex)?
        {
            return Ok(Err(match exit {
                LoopExit::Before(ci) => Next::Shim(program.clauses[ci as usize].start),
                LoopExit::AtTerm(ci) => Next::Term(ci),
            }));
        }
        let clause = &program.clauses[ci as usize];
        let n = u64::from(clause.counted());
        g.executed += n;
        stats.pixel_instructions += n * u64::from((g.lanes.running & !g.helper).count_ones());
        let budget = self.options.budget;
        if g.executed > budget {
            return Err(RunError::Runaway {
                pc,
                executed: g.executed,
                budget,
                pixel: g.pixel_of(g.lanes.active | g.lanes.running),
            });
        }
        if let Some(why) = self.stop.and_then(|s| s.check(g.executed)) {
            return Err(RunError::Stopped {
                pc,
                why,
                pixel: g.pixel_of(g.lanes.active | g.lanes.running),
            });
        }
        let mut ctx = Ctx {
            uniforms: self.uniforms,
            tex,
            hazards,
            pixels: &g.pixels,
        };
        self.engine.run_clause(program, ci, g.lanes, &mut ctx)?;
        Ok(Ok(ci))
    }

    /// Executes the terminator of clause `ci`: where the group goes next.
    #[inline]
    fn terminate(
        &mut self,
        g: &mut Group<'_>,
        ci: u32,
        hazards: Option<&mut Hazards>,
    ) -> Result<Next, RunError> {
        let program = self.program;
        let clause = &program.clauses[ci as usize];
        Ok(match &clause.term {
            Term::Next(t) => Next::At(*t),
            Term::End => {
                if let Some(h) = hazards {
                    h.finish(clause.start + clause.len - 1, g.lanes.running, &g.pixels);
                }
                g.finished |= g.lanes.running;
                g.lanes.running = 0;
                Next::At(program.len)
            }
            Term::Last { pc: at } => {
                let done = g.lanes.running & g.lanes.active;
                if let Some(h) = hazards {
                    h.finish(*at, done, &g.pixels);
                }
                g.finished |= done;
                g.lanes.running &= !done;
                g.lanes.active &= !done;
                Next::At(at + 1)
            }
            Term::Undefined { pc: at, reason } => {
                return Err(RunError::Undefined {
                    pc: *at,
                    reason: reason.clone(),
                    pixel: g.pixel_of(g.lanes.active | g.lanes.running),
                });
            }
            Term::Fc { pc: at, fc } => {
                if fc.wait
                    && let Some(h) = hazards
                {
                    h.wait(*at);
                }
                let (uniforms, len) = (self.uniforms, program.len);
                let pc = exec_fc(fc, *at, g.lanes, g.flow, uniforms, len, &g.pixels)?;
                if self.engine.observes_flow() {
                    self.engine.observe_flow(*at, g.lanes, &g.flow.view());
                }
                Next::At(pc)
            }
        })
    }

    /// Hands the group's finished pixels to `sink` and counts them.
    #[inline]
    fn deliver(&self, g: &Group<'_>, stats: &mut RunStats, sink: &mut dyn Sink) {
        let present = ctm_jit::state::lanes_mask(g.lanes.lane_count());
        let domain_lanes = present & !g.helper;
        let killed = g.lanes.killed & domain_lanes;
        let done = g.finished & domain_lanes & !killed;
        stats.killed += u64::from(killed.count_ones());
        stats.pixels += u64::from(done.count_ones());
        if done != 0 {
            // Delivery may convert floats: in the default mode unless the
            // sink says it copies bits only.
            let daz_on = self.engine.wants_daz();
            let _default = (daz_on && !sink.bits_only()).then(|| DazGuard::new(false));
            sink.group(&GroupOut {
                lanes: g.lanes,
                pixels: &g.pixels,
                done,
            });
        }
    }

    /// Runs the region `entry` natively: a loop region if the group's
    /// innermost frame is its loop (and the loop has iterations), a branch
    /// region always; `None` if not.
    fn native_loop(
        &mut self,
        entry: LoopEntry,
        g: &mut Group<'_>,
        stats: &mut RunStats,
        tex: &mut dyn TextureUnit,
    ) -> Result<Option<LoopExit>, RunError> {
        // A loop region's frame is the innermost one; a branch region has
        // none of its own, and every frame's lanes are held.
        let (own, step) = if entry.branch {
            (None, 0)
        } else {
            let k = self.uniforms.ints[usize::from(entry.int_addr) % self.uniforms.ints.len()];
            match g.flow.loops.last() {
                Some(top) if top.is_loop == entry.is_loop && k.count != 0 => {}
                _ => return Ok(None),
            }
            let step = if entry.is_loop { i32::from(k.step) } else { 0 };
            (g.flow.loops.len().checked_sub(1), step)
        };
        let frames = &g.flow.loops;
        let outer = &frames[..own.unwrap_or(frames.len())];
        let top = own.map(|i| &frames[i]);
        let mut state = LoopState {
            count: top.map_or(0, |t| t.count),
            entry: top.map_or(0, |t| t.entry),
            broken: top.map_or(0, |t| t.broken),
            continued: top.map_or(0, |t| t.continued),
            al: g.lanes.al,
            step,
            helper: g.helper,
            held: outer.iter().fold(0, |m, f| m | f.broken | f.continued),
            executed: g.executed,
            // A slice at a time, so that the shim checks `stop` often.
            budget: self
                .options
                .budget
                .min(g.executed.saturating_add(LOOP_SLICE)),
            pixel_instructions: stats.pixel_instructions,
            events: [-1; GROUP_LANES],
            branch_counters: g.flow.bc,
        };
        let mut ctx = Ctx {
            uniforms: self.uniforms,
            tex,
            hazards: None,
            pixels: &g.pixels,
        };
        let exit = self
            .engine
            .run_loop(self.program, entry, g.lanes, &mut ctx, &mut state)?;
        if let Some(top) = own.map(|i| &mut g.flow.loops[i]) {
            (top.count, top.broken, top.continued) = (state.count, state.broken, state.continued);
            if entry.is_loop
                && let Some(al) = g.flow.al.last_mut()
            {
                *al = state.al;
            }
        }
        g.flow.bc = state.branch_counters;
        g.executed = state.executed;
        stats.pixel_instructions = state.pixel_instructions;
        Ok(Some(exit))
    }
}

/// The group's state at its start: its lanes present, running and active,
/// r0 = (i, j, v, 1.0), the registers the program uses zero.
#[inline]
fn start_group<'l>(
    group: &[(u32, u32, Mask)],
    v: u32,
    temps: usize,
    lanes: &'l mut Lanes,
    flow: &'l mut Flow,
) -> Group<'l> {
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
    flow.restart();
    Group {
        lanes,
        flow,
        pixels,
        helper,
        finished: 0,
        executed: 0,
    }
}
