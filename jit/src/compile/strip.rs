//! The compiled strip of a straight program ([`crate::strip`]), compiled
//! on first use in a module of its own.

use super::Compiled;
use super::build::{Scratch, clause_signature, define, guarded};
use crate::ir::Program;
use crate::lower::{lower_strip, strip_batch};
use crate::state::StripFn;
use crate::strip::StripShape;
use cranelift_codegen::ir::UserFuncName;
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_frontend::FunctionBuilder;
use cranelift_jit::JITModule;
use cranelift_module::Module;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Timed calls of each form before the faster is kept (after one
/// untimed call each, which warms the caches).
const TRIALS: u32 = 6;

/// How a strip's two forms compare, as measured ([`Compiled::strip_form`]).
#[derive(Debug, Default)]
pub(super) struct Tuning {
    /// Per form: calls recorded (the first untimed), and the best time
    /// per quad of the timed ones (the least disturbed by anything else
    /// the machine did).
    calls: [u32; 2],
    best: [Option<f64>; 2],
    chosen: Option<usize>,
}

impl Compiled {
    /// Which form of the strip the next call should use, and whether to
    /// time it ([`Compiled::strip_timed`]). Form 0 is compiled with the
    /// program's options; form 1 in batches of four quads, optimised for
    /// speed — which of the two is faster depends on the program (many
    /// independent chains favour the second, long dependent ones the
    /// first) in ways no rule predicts well. Where the options leave both
    /// choices to ctm (optimisation [`super::OptLevel::Auto`], quads per
    /// iteration 0), the two forms take turns until each has run
    /// `TRIALS` timed calls, and the faster per quad (best call against
    /// best call) is kept for this
    /// code's later runs; otherwise form 0. Both forms compute the same
    /// bits.
    pub fn strip_form(&self) -> (usize, bool) {
        // A loop's strip has one form.
        let looped = self
            .strip_shape
            .as_ref()
            .is_some_and(|s| s.looped.is_some());
        if !self.strip_tunable || looped {
            return (0, false);
        }
        // Once chosen, every row reads the choice without the lock.
        match self.strip_chosen.load(Ordering::Relaxed) {
            0 => {}
            c => return (usize::from(c - 1), false),
        }
        let t = self.strip_tuning.lock().unwrap_or_else(|p| p.into_inner());
        match t.chosen {
            Some(form) => (form, false),
            None => (usize::from(t.calls[1] < t.calls[0]), true),
        }
    }

    /// The shape of this code's strip, where its program has one
    /// ([`crate::strip::strip_shape`]).
    pub fn strip_shape(&self) -> Option<&StripShape> {
        self.strip_shape.as_ref()
    }

    /// Records a call of strip form `form` that ran `quads` quads in
    /// `time` (see [`Compiled::strip_form`]).
    pub fn strip_timed(&self, form: usize, quads: u64, time: Duration) {
        let mut t = self.strip_tuning.lock().unwrap_or_else(|p| p.into_inner());
        let k = form & 1;
        if t.chosen.is_some() {
            return;
        }
        if t.calls[k] > 0 && quads > 0 {
            let per_quad = time.as_secs_f64() / quads as f64;
            t.best[k] = Some(t.best[k].map_or(per_quad, |b| b.min(per_quad)));
        }
        t.calls[k] += 1;
        if t.calls.iter().all(|&c| c > TRIALS)
            && let [Some(a), Some(b)] = t.best
        {
            let form = usize::from(b < a);
            t.chosen = Some(form);
            self.strip_chosen.store(form as u8 + 1, Ordering::Relaxed);
        }
    }

    /// Form `form` ([`Compiled::strip_form`]) of the compiled strip of
    /// `program` (the program this code was compiled from), its shape and
    /// its batch width in quads (it runs whole batches only: the caller
    /// hands it a multiple of that many quads), if it has one; compiled on
    /// first use (the duration says so). `Err`: the strip could not be
    /// compiled, and why.
    #[allow(clippy::type_complexity)]
    pub fn strip(
        &self,
        program: &Program,
        form: usize,
    ) -> Option<(
        Result<(StripFn, &StripShape, u32), String>,
        Option<Duration>,
    )> {
        let shape = self.strip_shape.as_ref()?;
        if shape.looped.is_some() && form & 1 == 1 {
            return None;
        }
        // A program with a strip compiles no clause with itself (they are
        // `ClauseCode::Later`): the strip's own compilation says whether
        // its lowering works.
        let mut took = None;
        let code = self.strip[form & 1].get_or_init(|| {
            let start = Instant::now();
            let (batch, isa) = match (&shape.looped, form & 1) {
                // A loop's batches are its lane-wise region's.
                (Some(lp), _) => {
                    let quick = self.opts.tier != super::Tier::Optimised;
                    let looks_up = crate::lower::region_looks_up(program, &lp.region.clauses);
                    (
                        super::loops::lanewise_quads(&lp.lanewise, quick, looks_up),
                        &self.isa,
                    )
                }
                (None, 0) => (
                    strip_batch(
                        program,
                        shape,
                        usize::from(self.opts.quads_per_iter),
                        self.opts.tier == super::Tier::Optimised,
                    ),
                    &self.isa,
                ),
                (None, _) => (4, &self.speed_isa),
            };
            let r = compile_strip(program, shape, batch, isa.clone()).map(|(m, f)| {
                self.general_modules
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(m);
                (f, batch as u32)
            });
            took = Some(start.elapsed());
            r
        });
        let code = match code {
            Ok((f, batch)) => Ok((*f, shape, *batch)),
            Err(why) => Err(why.clone()),
        };
        Some((code, took))
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
    let mut module = super::build::new_module(isa);
    let mut scratch = Scratch::take();
    let (ctx, fctx) = scratch.parts();
    // A strip has the clause functions' ABI: three pointers in, a status out.
    ctx.func.name = UserFuncName::user(2, 0);
    ctx.func.signature = clause_signature(&module);
    let outlined = super::outline::outlined_for(module.isa(), program);
    guarded(fctx, outlined, |fctx| {
        let mut b = FunctionBuilder::new(&mut ctx.func, fctx);
        let ptr = module.target_config().pointer_type();
        let cc = module.target_config().default_call_conv;
        lower_strip(&mut b, program, shape, w, ptr, cc);
        b.finalize(module.target_config());
    })?;
    let id = define(&mut module, ctx, "strip")?;
    module.finalize_definitions().map_err(|e| e.to_string())?;
    let p = module.get_finalized_function(id);
    // SAFETY: built with `clause_signature`, three pointers and an I32
    // result: `StripFn`'s ABI on this host.
    let f = unsafe { std::mem::transmute::<*const u8, StripFn>(p) };
    Ok((module, f))
}
