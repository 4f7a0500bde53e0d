//! The process-wide code cache: compiled programs keyed by their content
//! (`docs/design.md`, decisions).

use super::{Compiled, JitError, JitOptions, compile};
use crate::ir::Program;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, OnceLock};

/// Most programs kept compiled at once.
const CACHE_ENTRIES: usize = 64;

/// A compiled program, or the compilation that is producing it.
type Slot = Arc<OnceLock<Result<Arc<Compiled>, JitError>>>;

struct Entry {
    hash: u64,
    opts: JitOptions,
    program: Arc<Program>,
    slot: Slot,
}

static CACHE: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

/// The hash the code cache keys programs by.
pub fn program_hash(program: &Program) -> u64 {
    let mut h = DefaultHasher::new();
    program.hash(&mut h);
    h.finish()
}

/// The compiled code of `program` from the process-wide cache, compiling it
/// on a miss. The flag says whether this call compiled it.
///
/// Entries are keyed by [`program_hash`] and the options and confirmed by
/// comparing the whole program; the least recently used entry is dropped
/// beyond 64 programs. Threads asking for the same program wait for one
/// compilation; different programs compile in parallel.
pub fn cached(program: &Program, opts: JitOptions) -> Result<(Arc<Compiled>, bool), JitError> {
    let hash = program_hash(program);
    let slot = {
        let mut cache = CACHE.lock().unwrap_or_else(|p| p.into_inner());
        let found = cache
            .iter()
            .position(|e| e.hash == hash && e.opts == opts && *e.program == *program);
        let entry = match found {
            Some(k) => cache.remove(k),
            None => {
                if cache.len() >= CACHE_ENTRIES {
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
        compile(program, opts).map(Arc::new)
    });
    code.clone().map(|c| (c, fresh))
}
