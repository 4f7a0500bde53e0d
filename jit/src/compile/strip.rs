//! The compiled strip of a straight program ([`crate::strip`]), compiled
//! on first use in a module of its own.

use super::build::{Scratch, clause_signature, define, guarded};
use super::{Compiled, JitOptions, OptLevel, Tier};
use crate::ir::Program;
use crate::lower::{lower_strip, strip_batch};
use crate::state::StripFn;
use crate::strip::StripShape;
use cranelift_codegen::ir::UserFuncName;
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_frontend::FunctionBuilder;
use cranelift_jit::JITModule;
use cranelift_module::Module;
use std::sync::OnceLock;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Timed calls of each form before the fastest is kept (after one
/// untimed call each, which warms the caches).
const TRIALS: u32 = 6;

/// Forms a strip may have ([`Compiled::strip_form`]).
pub(super) const FORMS: usize = 3;

/// How a strip's forms compare, as measured ([`Compiled::strip_form`]).
#[derive(Debug, Default)]
pub(super) struct Tuning {
    /// Per form: calls recorded (the first untimed), and the best time
    /// per quad of the timed ones (the least disturbed by anything else
    /// the machine did).
    calls: [u32; FORMS],
    best: [Option<f64>; FORMS],
    chosen: Option<usize>,
}

/// One form of a strip: its batch width in quads and the target it is
/// compiled for.
pub(super) struct Form {
    batch: usize,
    isa: OwnedTargetIsa,
    code: OnceLock<Result<StripFn, String>>,
}

/// The forms of the strip of `shape` (of `program`) for code compiled with
/// `opts` (resolved), `tunable` saying whether the options leave the form
/// to measurement: the program's own (batches as its options ask,
/// compiled for `own`), then, where tunable and different from it, four
/// quads compiled for `speed` and four quads compiled for `none` (the same
/// target, unoptimised).
pub(super) fn forms(
    program: &Program,
    shape: &StripShape,
    opts: JitOptions,
    tunable: bool,
    [own, speed, none]: [OwnedTargetIsa; 3],
) -> Vec<Form> {
    let form = |batch, isa| Form {
        batch,
        isa,
        code: OnceLock::new(),
    };
    // A loop's batches are its lane-wise region's, in one form.
    if let Some(lp) = &shape.looped {
        let quick = opts.tier != Tier::Optimised;
        let looks_up = crate::lower::region_looks_up(program, &lp.region.clauses);
        return vec![form(
            super::loops::lanewise_quads(&lp.lanewise, quick, looks_up),
            own,
        )];
    }
    let batch = strip_batch(program, shape, usize::from(opts.quads_per_iter));
    let own_level = opts.opt_level;
    let mut all = vec![form(batch, own)];
    if tunable {
        for (level, isa) in [(OptLevel::Speed, speed), (OptLevel::None, none)] {
            if (batch, own_level) != (4, level) {
                all.push(form(4, isa));
            }
        }
    }
    all
}

impl Form {
    /// Whether this form has been compiled (or failed to).
    pub(super) fn compiled(&self) -> bool {
        self.code.get().is_some()
    }
}

impl Compiled {
    /// Which form of the strip the next call should use, and whether to
    /// time it ([`Compiled::strip_timed`]). Form 0 is compiled with the
    /// program's options; where the options leave both the optimisation
    /// and the batch width to ctm (optimisation [`super::OptLevel::Auto`],
    /// quads per iteration 0), the others are four quads optimised for
    /// speed and four quads unoptimised. Which is fastest depends on the
    /// program (many independent chains favour the optimised four quads,
    /// whose e-graph keeps constants out of the batch loop; long dependent
    /// chains the unoptimised ones, which keep ctm's order of a round of
    /// every chain, then the next) in ways no rule predicts well. The forms
    /// take turns until each has run `TRIALS` timed calls, and the fastest
    /// per quad (best call against best call) is kept for this code's later
    /// runs. All forms compute the same bits.
    pub fn strip_form(&self) -> (usize, bool) {
        let n = self.strip_forms();
        if n < 2 {
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
            None => {
                let fewest = (0..n).min_by_key(|&k| t.calls[k]).unwrap_or(0);
                (fewest, true)
            }
        }
    }

    /// How many forms the strip has (0: no strip).
    pub fn strip_forms(&self) -> usize {
        self.strip.len()
    }

    /// Records a call of strip form `form` that ran `quads` quads in
    /// `time` (see [`Compiled::strip_form`]).
    pub fn strip_timed(&self, form: usize, quads: u64, time: Duration) {
        let n = self.strip_forms();
        if form >= n {
            return;
        }
        let mut t = self.strip_tuning.lock().unwrap_or_else(|p| p.into_inner());
        if t.chosen.is_some() {
            return;
        }
        if t.calls[form] > 0 && quads > 0 {
            let per_quad = time.as_secs_f64() / quads as f64;
            t.best[form] = Some(t.best[form].map_or(per_quad, |b| b.min(per_quad)));
        }
        t.calls[form] += 1;
        if t.calls[..n].iter().all(|&c| c > TRIALS) {
            let mut fastest: Option<(usize, f64)> = None;
            for (k, b) in t.best[..n].iter().enumerate() {
                match (b, fastest) {
                    (None, _) => return,
                    (Some(b), Some((_, f))) if *b >= f => {}
                    (Some(b), _) => fastest = Some((k, *b)),
                }
            }
            if let Some((form, _)) = fastest {
                t.chosen = Some(form);
                self.strip_chosen.store(form as u8 + 1, Ordering::Relaxed);
            }
        }
    }

    /// Form `form` ([`Compiled::strip_form`]) of the compiled strip of
    /// `program` (the program this code was compiled from), its shape and
    /// its batch width in quads (it runs whole batches only: the caller
    /// hands it a multiple of that many quads), if it has that form;
    /// compiled on first use (the duration says so). `Err`: the strip could
    /// not be compiled, and why.
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
        let f = self.strip.get(form)?;
        // A program with a strip compiles no clause with itself (they are
        // `ClauseCode::Later`): the strip's own compilation says whether
        // its lowering works.
        let mut took = None;
        let code = f.code.get_or_init(|| {
            let start = Instant::now();
            let r = compile_strip(program, shape, f.batch, f.isa.clone()).map(|(m, f)| {
                self.general_modules
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(m);
                f
            });
            took = Some(start.elapsed());
            r
        });
        let batch = f.batch as u32;
        Some((code.clone().map(|f| (f, shape, batch)), took))
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
    guarded(fctx, |fctx| {
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

#[cfg(test)]
mod tests {
    use super::super::{JitOptions, Tier, compile};
    use crate::ir::{Clause, Program, Term};
    use std::time::Duration;

    /// A straight program of one empty clause: it has a strip.
    fn straight() -> Program {
        Program {
            clauses: vec![Clause {
                start: 0,
                len: 1,
                nodes: vec![],
                values: 0,
                term: Term::End,
            }],
            entry: vec![Some(0)],
            len: 1,
            early_exit: true,
            forms: Default::default(),
            uncached_unorm: None,
            narrow: None,
        }
    }

    #[test]
    fn each_form_takes_turns_until_the_fastest_is_kept() {
        if crate::host::check_features().is_err() {
            return;
        }
        let opts = JitOptions {
            tier: Tier::Optimised,
            ..JitOptions::default()
        };
        // This program's own form is four quads optimised for speed: the
        // unoptimised four quads are the only other form.
        let forms = compile(&straight(), opts).expect("compiles").strip_forms();
        assert_eq!(forms, 2);
        for fastest in 0..forms {
            let code = compile(&straight(), opts).expect("compiles");
            let mut offered = vec![0u32; forms];
            for _ in 0..100 {
                let (form, timed) = code.strip_form();
                if !timed {
                    break;
                }
                offered[form] += 1;
                let us = if form == fastest {
                    10
                } else {
                    20 + form as u64
                };
                code.strip_timed(form, 16, Duration::from_micros(us));
            }
            assert_eq!(offered, vec![super::TRIALS + 1; forms], "{fastest} fastest");
            assert_eq!(code.strip_form(), (fastest, false));
        }
        // Options that choose the batch width leave one form.
        let fixed = JitOptions {
            quads_per_iter: 2,
            ..opts
        };
        let code = compile(&straight(), fixed).expect("compiles");
        assert_eq!((code.strip_forms(), code.strip_form()), (1, (0, false)));
    }
}
