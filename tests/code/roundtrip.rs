//! Properties of the codec and the text forms over generated instructions:
//! decode∘encode = id, arbitrary words never panic, asm∘disasm = id, and the
//! disassembly is a fixed point.

use ctm::isa::asm::{assemble, parse_inst};
use ctm::isa::disasm::{Options, disassemble, disassemble_program};
use ctm::isa::random::random_inst;
use ctm::isa::*;
use proptest::prelude::*;

fn inst_from(seed: Vec<u32>) -> Inst {
    let mut it = seed.into_iter().cycle();
    random_inst(&mut || it.next().unwrap_or(0))
}

fn program(seeds: &[Vec<u32>]) -> Vec<u32> {
    seeds
        .iter()
        .flat_map(|s| inst_from(s.clone()).encode().unwrap())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn decode_encode_identity(seed in prop::collection::vec(any::<u32>(), 1..80)) {
        let inst = inst_from(seed);
        let words = inst.encode().unwrap();
        prop_assert_eq!(Inst::decode(words), Ok(inst));
    }

    #[test]
    fn arbitrary_words_never_panic(words in any::<[u32; 6]>()) {
        if let Ok(inst) = Inst::decode(words) {
            prop_assert_eq!(inst.encode().unwrap(), words);
            let text = disassemble(&inst);
            prop_assert_eq!(parse_inst(&text).map_err(|e| e.to_string()), Ok(inst), "{}", text);
        }
        // Undecodable words still disassemble (as .words) and assemble back.
        let text = disassemble_program(&words, Options::default());
        prop_assert_eq!(assemble(&text).map_err(|e| e.to_string()), Ok(words.to_vec()), "{}", text);
    }

    #[test]
    fn instruction_text_round_trips(seed in prop::collection::vec(any::<u32>(), 1..80)) {
        let inst = inst_from(seed);
        let text = disassemble(&inst);
        prop_assert!(!text.starts_with(".words"), "readable form lost for {:?}: {}", inst, text);
        prop_assert_eq!(parse_inst(&text).map_err(|e| e.to_string()), Ok(inst), "{}", text);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn program_text_round_trips(seeds in prop::collection::vec(prop::collection::vec(any::<u32>(), 1..80), 1..40), verbose in any::<bool>()) {
        let words = program(&seeds);
        let text = disassemble_program(&words, Options { verbose });
        prop_assert_eq!(assemble(&text).map_err(|e| e.to_string()), Ok(words.clone()), "{}", text);
        // disasm(asm(text)) is stable.
        let again = disassemble_program(&assemble(&text).unwrap(), Options { verbose });
        prop_assert_eq!(again, text);
    }
}

/// DP4 reads the alpha unit's inputs A and B as its fourth pair of
/// factors (docs/isa.md §4.5). Beside `dp4` an alpha `dp` must name them —
/// `dp()` would leave them at s0.r and s0.r, a slip that made the `dotmix`
/// benchmark square its red channel — and the disassembler prints them.
#[test]
fn dp4s_fourth_pair_is_written_and_printed() {
    let e = parse_inst("alu r1.rgb = dp4(s0, s1) | r1.a = dp() src0=r1 src1=c3")
        .unwrap_err()
        .to_string();
    assert!(e.contains("fourth pair"), "{e}");
    // DP3 and D2A read no alpha input.
    for rgb in ["dp3(s0, s1)", "d2a(s0, s1, s2)"] {
        parse_inst(&format!("alu r1.rgb = {rgb} | r1.a = dp() src0=r1 src1=c3")).unwrap();
    }
    let inst =
        parse_inst("alu r1.rgb = dp4(s0, s1) | r1.a = dp(s0.r, s0.r) src0=r1 src1=c3").unwrap();
    let text = disassemble(&inst);
    assert!(text.contains("dp(s0.r, s0.r)"), "{text}");
    assert_eq!(parse_inst(&text).unwrap(), inst);
    let inst = parse_inst("alu r1.rgb = dp4(s0, s1) | r1.a = dp(s0, s1) src0=r1 src1=c3").unwrap();
    assert!(disassemble(&inst).contains("dp(s0, s1)"));
}
