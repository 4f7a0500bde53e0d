//! Helpers shared by the integration tests: kernels on both engines, and
//! the `ctm` tool ([`cli`]). Each test crate uses some of them.
#![allow(dead_code)]

pub mod cli;
pub mod d3d9_ref;
pub mod shader;

use ctm::engine::EngineKind;
use ctm::kernel::{Job, JobResult, Kernel};

/// Runs `job` on the interpreter and on the JIT; the whole results must be
/// identical (outputs, conditional buffer, counters) and the JIT must have
/// run every clause natively. Returns the result.
pub fn both(kernel: &Kernel, job: &Job) -> JobResult {
    let mut interp = job.clone();
    interp.settings.engine = EngineKind::Interp;
    let want = kernel.run(&interp).unwrap();
    if ctm_jit::host::check_features().is_err() {
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
