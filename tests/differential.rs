//! Differential testing of the JIT against the interpreter on random
//! programs (`ctm::diff`): every outcome — outputs, counters, uncached
//! memory, errors — must agree bit for bit, at both Cranelift optimisation
//! levels and batch widths.
//!
//! CI runs a bounded number of programs; set `CTM_DIFF_PROGRAMS` (and
//! optionally `CTM_DIFF_SEED`) for a longer run, e.g.
//! `CTM_DIFF_PROGRAMS=200000 cargo test --release --test differential`.

use ctm::diff::{Case, compare};
use ctm::engine::EngineKind;
use ctm_jit::compile::{JitOptions, OptLevel};

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Programs `seed0 + k` for `k ≡ part (mod parts)`.
fn run_part(part: u64, parts: u64) {
    if ctm_jit::host::check_features().is_err() {
        eprintln!("host cannot run the JIT; skipped");
        return;
    }
    let total = env("CTM_DIFF_PROGRAMS", 2_400);
    let seed0 = env("CTM_DIFF_SEED", 1);
    let programs = (part..total).step_by(parts as usize).count() as u64;
    let variants = [
        JitOptions {
            opt_level: OptLevel::Speed,
            quads_per_iter: 0,
        },
        JitOptions {
            opt_level: OptLevel::None,
            quads_per_iter: 2,
        },
        JitOptions {
            opt_level: OptLevel::Speed,
            quads_per_iter: 1,
        },
    ];
    let mut errors = 0;
    let mut loop_runs = 0;
    for k in (part..total).step_by(parts as usize) {
        let case = Case::random(seed0 + k);
        let (want, _) = case.run(EngineKind::Interp, JitOptions::default());
        if want.is_err() {
            errors += 1;
        }
        // Each program on one variant, rotating, so every variant sees a
        // third of the programs.
        let opts = variants[(k % 3) as usize];
        let (got, stats) = case.run(EngineKind::Jit, opts);
        loop_runs += u64::from(stats.loop_runs > 0);
        assert!(
            stats.fallback_reasons.is_empty() && stats.native_runs > 0,
            "seed {}: {stats:?}\n{}",
            case.seed,
            case.asm
        );
        if let Some(report) = compare(&case, &want, &got, "interp", &format!("jit {opts:?}")) {
            panic!("{report}");
        }
    }
    eprintln!("compiled loop regions ran in {loop_runs} of {programs} programs");
    // Compiled loop regions run in enough programs to be compared.
    assert!(
        loop_runs * 20 > programs,
        "compiled loop regions ran in only {loop_runs} of {programs} programs"
    );
    // The generator must mostly produce programs that run to the end.
    assert!(
        errors * 4 < programs,
        "{errors} of {programs} programs stopped with an error"
    );
}

// Two halves, so the test harness runs them on two threads.
#[test]
fn random_programs_agree_across_engines_even_seeds() {
    run_part(0, 2);
}

#[test]
fn random_programs_agree_across_engines_odd_seeds() {
    run_part(1, 2);
}
