//! The fuzz targets of `ctm::fuzz`, driven by the stable mutation driver
//! for a bounded time: every saved regression input first, then
//! `CTM_FUZZ_SECONDS` (default 20) of fresh inputs per target from seed
//! `CTM_FUZZ_SEED` (default 1). Failing inputs are saved under
//! `fuzz/crashes/<target>/` (replay one by copying it to
//! `fuzz/regressions/<target>/`); the test fails with their messages.
//!
//! A long run: `CTM_FUZZ_SECONDS=3600 CTM_FUZZ_SEED=7 cargo test --release
//! --test fuzz -- --nocapture` (the targets run in parallel, one per test
//! thread).

use ctm::fuzz::{Driver, Target};
use std::path::{Path, PathBuf};
use std::time::Duration;

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

fn fuzz(t: Target) {
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
    let seconds = env("CTM_FUZZ_SECONDS", 20);
    let seed = env("CTM_FUZZ_SEED", 1) ^ (t as u64) << 32;
    let mut driver = Driver::new(t, seed, replayed);
    let s = driver.run(Duration::from_secs(seconds), u64::MAX);
    eprintln!(
        "fuzz {}: {} inputs in {seconds} s (seed {seed:#x}), {} failure(s)",
        t.name(),
        s.inputs,
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
    assert!(s.inputs > 0);
}

#[test]
fn elf_loading() {
    fuzz(Target::Elf);
}

#[test]
fn instruction_words() {
    fuzz(Target::Words);
}

#[test]
fn assembly_text() {
    fuzz(Target::Asm);
}

#[test]
fn command_streams() {
    fuzz(Target::Stream);
}

#[test]
fn programs_on_both_engines() {
    fuzz(Target::Program);
}

#[test]
fn d3d9_shaders() {
    fuzz(Target::Shader);
}

#[test]
fn ir_on_both_engines() {
    fuzz(Target::Ir);
}
