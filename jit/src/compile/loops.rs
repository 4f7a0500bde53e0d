//! Compiling loop regions: a lock-step driver for each region whose clauses
//! all compiled, and a lane-wise body where its lanes are independent
//! ([`crate::lanewise`]). A region with a lane-wise body gets that one body
//! at first: its clauses' own bodies and its driver, which serve only where
//! the lane-wise body cannot run, are compiled on first use
//! ([`compile_driver`]). A region with IF/ELSE inside gets one driver that
//! holds its clauses' general bodies; their own functions serve only the
//! shim, compiled on first use.

use super::build::{
    Scratch, branches, build_function, clause_signature, define, guarded, shape_of,
};
use super::{JitOptions, Tier};
use crate::ir::Program;
use crate::lanewise::{Lanewise, lanewise};
use crate::lower::{DriverBody, lower_lanewise, lower_loop, region_looks_up};
use crate::regions::{LoopRegion, loop_regions};
use crate::state::LoopFn;
use cranelift_codegen::Context;
use cranelift_codegen::ir::{AbiParam, Function, UserFuncName};
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::JITModule;
use cranelift_module::{FuncId, Module};
use std::sync::OnceLock;

/// A compiled loop region.
pub(super) struct CompiledLoop {
    pub(super) region: LoopRegion,
    /// Runs it in lock step ([`crate::lower`]'s driver): compiled with the
    /// program, or on first use where the region has a lane-wise body.
    pub(super) driver: OnceLock<Result<LoopFn, String>>,
    /// Runs it lane-wise ([`crate::lanewise`]), where it can: compiled with
    /// the program, or on first use for a program that runs in strips.
    pub(super) lanewise: Option<(Lanewise, OnceLock<Result<LoopFn, String>>)>,
}

/// A region's functions, defined but not yet finalised (none: compiled on
/// first use).
pub(super) type Defined = (
    LoopRegion,
    Option<FuncId>,
    Option<(Lanewise, Option<FuncId>)>,
);

/// Defines the functions of `program`'s loop regions in `module`, where
/// `ids` are its clauses' functions (or why they failed) and `deferred`
/// says which clauses are compiled on first use (those of regions with a
/// lane-wise body, whose drivers are too; all of them where `later`, the
/// program running in strips, and then the lane-wise bodies too); also
/// returns why each region (or lane-wise body) that could not be compiled
/// was not.
pub(super) fn compile_loops(
    program: &Program,
    (ids, deferred, later): (&[Result<FuncId, String>], &[bool], bool),
    opts: JitOptions,
    (module, ctx, fctx): (&mut JITModule, &mut Context, &mut FunctionBuilderContext),
    code_bytes: &mut usize,
) -> (Vec<Defined>, Vec<String>) {
    // Loop regions whose clauses all compiled get a driver each, and a
    // lane-wise function where their lanes are independent; one that
    // cannot be compiled is left to the shim, with its reason.
    let (mut loop_ids, mut failed) = (Vec::new(), Vec::new());
    for region in loop_regions(program) {
        let kind = if region.branch { "branch" } else { "loop" };
        let what = format!("{kind} region at instruction {}", region.start);
        let n = loop_ids.len() as u32;
        // A region with IF/ELSE has its clauses' bodies built into its
        // driver. Another with a clause left to first use has its driver
        // compiled then too (with every clause body it calls).
        let inline = branches(program, &region);
        let on_first_use = !inline && region.clauses.iter().any(|&ci| deferred[ci as usize]);
        let driver = if on_first_use {
            None
        } else {
            let fns: Result<Vec<Option<FuncId>>, u32> = region
                .clauses
                .iter()
                .map(|&ci| match inline {
                    true => Ok(None),
                    false => ids[ci as usize].as_ref().ok().copied().map(Some).ok_or(ci),
                })
                .collect();
            let fns = match fns {
                Ok(fns) => fns,
                Err(ci) => {
                    failed.push(format!("{what}: its clause {ci} is not compiled"));
                    continue;
                }
            };
            let name = format!("loop{}", region.start);
            match driver_function(module, fctx, 2 * n, (program, &region, &fns), opts)
                .and_then(|f| define_loop(module, ctx, &name, f, code_bytes))
            {
                Ok(id) => Some(id),
                Err(why) => {
                    failed.push(format!("{what}: {why}"));
                    continue;
                }
            }
        };
        let lanewise = lanewise(program, &region).and_then(|lw| {
            if later {
                return Some((lw, None));
            }
            let parts = (program, &region, &lw);
            let func = lanewise_function(module, fctx, 2 * n + 1, parts, opts);
            let name = format!("lanewise{}", region.start);
            match func.and_then(|f| define_loop(module, ctx, &name, f, code_bytes)) {
                Ok(id) => Some((lw, Some(id))),
                Err(why) => {
                    failed.push(format!("{what} (lane-wise body): {why}"));
                    None
                }
            }
        });
        loop_ids.push((region, driver, lanewise));
    }
    (loop_ids, failed)
}

/// The finalised functions of `defined`.
pub(super) fn finished(module: &JITModule, defined: Vec<Defined>) -> Vec<CompiledLoop> {
    let loop_fn = |id: FuncId| {
        let p = module.get_finalized_function(id);
        // SAFETY: built with `clause_signature` plus a pointer: the
        // `LoopFn` ABI on this host.
        unsafe { std::mem::transmute::<*const u8, LoopFn>(p) }
    };
    defined
        .into_iter()
        .map(|(region, driver, lanewise)| CompiledLoop {
            region,
            driver: match driver {
                Some(id) => OnceLock::from(Ok(loop_fn(id))),
                None => OnceLock::new(),
            },
            lanewise: lanewise.map(|(lw, id)| match id {
                Some(id) => (lw, OnceLock::from(Ok(loop_fn(id)))),
                None => (lw, OnceLock::new()),
            }),
        })
        .collect()
}

/// The lock-step driver of `region` (user index `index`), calling the
/// clause functions `fns`.
fn driver_function(
    module: &mut JITModule,
    fctx: &mut FunctionBuilderContext,
    index: u32,
    (program, region, fns): (&Program, &LoopRegion, &[Option<FuncId>]),
    opts: JitOptions,
) -> Result<Function, String> {
    loop_function(module, fctx, (index, program), |b, module| {
        let bodies: Vec<_> = fns
            .iter()
            .map(|id| match id {
                Some(id) => DriverBody::Call(module.declare_func_in_func(*id, b.func)),
                None => DriverBody::Inline {
                    w: opts.clause_quads(),
                    program,
                },
            })
            .collect();
        lower_loop(b, program, region, &bodies);
    })
}

/// The lock-step driver of `region` of `program` in a module of its own,
/// with the bodies of the region's clauses it calls: for a region whose
/// driver was left to first use. The error says why it cannot be
/// compiled (the shim then runs the region).
pub(super) fn compile_driver(
    program: &Program,
    region: &LoopRegion,
    (opts, isa): (JitOptions, OwnedTargetIsa),
) -> Result<(JITModule, LoopFn), String> {
    let mut module = region_module(program, region, isa)?;
    let regions = loop_regions(program);
    let mut scratch = Scratch::take();
    let (ctx, fctx) = scratch.parts();
    let mut fns = Vec::with_capacity(region.clauses.len());
    let inline = branches(program, region);
    for &ci in &region.clauses {
        let ci = ci as usize;
        if inline {
            fns.push(None);
            continue;
        }
        let shape = shape_of(program, &regions, ci);
        ctx.clear();
        build_function(&module, program, (ci, shape), opts, (fctx, &mut ctx.func))?;
        fns.push(Some(define(&mut module, ctx, &format!("clause{ci}"))?));
    }
    let func = driver_function(&mut module, fctx, 0, (program, region, &fns), opts)?;
    finish_loop(module, ctx, "loop", func)
}

/// The lane-wise body of `region` of `program` (analysed as `lw`) in a
/// module of its own: for a program that runs in strips, whose regions'
/// bodies serve only rows a strip does not run. The error says why it
/// cannot be compiled (the region then runs in lock step).
pub(super) fn compile_lanewise(
    program: &Program,
    region: &LoopRegion,
    lw: &Lanewise,
    (opts, isa): (JitOptions, OwnedTargetIsa),
) -> Result<(JITModule, LoopFn), String> {
    let mut module = region_module(program, region, isa)?;
    let mut scratch = Scratch::take();
    let (ctx, fctx) = scratch.parts();
    let func = lanewise_function(&mut module, fctx, 0, (program, region, lw), opts)?;
    finish_loop(module, ctx, "lanewise", func)
}

/// A module of its own for code of `region` compiled on first use, once
/// `program` is checked: the caller's word, verified like `compile`, and
/// holding the region's clauses.
fn region_module(
    program: &Program,
    region: &LoopRegion,
    isa: OwnedTargetIsa,
) -> Result<JITModule, String> {
    program.verify().map_err(|e| format!("invalid IR: {e}"))?;
    if region
        .clauses
        .iter()
        .any(|&ci| ci as usize >= program.clauses.len())
    {
        return Err("the region's clauses are not the program's".into());
    }
    Ok(super::build::new_module(isa))
}

/// Defines `func` (a [`LoopFn`]) as `name` in `module`, finalises it, and
/// returns the module with the function's code.
fn finish_loop(
    mut module: JITModule,
    ctx: &mut Context,
    name: &str,
    func: Function,
) -> Result<(JITModule, LoopFn), String> {
    let mut bytes = 0;
    let id = define_loop(&mut module, ctx, name, func, &mut bytes)?;
    module.finalize_definitions().map_err(|e| e.to_string())?;
    let p = module.get_finalized_function(id);
    // SAFETY: built with `clause_signature` plus a pointer: the `LoopFn`
    // ABI on this host.
    let f = unsafe { std::mem::transmute::<*const u8, LoopFn>(p) };
    Ok((module, f))
}

/// Quads per batch of a lane-wise region: the iterations of a batch form
/// one dependent chain per quad, so wide batches overlap them, as long as
/// their values fit the registers. A region that looks up (`looks_up`)
/// takes four quads where it has at most sixteen register channels, so
/// that more lookups are in flight; others take two. Mandelbrot (eight
/// channels, no lookups) once ran 1.2× faster at four quads than at two,
/// when every batch also carried its lanes' masks through the loop; with
/// the lanes as bits and no write-back of what nothing reads after the
/// loop, two quads run it 1.07× faster than four (59.6 → 55.4 ns per
/// pixel), while conv3x3 runs 1.5% slower at two. Quick code (`quick`)
/// takes two: a region's code is then about half the size, which compiled
/// Mandelbrot, matmul and conv3x3 1.3–1.5× faster, and ran them 3–10%
/// slower until the optimised code replaced it.
pub(super) fn lanewise_quads(lw: &Lanewise, quick: bool, looks_up: bool) -> usize {
    if looks_up && lw.regs.len() <= 16 && !quick {
        4
    } else {
        2
    }
}

/// A function of `program` with the [`LoopFn`] signature (user index
/// `index`), built by `build`; a lowering that panics (a bug in ctm) is
/// the error.
fn loop_function(
    module: &mut JITModule,
    fctx: &mut FunctionBuilderContext,
    (index, program): (u32, &Program),
    build: impl FnOnce(&mut FunctionBuilder<'_>, &mut JITModule),
) -> Result<Function, String> {
    let mut sig = clause_signature(module);
    sig.params
        .push(AbiParam::new(module.target_config().pointer_type()));
    let mut func = Function::with_name_signature(UserFuncName::user(1, index), sig);
    let outlined = super::outline::outlined_for(module.isa(), program);
    guarded(fctx, outlined, |fctx| {
        let mut b = FunctionBuilder::new(&mut func, fctx);
        build(&mut b, module);
        b.finalize(module.target_config());
    })?;
    Ok(func)
}

/// The lane-wise function of `region` (user index `index`).
pub(super) fn lanewise_function(
    module: &mut JITModule,
    fctx: &mut FunctionBuilderContext,
    index: u32,
    (program, region, lw): (&Program, &LoopRegion, &Lanewise),
    opts: JitOptions,
) -> Result<Function, String> {
    let w = match opts.quads_per_iter {
        0 => {
            let looks_up = region_looks_up(program, &region.clauses);
            lanewise_quads(lw, opts.tier != Tier::Optimised, looks_up)
        }
        w => usize::from(w),
    };
    let ptr = module.target_config().pointer_type();
    let cc = module.target_config().default_call_conv;
    loop_function(module, fctx, (index, program), |b, _| {
        lower_lanewise(b, program, region, lw, w, ptr, cc)
    })
}

/// Defines `func` as `name`; the error says why it cannot be compiled (the
/// shim then runs the region itself).
fn define_loop(
    module: &mut JITModule,
    ctx: &mut Context,
    name: &str,
    func: Function,
    code_bytes: &mut usize,
) -> Result<FuncId, String> {
    ctx.clear();
    ctx.func = func;
    let id = define(module, ctx, name);
    if let Some(code) = ctx.compiled_code() {
        *code_bytes += code.code_buffer().len();
    }
    id
}
