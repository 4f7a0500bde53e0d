//! Device memory and PE state kept between a kernel's runs
//! (`docs/design.md`, "Re-runs pay only for work"): a run's memory is the
//! next run's, so the system commits and unmaps pages once, not per run.
//! It is kept as the run left it, with the extent its blocks took: the next
//! run zeroes only what it does not overwrite itself (`Device::open_spare`).
//! The PE's built programs, group states and engines are kept with it
//! (`Pe::recycled`), so a kernel run again builds, hashes and prepares
//! nothing it ran before.

use crate::device::SpareMemory;
use crate::machine::pe::Pe;
use std::sync::{Arc, Mutex};

/// What a run leaves for the next: its memory (with the extent of each
/// arena that holds data) and its PE, recycled.
pub(crate) type Kept = (SpareMemory, Pe);

/// One spare device memory and PE, shared by a kernel and its clones (a
/// run on another thread meanwhile sets up its own).
#[derive(Clone, Default)]
pub(crate) struct MemoryPool(Arc<Mutex<Option<Kept>>>);

impl MemoryPool {
    /// What the last run left, if anything.
    pub(crate) fn take(&self) -> Option<Kept> {
        self.0.lock().ok()?.take()
    }

    /// Keeps what a run left for the next run.
    pub(crate) fn give(&self, kept: Kept) {
        if let Ok(mut spare) = self.0.lock() {
            *spare = Some(kept);
        }
    }
}

impl std::fmt::Debug for MemoryPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MemoryPool")
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::EngineKind;
    use crate::kernel::{Job, Kernel};
    use crate::mc::Format;

    #[test]
    fn a_kernel_run_again_finds_the_program_its_last_run_built() {
        let k = Kernel::assemble(
            "out rtA.rgb = mad(s0, s1, s0) | rtA.a = mad(s0, s1, s0) src0=r0 src1=c3 wait last",
        )
        .unwrap();
        let job = Job::new(6, 4)
            .constant(3, [2.0; 4])
            .output(0, Format::Float32_4)
            .engine(EngineKind::Interp);
        let first = k.run(&job).unwrap();
        let second = k.run(&job.clone().constant(3, [-1.5; 4])).unwrap();
        assert_ne!(
            first.outputs, second.outputs,
            "the second run's constant counts"
        );
        let (memory, pe) = k.memory.take().expect("a run leaves what it used");
        assert_eq!(pe.built_programs(), 1, "built once");
        assert_eq!(
            pe.programs_asked(),
            2,
            "the second run asked the first's PE"
        );
        k.memory.give((memory, pe));
        assert_eq!(k.run(&job).unwrap().outputs, first.outputs);
    }
}
