//! Tiered compilation (`docs/compile.md`, "Tiered compilation"): a program
//! compiled with [`Tier::Tiered`] runs quick code first; the engines
//! running it report the work that code does ([`Compiled::add_work`]), and
//! once it has done about as much as compiling it cost, one of them starts
//! the optimised compilation on a thread of its own
//! ([`CodeCache::tier_up`]). The optimised code is published on the quick
//! code ([`Compiled::upgraded`]), where engines pick it up between groups
//! and the cache hands it out from then on.
//!
//! Both tiers come from the same lowering of the same program and differ
//! only in Cranelift's register allocation and optimisation, and in quick
//! code calling EX2, LN2, SIN and COS out of line (functions built by the
//! same lowering: `crate::lower`'s `outline`), so they compute the same
//! bits, and a run may switch between groups.

use super::{CodeCache, Compiled, JitOptions, Tier};
use crate::ir::Program;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// Least work (quad-instructions) before a program tiers up, however
/// quickly its quick code compiled: small runs (tests, one-off kernels)
/// never pay for a second compilation.
pub const MIN_TIER_UP_WORK: u64 = 1 << 18;

/// Nanoseconds of quick compilation per quad-instruction of quick code
/// before the program tiers up. Quick code runs a quad-instruction in
/// 0.5–5 ns (straight arithmetic to lookups), so a program tiers up once
/// its quick code has run for between an eighth of its compile time and
/// about as long.
const COMPILE_NS_PER_WORK: u64 = 4;

/// The way from quick code to optimised code.
pub(super) struct Upgrade {
    /// Work after which the program tiers up.
    threshold: u64,
    /// Work reported so far.
    work: AtomicU64,
    /// Whether the optimised compilation was started.
    started: AtomicBool,
    /// The optimised code, once compiled.
    better: OnceLock<Arc<Compiled>>,
}

impl Upgrade {
    /// The upgrade of quick code that took `compiled_in` to compile.
    pub(super) fn new(compiled_in: Duration) -> Upgrade {
        let ns = u64::try_from(compiled_in.as_nanos()).unwrap_or(u64::MAX);
        Upgrade {
            threshold: (ns / COMPILE_NS_PER_WORK).max(MIN_TIER_UP_WORK),
            work: AtomicU64::new(0),
            started: AtomicBool::new(false),
            better: OnceLock::new(),
        }
    }
}

impl Compiled {
    /// The optimised code of this quick code, once it is compiled.
    pub fn upgraded(&self) -> Option<&Arc<Compiled>> {
        self.upgrade.as_ref()?.better.get()
    }

    /// This code, or its optimised code where that is compiled.
    pub fn best(self: &Arc<Compiled>) -> Arc<Compiled> {
        self.upgraded().unwrap_or(self).clone()
    }

    /// Whether this is quick code that has an optimised tier to come.
    pub fn tiers_up(&self) -> bool {
        self.upgrade.is_some()
    }

    /// Records `quad_insts` quad-instructions run with this code; true
    /// exactly once, for the report that takes the total past the
    /// threshold: that caller starts the optimised compilation
    /// ([`CodeCache::tier_up`]). Engines report in chunks, so that threads
    /// do not meet on the counter at every group.
    pub fn add_work(&self, quad_insts: u64) -> bool {
        let Some(up) = &self.upgrade else {
            return false;
        };
        if up.started.load(Ordering::Relaxed) {
            return false;
        }
        let total = up.work.fetch_add(quad_insts, Ordering::Relaxed) + quad_insts;
        total >= up.threshold && !up.started.swap(true, Ordering::Relaxed)
    }

    /// Compiles now the code compiled on first use that `quick` (this
    /// program's quick code) has compiled: the strip, bodies, loop
    /// drivers and lane-wise loops its runs needed. The workers then switch to code that has
    /// what they use, instead of compiling it when they meet it.
    fn warm_like(&self, quick: &Compiled, program: &Program) {
        let had = |slots: &[OnceLock<Result<crate::state::ClauseFn, String>>]| -> Vec<u32> {
            (0..slots.len() as u32)
                .filter(|&i| slots[i as usize].get().is_some())
                .collect()
        };
        for i in had(&quick.general) {
            let _ = self.general(i, program);
        }
        for i in had(&quick.host) {
            let _ = self.host_body(i, program);
        }
        for i in had(&quick.gathered) {
            let _ = self.gathered_body(i, program);
        }
        for (i, slot) in quick.own.iter().enumerate() {
            if slot.get().is_some() {
                let _ = self.own(i as u32, program);
            }
        }
        for (k, l) in quick.loops.iter().enumerate() {
            if l.driver.get().is_some() && k < self.loops.len() {
                let _ = self.loop_fn(k, program);
            }
            let lanewise = l.lanewise.as_ref().and_then(|(_, f)| f.get());
            if lanewise.is_some() && k < self.loops.len() {
                let _ = self.lanewise_fn(k, program);
            }
        }
        if quick.strip[0].get().is_some() {
            // Every form the optimised code may choose.
            let forms = if self.strip_tunable { 2 } else { 1 };
            for form in 0..forms {
                let _ = self.strip(program, form);
            }
        }
    }
}

impl CodeCache {
    /// Compiles the optimised code of `program` (whose quick code,
    /// compiled with `opts`, is `quick`) on a thread of its own, through
    /// this cache, and publishes it on `quick`. If no thread can be
    /// started, or the compilation fails, the program keeps its quick code.
    pub fn tier_up(
        self: &Arc<CodeCache>,
        program: Arc<Program>,
        opts: JitOptions,
        quick: Arc<Compiled>,
    ) {
        let cache = self.clone();
        let optimised = JitOptions {
            tier: Tier::Optimised,
            ..opts
        };
        let _ = std::thread::Builder::new()
            .name("ctm-tier-up".into())
            .spawn(move || {
                if let (Ok((code, _)), Some(up)) =
                    (cache.get(&program, optimised), quick.upgrade.as_ref())
                {
                    code.warm_like(&quick, &program);
                    let _ = up.better.set(code);
                }
            });
    }
}
