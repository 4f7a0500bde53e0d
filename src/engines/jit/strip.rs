//! The JIT's compiled strips ([`ctm_jit::strip`]): a straight program run
//! along a row of whole quads, results straight to memory.

use super::JitEngine;
use crate::runtime::{RunError, StripLoopPlan, StripPlan, TextureUnit};
use ctm_jit::compile::Compiled;
use ctm_jit::ir::Program;
use ctm_jit::state::{Strip, StripFn, Uniforms};
use std::sync::Arc;

/// The compiled strip [`JitEngine::strip_plan`] last offered, as
/// [`JitEngine::call_strip`] runs it: the code it belongs to (held, so
/// that it stays valid where the current code changes tier between the
/// plan and the call), its form, function and batch, and what its shape
/// says a call needs. Looking these up in the code at every row cost about
/// a tenth of a one-instruction strip of 64 pixels.
pub(super) struct Armed {
    code: Arc<Compiled>,
    form: usize,
    f: StripFn,
    batch: u32,
    targets: u8,
    inputs: u16,
    writes: u8,
    looped: bool,
    /// Whether its calls are timed (the code is still choosing its form:
    /// the plan is asked for again at every row).
    timing: bool,
}

impl JitEngine {
    /// Form `form` of `code`'s strip of `program`, where it compiles
    /// (compiled here on first use, and counted).
    fn arm(
        &mut self,
        code: &Arc<Compiled>,
        program: &Program,
        form: usize,
    ) -> Option<Result<Armed, String>> {
        let (compiled, took) = code.strip(program, form)?;
        if let Some(t) = took {
            self.stats.strips_compiled += 1;
            self.stats.compile_time += t;
        }
        Some(compiled.map(|(f, shape, batch)| Armed {
            code: code.clone(),
            form,
            f,
            batch,
            targets: shape.targets,
            inputs: shape.inputs,
            writes: shape.writes,
            looped: shape.looped.is_some(),
            timing: code.strip_form().1,
        }))
    }

    /// The strip of `program` for a row of `quads` whole quads, compiled
    /// on first use: the form the code's measurements ask for, or the
    /// other where that one's batches are wider than the row; `None` where
    /// the program has none, it could not be compiled (the reason is kept
    /// with the fallback reasons) or no batch fits. The strip offered is
    /// the one [`JitEngine::call_strip`] runs.
    pub(super) fn strip_plan(&mut self, program: &Program, quads: u32) -> Option<StripPlan> {
        self.make_current(program).ok()?;
        // Between strips, as between groups, tiered code may switch.
        self.follow_tier();
        let code = self.current.as_ref()?.1.clone();
        let (form, _) = code.strip_form();
        for form in [form, form ^ 1] {
            match self.arm(&code, program, form)? {
                Ok(a) if a.batch <= quads => {
                    let shape = code.strip_shape()?;
                    let plan = StripPlan {
                        counted: shape.counted,
                        targets: a.targets,
                        batch: a.batch,
                        inputs: a.inputs,
                        writes: u32::from(a.writes),
                        looped: shape.looped.as_ref().map(|lp| StripLoopPlan {
                            int_addr: lp.region.int_addr,
                            lanewise: lp.lanewise.clone(),
                        }),
                        settled: !a.timing,
                    };
                    self.armed = Some(a);
                    return Some(plan);
                }
                Ok(_) => {}
                Err(why) => {
                    let line = format!("strip: {why}");
                    if !self.stats.fallback_reasons.contains(&line) {
                        self.stats.fallback_reasons.push(line);
                    }
                    return None;
                }
            }
        }
        None
    }

    /// Where the code of the strip offered has tiered up and the
    /// optimised code's strip of the same form compiles with the same
    /// batch, runs that from now on (and makes the optimised code
    /// current). A run keeps a settled plan for all its rows, so tiered
    /// code switches here, between strips, as it does between groups; a
    /// strip of another batch waits for the next plan.
    fn follow_tier_strip(&mut self, program: &Program) {
        let Some(a) = &self.armed else {
            return;
        };
        let Some(better) = a.code.upgraded().cloned() else {
            return;
        };
        let (form, batch) = (a.form, a.batch);
        if let Some(Ok(b)) = self.arm(&better, program, form)
            && b.batch == batch
        {
            self.armed = Some(b);
            self.follow_tier();
        }
    }

    /// Runs the strip [`JitEngine::strip_plan`] offered for `program` on
    /// `strip`; timed while the forms are being compared.
    pub(super) fn call_strip(
        &mut self,
        program: &Program,
        uniforms: &Uniforms,
        tex: &mut dyn TextureUnit,
        strip: &Strip,
    ) -> Result<(), RunError> {
        debug_assert!(ctm_jit::host::daz_is_set(), "the caller sets DAZ");
        // The code of this program (another program's clears the strip
        // offered: `adopt`).
        self.make_current(program)?;
        self.follow_tier_strip(program);
        let Some(strip_fn) = &self.armed else {
            return Err(no_strip());
        };
        // Whole batches only: a strip leaves the quads after its last.
        if !strip.quads.is_multiple_of(strip_fn.batch.max(1)) {
            return Err(RunError::Engine {
                engine: "jit",
                message: format!(
                    "a compiled strip of batches of {} quads was handed {}",
                    strip_fn.batch, strip.quads
                ),
            });
        }
        // A loop's strip records each lane's exit from it.
        if strip_fn.looped && strip.events.is_null() {
            return Err(RunError::Engine {
                engine: "jit",
                message: "a compiled strip of a loop has nowhere to record its lanes' exits".into(),
            });
        }
        // Its targets as narrow as it was compiled for, where it was.
        if !program.narrow_agrees(strip.narrow, u32::from(strip_fn.targets)) {
            return Err(RunError::Engine {
                engine: "jit",
                message: "a compiled strip's render targets were compiled for other formats".into(),
            });
        }
        // The strip reads its inputs through their descriptors, unchecked.
        if !tex.direct().covers(strip_fn.inputs, &program.forms) {
            return Err(RunError::Engine {
                engine: "jit",
                message: "a compiled strip's inputs have no direct descriptors".into(),
            });
        }
        // Room for the strip's uncached writes: one per pixel.
        if strip_fn.writes > 0 {
            let room = 4 * strip.quads as usize * usize::from(strip_fn.writes);
            self.io.umrt_log = tex.uncached_log(room);
            if self.io.umrt_log.at.is_null() {
                return Err(RunError::Engine {
                    engine: "jit",
                    message: "a compiled strip's uncached writes have no log".into(),
                });
            }
            // Compiled for output 0's format, where the program says it.
            if !self.io.umrt_log.agrees(program.uncached_unorm) {
                return Err(RunError::Engine {
                    engine: "jit",
                    message:
                        "a compiled strip's uncached writes were compiled for another output format"
                            .into(),
                });
            }
        }
        let log_start = self.io.umrt_log.at;
        let (f, form, timing) = (strip_fn.f, strip_fn.form, strip_fn.timing);
        let instructions = strip_fn.code.instructions;
        self.io.splat_consts(uniforms, &self.splat_used);
        self.stats.strip_runs += 1;
        // The unit's direct inputs stay valid while `tex` is borrowed (the
        // `TextureUnit::direct` contract).
        self.io.tex = tex.direct().as_ptr();
        let start = timing.then(std::time::Instant::now);
        // SAFETY: `f` was compiled from this program's verified IR for a
        // strip (`ctm_jit::strip`); it reads `uniforms` and `io` within
        // their layouts, the inputs its shape names through the descriptors
        // of `io.tex` (checked above to cover them; the table's contract is
        // `TexTable::set`'s), and writes at most the 2 · `quads` elements of 16
        // bytes (whole batches only, never past `quads`: its loop bound is
        // rounded down) from each non-null row of `strip` for the targets its shape
        // names, which the caller guarantees writable and untouched by
        // anything else during the call, for a shape with a loop the
        // 4 · `quads` events from `strip.events` (checked non-null above;
        // `Strip::events`'s contract gives their room), plus, for a shape with an uncached
        // write, one 16-byte entry per pixel into the log set above (room
        // for all of them reserved); `f` is the strip of `armed`'s code,
        // compiled from this program (`armed` is cleared where another
        // program becomes current), and `armed` holds that code alive.
        let status = unsafe { f(strip, uniforms, &mut *self.io) };
        if let Some(t) = start
            && let Some(a) = &self.armed
        {
            a.code
                .strip_timed(form, u64::from(strip.quads), t.elapsed());
        }
        let work = u64::from(strip.quads) * u64::from(instructions);
        // SAFETY: the strip appended whole entries from the start of the
        // log, one per pixel of its quads at most: the room the unit made.
        unsafe { self.called(tex, log_start) };
        self.did(work);
        strip_status(status)
    }
}

impl JitEngine {
    /// Runs the strip [`JitEngine::strip_plan`] offered for `program` on
    /// each of `strips` (rows of one run, each a whole number of its
    /// batches, alike but for their rows' places), in order; stops at the
    /// first that fails and says which, with why. What [`call_strip`]
    /// checks at every call is checked once, on the first, where the strip
    /// makes no uncached writes and is not being timed (else each is
    /// called as by `call_strip`): a row of `tiny` at 64² spent about a
    /// third of its host instructions around its strip.
    ///
    /// [`call_strip`]: JitEngine::call_strip
    pub(super) fn call_strips(
        &mut self,
        program: &Program,
        uniforms: &Uniforms,
        tex: &mut dyn TextureUnit,
        strips: &[Strip],
    ) -> Result<(), (usize, RunError)> {
        let Some((first, rest)) = strips.split_first() else {
            return Ok(());
        };
        // The first strip's call checks what holds for all of them.
        self.call_strip(program, uniforms, tex, first)
            .map_err(|e| (0, e))?;
        let alike =
            |s: &Strip| s.quads == first.quads && s.narrow == first.narrow && s.events.is_null();
        let plain = self
            .armed
            .as_ref()
            .is_some_and(|a| a.writes == 0 && !a.timing && !a.looped);
        if !plain || !rest.iter().all(alike) {
            for (k, s) in rest.iter().enumerate() {
                self.call_strip(program, uniforms, tex, s)
                    .map_err(|e| (k + 1, e))?;
            }
            return Ok(());
        }
        // The constants were splatted by the first call (one program, one
        // run's uniforms); the unit's direct inputs stay valid while `tex`
        // is borrowed (the `TextureUnit::direct` contract).
        self.io.tex = tex.direct().as_ptr();
        let ran = self.call_alike(program, uniforms, rest);
        // SAFETY: no uncached log was set (no writes).
        unsafe { self.called(tex, std::ptr::null_mut()) };
        ran.map_err(|(k, e)| (k + 1, e))
    }

    /// The loop of [`JitEngine::call_strips`] after its first strip, whose
    /// call checked what holds for these (and set `io` up for them).
    fn call_alike(
        &mut self,
        program: &Program,
        uniforms: &Uniforms,
        strips: &[Strip],
    ) -> Result<(), (usize, RunError)> {
        for (k, strip) in strips.iter().enumerate() {
            // Tiered code switches between strips of the same batch.
            self.follow_tier_strip(program);
            let a = self.armed.as_ref().ok_or_else(|| (k, no_strip()))?;
            let (f, instructions) = (a.f, a.code.instructions);
            self.stats.strip_runs += 1;
            // SAFETY: as in `call_strip`, whose checks on the first strip
            // hold for this one: the same program and inputs, the same
            // quads (a whole number of batches: a tier switch keeps the
            // batch), narrow targets and no events; no uncached writes.
            // The caller guarantees this strip's rows as `call_strip`'s.
            let status = unsafe { f(strip, uniforms, &mut *self.io) };
            self.did(u64::from(strip.quads) * u64::from(instructions));
            strip_status(status).map_err(|e| (k, e))?;
        }
        Ok(())
    }
}

/// What a compiled strip's returned status means.
fn strip_status(status: u32) -> Result<(), RunError> {
    match status {
        0 => Ok(()),
        s => Err(RunError::Engine {
            engine: "jit",
            message: format!("the compiled strip returned status {s}"),
        }),
    }
}

fn no_strip() -> RunError {
    RunError::Engine {
        engine: "jit",
        message: "no compiled strip for this program".into(),
    }
}
