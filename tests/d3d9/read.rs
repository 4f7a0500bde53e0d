//! Direct3D 9 shader bytecode and text: a stream laid out by hand from
//! Microsoft's token formats reads to the shader its text assembles to;
//! every kind of malformed stream is a positioned error; random valid
//! shaders round-trip through the tokens and through the text.

use ctm::d3d9::{self, Item, Opcode, ReadErrorKind, Reg, RegKind, SrcMod, Version};
use ctm_tools::diff::Rng;
use proptest::prelude::*;

mod valid;
use valid::Gen;

const SHADER: &str = "ps_3_0
dcl_texcoord0 v0.xy
dcl_2d s0
def c0, 1, 0, 0, 1
texld r0, v0, s0
mad_sat r1, r0, c0_abs, -v0.yzwx
setp_gt p0, r1, c0
(p0.x) add r2, r1, r0
mov oC0, r2
";

/// The same shader spelled token by token.
const TOKENS: [u32; 35] = [
    0xFFFF_0300, // ps_3_0
    0x0200_001F, // dcl, 2 tokens follow
    0x8000_0005, //   usage texcoord (5), index 0
    0x9003_0000, //   v0.xy: type 1 in [30:28], mask xy in [19:16]
    0x0200_001F, // dcl
    0x9000_0000, //   2d (2 << 27)
    0xA00F_0800, //   s0: type 10 = 2 in [30:28] and 1 in [12:11]
    0x0500_0051, // def, 5 tokens
    0xA00F_0000, //   c0
    0x3F80_0000,
    0x0000_0000,
    0x0000_0000,
    0x3F80_0000,
    0x0300_0042, // texld
    0x800F_0000, //   r0
    0x90E4_0000, //   v0 (swizzle xyzw = 0xE4)
    0xA0E4_0800, //   s0
    0x0400_0004, // mad
    0x801F_0001, //   r1 with _sat (1 in [23:20])
    0x80E4_0000, //   r0
    0xABE4_0000, //   c0_abs (modifier 11)
    0x9139_0000, //   -v0.yzwx (modifier 1, swizzle 0x39)
    0x0301_005E, // setp_gt (94, comparison 1)
    0xB00F_1000, //   p0: type 19 = 3 in [30:28] and 2 in [12:11]
    0x80E4_0001, //   r1
    0xA0E4_0000, //   c0
    0x1400_0002, // add, predicated (bit 28), 4 tokens with the predicate
    0x800F_0002, //   r2
    0xB000_1000, //   (p0.x) — the predicate follows the destination
    0x80E4_0001, //   r1
    0x80E4_0000, //   r0
    0x0200_0001, // mov
    0x800F_0800, //   oC0: type 8 = 1 in [12:11]
    0x80E4_0002, //   r2
    0x0000_FFFF, // end
];

fn tokens() -> Vec<u32> {
    TOKENS.to_vec()
}

#[test]
fn a_hand_laid_stream_reads_as_its_text_assembles() {
    let from_text = d3d9::assemble(SHADER).unwrap();
    let from_tokens = d3d9::read(&tokens()).unwrap();
    assert_eq!(from_tokens, from_text);
    assert_eq!(d3d9::write(&from_text), tokens());
    assert_eq!(d3d9::disassemble(&from_tokens), SHADER);
    let bytes: Vec<u8> = tokens().iter().flat_map(|t| t.to_le_bytes()).collect();
    assert_eq!(d3d9::read_bytes(&bytes).unwrap(), from_text);
    let Item::Inst(mad) = &from_text.items[4] else {
        panic!()
    };
    assert_eq!(mad.op, Opcode::Mad);
    assert!(mad.dst.unwrap().sat);
    assert_eq!(mad.src[1].modifier, SrcMod::Abs);
    assert_eq!(mad.src[2].modifier, SrcMod::Neg);
}

fn kind_at(tokens: &[u32]) -> (usize, ReadErrorKind) {
    let e = d3d9::read(tokens).unwrap_err();
    assert!(
        e.to_string().starts_with(&format!("token {}:", e.offset)),
        "{e}"
    );
    (e.offset, e.kind)
}

#[test]
fn a_malformed_stream_structure_is_a_positioned_error() {
    use ReadErrorKind::*;
    let t = tokens();
    // Structure.
    assert_eq!(kind_at(&[]), (0, Empty));
    assert!(matches!(
        d3d9::read_bytes(&[0, 3, 0xFF, 0xFF, 1]).unwrap_err().kind,
        Bytes(5)
    ));
    assert_eq!(
        kind_at(&[0xFFFE_0300, 0xFFFF]),
        (0, NotPixelShader(0xFFFE_0300))
    );
    assert_eq!(kind_at(&[0x1234, 0xFFFF]), (0, NotPixelShader(0x1234)));
    assert_eq!(kind_at(&[0xFFFF_0100, 0xFFFF]), (0, Version(0xFFFF_0100)));
    assert_eq!(kind_at(&t[..34]), (34, Truncated));
    assert_eq!(kind_at(&t[..20]).1, Truncated);
    assert_eq!(
        kind_at(&[0xFFFF_0300, 0x0000_FFFE | (3 << 16), 1]).1,
        Truncated
    );
    let mut after = t.clone();
    after.extend([1, 2]);
    assert_eq!(kind_at(&after), (35, AfterEnd(2)));
}

/// Unknown, out-of-version and reserved instruction tokens, wrong lengths.
#[test]
fn malformed_instruction_tokens_are_positioned_errors() {
    use ReadErrorKind::*;
    let t = tokens();
    // Instruction tokens.
    assert_eq!(
        kind_at(&[0xFFFF_0300, 0x0100_004B, 0x800F_0000, 0xFFFF]),
        (1, UnknownOpcode(75))
    );
    assert_eq!(
        kind_at(&[0xFFFF_0200, 0x0200_005B, 0x800F_0000, 0x80E4_0001, 0xFFFF]),
        (1, NotInVersion("dsx", d3d9::Version::Ps20))
    );
    let mut reserved = t.clone();
    reserved[31] |= 1 << 29;
    assert_eq!(
        kind_at(&reserved),
        (
            31,
            Reserved {
                token: 0x2200_0001,
                bits: 1 << 29
            }
        )
    );
    let mut co_issue = t.clone();
    co_issue[31] |= 1 << 30;
    assert!(matches!(kind_at(&co_issue), (31, Reserved { .. })));
    // mov says 3 tokens follow but takes 2.
    assert_eq!(
        kind_at(&[
            0xFFFF_0300,
            0x0300_0001,
            0x800F_0000,
            0x80E4_0001,
            0x80E4_0001,
            0xFFFF
        ]),
        (
            1,
            Length {
                declared: 3,
                used: 2
            }
        )
    );
    // mov says 1 token follows but needs 2.
    assert_eq!(
        kind_at(&[0xFFFF_0300, 0x0100_0001, 0x800F_0000, 0xFFFF]).1,
        Length {
            declared: 1,
            used: 2
        }
    );
    assert_eq!(
        kind_at(&[0xFFFF_0300, 0x800F_0000, 0xFFFF]),
        (1, NotAnInstruction(0x800F_0000))
    );
    assert_eq!(
        kind_at(&[0xFFFF_0300, 0x0200_0001, 0x800F_0000, 0x00E4_0001, 0xFFFF]),
        (3, NotAParameter(0x00E4_0001))
    );
}

/// Register types, registers past the version, operands, modifiers, masks and relative addressing.
#[test]
fn malformed_parameter_tokens_are_positioned_errors() {
    use ReadErrorKind::*;
    let t = tokens();
    // Parameter tokens.
    let mut bad_type = t.clone();
    bad_type[33] = 0xC0E4_0002; // type 4 (RASTOUT)
    assert_eq!(kind_at(&bad_type), (33, RegisterType(4)));
    assert_eq!(
        kind_at(&[0xFFFF_0200, 0x0200_0001, 0x800F_000C, 0x80E4_0001, 0xFFFF]),
        (
            2,
            NoSuchRegister(Reg::new(RegKind::Temp, 12), d3d9::Version::Ps20)
        )
    );
    let mut far_const = t.clone();
    far_const[25] = 0xA0E4_00E0; // c224
    assert!(matches!(kind_at(&far_const), (25, NoSuchRegister(..))));
    let mut sampler_src = t.clone();
    sampler_src[33] = 0xA0E4_0800; // mov oC0, s0
    assert!(matches!(kind_at(&sampler_src), (33, Operand { .. })));
    let mut reserved_param = t.clone();
    reserved_param[33] |= 1 << 14;
    assert!(matches!(kind_at(&reserved_param), (33, Reserved { .. })));
    let mut bias = t.clone();
    bias[33] |= 2 << 24; // _bias: ps_1_x
    assert!(matches!(kind_at(&bias), (33, Invalid(m)) if m.contains("ps_1_x")));
    let mut empty_mask = t.clone();
    empty_mask[32] &= !0xF_0000;
    assert!(matches!(kind_at(&empty_mask), (32, Invalid(m)) if m.contains("mask")));
    let mut dst_rel = t.clone();
    dst_rel[32] |= 1 << 13;
    assert!(matches!(kind_at(&dst_rel), (32, Invalid(m)) if m.contains("relative")));
    let mut shift = t.clone();
    shift[32] |= 1 << 24;
    assert!(matches!(kind_at(&shift), (32, Reserved { .. })));
    let mut not = t.clone();
    not[33] |= 13 << 24; // !r2
    assert!(matches!(kind_at(&not), (33, Invalid(m)) if m.contains("predicate")));
    // Relative addressing: ps_3_0 only, through aL only.
    let rel = |addr: u32| {
        vec![
            0xFFFF_0300,
            0x0300_0001,
            0x800F_0000,
            0xA0E4_2003,
            addr,
            0xFFFF,
        ]
    };
    let ok = d3d9::read(&rel(0xF0E4_0800)).unwrap();
    assert_eq!(
        d3d9::disassemble(&ok).lines().nth(1),
        Some("mov r0, c[aL+3]")
    );
    assert!(matches!(kind_at(&rel(0x80E4_0000)), (4, Operand { .. })));
    let mut ps2 = rel(0xF0E4_0800);
    ps2[0] = 0xFFFF_0201;
    assert!(matches!(kind_at(&ps2), (3, Invalid(m)) if m.contains("relative")));
}

/// Declarations, definitions, predication and control bits where they cannot be.
#[test]
fn malformed_declarations_and_controls_are_positioned_errors() {
    use ReadErrorKind::*;
    let t = tokens();
    // Declarations and definitions.
    let mut tex_type = t.clone();
    tex_type[5] = 0xA800_0000; // texture type 5
    assert!(matches!(kind_at(&tex_type), (6, Invalid(m)) if m.contains("texture type")));
    let mut usage = t.clone();
    usage[2] = 0x8000_0014; // usage 20
    assert!(matches!(kind_at(&usage), (3, Invalid(m)) if m.contains("usage")));
    assert!(matches!(
        kind_at(&[0xFFFF_0300, 0x0200_002F, 0xE00F_0800, 2, 0xFFFF]),
        (3, Invalid(m)) if m.contains("defb")
    ));
    let mut def_mask = t.clone();
    def_mask[8] = 0xA001_0000;
    assert!(matches!(kind_at(&def_mask), (8, Invalid(m)) if m.contains("whole")));
    // Predication where it cannot be.
    assert!(matches!(
        kind_at(&[0xFFFF_0300, 0x1100_002A, 0xB000_1000, 0xFFFF]),
        (1, Invalid(m)) if m.contains("predicated")
    ));
    // Control bits on an operation without any.
    let mut control = t.clone();
    control[31] |= 1 << 16;
    assert!(matches!(kind_at(&control), (31, Invalid(m)) if m.contains("control")));
}

#[test]
fn text_errors_name_line_and_column() {
    let cases = [
        ("", 1, 1, "empty source"),
        ("vs_3_0\n", 1, 1, "expected the version"),
        (
            "ps_3_0\nmov r0, r1\nfoo r0\n",
            3,
            1,
            "unknown instruction `foo`",
        ),
        ("ps_3_0\n  mov r0\n", 2, 3, "takes 2 operand(s)"),
        ("ps_3_0\nmov r0, q1\n", 2, 9, "`q1` is not a register"),
        ("ps_3_0\nmov r0, r1.xq\n", 2, 9, "not a swizzle"),
        ("ps_3_0\nmov r0.yx, r1\n", 2, 5, "write mask"),
        ("ps_2_0\nmov r12, r1\n", 2, 1, "ps_2_0 has no register r12"),
        ("ps_3_0\nmov r0, s0\n", 2, 1, "s0 is not allowed"),
        ("ps_3_0\ndef c0, 1, 2, x, 4\n", 2, 15, "`x` is not a number"),
        ("ps_3_0\nsetp p0, r0, r1\n", 2, 1, "comparison"),
        ("ps_3_0\nmov_foo r0, r1\n", 2, 1, "unknown modifier"),
        ("ps_3_0\nmov r0, !r1\n", 2, 9, "predicate"),
        ("ps_3_0\nend\nmov r0, r1\n", 3, 1, "after `end`"),
        ("ps_2_0\nloop aL, i0\n", 2, 1, "not available in ps_2_0"),
        // ps_3_0's input declarations always carry a usage (found by fuzzing:
        // `dcl v1` read back as `dcl_position0 v1`).
        ("ps_3_0\ndcl_centroid v1\n", 2, 1, "with a usage"),
    ];
    for (src, line, col, what) in cases {
        let e = d3d9::assemble(src).unwrap_err();
        assert!(
            (e.line, e.col) == (line, col) && e.message.contains(what),
            "{src:?}: {e} (wanted {line}:{col} {what})"
        );
    }
}

#[test]
fn text_accepts_the_usual_spellings() {
    let s = d3d9::assemble(
        "ps_3_0 // comment
        ; another
        dcl_texcoord v0          // index 0
        dcl_color1_centroid v1.xyz
        dcl vPos.xy
        dcl vFace
        dcl_cube s3
        defi i0, 10, 0, 1, 0
        defb b2, true
        loop aL, i0
          add r0, r0, c2[aL]
          add r0, r0, c[aL + 4].x
          add r0, r0, v[aL+1]_abs
        endloop
        if_lt r0.x, c0.y
        else
        endif
        rep i0
          break_ge r0.x, c1.x
          breakp !p0.y
        endrep
        texldl r1, r0, s3
        texldd r1, r0, s3, r2, r3
        texkill r1
        sincos r2.xy, r0.w
        callnz l1, !p0.x
        callnz l1, b2
        ret
        label l1
        ret
        END",
    )
    .unwrap();
    let text = d3d9::disassemble(&s);
    assert!(text.contains("dcl_texcoord0 v0\n"), "{text}");
    assert!(text.contains("dcl_color1_centroid v1.xyz\n"), "{text}");
    assert!(text.contains("add r0, r0, c[aL+2]\n"), "{text}");
    assert!(text.contains("add r0, r0, c[aL+4].x\n"), "{text}");
    assert!(text.contains("add r0, r0, v[aL+1]_abs\n"), "{text}");
    assert!(text.contains("breakp !p0.y\n"), "{text}");
    assert_eq!(d3d9::assemble(&text).unwrap(), s);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_valid_shaders_round_trip(seed in 1u64..) {
        let shader = Gen(Rng::new(seed)).shader();
        let tokens = d3d9::write(&shader);
        let back = d3d9::read(&tokens);
        prop_assert_eq!(back.as_ref(), Ok(&shader), "{}", d3d9::disassemble(&shader));
        let text = d3d9::disassemble(&shader);
        let again = d3d9::assemble(&text);
        prop_assert_eq!(again.as_ref(), Ok(&shader), "{}", text);
        prop_assert_eq!(d3d9::write(&again.unwrap()), tokens);
    }

    #[test]
    fn any_words_read_or_fail_without_panicking(words in prop::collection::vec(any::<u32>(), 0..40), version in 0usize..8) {
        let mut w = words;
        if version < 7 && !w.is_empty() {
            w[0] = Version::ALL[version].token();
        }
        if let Ok(s) = d3d9::read(&w) {
            prop_assert_eq!(d3d9::write(&s), w);
        }
    }
}
