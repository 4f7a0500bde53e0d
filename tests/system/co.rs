//! The conditional output unit: every test at both locations.

use super::*;

/// Runs IDENTITY-with-depth over 4×1 against a conditional buffer holding
/// b = (1, 2, 3, NaN) with v = 2 (from the PE or from the program).
fn cond_case(
    test: CondTest,
    loc: CondLoc,
    from_program: bool,
) -> (Vec<f32>, Vec<[f32; 4]>, ctm::pe::RunReport) {
    let src = if from_program {
        // depth = 2 for every pixel; v stays 0.
        "out rtA.rgb = max.off(s0, s0) | depth = max.off(s1.r, s1.r) src0=r0 src1=2.0
         out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r0 wait last"
    } else {
        IDENTITY
    };
    let mut rig = Rig::new(src, 4, 1, CacheMode::Coherent);
    let f1 = SurfaceFormat::linear(Format::Float32_1, 4);
    let buf = rig.dev.alloc(SYS, 16).unwrap();
    rig.dev
        .write(buf, &bytes(&[1.0, 2.0, 3.0, f32::NAN]))
        .unwrap();
    let mut cb = rig.setup();
    cb.push(Cmd::SetCondOutFmt {
        base: buf,
        fmt: f1,
        height: 1,
    })
    .push(Cmd::SetCondVal(
        if from_program { 0.0f32 } else { 2.0 }.to_bits(),
    ))
    .push(Cmd::SetCondTest(test))
    .push(Cmd::SetCondLoc(loc))
    .push(Cmd::SetCondOutMask(true))
    .push(Cmd::StartProgram)
    .push(Cmd::FlushOutCache)
    .push(Cmd::FlushCondOutCache);
    let r = rig.submit(&cb).unwrap().runs[0].clone();
    let mut b = [0u8; 16];
    rig.dev.read(buf, &mut b).unwrap();
    let px = (0..4).map(|i| rig.pixel(i, 0)).collect();
    (f32s(&b), px, r)
}

#[test]
fn every_conditional_test_at_both_locations() {
    let b = [1.0f32, 2.0, 3.0, f32::NAN];
    for test in CondTest::ALL {
        let pass: Vec<bool> = b
            .iter()
            .map(|&b| match test {
                CondTest::Never => false,
                CondTest::Less => 2.0 < b,
                CondTest::LessEqual => 2.0 <= b,
                CondTest::Equal => 2.0 == b,
                CondTest::GreaterEqual => 2.0 >= b,
                CondTest::Greater => 2.0 > b,
                CondTest::NotEqual => 2.0 != b,
                CondTest::Always => true,
            })
            .collect();
        let npass = pass.iter().filter(|&&p| p).count() as u64;
        for loc in [CondLoc::Pe, CondLoc::Dpp] {
            for from_program in [false, true] {
                if loc == CondLoc::Pe && from_program {
                    continue; // the PE tests before the program runs
                }
                let what = format!("{test} at {loc:?}, program value {from_program}");
                let (buf, px, r) = cond_case(test, loc, from_program);
                for i in 0..4 {
                    let wrote = px[i][3] == 1.0;
                    assert_eq!(wrote, pass[i], "{what}: output of pixel {i}");
                    let want_b = if pass[i] { 2.0 } else { b[i] };
                    assert!(
                        buf[i] == want_b || (buf[i].is_nan() && want_b.is_nan()),
                        "{what}: buffer[{i}] = {}",
                        buf[i]
                    );
                }
                match loc {
                    CondLoc::Pe => {
                        assert_eq!(
                            (r.pixels, r.skipped, r.discarded),
                            (npass, 4 - npass, 0),
                            "{what}"
                        )
                    }
                    CondLoc::Dpp => {
                        assert_eq!(
                            (r.pixels, r.skipped, r.discarded),
                            (4, 0, 4 - npass),
                            "{what}"
                        )
                    }
                }
            }
        }
    }
}

#[test]
fn the_client_not_selected_always_passes_and_writes_nothing() {
    // Location PE with the program writing depth: the DPP-side request gets
    // true; the PE-side test uses v = 0 (fails Greater against 1, 2, 3).
    let (buf, px, r) = cond_case(CondTest::Greater, CondLoc::Pe, true);
    assert_eq!(r.pixels, 0);
    assert_eq!(&buf[..3], &[1.0, 2.0, 3.0]);
    assert!(px.iter().all(|p| *p == [0.0; 4]));
    // Without write-back the buffer keeps its values.
    let mut rig = Rig::new(IDENTITY, 2, 1, CacheMode::Coherent);
    let f = SurfaceFormat::linear(Format::Uint16_1, 2);
    let buf = rig.dev.alloc(SYS, 4).unwrap();
    rig.dev.write(buf, &[0, 0, 0xFF, 0xFF]).unwrap();
    let mut cb = rig.setup();
    cb.push(Cmd::SetCondOutFmt {
        base: buf,
        fmt: f,
        height: 1,
    })
    .push(Cmd::SetCondVal(0.5f32.to_bits()))
    .push(Cmd::SetCondTest(CondTest::Less))
    .push(Cmd::StartProgram);
    let r = rig.submit(&cb).unwrap();
    assert_eq!(
        r.runs[0].discarded, 1,
        "0.5 < 0 fails, 0.5 < 1 passes (unorm16)"
    );
    let mut b = [0u8; 4];
    rig.dev.read(buf, &mut b).unwrap();
    assert_eq!(b, [0, 0, 0xFF, 0xFF]);
    // With write-back, v is stored quantized.
    let mut cb = CommandBuffer::new();
    cb.push(Cmd::SetCondOutMask(true)).push(Cmd::StartProgram);
    rig.submit(&cb).unwrap();
    rig.dev.read(buf, &mut b).unwrap();
    assert_eq!(b, [0, 0, 0x00, 0x80], "32767.5 rounds to 32768");
}
