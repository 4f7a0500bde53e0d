//! Flow-control conformance (§6): every construct of §6.9, the ENDIF merge of
//! §6.10, the JUMP_FUNC truth table (§6.2), loops with aL (§6.6), zero-count
//! loops, CALL/RET, early exit — with divergent pixels inside one quad, each
//! checked against a plain per-pixel computation.

use crate::harness::*;

/// r5 = (i/2, j/2, ..), r6 = (frc(i/2), frc(j/2), .., frc(j/2)): i odd ⇔ r6.r ≠ 0.
const PARITY: &str = "
    alu r5.rgb = mad(s0, s1, s2) | r5.a = mad(s0, s1, s2) src0=r0 src1=0.5 src2=0.0
    alu r6.rgb = frc(s0) | r6.a = frc(s0.g) src0=r5
";

fn set_r1(v: &str) -> String {
    format!("alu r1.rgb = max.off(s0, s0) | r1.a = max.off(s0, s0) src0={v}")
}

/// r1 += 1 (rgb and a).
const INC_R1: &str = "alu r1.rgb = mad(s0.111, s0.111, s0) | r1.a = mad(s0.1, s0.1, s0) src0=r1";

#[test]
fn nested_if_else_diverging_inside_quads() {
    let asm = format!(
        "{PARITY}
    {zero}
    alu _ = max.off(s0, s0) | _ = max.off(s0, s0) src0=r6 res=r==0
    IF alu_result != 0 -> outer_else jump=incr
    alu _ = max.off(s0, s0) | _ = max.off(s0, s0) src0=r6 res=a==0
    IF alu_result != 0 -> inner_else jump=incr
    {one}
    ELSE -> inner_end
inner_else:
    {two}
    ENDIF
inner_end:
    ELSE -> outer_end
outer_else:
    {three}
    ENDIF
outer_end:
    {OUT_R1}",
        zero = set_r1("0.0"),
        one = set_r1("1.0"),
        two = set_r1("2.0"),
        three = set_r1("3.0"),
    );
    let o = run(&asm, &Setup::new(6, 4));
    for j in 0..4 {
        for i in 0..6 {
            let want = match (i % 2, j % 2) {
                (1, 1) => 1.0,
                (1, 0) => 2.0,
                _ => 3.0,
            };
            assert_eq!(o.af(i, j), [want; 4], "pixel ({i}, {j})");
        }
    }
}

#[test]
fn loop_with_al_relative_constants_and_temporaries() {
    // i0 = {count 3, init 1, step 2}: aL = 1, 3, 5.
    let asm = format!(
        "{zero}
    LOOP i0 -> done
body:
    alu r1.rgb = mad(s0, s1.rrr, s2) | r1.a = mad(s0, s1.r, s2) src0=c[aL+0] src1=r0 src2=r1
    alu r[aL+20].rgb = max.off(s0, s0) | r[aL+20].a = max.off(s0, s0) src0=c[aL+0]
    ENDLOOP i0 -> body
done:
    alu r2.rgb = mad(s0, s0.111, s1) | r2.a = mad(s0, s0.1, s1) src0=r1 src1=r23
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r2
    out rtB.rgb = max.off(s0, s0) | rtB.a = max.off(s0, s0) src0=r21
    out rtC.rgb = max.off(s0, s0) | rtC.a = max.off(s0, s0) src0=r25 wait last",
        zero = set_r1("0.0")
    );
    let s = Setup::new(4, 1)
        .int(0, 3, 1, 2)
        .c(1, [1.0; 4])
        .c(3, [10.0; 4])
        .c(5, [100.0; 4]);
    let o = run(&asm, &s);
    for i in 0..4 {
        assert_eq!(o.af(i, 0), [111.0 * i as f32 + 10.0; 4], "i = {i}");
        assert_eq!(o.rt(1, i, 0).map(|c| f32::from_bits(c.unwrap())), [1.0; 4]);
        assert_eq!(
            o.rt(2, i, 0).map(|c| f32::from_bits(c.unwrap())),
            [100.0; 4]
        );
    }
}

#[test]
fn rep_inside_loop_keeps_the_loop_register() {
    // LOOP i0 {2, 0, 1} { REP i1 {3} { r1 += c[aL] } } = 3·c0 + 3·c1.
    let asm = format!(
        "{zero}
    LOOP i0 -> done
outer:
    REP i1 -> rep_done
inner:
    alu r1.rgb = mad(s0, s0.111, s1) | r1.a = mad(s0, s0.1, s1) src0=c[aL+0] src1=r1
    ENDREP i1 -> inner
rep_done:
    ENDLOOP i0 -> outer
done:
    {OUT_R1}",
        zero = set_r1("0.0")
    );
    let s = Setup::new(1, 1)
        .int(0, 2, 0, 1)
        .int(1, 3, 0, 0)
        .c(0, [1.0; 4])
        .c(1, [10.0; 4]);
    assert_eq!(run(&asm, &s).af(0, 0), [33.0; 4]);
}

/// res = (r1 − i − 1 >= 0), i.e. r1 > i.
const R1_PAST_I: &str =
    "alu _ = mad(sp, s0.111, -s0.111) | _ = mad(sp, s0.1, -s0.1) src0=r0 src1=r1 srcp=sub res=r>=0";

#[test]
fn break_inside_if_with_divergent_trip_counts() {
    // Count up to i + 1 (at most 10): every pixel of a quad leaves at its own time.
    let asm = format!(
        "{zero}
    LOOP i0 -> done
body:
    {INC_R1}
    {R1_PAST_I}
    IF alu_result == 0 -> cont
    BREAKLOOP -> done pop=1
    ENDIF
cont:
    ENDLOOP i0 -> body
done:
    {OUT_R1}",
        zero = set_r1("0.0")
    );
    let o = run(&asm, &Setup::new(12, 2).int(0, 10, 0, 0));
    for j in 0..2 {
        for i in 0..12 {
            assert_eq!(o.af(i, j), [(i + 1).min(10) as f32; 4], "pixel ({i}, {j})");
        }
    }
}

#[test]
fn continue_inside_if() {
    // Six iterations; r2 counts those in which r1 > i.
    let asm = format!(
        "{zero}
    alu r2.rgb = max.off(s0, s0) | r2.a = max.off(s0, s0) src0=0.0
    REP i0 -> done
body:
    {INC_R1}
    {R1_PAST_I}
    IF alu_result != 0 -> counted
    CONTINUE -> endl pop=1
    ENDIF
counted:
    alu r2.rgb = mad(s0.111, s0.111, s0) | r2.a = mad(s0.1, s0.1, s0) src0=r2
endl:
    ENDREP i0 -> body
done:
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r2 wait last",
        zero = set_r1("0.0")
    );
    let o = run(&asm, &Setup::new(8, 1).int(0, 6, 0, 0));
    for i in 0..8u32 {
        assert_eq!(o.af(i, 0), [6u32.saturating_sub(i) as f32; 4], "i = {i}");
    }
}

#[test]
fn call_and_return_unconditional_and_conditional() {
    let asm = format!(
        "{PARITY}
    alu r1.rgb = max.off(s0, s0) | r1.a = max.off(s0, s0) src0=r0
    CALL -> double
    CALL -> double
    alu _ = max.off(s0, s0) | _ = max.off(s0, s0) src0=r6 res=r!=0
    CALL alu_result != 0 -> double_c jump=incr
    JUMP -> end
double:
    alu r1.rgb = max.x2(s0, s0) | r1.a = max.x2(s0, s0) src0=r1
    RET
double_c:
    alu r1.rgb = max.x2(s0, s0) | r1.a = max.x2(s0, s0) src0=r1
    RET jump=decr pop=1
end:
    {OUT_R1}"
    );
    let o = run(&asm, &Setup::new(4, 2));
    for j in 0..2 {
        for i in 0..4 {
            let k = if i % 2 == 1 { 8.0 } else { 4.0 };
            assert_eq!(o.af(i, j)[0], k * i as f32, "pixel ({i}, {j})");
            assert_eq!(o.af(i, j)[1], k * j as f32);
        }
    }
}

#[test]
fn endif_merge_of_6_10() {
    // p.r = i odd, p.g = j odd, p.a = i >= 2; three nested IFs, one ENDIF pop=3.
    let asm = format!(
        "{PARITY}
    alu p.rgb!=0 = frc(s0) | p.a>=0 = mad(s1.r, s1.1, -s2) src0=r5 src1=r0 src2=2.0
    {zero}
    IF p.r == 0 -> merged
    alu r1.rgb = mad(s0.111, s0.111, s0) | r1.a = mad(s0.1, s0.1, s0) src0=r1
    IF p.g == 0 -> merged jump=decr pop=1
    alu r1.rgb = mad(s0.111, s1, s0) | r1.a = mad(s0.1, s1, s0) src0=r1 src1=c0
    IF p.a == 0 -> merged jump=decr pop=2
    alu r1.rgb = mad(s0.111, s1, s0) | r1.a = mad(s0.1, s1, s0) src0=r1 src1=c1
    ENDIF pop=3
merged:
    {OUT_R1}",
        zero = set_r1("0.0")
    );
    let s = Setup::new(6, 4).c(0, [10.0; 4]).c(1, [100.0; 4]);
    let o = run(&asm, &s);
    for j in 0..4u32 {
        for i in 0..6u32 {
            let mut want = 0.0;
            if i % 2 == 1 {
                want += 1.0;
                if j % 2 == 1 {
                    want += 10.0;
                    if i >= 2 {
                        want += 100.0;
                    }
                }
            }
            assert_eq!(o.af(i, j), [want; 4], "pixel ({i}, {j})");
        }
    }
}

#[test]
fn jump_function_truth_table() {
    // For every common JUMP_FUNC value and every (alu, pred, bool) input,
    // the processor jumps iff bit alu·4 + pred·2 + bool is set (§6.2).
    for func in [0x00u8, 0xFF, 0x0F, 0xF0, 0x33, 0xCC, 0x55, 0xAA] {
        for input in 0..8u8 {
            let (alu, pred, b) = (input >> 2 & 1, input >> 1 & 1, input & 1);
            let asm = format!(
                "alu p.r!=0 = max(s0, s0) | _ = max(s0, s0) src0=c0
    alu _ = max(s0, s0) | _ = max(s0, s0) src0=c1 res=r!=0
    {one}
    JUMP -> skip func={func:#04x} pred=rrrr bool=3
    {two}
skip:
    {OUT_R1}",
                one = set_r1("1.0"),
                two = set_r1("2.0"),
            );
            let s = Setup::new(1, 1)
                .c(0, [f32::from(pred); 4])
                .c(1, [f32::from(alu); 4])
                .bools(u32::from(b) << 3);
            let jumped = run(&asm, &s).af(0, 0)[0] == 1.0;
            let want = (func >> input) & 1 == 1;
            assert_eq!(
                jumped, want,
                "func {func:#04x} alu {alu} pred {pred} bool {b}"
            );
        }
    }
}

#[test]
fn static_if_on_a_boolean_constant() {
    let asm = format!(
        "{one}
    IF b5 == 0 -> skip
    {two}
    ENDIF
skip:
    {OUT_R1}",
        one = set_r1("1.0"),
        two = set_r1("2.0"),
    );
    assert_eq!(
        run(&asm, &Setup::new(2, 2).bools(1 << 5)).af(1, 1),
        [2.0; 4]
    );
    assert_eq!(
        run(&asm, &Setup::new(2, 2).bools(!(1 << 5))).af(1, 1),
        [1.0; 4]
    );
}

#[test]
fn zero_count_loops_in_both_target_styles() {
    for target in ["done", "endl"] {
        for count in [0u8, 2] {
            let asm = format!(
                "{zero}
    LOOP i0 -> {target}
body:
    {INC_R1}
endl:
    ENDLOOP i0 -> body
done:
    {INC_R1}
    {OUT_R1}",
                zero = set_r1("0.0")
            );
            let got = run(&asm, &Setup::new(1, 1).int(0, count, 0, 0)).af(0, 0);
            assert_eq!(
                got,
                [f32::from(count) + 1.0; 4],
                "target {target}, count {count}"
            );
        }
    }
}

#[test]
fn last_ends_active_processors_early() {
    // Odd columns output 1 and stop at the LAST inside the IF; even ones go on.
    let asm = format!(
        "{PARITY}
    alu _ = max.off(s0, s0) | _ = max.off(s0, s0) src0=r6 res=r==0
    IF alu_result != 0 -> even jump=incr
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=1.0 wait last
    ELSE -> end
even:
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=2.0
    ENDIF
end:
    out rtB.rgb = max.off(s0, s0) | rtB.a = max.off(s0, s0) src0=3.0 wait last"
    );
    let o = run(&asm, &Setup::new(4, 1));
    for i in 0..4 {
        if i % 2 == 1 {
            assert_eq!(o.af(i, 0), [1.0; 4]);
            assert_eq!(o.rt(1, i, 0), [None; 4], "odd pixels stopped before rtB");
        } else {
            assert_eq!(o.af(i, 0), [2.0; 4]);
            assert_eq!(o.rt(1, i, 0), [Some(3.0f32.to_bits()); 4]);
        }
    }
    // With early exit off, LAST is only a hint: everyone reaches the end.
    let mut s = Setup::new(4, 1);
    s.frontend.early_exit = false;
    let o = run(&asm, &s);
    assert_eq!(o.rt(1, 1, 0), [Some(3.0f32.to_bits()); 4]);
}

#[test]
fn write_inactive_writes_in_switched_off_processors() {
    let asm = format!(
        "{PARITY}
    {zero}
    alu r2.rgb = max.off(s0, s0) | r2.a = max.off(s0, s0) src0=0.0
    alu _ = max.off(s0, s0) | _ = max.off(s0, s0) src0=r6 res=r==0
    IF alu_result != 0 -> end
    alu r1.rgb = max.off(s0, s0) | r1.a = max.off(s0, s0) src0=1.0 wi
    alu r2.rgb = max.off(s0, s0) | r2.a = max.off(s0, s0) src0=2.0
    ENDIF
end:
    out rtB.rgb = max.off(s0, s0) | rtB.a = max.off(s0, s0) src0=r2
    {OUT_R1}",
        zero = set_r1("0.0")
    );
    let o = run(&asm, &Setup::new(2, 1));
    for i in 0..2u32 {
        assert_eq!(o.af(i, 0), [1.0; 4], "WRITE_INACTIVE reaches pixel {i}");
        let r2 = if i == 1 { 2.0f32 } else { 0.0 };
        assert_eq!(
            o.rt(1, i, 0),
            [Some(r2.to_bits()); 4],
            "plain write only where active"
        );
    }
}

#[test]
fn conditional_break_without_if_in_loop_and_rep() {
    for (open, brk, close) in [
        ("LOOP", "BREAKLOOP", "ENDLOOP"),
        ("REP", "BREAKREP", "ENDREP"),
    ] {
        let asm = format!(
            "{zero}
    {open} i0 -> done
body:
    {INC_R1}
    {R1_PAST_I}
    {brk} alu_result != 0 -> done
    {close} i0 -> body
done:
    {OUT_R1}",
            zero = set_r1("0.0")
        );
        let o = run(&asm, &Setup::new(12, 1).int(0, 10, 0, 0));
        for i in 0..12 {
            assert_eq!(o.af(i, 0), [(i + 1).min(10) as f32; 4], "{brk}, i = {i}");
        }
    }
}

#[test]
fn depth_output_and_predicated_outputs() {
    // depth = i where i is odd (predicate A), the PE's value otherwise.
    let asm = format!(
        "{PARITY}
    alu _ = max(s0, s0) | p.a!=0 = max(s0.r, s0.r) src0=r6
    alu p.r!=0 = max(s0, s0) | _ = max(s0, s0) src0=r6
    out rtA.rgb = max.off(s0, s0) | depth = max.off(s0.r, s0.r) src0=r0 apred=aaaa
    out rtB.rgb = max.off(s0, s0) | rtB.a = max.off(s0, s0) src0=r0 pred=rrrr apred=rrrr wait last"
    );
    let mut s = Setup::new(4, 1);
    s.v = 0.5f32.to_bits();
    let o = run(&asm, &s);
    for i in 0..4u32 {
        let p = &o.pixels[&(i, 0)];
        let odd = i % 2 == 1;
        assert_eq!(p.depth, odd.then(|| (i as f32).to_bits()), "depth of {i}");
        // r0 = (i, j, v, 1): rtA.rgb always, rtB only where predicate R holds.
        assert_eq!(p.targets[0][2], Some(0.5f32.to_bits()));
        assert_eq!(p.targets[1][0], odd.then(|| (i as f32).to_bits()));
    }
}
