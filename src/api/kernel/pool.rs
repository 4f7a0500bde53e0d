//! Device memory kept between a kernel's runs (`docs/design.md`, "Re-runs
//! pay only for work"): a run's memory is the next run's, so the system
//! commits and unmaps pages once, not per run. It is kept as the run left
//! it, with the extent its blocks took: the next run zeroes only what it
//! does not overwrite itself (`Device::open_spare`).

use crate::device::SpareMemory;
use std::sync::{Arc, Mutex};

/// One spare device memory, shared by a kernel and its clones (a run on
/// another thread meanwhile maps its own).
#[derive(Clone, Default)]
pub(crate) struct MemoryPool(Arc<Mutex<Option<SpareMemory>>>);

impl MemoryPool {
    /// The spare memory, if there is one, with the extent of each arena
    /// that holds data.
    pub(crate) fn take(&self) -> Option<SpareMemory> {
        self.0.lock().ok()?.take()
    }

    /// Keeps `memory` (data up to the given extents) for the next run.
    pub(crate) fn give(&self, memory: SpareMemory) {
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
