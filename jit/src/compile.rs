//! Compiling programs to native code: one Cranelift JIT module per program,
//! one function per clause ([`crate::lower`]), and a process-wide code cache
//! keyed by the program's content (`DESIGN.md`, decisions).
//!
//! A clause Cranelift cannot compile is not an error: it is recorded as a
//! fallback with its reason and the runtime interprets it (counted and
//! reported). Compiled code never changes after [`compile`] returns; the
//! module's memory is freed when the last [`Compiled`] handle is dropped.

use crate::host::{MissingFeatures, check_features};
use crate::ir::Program;
use crate::lower::{PcMarks, lower_clause, lower_loop};
use crate::regions::{LoopRegion, loop_regions};
use crate::state::{ClauseFn, LoopFn};
use cranelift_codegen::ir::{AbiParam, Function, Signature, UserFuncName, types};
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_codegen::write::{FuncWriter, PlainWriter};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{FuncId, Linkage, Module, default_libcall_names};
use std::collections::hash_map::DefaultHasher;
use std::fmt::Write as _;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Cranelift's optimisation level.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum OptLevel {
    /// No optimisation passes.
    None,
    /// Optimise for speed (the default).
    #[default]
    Speed,
}

impl OptLevel {
    fn setting(self) -> &'static str {
        match self {
            OptLevel::None => "none",
            OptLevel::Speed => "speed",
        }
    }
}

/// How clauses are compiled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct JitOptions {
    /// Cranelift's optimisation level.
    pub opt_level: OptLevel,
    /// Quads processed per loop iteration: 1, 2 or 4 (clauses with texture
    /// operations always take whole groups of 4).
    pub quads_per_iter: u8,
}

impl Default for JitOptions {
    /// Speed, one quad per iteration: measured fastest (README, benchmarks)
    /// — wider batches spill more than they gain — and 4× less code.
    fn default() -> Self {
        JitOptions {
            opt_level: OptLevel::Speed,
            quads_per_iter: 1,
        }
    }
}

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
}

/// One clause's code.
#[derive(Clone, Debug)]
pub enum ClauseCode {
    /// Compiled.
    Native(ClauseFn),
    /// Not compiled; the runtime interprets it. The reason says why.
    Fallback(String),
}

/// A compiled program.
pub struct Compiled {
    module: Option<JITModule>,
    clauses: Vec<ClauseCode>,
    /// Compiled loop regions ([`crate::regions`]).
    loops: Vec<(LoopRegion, LoopFn)>,
    /// Time spent building and compiling.
    pub compile_time: Duration,
    /// DPP instructions the clauses cover.
    pub instructions: u32,
    /// Bytes of machine code.
    pub code_bytes: usize,
}

// SAFETY: after `compile` returns, the module is never used again except to
// free its memory on drop; the code it holds is immutable and the function
// pointers are plain addresses, callable from any thread.
unsafe impl Send for Compiled {}
// SAFETY: as above — shared references only read `clauses`.
unsafe impl Sync for Compiled {}

impl Drop for Compiled {
    fn drop(&mut self) {
        if let Some(m) = self.module.take() {
            // SAFETY: function pointers are only handed out through `&self`
            // (`Compiled::clause`); engines hold an `Arc<Compiled>` while
            // they call them, so none is in use once the last handle drops.
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

    /// The compiled loop region whose body starts at `pc`, if any: its index
    /// and description.
    pub fn loop_at(&self, pc: u16) -> Option<(usize, &LoopRegion)> {
        self.loops
            .iter()
            .enumerate()
            .find(|(_, (r, _))| r.start == pc)
            .map(|(k, (r, _))| (k, r))
    }

    /// The code of loop region `k` (see [`Compiled::loop_at`]).
    pub fn loop_fn(&self, k: usize) -> LoopFn {
        self.loops[k].1
    }

    /// Loop region `k`.
    pub fn loop_region(&self, k: usize) -> &LoopRegion {
        &self.loops[k].0
    }

    /// Number of clauses.
    pub fn len(&self) -> usize {
        self.clauses.len()
    }

    /// True if the program has no clauses.
    pub fn is_empty(&self) -> bool {
        self.clauses.is_empty()
    }

    /// Number of clauses left to the interpreter.
    pub fn fallbacks(&self) -> usize {
        self.clauses
            .iter()
            .filter(|c| matches!(c, ClauseCode::Fallback(_)))
            .count()
    }
}

/// The target ISA for `opts`, built once per optimisation level and shared
/// by every compilation (host detection and backend set-up are not free).
fn make_isa(opts: JitOptions) -> Result<OwnedTargetIsa, JitError> {
    check_features()?;
    if !matches!(opts.quads_per_iter, 1 | 2 | 4) {
        return Err(JitError::Options(format!(
            "quads per iteration must be 1, 2 or 4, not {}",
            opts.quads_per_iter
        )));
    }
    static ISAS: [OnceLock<Result<OwnedTargetIsa, JitError>>; 2] =
        [OnceLock::new(), OnceLock::new()];
    ISAS[opts.opt_level as usize]
        .get_or_init(|| build_isa(opts.opt_level))
        .clone()
}

fn build_isa(opt_level: OptLevel) -> Result<OwnedTargetIsa, JitError> {
    let mut flags = settings::builder();
    let set = |f: &mut settings::Builder, k: &str, v: &str| {
        f.set(k, v)
            .map_err(|e| JitError::Setup(format!("{k}={v}: {e}")))
    };
    set(&mut flags, "opt_level", opt_level.setting())?;
    set(&mut flags, "is_pic", "false")?;
    set(
        &mut flags,
        "enable_verifier",
        if cfg!(debug_assertions) {
            "true"
        } else {
            "false"
        },
    )?;
    let isa = cranelift_native::builder().map_err(|e| JitError::Setup(e.to_string()))?;
    isa.finish(settings::Flags::new(flags))
        .map_err(|e| JitError::Setup(e.to_string()))
}

fn clause_signature(module: &JITModule) -> Signature {
    let ptr = module.target_config().pointer_type();
    let mut sig = module.make_signature();
    for _ in 0..3 {
        sig.params.push(AbiParam::new(ptr));
    }
    sig.returns.push(AbiParam::new(types::I32));
    sig
}

/// Builds the CLIF of clause `ci` (before optimisation) and the
/// instruction marks for annotated printing.
fn build_function(
    module: &JITModule,
    program: &Program,
    ci: usize,
    opts: JitOptions,
    fctx: &mut FunctionBuilderContext,
) -> (Function, PcMarks) {
    let sig = clause_signature(module);
    let mut func = Function::with_name_signature(UserFuncName::user(0, ci as u32), sig);
    let marks = {
        let mut b = FunctionBuilder::new(&mut func, fctx);
        let ptr = module.target_config().pointer_type();
        let cc = module.target_config().default_call_conv;
        let marks = lower_clause(
            &mut b,
            &program.clauses[ci],
            usize::from(opts.quads_per_iter),
            ptr,
            cc,
        );
        b.finalize(module.target_config());
        marks
    };
    (func, marks)
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
/// };
/// if ctm_jit::host::check_features().is_ok() {
///     let code = compile(&program, JitOptions::default()).unwrap();
///     assert_eq!((code.len(), code.fallbacks()), (1, 0));
/// }
/// ```
pub fn compile(program: &Program, opts: JitOptions) -> Result<Compiled, JitError> {
    let start = Instant::now();
    let isa = make_isa(opts)?;
    let mut module = JITModule::new(JITBuilder::with_isa(isa, default_libcall_names()));
    let mut fctx = FunctionBuilderContext::new();
    let mut ctx = module.make_context();
    let mut ids = Vec::with_capacity(program.clauses.len());
    let mut code_bytes = 0;
    for ci in 0..program.clauses.len() {
        let (func, _) = build_function(&module, program, ci, opts, &mut fctx);
        ctx.clear();
        ctx.func = func;
        let name = format!("clause{ci}");
        let outcome = module
            .declare_function(&name, Linkage::Local, &ctx.func.signature)
            .map_err(|e| e.to_string())
            .and_then(|id| {
                // A lowering gap in Cranelift panics; keep it to this clause.
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    module
                        .define_function(id, &mut ctx)
                        .map_err(|e| format!("{e:?}"))
                }))
                .map_err(|_| "the code generator panicked".to_string())?
                .map(|()| id)
            });
        if let Some(code) = ctx.compiled_code() {
            code_bytes += code.code_buffer().len();
        }
        ids.push(outcome);
    }
    // Loop regions whose clauses all compiled get a driver each; one that
    // cannot be compiled is simply left to the shim.
    let mut loop_ids = Vec::new();
    for region in loop_regions(program) {
        let fns: Option<Vec<FuncId>> = region
            .clauses
            .iter()
            .map(|&ci| ids[ci as usize].as_ref().ok().copied())
            .collect();
        let Some(fns) = fns else { continue };
        let mut sig = clause_signature(&module);
        sig.params
            .push(AbiParam::new(module.target_config().pointer_type()));
        let name = format!("loop{}", region.start);
        let mut func =
            Function::with_name_signature(UserFuncName::user(1, loop_ids.len() as u32), sig);
        {
            let mut b = FunctionBuilder::new(&mut func, &mut fctx);
            let refs: Vec<_> = fns
                .iter()
                .map(|&id| module.declare_func_in_func(id, b.func))
                .collect();
            lower_loop(&mut b, program, &region, &refs);
            b.finalize(module.target_config());
        }
        ctx.clear();
        ctx.func = func;
        let defined = module
            .declare_function(&name, Linkage::Local, &ctx.func.signature)
            .ok()
            .filter(|&id| {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    module.define_function(id, &mut ctx).is_ok()
                }))
                .unwrap_or(false)
            });
        if let Some(code) = ctx.compiled_code() {
            code_bytes += code.code_buffer().len();
        }
        if let Some(id) = defined {
            loop_ids.push((region, id));
        }
    }
    module
        .finalize_definitions()
        .map_err(|e| JitError::Module(e.to_string()))?;
    let loops = loop_ids
        .into_iter()
        .map(|(region, id)| {
            let p = module.get_finalized_function(id);
            // SAFETY: built with `clause_signature` plus a pointer: the
            // `LoopFn` ABI on this host.
            let f = unsafe { std::mem::transmute::<*const u8, LoopFn>(p) };
            (region, f)
        })
        .collect();
    let clauses = ids
        .into_iter()
        .map(|r| match r {
            Ok(id) => {
                let p = module.get_finalized_function(id);
                // SAFETY: the function was built with `clause_signature`,
                // which is `ClauseFn`'s ABI on this host.
                ClauseCode::Native(unsafe { std::mem::transmute::<*const u8, ClauseFn>(p) })
            }
            Err(reason) => ClauseCode::Fallback(reason),
        })
        .collect();
    Ok(Compiled {
        module: Some(module),
        clauses,
        loops,
        compile_time: start.elapsed(),
        instructions: program.clauses.iter().map(|c| u32::from(c.len)).sum(),
        code_bytes,
    })
}

/// Prints the CLIF of every clause, each DPP instruction's text (from
/// `describe(pc)`) as a comment above the code lowered from it.
pub fn clif(
    program: &Program,
    opts: JitOptions,
    describe: &dyn Fn(u16) -> String,
) -> Result<String, JitError> {
    let isa = make_isa(opts)?;
    let module = JITModule::new(JITBuilder::with_isa(isa, default_libcall_names()));
    let mut fctx = FunctionBuilderContext::new();
    let mut out = String::new();
    for (ci, clause) in program.clauses.iter().enumerate() {
        let (func, marks) = build_function(&module, program, ci, opts, &mut fctx);
        let _ = writeln!(
            out,
            "; clause {ci}: instructions {}..{} ({} values), then {:?}",
            clause.start,
            clause.start + clause.len,
            clause.values,
            clause.term
        );
        let mut w = Annotated {
            marks: marks.into_iter().collect(),
            describe,
        };
        cranelift_codegen::write::decorate_function(&mut w, &mut out, &func)
            .map_err(|e| JitError::Module(e.to_string()))?;
        out.push('\n');
    }
    Ok(out)
}

struct Annotated<'a> {
    marks: std::collections::HashMap<cranelift_codegen::ir::Inst, u16>,
    describe: &'a dyn Fn(u16) -> String,
}

impl FuncWriter for Annotated<'_> {
    fn write_block_header(
        &mut self,
        w: &mut dyn std::fmt::Write,
        func: &Function,
        block: cranelift_codegen::ir::Block,
        indent: usize,
    ) -> std::fmt::Result {
        PlainWriter.write_block_header(w, func, block, indent)
    }

    fn write_instruction(
        &mut self,
        w: &mut dyn std::fmt::Write,
        func: &Function,
        aliases: &cranelift_codegen::entity::SecondaryMap<
            cranelift_codegen::ir::Value,
            Vec<cranelift_codegen::ir::Value>,
        >,
        inst: cranelift_codegen::ir::Inst,
        indent: usize,
    ) -> std::fmt::Result {
        if let Some(&pc) = self.marks.get(&inst) {
            for line in (self.describe)(pc).lines() {
                writeln!(w, "{:indent$}; @{pc} {line}", "")?;
            }
        }
        PlainWriter.write_instruction(w, func, aliases, inst, indent)
    }
}

// ----------------------------------------------------------------------------
// Code cache

/// Most programs kept compiled at once.
const CACHE_ENTRIES: usize = 64;

/// A compiled program, or the compilation that is producing it.
type Slot = Arc<OnceLock<Result<Arc<Compiled>, JitError>>>;

struct Entry {
    hash: u64,
    opts: JitOptions,
    program: Arc<Program>,
    slot: Slot,
}

static CACHE: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

/// The hash the code cache keys programs by.
pub fn program_hash(program: &Program) -> u64 {
    let mut h = DefaultHasher::new();
    program.hash(&mut h);
    h.finish()
}

/// The compiled code of `program` from the process-wide cache, compiling it
/// on a miss. The flag says whether this call compiled it.
///
/// Entries are keyed by [`program_hash`] and the options and confirmed by
/// comparing the whole program; the least recently used entry is dropped
/// beyond 64 programs. Threads asking for the same program wait for one
/// compilation; different programs compile in parallel.
pub fn cached(program: &Program, opts: JitOptions) -> Result<(Arc<Compiled>, bool), JitError> {
    let hash = program_hash(program);
    let slot = {
        let mut cache = CACHE.lock().unwrap_or_else(|p| p.into_inner());
        let found = cache
            .iter()
            .position(|e| e.hash == hash && e.opts == opts && *e.program == *program);
        let entry = match found {
            Some(k) => cache.remove(k),
            None => {
                if cache.len() >= CACHE_ENTRIES {
                    cache.remove(0);
                }
                Entry {
                    hash,
                    opts,
                    program: Arc::new(program.clone()),
                    slot: Slot::default(),
                }
            }
        };
        let slot = entry.slot.clone();
        cache.push(entry);
        slot
    };
    let mut fresh = false;
    let code = slot.get_or_init(|| {
        fresh = true;
        compile(program, opts).map(Arc::new)
    });
    code.clone().map(|c| (c, fresh))
}
