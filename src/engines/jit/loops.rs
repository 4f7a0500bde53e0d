//! The JIT's compiled loop regions ([`ctm_jit::regions`]): lane-wise where
//! the region's lanes are independent and the loop is where lock step
//! would have it, else the lock-step driver (both compiled with the
//! program, or on first use), or the shim where neither can run.

use super::{JitEngine, count_compile, lazy_body};
use crate::runtime::{Ctx, LoopEntry, LoopExit, RunError};
use ctm_jit::ir::Program;
use ctm_jit::state::{Lanes, LoopState, loop_exit};

impl JitEngine {
    /// [`crate::runtime::Engine::run_loop`]: runs the loop region `entry`
    /// of `program` on `lanes` from `state`.
    pub(super) fn loop_region(
        &mut self,
        program: &Program,
        entry: LoopEntry,
        lanes: &mut Lanes,
        ctx: &mut Ctx<'_>,
        state: &mut LoopState,
    ) -> Result<LoopExit, RunError> {
        crate::runtime::check_quads("jit", lanes)?;
        self.make_current(program)?;
        self.follow_tier();
        let Some((_, code, _)) = &self.current else {
            unreachable!("code_for sets the current program");
        };
        if entry.index >= code.loop_count() {
            return Err(RunError::Engine {
                engine: "jit",
                message: format!(
                    "loop region {} is not one of the prepared program's",
                    entry.index
                ),
            });
        }
        let region = code.loop_region(entry.index);
        let first = region.clauses[0];
        // The region's code reads its inputs itself: where one has no
        // descriptor in this run, the shim runs the region (its clauses
        // then take the bodies that ask the runtime).
        let inputs = region
            .clauses
            .iter()
            .fold(0, |m, &ci| m | code.direct_inputs(ci));
        if inputs != 0 && !ctx.tex.direct().covers(inputs, &program.forms) {
            return Ok(LoopExit::Before(first));
        }
        // Lane-wise where the region allows it and the loop is at the top
        // of an iteration with its lanes as the lock-step run would have
        // them, and the rest of the loop fits in the budget.
        let alive = lanes.active & lanes.running;
        let lanewise = code.lanewise(entry.index).filter(|lw| {
            state.continued == 0
                && state.count > 0
                && alive != 0
                && state.entry & lanes.running & !state.broken == alive
                && state
                    .executed
                    .checked_add(u64::from(state.count) * lw.body_len())
                    .is_some_and(|end| end <= state.budget)
        });
        // Its code: compiled with the program, or on first use where the
        // program runs in strips (one that cannot be runs in lock step).
        let lanewise = lanewise.and_then(|_| {
            let (body, took) = code.lanewise_fn(entry.index, program);
            count_compile(&mut self.stats, took);
            body.map_err(|why| {
                // As a region that failed with the program says it.
                let line = format!(
                    "loop region at instruction {} (lane-wise body): {why}",
                    region.start
                );
                if !self.stats.fallback_reasons.contains(&line) {
                    self.stats.fallback_reasons.push(line);
                }
            })
            .ok()
        });
        let (f, lanewise) = match lanewise {
            Some(f) => (f, true),
            None => {
                // A lane-wise region's driver is compiled on first use;
                // one that cannot be is left to the shim.
                let driver = code.loop_fn(entry.index, program);
                match lazy_body(&mut self.stats, driver, first, "lock-step driver") {
                    Some(f) => (f, false),
                    None => return Ok(LoopExit::Before(first)),
                }
            }
        };
        self.stats.loop_runs += 1;
        self.stats.lanewise_runs += u64::from(lanewise);
        let executed = state.executed;
        // Region clauses make no runtime calls (lookups read memory
        // directly, no uncached reads or writes); the host block is set as
        // for any compiled code.
        let (exit, error) = self.with_host(
            ctx,
            (&program.clauses[first as usize], 0),
            lanes,
            |lanes, uniforms, io| {
                // SAFETY: see the `ctm_jit` crate docs and `run_clause`:
                // `quads` was checked above; `f` was compiled for a loop
                // region of this program with the `LoopFn` ABI; the driver
                // calls the region's compiled clauses (same contract as in
                // `run_clause`), the lane-wise code inlines them; both
                // read/write `state` within its layout; `self.current`
                // keeps the code alive.
                unsafe { f(lanes, uniforms, io, state) }
            },
        );
        let Some((_, code, _)) = &self.current else {
            unreachable!("prepared above")
        };
        let exit = match (lanewise, code.lanewise(entry.index), exit) {
            (true, Some(lw), 0) => ctm_jit::lanewise::settle(lw, state, lanes, alive),
            _ => exit,
        };
        self.did(state.executed.saturating_sub(executed) * u64::from(lanes.quads));
        let Some((_, code, _)) = &self.current else {
            unreachable!("prepared above")
        };
        let (kind, j) = (exit >> 16, (exit & 0xFFFF) as usize);
        let clause = |j: usize| code.loop_region(entry.index).clauses[j];
        match kind {
            loop_exit::BEFORE => Ok(LoopExit::Before(clause(j))),
            loop_exit::AT_TERM => Ok(LoopExit::AtTerm(clause(j))),
            _ => Err(error.unwrap_or_else(|| RunError::Engine {
                engine: "jit",
                message: format!("loop region {} stopped with code {exit:#x}", entry.index),
            })),
        }
    }
}
