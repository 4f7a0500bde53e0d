//! The JIT's compiled strips ([`ctm_jit::strip`]): a straight program run
//! along a row of whole quads, results straight to memory.

use super::JitEngine;
use crate::runtime::{RunError, StripLoopPlan, StripPlan, TextureUnit};
use ctm_jit::compile::Compiled;
use ctm_jit::ir::Program;
use ctm_jit::state::{Strip, Uniforms};
use std::sync::Arc;

impl JitEngine {
    /// The current program's compiled code, borrowed where it is kept: a
    /// strip is asked for and called once per row, and an `Arc` cloned
    /// there would have every worker's rows meet on its count (two
    /// threads' re-runs of the one-instruction kernel, best of twelve
    /// alternations on a noisy machine: 0.45 → 0.40 ns per pixel without).
    fn current_code(current: &Option<(Arc<Program>, Arc<Compiled>, usize)>) -> Option<&Compiled> {
        current.as_ref().map(|(_, code, _)| &**code)
    }

    /// The strip of `program` for a row of `quads` whole quads, compiled
    /// on first use: the form the code's measurements ask for, or the
    /// other where that one's batches are wider than the row; `None` where
    /// the program has none, it could not be compiled (the reason is kept
    /// with the fallback reasons) or no batch fits.
    pub(super) fn strip_plan(&mut self, program: &Program, quads: u32) -> Option<StripPlan> {
        self.make_current(program).ok()?;
        // Between strips, as between groups, tiered code may switch; a
        // plan's batch is the same in either tier.
        self.follow_tier();
        let code = Self::current_code(&self.current)?;
        let (form, _) = code.strip_form();
        for form in [form, form ^ 1] {
            let (compiled, took) = code.strip(program, form)?;
            if let Some(t) = took {
                self.stats.strips_compiled += 1;
                self.stats.compile_time += t;
            }
            match compiled {
                Ok((_, shape, batch)) if batch <= quads => {
                    self.strip_form = form;
                    return Some(StripPlan {
                        counted: shape.counted,
                        targets: shape.targets,
                        batch,
                        inputs: shape.inputs,
                        writes: u32::from(shape.writes),
                        looped: shape.looped.as_ref().map(|lp| StripLoopPlan {
                            int_addr: lp.region.int_addr,
                            lanewise: lp.lanewise.clone(),
                        }),
                    });
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

    /// Runs the strip of `program` in the form [`JitEngine::strip_plan`]
    /// offered, on `strip`; timed while the forms are being compared.
    pub(super) fn call_strip(
        &mut self,
        program: &Program,
        uniforms: &Uniforms,
        tex: &mut dyn TextureUnit,
        strip: &Strip,
    ) -> Result<(), RunError> {
        debug_assert!(ctm_jit::host::daz_is_set(), "the caller sets DAZ");
        // The code of this program (a strip of another would be another
        // program's code).
        self.make_current(program)?;
        let code = Self::current_code(&self.current).ok_or_else(no_strip)?;
        let form = self.strip_form;
        let Some((Ok((f, shape, _)), _)) = code.strip(program, form) else {
            return Err(no_strip());
        };
        // A loop's strip records each lane's exit from it.
        if shape.looped.is_some() && strip.events.is_null() {
            return Err(RunError::Engine {
                engine: "jit",
                message: "a compiled strip of a loop has nowhere to record its lanes' exits".into(),
            });
        }
        // Its targets as narrow as it was compiled for, where it was.
        if !program.narrow_agrees(strip.narrow, u32::from(shape.targets)) {
            return Err(RunError::Engine {
                engine: "jit",
                message: "a compiled strip's render targets were compiled for other formats".into(),
            });
        }
        // The strip reads its inputs through their descriptors, unchecked.
        if !tex.direct().covers(shape.inputs, &program.forms) {
            return Err(RunError::Engine {
                engine: "jit",
                message: "a compiled strip's inputs have no direct descriptors".into(),
            });
        }
        // Room for the strip's uncached writes: one per pixel.
        if shape.writes > 0 {
            let room = 4 * strip.quads as usize * usize::from(shape.writes);
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
        let timing = code.strip_form().1;
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
        // for all of them reserved); `code` keeps the machine code alive.
        let status = unsafe { f(strip, uniforms, &mut *self.io) };
        if let Some(t) = start {
            code.strip_timed(form, u64::from(strip.quads), t.elapsed());
        }
        let work = u64::from(strip.quads) * u64::from(code.instructions);
        // SAFETY: the strip appended whole entries from the start of the
        // log, one per pixel of its quads at most: the room the unit made.
        unsafe { self.called(tex, log_start) };
        self.did(work);
        match status {
            0 => Ok(()),
            s => Err(RunError::Engine {
                engine: "jit",
                message: format!("the compiled strip returned status {s}"),
            }),
        }
    }
}

fn no_strip() -> RunError {
    RunError::Engine {
        engine: "jit",
        message: "no compiled strip for this program".into(),
    }
}
