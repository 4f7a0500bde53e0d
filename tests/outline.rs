//! Quick code's outlined transcendentals (`docs/compile.md`,
//! "Transcendentals out of line") are compiled only for programs that use
//! them often enough, and then serve every quick compile of the process.
//! A test binary of its own, with one test: nothing else in the process
//! may compile them first.

#[path = "common/mod.rs"]
mod common;

use ctm::kernel::{Job, Kernel};
use ctm::mc::Format;
use ctm::{JitOptions, Tier};

/// A kernel of `n` SIN instructions (each on the previous one's result).
fn sines(n: usize) -> (Kernel, Job) {
    let mut src =
        String::from("alu r1.rgb = mad(s0, s1, s2) | r1.a = sin(s0.r) src0=r0 src1=c0 src2=c1\n");
    for _ in 1..n {
        src += "alu r1.rgb = mad(s0, s1, s2) | r1.a = sin(s0) src0=r1 src1=c0 src2=c1\n";
    }
    src += "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last\n";
    let job = Job::new(32, 8)
        .constant(0, [0.25, -0.5, 0.75, 1.5])
        .constant(1, [0.125, 0.5, -1.0, 2.0])
        .output(0, Format::Float32_4);
    (Kernel::assemble(&src).unwrap(), job)
}

/// Calls in the quick code of `k`'s program.
fn quick_calls(k: &Kernel, job: &Job) -> usize {
    let program = ctm_tools::bench::program_for(k, job);
    let opts = JitOptions {
        tier: Tier::Quick,
        ..JitOptions::default()
    };
    let text = ctm_jit::compile::clif(&program, opts, &|pc| format!("{pc}")).unwrap();
    text.matches("call_indirect").count()
}

#[test]
fn outlined_functions_are_compiled_where_a_program_uses_them_often() {
    if !common::jit_available() {
        return;
    }
    let (one, one_job) = sines(1);
    let (many, many_job) = sines(8);
    // One SIN is not worth a function of its own: inline.
    assert_eq!(quick_calls(&one, &one_job), 0);
    // Eight are: compiled and called.
    assert!(quick_calls(&many, &many_job) >= 8);
    // Once the process has it, every quick compile calls it.
    assert!(quick_calls(&one, &one_job) >= 1);
    // Inline or called, the interpreter's bits.
    common::both(&one, &one_job);
    common::both(&many, &many_job);
}
