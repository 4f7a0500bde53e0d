//! Device memory kept between a kernel's runs (`docs/design.md`, "Re-runs
//! pay only for work"): a run's memory, zeroed where it placed its job, is
//! the next run's, so the system commits and unmaps pages once, not per
//! run.

use crate::mc::Memory;
use std::sync::{Arc, Mutex};

/// One spare device memory, shared by a kernel and its clones (a run on
/// another thread meanwhile maps its own).
#[derive(Clone, Default)]
pub(crate) struct MemoryPool(Arc<Mutex<Option<Memory>>>);

impl MemoryPool {
    /// The spare memory, if there is one (zero).
    pub(crate) fn take(&self) -> Option<Memory> {
        self.0.lock().ok()?.take()
    }

    /// Keeps `memory` (zero) for the next run.
    pub(crate) fn give(&self, memory: Memory) {
        if let Ok(mut spare) = self.0.lock() {
            *spare = Some(memory);
        }
    }
}

impl std::fmt::Debug for MemoryPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MemoryPool")
    }
}
