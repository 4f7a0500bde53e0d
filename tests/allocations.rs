//! A prepared kernel run again allocates nothing (`docs/dispatch.md`,
//! "Re-runs pay only for work"): no report, no page tables, no logs of
//! uncached writes, no vectors of pixels kept for ordered delivery, on
//! either engine and on one thread or two; nor does a command buffer
//! submitted again to a live device, or through the connection the C
//! interface drives (submitted, polled until consumed, its outcome read).
//! Counted by this binary's allocator, which counts every allocation of
//! the process: this binary has one test, so nothing else allocates while
//! it counts.

use ctm::Tier;
use ctm::device::{Device, DeviceConfig};
use ctm::engine::EngineKind;
use ctm::host::Connection;
use ctm::mc::{ArenaKind, CacheMode, Format, SurfaceFormat};
use ctm::pe::{Command, CommandBuffer};
use ctm::runtime::Domain;
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
fn runs_again_allocate_nothing_from_a_kernel_a_device_or_a_connection() {
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
                let what = format!(
                    "{name} ({width} wide, strict {strict}), {engine:?}, {threads} threads"
                );
                settles_at_zero(&what, || {
                    p.run().unwrap();
                });
            }
        }
    }
    for &engine in &engines {
        for threads in [1, 2] {
            let what = format!("a live device, {engine:?}, {threads} threads");
            let mut dev = Device::open(DeviceConfig::default()).unwrap();
            let s = dev.settings_mut();
            (s.engine, s.threads, s.jit.tier) = (engine, threads, Tier::Quick);
            let base = dev.info().base_address_sys_c;
            let size = place_tiny(dev.arena_mut(ArenaKind::SystemCached), base);
            let mut submit = || {
                let id = dev.submit(base, size).unwrap();
                dev.wait(id).unwrap();
            };
            for _ in 0..20 {
                submit();
            }
            settles_at_zero(&what, submit);

            let what = format!("the C interface's connection, {engine:?}, {threads} threads");
            let conn = Connection::open(DeviceConfig::default()).unwrap();
            let base = conn.info().base_address_sys_c;
            let size = {
                let mut dev = conn.device();
                let s = dev.settings_mut();
                (s.engine, s.threads, s.jit.tier) = (engine, threads, Tier::Quick);
                place_tiny(dev.arena_mut(ArenaKind::SystemCached), base)
            };
            let submit = || {
                // As the CTM SDK's client does: submit, poll, read the
                // outcome.
                let id = conn.submit(base, size).unwrap();
                while !conn.consumed(id) {
                    std::hint::spin_loop();
                }
                conn.outcome(id).unwrap();
            };
            for _ in 0..20 {
                submit();
            }
            settles_at_zero(&what, submit);
        }
    }
}

/// Runs `run` in rounds of 100 until a round allocates nothing, and
/// fails if none of the first ten does.
fn settles_at_zero(what: &str, mut run: impl FnMut()) {
    let mut made = Vec::new();
    while made.len() < 10 && made.last() != Some(&0) {
        let before = ALLOCATIONS.load(Ordering::Relaxed);
        for _ in 0..100 {
            run();
        }
        made.push(ALLOCATIONS.load(Ordering::Relaxed) - before);
    }
    assert_eq!(
        made.last(),
        Some(&0),
        "{what}: allocations in rounds of 100 re-runs: {made:?}"
    );
}

/// Writes a command buffer that runs the one-instruction kernel over
/// 64 × 64 pixels (its program at `base` + 2 KiB, its output at `base` +
/// 64 KiB) at the start of `arena`, whose first byte is at `base`;
/// returns the buffer's size.
fn place_tiny(arena: &mut [u8], base: u32) -> u32 {
    let code = ctm::isa::asm::assemble(
        "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r0 wait last",
    )
    .unwrap();
    let image = ctm::abi::write(&ctm::abi::Executable::from_code(code));
    let mut cb = CommandBuffer::new();
    cb.push(Command::SetInstFmt {
        base: base + 0x800,
        fmt: SurfaceFormat::linear(Format::Float32_1, 0),
    })
    .push(Command::SetOutFmt {
        output: 0,
        base: base + 0x1_0000,
        fmt: SurfaceFormat::linear(Format::Float32_4, 64),
        height: 64,
    })
    .push(Command::SetDomain(Domain::new(64, 64)))
    .push(Command::StartProgram)
    .push(Command::FlushOutCache);
    let words = cb.to_bytes();
    arena[..words.len()].copy_from_slice(&words);
    arena[0x800..0x800 + image.len()].copy_from_slice(&image);
    words.len() as u32
}
