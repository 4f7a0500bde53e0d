//! Helpers shared by the integration tests: kernels on both engines, and
//! the `ctm` tool ([`cli`]). Each test crate uses some of them.
#![allow(dead_code)]

pub mod cli;
pub mod d3d9_ref;
pub mod shader;

use ctm::engine::EngineKind;
use ctm::kernel::{Job, JobResult, Kernel};

/// Whether the JIT can run here. Where the CPU lacks what it needs, the
/// tests that use it skip that part and say so on standard error — unless
/// `CTM_REQUIRE_JIT` is set (CI sets it), which makes that a failure. Where
/// the JIT can run, the tests run it, and a JIT that then falls back or
/// disagrees fails them.
pub fn jit_available() -> bool {
    match EngineKind::Jit.check() {
        Ok(()) => true,
        Err(e) if std::env::var_os("CTM_REQUIRE_JIT").is_some() => {
            panic!("the JIT cannot run on this machine ({e}), and CTM_REQUIRE_JIT asks for it")
        }
        Err(e) => {
            eprintln!("note: skipping the JIT half of this test: {e}");
            false
        }
    }
}

/// How many random shaders a shader test checks per run: 1000, or
/// `CTM_D3D9_CASES` for longer runs.
pub fn d3d9_cases() -> u32 {
    std::env::var("CTM_D3D9_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1000)
}

/// Runs `job` on the interpreter and on the JIT; the whole results must be
/// identical (outputs, conditional buffer, counters) and the JIT must have
/// run every clause natively. Returns the result.
pub fn both(kernel: &Kernel, job: &Job) -> JobResult {
    let mut interp = job.clone();
    interp.settings.engine = EngineKind::Interp;
    let want = kernel.run(&interp).unwrap();
    if !jit_available() {
        return want;
    }
    let mut jit = job.clone();
    jit.settings.engine = EngineKind::Jit;
    let got = kernel.run(&jit).unwrap();
    let e = &got.report.engine;
    assert!(e.native_runs > 0 && e.fallback_runs == 0, "{e:?}");
    assert_eq!(e.fallback_clauses, 0, "{:?}", e.fallback_reasons);
    assert_eq!(got.outputs, want.outputs, "outputs differ between engines");
    assert_eq!(got.cond, want.cond, "conditional buffers differ");
    let strip = |r: &ctm::pe::RunReport| ctm::pe::RunReport {
        engine: Default::default(),
        ..r.clone()
    };
    assert_eq!(strip(&got.report), strip(&want.report));
    got
}

/// The z-buffer job of `examples/zbuffer.s` on a `w × h` domain: a plane
/// at depth 0.1·i tested `Less` against a buffer of 0.5 at the DPP, with
/// the passing depth written back; colour (1, 1, 1, 1) into output 0.
pub fn zbuffer_job(w: u32, h: u32) -> Job {
    use ctm::co::{CondLoc, CondTest};
    use ctm::kernel::{CondSetup, HostSurface};
    use ctm::mc::Format;
    Job {
        cond: Some(CondSetup {
            test: CondTest::Less,
            loc: CondLoc::Dpp,
            write: true,
            buffer: HostSurface::from_f32(Format::Float32_1, w, h, &vec![0.5; (w * h) as usize])
                .unwrap(),
        }),
        ..Job::new(w, h)
            .constant(0, [0.1, 0.0, 0.0, 0.0])
            .constant(1, [0.0; 4])
            .constant(2, [1.0; 4])
            .output(0, Format::Float32_4)
    }
}
