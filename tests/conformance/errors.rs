//! Programs that cannot run end with a typed error naming pc and pixel —
//! never a panic (§6.5, §6.8 depth limits, undefined encodings, runaway
//! loops, texture faults).

use crate::harness::*;
use ctm::runtime::{RunError, Stack};

const END: &str = "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r0 wait last";

fn err(asm: &str, s: &Setup) -> RunError {
    try_run(asm, s).expect_err("the run must fail")
}

#[test]
fn recursion_overflows_the_address_stack() {
    let e = err(&format!("sub:\n    CALL -> sub\n{END}"), &Setup::new(1, 1));
    assert!(
        matches!(
            e,
            RunError::Overflow {
                pc: 0,
                stack: Stack::Address,
                pixel: (0, 0)
            }
        ),
        "{e}"
    );
}

#[test]
fn return_without_call_underflows() {
    let e = err(&format!("    RET\n{END}"), &Setup::new(1, 1));
    assert!(
        matches!(
            e,
            RunError::Underflow {
                pc: 0,
                stack: Stack::Address,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn endloop_without_loop_underflows_and_mismatched_frames_are_caught() {
    let e = err(
        &format!("@0: ENDLOOP i0 -> @0\n{END}"),
        &Setup::new(1, 1).int(0, 2, 0, 0),
    );
    assert!(
        matches!(
            e,
            RunError::Underflow {
                pc: 0,
                stack: Stack::Loop,
                ..
            }
        ),
        "{e}"
    );
    let asm = format!("    REP i0 -> done\nbody:\n    ENDLOOP i0 -> body\ndone:\n{END}");
    let e = err(&asm, &Setup::new(1, 1).int(0, 2, 0, 0));
    assert!(matches!(e, RunError::FrameMismatch { pc: 1, .. }), "{e}");
}

#[test]
fn nesting_past_the_branch_depth_overflows() {
    // Pixel (0, 0) switches off at the first IF; 32 more IFs that nobody takes
    // raise its branch counter past the limit while pixel (1, 0) runs on.
    let mut asm = String::from(
        "alu _ = max.off(s0, s0) | _ = max.off(s0, s0) src0=r0 res=r==0\n    IF alu_result != 0 -> end\n",
    );
    for _ in 0..32 {
        asm.push_str("    IF never -> end\n");
    }
    asm.push_str(&format!("end:\n{END}"));
    let e = err(&asm, &Setup::new(2, 1));
    assert!(
        matches!(
            e,
            RunError::Overflow {
                stack: Stack::Branch,
                pixel: (0, 0),
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn a_program_that_never_ends_is_stopped_by_the_budget() {
    let mut s = Setup::new(2, 2);
    s.options.budget = 10_000;
    let e = err(&format!("top:\n    JUMP -> top\n{END}"), &s);
    assert!(
        matches!(
            e,
            RunError::Runaway {
                pc: 0,
                budget: 10_000,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("never ends"));
}

#[test]
fn an_undefined_instruction_fails_only_when_reached() {
    // Slot 2 has a reserved bit set in its FC word; it is jumped over.
    let bad = ".words 0x00000402 0 0x00000008 0 0 0";
    let skipped = format!("    JUMP -> end\n{END}\n{bad}\nend:\n{END}");
    assert!(try_run(&skipped, &Setup::new(1, 1)).is_ok());
    let reached = format!("    alu _ = max(s0, s0) | _ = max(s0, s0) src0=r0\n{bad}\n{END}");
    let e = err(&reached, &Setup::new(1, 1));
    assert!(
        matches!(
            e,
            RunError::Undefined {
                pc: 1,
                pixel: (0, 0),
                ..
            }
        ),
        "{e}"
    );
    // SOP paired with alpha DP is a cycle: undefined at run time.
    let e = err(
        &format!("alu r1.rgb = sop() | r1.a = dp() src0=r0\n{END}"),
        &Setup::new(1, 1),
    );
    assert!(matches!(e, RunError::Undefined { pc: 0, .. }), "{e}");
}

#[test]
fn a_jump_past_the_end_is_an_error() {
    let e = err(&format!("    JUMP -> @40\n{END}"), &Setup::new(1, 1));
    assert!(
        matches!(
            e,
            RunError::JumpOutOfRange {
                pc: 0,
                target: 40,
                len: 2,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn fetching_an_unbound_input_is_a_texture_fault() {
    let e = err(
        &format!("    tex ld r1.rgba, in3.rgba, r0.rgba unscaled acquire wait\n{END}"),
        &Setup::new(1, 1),
    );
    assert!(matches!(e, RunError::Texture { pc: 0, .. }), "{e}");
    assert!(e.to_string().contains("input 3"));
}
