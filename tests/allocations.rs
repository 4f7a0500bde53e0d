//! A prepared kernel run again allocates nothing (`docs/dispatch.md`,
//! "Re-runs pay only for work"): no report, no page tables, no logs of
//! uncached writes, no vectors of pixels kept for ordered delivery, on
//! either engine and on one thread or two. Counted by this binary's
//! allocator, which counts every allocation of the process: this binary
//! has one test, so nothing else allocates while it counts.

use ctm::Tier;
use ctm::engine::EngineKind;
use ctm::mc::CacheMode;
use ctm_tools::bench::suite;
use ctm_tools::check::jit_available;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

/// The system allocator, counting.
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is passed on to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as for `alloc`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as for `alloc`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

#[test]
fn a_prepared_kernel_run_again_allocates_nothing() {
    let mut engines = vec![EngineKind::Interp];
    if jit_available() {
        engines.push(EngineKind::Jit);
    }
    // `tiny` runs in strips, `saxpy` looks its inputs up, `scatter` makes
    // uncached writes while later rows run.
    // At 61 pixels a row, a strip's row ends in quads through the shim;
    // with strict caches, rows keep their pixels for ordered delivery, and
    // `saxpy` reads copies of the inputs the input cache holds.
    for (name, width, strict) in [
        ("tiny", 64, false),
        ("saxpy", 64, false),
        ("scatter", 64, false),
        ("scatter", 61, false),
        ("tiny", 64, true),
        ("saxpy", 64, true),
    ] {
        for &engine in &engines {
            for threads in [1, 2] {
                let case = suite::case(name).unwrap();
                let mut job = case.job.clone().domain(width, 64);
                if strict {
                    job = job.cache_mode(CacheMode::Strict);
                }
                let s = job.settings_mut();
                s.engine = engine;
                s.threads = threads;
                // Quick code only: no optimised compile starts part-way.
                s.jit.tier = Tier::Quick;
                let mut p = case.kernel.prepare(&job).unwrap();
                for _ in 0..20 {
                    p.run().unwrap();
                }
                // Timing decides a few allocations: on two threads, which
                // worker runs a row (a worker's engine first used late grows
                // its buffers once; where two workers make a run's uncached
                // writes while later rows run, a run with more rows' logs
                // waiting at once than any before it allocates one), and on
                // either, when the strip's forms are settled. So some round
                // of 100 re-runs of the first ten must allocate nothing
                // (`scatter` without its logs kept: 32 a run).
                let mut made = Vec::new();
                while made.len() < 10 && made.last() != Some(&0) {
                    let before = ALLOCATIONS.load(Ordering::Relaxed);
                    for _ in 0..100 {
                        p.run().unwrap();
                    }
                    made.push(ALLOCATIONS.load(Ordering::Relaxed) - before);
                }
                assert_eq!(
                    made.last(),
                    Some(&0),
                    "{name} ({width} wide, strict {strict}), {engine:?}, {threads} threads: allocations in rounds of 100 re-runs: {made:?}"
                );
            }
        }
    }
}
