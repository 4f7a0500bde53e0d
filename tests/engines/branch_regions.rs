//! IF, ELSE and ENDIF outside loop regions: a branch region's driver runs
//! a run of clauses from an IF through the clause after its ENDIF and must
//! give the interpreter's results, counters and errors exactly — with
//! pixels diverging inside quads, nested arms, an arm the whole group
//! skips, the lanes of a loop around it that broke or continued, and a
//! branch counter that overflows inside the region.

use ctm::kernel::{Job, Kernel};
use ctm::mc::Format;

use crate::common::{self, jit_available};

/// r3 = i/2 + j, whose fraction is the parity of i; pixels with odd i take
/// the ELSE side, and inside it those with j < c2.r take a nested IF; an
/// IF on c3's sign is taken by every lane or by none.
const NESTED: &str = "
    alu r1.rgb = max.off(s0, s0) | r1.a = max.off(s0, s0) src0=0.0
    alu r3.rgb = mad(s0.rrr, s1.hhh, s2.ggg) | r3.a = max.off(s0, s0) src0=r0 src1=r0 src2=r0
    alu _ = frc(s0.rrr) | _ = frc(s0.r) src0=r3 res=r==0
    IF alu_result != 0 -> odd jump=incr
    alu r1.rgb = mad(s0.rrr, s1, s1) | r1.a = mad(s0.r, s1, s1) src0=r0 src1=c0
    ELSE -> endif
odd:
    alu r1.rgb = mad(s0.ggg, s1, -s1) | r1.a = mad(s0.g, s1, -s1) src0=r0 src1=c1
    alu _ = mad(s0.ggg, s1.111, -s1.rrr) | _ = mad(s0.g, s1.1, -s1.r) src0=r0 src1=c2 res=r>=0
    IF alu_result == 0 -> low
    alu r1.rgb = mad(s0, s1, s1) | r1.a = mad(s0, s1, s1) src0=r1 src1=c0
    ENDIF
low:
    ENDIF
endif:
    alu _ = max.off(s0.rrr, s0.rrr) | _ = max.off(s0.r, s0.r) src0=c3 res=r>=0
    IF alu_result == 0 -> never
    alu r1.rgb = mad(s0, s1.000, s0) | r1.a = mad(s0, s1.0, s0) src0=r1 src1=0.5
    ENDIF
never:
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last
";

fn job(c2: f32, c3: f32) -> Job {
    Job::new(23, 7)
        .int(0, 5, 0, 1)
        .constant(0, [1.0, 2.0, 3.0, 4.0])
        .constant(1, [0.25, 0.5, 0.75, 1.0])
        .constant(2, [c2; 4])
        .constant(3, [c3; 4])
        .output(0, Format::Float32_4)
        .output(1, Format::Float32_4)
}

#[test]
fn nested_if_and_else_outside_loops_match_the_interpreter() {
    let k = Kernel::assemble(NESTED).unwrap_or_else(|e| panic!("{e}"));
    for (c2, c3) in [(3.0, 1.0), (0.0, -1.0), (9.0, 1.0)] {
        let got = common::both(&k, &job(c2, c3));
        if jit_available() {
            let e = &got.report.engine;
            assert!(e.loop_runs > 0, "c2 {c2}, c3 {c3}: {e:?}");
        }
    }
}

/// A loop that is no loop region (it calls a subroutine), with IF/ELSE in
/// it: the branch region runs inside the loop's frame, whose broken lanes
/// it must leave alone. Pixels leave the loop once r1 ≥ j.
const IN_A_CALLING_LOOP: &str = "
    alu r1.rgb = max.off(s0, s0) | r1.a = max.off(s0, s0) src0=0.0
    alu r2.rgb = max.off(s0, s0) | r2.a = max.off(s0, s0) src0=0.0
    alu r3.rgb = mad(s0.rrr, s1.hhh, s2.ggg) | r3.a = max.off(s0, s0) src0=r0 src1=r0 src2=r0
    LOOP i0 -> done
body:
    CALL -> count
    alu _ = frc(s0.rrr) | _ = frc(s0.r) src0=r3 res=r==0
    IF alu_result != 0 -> odd jump=incr
    alu r2.rgb = mad(s0, s1, s2) | r2.a = mad(s0, s1, s2) src0=r2 src1=c0 src2=c1
    ELSE -> endif
odd:
    alu r2.rgb = mad(s0, s1, -s2) | r2.a = mad(s0, s1, -s2) src0=r2 src1=c0 src2=c1
    ENDIF
endif:
    alu _ = mad(s0.rrr, s1.111, -s2.ggg) | _ = mad(s0.r, s1.1, -s2.g) src0=r1 src1=c0 src2=r0 res=r>=0
    IF alu_result == 0 -> stay
    BREAKLOOP -> done pop=1
    ENDIF
stay:
    ENDLOOP i0 -> body
done:
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r2
    out rtB.rgb = max.off(s0, s0) | rtB.a = max.off(s0, s0) src0=r1 wait last
count:
    alu r1.rgb = mad(s0.111, s0.111, s0) | r1.a = mad(s0.1, s0.1, s0) src0=r1
    RET
";

#[test]
fn a_branch_region_inside_a_loop_leaves_the_loop_s_lanes_alone() {
    let k = Kernel::assemble(IN_A_CALLING_LOOP).unwrap_or_else(|e| panic!("{e}"));
    let got = common::both(&k, &job(0.0, 1.0));
    if jit_available() {
        let e = &got.report.engine;
        assert!(e.loop_runs > 0 && e.native_runs > 0, "{e:?}");
    }
}

#[test]
fn a_branch_counter_overflowing_inside_a_branch_region_is_the_interpreter_s_error() {
    // Pixels with i < 5 go to sleep at the first of 33 nested IFs and
    // count the others: the 33rd takes their counters to 32.
    let depth = 33;
    let mut src = String::from(
        "alu _ = mad(s0.rrr, s1.111, -s1.rrr) | _ = mad(s0.r, s1.1, -s1.r) src0=r0 src1=c2 res=r>=0\n",
    );
    for k in 0..depth {
        src += &format!("IF alu_result == 0 -> e{k}\n");
        src += "alu r1.rgb = mad(s0.111, s0.111, s0) | r1.a = mad(s0.1, s0.1, s0) src0=r1\n";
    }
    for k in (0..depth).rev() {
        src += &format!("ENDIF\ne{k}:\n");
    }
    src += "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last\n";
    let k = Kernel::assemble(&src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let job = job(5.0, 1.0);
    let err = common::both_error(&k, &job);
    assert!(err.contains("overflow"), "{err}");
}

#[test]
fn a_region_s_last_terminator_runs_after_its_clause_killed_every_lane() {
    // The clause after the ENDIF kills every pixel, then returns from no
    // call: the interpreter's step executes the RET (an error) though no
    // lane runs, and so must the JIT's shim after the region.
    let k = Kernel::assemble(
        "    alu r2.rgb = max.off(-s0, -s0) | r2.a = max.off(-s0, -s0) src0=1.0
    alu _ = max.off(s0.rrr, s0.rrr) | _ = max.off(s0.r, s0.r) src0=c3 res=r>=0
    IF alu_result == 0 -> skip
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=1.0
    ENDIF
skip:
    tex kill r2.rgba, in0.rgba, r2.rgba
    RET",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let texels = vec![0.5; 8 * 4 * 4];
    let surface = ctm::kernel::HostSurface::from_f32(Format::Float32_4, 8, 4, &texels).unwrap();
    let job = Job::new(8, 4)
        .constant(3, [1.0; 4])
        .input(0, surface)
        .output(0, Format::Float32_4);
    let err = common::both_error(&k, &job);
    assert!(err.contains("address stack underflow"), "{err}");
}
