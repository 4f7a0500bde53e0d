//! The compiled strip of a straight program ([`crate::strip`]), compiled
//! on first use in a module of its own.

use super::Compiled;
use super::build::{clause_signature, define, guarded};
use crate::ir::Program;
use crate::lower::{lower_strip, strip_batch};
use crate::state::StripFn;
use crate::strip::StripShape;
use cranelift_codegen::ir::{Function, UserFuncName};
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{Module, default_libcall_names};
use std::time::{Duration, Instant};

impl Compiled {
    /// The compiled strip of `program` (the program this code was compiled
    /// from), its shape and its batch width in quads (it runs whole
    /// batches only: the caller hands it a multiple of that many quads),
    /// if it has one; compiled on first use (the duration says so).
    /// `Err`: the strip could not be compiled, and why.
    #[allow(clippy::type_complexity)]
    pub fn strip(
        &self,
        program: &Program,
    ) -> Option<(
        Result<(StripFn, &StripShape, u32), String>,
        Option<Duration>,
    )> {
        let shape = self.strip_shape.as_ref()?;
        // The same code as the clauses': none where one of them fell back.
        let fell_back = |&ci: &u32| matches!(self.clause(ci), super::ClauseCode::Fallback(_));
        if shape.clauses.iter().any(fell_back) {
            return None;
        }
        let mut took = None;
        let code = self.strip.get_or_init(|| {
            let start = Instant::now();
            let batch = strip_batch(program, shape, usize::from(self.opts.quads_per_iter));
            let r = compile_strip(program, shape, batch, self.isa.clone()).map(|(m, f)| {
                self.general_modules
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(m);
                (f, batch as u32)
            });
            took = Some(start.elapsed());
            r
        });
        Some((code.clone().map(|(f, batch)| (f, shape, batch)), took))
    }
}

/// Compiles the strip of `shape` for `isa`, batches of `w` quads, in a
/// module of its own.
fn compile_strip(
    program: &Program,
    shape: &StripShape,
    w: usize,
    isa: OwnedTargetIsa,
) -> Result<(JITModule, StripFn), String> {
    program.verify().map_err(|e| format!("invalid IR: {e}"))?;
    let mut module = JITModule::new(JITBuilder::with_isa(isa, default_libcall_names()));
    let mut fctx = FunctionBuilderContext::new();
    let mut ctx = module.make_context();
    // A strip has the clause functions' ABI: three pointers in, a status out.
    let sig = clause_signature(&module);
    let mut func = Function::with_name_signature(UserFuncName::user(2, 0), sig);
    guarded(&mut fctx, |fctx| {
        let mut b = FunctionBuilder::new(&mut func, fctx);
        let ptr = module.target_config().pointer_type();
        let cc = module.target_config().default_call_conv;
        lower_strip(&mut b, program, shape, w, ptr, cc);
        b.finalize(module.target_config());
    })?;
    ctx.func = func;
    let id = define(&mut module, &mut ctx, "strip")?;
    module.finalize_definitions().map_err(|e| e.to_string())?;
    let p = module.get_finalized_function(id);
    // SAFETY: built with `clause_signature`, three pointers and an I32
    // result: `StripFn`'s ABI on this host.
    let f = unsafe { std::mem::transmute::<*const u8, StripFn>(p) };
    Ok((module, f))
}
