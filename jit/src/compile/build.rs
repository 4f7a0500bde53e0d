//! Building one function: the target ISA, a clause's CLIF (its shape: the
//! bodies and how lookups reach memory), the guard that turns a lowering
//! panic into a reason, and defining it in a module.

use super::outline::outlined_for;
use super::{JitError, JitOptions, OptLevel};
use crate::host::check_features;
use crate::ir::{FcOp, Program, Term};
use crate::lanewise::lanewise;
use crate::lower::{
    Body, Lookups, OutlinedSource, PcMarks, has_full_body, lookups_of, lower_clause,
};
use crate::regions::LoopRegion;
use crate::state::ClauseFn;
use cranelift_codegen::Context;
use cranelift_codegen::ir::{AbiParam, Function, Signature, UserFuncName, types};
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{FuncId, Linkage, Module, default_libcall_names};
use std::cell::RefCell;

/// A module for code compiled with `isa`, its code in pooled pages
/// ([`super::memory`]).
pub(super) fn new_module(isa: OwnedTargetIsa) -> JITModule {
    let mut builder = JITBuilder::with_isa(isa, default_libcall_names());
    builder.memory_provider(Box::new(super::memory::PooledMemory::new()));
    JITModule::new(builder)
}

/// Checks `opts` and the host for compilation.
pub(super) fn check_options(opts: JitOptions) -> Result<(), JitError> {
    check_features()?;
    if !matches!(opts.quads_per_iter, 0 | 1 | 2 | 4) {
        return Err(JitError::Options(format!(
            "quads per iteration must be 1, 2 or 4 (0: per clause), not {}",
            opts.quads_per_iter
        )));
    }
    Ok(())
}

/// The target ISA for code of `quick` tier ([`super::Tier::Quick`]:
/// single-pass register allocation, no e-graph pass) or else optimised at
/// `opt_level`.
pub(super) fn build_isa(opt_level: OptLevel, quick: bool) -> Result<OwnedTargetIsa, JitError> {
    let mut flags = settings::builder();
    let set = |f: &mut settings::Builder, k: &str, v: &str| {
        f.set(k, v)
            .map_err(|e| JitError::Setup(format!("{k}={v}: {e}")))
    };
    if quick {
        set(&mut flags, "opt_level", "none")?;
        set(&mut flags, "regalloc_algorithm", "single_pass")?;
    } else {
        set(&mut flags, "opt_level", opt_level.setting())?;
    }
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

thread_local! {
    /// A compiling thread's Cranelift contexts, kept between programs:
    /// their buffers (the register allocator's above all) are then
    /// allocated once per thread instead of once per program.
    static SCRATCH: RefCell<Option<Box<ScratchParts>>> = const { RefCell::new(None) };
}

type ScratchParts = (Context, FunctionBuilderContext);

/// This thread's kept Cranelift contexts while the value lives (fresh ones
/// where another `Scratch` holds them); given back when dropped, cleared.
pub(super) struct Scratch(Option<Box<ScratchParts>>);

impl Scratch {
    pub(super) fn take() -> Self {
        let kept = SCRATCH.with(|s| s.borrow_mut().take());
        Scratch(Some(kept.unwrap_or_else(|| {
            Box::new((Context::new(), FunctionBuilderContext::new()))
        })))
    }

    /// The function context and the builder context.
    pub(super) fn parts(&mut self) -> (&mut Context, &mut FunctionBuilderContext) {
        let (ctx, fctx) = &mut **self.0.as_mut().expect("held until dropped");
        (ctx, fctx)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // A context a panic ran through is not kept.
        if let Some(mut parts) = self.0.take()
            && !std::thread::panicking()
        {
            parts.0.clear();
            SCRATCH.with(|s| *s.borrow_mut() = Some(parts));
        }
    }
}

pub(super) fn clause_signature(module: &JITModule) -> Signature {
    let ptr = module.target_config().pointer_type();
    let mut sig = module.make_signature();
    for _ in 0..3 {
        sig.params.push(AbiParam::new(ptr));
    }
    sig.returns.push(AbiParam::new(types::I32));
    sig
}

/// Builds the CLIF of clause `ci` (before optimisation) into `func`
/// (cleared first, its buffers reused) and returns the instruction marks
/// for annotated printing; a lowering that panics (a bug in ctm) is the
/// reason the clause is not compiled.
pub(super) fn build_function(
    module: &JITModule,
    program: &Program,
    (ci, shape): (usize, (Body, Lookups)),
    opts: JitOptions,
    (fctx, func): (&mut FunctionBuilderContext, &mut Function),
) -> Result<PcMarks, String> {
    func.clear();
    func.name = UserFuncName::user(0, ci as u32);
    func.signature = clause_signature(module);
    guarded(fctx, outlined_for(module.isa(), program), |fctx| {
        let mut b = FunctionBuilder::new(func, fctx);
        let ptr = module.target_config().pointer_type();
        let cc = module.target_config().default_call_conv;
        let marks = lower_clause(
            &mut b,
            &program.clauses[ci],
            opts.clause_quads(),
            (shape.0, shape.1, program),
            ptr,
            cc,
        );
        b.finalize(module.target_config());
        marks
    })
}

/// Runs `lower` (which builds a function's CLIF with `fctx`), its
/// transcendentals calls to `outlined`'s functions where given (quick code:
/// [`super::outline`]); a panic there — a bug in ctm's lowering — becomes
/// an error naming the instruction the lowering was at, and `fctx` is
/// replaced by a fresh one.
pub(super) fn guarded<T>(
    fctx: &mut FunctionBuilderContext,
    outlined: Option<OutlinedSource>,
    lower: impl FnOnce(&mut FunctionBuilderContext) -> T,
) -> Result<T, String> {
    crate::lower::take_lowering_at();
    let _outlining = crate::lower::outlining(outlined);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| lower(&mut *fctx)));
    r.map_err(|payload| {
        *fctx = FunctionBuilderContext::new();
        let why = match (
            payload.downcast_ref::<&str>(),
            payload.downcast_ref::<String>(),
        ) {
            (Some(s), _) => (*s).to_string(),
            (_, Some(s)) => s.clone(),
            _ => "no message".to_string(),
        };
        let at = match crate::lower::take_lowering_at() {
            Some(pc) => format!(" at instruction {pc}"),
            None => String::new(),
        };
        format!("the lowering panicked{at}: {why} (a bug in ctm)")
    })
}

/// The bodies clause `ci`'s eagerly compiled function has: both where a
/// loop region's lock-step driver calls it (the driver cannot switch
/// functions) — the general body alone where that driver is only the
/// fallback of a lane-wise region —, the full-batch body alone where the
/// clause has one, else the general body. Lookups read memory directly
/// where they can ([`lookups_of`]); a region's clauses can (regions
/// make no uncached read or write), and the runtime runs a region only
/// where every input it looks up has a descriptor.
pub(super) fn shape_of(program: &Program, regions: &[LoopRegion], ci: usize) -> (Body, Lookups) {
    let clause = &program.clauses[ci];
    let lookups = lookups_of(clause);
    if regions.iter().any(|r| r.clauses.contains(&(ci as u32))) {
        // The lock-step driver is only the fallback of a lane-wise region.
        if lanewise_only(program, regions, ci) {
            (Body::General, lookups)
        } else {
            (Body::Both, lookups)
        }
    } else {
        if has_full_body(clause) {
            (Body::Full, lookups)
        } else {
            (Body::General, lookups)
        }
    }
}

/// Whether `region` holds an IF, ELSE or ENDIF (a JUMP; every branch region
/// does): its driver then holds its clauses' bodies.
pub(super) fn branches(program: &Program, region: &LoopRegion) -> bool {
    region.clauses.iter().any(|&ci| {
        matches!(&program.clauses[ci as usize].term, Term::Fc { fc, .. } if fc.op == FcOp::Jump)
    })
}

/// Whether clause `ci` belongs to regions with IF/ELSE alone, whose
/// drivers hold its body ([`branches`]): its own body serves only the
/// shim where a driver cannot run (compiled on first use:
/// [`super::ClauseCode::Deferred`]).
pub(super) fn in_drivers_only(program: &Program, regions: &[LoopRegion], ci: usize) -> bool {
    let mut holding = regions
        .iter()
        .filter(|r| r.clauses.contains(&(ci as u32)))
        .peekable();
    holding.peek().is_some() && holding.all(|r| branches(program, r))
}

/// Whether clause `ci` belongs to one loop region alone, one whose lanes
/// are independent: the lane-wise body runs it, and its own body serves
/// only the lock-step driver and the shim where that body cannot run
/// (compiled on first use: [`super::ClauseCode::Deferred`]).
pub(super) fn lanewise_only(program: &Program, regions: &[LoopRegion], ci: usize) -> bool {
    let mut holding = regions.iter().filter(|r| r.clauses.contains(&(ci as u32)));
    match (holding.next(), holding.next()) {
        (Some(first), None) => lanewise(program, first).is_some(),
        _ => false,
    }
}

/// Declares and defines the function in `ctx` as `name`; a lowering gap in
/// Cranelift (an error or a panic) becomes the reason.
pub(super) fn define(
    module: &mut JITModule,
    ctx: &mut Context,
    name: &str,
) -> Result<FuncId, String> {
    let id = module
        .declare_function(name, Linkage::Local, &ctx.func.signature)
        .map_err(|e| e.to_string())?;
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        module
            .define_function(id, ctx)
            .map_err(|e| format!("{e:?}"))
    }))
    .map_err(|_| "the code generator panicked".to_string())??;
    Ok(id)
}

/// The finalised clause function `id` of `module`.
pub(super) fn clause_fn(module: &JITModule, id: FuncId) -> ClauseFn {
    let p = module.get_finalized_function(id);
    // SAFETY: clause functions are built with `clause_signature`, which is
    // `ClauseFn`'s ABI on this host.
    unsafe { std::mem::transmute::<*const u8, ClauseFn>(p) }
}

/// Compiles clause `ci` with `shape` for `isa`, in a module of its own.
pub(super) fn compile_one(
    program: &Program,
    ci: usize,
    (opts, isa): (JitOptions, OwnedTargetIsa),
    shape: (Body, Lookups),
) -> Result<(JITModule, ClauseFn), String> {
    let mut module = new_module(isa);
    let mut scratch = Scratch::take();
    let (ctx, fctx) = scratch.parts();
    build_function(&module, program, (ci, shape), opts, (fctx, &mut ctx.func))?;
    let id = define(&mut module, ctx, &format!("clause{ci}"))?;
    module.finalize_definitions().map_err(|e| e.to_string())?;
    let f = clause_fn(&module, id);
    Ok((module, f))
}
