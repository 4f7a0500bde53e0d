//! IF, ELSE and ENDIF inside a loop region: the lock-step driver performs
//! them (`B_ELSE`, the group's decision, the branch counters) and must
//! give the interpreter's results, counters and errors exactly — with
//! lanes asleep around the loop, a BREAK inside an IF, arms the whole
//! group skips, and a branch counter that overflows inside the region.

use ctm::kernel::{Job, Kernel};
use ctm::mc::Format;

use crate::common::{self, jit_available};

/// r3 = i/2 + j, whose fraction is the parity of i. Pixels with i < c2.r
/// sleep around the loop (their counters count the loop's IFs). In the
/// loop, r1 counts iterations; pixels with odd i add c1 to r2 and leave
/// once r1 ≥ j (a BREAK inside a nested IF), even ones subtract it; the
/// arm of an IF on c3's sign runs for every lane or for none (the group
/// skips it).
const PROGRAM: &str = "
    alu r1.rgb = max.off(s0, s0) | r1.a = max.off(s0, s0) src0=0.0
    alu r2.rgb = max.off(s0, s0) | r2.a = max.off(s0, s0) src0=0.0
    alu r3.rgb = mad(s0.rrr, s1.hhh, s2.ggg) | r3.a = max.off(s0, s0) src0=r0 src1=r0 src2=r0
    alu _ = mad(s0.rrr, s1.111, -s1.rrr) | _ = mad(s0.r, s1.1, -s1.r) src0=r0 src1=c2 res=r>=0
    IF alu_result == 0 -> skip
    LOOP i0 -> done
body:
    alu r1.rgb = mad(s0.111, s0.111, s0) | r1.a = mad(s0.1, s0.1, s0) src0=r1
    alu _ = frc(s0.rrr) | _ = frc(s0.r) src0=r3 res=r==0
    IF alu_result != 0 -> odd jump=incr
    alu r2.rgb = mad(s0, s1, s2) | r2.a = mad(s0, s1, s2) src0=r2 src1=c0 src2=c1
    alu _ = mad(s0.rrr, s1.111, -s2.ggg) | _ = mad(s0.r, s1.1, -s2.g) src0=r1 src1=c0 src2=r0 res=r>=0
    IF alu_result == 0 -> stay
    BREAKLOOP -> done pop=1
    ENDIF
stay:
    ELSE -> endif
odd:
    alu r2.rgb = mad(s0, s1, -s2) | r2.a = mad(s0, s1, -s2) src0=r2 src1=c0 src2=c1
    ENDIF
endif:
    alu _ = max.off(s0.rrr, s0.rrr) | _ = max.off(s0.r, s0.r) src0=c3 res=r>=0
    IF alu_result == 0 -> never
    alu r2.rgb = mad(s0, s1.000, s0) | r2.a = mad(s0, s1.0, s0) src0=r2 src1=0.5
    ENDIF
never:
    ENDLOOP i0 -> body
done:
    ENDIF
skip:
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r2
    out rtB.rgb = max.off(s0, s0) | rtB.a = max.off(s0, s0) src0=r1 wait last
";

fn job(count: u8, skip_below: f32, c3: f32) -> Job {
    Job::new(23, 7)
        .int(0, count, 0, 1)
        .constant(0, [1.0; 4])
        .constant(1, [0.25, 0.5, 0.75, 1.0])
        .constant(2, [skip_below; 4])
        .constant(3, [c3; 4])
        .output(0, Format::Float32_4)
        .output(1, Format::Float32_4)
}

#[test]
fn if_and_else_inside_a_loop_region_match_the_interpreter() {
    let k = Kernel::assemble(PROGRAM).unwrap_or_else(|e| panic!("{e}"));
    // Every lane in the loop or some asleep around it; the last IF taken
    // by every lane or by none; counts that outlast every break or not.
    for (count, skip_below, c3) in [
        (9, 0.0, 1.0),
        (9, 5.0, -1.0),
        (3, 11.0, 1.0),
        (1, 0.0, -1.0),
    ] {
        let got = common::both(&k, &job(count, skip_below, c3));
        if jit_available() {
            let e = &got.report.engine;
            assert!(
                e.loop_runs > 0 && e.lanewise_runs == 0,
                "count {count}, below {skip_below}: {e:?}"
            );
        }
    }
}

#[test]
fn a_branch_counter_overflowing_inside_a_loop_region_is_the_interpreter_s_error() {
    // Pixels with i < 5 go to sleep at the first of 32 nested IFs and
    // count the other 31 (counter 31); the loop's IF takes them to 32.
    let depth = 32;
    let mut src = String::from(
        "alu _ = mad(s0.rrr, s1.111, -s1.rrr) | _ = mad(s0.r, s1.1, -s1.r) src0=r0 src1=c2 res=r>=0\n",
    );
    for k in 0..depth {
        src += &format!("IF alu_result == 0 -> e{k}\n");
    }
    src += "LOOP i0 -> done\nbody:\nIF alu_result == 0 -> x\n";
    src += "alu r1.rgb = mad(s0.111, s0.111, s0) | r1.a = mad(s0.1, s0.1, s0) src0=r1\n";
    src += "ENDIF\nx:\nENDLOOP i0 -> body\ndone:\n";
    for k in (0..depth).rev() {
        src += &format!("ENDIF\ne{k}:\n");
    }
    src += "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last\n";
    let k = Kernel::assemble(&src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let job = job(4, 5.0, 1.0);
    let err = common::both_error(&k, &job);
    assert!(err.contains("overflow"), "{err}");
}
