//! The runtime shim: runs a program over a domain, one group of quads at a
//! time, executing clauses through an [`Engine`] and everything between them
//! itself — the flow-control stacks of `spec/isa.md` §6 (branch counters,
//! loop frames with aL, the address stack), early exit, kills, the runaway
//! budget — and hands finished pixels to a [`Sink`].
//!
//! Emulator decisions (`DESIGN.md`, `[E]`):
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

pub mod hazard;
pub mod texture;

use ctm_jit::host::DazGuard;
use ctm_jit::ir::{Counter, Fc, FcOp, FetchKind, Program, StackOp, Term};
use ctm_jit::state::{GROUP_LANES, GROUP_QUADS, Lanes, LoopState, Mask, Uniforms};
use hazard::Hazards;
use std::fmt;

/// Maximum depth of each flow-control stack (full mode, `DESIGN.md`).
pub const MAX_DEPTH: usize = 32;

/// A fetch request from a group (`spec/isa.md` §5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FetchRequest {
    /// Lookup or uncached read.
    pub kind: FetchKind,
    /// Input 0–15.
    pub input: u8,
    /// Coordinates in texel units (else scaled by the input's size).
    pub unscaled: bool,
}

/// A fault raised by the texture unit; the run stops with it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TexFault(pub String);

/// What the DPP's texture instructions and uncached writes talk to (the
/// memory controller implements it).
pub trait TextureUnit {
    /// Fetches for every lane whose bit is set in `mask`: `coords[lane]` holds
    /// S, T, R, Q as f32 patterns (any NaN payload is insignificant); the four
    /// returned channels go to `out[lane]`. `pixels[lane]` is the lane's
    /// (i, j).
    fn fetch(
        &mut self,
        req: FetchRequest,
        coords: &[[u32; 4]],
        mask: Mask,
        pixels: &[(u32, u32)],
        out: &mut [[u32; 4]],
    ) -> Result<(), TexFault>;

    /// One uncached (UMRT) write of `value` at (x, y), given as f32 patterns.
    fn uncached_write(&mut self, x: u32, y: u32, value: u32) -> Result<(), TexFault>;
}

/// A texture unit with nothing bound: every fetch is a fault.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoTextures;

impl TextureUnit for NoTextures {
    fn fetch(
        &mut self,
        req: FetchRequest,
        _: &[[u32; 4]],
        _: Mask,
        _: &[(u32, u32)],
        _: &mut [[u32; 4]],
    ) -> Result<(), TexFault> {
        Err(TexFault(format!("input {} is not bound", req.input)))
    }

    fn uncached_write(&mut self, _: u32, _: u32, _: u32) -> Result<(), TexFault> {
        Err(TexFault("no memory bound for uncached writes".into()))
    }
}

/// Which flow-control stack overflowed or underflowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stack {
    /// A processor's branch counter.
    Branch,
    /// The loop stack (LOOP/REP frames).
    Loop,
    /// The address stack (CALL/RET).
    Address,
}

impl fmt::Display for Stack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stack::Branch => "branch counter",
            Stack::Loop => "loop stack",
            Stack::Address => "address stack",
        })
    }
}

/// A program that cannot go on. Every variant names the instruction and a
/// pixel (i, j) it was executing for.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    /// A stack grew past [`MAX_DEPTH`].
    #[error("pc {pc}, pixel {pixel:?}: {stack} overflow (more than {MAX_DEPTH} levels)")]
    Overflow {
        /// Instruction.
        pc: u16,
        /// Stack.
        stack: Stack,
        /// Pixel.
        pixel: (u32, u32),
    },
    /// A pop from an empty stack.
    #[error("pc {pc}, pixel {pixel:?}: {stack} underflow")]
    Underflow {
        /// Instruction.
        pc: u16,
        /// Stack.
        stack: Stack,
        /// Pixel.
        pixel: (u32, u32),
    },
    /// ENDLOOP/BREAKLOOP on a REP frame or ENDREP/BREAKREP on a LOOP frame.
    #[error("pc {pc}, pixel {pixel:?}: {op} does not match the innermost loop frame (a {frame})")]
    FrameMismatch {
        /// Instruction.
        pc: u16,
        /// The FC operation.
        op: &'static str,
        /// The innermost frame's kind.
        frame: &'static str,
        /// Pixel.
        pixel: (u32, u32),
    },
    /// A jump past the end of the program.
    #[error(
        "pc {pc}, pixel {pixel:?}: jump to {target}, past the end of the program ({len} instructions)"
    )]
    JumpOutOfRange {
        /// Instruction.
        pc: u16,
        /// Target.
        target: u16,
        /// Program length.
        len: u16,
        /// Pixel.
        pixel: (u32, u32),
    },
    /// An instruction with an undefined encoding was reached.
    #[error("pc {pc}, pixel {pixel:?}: undefined instruction reached: {reason}")]
    Undefined {
        /// Instruction.
        pc: u16,
        /// Why it cannot execute.
        reason: String,
        /// Pixel.
        pixel: (u32, u32),
    },
    /// The instruction budget ran out: the program does not end.
    #[error(
        "pc {pc}, pixel {pixel:?}: still running after {executed} instructions (budget {budget}); the program looks like it never ends"
    )]
    Runaway {
        /// Where it was.
        pc: u16,
        /// Instructions executed by the group.
        executed: u64,
        /// The budget.
        budget: u64,
        /// Pixel.
        pixel: (u32, u32),
    },
    /// The engine could not prepare the program (e.g. code generation
    /// failed as a whole).
    #[error("the {engine} engine cannot run this program: {message}")]
    Engine {
        /// Engine name.
        engine: &'static str,
        /// What went wrong.
        message: String,
    },
    /// The texture unit refused a request.
    #[error("pc {pc}, pixel {pixel:?}: texture unit: {fault}")]
    Texture {
        /// Instruction.
        pc: u16,
        /// The fault.
        fault: TexFault,
        /// Pixel.
        pixel: (u32, u32),
    },
}

/// Knobs of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunOptions {
    /// Instructions one group may execute before the run is stopped as a
    /// runaway.
    pub budget: u64,
    /// Track the texture semaphore and report hazards.
    pub check_hazards: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            budget: 1 << 26,
            check_hazards: false,
        }
    }
}

/// The rectangle of (i, j) pairs a run covers, inclusive (`spec/system.md`
/// `set_domain`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Domain {
    /// First column.
    pub i0: u32,
    /// First row.
    pub j0: u32,
    /// Last column (inclusive).
    pub i1: u32,
    /// Last row (inclusive).
    pub j1: u32,
}

impl Domain {
    /// The domain 0..w × 0..h.
    pub fn new(w: u32, h: u32) -> Domain {
        Domain {
            i0: 0,
            j0: 0,
            i1: w.wrapping_sub(1),
            j1: h.wrapping_sub(1),
        }
    }

    /// No pairs at all.
    pub fn is_empty(&self) -> bool {
        self.i0 > self.i1 || self.j0 > self.j1
    }

    /// Whether (i, j) is inside.
    pub fn contains(&self, i: u32, j: u32) -> bool {
        (self.i0..=self.i1).contains(&i) && (self.j0..=self.j1).contains(&j)
    }
}

/// What one pixel produced.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PixelOut {
    /// Render targets A–D, channel by channel; `None` = never written.
    pub targets: [[Option<u32>; 4]; 4],
    /// The conditional value the program wrote, if it did.
    pub depth: Option<u32>,
}

/// The end of one group: its lane state and which lanes finished.
pub struct GroupOut<'a> {
    /// The group's state after its last clause.
    pub lanes: &'a Lanes,
    /// (i, j) of every lane.
    pub pixels: &'a [(u32, u32); GROUP_LANES],
    /// Lanes of the domain that ended normally (not killed, not helpers).
    pub done: Mask,
}

impl GroupOut<'_> {
    /// The lanes of [`GroupOut::done`], in lane order.
    pub fn lanes_done(&self) -> impl Iterator<Item = usize> + use<> {
        each(self.done)
    }

    /// What lane `lane` produced.
    pub fn pixel(&self, lane: usize) -> PixelOut {
        let bit = 1 << lane;
        let mut out = PixelOut::default();
        for (t, target) in out.targets.iter_mut().enumerate() {
            for (c, slot) in target.iter_mut().enumerate() {
                if self.lanes.out_written[t][c] & bit != 0 {
                    *slot = Some(self.lanes.out[t][c][lane]);
                }
            }
        }
        if self.lanes.depth_written & bit != 0 {
            out.depth = Some(self.lanes.depth[lane]);
        }
        out
    }
}

/// Receives the finished pixels of every group. A closure
/// `FnMut(i, j, &PixelOut)` is a sink that sees them one by one.
pub trait Sink {
    /// A group finished.
    fn group(&mut self, g: &GroupOut<'_>);
}

impl<F: FnMut(u32, u32, &PixelOut)> Sink for F {
    fn group(&mut self, g: &GroupOut<'_>) {
        for lane in g.lanes_done() {
            let (i, j) = g.pixels[lane];
            self(i, j, &g.pixel(lane))
        }
    }
}

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
    /// Calls of compiled loop regions (each runs clauses natively until
    /// the loop leaves or needs the shim).
    pub loop_runs: u64,
    /// Clause executions interpreted because the clause fell back.
    pub fallback_runs: u64,
    /// Clause executions interpreted because hazards were being checked.
    pub checked_runs: u64,
    /// Clauses of the program(s) left to the interpreter.
    pub fallback_clauses: u64,
    /// Programs compiled (cache misses).
    pub compiled: u64,
    /// Programs found compiled in the code cache.
    pub cache_hits: u64,
    /// Time spent compiling.
    pub compile_time: std::time::Duration,
    /// DPP instructions compiled.
    pub compiled_instructions: u64,
    /// Why clauses fell back (one line per distinct reason).
    pub fallback_reasons: Vec<String>,
}

impl EngineStats {
    /// Adds `other` into `self`.
    pub fn merge(&mut self, other: &EngineStats) {
        self.native_runs += other.native_runs;
        self.loop_runs += other.loop_runs;
        self.fallback_runs += other.fallback_runs;
        self.checked_runs += other.checked_runs;
        self.fallback_clauses = self.fallback_clauses.max(other.fallback_clauses);
        self.compiled += other.compiled;
        self.cache_hits += other.cache_hits;
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
    /// denormals as zeros). The runner sets it once around a group's
    /// clauses, not per clause; the engine itself restores the default mode
    /// wherever Rust code of its own runs in between (callbacks, fallbacks).
    fn wants_daz(&self) -> bool {
        false
    }
}

impl<E: Engine + ?Sized> Engine for &mut E {
    fn prepare(&mut self, program: &Program) -> Result<(), RunError> {
        (**self).prepare(program)
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

    fn wants_daz(&self) -> bool {
        (**self).wants_daz()
    }

    fn loop_at(&self, pc: u16) -> Option<LoopEntry> {
        (**self).loop_at(pc)
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

/// A loop region an engine runs natively: its index in the engine's code,
/// the kind of frame it belongs to and its ENDLOOP/ENDREP's integer constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoopEntry {
    /// Index in the engine's compiled code.
    pub index: usize,
    /// A LOOP body (else REP).
    pub is_loop: bool,
    /// The integer constant of the ENDLOOP/ENDREP.
    pub int_addr: u8,
}

/// Where the shim goes on after a loop region returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoopExit {
    /// Run clause `.0` (by index) from its start.
    Before(u32),
    /// Clause `.0` ran; execute its terminator.
    AtTerm(u32),
}

/// The first lane set in `m` (or lane 0).
pub(crate) fn first_lane(m: Mask) -> usize {
    if m == 0 {
        0
    } else {
        m.trailing_zeros() as usize
    }
}

/// Sets r0 = (i, j, v, 1.0) in every present lane (`DESIGN.md`, "Where (i, j)
/// comes from").
pub fn init_r0(lanes: &mut Lanes, pixels: &[(u32, u32); GROUP_LANES], v: u32) {
    for (l, &(i, j)) in pixels.iter().enumerate().take(lanes.lane_count()) {
        lanes.temps[0][0][l] = (i as f32).to_bits();
        lanes.temps[0][1][l] = (j as f32).to_bits();
        lanes.temps[0][2][l] = v;
        lanes.temps[0][3][l] = 1.0f32.to_bits();
    }
}

#[derive(Clone, Copy, Debug)]
struct Frame {
    count: u32,
    entry: Mask,
    broken: Mask,
    continued: Mask,
    is_loop: bool,
}

/// Flow-control state of one group.
struct Flow {
    bc: [i32; GROUP_LANES],
    loops: Vec<Frame>,
    al: Vec<i32>,
    ret: Vec<u16>,
}

impl Flow {
    /// Lanes a loop frame holds (broken or continued): they take no part in
    /// votes, B_ELSE or branch-counter operations (§6.7).
    fn held(&self) -> Mask {
        self.loops.iter().fold(0, |m, f| m | f.broken | f.continued)
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
    /// are not run at all.
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
        let mut stats = RunStats::default();
        if domain.is_empty() {
            return Ok(stats);
        }
        let mut hazards = self.options.check_hazards.then(Hazards::default);
        let temps = self.program.temps_used();
        let live = |i: u32, j: u32| domain.contains(i, j) && !skip.is_some_and(|s| s(i, j));
        let (qx0, qx1) = (domain.i0 / 2, domain.i1 / 2);
        let rows = rows.start.max(domain.j0 / 2)..rows.end.min(domain.j1 / 2 + 1);
        // Groups take the next GROUP_QUADS quads that run, row after row.
        let mut group = [(0u32, 0u32); GROUP_QUADS];
        let mut n = 0;
        let quads = rows.flat_map(|qy| (qx0..=qx1).map(move |qx| (qx, qy)));
        for quad in quads.map(Some).chain(std::iter::once(None)) {
            if let Some((qx, qy)) = quad {
                let runs = (0..4).any(|l| {
                    let (i, j) = ctm_jit::quad::pixel_of_lane(qx, qy, l);
                    live(i, j)
                });
                if !runs {
                    continue;
                }
                group[n] = (qx, qy);
                n += 1;
            }
            if n == GROUP_QUADS || (quad.is_none() && n > 0) {
                self.run_group(
                    &group[..n],
                    &live,
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
            budget: self.options.budget,
            pixel_instructions: stats.pixel_instructions,
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
        group: &[(u32, u32)],
        live: &dyn Fn(u32, u32) -> bool,
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
        for (q, &(qx, qy)) in group.iter().enumerate() {
            for l in 0..4 {
                let lane = q * 4 + l;
                let (i, j) = ctm_jit::quad::pixel_of_lane(qx, qy, l);
                pixels[lane] = (i, j);
                if !live(i, j) {
                    helper |= 1 << lane;
                }
            }
        }
        lanes.reset(group.len() as u32, temps);
        let present: Mask = if group.len() * 4 >= 32 {
            !0
        } else {
            (1 << (group.len() * 4)) - 1
        };
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
        // The flow-control shim between clauses is integer code, so the
        // float mode can stay set for the whole group (not the sink below).
        let daz = self.engine.wants_daz().then(|| DazGuard::new(true));
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
                }
            }
        }
        drop(daz);
        stats.group_instructions += executed;
        let present = if lanes.lane_count() >= 32 {
            !0
        } else {
            (1 << lanes.lane_count()) - 1
        };
        let domain_lanes = present & !helper;
        let killed = lanes.killed & domain_lanes;
        let done = finished & domain_lanes & !killed;
        stats.killed += u64::from(killed.count_ones());
        stats.pixels += u64::from(done.count_ones());
        if done != 0 {
            sink.group(&GroupOut {
                lanes,
                pixels: &pixels,
                done,
            });
        }
        Ok(())
    }
}

/// Lanes of `m`, one by one.
fn each(m: Mask) -> impl Iterator<Item = usize> {
    let mut rest = m;
    std::iter::from_fn(move || {
        (rest != 0).then(|| {
            let l = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            l
        })
    })
}

/// Executes one flow-control instruction for the group (`spec/isa.md` §6.7)
/// and returns the next pc.
fn exec_fc(
    fc: &Fc,
    pc: u16,
    lanes: &mut Lanes,
    flow: &mut Flow,
    uniforms: &Uniforms,
    len: u16,
    pixels: &[(u32, u32); GROUP_LANES],
) -> Result<u16, RunError> {
    let running = lanes.running;
    let pixel = |m: Mask| pixels[first_lane(m)];
    let k = uniforms.ints[usize::from(fc.int_addr) % uniforms.ints.len()];
    let is_end = matches!(fc.op, FcOp::EndLoop | FcOp::EndRep);
    if is_end && k.count == 0 {
        // Zero-count landing (§6.6): the LOOP pushed nothing.
        return Ok(pc + 1);
    }
    let needs_frame = matches!(
        fc.op,
        FcOp::EndLoop | FcOp::EndRep | FcOp::BreakLoop | FcOp::BreakRep | FcOp::Continue
    );
    if needs_frame {
        let Some(top) = flow.loops.last() else {
            return Err(RunError::Underflow {
                pc,
                stack: Stack::Loop,
                pixel: pixel(running),
            });
        };
        let want_loop = match fc.op {
            FcOp::EndLoop | FcOp::BreakLoop => Some(true),
            FcOp::EndRep | FcOp::BreakRep => Some(false),
            _ => None,
        };
        if let Some(w) = want_loop
            && w != top.is_loop
        {
            return Err(RunError::FrameMismatch {
                pc,
                op: op_name(fc.op),
                frame: if top.is_loop { "LOOP" } else { "REP" },
                pixel: pixel(running),
            });
        }
    }
    if is_end {
        let top = flow.loops.last_mut().expect("checked above");
        lanes.active |= top.continued & running;
        top.continued = 0;
    }
    let held = flow.held();
    if fc.b_else {
        let free = running & !held;
        let old_active = lanes.active & free;
        let wake = each(free & !lanes.active)
            .filter(|&l| flow.bc[l] == 0)
            .fold(0, |m, l| m | 1 << l);
        for l in each(old_active) {
            flow.bc[l] = 0;
        }
        lanes.active = (lanes.active & !free) | wake;
    }
    let b = (uniforms.bools >> (fc.bool_addr & 31)) & 1;
    let active = lanes.active & running;
    // The jump function (§6.3) on bit masks: bit alu·4 + p·2 + b of `func`
    // says whether a lane with ALU result `alu` and predicate `p` wants to
    // jump; `b` is uniform.
    let alu = lanes.alu_result;
    let p = match fc.pred.0 {
        Some(c) => lanes.pred[usize::from(c & 3)],
        None => !0,
    } ^ if fc.pred.1 { !0 } else { 0 };
    let mut want: Mask = 0;
    for (a, am) in [(0, !alu), (1, alu)] {
        for (q, pm) in [(0, !p), (1, p)] {
            if (fc.func >> (a * 4 + q * 2 + b)) & 1 != 0 {
                want |= am & pm;
            }
        }
    }
    want &= active;
    let mut jump = if fc.any { want != 0 } else { want == active };
    match fc.op {
        FcOp::Jump => {}
        FcOp::Loop | FcOp::Rep => {
            if k.count == 0 {
                jump = true;
            } else if !jump {
                if flow.loops.len() >= MAX_DEPTH {
                    return Err(RunError::Overflow {
                        pc,
                        stack: Stack::Loop,
                        pixel: pixel(active),
                    });
                }
                flow.loops.push(Frame {
                    count: u32::from(k.count),
                    entry: active,
                    broken: 0,
                    continued: 0,
                    is_loop: fc.op == FcOp::Loop,
                });
                if fc.op == FcOp::Loop {
                    flow.al.push(i32::from(k.init));
                }
            }
        }
        FcOp::EndLoop | FcOp::EndRep => {
            let top = flow.loops.last_mut().expect("checked above");
            top.count -= 1;
            if top.count == 0 {
                jump = false;
            }
            if jump {
                if let Some(al) = flow.al.last_mut().filter(|_| fc.op == FcOp::EndLoop) {
                    *al += i32::from(k.step);
                }
            } else {
                lanes.active |= top.broken & running;
                pop_frame(flow);
            }
        }
        FcOp::BreakLoop | FcOp::BreakRep => {
            let top = flow.loops.last_mut().expect("checked above");
            top.broken |= want;
            lanes.active &= !want;
            jump = top.entry & running & !top.broken == 0;
            if jump {
                lanes.active |= top.broken & running;
                pop_frame(flow);
            }
        }
        FcOp::Continue => {
            let top = flow.loops.last_mut().expect("checked above");
            top.continued |= want;
            lanes.active &= !want;
            jump = top.entry & running & !(top.broken | top.continued) == 0;
        }
    }
    // Branch counters of the lanes no loop holds (§6.4).
    let free = running & !flow.held();
    match if jump { fc.jump } else { fc.stay } {
        Counter::None => {}
        Counter::Incr => {
            let active = lanes.active & free;
            for l in each(free & !active) {
                flow.bc[l] += 1;
                if flow.bc[l] >= MAX_DEPTH as i32 {
                    return Err(RunError::Overflow {
                        pc,
                        stack: Stack::Branch,
                        pixel: pixels[l],
                    });
                }
            }
            let leave = active & if jump { !want } else { want };
            for l in each(leave) {
                flow.bc[l] = 0;
            }
            lanes.active &= !leave;
        }
        Counter::Decr => {
            for l in each(free & !lanes.active) {
                flow.bc[l] -= i32::from(fc.pop);
                if flow.bc[l] < 0 {
                    lanes.active |= 1 << l;
                }
            }
        }
    }
    if !jump {
        return Ok(pc + 1);
    }
    if fc.stack == StackOp::Push {
        if flow.ret.len() >= MAX_DEPTH {
            return Err(RunError::Overflow {
                pc,
                stack: Stack::Address,
                pixel: pixel(active),
            });
        }
        flow.ret.push(pc + 1);
    }
    let mut target = if fc.stack == StackOp::Pop {
        flow.ret.pop().ok_or(RunError::Underflow {
            pc,
            stack: Stack::Address,
            pixel: pixel(running),
        })?
    } else {
        fc.target
    };
    if fc.skip_target && matches!(fc.op, FcOp::Loop | FcOp::Rep) {
        target += 1;
    }
    if target > len {
        return Err(RunError::JumpOutOfRange {
            pc,
            target,
            len,
            pixel: pixel(running),
        });
    }
    Ok(target)
}

fn pop_frame(flow: &mut Flow) {
    if let Some(f) = flow.loops.pop()
        && f.is_loop
    {
        flow.al.pop();
    }
}

fn op_name(op: FcOp) -> &'static str {
    match op {
        FcOp::Jump => "JUMP",
        FcOp::Loop => "LOOP",
        FcOp::EndLoop => "ENDLOOP",
        FcOp::Rep => "REP",
        FcOp::EndRep => "ENDREP",
        FcOp::BreakLoop => "BREAKLOOP",
        FcOp::BreakRep => "BREAKREP",
        FcOp::Continue => "CONTINUE",
    }
}
