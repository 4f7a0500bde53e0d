//! Compiling programs to native code: one Cranelift JIT module per program,
//! one function per clause (`crate::lower`), and a process-wide code cache
//! keyed by the program's content (`docs/design.md`, decisions).
//!
//! A clause with a full-batch body (`crate::lower`) that no loop region
//! calls is compiled with that body alone ([`ClauseCode::Full`]): the
//! runtime calls it for groups whose live batches are all full, which is
//! nearly every group of most kernels. Its general body is compiled the
//! first time a group needs it ([`Compiled::general`]), so most programs
//! never pay for it. A program that runs in compiled strips compiles none
//! of its clauses with itself: each is compiled, with the body it would
//! have had, the first time a row its strip does not run needs it
//! ([`ClauseCode::Later`]; the `later` module).
//!
//! A clause Cranelift cannot compile is not an error: it is recorded as a
//! fallback with its reason and the runtime interprets it (counted and
//! reported). Compiled code never changes once published; the modules'
//! memory is freed when the last [`Compiled`] handle is dropped.

use crate::host::MissingFeatures;
use crate::ir::Program;
use crate::lower::{Body, Lookups, batch_quads, direct_inputs, writes_inactive};
use crate::regions::{LoopRegion, loop_regions};
use crate::state::{ClauseFn, Lanes};
use build::{build_function, clause_fn, define, shape_of};
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_jit::JITModule;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Why nothing could be compiled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JitError {
    /// The host CPU lacks a feature compiled code needs.
    #[error(transparent)]
    Host(#[from] MissingFeatures),
    /// Cranelift could not be set up for this host.
    #[error("cannot set up the code generator for this host: {0}")]
    Setup(String),
    /// An invalid option.
    #[error("invalid JIT option: {0}")]
    Options(String),
    /// The module could not be finalised.
    #[error("cannot finalise compiled code: {0}")]
    Module(String),
    /// The program is not valid IR (hand-built or corrupted): nothing is
    /// compiled for it.
    #[error("invalid IR: {0}")]
    Invalid(#[from] crate::ir::VerifyError),
}

/// One clause's code.
#[derive(Clone, Debug)]
pub enum ClauseCode {
    /// Compiled: runs any group.
    Native(ClauseFn),
    /// Compiled for groups whose live batches are all full; other groups
    /// take the general body ([`Compiled::general`]).
    Full(FullBatches),
    /// Compiled on first use ([`Compiled::general`]): a clause of a loop
    /// region that runs lane-wise, or whose driver holds its body (IF/ELSE
    /// inside), needed only where that code cannot run.
    Deferred,
    /// Compiled on first use with its own body ([`Compiled::own`]): a
    /// clause of a program that runs in compiled strips, needed only for
    /// rows a strip does not run.
    Later,
    /// Not compiled; the runtime interprets it. The reason says why.
    Fallback(String),
}

/// A clause compiled with its full-batch body alone.
#[derive(Clone, Copy, Debug)]
pub struct FullBatches {
    /// The code.
    pub code: ClauseFn,
    /// Batch width in quads.
    quads: u8,
    /// Whether a batch is live when a lane runs (else: runs and is active).
    writes_inactive: bool,
}

impl FullBatches {
    /// `code`, the full-batch body of `clause` compiled with `opts` for
    /// `lookups`.
    fn new(code: ClauseFn, clause: &crate::ir::Clause, opts: JitOptions, lookups: Lookups) -> Self {
        FullBatches {
            code,
            quads: batch_quads(clause, opts.clause_quads(), lookups) as u8,
            writes_inactive: writes_inactive(clause),
        }
    }

    /// Whether `lanes` suits the full-batch code: every batch that the
    /// clause would not skip has all its lanes running and active.
    ///
    /// ```
    /// use ctm_jit::compile::{ClauseCode, JitOptions, OwnBody, compile};
    /// use ctm_jit::ir::{Clause, Gate, Index, Node, Op, Program, Term, V};
    /// use ctm_jit::state::Lanes;
    /// let node = |op| Node { pc: 0, op };
    /// let clause = Clause {
    ///     start: 0, len: 1, values: 1, term: Term::End,
    ///     nodes: vec![
    ///         node(Op::Temp { dst: V(0), index: Index { base: 1, rel: false }, chan: 0 }),
    ///         node(Op::SetTemp { index: Index { base: 2, rel: false }, chan: 0, v: V(0), gate: Gate::ACTIVE, fetched: false }),
    ///     ],
    /// };
    /// let program = Program { clauses: vec![clause], entry: vec![Some(0)], len: 1, early_exit: true, forms: Default::default(), uncached_unorm: None, narrow: None };
    /// if ctm_jit::host::check_features().is_ok() {
    ///     // One quad per batch (a batch is then one quad of the group).
    ///     let opts = JitOptions { quads_per_iter: 1, ..JitOptions::default() };
    ///     let code = compile(&program, opts).unwrap();
    ///     // The program runs in compiled strips: its clause's own body is
    ///     // compiled on first use.
    ///     let full = match code.clause(0) {
    ///         ClauseCode::Full(full) => *full,
    ///         ClauseCode::Later => match code.own(0, &program).0 {
    ///             Ok(OwnBody::Full(full)) => full,
    ///             other => panic!("not a full-batch body: {other:?}"),
    ///         },
    ///         other => panic!("not a full-batch clause: {other:?}"),
    ///     };
    ///     let mut lanes = Lanes::new_boxed();
    ///     lanes.reset(4, 3);
    ///     (lanes.running, lanes.active) = (0xFFFF, 0xFFFF);
    ///     assert!(full.fits(&lanes));
    ///     lanes.active = 0xFFF7; // one lane of quad 0 switched off
    ///     assert!(!full.fits(&lanes));
    ///     lanes.running = 0xFFF0; // quad 0 finished: skipped, not partial
    ///     lanes.active = 0xFFF0;
    ///     assert!(full.fits(&lanes));
    /// }
    /// ```
    #[inline]
    pub fn fits(&self, lanes: &Lanes) -> bool {
        let n = 4 * u32::from(self.quads);
        let batch = crate::state::lanes_mask(n as usize);
        let both = lanes.running & lanes.active;
        let live = if self.writes_inactive {
            lanes.running
        } else {
            both
        };
        (0..lanes.quads * 4)
            .step_by(n as usize)
            .all(|s| (live >> s) & batch == 0 || (both >> s) & batch == batch)
    }
}

/// A compiled program.
pub struct Compiled {
    module: Option<JITModule>,
    clauses: Vec<ClauseCode>,
    /// General bodies of [`ClauseCode::Full`] clauses (and of
    /// [`ClauseCode::Later`] ones whose own body is full-batch), compiled
    /// on first use.
    general: Vec<OnceLock<Result<ClauseFn, String>>>,
    /// Own bodies of [`ClauseCode::Later`] clauses, compiled on first use.
    own: Vec<OnceLock<Result<OwnBody, String>>>,
    /// Per clause, the inputs its code reads directly (see
    /// [`Compiled::direct_inputs`]).
    direct: Vec<u16>,
    /// Bodies that look everything up through the runtime, compiled on
    /// first use.
    host: Vec<OnceLock<Result<ClauseFn, String>>>,
    /// Bodies that read 2×2 gathers too, compiled on first use.
    gathered: Vec<OnceLock<Result<ClauseFn, String>>>,
    /// The modules holding the lazily compiled bodies.
    general_modules: Mutex<Vec<JITModule>>,
    opts: JitOptions,
    /// The target ISA the lazily compiled bodies use.
    isa: OwnedTargetIsa,
    /// The program's strip shape ([`crate::strip`]), and its code,
    /// compiled on first use.
    strip_shape: Option<crate::strip::StripShape>,
    /// Its two forms ([`Compiled::strip`]).
    strip: [OnceLock<Result<(crate::state::StripFn, u32), String>>; 2],
    /// Which form is faster, as measured.
    strip_tuning: Mutex<strip::Tuning>,
    /// The form chosen, plus one (0: not yet), read without the lock.
    strip_chosen: std::sync::atomic::AtomicU8,
    /// Whether the options leave the strip's form to measurement.
    strip_tunable: bool,
    /// The target optimised for speed (the strip's second form).
    speed_isa: OwnedTargetIsa,
    /// Compiled loop regions ([`crate::regions`]).
    loops: Vec<loops::CompiledLoop>,
    /// Why loop regions (or their lane-wise bodies) were not compiled.
    loop_fallbacks: Vec<String>,
    /// Time spent building and compiling.
    pub compile_time: Duration,
    /// DPP instructions the clauses cover.
    pub instructions: u32,
    /// Bytes of machine code.
    pub code_bytes: usize,
    /// Quick code's way to its optimised tier ([`tier`]); `None` for
    /// code that stays as it is.
    upgrade: Option<tier::Upgrade>,
}

// SAFETY: after `compile` returns, the module is never used again except to
// free its memory on drop; the code it holds is immutable and the function
// pointers are plain addresses, callable from any thread.
unsafe impl Send for Compiled {}
// SAFETY: as above. Through shared references the code is read, and
// bodies compiled on first use are published once per slot (`OnceLock`),
// their modules kept behind a `Mutex`, each finalised before its function
// pointer is handed out; the target ISA they compile with is shared
// immutable state (`OwnedTargetIsa` is an `Arc` of a `Send + Sync` ISA).
unsafe impl Sync for Compiled {}

impl Drop for Compiled {
    fn drop(&mut self) {
        if let Some(m) = self.module.take() {
            // SAFETY: function pointers are only handed out through `&self`
            // (`Compiled::clause`); engines hold an `Arc<Compiled>` while
            // they call them, so none is in use once the last handle drops.
            unsafe { m.free_memory() };
        }
        let lazy = self
            .general_modules
            .get_mut()
            .unwrap_or_else(|p| p.into_inner());
        for m in lazy.drain(..) {
            // SAFETY: as above, for the general bodies.
            unsafe { m.free_memory() };
        }
    }
}

impl std::fmt::Debug for Compiled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compiled")
            .field("clauses", &self.clauses.len())
            .field("fallbacks", &self.fallbacks())
            .field("compile_time", &self.compile_time)
            .finish()
    }
}

impl Compiled {
    /// The code of clause `i`.
    pub fn clause(&self, i: u32) -> &ClauseCode {
        &self.clauses[i as usize]
    }

    /// The inputs (bit `k` = input `k`) that clause `i`'s code reads from
    /// memory itself without asking: it may only run when the runtime
    /// handed over a descriptor ([`crate::state::TexTable::covers`]) for
    /// each, else [`Compiled::host_body`] runs instead. 0: no condition.
    pub fn direct_inputs(&self, i: u32) -> u16 {
        self.direct.get(i as usize).copied().unwrap_or(0)
    }

    /// The compiled loop region whose body starts at `pc`, if any: its index
    /// and description.
    pub fn loop_at(&self, pc: u16) -> Option<(usize, &LoopRegion)> {
        self.loops
            .iter()
            .enumerate()
            .find(|(_, l)| l.region.start == pc)
            .map(|(k, l)| (k, &l.region))
    }

    /// Number of compiled loop regions.
    pub fn loop_count(&self) -> usize {
        self.loops.len()
    }

    /// Loop region `k`.
    pub fn loop_region(&self, k: usize) -> &LoopRegion {
        &self.loops[k].region
    }

    /// Number of clauses.
    pub fn len(&self) -> usize {
        self.clauses.len()
    }

    /// True if the program has no clauses.
    pub fn is_empty(&self) -> bool {
        self.clauses.is_empty()
    }

    /// Why loop regions were left to the shim (or run only in lock step):
    /// one line per region, naming it. Empty when every region compiled.
    pub fn loop_fallbacks(&self) -> &[String] {
        &self.loop_fallbacks
    }

    /// Number of clauses left to the interpreter.
    pub fn fallbacks(&self) -> usize {
        self.clauses
            .iter()
            .filter(|c| matches!(c, ClauseCode::Fallback(_)))
            .count()
    }
}

/// Compiles every clause of `program`.
///
/// ```
/// use ctm_jit::compile::{compile, JitOptions};
/// use ctm_jit::ir::{Clause, Program, Term};
/// let program = Program {
///     clauses: vec![Clause { start: 0, len: 1, nodes: vec![], values: 0, term: Term::End }],
///     entry: vec![Some(0)],
///     len: 1,
///     early_exit: true,
///     forms: Default::default(),
///     uncached_unorm: None,
///     narrow: None,
/// };
/// if ctm_jit::host::check_features().is_ok() {
///     let code = compile(&program, JitOptions::default()).unwrap();
///     assert_eq!((code.len(), code.fallbacks()), (1, 0));
/// }
/// ```
///
/// Compiles with the target ISA of the process-wide cache
/// ([`CodeCache::global`]) and keeps nothing in it.
pub fn compile(program: &Program, opts: JitOptions) -> Result<Compiled, JitError> {
    CodeCache::global().compile(program, opts)
}

/// Compiles every clause of `program` (verified; `opts` resolved) for
/// `isa` (and keeps `speed_isa`, the same target optimised for speed, for
/// a strip's second form).
fn compile_with(
    program: &Program,
    opts: JitOptions,
    [isa, speed_isa]: [OwnedTargetIsa; 2],
) -> Result<Compiled, JitError> {
    let start = Instant::now();
    let mut module = build::new_module(isa.clone());
    let mut scratch = build::Scratch::take();
    let (ctx, fctx) = scratch.parts();
    let mut ids = Vec::with_capacity(program.clauses.len());
    let mut code_bytes = 0;
    let regions = loop_regions(program);
    let shapes: Vec<(Body, Lookups)> = (0..program.clauses.len())
        .map(|ci| shape_of(program, &regions, ci))
        .collect();
    // One body per loop region: the lane-wise one, or the driver that
    // holds its clauses' bodies (IF/ELSE inside); its clauses' own bodies
    // (and a lane-wise region's lock-step driver) are compiled on first
    // use.
    let region_only: Vec<bool> = (0..program.clauses.len())
        .map(|ci| {
            build::lanewise_only(program, &regions, ci)
                || build::in_drivers_only(program, &regions, ci)
        })
        .collect();
    // A program that runs in strips: everything else on first use too, as
    // its strip is (a run compiles what its rows take).
    let strip_shape = crate::strip::strip_shape(program);
    let later = strip_shape.is_some();
    let deferred: Vec<bool> = region_only.iter().map(|&d| d || later).collect();
    for (ci, &shape) in shapes.iter().enumerate() {
        if deferred[ci] {
            ids.push(Err(String::new()));
            continue;
        }
        ctx.clear();
        if let Err(why) = build_function(&module, program, (ci, shape), opts, (fctx, &mut ctx.func))
        {
            ids.push(Err(why));
            continue;
        }
        let outcome = define(&mut module, ctx, &format!("clause{ci}"));
        if let Some(code) = ctx.compiled_code() {
            code_bytes += code.code_buffer().len();
        }
        ids.push(outcome);
    }
    let parts = (&mut module, ctx, fctx);
    let (loop_ids, loop_fallbacks) = loops::compile_loops(
        program,
        (&ids, &deferred, later),
        opts,
        parts,
        &mut code_bytes,
    );
    module
        .finalize_definitions()
        .map_err(|e| JitError::Module(e.to_string()))?;
    let loops = loops::finished(&module, loop_ids);
    let clauses = ids
        .into_iter()
        .zip(&shapes)
        .enumerate()
        .map(|(ci, (r, &(body, lookups)))| match r {
            _ if region_only[ci] => ClauseCode::Deferred,
            _ if deferred[ci] => ClauseCode::Later,
            Ok(id) => {
                let code = clause_fn(&module, id);
                let clause = &program.clauses[ci];
                match body {
                    Body::Full => ClauseCode::Full(FullBatches::new(code, clause, opts, lookups)),
                    Body::Both | Body::General => ClauseCode::Native(code),
                }
            }
            Err(reason) => ClauseCode::Fallback(reason),
        })
        .collect();
    Ok(Compiled {
        module: Some(module),
        clauses,
        general: (0..program.clauses.len())
            .map(|_| OnceLock::new())
            .collect(),
        own: (0..program.clauses.len())
            .map(|_| OnceLock::new())
            .collect(),
        direct: shapes
            .iter()
            .zip(&program.clauses)
            .map(|(&(_, lookups), clause)| match lookups {
                Lookups::Direct => direct_inputs(clause).unwrap_or(0),
                _ => 0,
            })
            .collect(),
        host: (0..program.clauses.len())
            .map(|_| OnceLock::new())
            .collect(),
        gathered: (0..program.clauses.len())
            .map(|_| OnceLock::new())
            .collect(),
        general_modules: Mutex::new(Vec::new()),
        opts,
        isa,
        strip_shape,
        strip: [OnceLock::new(), OnceLock::new()],
        strip_tuning: Mutex::new(strip::Tuning::default()),
        strip_chosen: std::sync::atomic::AtomicU8::new(0),
        strip_tunable: false,
        speed_isa,
        loops,
        loop_fallbacks,
        compile_time: start.elapsed(),
        instructions: program.clauses.iter().map(|c| u32::from(c.len)).sum(),
        code_bytes,
        upgrade: None,
    })
}

mod build;
mod cache;
mod later;
mod loops;
mod memory;
mod options;
mod outline;
mod print;
mod strip;
mod tier;

pub use cache::{CodeCache, cached, program_hash};
pub use later::OwnBody;
pub use options::{JitOptions, OptLevel, Tier};
pub use print::clif;
pub use tier::MIN_TIER_UP_WORK;
