//! Tiered code in the JIT engine (`ctm_jit::compile::Tier`): the engine
//! reports the work its quick code does, starts the optimised compilation
//! when that crosses the code's threshold, and switches to the optimised
//! code between groups once it is compiled.

use super::JitEngine;

/// Work an engine gathers before it reports it to tiered code: rare
/// enough that threads seldom meet on the code's counter, small against
/// the least work before a program tiers up.
const WORK_CHUNK: u64 = ctm_jit::compile::MIN_TIER_UP_WORK / 16;

impl JitEngine {
    /// Switches to the current program's optimised code where its quick
    /// code has tiered up (`ctm_jit::compile::Tier`). Called between
    /// groups: both tiers compute the same bits from the same state.
    pub(super) fn follow_tier(&mut self) {
        if let Some((_, code, _)) = &mut self.current
            && let Some(better) = code.upgraded()
        {
            *code = better.clone();
            self.work = 0;
            self.stats.tier_ups += 1;
        }
    }

    /// Records `quad_insts` quad-instructions run with the current code;
    /// where that takes tiered code past its threshold, starts its
    /// optimised compilation.
    pub(super) fn did(&mut self, quad_insts: u64) {
        self.work += quad_insts;
        if self.work >= WORK_CHUNK {
            self.report_work();
        }
    }

    /// Reports the work gathered to the current code (see
    /// [`JitEngine::did`]).
    pub(super) fn report_work(&mut self) {
        let work = std::mem::take(&mut self.work);
        if let Some((program, code, _)) = &self.current
            && work > 0
            && code.add_work(work)
        {
            self.cache.tier_up(program.clone(), self.opts, code.clone());
        }
    }
}
