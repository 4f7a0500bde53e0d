//! ALU conformance: every opcode (§4.6), presubtract op (§4.1/§4.4), swizzle
//! code and modifier (§4.2, §4.5), output modifier and clamp (§4.7, §7.4),
//! the selections' zero/NaN rules (§7.3), denormals (§7.1), predicate bits
//! and predication (§4.8.3, §4.9), MDH/MDV (§4.6.3). Expected bits are
//! computed by hand from the tables.

use crate::harness::*;

const NAN_NEG: u32 = 0xFFC0_0001;
const STD_NAN: u32 = 0x7FFF_FFFF;
const DENORM: u32 = 0x0000_0001;
const NEG_DENORM: u32 = 0x8000_0001;
const NEG_ZERO: u32 = 0x8000_0000;

fn abc() -> Setup {
    Setup::new(1, 1)
        .c(0, [1.0, 2.0, 3.0, 4.0])
        .c(1, [5.0, 6.0, 7.0, 8.0])
        .c(2, [0.5, 0.75, -1.0, 2.0])
}

#[test]
fn every_rgb_and_alpha_opcode() {
    let srcs = "src0=c0 src1=c1 src2=c2";
    let cases: &[(&str, [f32; 4])] = &[
        (
            "r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2)",
            [5.5, 12.75, 20.0, 34.0],
        ),
        ("r1.rgb = dp3(s0, s1) | r1.a = dp()", [38.0; 4]),
        // DP4's fourth factors are the alpha unit's inputs A and B (here s0.a, s1.a).
        ("r1.rgb = dp4(s0, s1) | r1.a = dp(s0, s1)", [70.0; 4]),
        // Written as fields, the same.
        (
            "r1.rgb = dp4(s0, s1) | r1.a = dp(s0.r, s0.r) ALPHA_INST.ALPHA_SEL_A=0 ALPHA_INST.ALPHA_SWIZ_A=3 \
             ALPHA_INST.ALPHA_SEL_B=1 ALPHA_INST.ALPHA_SWIZ_B=3",
            [70.0; 4],
        ),
        // Other factors: s0.r·s1.b as the fourth pair.
        ("r1.rgb = dp4(s0, s1) | r1.a = dp(s0.r, s1.b)", [45.0; 4]),
        // D2A: A.r·B.r + A.g·B.g + C.b = 5 + 12 − 1.
        ("r1.rgb = d2a(s0, s1, s2) | r1.a = dp()", [16.0; 4]),
        (
            "r1.rgb = min(s0, s1) | r1.a = min(s0, s1)",
            [1.0, 2.0, 3.0, 4.0],
        ),
        (
            "r1.rgb = max(s0, s1) | r1.a = max(s0, s1)",
            [5.0, 6.0, 7.0, 8.0],
        ),
        // CND: C > 0.5 ? A : B with C = (0.5, 0.75, −1, 2).
        (
            "r1.rgb = cnd(s0, s1, s2) | r1.a = cnd(s0, s1, s2)",
            [5.0, 2.0, 7.0, 4.0],
        ),
        // CMP: C >= 0 ? A : B.
        (
            "r1.rgb = cmp(s0, s1, s2) | r1.a = cmp(s0, s1, s2)",
            [1.0, 2.0, 7.0, 4.0],
        ),
        ("r1.rgb = frc(s2) | r1.a = frc(s2)", [0.5, 0.75, 0.0, 0.0]),
        // SOP: the alpha transcendental replicated (A = s0.a = 4 unless swizzled).
        ("r1.rgb = sop() | r1.a = rcp(s0)", [0.25; 4]),
        ("r1.rgb = sop() | r1.a = rsq(s0)", [0.5; 4]),
        ("r1.rgb = sop() | r1.a = ex2(s2.a)", [4.0; 4]),
        ("r1.rgb = sop() | r1.a = ln2(s1)", [3.0; 4]),
        ("r1.rgb = sop() | r1.a = sin(s2.r)", [0.0; 4]),
        ("r1.rgb = sop() | r1.a = cos(s2.r)", [-1.0; 4]),
        ("r1.rgb = sop() | r1.a = sin(s2.g)", [-1.0; 4]),
        ("r1.rgb = sop() | r1.a = cos(s2.g)", [0.0; 4]),
    ];
    for (units, want) in cases {
        let got = r1(&format!("alu {units} {srcs}"), &abc());
        assert_bits(got, bits(*want), units);
    }
}

#[test]
fn transcendental_special_cases() {
    let inf = f32::INFINITY.to_bits();
    let ninf = f32::NEG_INFINITY.to_bits();
    // c0 = (+0, −0, +Inf, −Inf), c1.r = −4.
    let s = Setup::new(1, 1)
        .cbits(0, [0, NEG_ZERO, inf, ninf])
        .c(1, [-4.0, 0.0, 0.0, 0.0]);
    let cases: &[(&str, u32)] = &[
        ("ex2(s0.a)", 0),
        ("ex2(s0.b)", inf),
        ("ln2(s0.r)", ninf),
        ("ln2(s0.g)", ninf),
        ("ln2(s0.b)", inf),
        ("ln2(s1.r)", STD_NAN),
        ("rcp(s0.r)", inf),
        ("rcp(s0.g)", ninf),
        ("rcp(s0.b)", 0),
        ("rcp(s0.a)", NEG_ZERO),
        ("rsq(s0.r)", inf),
        ("rsq(s0.g)", ninf),
        ("rsq(s1.r)", STD_NAN),
        ("sin(s0.b)", STD_NAN),
        ("cos(s0.a)", STD_NAN),
    ];
    for (op, want) in cases {
        let got = r1(
            &format!("alu r1.rgb = sop() | r1.a = {op} src0=c0 src1=c1"),
            &s,
        );
        assert_bits(got, [*want; 4], op);
    }
}

#[test]
fn every_presubtract_op() {
    // src0 = (0.25, 1, 2, 3), src1 = 1.
    let s = Setup::new(1, 1).c(0, [0.25, 1.0, 2.0, 3.0]).c(1, [1.0; 4]);
    let cases: &[(&str, [f32; 4])] = &[
        ("bias", [0.5, -1.0, -3.0, -5.0]),
        ("sub", [0.75, 0.0, -1.0, -2.0]),
        ("add", [1.25, 2.0, 3.0, 4.0]),
        ("inv", [0.75, 0.0, -1.0, -2.0]),
    ];
    for (op, want) in cases {
        let asm =
            format!("alu r1.rgb = max(sp, sp) | r1.a = max(sp, sp) src0=c0 src1=c1 srcp={op}");
        assert_bits(r1(&asm, &s), bits(*want), op);
    }
    // RGB and alpha presubtract independently: rgb = sub, alpha = add.
    let asm = "alu r1.rgb = max(sp, sp) | r1.a = max(sp, sp) src0=c0 src1=c1 srcp=sub/add";
    assert_bits(r1(asm, &s), bits([0.75, 0.0, -1.0, 4.0]), "sub/add");
}

#[test]
fn every_swizzle_code_and_the_alpha_address() {
    let s = Setup::new(1, 1)
        .c(0, [1.0, 2.0, 3.0, 4.0])
        .c(1, [10.0, 20.0, 30.0, 40.0]);
    // RGB swizzles: each code in each position; alpha swizzles likewise.
    let cases: &[(&str, &str, [f32; 4])] = &[
        ("rgb", "a", [1.0, 2.0, 3.0, 4.0]),
        ("gbr", "r", [2.0, 3.0, 1.0, 1.0]),
        ("aaa", "g", [4.0, 4.0, 4.0, 2.0]),
        ("0h1", "b", [0.0, 0.5, 1.0, 3.0]),
        ("h10", "0", [0.5, 1.0, 0.0, 0.0]),
        ("1bg", "h", [1.0, 3.0, 2.0, 0.5]),
        ("r0a", "1", [1.0, 0.0, 4.0, 1.0]),
    ];
    for (rgb, a, want) in cases {
        let asm = format!(
            "alu r1.rgb = max.off(s0.{rgb}, s0.{rgb}) | r1.a = max.off(s0.{a}, s0.{a}) src0=c0"
        );
        assert_bits(r1(&asm, &s), bits(*want), rgb);
    }
    // §4.4: .a always comes from the alpha address, .rgb from the RGB address.
    let asm = "alu r1.rgb = max.off(s0.raa, s0.raa) | r1.a = max.off(s0.g, s0.g) src0=c0/c1";
    assert_bits(r1(asm, &s), bits([1.0, 40.0, 40.0, 2.0]), "split address");
}

#[test]
fn every_input_modifier_is_a_sign_bit_operation() {
    // c0 = (−2, 3, −0, NaN with sign set and a payload).
    let s = Setup::new(1, 1).cbits(
        0,
        [(-2.0f32).to_bits(), 3.0f32.to_bits(), NEG_ZERO, NAN_NEG],
    );
    let two = 2.0f32.to_bits();
    let three = 3.0f32.to_bits();
    let cases: &[(&str, [u32; 4])] = &[
        ("s0", [(-2.0f32).to_bits(), three, NEG_ZERO, NAN_NEG]),
        ("-s0", [two, (-3.0f32).to_bits(), 0, 0x7FC0_0001]),
        ("abs(s0)", [two, three, 0, 0x7FC0_0001]),
        (
            "-abs(s0)",
            [(-2.0f32).to_bits(), (-3.0f32).to_bits(), NEG_ZERO, NAN_NEG],
        ),
    ];
    for (x, want) in cases {
        let asm = format!("alu r1.rgb = max.off({x}, {x}) | r1.a = max.off({x}, {x}) src0=c0");
        assert_bits(r1(&asm, &s), *want, x);
    }
    // Modifiers act after the swizzle, also on swizzle constants.
    let asm =
        "alu r1.rgb = max.off(-s0.1h0, -s0.1h0) | r1.a = max.off(-abs(s0.1), -abs(s0.1)) src0=c0";
    assert_bits(
        r1(asm, &s),
        [0xBF80_0000, 0xBF00_0000, NEG_ZERO, 0xBF80_0000],
        "constants",
    );
}

#[test]
fn every_output_modifier() {
    let s = Setup::new(1, 1).c(0, [3.0; 4]);
    let cases: &[(&str, f32)] = &[
        ("", 3.0),
        (".x2", 6.0),
        (".x4", 12.0),
        (".x8", 24.0),
        (".d2", 1.5),
        (".d4", 0.75),
        (".d8", 0.375),
    ];
    for (m, want) in cases {
        let asm = format!("alu r1.rgb = max{m}(s0, s0) | r1.a = max{m}(s0, s0) src0=c0");
        assert_bits(r1(&asm, &s), [want.to_bits(); 4], m);
    }
}

#[test]
fn output_modifier_standardises_nan_and_flushes_denormals() {
    // c0 = (NaN with payload, +denormal, −denormal, 2^127).
    let s = Setup::new(1, 1).cbits(0, [NAN_NEG, DENORM, NEG_DENORM, 0x7F00_0000]);
    let inf = f32::INFINITY.to_bits();
    // ×1: NaN → 0x7FFFFFFF, denormals → ±0, large stays.
    let got = r1("alu r1.rgb = max(s0, s0) | r1.a = max(s0, s0) src0=c0", &s);
    assert_bits(got, [STD_NAN, 0, NEG_ZERO, 0x7F00_0000], "x1");
    // ×8 overflows to +Inf.
    let got = r1(
        "alu r1.rgb = max.x8(s0, s0) | r1.a = max.x8(s0, s0) src0=c0",
        &s,
    );
    assert_bits(got, [STD_NAN, 0, NEG_ZERO, inf], "x8");
    // OMOD disabled: bit-exact.
    let got = r1(
        "alu r1.rgb = max.off(s0, s0) | r1.a = max.off(s0, s0) src0=c0",
        &s,
    );
    assert_bits(got, [NAN_NEG, DENORM, NEG_DENORM, 0x7F00_0000], "off");
    // ÷8 of the smallest normal becomes denormal and is flushed.
    let s = Setup::new(1, 1).cbits(0, [0x0080_0000; 4]);
    let got = r1(
        "alu r1.rgb = max.d8(s0, s0) | r1.a = max.d8(s0, s0) src0=c0",
        &s,
    );
    assert_bits(got, [0; 4], "d8 underflow");
}

#[test]
fn clamp_after_output_modifier_and_never_when_disabled() {
    // c0 = (−1, 0.375, 2, NaN); c1 = (−0, 0.75, 0.5, 1).
    let s = Setup::new(1, 1)
        .cbits(
            0,
            [
                (-1.0f32).to_bits(),
                0.375f32.to_bits(),
                2.0f32.to_bits(),
                NAN_NEG,
            ],
        )
        .cbits(
            1,
            [
                NEG_ZERO,
                0.75f32.to_bits(),
                0.5f32.to_bits(),
                1.0f32.to_bits(),
            ],
        );
    let got = r1(
        "alu r1.rgb = max.sat(s0, s0) | r1.a = max.sat(s0, s0) src0=c0",
        &s,
    );
    assert_bits(got, bits([0.0, 0.375, 1.0, 0.0]), "sat");
    // Clamp after ×2: 0.375·2 = 0.75, 0.75·2 → 1.
    let got = r1(
        "alu r1.rgb = max.x2.sat(s0, s0) | r1.a = max.x2.sat(s0, s0) src0=c1",
        &s,
    );
    assert_bits(got, bits([0.0, 1.0, 1.0, 1.0]), "x2 sat");
    // OMOD disabled ignores the clamp bit.
    let got = r1(
        "alu r1.rgb = max.off.sat(s0, s0) | r1.a = max.off.sat(s0, s0) src0=c0",
        &s,
    );
    assert_bits(
        got,
        [
            (-1.0f32).to_bits(),
            0.375f32.to_bits(),
            2.0f32.to_bits(),
            NAN_NEG,
        ],
        "off sat",
    );
}

#[test]
fn selections_on_zeros_nan_and_denormals() {
    // A = c0 = (+0, −0, NaN, 1), B = c1 = (−0, +0, 2, NaN).
    let s = Setup::new(1, 1)
        .cbits(0, [0, NEG_ZERO, NAN_NEG, 1.0f32.to_bits()])
        .cbits(1, [NEG_ZERO, 0, 2.0f32.to_bits(), NAN_NEG])
        .cbits(2, [NEG_ZERO, NAN_NEG, NEG_DENORM, 0x3F00_0000]);
    let two = 2.0f32.to_bits();
    // Two zeros or a NaN: the second argument (§7.3).
    let got = r1(
        "alu r1.rgb = min.off(s0, s1) | r1.a = min.off(s0, s1) src0=c0 src1=c1",
        &s,
    );
    assert_bits(got, [NEG_ZERO, 0, two, NAN_NEG], "min");
    let got = r1(
        "alu r1.rgb = max.off(s0, s1) | r1.a = max.off(s0, s1) src0=c0 src1=c1",
        &s,
    );
    assert_bits(got, [NEG_ZERO, 0, two, NAN_NEG], "max");
    // CMP: C = (−0, NaN, −denormal, 0.5): −0 and −denormal count as 0 → A; NaN → B.
    let got = r1(
        "alu r1.rgb = cmp.off(s0, s1, s2) | r1.a = cmp.off(s0, s1, s2) src0=c0 src1=c1 src2=c2",
        &s,
    );
    assert_bits(got, [0, 0, NAN_NEG, 1.0f32.to_bits()], "cmp");
    // CND: C > 0.5 is false for all four → B.
    let got = r1(
        "alu r1.rgb = cnd.off(s0, s1, s2) | r1.a = cnd.off(s0, s1, s2) src0=c0 src1=c1 src2=c2",
        &s,
    );
    assert_bits(got, [NEG_ZERO, 0, two, NAN_NEG], "cnd");
}

#[test]
fn denormal_inputs_read_as_zero_in_arithmetic() {
    // A = (denormal, −denormal, 1, 1), B = 2^100, C = (0, −0, denormal, −0).
    let s = Setup::new(1, 1)
        .cbits(0, [DENORM, NEG_DENORM, 1.0f32.to_bits(), 1.0f32.to_bits()])
        .c(1, [2f32.powi(100); 4])
        .cbits(2, [0, NEG_ZERO, DENORM, NEG_ZERO]);
    let got = r1(
        "alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0.r, s1, s2) src0=c0 src1=c1 src2=c2",
        &s,
    );
    // 0·2^100 + 0 = +0; −0·2^100 + −0 = −0; 2^100 + 0; +0·2^100 + −0 = +0.
    assert_bits(got, [0, NEG_ZERO, 2f32.powi(100).to_bits(), 0], "mad");
}

#[test]
fn mad_by_one_and_plus_negative_zero_keep_every_rule() {
    // The JIT skips x·1 and x + (−0) under DAZ; the results must be the
    // rule's: denormals read as zero, NaN standardised, signs of zero kept.
    let inf = f32::INFINITY.to_bits();
    let s = Setup::new(1, 1)
        .cbits(0, [DENORM, NEG_DENORM, NAN_NEG, NEG_ZERO])
        .cbits(2, [NEG_ZERO, 0, 1.0f32.to_bits(), NEG_ZERO]);
    let got = r1(
        "alu r1.rgb = mad(s0, s1.111, s2) | r1.a = mad(s0, s1.1, s2) src0=c0 src1=c0 src2=c2",
        &s,
    );
    assert_bits(got, [0, 0, STD_NAN, NEG_ZERO], "x·1 + c");
    let got = r1(
        "alu r1.rgb = mad(s0.111, s1, s2) | r1.a = mad(s0.1, s1, s2) src0=c0 src1=c0 src2=c2",
        &s,
    );
    assert_bits(got, [0, 0, STD_NAN, NEG_ZERO], "1·x + c");
    let s = Setup::new(1, 1)
        .cbits(
            3,
            [3.0f32.to_bits(), NEG_ZERO, DENORM, 2f32.powi(100).to_bits()],
        )
        .cbits(
            4,
            [
                0,
                5.0f32.to_bits(),
                2f32.powi(100).to_bits(),
                2f32.powi(100).to_bits(),
            ],
        );
    let got = r1(
        "alu r1.rgb = mad(s0, s1, -s2.000) | r1.a = mad(s0, s1, -s2.0) src0=c3 src1=c4 src2=c3",
        &s,
    );
    assert_bits(got, [0, NEG_ZERO, 0, inf], "a·b + (−0)");
    let got = r1(
        "alu r1.rgb = mad(s0, s1.111, -s2.000) | r1.a = mad(s0, s1.1, -s2.0) src0=c3 src1=c3 src2=c3",
        &s,
    );
    assert_bits(
        got,
        [3.0f32.to_bits(), NEG_ZERO, 0, 2f32.powi(100).to_bits()],
        "x·1 + (−0)",
    );
    // A square plus +0 (the square of −0 is +0; 1e-20² is a denormal,
    // flushed), and (−0)·1 + c (= c, but −0 + +0 = +0).
    let s = Setup::new(1, 1)
        .cbits(
            5,
            [NEG_ZERO, 1e-20f32.to_bits(), NAN_NEG, (-3.0f32).to_bits()],
        )
        .cbits(6, [0, NEG_ZERO, DENORM, NAN_NEG]);
    let got = r1(
        "alu r1.rgb = mad(s0, s0, s1.000) | r1.a = mad(s0, s0, s1.0) src0=c5 src1=c5",
        &s,
    );
    assert_bits(got, [0, 0, STD_NAN, 9.0f32.to_bits()], "x·x + 0");
    let got = r1(
        "alu r1.rgb = mad(-s0.000, s0.111, s1) | r1.a = mad(-s0.0, s0.1, s1) src0=c5 src1=c6",
        &s,
    );
    assert_bits(got, [0, NEG_ZERO, 0, STD_NAN], "(−0)·1 + c");
}

#[test]
fn inline_constants_by_value() {
    let s = Setup::new(1, 1);
    let got = r1(
        "alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=0.5 src1=480.0 src2=0.001953125",
        &s,
    );
    // 0.5·480 + 2^-9 (the smallest denormal-exponent code, m = 1).
    assert_bits(got, [(240.0f32 + 2f32.powi(-9)).to_bits(); 4], "inline");
}

#[test]
fn mdh_and_mdv_read_the_quad_neighbours() {
    // r1 = (i, j, 0, 3i + j); every pixel of a quad gets the same result.
    let s = Setup::new(4, 2).c(0, [3.0; 4]);
    let prep = "alu r1.rgb = max.off(s0, s0) | r1.a = mad(s0.r, s1.r, s0.g) src0=r0 src1=c0 nop";
    let mdh = "alu r2.rgb = mdh(s0, -s0.111, s0) | r2.a = mdh(s0, -s0.1, s0) src0=r1";
    let mdv = "alu r3.rgb = mdv(s0, -s0.111, s0) | r3.a = mdv(s0, -s0.1, s0) src0=r1";
    let mods = "alu r4.rgb = mdh(-s0, s0.111, -s0) | r4.a = mdh(-s0, s0.1, -s0) src0=r1";
    let out = "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r2\n\
               out rtB.rgb = max.off(s0, s0) | rtB.a = max.off(s0, s0) src0=r3\n\
               out rtC.rgb = max.off(s0, s0) | rtC.a = max.off(s0, s0) src0=r4 wait last";
    let o = run(&format!("{prep}\n{mdh}\n{mdv}\n{mods}\n{out}"), &s);
    for j in 0..2 {
        for i in 0..4 {
            let tl = (i & !1) as f32;
            assert_eq!(o.af(i, j), [1.0, 0.0, 0.0, 3.0], "mdh ({i},{j})");
            assert_eq!(
                o.rt(1, i, j).map(|c| f32::from_bits(c.unwrap())),
                [0.0, 1.0, 0.0, 1.0]
            );
            // −TL·1 + −TR = −(TL + TR).
            // MDH reads the top row of the quad.
            let jf = (j & !1) as f32;
            let want = [
                -(2.0 * tl + 1.0),
                -2.0 * jf,
                -0.0,
                -(6.0 * tl + 3.0 + 2.0 * jf),
            ];
            assert_bits(
                o.rt(2, i, j).map(Option::unwrap),
                bits(want),
                "mdh modifiers",
            );
        }
    }
}

#[test]
fn predicate_bits_and_per_channel_predication() {
    // p = (c0 < 0, c0 < 0, c0 < 0 | c0.a == 0) with c0 = (−1, 2, −0, 0) → (1, 0, 0, 1).
    let s = Setup::new(1, 1)
        .c(0, [-1.0, 2.0, -0.0, 0.0])
        .c(1, [10.0, 20.0, 30.0, 40.0])
        .c(2, [1.0, 2.0, 3.0, 4.0]);
    let set = "alu p.rgb<0 = max.off(s0, s0) | p.a==0 = max.off(s0, s0) src0=c0";
    let base = "alu r1.rgb = max.off(s0, s0) | r1.a = max.off(s0, s0) src0=c1";
    let cases: &[(&str, [f32; 4])] = &[
        ("pred=rgba apred=rgba", [1.0, 20.0, 30.0, 4.0]),
        ("pred=!rgba apred=!aaaa", [10.0, 2.0, 3.0, 40.0]),
        ("pred=rrrr apred=gggg", [1.0, 2.0, 3.0, 40.0]),
        ("pred=gggg apred=bbbb", [10.0, 20.0, 30.0, 40.0]),
        ("pred=aaaa apred=rrrr", [1.0, 2.0, 3.0, 4.0]),
    ];
    for (p, want) in cases {
        let body = format!(
            "{set}\n{base}\nalu r1.rgb = max.off(s0, s0) | r1.a = max.off(s0, s0) src0=c2 {p}"
        );
        assert_bits(r1(&body, &s), bits(*want), p);
    }
    // Predicate compares use the post-OMOD value and every code: == < >= !=.
    let set = "alu p.rgb>=0 = max.x2(s0, s0) | p.a!=0 = max(s0, s0) src0=c0";
    let body = format!(
        "{set}\n{base}\nalu r1.rgb = max.off(s0, s0) | r1.a = max.off(s0, s0) src0=c2 pred=rgba apred=rgba"
    );
    // c0·2 = (−2, 4, −0): >= 0 → (no, yes, yes); c0.a = 0: != 0 → no.
    assert_bits(r1(&body, &s), bits([10.0, 2.0, 3.0, 40.0]), "codes");
    for (code, want) in [
        ("==", [10.0, 20.0, 3.0, 4.0]),
        ("<", [1.0, 20.0, 30.0, 40.0]),
    ] {
        let set = format!("alu p.rgb{code}0 = max.x2(s0, s0) | p.a{code}0 = max(s0, s0) src0=c0");
        let body = format!(
            "{set}\n{base}\nalu r1.rgb = max.off(s0, s0) | r1.a = max.off(s0, s0) src0=c2 pred=rgba apred=rgba"
        );
        assert_bits(r1(&body, &s), bits(want), code);
    }
}
