//! Rows on several workers (`docs/dispatch.md`): each worker takes a block
//! of rows and then helps with the
//! others', yet a failing run reports the first failing row in row order
//! whatever the thread count; engines kept between runs report each run
//! alone.

use crate::common;

use ctm::engine::EngineKind;
use ctm::kernel::{Job, Kernel, KernelError};
use ctm::mc::{CacheMode, Format, SurfaceFormat};
use ctm::pe::Command as Cmd;
use ctm::pe::WORK_PER_WORKER;
use ctm::runtime::RunError;
use std::time::Duration;

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

/// [`ROW_BOUND`]'s loop, then each pixel writes r1.r at its own (i, j)
/// through an uncached write: with several workers, the rows' writes are
/// made while later rows run (`docs/design.md`, "Uncached writes while
/// later rows run").
fn row_bound_uncached() -> String {
    format!(
        ".uncached\n{}",
        ROW_BOUND.replace(
            "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last",
            "alu r2.rgb = mad(s0.r00, s1.111, s1.0rg) | r2.a = max.off(s0.0, s0.0) src0=r1 src1=r0
    out rtC.rgb = max.off(s0, s0) | rtC.a = max.off(s0, s0) src0=r2 wait last"
        )
    )
}

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
        // Past 16 workers, a run's bookkeeping per thread moves from the
        // stack to the heap.
        for threads in [1, 2, 3, 4, 7, 16, 17, 40] {
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
fn uncached_runs_report_the_first_failing_row_and_agree_whatever_the_thread_count() {
    // Rows a stripe apart fall to different workers, each making the
    // writes of its own rows as the rows before them are made; a row that
    // fails stops them there, and the error is the first in row order.
    let k = Kernel::assemble(&row_bound_uncached()).unwrap();
    let job = |engine, threads, budget| {
        let mut job = Job::new(64, 256)
            .int(0, 255, 0, 0)
            .output(0, Format::Float32_1)
            .engine(engine)
            .threads(threads)
            .work_per_worker(Duration::ZERO);
        job.settings_mut().options.budget = budget;
        job
    };
    let want = k.run(&job(EngineKind::Interp, 1, 200)).unwrap_err();
    let at = runaway_pixel(&want);
    assert!(at.1 > 8 && at.1 < 200, "{want}");
    let whole = k.run(&job(EngineKind::Interp, 1, 1 << 20)).unwrap();
    assert_eq!(whole.report.overlapped_rows, 0);
    for engine in engines() {
        for threads in [1, 2, 3, 4, 7, 16] {
            let what = format!("{engine:?}, {threads} threads");
            let got = k.run(&job(engine, threads, 200)).unwrap_err();
            assert_eq!(got.to_string(), want.to_string(), "{what}");
            let got = k.run(&job(engine, threads, 1 << 20)).unwrap();
            assert_eq!(got.outputs, whole.outputs, "{what}");
            assert_eq!(
                got.report.pixel_instructions, whole.report.pixel_instructions,
                "{what}"
            );
            assert_eq!(got.report.overlapped_rows > 0, threads > 1, "{what}");
        }
    }
}

#[test]
fn a_run_that_does_not_fail_is_the_same_on_any_number_of_threads() {
    let k = Kernel::assemble(ROW_BOUND).unwrap();
    for engine in engines() {
        let mut want = None;
        for threads in [1, 2, 5, 16, 17, 40] {
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

#[test]
fn a_failing_uncached_run_keeps_the_writes_of_the_rows_before_the_failing_one() {
    // [`row_bound_uncached`]: rows from some row on run past the budget.
    // With several threads the workers make rows' writes while later rows
    // run; whatever the thread count and engine, memory after the failed
    // run holds the writes of exactly the rows before the first failing
    // one, and the error names the same pixel.
    let src = row_bound_uncached();
    let (w, h) = (64u32, 256u32);
    let run = |engine, threads| -> (String, Vec<u8>) {
        let mut rig = crate::Rig::new(&src, w, h, CacheMode::Coherent);
        let settings = rig.dev.settings_mut();
        settings.engine = engine;
        settings.threads = threads;
        settings.options.budget = 200;
        let fill: Vec<u8> = (0..w * h * 4).map(|k| (k * 7 + 3) as u8).collect();
        rig.dev.write(rig.out, &fill).unwrap();
        let ci = rig.dev.alloc(crate::SYS, 128).unwrap();
        rig.dev.write(ci, &[255, 0, 0, 0]).unwrap();
        let mut cb = rig.setup();
        cb.push(Cmd::SetOutFmt {
            output: 0,
            base: rig.out,
            fmt: SurfaceFormat::linear(Format::Float32_1, w),
            height: h,
        })
        .push(Cmd::SetConstiFmt {
            base: ci,
            fmt: SurfaceFormat::linear(Format::Float32_1, 0),
        })
        .push(Cmd::StartProgram);
        let err = rig.submit(&cb).unwrap_err().to_string();
        let mut bytes = vec![0; fill.len()];
        rig.dev.read(rig.out, &mut bytes).unwrap();
        (err, bytes)
    };
    let want = run(EngineKind::Interp, 1);
    let row = |b: &[u8], j: u32| b[(j * w * 4) as usize..((j + 1) * w * 4) as usize].to_vec();
    for engine in engines() {
        for threads in [1, 2, 3, 4] {
            let got = run(engine, threads);
            let what = format!("{engine:?}, {threads} threads");
            assert_eq!(got.0, want.0, "{what}");
            let first_bad = (0..h).find(|&j| row(&got.1, j) != row(&want.1, j));
            assert_eq!(first_bad, None, "{what}: row {first_bad:?} differs");
        }
    }
    // The rows before the failing one were written, the rows after not.
    let fill: Vec<u8> = (0..w * h * 4).map(|k| (k * 7 + 3) as u8).collect();
    assert_ne!(row(&want.1, 0), row(&fill, 0));
    assert_eq!(row(&want.1, h - 1), row(&fill, h - 1));
}

#[test]
fn progress_counts_every_row_once_and_ends_at_the_total() {
    // Rows delivered as they finish report each row (any order across
    // workers); rows delivered in order after each chunk (hazard checking
    // keeps them for ordered delivery) report per chunk, in order. Either
    // way the counts end at the run's quad rows.
    use std::sync::{Arc, Mutex};
    let k = Kernel::assemble(
        "    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r0 wait last",
    )
    .unwrap();
    let (w, h) = (24, 150);
    let total = u64::from(h / 2);
    for engine in engines() {
        for threads in [1, 2, 3] {
            for checked in [false, true] {
                let seen = Arc::new(Mutex::new(Vec::new()));
                let mut job = Job::new(w, h)
                    .output(0, Format::Float32_4)
                    .engine(engine)
                    .threads(threads);
                let log = seen.clone();
                job.settings_mut().progress = Some(Arc::new(move |done, all| {
                    log.lock().unwrap().push((done, all));
                }));
                job.settings_mut().options.check_hazards = checked;
                k.run(&job).unwrap();
                let what = format!("{engine:?}, {threads} threads, checked {checked}");
                let seen = seen.lock().unwrap().clone();
                assert!(
                    seen.iter().all(|&(_, all)| all == total),
                    "{what}: {seen:?}"
                );
                let mut done: Vec<u64> = seen.iter().map(|&(d, _)| d).collect();
                if checked {
                    assert!(done.is_sorted(), "{what}: {done:?}");
                    assert_eq!(done.last(), Some(&total), "{what}: {done:?}");
                    assert!(done.len() < total as usize, "{what}: per row: {done:?}");
                } else {
                    done.sort_unstable();
                    assert_eq!(done, (1..=total).collect::<Vec<_>>(), "{what}");
                }
            }
        }
    }
}

#[test]
fn a_run_takes_no_more_workers_than_the_last_such_run_kept_busy() {
    // A one-instruction program: 8 × 8 pixels never take a second of rows,
    // 512 × 512 always more than a microsecond (`docs/threads.md`, "Workers
    // a run's work pays for").
    let k = Kernel::assemble(
        "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r0 wait last",
    )
    .unwrap();
    let second = Duration::from_secs(1);
    for engine in engines() {
        // The first run takes as many as it may where nothing ran before;
        // a kernel keeps its PE, so a job of the same domain after another
        // goes by that one's last run.
        for (size, threads, per_worker, first, then) in [
            (8, 2, second, 2, 1),
            (8, 2, Duration::ZERO, 2, 2),
            (512, 2, WORK_PER_WORKER, 2, 2),
            (512, 3, second, 1, 1),
            (512, 1, Duration::ZERO, 1, 1),
        ] {
            let mut job = Job::new(size, size)
                .output(0, Format::Float32_4)
                .engine(engine)
                .threads(threads);
            job.settings_mut().work_per_worker = per_worker;
            let mut p = k.prepare(&job).unwrap();
            let what = format!("{engine:?}, {size}², {threads} threads, {per_worker:?}");
            assert_eq!(p.run().unwrap().workers, first, "{what}: the first run");
            let took: Vec<u32> = (0..20).map(|_| p.run().unwrap().workers).collect();
            assert_eq!(took, [then; 20], "{what}: workers of the re-runs");
        }
    }
}

#[test]
fn programs_run_in_turn_each_go_by_their_own_last_run() {
    // Two programs over one domain, in turn on one device, a second of rows
    // asked per worker: from each program's second run on, one worker.
    let a = "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r0 wait last";
    let b = "out rtA.rgb = max.off(s0.rrr, s0) | rtA.a = max.off(s0, s0) src0=r0 wait last";
    for engine in engines() {
        let (mut dev, pa) = crate::device_with(a, engine, CacheMode::Coherent, 2);
        dev.settings_mut().work_per_worker = Duration::from_secs(1);
        let eb = crate::exe(b);
        let pb = dev.alloc(crate::SYS, eb.code.len() * 4).unwrap();
        dev.load_program(&eb, pb).unwrap();
        let fmt = SurfaceFormat::linear(Format::Float32_4, 16);
        let out = dev.alloc(crate::SYS, 16 * 16 * 16).unwrap();
        let mut cb = ctm::pe::CommandBuffer::new();
        cb.push(Cmd::SetOutFmt {
            output: 0,
            base: out,
            fmt,
            height: 16,
        })
        .push(Cmd::SetDomain(ctm::runtime::Domain::new(16, 16)));
        for base in [pa, pb] {
            cb.push(Cmd::SetInstFmt { base, fmt })
                .push(Cmd::StartProgram);
        }
        for round in 0..4 {
            let id = dev.submit_commands(&cb).unwrap();
            let took: Vec<u32> = dev
                .wait(id)
                .unwrap()
                .runs
                .iter()
                .map(|r| r.workers)
                .collect();
            let want = if round == 0 { [2, 2] } else { [1, 1] };
            assert_eq!(took, want, "{engine:?}, round {round}");
        }
    }
}
