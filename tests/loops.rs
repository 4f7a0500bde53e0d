//! Loop regions compiled whole (the JIT iterates a loop of straight clauses
//! inside one native call and hands every other flow-control transition
//! back to the runtime shim): they must give the interpreter's results,
//! counters and errors exactly, including when the runaway budget runs out
//! in the middle of an iteration.

use ctm::engine::EngineKind;
use ctm::kernel::{Job, JobResult, Kernel, KernelError};
use ctm::mc::Format;

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
    job.settings.engine = engine;
    k.run(&job)
}

fn jit_available() -> bool {
    ctm_jit::host::check_features().is_ok()
}

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
        let want = run(&k, &job, EngineKind::Interp).unwrap();
        let got = run(&k, &job, EngineKind::Jit).unwrap();
        assert_eq!(got.outputs, want.outputs, "{open}");
        assert_eq!(
            got.report.pixel_instructions,
            want.report.pixel_instructions
        );
        assert_eq!(
            got.report.group_instructions,
            want.report.group_instructions
        );
        assert!(
            got.report.engine.loop_runs > 0,
            "{open}: {:?}",
            got.report.engine
        );
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
        job.settings.options.budget = budget;
        let want = run(&k, &job, EngineKind::Interp).map(|r| r.outputs);
        let got = run(&k, &job, EngineKind::Jit).map(|r| r.outputs);
        match (&want, &got) {
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "budget {budget}"),
            _ => assert_eq!(want.is_ok(), got.is_ok(), "budget {budget}"),
        }
        assert!(want.is_err(), "budget {budget} stops the program");
    }
}
