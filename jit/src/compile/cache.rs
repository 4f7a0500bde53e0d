//! Code caches: compiled programs keyed by their content
//! (`docs/design.md`, decisions). Engines share the process-wide one unless
//! they are handed their own ([`CodeCache::new`]) — a test that counts
//! compilations, or a host that keeps workloads apart.

use super::build::{build_isa, check_options};
use super::{Compiled, JitError, JitOptions, OptLevel, Tier, compile_with};
use crate::ir::Program;
use cranelift_codegen::isa::OwnedTargetIsa;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, OnceLock, Weak};

/// Most programs kept compiled at once.
const CACHE_ENTRIES: usize = 64;

/// Most shared programs recognised by address ([`CodeCache::get_shared`]).
const RECENT_ENTRIES: usize = 16;

/// A compiled program, or the compilation that is producing it.
type Slot = Arc<OnceLock<Result<Arc<Compiled>, JitError>>>;

struct Entry {
    hash: u64,
    opts: JitOptions,
    program: Arc<Program>,
    slot: Slot,
}

/// A shared program looked up lately, its options and its code.
type Recent = (Weak<Program>, JitOptions, Arc<Compiled>);

/// Compiled programs, at most a fixed number, the least recently used
/// dropped first.
///
/// A cache also owns the target ISAs its compilations use, one per
/// optimisation level, built on first use (host detection and backend
/// set-up are not free).
pub struct CodeCache {
    entries: Mutex<Vec<Entry>>,
    /// Shared programs looked up lately, by address (the weak reference
    /// keeps the address from being reused), with their code.
    recent: Mutex<Vec<Recent>>,
    capacity: usize,
    /// Per kind of code: optimised without and with the e-graph pass,
    /// quick.
    isas: [OnceLock<Result<OwnedTargetIsa, JitError>>; 3],
}

impl std::fmt::Debug for CodeCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.entries.lock().map_or(0, |e| e.len());
        write!(f, "CodeCache({n} of {} programs)", self.capacity)
    }
}

impl CodeCache {
    /// An empty cache of at most `capacity` programs (at least one).
    pub fn new(capacity: usize) -> Arc<CodeCache> {
        Arc::new(CodeCache {
            entries: Mutex::new(Vec::new()),
            recent: Mutex::new(Vec::new()),
            capacity: capacity.max(1),
            isas: [OnceLock::new(), OnceLock::new(), OnceLock::new()],
        })
    }

    /// The process-wide cache (64 programs) engines use by default.
    pub fn global() -> &'static Arc<CodeCache> {
        static GLOBAL: OnceLock<Arc<CodeCache>> = OnceLock::new();
        GLOBAL.get_or_init(|| CodeCache::new(CACHE_ENTRIES))
    }

    /// The compiled code of `program`, compiling it on a miss; the flag
    /// says whether this call compiled it.
    ///
    /// Entries are keyed by [`program_hash`] and the options and confirmed
    /// by comparing the whole program. Threads asking for the same program
    /// wait for one compilation; different programs compile in parallel.
    pub fn get(
        &self,
        program: &Program,
        opts: JitOptions,
    ) -> Result<(Arc<Compiled>, bool), JitError> {
        let hash = program_hash(program);
        let slot = {
            let mut cache = self.entries.lock().unwrap_or_else(|p| p.into_inner());
            let found = cache
                .iter()
                .position(|e| e.hash == hash && e.opts == opts && *e.program == *program);
            let entry = match found {
                Some(k) => cache.remove(k),
                None => {
                    if cache.len() >= self.capacity {
                        cache.remove(0);
                    }
                    Entry {
                        hash,
                        opts,
                        program: Arc::new(program.clone()),
                        slot: Slot::default(),
                    }
                }
            };
            let slot = entry.slot.clone();
            cache.push(entry);
            slot
        };
        let mut fresh = false;
        let code = slot.get_or_init(|| {
            fresh = true;
            self.compile(program, opts).map(Arc::new)
        });
        // Quick code that has tiered up: its optimised code.
        code.clone().map(|c| (c.best(), fresh))
    }

    /// [`CodeCache::get`] for a program held in an `Arc`: one looked up
    /// lately through the same `Arc` is found by its address, without
    /// hashing or comparing it — what the workers of a run, and the runs
    /// of a program the PE keeps built, do.
    pub fn get_shared(
        &self,
        program: &Arc<Program>,
        opts: JitOptions,
    ) -> Result<(Arc<Compiled>, bool), JitError> {
        let at = Arc::as_ptr(program);
        let lock = || self.recent.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, _, code)) = lock()
            .iter()
            .find(|(p, o, _)| std::ptr::eq(p.as_ptr(), at) && *o == opts)
        {
            return Ok((code.best(), false));
        }
        let (code, fresh) = self.get(program, opts)?;
        let mut recent = lock();
        recent.retain(|(p, _, _)| p.strong_count() > 0);
        if recent.len() >= RECENT_ENTRIES {
            recent.remove(0);
        }
        recent.push((Arc::downgrade(program), opts, code.clone()));
        Ok((code, fresh))
    }

    /// Compiles `program` with this cache's target ISA, without looking
    /// it up or keeping it.
    pub(super) fn compile(
        &self,
        program: &Program,
        opts: JitOptions,
    ) -> Result<Compiled, JitError> {
        // Compiled code indexes the machine state with what the IR says:
        // only verified IR keeps every access inside it (the crate docs,
        // "Why compiled code stays inside its memory").
        program.verify()?;
        let quick = opts.tier != Tier::Optimised;
        let tunable = opts.opt_level == OptLevel::Auto && opts.quads_per_iter == 0 && !quick;
        let opts = opts.resolved(program);
        // A strip's second form is compiled for speed (see `Compiled::strip`);
        // quick code has one form.
        let speed = JitOptions {
            opt_level: OptLevel::Speed,
            ..opts
        };
        let mut code = compile_with(program, opts, [self.isa(opts)?, self.isa(speed)?])?;
        code.strip_tunable = tunable;
        if opts.tier == Tier::Tiered {
            code.upgrade = Some(super::tier::Upgrade::new(code.compile_time));
        }
        Ok(code)
    }

    /// The target ISA for `opts` (resolved: `Auto` alone means speed).
    pub(super) fn isa(&self, opts: JitOptions) -> Result<OwnedTargetIsa, JitError> {
        check_options(opts)?;
        let quick = opts.tier != Tier::Optimised;
        let k = if quick {
            2
        } else {
            usize::from(opts.opt_level != OptLevel::None)
        };
        self.isas[k]
            .get_or_init(|| build_isa(opts.opt_level, quick))
            .clone()
    }
}

/// The hash the code cache keys programs by.
pub fn program_hash(program: &Program) -> u64 {
    let mut h = DefaultHasher::new();
    program.hash(&mut h);
    h.finish()
}

/// The compiled code of `program` from the process-wide cache
/// ([`CodeCache::global`], 64 programs), compiling it on a miss; the flag
/// says whether this call compiled it.
pub fn cached(program: &Program, opts: JitOptions) -> Result<(Arc<Compiled>, bool), JitError> {
    CodeCache::global().get(program, opts)
}
