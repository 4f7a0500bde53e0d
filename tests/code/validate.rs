//! The static checks of `docs/isa.md` §8.

use ctm::isa::asm::assemble;
use ctm::isa::decode_program;
use ctm::isa::validate::validate;

const END: &str = "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last";

fn findings(body: &str) -> Vec<String> {
    let text = format!("{body}\n{END}");
    validate(&decode_program(&assemble(&text).unwrap()))
        .iter()
        .map(|w| w.to_string())
        .collect()
}

fn has(body: &str, index: usize, needle: &str) {
    let f = findings(body);
    assert!(
        f.iter()
            .any(|w| w.starts_with(&format!("@{index}:")) && w.contains(needle)),
        "{needle} at @{index} in {f:?}"
    );
}

#[test]
fn clean_program_has_no_findings() {
    assert!(
        findings("alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r2 src1=r3 src2=c0")
            .is_empty()
    );
}

#[test]
fn last_instruction_rules() {
    let w = validate(&decode_program(
        &assemble("alu r1.rgb = max(s0, s0) | r1.a = max(s0, s0)").unwrap(),
    ));
    let w: Vec<String> = w.iter().map(|w| w.to_string()).collect();
    assert!(w.iter().any(|m| m.contains("not an OUTPUT")), "{w:?}");
    assert!(w.iter().any(|m| m.contains("TEX_SEM_WAIT")), "{w:?}");
}

#[test]
fn acquire_without_wait() {
    has(
        "tex ld r1.rgba, in0.rgba, r0.rgba acquire",
        0,
        "TEX_SEM_ACQUIRE without TEX_SEM_WAIT",
    );
}

#[test]
fn presubtract_hazard_needs_nop() {
    let body = "alu r2.rgb = max(s0, s0) | r2.a = max(s0, s0) src0=r1\n\
                alu r3.rgb = mad(sp, s2, s2) | r3.a = mad(sp, s2, s2) src0=r2 src1=r4 src2=c0 srcp=sub";
    has(body, 0, "needs NOP");
    let fixed = body.replacen("src0=r1", "src0=r1 nop", 1);
    assert!(findings(&fixed).is_empty(), "{:?}", findings(&fixed));
}

#[test]
fn derivative_hazard_needs_nop() {
    has(
        "alu r2.rgb = max(s0, s0) | r2.a = max(s0, s0) src0=r1\n\
         alu r3.rgb = mdh(s0, -s1.111, s0) | r3.a = mdh(s0, -s1.1, s0) src0=r2",
        0,
        "MDH/MDV",
    );
}

#[test]
fn pairing_rules() {
    has(
        "alu r2.rgb = mad.off(s0, s0, s0) | r2.a = max.off(s0, s0)",
        0,
        "OMOD disabled on RGB mad",
    );
    has(
        "alu r2.rgb = sop() | r2.a = max(s0, s0)",
        0,
        "SOP needs an alpha transcendental",
    );
    has(
        "alu r2.rgb = mad(s0, s0, s0) | r2.a = dp()",
        0,
        "alpha DP needs",
    );
    has(
        "out rtA.rgb = max(s0, s0) | rtA.a = max(s0, s0) res=r<0",
        0,
        "OUTPUT instruction writes the ALU result",
    );
    has(
        "out _ = max(s0, s0) | _ = max(s0, s0)",
        0,
        "writes no output",
    );
}

#[test]
fn alu_result_must_be_fresh() {
    has(
        "IF alu_result == 0 -> @1",
        0,
        "no instruction since the previous flow-control",
    );
    let ok = "alu _ = max(s0, s0) | _ = max(s0, s0) res=r==0\nIF alu_result == 0 -> @2\nENDIF";
    assert!(findings(ok).is_empty(), "{:?}", findings(ok));
    has(
        "alu _ = max(s0, s0) | _ = max(s0, s0) res=r==0\nENDIF\nIF alu_result == 0 -> @3",
        2,
        "ALU result",
    );
}

#[test]
fn flow_control_rules() {
    has(
        "IF p.r == 0 -> @1 CMN.RGB_PRED_SEL=rgba",
        0,
        "not a replicate selection",
    );
    has("ENDIF CMN.ALU_WAIT=0", 0, "ALU_WAIT");
    has("JUMP -> @9", 0, "past the end");
    has(
        "LOOP i0 -> @3\nBREAKREP -> @3\nENDLOOP i0 -> @1",
        1,
        "inside the loop",
    );
    has("REP i0 -> @2\nENDLOOP i0 -> @1", 1, "closes the rep");
    has("LOOP i0 -> @2", 0, "without a matching end");
    has("CONTINUE -> @1", 0, "outside any loop");
}

#[test]
fn semaphore_hazards_that_every_processor_meets_are_found_before_any_run() {
    let words = |src: &str| ctm::isa::asm::assemble(src).unwrap();
    let found = |src: &str| -> Vec<String> {
        ctm::program::validate(&words(src), false)
            .into_iter()
            .filter(|w| w.message.contains("semaphore hazard"))
            .map(|w| w.to_string())
            .collect()
    };
    // A read with no acquire at all, and a read right after the acquiring
    // lookup but before any wait.
    let no_acquire = "tex ld r1.rgba, in0.rgba, r0.rgba unscaled
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last";
    let f = found(no_acquire);
    assert_eq!(f.len(), 1, "{f:?}");
    assert!(
        f[0].starts_with("@1: semaphore hazard: reads r1.rgba before the lookup at @0"),
        "{f:?}"
    );
    let early = "tex ld r1.rgba, in0.rgba, r0.rgba unscaled acquire wait
    alu r2.rgb = max.off(s0, s0) | r2.a = max.off(s0, s0) src0=r1
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r2 wait last";
    assert_eq!(found(early).len(), 1);
    // An overwrite while the lookup may still land.
    let overwrite = "tex ld r1.rgba, in0.rgba, r0.rgba unscaled
    alu r1.rgb = max.off(s0, s0) | r1.a = max.off(s0, s0) src0=r0
    tex ld r2.rgba, in0.rgba, r0.rgba unscaled acquire wait
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last";
    let f = found(overwrite);
    assert!(
        f.iter()
            .any(|w| w.contains("@1: semaphore hazard: writes r1.rgba")),
        "{f:?}"
    );
    // The idiom — lookups, acquire on the last, wait on the first use — is clean.
    let idiom = "tex ld r1.rgba, in0.rgba, r0.rgba unscaled
    tex ld r2.rgba, in1.rgba, r0.rgba unscaled acquire wait
    alu r3.rgb = mad(s0, s1, s1) | r3.a = mad(s0, s1, s1) src0=r1 src1=r2 wait
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r3 wait last";
    assert!(found(idiom).is_empty(), "{:?}", found(idiom));
    // Every bundled example and benchmark kernel is clean (two were not).
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for dir in ["examples", "benches/kernels"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "s") {
                let src =
                    ctm::isa::asm::assemble_source(&std::fs::read_to_string(&p).unwrap()).unwrap();
                let f: Vec<String> = ctm::program::validate(&src.words, src.uncached)
                    .into_iter()
                    .filter(|w| w.message.contains("semaphore"))
                    .map(|w| w.to_string())
                    .collect();
                assert!(f.is_empty(), "{}: {f:?}", p.display());
            }
        }
    }
}
