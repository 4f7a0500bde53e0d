//! The worked encodings of `docs/asm.md` ("Worked encodings") decode to the stated fields and
//! encode back to the same words; malformed words give typed errors.

use ctm::isa::layout::FieldProblem;
use ctm::isa::*;

fn decode(words: [u32; 6]) -> Inst {
    let inst = Inst::decode(words).unwrap_or_else(|e| panic!("{words:08X?}: {e}"));
    assert_eq!(inst.encode().unwrap(), words, "encode(decode(w)) == w");
    inst
}

#[test]
fn mov_bit_exact() {
    let i = decode([
        0x00007800, 0x08020000, 0x08020000, 0x1C440220, 0x1C60C013, 0x20490015,
    ]);
    assert_eq!(i.cmn.ty, InstType::Alu);
    assert_eq!((i.cmn.rgb_wmask, i.cmn.alpha_wmask), (7, true));
    let a = i.alu().unwrap();
    assert_eq!(
        a.rgb_addr.src(0),
        Src {
            kind: SrcKind::Temp(0),
            rel: false
        }
    );
    assert_eq!(a.rgb_addr.src(1).kind, SrcKind::Inline(0));
    assert_eq!(a.rgb_addr.src(2).kind, SrcKind::Inline(0));
    assert_eq!(a.alpha_addr, a.rgb_addr);
    assert_eq!((a.rgba.op, a.alpha.op), (RgbOp::Max, AlphaOp::Max));
    assert_eq!((a.rgb.omod, a.alpha.omod), (Omod::Disabled, Omod::Disabled));
    assert_eq!((a.rgba.addrd, a.alpha.addrd), (1, 1));
    let natural = RgbInput {
        sel: Sel::Src0,
        swz: [Swz::R, Swz::G, Swz::B],
        modifier: Mod::Nop,
    };
    assert_eq!(a.rgb_input(0), natural);
    assert_eq!(a.rgb_input(1), natural);
    let alpha = AlphaInput {
        sel: Sel::Src0,
        swz: Swz::A,
        modifier: Mod::Nop,
    };
    assert_eq!((a.alpha_input(0), a.alpha_input(1)), (alpha, alpha));
}

#[test]
fn final_output() {
    let i = decode([
        0x00078105, 0x08020001, 0x08020001, 0x1C440220, 0x1C60C003, 0x20490005,
    ]);
    assert_eq!(i.cmn.ty, InstType::Out);
    assert!(i.cmn.tex_sem_wait && i.cmn.last);
    assert_eq!(
        (i.cmn.rgb_omask, i.cmn.alpha_omask, i.cmn.rgb_wmask),
        (7, true, 0)
    );
    let a = i.alu().unwrap();
    assert_eq!(a.rgb_addr.src(0).kind, SrcKind::Temp(1));
    assert_eq!((a.rgb.target, a.alpha.target), (0, 0));
}

#[test]
fn mad_sat_with_constant_and_inline() {
    let i = decode([
        0x00187800, 0x08000105, 0x0B800105, 0x00442220, 0x0068C020, 0x1C36E020,
    ]);
    assert!(i.cmn.rgb_clamp && i.cmn.alpha_clamp);
    let a = i.alu().unwrap();
    assert_eq!(a.rgb_addr.src(0).kind, SrcKind::Const(5));
    assert_eq!(a.rgb_addr.src(1).kind, SrcKind::Temp(0));
    assert_eq!(a.rgb_addr.src(2).kind, SrcKind::Inline(0));
    assert_eq!(a.alpha_addr.src(2).kind, SrcKind::Inline(0x38));
    assert_eq!(inline_value(0x38), 1.0);
    assert_eq!((a.rgba.op, a.alpha.op), (RgbOp::Mad, AlphaOp::Mad));
    assert_eq!(
        a.rgb_input(2),
        RgbInput {
            sel: Sel::Src2,
            swz: [Swz::A; 3],
            modifier: Mod::Nop
        }
    );
    assert_eq!(
        a.alpha_input(2),
        AlphaInput {
            sel: Sel::Src2,
            swz: Swz::A,
            modifier: Mod::Nop
        }
    );
    assert_eq!((a.rgba.addrd, a.alpha.addrd), (2, 2));
    assert_eq!(a.rgb.omod, Omod::X1);
}

#[test]
fn texture_lookup() {
    let i = decode([0x00007807, 0x0A400000, 0xE402E400, 0, 0, 0]);
    assert_eq!(i.cmn.ty, InstType::Tex);
    assert!(i.cmn.tex_sem_wait);
    let t = i.tex().unwrap();
    assert_eq!(
        (
            t.inst.op,
            t.inst.tex_id,
            t.inst.sem_acquire,
            t.inst.unscaled
        ),
        (TexOp::Ld, 0, true, true)
    );
    assert_eq!((t.addr.src_addr, t.addr.dst_addr), (0, 2));
    let strq = [
        t.addr.src_s_swiz,
        t.addr.src_t_swiz,
        t.addr.src_r_swiz,
        t.addr.src_q_swiz,
    ];
    let dst = [
        t.addr.dst_r_swiz,
        t.addr.dst_g_swiz,
        t.addr.dst_b_swiz,
        t.addr.dst_a_swiz,
    ];
    assert_eq!(strq, [Chan::R, Chan::G, Chan::B, Chan::A]);
    assert_eq!(dst, strq);
}

/// (w2, w3, op, func, any, a_op, b_op0, b_op1, pop, else, target, int)
type FcRow = (u32, u32, FcOp, u8, bool, AOp, BOp, BOp, u8, bool, u16, u8);

#[test]
fn flow_control_rows() {
    use AOp as A;
    use BOp as B;
    // (w2, w3, op, func, any, a_op, b_op0, b_op1, pop, else, target, int)
    #[rustfmt::skip]
    let rows: [FcRow; 8] = [
        (0x02000F00, 0x000A0000, FcOp::Jump, 0x0F, false, A::None, B::Incr, B::None, 0, false, 10, 0),
        (0x04010010, 0x000A0000, FcOp::Jump, 0x00, false, A::None, B::None, B::Decr, 1, true, 10, 0),
        (0x01010020, 0x00000000, FcOp::Jump, 0x00, true, A::None, B::Decr, B::None, 1, false, 0, 0),
        (0x00000001, 0x00150000, FcOp::Loop, 0x00, false, A::None, B::None, B::None, 0, false, 21, 0),
        (0x0000FF22, 0x00050000, FcOp::EndLoop, 0xFF, true, A::None, B::None, B::None, 0, false, 5, 0),
        (0x0401FF05, 0x00150000, FcOp::BreakLoop, 0xFF, false, A::None, B::None, B::Decr, 1, false, 21, 0),
        (0x0000FFA0, 0x00280000, FcOp::Jump, 0xFF, true, A::Push, B::None, B::None, 0, false, 40, 0),
        (0x0000FF40, 0x00000000, FcOp::Jump, 0xFF, false, A::Pop, B::None, B::None, 0, false, 0, 0),
    ];
    for (w2, w3, op, func, any, a_op, b0, b1, pop, b_else, target, int) in rows {
        let i = decode([0x00000402, 0, w2, w3, 0, 0]);
        assert!(i.cmn.alu_wait);
        let f = i.fc().unwrap();
        let got = (
            f.inst.op,
            f.inst.jump_func,
            f.inst.jump_any,
            f.inst.a_op,
            f.inst.b_op0,
            f.inst.b_op1,
            f.inst.b_pop_cnt,
            f.inst.b_else,
            f.addr.jump_addr,
            f.addr.int_addr,
        );
        assert_eq!(
            got,
            (op, func, any, a_op, b0, b1, pop, b_else, target, int),
            "{w2:08X}"
        );
    }
}

#[test]
fn inline_constant_table() {
    for (code, value) in [
        (0x30, 0.5),
        (0x38, 1.0),
        (0x3C, 1.5),
        (0x40, 2.0),
        (0x48, 4.0),
        (0x00, 0.0),
    ] {
        assert_eq!(inline_value(code), value);
        assert_eq!(inline_code(value), Some(code));
    }
    assert_eq!(inline_value(0x7F), 480.0);
    assert_eq!(
        inline_value(0x01),
        2f32.powi(-9),
        "exponent 0 is denormal (AMD reading)"
    );
    assert_eq!(inline_code(0.3), None);
}

fn problem(words: [u32; 6]) -> (usize, &'static str, FieldProblem) {
    let e = Inst::decode(words).expect_err("must not decode");
    (e.word, e.field.field, e.field.problem)
}

#[test]
fn malformed_words_name_the_field() {
    use FieldProblem::*;
    let mov = [
        0x00007800, 0x08020000, 0x08020000, 0x1C440220, 0x1C60C013, 0x20490015,
    ];
    let mut w = mov;
    w[3] |= 7 << 2; // RED_SWIZ_A = 7
    assert_eq!(problem(w), (3, "RED_SWIZ_A", Undefined));
    let mut w = mov;
    w[5] = (w[5] & !0xF) | 6; // RGB_OP = 6
    assert_eq!(problem(w), (5, "RGB_OP", Undefined));
    let mut w = mov;
    w[4] = (w[4] & !0xF) | 4; // ALPHA_OP = 4
    assert_eq!(problem(w), (4, "ALPHA_OP", Undefined));
    let mut w = mov;
    w[0] |= 6 << 3; // RGB_PRED_SEL = 6
    assert_eq!(problem(w), (0, "RGB_PRED_SEL", Undefined));
    let mut w = mov;
    w[2] |= 1 << 19; // ADDR1 is inline 0.0: REL on it is undefined
    assert_eq!(problem(w), (2, "ADDR1_REL", InlineWithRel));
    assert_eq!(
        problem([0x402, 1, 0, 0, 0, 0]),
        (1, "reserved", ReservedBitsSet)
    );
    assert_eq!(
        problem([0x402, 0, 1 << 3, 0, 0, 0]),
        (2, "reserved", ReservedBitsSet)
    );
    assert_eq!(problem([0x402, 0, 3 << 6, 0, 0, 0]), (2, "A_OP", Undefined));
    assert_eq!(
        problem([0x402, 0, 3 << 24, 0, 0, 0]),
        (2, "B_OP0", Undefined)
    );
    assert_eq!(
        problem([0x402, 0, 0, 1 << 5, 0, 0]),
        (3, "reserved", ReservedBitsSet)
    );
    assert_eq!(
        problem([0x3, 1, 0, 0, 0, 0]),
        (1, "reserved", ReservedBitsSet)
    );
    assert_eq!(
        problem([0x3, 0, 0, 0, 0, 9]),
        (5, "reserved", ReservedBitsSet)
    );
    let e = decode_program(&[0x402, 0, 0, 0, 0, 0, 0x402, 1, 0, 0, 0, 0])[1].unwrap_err();
    assert_eq!(e.index, Some(1));
    assert_eq!(
        e.to_string(),
        "instruction 1: word 1 (UNUSED1) field reserved[31:0] = 0x1: reserved bits set"
    );
}

#[test]
fn encode_rejects_values_that_do_not_fit() {
    let mut i = Inst::zeroed(InstType::Alu);
    if let Body::Alu(a) = &mut i.body {
        a.rgba.addrd = 128; // 7-bit field
    }
    let e = i.encode().unwrap_err();
    assert_eq!(
        (e.word, e.field.field, e.field.problem),
        (5, "RGB_ADDRD", FieldProblem::TooWide)
    );
    let mut i = Inst::zeroed(InstType::Fc);
    i.cmn.ty = InstType::Tex;
    assert!(i.encode().is_err(), "TYPE must match the body");
}
