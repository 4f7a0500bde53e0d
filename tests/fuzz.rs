//! The fuzz targets of `ctm_tools::fuzz`, driven by the stable mutation driver
//! for a bounded number of inputs: every saved regression input first, then
//! each target's count of fresh inputs (about ten seconds of a debug build
//! on one core; times `CTM_FUZZ_SCALE`, default 1) from seed
//! `CTM_FUZZ_SEED` (default 1) — a seed and a scale replay a run exactly,
//! on any machine. Failing inputs are saved under `fuzz/crashes/<target>/`
//! (replay one by copying it to `fuzz/regressions/<target>/`); the test
//! fails with their messages.
//!
//! A long run: `CTM_FUZZ_SCALE=1000 CTM_FUZZ_SEED=7 cargo test --release
//! --test fuzz -- --nocapture` (the targets run in parallel, one per test
//! thread).

use ctm_tools::fuzz::{Driver, Target};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn dir(kind: &str, t: Target) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz")
        .join(kind)
        .join(t.name())
}

/// A name for an input: FNV-1a of its bytes.
fn name(data: &[u8]) -> String {
    let h = data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{h:016x}.bin")
}

/// Fuzzes `t` with `inputs` fresh inputs (times `CTM_FUZZ_SCALE`).
fn fuzz(t: Target, inputs: u64) {
    // Panics are caught and reported as failures; do not print each.
    std::panic::set_hook(Box::new(|_| {}));
    let mut failures = Vec::new();
    let mut replayed = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir("regressions", t)) {
        for e in entries.flatten() {
            let data = std::fs::read(e.path()).unwrap();
            if let Err(m) = Driver::try_one(t, &data) {
                failures.push(format!("{}: {m}", e.path().display()));
            }
            replayed.push(data);
        }
    }
    let inputs = inputs.saturating_mul(env("CTM_FUZZ_SCALE", 1));
    let seed = env("CTM_FUZZ_SEED", 1) ^ (t as u64) << 32;
    let mut driver = Driver::new(t, seed, replayed);
    let start = Instant::now();
    let s = driver.run(Duration::MAX, inputs);
    eprintln!(
        "fuzz {}: {} inputs in {:.1} s (seed {seed:#x}), {} failure(s)",
        t.name(),
        s.inputs,
        start.elapsed().as_secs_f64(),
        s.failures.len()
    );
    for f in &s.failures {
        let d = dir("crashes", t);
        let _ = std::fs::create_dir_all(&d);
        let path = d.join(name(&f.data));
        let _ = std::fs::write(&path, &f.data);
        failures.push(format!(
            "{} ({} bytes): {}",
            path.display(),
            f.data.len(),
            f.message
        ));
    }
    let _ = std::panic::take_hook();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert_eq!(s.inputs, inputs);
}

#[test]
fn elf_loading() {
    fuzz(Target::Elf, 20_000_000);
}

#[test]
fn instruction_words() {
    fuzz(Target::Words, 40_000);
}

#[test]
fn assembly_text() {
    fuzz(Target::Asm, 1_500_000);
}

#[test]
fn command_streams() {
    fuzz(Target::Stream, 60_000);
}

#[test]
fn programs_on_both_engines() {
    fuzz(Target::Program, 5_000);
}

#[test]
fn d3d9_shaders() {
    fuzz(Target::Shader, 20_000_000);
}

#[test]
fn ir_on_both_engines() {
    fuzz(Target::Ir, 4_000);
}
