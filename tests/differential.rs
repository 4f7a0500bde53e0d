//! Differential testing of the JIT against the interpreter on random
//! programs (`ctm_tools::diff`): every outcome — outputs, counters, uncached
//! memory, errors — must agree bit for bit, at both Cranelift optimisation
//! levels and batch widths.
//!
//! CI runs a bounded number of programs (2,400). A long run checks the
//! seeds `CTM_DIFF_SEED .. CTM_DIFF_SEED + CTM_DIFF_PROGRAMS` on
//! `CTM_DIFF_THREADS` threads (default: all cores), each program on the
//! interpreter and on the JIT — optimisation level and batch width
//! rotating — and prints progress; to resume after an interruption, start
//! again at the seed the last progress line names:
//!
//! ```text
//! CTM_DIFF_PROGRAMS=1000000 CTM_DIFF_SEED=1 cargo test --release --test differential -- --nocapture
//! ```

mod common;

use ctm_jit::compile::{JitOptions, OptLevel, Tier};
use ctm_tools::diff::Case;
use std::sync::atomic::{AtomicU64, Ordering};

/// The next seed offset each part will check (all before it are done).
static PROGRESS: [AtomicU64; 256] = [const { AtomicU64::new(0) }; 256];

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Programs `seed0 + k` for `k ≡ part (mod parts)`, on the half's share
/// of the threads.
fn run_half(half: u64) {
    // Quick code calls the outlined transcendentals the process has
    // (docs/compile.md, "Transcendentals out of line"); random programs
    // seldom use one often enough to compile it, so a kernel that does
    // compiles them first, and every quick compile here calls them.
    if common::jit_available() {
        let case = ctm_tools::bench::suite::case("transcend").expect("a bundled kernel");
        let program = ctm_tools::bench::program_for(&case.kernel, &case.job);
        let quick = JitOptions {
            tier: Tier::Quick,
            ..JitOptions::default()
        };
        // Lowering its clauses compiles the functions they call.
        ctm_jit::compile::clif(&program, quick, &|pc| format!("{pc}")).expect("transcend lowers");
    }
    let threads = env(
        "CTM_DIFF_THREADS",
        std::thread::available_parallelism().map_or(2, |n| n.get() as u64),
    )
    .max(2);
    // Two tests (the harness runs them side by side), each with half the
    // threads; part p of `threads` takes seeds k ≡ p (mod threads).
    let per = threads / 2;
    std::thread::scope(|s| {
        for p in 0..per {
            s.spawn(move || run_part(half * per + p, 2 * per));
        }
    });
}

/// Programs `seed0 + k` for `k ≡ part (mod parts)`.
fn run_part(part: u64, parts: u64) {
    if !common::jit_available() {
        return;
    }
    let total = env("CTM_DIFF_PROGRAMS", 2_400);
    let seed0 = env("CTM_DIFF_SEED", 1);
    let programs = (part..total).step_by(parts as usize).count() as u64;
    let variants = [
        JitOptions {
            opt_level: OptLevel::Speed,
            quads_per_iter: 0,
            tier: Tier::Optimised,
        },
        JitOptions {
            opt_level: OptLevel::None,
            quads_per_iter: 2,
            tier: Tier::Optimised,
        },
        JitOptions {
            opt_level: OptLevel::Speed,
            quads_per_iter: 1,
            tier: Tier::Optimised,
        },
        JitOptions {
            opt_level: OptLevel::Auto,
            quads_per_iter: 0,
            tier: Tier::Quick,
        },
    ];
    let mut errors = 0;
    let (mut loop_runs, mut lanewise_runs) = (0, 0);
    let mut done = 0u64;
    for k in (part..total).step_by(parts as usize) {
        done += 1;
        if part == 0 && done.is_multiple_of(10_000) {
            // Each part checks its seeds in order: every seed below the
            // slowest part's next one is checked.
            let upto = (0..parts as usize)
                .map(|p| PROGRESS[p % PROGRESS.len()].load(Ordering::Relaxed))
                .min()
                .unwrap_or(0);
            eprintln!(
                "differential: every seed below {} checked (resume with CTM_DIFF_SEED={})",
                seed0 + upto,
                seed0 + upto
            );
        }
        let case = Case::random(seed0 + k);
        // Each program on one variant, rotating, so every variant sees a
        // quarter of the programs.
        let opts = variants[(k % variants.len() as u64) as usize];
        let (got, stats) = case
            .run_both(opts)
            .unwrap_or_else(|report| panic!("{report}"));
        if got.is_err() {
            errors += 1;
        }
        loop_runs += u64::from(stats.loop_runs > 0);
        lanewise_runs += u64::from(stats.lanewise_runs > 0);
        PROGRESS[part as usize % PROGRESS.len()].store(k + 1, Ordering::Relaxed);
    }
    eprintln!(
        "differential part {part}/{parts}: {programs} programs of seeds {seed0}..{} agree; compiled regions (loop and branch) ran in {loop_runs}, lane-wise in {lanewise_runs}",
        seed0 + total
    );
    // Compiled loop regions, lock-step and lane-wise, run in enough
    // programs to be compared.
    assert!(
        loop_runs * 20 > programs && lanewise_runs * 200 > programs,
        "compiled loop regions ran in only {loop_runs} of {programs} programs, lane-wise in {lanewise_runs}"
    );
    // The generator must mostly produce programs that run to the end.
    assert!(
        errors * 4 < programs,
        "{errors} of {programs} programs stopped with an error"
    );
}

// Two halves, so the test harness runs them side by side.
#[test]
fn random_programs_agree_across_engines_first_half() {
    run_half(0);
}

#[test]
fn random_programs_agree_across_engines_second_half() {
    run_half(1);
}

/// What an output of format float32_1 stores of `run`: for the render
/// targets `narrow` names, their channels other than red only as written
/// or not.
fn stored(run: &ctm_tools::check::Outcome, narrow: u8) -> ctm_tools::check::Outcome {
    let mut run = run.clone();
    if let Ok(r) = &mut run {
        for p in r.pixels.values_mut() {
            for (t, target) in p.targets.iter_mut().enumerate() {
                if narrow & (1 << t) != 0 {
                    for c in target.iter_mut().skip(1).flatten() {
                        *c = 0;
                    }
                }
            }
        }
    }
    run
}

/// Programs built for render targets of which some are float32_1 (a mask
/// per seed): the frontend drops what only their unstored channels use,
/// and registers that only feed their own next values. What is stored —
/// every target's red channel, the others' every channel, which channels
/// were written, counters, uncached memory, errors — must be what the
/// program built without dropping anything gives, on the interpreter and
/// on the JIT. `CTM_NARROW_PROGRAMS` programs from `CTM_DIFF_SEED`.
#[test]
fn programs_for_float32_1_targets_store_what_the_whole_program_does() {
    use ctm::engine::EngineKind;
    use ctm::frontend::Options;
    let total = env("CTM_NARROW_PROGRAMS", 600);
    let seed0 = env("CTM_DIFF_SEED", 1);
    let jit = common::jit_available();
    let opts = JitOptions {
        tier: Tier::Optimised,
        ..JitOptions::default()
    };
    let nodes = |p: &ctm_jit::ir::Program| p.clauses.iter().map(|c| c.nodes.len()).sum::<usize>();
    let (mut smaller, mut programs) = (0, 0);
    for seed in seed0..seed0 + total {
        let case = Case::random(seed);
        let narrow = (seed % 16) as u8;
        let whole = Options {
            drop_dead_writes: false,
            ..Options::loaded(case.uncached)
        };
        let dropped = Options {
            narrow: Some(narrow),
            ..Options::loaded(case.uncached)
        };
        let (want, _) = case.run_built(EngineKind::Interp, opts, whole);
        let want = stored(&want, narrow);
        let mut engines = vec![EngineKind::Interp];
        if jit {
            engines.push(EngineKind::Jit);
        }
        for engine in engines {
            let (got, stats) = case.run_built(engine, opts, dropped);
            if engine == EngineKind::Jit {
                let wrote = got.as_ref().is_ok_and(|r| !r.pixels.is_empty());
                ctm_tools::check::ran_natively(&stats, wrote)
                    .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{}", case.asm));
            }
            let name = format!("{engine:?}, float32_1 targets {narrow:#06b}");
            if let Some(report) =
                ctm_tools::diff::compare(&case, &want, &stored(&got, narrow), "whole", &name)
            {
                panic!("{report}");
            }
        }
        // The narrow build drops more than the plain one where a target
        // is narrow and its other channels were computed.
        let plain = nodes(&case.program(Options::loaded(case.uncached)));
        smaller += usize::from(nodes(&case.program(dropped)) < plain);
        programs += usize::from(narrow != 0 && !case.uncached);
    }
    // Not vacuous: most programs with a narrow target lose operations.
    assert!(
        smaller * 2 > programs,
        "only {smaller} of {programs} programs with a float32_1 target lost operations"
    );
}
