//! The process's outlined transcendentals (`crate::lower`'s `outline`):
//! each compiled for speed, in a module of its own, the first time quick
//! code of a program that uses it often enough calls it, and kept for the
//! process.

use super::OptLevel;
use super::build::{build_isa, define, guarded, new_module};
use crate::ir::{Op, Program, Unary};
use crate::lower::{
    OutlinedSource, lower_outlined, lowering_at, outlined_index, outlined_signature,
    take_lowering_at,
};
use cranelift_codegen::Context;
use cranelift_codegen::ir::UserFuncName;
use cranelift_codegen::isa::TargetIsa;
use cranelift_codegen::settings::RegallocAlgorithm;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_module::Module;
use std::sync::OnceLock;

/// Uses of an operation in a program from which quick code compiles its
/// function rather than making it inline: an outlined function costs
/// 190–370 µs to compile, a use inline about 24 µs more than a call
/// (`docs/compile.md`, "Transcendentals out of line").
const WORTH_COMPILING: usize = 8;

/// Where code of `program` compiled with `isa` gets its outlined
/// functions: quick code (single-pass register allocation) calls those the
/// process has and those `program` uses often enough to compile; other
/// code makes its transcendentals inline.
pub(super) fn outlined_for(isa: &dyn TargetIsa, program: &Program) -> Option<OutlinedSource> {
    if isa.flags().regalloc_algorithm() != RegallocAlgorithm::SinglePass {
        return None;
    }
    let mut uses = [0usize; 4];
    for n in program.clauses.iter().flat_map(|c| &c.nodes) {
        if let Op::Unary { op, .. } = n.op
            && let Some(k) = outlined_index(op)
        {
            uses[k] += 1;
        }
    }
    Some(OutlinedSource {
        get: process_outlined,
        worth: uses.map(|u| u >= WORTH_COMPILING),
    })
}

/// The address of the process's outlined `op` (one that `outlined_index`
/// places), if compiled, or compiled now where `compile`; `None` where it
/// is not (or could not be).
fn process_outlined(op: Unary, compile: bool) -> Option<usize> {
    static FNS: [OnceLock<Option<usize>>; 4] = [const { OnceLock::new() }; 4];
    let k = outlined_index(op)?;
    if !compile {
        return FNS[k].get().copied().flatten();
    }
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

/// Compiles `op` (the `k`th outlined operation) for speed, in a module
/// kept for the process.
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
