//! Tiered compilation: quick code first, optimised code compiled in the
//! background once the program proves hot, switched to between groups.
//! Every run must give the interpreter's bits, whichever code ran it —
//! including a run that switches part-way.

use crate::common::{jit_available, ran_natively};
use ctm::engine::EngineKind;
use ctm::kernel::{Job, Kernel};
use ctm::mc::Format;
use ctm::{JitOptions, Tier};
use ctm_jit::compile::{CodeCache, compile};
use std::time::{Duration, Instant};

/// Escape-time iteration with a per-pixel exit (a lane-wise loop region)
/// and straight clauses around it. The escape radius² `radius` is a
/// literal of the program, unique per test, so that no other test's runs
/// share the program's code.
fn kernel(radius: f32) -> (Kernel, Job) {
    let k = Kernel::assemble(
        &"
    alu r1.rgb = mad(s0, s1, s2) | _ = max.off(s0, s0) src0=r0 src1=c0 src2=c1
    alu r2.rgb = max.off(s0, s0) | _ = max.off(s0, s0) src0=0.0
    LOOP i0 -> done
body:
    alu r3.rgb = mad(s0.rgr, s0.rgg, s1.000) | _ = max.off(s0, s0) src0=r2
    alu r4.rgb = mad(s0.rrr, s0.111, s0.ggg) | _ = max.off(s0, s0) src0=r3
    alu _ = mad(s0.rrr, s0.111, -s1.rrr) | _ = max.off(s0, s0) src0=r4 src1=RADIUS res=r>=0
    BREAKLOOP alu_result != 0 -> done
    alu r5.rgb = mad(s0.rb0, s1.1rr, s2) | _ = max.off(s0, s0) src0=r3 src1=2.0 src2=r1
    alu r2.rg = mad(-s0.g00, s1.111, s2) | _ = max.off(s0, s0) src0=r3 src1=r0 src2=r5
    alu r2.b = mad(s0.111, s0.111, s0) | _ = max.off(s0, s0) src0=r2
    ENDLOOP i0 -> body
done:
    alu r6.rgb = mad(s0, s1, s2) | r6.a = max.off(s0.1, s0.1) src0=r2 src1=c2 src2=r4
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r6 wait last
"
        .replace("RADIUS", &format!("{radius:?}")),
    )
    .unwrap();
    let job = Job::new(384, 256)
        .constant(0, [3.0 / 384.0, 2.0 / 256.0, 0.0, 0.0])
        .constant(1, [-2.2, -1.0, 0.0, 0.0])
        .constant(2, [0.125, 0.25, 0.5, 0.0])
        .int(0, 96, 0, 1)
        .output(0, Format::Float32_4)
        .threads(2);
    (k, job)
}

fn with(job: &Job, engine: EngineKind, tier: Tier) -> Job {
    let mut job = job.clone();
    job.settings_mut().engine = engine;
    job.settings_mut().jit = JitOptions {
        tier,
        ..JitOptions::default()
    };
    job
}

#[test]
fn hot_programs_switch_to_optimised_code_with_the_same_results() {
    if !jit_available() {
        return;
    }
    let (k, job) = kernel(4.0);
    let want = k
        .run(&with(&job, EngineKind::Interp, Tier::Tiered))
        .unwrap();
    let want = want.output(0).unwrap();
    let mut p = k
        .prepare(&with(&job, EngineKind::Jit, Tier::Tiered))
        .unwrap();
    // The optimised code compiles on a thread of its own: wait for it,
    // checking every run on the way (the first switches part-way as soon
    // as the optimised code is there).
    let start = Instant::now();
    let mut runs = 0;
    let mut switched = 0;
    while switched == 0 {
        let report = p.run().unwrap();
        runs += 1;
        assert_eq!(p.output(0).unwrap(), *want, "run {runs}");
        ran_natively(&report.engine, true).unwrap_or_else(|e| panic!("run {runs}: {e}"));
        switched = report.engine.tier_ups;
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no switch to optimised code after {runs} runs"
        );
    }
    // Each worker switches at its next group; then they stay on the
    // optimised code and later runs switch no more.
    for _ in 0..2 {
        p.run().unwrap();
        assert_eq!(p.output(0).unwrap(), *want);
    }
    for _ in 0..3 {
        let report = p.run().unwrap();
        ran_natively(&report.engine, true).unwrap_or_else(|e| panic!("optimised: {e}"));
        assert_eq!(report.engine.tier_ups, 0);
        assert_eq!(p.output(0).unwrap(), *want);
    }
    // A new run of the same job finds the optimised code in the cache.
    let again = k.run(&with(&job, EngineKind::Jit, Tier::Tiered)).unwrap();
    assert_eq!(again.report.engine.tier_ups, 0);
    assert_eq!(again.report.engine.compiled, 0);
    assert_eq!(again.output(0).unwrap(), want);
}

#[test]
fn fixed_tiers_never_switch() {
    if !jit_available() {
        return;
    }
    for (radius, tier) in [(4.5, Tier::Quick), (5.0, Tier::Optimised)] {
        let (k, job) = kernel(radius);
        let want = k.run(&with(&job, EngineKind::Interp, tier)).unwrap();
        let mut p = k.prepare(&with(&job, EngineKind::Jit, tier)).unwrap();
        for _ in 0..6 {
            let report = p.run().unwrap();
            ran_natively(&report.engine, true).unwrap_or_else(|e| panic!("{tier:?}: {e}"));
            assert_eq!(report.engine.tier_ups, 0, "{tier:?}");
            assert_eq!(p.output(0), want.output(0).cloned(), "{tier:?}");
        }
    }
}

#[test]
fn small_runs_never_pay_for_a_second_compilation() {
    if !jit_available() {
        return;
    }
    let (k, _) = kernel(5.5);
    let small = Job::new(16, 16)
        .threads(2)
        .constant(0, [0.1, 0.1, 0.0, 0.0])
        .constant(1, [-0.5, -0.5, 0.0, 0.0])
        .constant(2, [0.125, 0.25, 0.5, 0.0])
        .int(0, 4, 0, 1)
        .output(0, Format::Float32_4);
    // 64 quads × at most 40 instructions a run: fifty runs stay under the
    // least work before a program tiers up.
    let mut p = k
        .prepare(&with(&small, EngineKind::Jit, Tier::Tiered))
        .unwrap();
    for _ in 0..50 {
        assert_eq!(p.run().unwrap().engine.tier_ups, 0);
    }
    const { assert!(64 * 40 * 50 < ctm_jit::compile::MIN_TIER_UP_WORK) };
    // Let a background compilation, had one started, finish: none may.
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(p.run().unwrap().engine.tier_ups, 0);
}

#[test]
fn the_cache_hands_out_optimised_code_once_it_is_compiled() {
    if !jit_available() {
        return;
    }
    let (k, job) = kernel(6.0);
    let program = std::sync::Arc::new(ctm_tools::bench::program_for(&k, &job));
    let cache = CodeCache::new(4);
    let opts = JitOptions::default();
    let (quick, fresh) = cache.get(&program, opts).unwrap();
    assert!(fresh && quick.tiers_up() && quick.upgraded().is_none());
    // Below the threshold nothing starts; past it, exactly one report
    // asks for the optimised code.
    assert!(!quick.add_work(1));
    assert!(quick.add_work(u64::MAX / 4));
    assert!(!quick.add_work(u64::MAX / 4));
    cache.tier_up(program.clone(), opts, quick.clone());
    let start = Instant::now();
    while quick.upgraded().is_none() {
        assert!(start.elapsed() < Duration::from_secs(60), "never compiled");
        std::thread::sleep(Duration::from_millis(5));
    }
    let better = quick.best();
    assert!(!better.tiers_up());
    let (found, fresh) = cache.get(&program, opts).unwrap();
    assert!(!fresh && std::sync::Arc::ptr_eq(&found, &better));
    // Quick code compiles the same program faster than optimised code
    // (here only checked to be different code, not timed).
    let q = compile(
        &program,
        JitOptions {
            tier: Tier::Quick,
            ..opts
        },
    )
    .unwrap();
    assert!(!q.tiers_up());
    assert_eq!(q.len(), better.len());
}

/// Quick code calls EX2, LN2, SIN and COS out of line (functions compiled
/// once per process from the same lowering, for programs that use them
/// often: `transcend` uses each eight times); optimised code makes them
/// inline. Both give the interpreter's bits (checked here on a run, and on
/// every input by the sweeps).
#[test]
fn quick_code_calls_the_transcendentals_out_of_line() {
    if !jit_available() {
        return;
    }
    let case = ctm_tools::bench::suite::case("transcend").unwrap();
    let (k, job) = (case.kernel, case.job.domain(64, 8));
    let program = ctm_tools::bench::program_for(&k, &job);
    let listing = |tier| {
        let opts = JitOptions {
            tier,
            ..JitOptions::default()
        };
        ctm_jit::compile::clif(&program, opts, &|pc| format!("{pc}")).unwrap()
    };
    let calls = |text: &str| text.matches("call_indirect").count();
    // At least one call per use of each of the four operations.
    let quick = listing(Tier::Quick);
    assert!(calls(&quick) >= 32, "{quick}");
    assert!(!quick.contains("nearest"), "{quick}");
    let optimised = listing(Tier::Optimised);
    assert_eq!(calls(&optimised), 0, "{optimised}");
    assert!(optimised.contains("nearest"), "{optimised}");
    crate::common::both(&k, &job);
}

/// A run whose rows go through compiled strips switches to optimised code
/// part-way where that is compiled while the run is under way: each worker
/// keeps the strip of its first row for its other rows, and switches it
/// between two of them (as the shim switches between groups) — where the
/// optimised strip takes batches of as many quads. Where it takes wider
/// ones (`chains4`: one quad quick, two optimised, and 31 quads a row
/// here), the run keeps the quick strip and the next run switches.
#[test]
fn strips_switch_to_optimised_code_between_rows_of_the_same_batch() {
    if !jit_available() {
        return;
    }
    // A literal unique to this test keeps other tests' runs off its code.
    let k = Kernel::assemble(
        "
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r0 src1=c0 src2=0.8125
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last
",
    )
    .unwrap();
    let job = Job::new(64, 64)
        .constant(0, [0.5, -0.25, 3.0, 1e-40])
        .output(0, Format::Float32_4)
        .threads(1);
    assert_eq!(switch_after_the_first_row(&k, &job), [1, 0]);
    let chains4 = ctm_tools::bench::suite::case("chains4").unwrap();
    let job = chains4.job.clone().domain(62, 8).threads(1);
    assert_eq!(switch_after_the_first_row(&chains4.kernel, &job), [0, 1]);
}

/// Runs `k` on `job` twice with tiered code of a code cache of its own,
/// the program made hot and its optimised code compiled after the first
/// row of the first run; checks both runs' outputs against the
/// interpreter's and returns their switches to optimised code.
fn switch_after_the_first_row(k: &Kernel, job: &Job) -> [u64; 2] {
    let want = k.run(&with(job, EngineKind::Interp, Tier::Tiered)).unwrap();
    let program = std::sync::Arc::new(ctm_tools::bench::program_for(k, job));
    let cache = CodeCache::new(4);
    let mut jit = with(job, EngineKind::Jit, Tier::Tiered);
    let opts = jit.settings().jit;
    jit.settings_mut().code_cache = Some(cache.clone());
    let rows = u64::from(job.size().1.div_ceil(2));
    jit.settings_mut().progress = Some(std::sync::Arc::new(move |done, _| {
        let Ok((quick, _)) = cache.get(&program, opts) else {
            return;
        };
        if done != 1 || quick.upgraded().is_some() || !quick.tiers_up() {
            return;
        }
        assert!(quick.add_work(u64::MAX / 4));
        cache.tier_up(program.clone(), opts, quick.clone());
        let start = Instant::now();
        while quick.upgraded().is_none() {
            assert!(start.elapsed() < Duration::from_secs(60), "never compiled");
            std::thread::sleep(Duration::from_millis(1));
        }
    }));
    let mut p = k.prepare(&jit).unwrap();
    [0, 1].map(|run| {
        let report = p.run().unwrap();
        assert_eq!(report.engine.strip_runs, rows, "run {run}");
        assert_eq!(p.output(0), want.output(0).cloned(), "run {run}");
        report.engine.tier_ups
    })
}
