//! Random programs of the differential generator (structured flow
//! control, lookups, predicates, relative addressing; a quarter uncached)
//! through the PE, where the JIT's compiled paths that need the memory
//! controller run: lookups read from memory in clauses, strips and loop
//! regions, uncached writes appended by compiled code. Inputs come in every
//! format, uncached memory in several. Memory, counters and errors must be
//! the interpreter's.

use crate::common;

use ctm::engine::EngineKind;
use ctm::kernel::{Job, Kernel};
use ctm::mc::Format;
use ctm_tools::diff::Case;

/// The job of `case` through the PE: its domain, constants and inputs
/// (formats chosen by the seed), outputs 0–3 of float32_4, or for an
/// uncached program output 0 (uncached memory) of `format`, holding a
/// pattern.
fn job(case: &Case, format: Format) -> Job {
    let seed = case.seed;
    let d = case.domain;
    let (w, h) = (d.i1 + 1, d.j1 + 1);
    let mut job = Job::new(w, h).threads(1 + (seed % 3) as usize);
    if case.uncached {
        job = job.output_init(0, crate::uncached::memory(format, w, h));
    } else {
        for t in 0..4 {
            job = job.output(t, Format::Float32_4);
        }
    }
    for (n, c) in case.uniforms.consts.iter().enumerate().take(8) {
        job = job.constant(n as u8, c.map(f32::from_bits));
    }
    for (n, i) in case.uniforms.ints.iter().enumerate().take(4) {
        job = job.int(n as u8, i.count, i.init, i.step);
    }
    for n in 0..32u8 {
        job = job.boolean(n, case.uniforms.bools & (1 << n) != 0);
    }
    for (n, image) in case.textures.inputs.iter().enumerate().take(2) {
        let Some(image) = image else { continue };
        job = job.input(n as u8, crate::strips::input(image, seed / 3 + n as u64));
    }
    job
}

#[test]
fn random_programs_agree_with_the_interpreter_through_the_pe() {
    let cases: u64 = std::env::var("CTM_PE_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(600);
    let (mut logged, mut loops, mut uncached) = (0, 0, 0);
    for seed in 0..cases {
        let case = Case::random(seed);
        let k = Kernel::assemble(&case.asm).unwrap_or_else(|e| panic!("{}: {e}", case.asm));
        let format = [Format::Float32_1, Format::Float32_4, Format::Uint8_4][(seed % 3) as usize];
        let job = job(&case, format);
        if let Err(report) = ctm_tools::check::run_both(&k, &job) {
            panic!("seed {seed}, {format}\n{}\n{report}", case.asm);
        }
        uncached += u64::from(case.uncached);
        if common::jit_available()
            && let Ok(r) = k.run(&job.clone().engine(EngineKind::Jit))
        {
            logged += r.report.engine.uncached_logged;
            loops += r.report.engine.loop_runs;
        }
    }
    if common::jit_available() && cases >= 100 {
        assert!(uncached > 0 && logged > 0, "no uncached write was compiled");
        assert!(loops > 0, "no loop region ran");
    }
}
