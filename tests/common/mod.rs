//! Helpers shared by the integration tests: kernels on both engines (the
//! harness's comparator), the shader reference. Each test crate uses some
//! of them.
#![allow(dead_code)]

pub mod d3d9_ref;
pub mod shader;

use ctm::kernel::{Job, JobResult, Kernel};
#[allow(unused_imports)]
pub use ctm_tools::check::{jit_available, ran_natively, run_both};

/// How many random shaders a shader test checks per run: 1000, or
/// `CTM_D3D9_CASES` for longer runs.
pub fn d3d9_cases() -> u32 {
    std::env::var("CTM_D3D9_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1000)
}

/// Runs `job` on the interpreter and on the JIT through the harness's
/// comparator ([`ctm_tools::check::run_both`]): the whole results must agree
/// and the JIT must have run natively. Returns the result.
pub fn both(kernel: &Kernel, job: &Job) -> JobResult {
    run_both(kernel, job)
        .unwrap_or_else(|report| panic!("{report}"))
        .unwrap_or_else(|e| panic!("the job failed on both engines: {e}"))
}

/// Runs `job` on the interpreter and on the JIT through the harness's
/// comparator, which must find them agreeing (a failed run's error
/// included); returns the run's error message, empty where it ran.
pub fn both_error(kernel: &Kernel, job: &Job) -> String {
    match run_both(kernel, job).unwrap_or_else(|report| panic!("{report}")) {
        Ok(_) => String::new(),
        Err(e) => e.to_string(),
    }
}

/// The z-buffer job of `examples/zbuffer.s` on a `w × h` domain: a plane
/// at depth 0.1·i tested `Less` against a buffer of 0.5 at the DPP, with
/// the passing depth written back; colour (1, 1, 1, 1) into output 0.
pub fn zbuffer_job(w: u32, h: u32) -> Job {
    use ctm::co::{CondLoc, CondTest};
    use ctm::kernel::{CondSetup, HostSurface};
    use ctm::mc::Format;
    Job::new(w, h)
        .constant(0, [0.1, 0.0, 0.0, 0.0])
        .constant(1, [0.0; 4])
        .constant(2, [1.0; 4])
        .output(0, Format::Float32_4)
        .cond(CondSetup {
            test: CondTest::Less,
            loc: CondLoc::Dpp,
            write: true,
            buffer: HostSurface::from_f32(Format::Float32_1, w, h, &vec![0.5; (w * h) as usize])
                .unwrap(),
        })
}
