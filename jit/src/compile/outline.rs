//! The process's outlined transcendentals (`crate::lower`'s `outline`):
//! each compiled for speed, in a module of its own, the first time quick
//! code calls it, and kept for the process.

use super::OptLevel;
use super::build::{build_isa, define, guarded, new_module};
use crate::ir::Unary;
use crate::lower::{
    OUTLINED, OutlinedSource, lower_outlined, lowering_at, outlined_signature, take_lowering_at,
};
use cranelift_codegen::Context;
use cranelift_codegen::ir::UserFuncName;
use cranelift_codegen::isa::TargetIsa;
use cranelift_codegen::settings::RegallocAlgorithm;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_module::Module;
use std::sync::OnceLock;

/// Where code compiled with `isa` gets its outlined functions: quick code
/// (single-pass register allocation) calls them, other code makes its
/// transcendentals inline.
pub(super) fn outlined_for(isa: &dyn TargetIsa) -> Option<OutlinedSource> {
    (isa.flags().regalloc_algorithm() == RegallocAlgorithm::SinglePass).then_some(process_outlined)
}

/// The address of the process's outlined `op` (one of [`OUTLINED`]),
/// compiled on the first call; `None` where it could not be compiled.
fn process_outlined(op: Unary) -> Option<usize> {
    static FNS: [OnceLock<Option<usize>>; 4] = [const { OnceLock::new() }; 4];
    let k = OUTLINED.iter().position(|&o| o == op)?;
    *FNS[k].get_or_init(|| {
        // Asked for in the middle of another function's lowering: keep
        // its place for a report.
        let at = take_lowering_at();
        let addr = compile_outlined(op, k).ok();
        if let Some(pc) = at {
            lowering_at(pc);
        }
        addr
    })
}

/// Compiles `op` (the `k`th of [`OUTLINED`]) for speed, in a module kept
/// for the process.
fn compile_outlined(op: Unary, k: usize) -> Result<usize, String> {
    let isa = build_isa(OptLevel::Speed, false).map_err(|e| e.to_string())?;
    let mut module = new_module(isa);
    let config = module.target_config();
    let (ptr, cc) = (config.pointer_type(), config.default_call_conv);
    let mut ctx = Context::new();
    ctx.func.name = UserFuncName::user(3, k as u32);
    ctx.func.signature = outlined_signature(cc);
    guarded(&mut FunctionBuilderContext::new(), None, |fctx| {
        let mut b = FunctionBuilder::new(&mut ctx.func, fctx);
        lower_outlined(&mut b, op, ptr, cc);
        b.finalize(config);
    })?;
    let id = define(&mut module, &mut ctx, name(op))?;
    module.finalize_definitions().map_err(|e| e.to_string())?;
    let addr = module.get_finalized_function(id) as usize;
    // Quick code anywhere in the process may call it: the module is never
    // freed.
    std::mem::forget(module);
    Ok(addr)
}

/// The function name of outlined `op`.
fn name(op: Unary) -> &'static str {
    match op {
        Unary::Ex2 => "ex2",
        Unary::Ln2 => "ln2",
        Unary::Sin => "sin",
        _ => "cos",
    }
}
