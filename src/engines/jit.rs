//! The JIT engine: runs clauses as native code compiled by `ctm_jit`, and
//! serves the runtime calls that code makes (texture fetches and uncached
//! writes, through the same helpers as the interpreter).
//!
//! Code comes from the process-wide cache (`ctm_jit::compile::cached`): a
//! second run of the same program compiles nothing. A clause the code
//! generator could not compile falls back to the interpreter, and so does
//! every clause while the semaphore hazard checker runs (it observes
//! register accesses one by one); both are counted in [`EngineStats`].
//!
//! ```
//! use ctm::jit::JitEngine;
//! use ctm::runtime::Engine;
//! use ctm_jit::compile::JitOptions;
//! if ctm_jit::host::check_features().is_ok() {
//!     let engine = JitEngine::new(JitOptions::default());
//!     assert_eq!(engine.stats().native_runs, 0);
//! }
//! ```

mod host;
mod loops;
mod strip;
mod tier;

use host::{Host, host_fetch, host_umrt};

use crate::interp::Interpreter;
use crate::runtime::{Ctx, Engine, EngineStats, LoopEntry, LoopExit, RunError};
use ctm_jit::compile::{ClauseCode, CodeCache, Compiled, JitOptions, OwnBody};
use ctm_jit::host::DazGuard;
use ctm_jit::ir::{Clause, FetchKind, Op, Program};
use ctm_jit::state::{
    GROUP_LANES, Io, Lanes, LoopState, TexTable, UmrtLog, UncachedWrite, Uniforms,
};
use std::ffi::c_void;
use std::sync::Arc;

/// The JIT engine. One per thread; they share compiled code.
pub struct JitEngine {
    opts: JitOptions,
    /// Where compiled programs are found and kept.
    cache: Arc<CodeCache>,
    /// The program last prepared (a copy, to recognise it), its code, and
    /// the address it was prepared at: within a run every clause call
    /// passes that same reference, so a pointer check suffices there.
    current: Option<(Arc<Program>, Arc<Compiled>, usize)>,
    /// The constant channels the current program reads directly, which
    /// `io.splat` must hold before each call.
    splat_used: Vec<(u8, u8)>,
    /// Per clause of the current program, the uncached writes one group
    /// can make (0 where none, or where the clause also makes uncached
    /// lookups, which must see every earlier write: the runtime makes
    /// those writes).
    umrt_room: Vec<usize>,
    interp: Interpreter,
    io: Box<Io>,
    stats: EngineStats,
    /// The strip [`JitEngine::strip_plan`] last offered, which
    /// [`JitEngine::call_strip`] runs (cleared where another program
    /// becomes current).
    armed: Option<strip::Armed>,
    /// Work (quad-instructions) the current code did that is not yet
    /// reported to it ([`Compiled::add_work`]).
    work: u64,
}

impl std::fmt::Debug for JitEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JitEngine")
            .field("opts", &self.opts)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

/// The uncached writes one group of `clause` can make in compiled code
/// (see `JitEngine::umrt_room`).
fn umrt_room(clause: &Clause) -> usize {
    let mut writes = 0;
    for n in &clause.nodes {
        match n.op {
            Op::UmrtWrite { .. } => writes += GROUP_LANES,
            Op::Fetch {
                kind: FetchKind::Uncached,
                ..
            } => return 0,
            _ => {}
        }
    }
    writes
}

/// The constant channels `program` reads at fixed addresses (compiled code
/// reads them broadcast, from `Io::splat`).
fn splat_used(program: &Program) -> Vec<(u8, u8)> {
    let mut used: Vec<(u8, u8)> = program
        .clauses
        .iter()
        .flat_map(|c| &c.nodes)
        .filter_map(|n| match n.op {
            ctm_jit::ir::Op::Const { index, chan, .. } if !index.rel => Some((index.base, chan)),
            _ => None,
        })
        .collect();
    used.sort_unstable();
    used.dedup();
    used
}

impl JitEngine {
    /// A new engine compiling with `opts`, sharing the process-wide code
    /// cache.
    pub fn new(opts: JitOptions) -> JitEngine {
        JitEngine::with_cache(opts, CodeCache::global().clone())
    }

    /// A new engine compiling with `opts` into `cache`.
    pub fn with_cache(opts: JitOptions, cache: Arc<CodeCache>) -> JitEngine {
        JitEngine {
            opts,
            cache,
            current: None,
            splat_used: Vec::new(),
            umrt_room: Vec::new(),
            interp: Interpreter::new(),
            io: Box::new(Io {
                args: [[0; GROUP_LANES]; 4],
                result: [[0; GROUP_LANES]; 4],
                host: std::ptr::null_mut(),
                fetch: host_fetch,
                umrt: host_umrt,
                one: [1.0; 4],
                tex: TexTable::NONE.as_ptr(),
                oob: [0; 4],
                umrt_log: UmrtLog::NONE,
                splat: [[0; 4]; ctm_jit::ir::CONSTS * 4],
            }),
            stats: EngineStats::default(),
            armed: None,
            work: 0,
        }
    }

    /// Makes `program`'s code current (from the cache, compiling on a miss).
    fn code_for(&mut self, program: &Program) -> Result<(), RunError> {
        let addr = std::ptr::from_ref(program) as usize;
        if let Some((p, _, at)) = &mut self.current
            && **p == *program
        {
            *at = addr;
            return Ok(());
        }
        let found = self.cache.get(program, self.opts);
        self.adopt(Arc::new(program.clone()), found)
    }

    /// [`JitEngine::code_for`] for a program shared by `Arc` (the PE's):
    /// recognised by its address, here and in the code cache, so that
    /// preparing a run's workers neither hashes nor copies it.
    fn code_for_shared(&mut self, program: &Arc<Program>) -> Result<(), RunError> {
        if let Some((p, code, at)) = &mut self.current
            && Arc::ptr_eq(p, program)
        {
            *at = Arc::as_ptr(program) as usize;
            // A kept engine counts the run as one that found its code.
            let code = code.clone();
            self.note(&code, false);
            return Ok(());
        }
        let found = self.cache.get_shared(program, self.opts);
        self.adopt(program.clone(), found)
    }

    /// Makes `code` (what the cache gave for `program`) current.
    fn adopt(
        &mut self,
        program: Arc<Program>,
        found: Result<(Arc<Compiled>, bool), ctm_jit::compile::JitError>,
    ) -> Result<(), RunError> {
        let (code, fresh) = found.map_err(|e| RunError::Engine {
            engine: "jit",
            message: e.to_string(),
        })?;
        self.note(&code, fresh);
        self.work = 0;
        self.armed = None;
        self.splat_used = splat_used(&program);
        self.umrt_room = program.clauses.iter().map(umrt_room).collect();
        let addr = Arc::as_ptr(&program) as usize;
        self.current = Some((program, code, addr));
        Ok(())
    }

    /// Makes `program` the current program where it is not (a run passes
    /// the same reference to every call): its code compiled, or found in
    /// the code cache.
    fn make_current(&mut self, program: &Program) -> Result<(), RunError> {
        let at = std::ptr::from_ref(program) as usize;
        if !matches!(&self.current, Some((_, _, a)) if *a == at) {
            self.code_for(program)?;
        }
        Ok(())
    }

    /// Counts a compilation or a cache hit of `code`, and its fallbacks.
    fn note(&mut self, code: &Compiled, fresh: bool) {
        if fresh {
            self.stats.compiled += 1;
            self.stats.compile_time += code.compile_time;
            self.stats.compiled_instructions += u64::from(code.instructions);
        } else {
            self.stats.cache_hits += 1;
        }
        self.stats.fallback_clauses = code.fallbacks() as u64;
        let clauses = (0..code.len()).filter_map(|i| match code.clause(i as u32) {
            ClauseCode::Fallback(why) => Some(format!("clause {i}: {why}")),
            _ => None,
        });
        let lines: Vec<String> = clauses
            .chain(code.loop_fallbacks().iter().cloned())
            .collect();
        for line in lines {
            if !self.stats.fallback_reasons.contains(&line) {
                self.stats.fallback_reasons.push(line);
            }
        }
    }
}

impl JitEngine {
    /// Calls compiled code (`call(lanes, uniforms, io)`) with the runtime
    /// callbacks' host block set up for `clause`; returns what it returned
    /// and the error a callback raised, if any. Compiled code reads
    /// denormals as zeros (see `ctm_jit::lower`): the runner sets MXCSR.DAZ
    /// for each stretch of rows it runs (`wants_daz`); delivery switches it
    /// off where it converts values.
    fn with_host<R>(
        &mut self,
        ctx: &mut Ctx<'_>,
        (clause, umrt_room): (&Clause, usize),
        lanes: &mut Lanes,
        call: impl FnOnce(*mut Lanes, *const Uniforms, *mut Io) -> R,
    ) -> (R, Option<RunError>) {
        debug_assert!(ctm_jit::host::daz_is_set(), "the runner sets DAZ");
        self.io.splat_consts(ctx.uniforms, &self.splat_used);
        let uniforms: *const Uniforms = ctx.uniforms;
        // Compiled code reads the unit's direct inputs, which stay valid
        // while `ctx.tex` is borrowed (the `TextureUnit::direct` contract).
        self.io.tex = ctx.tex.direct().as_ptr();
        if umrt_room > 0 {
            self.io.umrt_log = ctx.tex.uncached_log(umrt_room);
        }
        let log_start = self.io.umrt_log.at;
        let mut host = Host {
            ctx,
            clause,
            lanes: lanes.lane_count(),
            helper: lanes.helper,
            error: None,
        };
        self.io.host = (&raw mut host).cast::<c_void>();
        let r = call(lanes, uniforms, &mut *self.io);
        self.io.host = std::ptr::null_mut();
        // SAFETY: compiled code appended whole entries from the start of
        // the log, at most one per lane of each uncached write of the
        // clause: the room the unit made.
        unsafe { self.called(host.ctx.tex, log_start) };
        (r, host.error)
    }

    /// What compiled code leaves in `Io` after a call, handed to `tex`: the
    /// uncached writes appended to the log that began at `log_start` (null:
    /// none was handed over) and the lookups outside their surfaces; `Io`'s
    /// texture table and log are cleared.
    ///
    /// # Safety
    ///
    /// The code appended only whole entries from `log_start`, no more than
    /// the room `tex.uncached_log` made.
    pub(super) unsafe fn called(
        &mut self,
        tex: &mut dyn crate::runtime::TextureUnit,
        log_start: *mut UncachedWrite,
    ) {
        self.io.tex = TexTable::NONE.as_ptr();
        if !log_start.is_null() {
            let bytes = self.io.umrt_log.at as usize - log_start as usize;
            self.io.umrt_log = UmrtLog::NONE;
            let n = bytes / size_of::<UncachedWrite>();
            // SAFETY: the caller's.
            unsafe { tex.uncached_logged(n) };
            self.stats.uncached_logged += n as u64;
        }
        if self.io.oob != [0; 4] {
            let n: i64 = self.io.oob.iter().map(|&c| -i64::from(c)).sum();
            tex.count_out_of_bounds(n as u64);
            self.io.oob = [0; 4];
        }
    }
}

/// The code of a clause's body (`what`: which; lazy ones are compiled on
/// first use, and that compilation is counted); `None` (the clause is
/// interpreted, counted as a fallback with its reason) if it cannot be
/// compiled.
fn lazy_body<F>(
    stats: &mut EngineStats,
    (code, took): (Result<F, String>, Option<std::time::Duration>),
    clause: u32,
    what: &str,
) -> Option<F> {
    count_compile(stats, took);
    match code {
        Ok(f) => Some(f),
        Err(why) => {
            let line = format!("clause {clause} ({what} body): {why}");
            if !stats.fallback_reasons.contains(&line) {
                stats.fallback_reasons.push(line);
            }
            stats.fallback_runs += 1;
            None
        }
    }
}

/// Counts a body compiled on first use (`took`: the time, if this call
/// compiled it).
fn count_compile(stats: &mut EngineStats, took: Option<std::time::Duration>) {
    if let Some(t) = took {
        stats.general_compiled += 1;
        stats.compile_time += t;
    }
}

impl Engine for JitEngine {
    fn prepare(&mut self, program: &Program) -> Result<(), RunError> {
        self.code_for(program)
    }

    fn prepare_shared(&mut self, program: &Arc<Program>) -> Result<(), RunError> {
        self.code_for_shared(program)
    }

    fn take_stats(&mut self) -> EngineStats {
        // The end of a run: report the work not yet reported.
        self.report_work();
        std::mem::take(&mut self.stats)
    }

    fn run_clause(
        &mut self,
        program: &Program,
        clause: u32,
        lanes: &mut Lanes,
        ctx: &mut Ctx<'_>,
    ) -> Result<(), RunError> {
        if ctx.hazards.is_some() {
            self.stats.checked_runs += 1;
            let _default = DazGuard::new(false);
            return self.interp.run_clause(program, clause, lanes, ctx);
        }
        crate::runtime::check_quads("jit", lanes)?;
        self.make_current(program)?;
        self.follow_tier();
        let Some((_, code, _)) = &self.current else {
            unreachable!("code_for sets the current program");
        };
        if clause as usize >= code.len() {
            return Err(RunError::Engine {
                engine: "jit",
                message: format!("the program has no clause {clause}"),
            });
        }
        // `self.current` keeps the code alive for the call: nothing below
        // replaces it.
        let direct = code.direct_inputs(clause);
        let (body, what) = match code.clause(clause) {
            // An input the code would read directly has no descriptor in
            // this run, or one the code was not compiled for (another
            // format, the gather, strict caches): the body that asks the
            // runtime for every lookup.
            ClauseCode::Native(_)
            | ClauseCode::Full(_)
            | ClauseCode::Deferred
            | ClauseCode::Later
                if direct != 0 && !ctx.tex.direct().covers(direct, &program.forms) =>
            {
                // A one-channel 2×2 gather: the body that reads it too.
                if ctx.tex.direct().covers_gathered(direct, &program.forms) {
                    (code.gathered_body(clause, program), "gather")
                } else {
                    (code.host_body(clause, program), "host")
                }
            }
            ClauseCode::Native(f) => ((Ok(*f), None), "eager"),
            ClauseCode::Full(full) if full.fits(lanes) => ((Ok(full.code), None), "eager"),
            ClauseCode::Full(_) => (code.general(clause, program), "general"),
            ClauseCode::Deferred => (code.general(clause, program), "lock-step"),
            // A program that runs in strips compiles its clauses' own
            // bodies for the rows strips do not run.
            ClauseCode::Later => match code.own(clause, program) {
                (Ok(OwnBody::Full(full)), took) if !full.fits(lanes) => {
                    count_compile(&mut self.stats, took);
                    (code.general(clause, program), "general")
                }
                (own, took) => ((own.map(OwnBody::code), took), "own"),
            },
            ClauseCode::Fallback(_) => {
                self.stats.fallback_runs += 1;
                let _default = DazGuard::new(false);
                return self.interp.run_clause(program, clause, lanes, ctx);
            }
        };
        let Some(f) = lazy_body(&mut self.stats, body, clause, what) else {
            let _default = DazGuard::new(false);
            return self.interp.run_clause(program, clause, lanes, ctx);
        };
        self.stats.native_runs += 1;
        let len = u64::from(program.clauses[clause as usize].len);
        self.did(len * u64::from(lanes.quads));
        let room = self.umrt_room.get(clause as usize).copied().unwrap_or(0);
        let (status, error) = self.with_host(
            ctx,
            (&program.clauses[clause as usize], room),
            lanes,
            |lanes, uniforms, io| {
                // SAFETY: the argument in full is in the `ctm_jit` crate docs
                // ("Why compiled code stays inside its memory"): `quads` was
                // checked above, the code was compiled from verified IR;
                // `f` was compiled for this program's clause with the
                // `ClauseFn` ABI and reads/writes only `lanes`, `uniforms` and
                // `io` within their layouts (offsets asserted in
                // `ctm_jit::state`); `self.current` keeps the machine code alive;
                // `io.host` points to the host block, which outlives the call.
                unsafe { f(lanes, uniforms, io) }
            },
        );
        match (status, error) {
            (0, _) => Ok(()),
            (_, Some(e)) => Err(e),
            (s, None) => Err(RunError::Engine {
                engine: "jit",
                message: format!("clause {clause} stopped with status {s} and no error"),
            }),
        }
    }

    fn stats(&self) -> EngineStats {
        self.stats.clone()
    }

    fn wants_daz(&self) -> bool {
        true
    }

    fn strip(&mut self, program: &Program, quads: u32) -> Option<crate::runtime::StripPlan> {
        self.strip_plan(program, quads)
    }

    fn run_strip(
        &mut self,
        program: &Program,
        uniforms: &Uniforms,
        tex: &mut dyn crate::runtime::TextureUnit,
        strip: &ctm_jit::state::Strip,
    ) -> Result<(), RunError> {
        self.call_strip(program, uniforms, tex, strip)
    }

    fn run_strips(
        &mut self,
        program: &Program,
        uniforms: &Uniforms,
        tex: &mut dyn crate::runtime::TextureUnit,
        strips: &[ctm_jit::state::Strip],
    ) -> Result<(), (usize, RunError)> {
        self.call_strips(program, uniforms, tex, strips)
    }

    fn loop_at(&self, pc: u16) -> Option<LoopEntry> {
        let (_, code, _) = self.current.as_ref()?;
        let (index, region) = code.loop_at(pc)?;
        Some(LoopEntry {
            index,
            is_loop: region.is_loop,
            int_addr: region.int_addr,
            branch: region.branch,
        })
    }

    fn run_loop(
        &mut self,
        program: &Program,
        entry: LoopEntry,
        lanes: &mut Lanes,
        ctx: &mut Ctx<'_>,
        state: &mut LoopState,
    ) -> Result<LoopExit, RunError> {
        self.loop_region(program, entry, lanes, ctx, state)
    }
}
