//! The engine interface: what executes a clause (or a compiled loop
//! region) for the runtime shim, and what it reports.

use super::{FlowView, RunError, TextureUnit, hazard::Hazards};
use ctm_jit::ir::Program;
use ctm_jit::state::{GROUP_LANES, Lanes, LoopState, Strip, Uniforms};

/// Everything a clause may touch besides the lanes.
pub struct Ctx<'a> {
    /// The constant files.
    pub uniforms: &'a Uniforms,
    /// Inputs and uncached memory.
    pub tex: &'a mut dyn TextureUnit,
    /// The hazard checker, when enabled.
    pub hazards: Option<&'a mut Hazards>,
    /// (i, j) of every lane of the group.
    pub pixels: &'a [(u32, u32); GROUP_LANES],
}

/// What an engine did, summed over the runs it served.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EngineStats {
    /// Clause executions in native code.
    pub native_runs: u64,
    /// Calls of compiled regions, loop regions and branch regions (each
    /// runs clauses natively until the region is left or needs the shim).
    pub loop_runs: u64,
    /// Of those, the calls that ran the region lane-wise (each batch of
    /// quads through all its iterations at once).
    pub lanewise_runs: u64,
    /// Clause executions interpreted because the clause fell back.
    pub fallback_runs: u64,
    /// Clause executions interpreted because hazards were being checked.
    pub checked_runs: u64,
    /// Clauses of the program(s) left to the interpreter.
    pub fallback_clauses: u64,
    /// Strips of quads run by a compiled strip (a straight program along
    /// a quad row, results straight to memory).
    pub strip_runs: u64,
    /// Uncached writes compiled code made itself (appended to the run's
    /// writes without calling the runtime).
    pub uncached_logged: u64,
    /// Programs compiled (cache misses).
    pub compiled: u64,
    /// Programs found compiled in the code cache.
    pub cache_hits: u64,
    /// Bodies compiled on first use: general bodies of clauses first
    /// compiled with their full-batch body alone, bodies that send every
    /// lookup through the runtime (for runs where an input has no direct
    /// descriptor), lock-step loop drivers, and — for a program that runs
    /// in compiled strips — its clauses' own bodies and lane-wise loops,
    /// for rows a strip does not run.
    pub general_compiled: u64,
    /// Forms of compiled strips compiled on first use.
    pub strips_compiled: u64,
    /// Switches from a program's quick code to its optimised code
    /// (tiered compilation; that compilation runs on a thread of its own
    /// and is not in `compile_time`).
    pub tier_ups: u64,
    /// Time spent compiling.
    pub compile_time: std::time::Duration,
    /// DPP instructions compiled.
    pub compiled_instructions: u64,
    /// Why clauses fell back, and why loop regions (or their lane-wise
    /// bodies) were left to the shim (one line per distinct reason).
    pub fallback_reasons: Vec<String>,
}

impl EngineStats {
    /// Adds `other` into `self`.
    pub fn merge(&mut self, other: &EngineStats) {
        self.native_runs += other.native_runs;
        self.loop_runs += other.loop_runs;
        self.lanewise_runs += other.lanewise_runs;
        self.fallback_runs += other.fallback_runs;
        self.checked_runs += other.checked_runs;
        self.strip_runs += other.strip_runs;
        self.uncached_logged += other.uncached_logged;
        self.strips_compiled += other.strips_compiled;
        self.fallback_clauses = self.fallback_clauses.max(other.fallback_clauses);
        self.compiled += other.compiled;
        self.cache_hits += other.cache_hits;
        self.general_compiled += other.general_compiled;
        self.tier_ups += other.tier_ups;
        self.compile_time += other.compile_time;
        self.compiled_instructions += other.compiled_instructions;
        for r in &other.fallback_reasons {
            if !self.fallback_reasons.contains(r) {
                self.fallback_reasons.push(r.clone());
            }
        }
    }
}

/// Executes the operations of one clause on a group (the interpreter, or
/// compiled code).
pub trait Engine {
    /// Called before a program's first clause of each run (compilers
    /// compile or look up their code here).
    fn prepare(&mut self, program: &Program) -> Result<(), RunError> {
        let _ = program;
        Ok(())
    }

    /// [`Engine::prepare`] for a program shared by `Arc`, which an engine
    /// may recognise by its address (the PE's programs, which it keeps
    /// built between runs).
    fn prepare_shared(&mut self, program: &std::sync::Arc<Program>) -> Result<(), RunError> {
        self.prepare(program)
    }

    /// Runs clause `clause` of `program`.
    fn run_clause(
        &mut self,
        program: &Program,
        clause: u32,
        lanes: &mut Lanes,
        ctx: &mut Ctx<'_>,
    ) -> Result<(), RunError>;

    /// What the engine did so far.
    fn stats(&self) -> EngineStats {
        EngineStats::default()
    }

    /// What the engine did since the last call (or since it was made),
    /// counting again from zero: how a kept engine reports each run.
    fn take_stats(&mut self) -> EngineStats {
        self.stats()
    }

    /// A loop region ([`ctm_jit::regions`]) whose body starts at `pc` and
    /// that this engine runs in one call ([`Engine::run_loop`]).
    fn loop_at(&self, pc: u16) -> Option<LoopEntry> {
        let _ = pc;
        None
    }

    /// Runs loop region `entry` from the state of the group's innermost
    /// loop frame in `state`, updating it; returns where the shim goes on.
    fn run_loop(
        &mut self,
        program: &Program,
        entry: LoopEntry,
        lanes: &mut Lanes,
        ctx: &mut Ctx<'_>,
        state: &mut LoopState,
    ) -> Result<LoopExit, RunError> {
        let _ = (program, lanes, ctx, state);
        unreachable!("run_loop is only called for loops an engine offers (loop {entry:?})")
    }

    /// Whether clauses run with MXCSR.DAZ set (compiled code reads
    /// denormals as zeros). The runner sets it once per stretch of rows,
    /// not per clause or group; the engine itself restores the default mode
    /// wherever Rust code of its own runs in between (callbacks, fallbacks).
    fn wants_daz(&self) -> bool {
        false
    }

    /// The compiled strip of `program` this engine offers
    /// ([`ctm_jit::strip`]) for a row of `quads` whole quads: what one pass
    /// counts, the targets it writes and its batch width (at most
    /// `quads`). `None` where it has none; then [`Engine::run_strip`] is
    /// not called.
    fn strip(&mut self, program: &Program, quads: u32) -> Option<StripPlan> {
        let _ = (program, quads);
        None
    }

    /// Runs the compiled strip of `program` that the engine's last
    /// [`Engine::strip`] offered on `strip` (a whole number of its
    /// batches), its lookups reading `tex`'s direct inputs. A run may ask
    /// for the plan once and run every row with it where the plan is
    /// settled ([`StripPlan::settled`]).
    fn run_strip(
        &mut self,
        program: &Program,
        uniforms: &Uniforms,
        tex: &mut dyn TextureUnit,
        strip: &Strip,
    ) -> Result<(), RunError> {
        let _ = (program, uniforms, tex, strip);
        unreachable!("run_strip is only called where an engine offers a strip")
    }

    /// [`Engine::run_strip`] on each of `strips` (rows of one run with a
    /// settled plan, alike but for their rows), in order, up to the first
    /// that fails: its index and its error.
    fn run_strips(
        &mut self,
        program: &Program,
        uniforms: &Uniforms,
        tex: &mut dyn TextureUnit,
        strips: &[Strip],
    ) -> Result<(), (usize, RunError)> {
        for (k, strip) in strips.iter().enumerate() {
            self.run_strip(program, uniforms, tex, strip)
                .map_err(|e| (k, e))?;
        }
        Ok(())
    }

    /// Whether the shim should show this engine the flow-control state
    /// after every flow-control instruction ([`Engine::observe_flow`]).
    fn observes_flow(&self) -> bool {
        false
    }

    /// Called after the flow-control instruction at `pc` executed, with
    /// the group's lanes and flow-control state (only when
    /// [`Engine::observes_flow`] says so).
    fn observe_flow(&mut self, pc: u16, lanes: &Lanes, flow: &FlowView<'_>) {
        let _ = (pc, lanes, flow);
    }
}

// Every method forwarded: one left to its default would silently answer
// for the engine behind the reference.
#[deny(clippy::missing_trait_methods)]
impl<E: Engine + ?Sized> Engine for &mut E {
    fn prepare(&mut self, program: &Program) -> Result<(), RunError> {
        (**self).prepare(program)
    }

    fn prepare_shared(&mut self, program: &std::sync::Arc<Program>) -> Result<(), RunError> {
        (**self).prepare_shared(program)
    }

    fn run_clause(
        &mut self,
        program: &Program,
        clause: u32,
        lanes: &mut Lanes,
        ctx: &mut Ctx<'_>,
    ) -> Result<(), RunError> {
        (**self).run_clause(program, clause, lanes, ctx)
    }

    fn stats(&self) -> EngineStats {
        (**self).stats()
    }

    fn take_stats(&mut self) -> EngineStats {
        (**self).take_stats()
    }

    fn wants_daz(&self) -> bool {
        (**self).wants_daz()
    }

    fn observes_flow(&self) -> bool {
        (**self).observes_flow()
    }

    fn observe_flow(&mut self, pc: u16, lanes: &Lanes, flow: &FlowView<'_>) {
        (**self).observe_flow(pc, lanes, flow)
    }

    fn loop_at(&self, pc: u16) -> Option<LoopEntry> {
        (**self).loop_at(pc)
    }

    fn strip(&mut self, program: &Program, quads: u32) -> Option<StripPlan> {
        (**self).strip(program, quads)
    }

    fn run_strip(
        &mut self,
        program: &Program,
        uniforms: &Uniforms,
        tex: &mut dyn TextureUnit,
        strip: &Strip,
    ) -> Result<(), RunError> {
        (**self).run_strip(program, uniforms, tex, strip)
    }

    fn run_strips(
        &mut self,
        program: &Program,
        uniforms: &Uniforms,
        tex: &mut dyn TextureUnit,
        strips: &[Strip],
    ) -> Result<(), (usize, RunError)> {
        (**self).run_strips(program, uniforms, tex, strips)
    }

    fn run_loop(
        &mut self,
        program: &Program,
        entry: LoopEntry,
        lanes: &mut Lanes,
        ctx: &mut Ctx<'_>,
        state: &mut LoopState,
    ) -> Result<LoopExit, RunError> {
        (**self).run_loop(program, entry, lanes, ctx, state)
    }
}

/// What an engine's compiled strip of a program does ([`Engine::strip`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StripPlan {
    /// Instructions one pass counts (as the budget counts them).
    pub counted: u64,
    /// Render targets it writes, all four channels (bit `t` = target `t`).
    pub targets: u8,
    /// It runs whole batches of this many quads: a strip is a multiple of
    /// it long.
    pub batch: u32,
    /// The inputs it reads itself (bit `k` = input `k`): the texture unit
    /// must offer a descriptor for each ([`TextureUnit::direct`]).
    pub inputs: u16,
    /// Uncached writes per pixel (0 or 1), appended to the texture unit's
    /// log ([`TextureUnit::uncached_log`]), which must offer one.
    pub writes: u32,
    /// For a program that is one loop ([`ctm_jit::strip::StripLoop`]):
    /// its loop (`counted` is then what the rest counts). The strip records
    /// where each lane left it in [`Strip::events`], which must be set.
    pub looped: Option<StripLoopPlan>,
    /// The engine offers this same plan for every row of `quads` whole
    /// quads until another program runs (its choice of compiled form is
    /// made): a run may keep it for its other rows instead of asking
    /// again. Where it is `false` (the engine is still timing its forms),
    /// the plan is asked for per row.
    pub settled: bool,
}

/// The loop of a strip ([`StripPlan::looped`]): what counting the
/// instructions the shim would have run needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StripLoopPlan {
    /// The integer constant of its LOOP/REP (its count; a strip runs only
    /// where that is not zero).
    pub int_addr: u8,
    /// Its lane-wise form: what each clause of its body counts
    /// ([`ctm_jit::lanewise::Lanewise::lens`]).
    pub lanewise: std::sync::Arc<ctm_jit::lanewise::Lanewise>,
}

/// A region an engine runs natively: its index in the engine's code, and
/// for a loop region the kind of frame it belongs to and its
/// ENDLOOP/ENDREP's integer constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoopEntry {
    /// Index in the engine's compiled code.
    pub index: usize,
    /// A LOOP body (else REP).
    pub is_loop: bool,
    /// The integer constant of the ENDLOOP/ENDREP.
    pub int_addr: u8,
    /// A branch region (IF/ELSE outside loop regions): no frame of its
    /// own; `is_loop` and `int_addr` mean nothing.
    pub branch: bool,
}

/// Where the shim goes on after a loop region returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoopExit {
    /// Run clause `.0` (by index) from its start.
    Before(u32),
    /// Clause `.0` ran; execute its terminator.
    AtTerm(u32),
}

/// Compiled code and the interpreter loop over `lanes.quads` quads of the
/// group's state: a count outside 1..=GROUP_QUADS is the caller's error,
/// the same for both engines.
pub fn check_quads(
    engine: &'static str,
    lanes: &ctm_jit::state::Lanes,
) -> Result<(), super::RunError> {
    use ctm_jit::state::GROUP_QUADS;
    if (1..=GROUP_QUADS as u32).contains(&lanes.quads) {
        Ok(())
    } else {
        Err(super::RunError::Engine {
            engine,
            message: format!(
                "a group holds 1 to {GROUP_QUADS} quads, not {} (Lanes::quads)",
                lanes.quads
            ),
        })
    }
}
