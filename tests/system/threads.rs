//! Rows on several workers (`docs/design.md`, "Host-visible arenas and
//! dispatch"): each worker takes a block of rows and then helps with the
//! others', yet a failing run reports the first failing row in row order
//! whatever the thread count; engines kept between runs report each run
//! alone.

use crate::common;

use ctm::engine::EngineKind;
use ctm::kernel::{Job, Kernel, KernelError};
use ctm::mc::Format;
use ctm::runtime::RunError;

/// Each pixel loops until r1 > j (r5.r holds j), so groups of later rows
/// execute more instructions; a budget stops every row from some row on.
const ROW_BOUND: &str = "
    alu r1.rgb = max.off(s0, s0) | r1.a = max.off(s0, s0) src0=0.0
    alu r5.rgb = max.off(s0.ggg, s0.ggg) | r5.a = max.off(s0, s0) src0=r0
    LOOP i0 -> done
body:
    alu r1.rgb = mad(s0.111, s0.111, s0) | r1.a = mad(s0.1, s0.1, s0) src0=r1
    alu _ = mad(sp, s0.111, -s0.111) | _ = mad(sp, s0.1, -s0.1) src0=r5 src1=r1 srcp=sub res=r>=0
    BREAKLOOP alu_result != 0 -> done
    ENDLOOP i0 -> body
done:
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last
";

fn engines() -> Vec<EngineKind> {
    let mut e = vec![EngineKind::Interp];
    if common::jit_available() {
        e.push(EngineKind::Jit);
    }
    e
}

/// The pixel a runaway error names.
fn runaway_pixel(e: &KernelError) -> (u32, u32) {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if let Some(RunError::Runaway { pixel, .. }) = s.downcast_ref::<RunError>() {
            return *pixel;
        }
        source = s.source();
    }
    panic!("not a runaway: {e}");
}

#[test]
fn the_first_failing_row_is_reported_whatever_the_thread_count() {
    let k = Kernel::assemble(ROW_BOUND).unwrap();
    let job = |engine, threads| {
        let mut job = Job::new(64, 256)
            .int(0, 255, 0, 0)
            .output(0, Format::Float32_4)
            .engine(engine);
        job.settings_mut().threads = threads;
        job.settings_mut().options.budget = 200;
        job
    };
    let want = k.run(&job(EngineKind::Interp, 1)).unwrap_err();
    let at = runaway_pixel(&want);
    // Rows from some way down fail, not the first ones.
    assert!(at.1 > 8 && at.1 < 200, "{want}");
    for engine in engines() {
        for threads in [1, 2, 3, 4, 7, 16] {
            let got = k.run(&job(engine, threads)).unwrap_err();
            assert_eq!(
                got.to_string(),
                want.to_string(),
                "{engine:?}, {threads} threads"
            );
        }
    }
}

#[test]
fn a_run_that_does_not_fail_is_the_same_on_any_number_of_threads() {
    let k = Kernel::assemble(ROW_BOUND).unwrap();
    for engine in engines() {
        let mut want = None;
        for threads in [1, 2, 5, 16] {
            let mut job = Job::new(37, 90)
                .int(0, 255, 0, 0)
                .output(0, Format::Float32_4)
                .engine(engine);
            job.settings_mut().threads = threads;
            let got = k.run(&job).unwrap();
            let want = want.get_or_insert_with(|| got.clone());
            assert_eq!(got.outputs, want.outputs, "{engine:?}, {threads} threads");
            assert_eq!(
                got.report.pixel_instructions, want.report.pixel_instructions,
                "{engine:?}, {threads} threads"
            );
        }
    }
}

#[test]
fn engines_kept_between_runs_report_each_run_alone() {
    let k = Kernel::assemble(ROW_BOUND).unwrap();
    for engine in engines() {
        for threads in [1, 4] {
            let mut job = Job::new(64, 32)
                .int(0, 255, 0, 0)
                .output(0, Format::Float32_4)
                .engine(engine);
            job.settings_mut().threads = threads;
            let mut p = k.prepare(&job).unwrap();
            let first = p.run().unwrap();
            for run in 1..4 {
                let again = p.run().unwrap();
                let what = format!("{engine:?}, {threads} threads, run {run}");
                assert_eq!(again.pixel_instructions, first.pixel_instructions, "{what}");
                let (a, b) = (&first.engine, &again.engine);
                assert_eq!(a.native_runs, b.native_runs, "{what}");
                assert_eq!(a.loop_runs, b.loop_runs, "{what}");
                assert_eq!(a.strip_runs, b.strip_runs, "{what}");
                assert_eq!(a.fallback_runs, b.fallback_runs, "{what}");
                assert_eq!(a.fallback_clauses, b.fallback_clauses, "{what}");
                assert_eq!(b.compiled, 0, "{what}: nothing compiled again");
                if engine == EngineKind::Jit {
                    assert!(
                        a.native_runs + a.loop_runs + a.strip_runs > 0,
                        "{what}: {a:?}"
                    );
                    assert_eq!(b.cache_hits, threads as u64, "{what}: one per worker");
                }
            }
        }
    }
}
