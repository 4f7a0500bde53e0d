//! The flow-control constructs of `docs/isa.md` §6.9 and the ENDIF merge of
//! §6.10: each row's fields assemble from, and disassemble to, the named
//! construct.

use ctm::isa::asm::parse_inst;
use ctm::isa::disasm::disassemble;
use ctm::isa::*;

/// A row of §6.9: FUNC, ANY, OP, A_OP, B_OP0, B_OP1, POP, ELSE, target.
struct Row(u8, bool, FcOp, AOp, BOp, BOp, u8, bool, u16);

fn fc(row: &Row) -> Inst {
    let Row(func, any, op, a_op, b0, b1, pop, b_else, target) = *row;
    let mut inst = Inst::zeroed(InstType::Fc);
    inst.cmn.alu_wait = true;
    if let Body::Fc(f) = &mut inst.body {
        f.inst = FcInst {
            op,
            jump_func: func,
            jump_any: any,
            a_op,
            b_op0: b0,
            b_op1: b1,
            b_pop_cnt: pop,
            b_else,
            ..FcInst::default()
        };
        f.addr.jump_addr = target;
    }
    inst
}

fn check(row: Row, text: &str) {
    let inst = fc(&row);
    assert_eq!(disassemble(&inst), text);
    assert_eq!(parse_inst(text).unwrap(), inst, "{text}");
}

#[test]
fn branch_construct_rows() {
    use AOp as A;
    use BOp as B;
    use FcOp::*;
    check(
        Row(0x0F, false, Jump, A::None, B::Incr, B::None, 0, false, 12),
        "IF alu_result == 0 -> @12",
    );
    check(
        Row(0x0F, false, Jump, A::None, B::Incr, B::Incr, 0, false, 7),
        "IF alu_result == 0 -> @7 jump=incr",
    );
    check(
        Row(0x55, false, Jump, A::None, B::Incr, B::None, 0, false, 9),
        "IF b0 == 0 -> @9",
    );
    check(
        Row(0x00, false, Jump, A::None, B::None, B::Decr, 1, true, 12),
        "ELSE -> @12",
    );
    check(
        Row(0x00, true, Jump, A::None, B::Decr, B::None, 1, false, 0),
        "ENDIF",
    );
    check(
        Row(0x00, true, Jump, A::None, B::Decr, B::None, 1, false, 13),
        "ENDIF -> @13",
    );
}

#[test]
fn loop_construct_rows() {
    use AOp as A;
    use BOp as B;
    use FcOp::*;
    check(
        Row(0x00, false, Loop, A::None, B::None, B::None, 0, false, 21),
        "LOOP i0 -> @21",
    );
    check(
        Row(0xFF, true, EndLoop, A::None, B::None, B::None, 0, false, 5),
        "ENDLOOP i0 -> @5",
    );
    check(
        Row(0x00, false, Rep, A::None, B::None, B::None, 0, false, 21),
        "REP i0 -> @21",
    );
    check(
        Row(0xFF, true, EndRep, A::None, B::None, B::None, 0, false, 5),
        "ENDREP i0 -> @5",
    );
    check(
        Row(
            0xFF,
            false,
            BreakLoop,
            A::None,
            B::None,
            B::Decr,
            2,
            false,
            21,
        ),
        "BREAKLOOP -> @21 pop=2",
    );
    check(
        Row(
            0xFF,
            false,
            BreakRep,
            A::None,
            B::None,
            B::Decr,
            1,
            false,
            21,
        ),
        "BREAKREP -> @21 pop=1",
    );
    check(
        Row(
            0xF0,
            false,
            BreakLoop,
            A::None,
            B::None,
            B::Decr,
            0,
            false,
            21,
        ),
        "BREAKLOOP alu_result != 0 -> @21",
    );
    check(
        Row(
            0xFF,
            false,
            Continue,
            A::None,
            B::None,
            B::Decr,
            1,
            false,
            20,
        ),
        "CONTINUE -> @20 pop=1",
    );
}

#[test]
fn call_and_jump_construct_rows() {
    use AOp as A;
    use BOp as B;
    use FcOp::*;
    check(
        Row(0xFF, true, Jump, A::Push, B::None, B::None, 0, false, 40),
        "CALL -> @40",
    );
    check(
        Row(0xFF, true, Jump, A::Push, B::None, B::Incr, 0, false, 40),
        "CALL -> @40 jump=incr",
    );
    check(
        Row(0xF0, true, Jump, A::Push, B::None, B::Incr, 0, false, 40),
        "CALL alu_result != 0 -> @40 jump=incr",
    );
    check(
        Row(0xFF, false, Jump, A::Pop, B::None, B::None, 0, false, 0),
        "RET",
    );
    check(
        Row(0xFF, false, Jump, A::Pop, B::None, B::Decr, 1, false, 0),
        "RET jump=decr pop=1",
    );
    check(
        Row(0xFF, false, Jump, A::None, B::None, B::None, 0, false, 3),
        "JUMP -> @3",
    );
}

#[test]
fn predicate_conditions_set_the_fc_predicate() {
    let inst = parse_inst("IF !p.g != 0 -> @4").unwrap();
    assert_eq!(
        (inst.cmn.rgb_pred_sel, inst.cmn.rgb_pred_inv),
        (PredSel::Gggg, true)
    );
    assert_eq!(inst.fc().unwrap().inst.jump_func, 0xCC);
    assert_eq!(disassemble(&inst), "IF !p.g != 0 -> @4");
}

/// §6.10: three nested IFs closed by one ENDIF with B_POP_CNT = 3; the inner
/// IFs jump to that ENDIF+1 with B_OP1 = DECR and B_POP_CNT = depth − 1.
#[test]
fn endif_merge_example() {
    use AOp as A;
    use BOp as B;
    use FcOp::Jump;
    check(
        Row(0x0F, false, Jump, A::None, B::Incr, B::None, 0, false, 10),
        "IF alu_result == 0 -> @10",
    );
    check(
        Row(0x0F, false, Jump, A::None, B::Incr, B::Decr, 1, false, 10),
        "IF alu_result == 0 -> @10 jump=decr pop=1",
    );
    check(
        Row(0x0F, false, Jump, A::None, B::Incr, B::Decr, 2, false, 10),
        "IF alu_result == 0 -> @10 jump=decr pop=2",
    );
    check(
        Row(0x00, true, Jump, A::None, B::Decr, B::None, 3, false, 0),
        "ENDIF pop=3",
    );
    // The separate form: three ENDIFs, each `0x00 1 JUMP NONE DECR NONE 1 0 0`.
    for _ in 0..3 {
        check(
            Row(0x00, true, Jump, A::None, B::Decr, B::None, 1, false, 0),
            "ENDIF",
        );
    }
}

#[test]
fn unusual_fields_appear_raw() {
    let mut inst = fc(&Row(
        0x00,
        true,
        FcOp::Jump,
        AOp::None,
        BOp::Decr,
        BOp::None,
        1,
        false,
        0,
    ));
    inst.cmn.alu_wait = false;
    inst.cmn.stat_we = 5;
    assert_eq!(disassemble(&inst), "ENDIF CMN.ALU_WAIT=0 CMN.STAT_WE=5");
}

#[test]
fn sources_reject_suffixes_and_non_temporaries_as_destinations() {
    let e = parse_inst("alu r1.rgb = max(s0, s0) | r1.a = max(s0, s0) src0=r5.rgb").unwrap_err();
    assert!(e.message.contains("takes no `.rgb`"), "{e}");
    let e = parse_inst("alu c1.rgb = max(s0, s0) | r1.a = max(s0, s0)").unwrap_err();
    assert!(e.message.contains("r0..r127"), "{e}");
    let e = parse_inst("tex ld r200.rgba, in0.rgba, r0.rgba").unwrap_err();
    assert!(e.message.contains("r0..r127"), "{e}");
}
