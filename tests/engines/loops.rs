//! Loop regions compiled whole (the JIT iterates a loop of straight clauses
//! inside one native call and hands every other flow-control transition
//! back to the runtime shim): they must give the interpreter's results,
//! counters and errors exactly, including when the runaway budget runs out
//! in the middle of an iteration.

use ctm::engine::EngineKind;
use ctm::kernel::{Job, JobResult, Kernel, KernelError};
use ctm::mc::Format;
use ctm_tools::check::{Observed, assert_agree};

use crate::common;

/// r1 counts iterations; pixels leave the loop (BREAK) once r1 > i, and
/// pixels with odd r1 skip the rest of the body (CONTINUE); r2 counts the
/// full iterations; aL steps by 2.
const PROGRAM: &str = "
    alu r1.rgb = max.off(s0, s0) | r1.a = max.off(s0, s0) src0=0.0
    alu r2.rgb = max.off(s0, s0) | r2.a = max.off(s0, s0) src0=0.0
    {open} i0 -> done
body:
    alu r1.rgb = mad(s0.111, s0.111, s0) | r1.a = mad(s0.1, s0.1, s0) src0=r1
    alu _ = mad(sp, s0.111, -s0.111) | _ = mad(sp, s0.1, -s0.1) src0=r0 src1=r1 srcp=sub res=r>=0
    {brk} alu_result != 0 -> done
    alu r3.rgb = mad(s0, s1.000, s0) | r3.a = mad(s0, s1.0, s0) src0=r1 src1=0.5
    alu r3.rgb = frc(s0) | _ = max.off(s0, s0) src0=r3 res=r!=0
    CONTINUE alu_result != 0 -> endl
    alu r2.rgb = mad(s0.111, s0.111, s0) | r2.a = mad(s0.1, s0.1, s0) src0=r2
endl:
    {close} i0 -> body
done:
    alu r4.rgb = mad(s0, s1.111, s2) | r4.a = mad(s0, s1.1, s2) src0=r1 src1=r2 src2=c[aL+0]
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r4 wait last
";

fn program(open: &str, brk: &str, close: &str) -> Kernel {
    let src = PROGRAM
        .replace("{open}", open)
        .replace("{brk}", brk)
        .replace("{close}", close);
    Kernel::assemble(&src).unwrap()
}

fn run(k: &Kernel, job: &Job, engine: EngineKind) -> Result<JobResult, KernelError> {
    let mut job = job.clone();
    job.settings_mut().engine = engine;
    k.run(&job)
}

use common::jit_available;

#[test]
fn loop_regions_match_the_interpreter() {
    if !jit_available() {
        return;
    }
    for (open, brk, close) in [
        ("LOOP", "BREAKLOOP", "ENDLOOP"),
        ("REP", "BREAKREP", "ENDREP"),
    ] {
        let k = program(open, brk, close);
        let job = Job::new(23, 5)
            .int(0, 17, 1, 2)
            .constant(0, [0.5; 4])
            .output(0, Format::Float32_4);
        let want = run(&k, &job, EngineKind::Interp);
        let got = run(&k, &job, EngineKind::Jit);
        let (a, b) = (Observed::job(want.as_ref()), Observed::job(got.as_ref()));
        assert_agree(&a, &b, "interp", &format!("jit, {open}"));
        let got = got.unwrap();
        assert!(
            got.report.engine.loop_runs > 0,
            "{open}: {:?}",
            got.report.engine
        );
    }
}

/// `divergent`'s benchmark kernel: IF/ELSE arms by the parity of i + j
/// inside a loop of i0 trips, so every quad diverges.
const DIVERGENT: &str = include_str!("../../benches/kernels/divergent.s");

#[test]
fn a_loop_region_runs_all_its_iterations_in_one_call() {
    if !jit_available() {
        return;
    }
    // The driver decides every ENDLOOP of the loop itself (the group
    // jumping where any lane does, or where all of them do) and hands the
    // group back to the shim only where the count runs out: one call of
    // the region per group of eight quads, whatever the trip count.
    let all = DIVERGENT.replace("ENDLOOP i0 -> body", "ENDLOOP i0 -> body all");
    assert_ne!(all, DIVERGENT);
    for (mode, src) in [("any", DIVERGENT), ("all", &all)] {
        let k = Kernel::assemble(src).unwrap();
        for trips in [1, 2, 9] {
            let what = format!("jit, {trips} trips, ENDLOOP {mode}");
            let job = Job::new(16, 8)
                .constant(0, [0.9; 4])
                .constant(1, [0.1; 4])
                .int(0, trips, 0, 0)
                .output(0, Format::Float32_4);
            let want = run(&k, &job, EngineKind::Interp);
            let got = run(&k, &job, EngineKind::Jit);
            let (a, b) = (Observed::job(want.as_ref()), Observed::job(got.as_ref()));
            assert_agree(&a, &b, "interp", &what);
            let e = got.unwrap().report.engine;
            assert_eq!(e.loop_runs, 16 * 8 / 32, "{what}: {e:?}");
            assert_eq!(e.fallback_runs, 0, "{what}: {e:?}");
        }
    }
}

#[test]
fn the_budget_runs_out_inside_a_loop_region_as_in_the_interpreter() {
    if !jit_available() {
        return;
    }
    let k = program("LOOP", "BREAKLOOP", "ENDLOOP");
    // Budgets that stop the first group in different clauses of the body.
    for budget in [9, 10, 11, 12, 40, 41, 57] {
        let mut job = Job::new(64, 4)
            .int(0, 200, 0, 0)
            .output(0, Format::Float32_4);
        job.settings_mut().options.budget = budget;
        let want = run(&k, &job, EngineKind::Interp);
        let got = run(&k, &job, EngineKind::Jit);
        let (a, b) = (Observed::job(want.as_ref()), Observed::job(got.as_ref()));
        assert_agree(&a, &b, "interp", &format!("jit, budget {budget}"));
        assert!(want.is_err(), "budget {budget} stops the program");
    }
}

/// A loop whose lanes are independent (no CONTINUE, writes gated by the
/// active lanes only): the JIT runs it lane-wise. Pixels leave when r1 > i
/// ({cond} on the ALU result or on predicate R, both set from it), r2 sums
/// c[aL] (a constant read relative to aL), r5 starts as c1's raw bits and
/// is rewritten only after the break (lanes that leave in the first
/// iteration keep those bits), r6 is a MAX of itself (its bits are read, so
/// it is kept exact), and after the loop the ALU result and predicate of
/// the last iteration each lane ran decide one more write.
const LANEWISE: &str = "
    alu r1.rgb = max.off(s0, s0) | r1.a = max.off(s0, s0) src0=0.0
    alu r2.rgb = max.off(s0, s0) | r2.a = max.off(s0, s0) src0=0.0
    alu r5.rgb = max.off(s0, s0) | r5.a = max.off(s0, s0) src0=c1
    alu r6.rgb = max.off(s0, s0) | r6.a = max.off(s0, s0) src0=c1
    {open} i0 -> done
body:
    alu r1.rgb = mad(s0.111, s0.111, s0) | r1.a = mad(s0.1, s0.1, s0) src0=r1
    alu p.r>=0 = mad(sp, s0.111, -s0.111) | _ = mad(sp, s0.1, -s0.1) src0=r0 src1=r1 srcp=sub res=r>=0
    {brk} {cond} -> done
    alu r2.rgb = mad(s0, s1.111, s2) | r2.a = mad(s0, s1.1, s2) src0=r2 src1=1.0 src2=c[aL+2]
    alu r5.rgb = mad(s0, s1, s2) | r5.a = mad(s0, s1, s2) src0=r5 src1=0.5 src2=r2
    alu r6.rgb = max(s0, s1) | r6.a = max(s0, s1) src0=r6 src1=r2
    {close} i0 -> body
done:
    IF alu_result != 0 -> skip
    alu r1.rgb = mad(s0, -s1.111, s0) | r1.a = mad(s0, -s1.1, s0) src0=r1 src1=0.5
    ENDIF
skip:
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1
    out rtB.rgb = max.off(s0, s0) | rtB.a = max.off(s0, s0) src0=r2
    out rtC.rgb = max.off(s0, s0) | rtC.a = max.off(s0, s0) src0=r5
    out rtD.rgb = max.off(s0, s0) | rtD.a = max.off(s0, s0) src0=r6 wait last
";

fn lanewise_program(open: &str, brk: &str, cond: &str, close: &str) -> Kernel {
    let src = LANEWISE
        .replace("{open}", open)
        .replace("{brk}", brk)
        .replace("{cond}", cond)
        .replace("{close}", close);
    Kernel::assemble(&src).unwrap_or_else(|e| panic!("{e}\n{src}"))
}

fn lanewise_job(count: u8, init: u8, step: i8) -> Job {
    let mut job = Job::new(37, 9)
        .int(0, count, init, step)
        .constant(1, [f32::from_bits(0x7FC0_1234), 1e-40, -0.0, 3.0])
        .output(0, Format::Float32_4)
        .output(1, Format::Float32_4)
        .output(2, Format::Float32_4)
        .output(3, Format::Float32_4);
    for c in 2..40 {
        job = job.constant(c, [c as f32 * 0.25, -(c as f32), 1.0 / c as f32, 0.5]);
    }
    job
}

#[test]
fn independent_lanes_run_lane_wise_with_the_interpreter_s_results() {
    for (open, brk, close) in [
        ("LOOP", "BREAKLOOP", "ENDLOOP"),
        ("REP", "BREAKREP", "ENDREP"),
    ] {
        for cond in ["alu_result != 0", "p.r != 0", "!p.r == 0"] {
            let k = lanewise_program(open, brk, cond, close);
            // Every pixel leaves (count 40 > 37), some stay until the
            // count runs out (count 20), negative steps of aL; batches of
            // every width (lanes leave in every position of each).
            for (count, init, step) in [(40, 0, 1), (20, 3, 2), (30, 30, -1), (1, 0, 0)] {
                let what = format!("{open} {cond} {count}");
                both_lanewise(&k, &lanewise_job(count, init, step), &what);
            }
        }
    }
}

#[test]
fn loops_that_are_not_lane_wise_keep_the_lock_step_driver() {
    // A conditional ENDLOOP decides for the whole group; a predicated
    // write leaves inactive lanes alone.
    let conditional_end = LANEWISE
        .replace("{open}", "LOOP")
        .replace("{brk} {cond}", "BREAKLOOP alu_result != 0")
        .replace("{close} i0 -> body", "ENDLOOP i0 b3 == 0 -> body");
    let predicated = LANEWISE
        .replace("{open}", "LOOP")
        .replace("{brk} {cond}", "BREAKLOOP alu_result != 0")
        .replace("{close}", "ENDLOOP")
        .replace("src0=r6 src1=r2", "src0=r6 src1=r2 pred=rrrr");
    for src in [conditional_end, predicated] {
        let k = Kernel::assemble(&src).unwrap_or_else(|e| panic!("{e}\n{src}"));
        let got = common::both(&k, &lanewise_job(40, 0, 1));
        if jit_available() {
            let e = &got.report.engine;
            assert!(e.loop_runs > 0 && e.lanewise_runs == 0, "{e:?}\n{src}");
        }
    }
}

#[test]
fn a_lane_wise_loop_hands_over_to_lock_step_where_the_budget_would_run_out() {
    let k = lanewise_program("LOOP", "BREAKLOOP", "alu_result != 0", "ENDLOOP");
    // Budgets around the point where the whole rest of the loop no longer
    // fits: the region then runs in lock step and stops exactly where the
    // interpreter does, or finishes as it does.
    for budget in [9, 10, 30, 80, 200, 250, 400, 1_000, 100_000] {
        let mut job = lanewise_job(40, 0, 1);
        job.settings_mut().options.budget = budget;
        let want = run(&k, &job, EngineKind::Interp);
        let got = run(&k, &job, EngineKind::Jit);
        let (a, b) = (Observed::job(want.as_ref()), Observed::job(got.as_ref()));
        assert_agree(&a, &b, "interp", &format!("jit, budget {budget}"));
    }
}

#[test]
fn a_lane_wise_loop_compiles_one_body_and_its_lock_step_code_on_first_use() {
    if !common::jit_available() {
        return;
    }
    let k = lanewise_program("LOOP", "BREAKLOOP", "alu_result != 0", "ENDLOOP");
    // Its own cache: what it compiles is counted below.
    let cache = ctm::CodeCache::new(4);
    let job = |budget: u64| {
        // Whole groups (no partial batch needs a general body).
        let mut job = lanewise_job(40, 0, 1)
            .domain(32, 8)
            .code_cache(&cache)
            .threads(1);
        job.settings_mut().options.budget = budget;
        job
    };
    // The lane-wise body runs the whole loop: the loop's clause and its
    // lock-step driver are never compiled.
    let got = run(&k, &job(100_000), EngineKind::Jit).unwrap();
    let e = &got.report.engine;
    assert!(e.lanewise_runs > 0, "{e:?}");
    assert_eq!((e.compiled, e.general_compiled), (1, 0), "{e:?}");
    // A budget that sends the loop to lock step (the rest of the loop no
    // longer fits) compiles them then, once, and the run agrees with the
    // interpreter.
    let want = run(&k, &job(250), EngineKind::Interp);
    for round in 0..2 {
        let got = run(&k, &job(250), EngineKind::Jit);
        let (a, b) = (Observed::job(want.as_ref()), Observed::job(got.as_ref()));
        assert_agree(&a, &b, "interp", "jit, lock step");
        let e = got.unwrap().report.engine;
        assert!(
            e.loop_runs > 0 && e.lanewise_runs == 0,
            "round {round}: {e:?}"
        );
        assert_eq!(e.compiled, 0, "round {round}: {e:?}");
        assert_eq!(e.general_compiled > 0, round == 0, "round {round}: {e:?}");
        assert!(e.fallback_reasons.is_empty(), "round {round}: {e:?}");
    }
}

#[test]
fn lanes_that_leave_where_a_register_is_first_written_see_it_canonical() {
    // r2 = r2 + c1 with c1 a NaN with a payload: compiled code keeps such
    // results raw inside a lane-wise loop and makes them canonical when the
    // loop is settled, also in the lanes that break at the very clause that
    // first wrote r2 (pixels with i < 2 break in the first iteration).
    let k = Kernel::assemble(
        "    alu r2.rgb = max.off(s0, s0) | r2.a = max.off(s0, s0) src0=0.0
    LOOP i0 -> done
body:
    alu r2.rgb = mad(s0, s1.111, s2) | r2.a = mad(s0, s1.1, s2) src0=r2 src1=1.0 src2=c1
    alu r3.rgb = mad(s0, s1.111, s2) | r3.a = mad(s0, s1.1, s2) src0=r0 src1=1.0 src2=c2 res=r<0
    BREAKLOOP alu_result != 0 -> done
    alu r2.rgb = mad(s0, s1.111, s2) | r2.a = mad(s0, s1.1, s2) src0=r2 src1=0.5 src2=c3
    ENDLOOP i0 -> body
done:
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r2 last",
    )
    .unwrap();
    let nan = f32::from_bits(0x7FA0_0001);
    // Rows of whole batches of quads run in compiled strips, which settle
    // the loop themselves; six pixels wide, the shim runs the rows and the
    // loop lane-wise.
    for w in [8, 6] {
        let job = Job::new(w, 4)
            .constant(1, [nan, 1.0, nan, 0.25])
            .constant(2, [-2.0; 4])
            .constant(3, [0.5, nan, 0.0, 0.0])
            .int(0, 5, 0, 1)
            .output(0, Format::Float32_4);
        let got = common::both(&k, &job);
        if jit_available() {
            let e = &got.report.engine;
            let ran = if w == 8 {
                e.strip_runs
            } else {
                e.lanewise_runs
            };
            assert!(ran > 0, "{w} wide: {e:?}");
        }
    }
}

/// Runs `k` on `job` on both engines (the JIT with batches of every width)
/// and checks that the JIT ran its loop lane-wise; `what` names the case.
fn both_lanewise(k: &Kernel, job: &Job, what: &str) {
    for quads in [0, 1, 4] {
        let mut job = job.clone();
        job.settings_mut().jit.quads_per_iter = quads;
        let got = common::both(k, &job);
        if jit_available() {
            let e = &got.report.engine;
            assert!(e.lanewise_runs > 0, "{what}, {quads} quads: {e:?}");
        }
    }
}

/// [`both_lanewise`] on the assembly `src`.
fn both_lanewise_src(src: &str, job: &Job) {
    let k = Kernel::assemble(src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    both_lanewise(&k, job, src);
}

#[test]
fn a_lane_wise_loop_writes_back_what_either_of_its_exits_reads() {
    // Lanes that run the count out (and the lanes that broke before, in
    // their group) go on after the ENDLOOP and read r1 alone; a group all
    // of whose lanes break jumps to `brk` (placed before the loop, so that
    // nothing after the ENDLOOP can reach it), which reads r2 alone.
    // Pixels with i < 20 break: the groups of the first columns all leave
    // that way, the others run the count out.
    both_lanewise_src(
        "    JUMP -> start
brk:
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r2 last
start:
    alu r1.rgb = max.off(s0, s0) | r1.a = max.off(s0, s0) src0=0.0
    alu r2.rgb = max.off(s0, s0) | r2.a = max.off(s0, s0) src0=c1
    LOOP i0 -> fall
body:
    alu r1.rgb = mad(s0.111, s0.111, s0) | r1.a = mad(s0.1, s0.1, s0) src0=r1
    alu _ = mad(sp, s0.111, -s0.111) | _ = mad(sp, s0.1, -s0.1) src0=r0 src1=r1 srcp=sub res=r>=0
    BREAKLOOP alu_result != 0 -> brk
    alu r2.rgb = mad(s0, s1.111, s2) | r2.a = mad(s0, s1.1, s2) src0=r2 src1=0.5 src2=r1
    ENDLOOP i0 -> body
fall:
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 last",
        &Job::new(40, 4)
            .constant(1, [0.25, -1.5, 3.0, 7.0])
            .int(0, 20, 0, 1)
            .output(0, Format::Float32_4),
    );
}

#[test]
fn a_lane_wise_loop_inside_another_writes_back_what_its_next_run_reads() {
    // r4 is read only by the inner loop, before it writes it: the next
    // outer iteration's inner loop goes on from what this one left. Lanes
    // break once r4 ≥ i; r1 counts the inner iterations of all three.
    both_lanewise_src(
        "    alu r1.rgb = max.off(s0, s0) | r1.a = max.off(s0, s0) src0=0.0
    alu r4.rgb = max.off(s0, s0) | r4.a = max.off(s0, s0) src0=0.0
    LOOP i1 -> odone
outer:
    LOOP i0 -> idone
inner:
    alu r4.rgb = mad(s0.111, s0.111, s0) | r4.a = mad(s0.1, s0.1, s0) src0=r4
    alu r1.rgb = mad(s0.111, s0.111, s0) | r1.a = mad(s0.1, s0.1, s0) src0=r1
    alu _ = mad(sp, s0.111, -s0.111) | _ = mad(sp, s0.1, -s0.1) src0=r0 src1=r4 srcp=sub res=r>=0
    BREAKLOOP alu_result != 0 -> idone
    ENDLOOP i0 -> inner
idone:
    ENDLOOP i1 -> outer
odone:
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 last",
        &Job::new(40, 4)
            .int(0, 5, 0, 1)
            .int(1, 3, 0, 0)
            .output(0, Format::Float32_4),
    );
}
