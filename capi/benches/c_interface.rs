//! The cost of the C interface (`cargo bench -p ctm-capi`): one
//! `amSubmitCommandBuffer` round trip of the one-instruction kernel over
//! 64 × 64 with the program resident, and that kernel over 512 × 512 in
//! ns/pixel through C (`examples/c/submit_bench.c`), next to the same
//! kernel as `ctm bench` runs it (a whole `Kernel::run`: a fresh device,
//! set-up, run, read-back). One thread and all cores, JIT and interpreter.

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::Instant;

fn main() {
    let lib = common::library();
    let dir = common::scratch("bench");
    let exe = dir.join("submit_bench");
    common::build(
        &lib,
        &common::root().join("examples/c/submit_bench.c"),
        "c99",
        &exe,
    );
    let kernel = ctm_rs::kernel::Kernel::assemble(
        "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r0 wait last",
    )
    .unwrap();
    println!(
        "| engine | threads | C: 64² round trip, first | runs 2..N | C: 512² ns/pixel, first | runs 2..N | Kernel::run 512² ns/pixel |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for engine in ["jit", "interp"] {
        for threads in ["1", "0"] {
            let out = std::process::Command::new(&exe)
                .arg("3000")
                .env("CTM_ENGINE", engine)
                .env("CTM_THREADS", if threads == "0" { "" } else { threads })
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success(),
                "{text}{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let numbers: Vec<f64> = text
                .split(|c: char| !(c.is_ascii_digit() || c == '.'))
                .filter_map(|w| w.parse().ok())
                .collect();
            // round trip 64x64: first F us, then T us (N ns/pixel)
            // 512x512: first F ns/pixel, runs 2..N best B ns/pixel
            let (rt_first, rt, first512, best512) =
                (numbers[2], numbers[3], numbers[7], numbers[8]);
            let kind = ctm_rs::engine::EngineKind::parse(engine).unwrap();
            let n = if threads == "0" {
                ctm_rs::pe::all_cores()
            } else {
                1
            };
            let job = ctm_rs::kernel::Job::new(512, 512)
                .output(0, ctm_rs::mc::Format::Float32_4)
                .engine(kind)
                .threads(n);
            let whole = (0..5)
                .map(|_| {
                    let t = Instant::now();
                    kernel.run(&job).unwrap();
                    t.elapsed().as_secs_f64()
                })
                .fold(f64::INFINITY, f64::min);
            println!(
                "| {engine} | {n} | {rt_first:.0} µs | {rt:.1} µs | {first512:.2} | {best512:.2} | {:.2} |",
                whole * 1e9 / 262_144.0
            );
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}
