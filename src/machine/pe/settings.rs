//! What a run is asked to do and what it reports (`docs/machine.md` §6;
//! `docs/dispatch.md`, `docs/threads.md`): [`RunSettings`], [`RunReport`].

use crate::engine::EngineKind;
use crate::mc::DiagnosticCounts;
use crate::runtime::hazard::Hazard;
use crate::runtime::{Cancel, Engine, EngineStats, RunOptions};
use ctm_jit::compile::{CodeCache, JitOptions};
use std::sync::Arc;
use std::time::Duration;

/// The default of [`RunSettings::work_per_worker`]. Waking a helper and
/// waiting for it cost about 0.4 µs of a run on this project's 2-core
/// machine, and `tiny` ran about as fast on one thread as on two at 64 × 64
/// pixels (about 1.1 µs of rows), faster on one below.
pub const WORK_PER_WORKER: Duration = Duration::from_nanos(1000);

/// Called with (quad rows done, quad rows in all) as a run proceeds.
pub type Progress = Arc<dyn Fn(u64, u64) + Send + Sync>;

/// Makes the engine of one worker (see [`RunSettings::engine_factory`]).
pub type EngineFactory = Arc<dyn Fn() -> Box<dyn Engine + Send> + Send + Sync>;

/// How runs execute.
#[derive(Clone)]
pub struct RunSettings {
    /// The clause engine.
    pub engine: EngineKind,
    /// The most worker threads a run takes (at least 1): no more than its
    /// quad rows, and no more than the last run of the same program over
    /// the same domain kept busy ([`RunSettings::work_per_worker`],
    /// [`RunReport::workers`]).
    pub threads: usize,
    /// The host time of rows that each worker beyond the first must have
    /// brought, in the last timed run of the same program over the same
    /// domain on the same engine, for a run to take it (`docs/threads.md`,
    /// "Workers a run's work pays for"; [`WORK_PER_WORKER`] by default).
    /// Zero: every run takes [`RunSettings::threads`] workers (one per
    /// quad row at most).
    pub work_per_worker: Duration,
    /// Budget and hazard checking.
    pub options: RunOptions,
    /// How the JIT engine compiles.
    pub jit: JitOptions,
    /// Progress callback.
    pub progress: Option<Progress>,
    /// Makes each worker's engine instead of [`RunSettings::engine`]
    /// (observing engines such as the tracer's).
    pub engine_factory: Option<EngineFactory>,
    /// Stops runs when pulled from another thread.
    pub cancel: Option<Cancel>,
    /// Wall-clock limit of each run.
    pub timeout: Option<Duration>,
    /// The code cache JIT engines use (`None`: the process-wide one).
    pub code_cache: Option<Arc<CodeCache>>,
    /// Instructions each run may execute in all (counted per group of
    /// quads, as the per-group budget counts them).
    pub max_instructions: Option<u64>,
}

/// All the host's cores (asked once: the answer reads the system's
/// control-group files, which every device's default settings would
/// otherwise do again).
pub fn all_cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

impl Default for RunSettings {
    /// The fastest engine the host runs ([`EngineKind::best`]) on all cores.
    fn default() -> Self {
        RunSettings {
            engine: EngineKind::best(),
            threads: all_cores(),
            work_per_worker: WORK_PER_WORKER,
            options: RunOptions::default(),
            jit: JitOptions::default(),
            progress: None,
            engine_factory: None,
            cancel: None,
            timeout: None,
            max_instructions: None,
            code_cache: None,
        }
    }
}

impl std::fmt::Debug for RunSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunSettings")
            .field("engine", &self.engine)
            .field("threads", &self.threads)
            .field("work_per_worker", &self.work_per_worker)
            .field("options", &self.options)
            .field("jit", &self.jit)
            .finish_non_exhaustive()
    }
}

/// What one `start_program` did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunReport {
    /// Pairs that ran to the end.
    pub pixels: u64,
    /// Pairs killed.
    pub killed: u64,
    /// Pairs the CO skipped at the PE.
    pub skipped: u64,
    /// Pairs whose outputs the CO discarded at the DPP.
    pub discarded: u64,
    /// Instructions executed, per group of quads.
    pub group_instructions: u64,
    /// Instructions × running pairs.
    pub pixel_instructions: u64,
    /// Modelled clocks (§7).
    pub clocks: u64,
    /// Rows of an uncached run whose writes were handed over to be made
    /// while later rows ran, by the workers that ran them
    /// (`docs/design.md`, "Uncached writes while later rows run"): with
    /// several workers, every row before the first that keeps pixels. The
    /// last of them may have been made after all rows, as the threads'
    /// timing has it.
    pub overlapped_rows: u64,
    /// Semaphore hazards (when checking).
    pub hazards: Vec<Hazard>,
    /// The workers (threads) the run took: at most
    /// [`RunSettings::threads`], one per quad row at most, and no more
    /// than the last run of the same program over the same domain on the
    /// same engine kept busy (`docs/threads.md`, "Workers a run's work
    /// pays for").
    pub workers: u32,
    /// MC diagnostics raised during the run.
    pub diagnostics: DiagnosticCounts,
    /// What the engines did (compilation, native and interpreted clauses).
    pub engine: EngineStats,
}
