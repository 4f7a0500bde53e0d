//! The memory controller: format conversions, the 2×2 gather, bounds,
//! strict caches, and runs that cannot start.

use super::*;

#[test]
fn format_conversions_on_read_and_write() {
    // Reading.
    assert_eq!(
        Format::Uint16_1
            .read(&65535u16.to_le_bytes())
            .map(f32::from_bits),
        [1.0, 0.0, 0.0, 1.0]
    );
    assert_eq!(
        Format::Uint8_4.read(&[0, 51, 255, 102]).map(f32::from_bits),
        [1.0, 0.2, 0.0, 0.4]
    );
    assert_eq!(
        Format::Float32_1.read(&bytes(&[-3.5])).map(f32::from_bits),
        [-3.5, 0.0, 0.0, 1.0]
    );
    assert_eq!(
        Format::Float32_2
            .read(&bytes(&[1.0, 2.0]))
            .map(f32::from_bits),
        [1.0, 2.0, 0.0, 1.0]
    );
    let nan = Format::Float32_4.read(&bytes(&[f32::NAN, -0.0, 7.0, 8.0]));
    assert_eq!(nan[0], f32::NAN.to_bits(), "float formats keep the pattern");
    assert_eq!(nan[1], (-0.0f32).to_bits());
    // Writing: clamp, round half away from zero, NaN → 0, masks.
    let w = |f: Format, v: [f32; 4], mask: u8, init: u8| {
        let mut e = vec![init; f.bytes()];
        f.write(&mut e, v.map(f32::to_bits), mask);
        e
    };
    assert_eq!(
        w(Format::Uint8_4, [1.5, -1.0, 0.5, f32::NAN], 0xF, 9),
        [128, 0, 255, 0]
    );
    assert_eq!(
        w(Format::Uint8_4, [1.0, 1.0, 1.0, 1.0], 0b0001, 9),
        [9, 9, 255, 9],
        "only R (byte 2)"
    );
    assert_eq!(
        w(Format::Uint16_1, [f32::INFINITY, 0.0, 0.0, 0.0], 1, 0),
        [0xFF, 0xFF]
    );
    assert_eq!(w(Format::Uint16_1, [-0.0, 0.0, 0.0, 0.0], 1, 7), [0, 0]);
    assert_eq!(
        w(Format::Float32_2, [1.0, 2.0, 3.0, 4.0], 0b0010, 0),
        bytes(&[0.0, 2.0])
    );
    assert_eq!(
        w(Format::Float32_1, [f32::NAN, 2.0, 3.0, 4.0], 0xF, 0),
        f32::NAN.to_bits().to_le_bytes()
    );

    // End to end: a uint8_4 input copied to a uint8_4 and a float32_4 output.
    let mut rig = Rig::new(COPY, 2, 1, CacheMode::Coherent);
    let fin = SurfaceFormat::linear(Format::Uint8_4, 2);
    let inp = rig.dev.alloc(SYS, 8).unwrap();
    rig.dev
        .write(inp, &[10, 20, 30, 40, 0, 0, 255, 255])
        .unwrap();
    let o8 = rig.dev.alloc(SYS, 8).unwrap();
    let mut cb = rig.setup();
    cb.push(Cmd::SetInpFmt {
        input: 0,
        base: inp,
        fmt: fin,
        height: 1,
    })
    .push(Cmd::SetOutFmt {
        output: 1,
        base: o8,
        fmt: fin,
        height: 1,
    });
    rig.submit(&cb).unwrap();
    let src2 = COPY.replace(
        "out rtA.rgb",
        "out rtB.rgb = max.off(s0, s0) | rtB.a = max.off(s0, s0) src0=r1\n    out rtA.rgb",
    );
    let e = exe(&src2);
    rig.dev.load_program(&e, rig.prog).unwrap();
    let mut cb = CommandBuffer::new();
    cb.push(Cmd::StartProgram);
    rig.submit(&cb).unwrap();
    assert_eq!(
        rig.pixel(0, 0),
        [30.0 / 255.0, 20.0 / 255.0, 10.0 / 255.0, 40.0 / 255.0]
    );
    let mut b = [0u8; 8];
    rig.dev.read(o8, &mut b).unwrap();
    assert_eq!(
        b,
        [10, 20, 30, 40, 0, 0, 255, 255],
        "uint8_4 survives a round trip"
    );
}

#[test]
fn two_by_two_gather_and_bounds() {
    let mut rig = Rig::new(COPY, 3, 2, CacheMode::Coherent);
    // A 3×2 float32_1 input (pitch 4): value = 10·y + x.
    let fmt = SurfaceFormat {
        gather: true,
        ..SurfaceFormat::linear(Format::Float32_1, 3)
    };
    let data: Vec<f32> = (0..2)
        .flat_map(|y| (0..4).map(move |x| (10 * y + x) as f32))
        .collect();
    let inp = rig.dev.alloc(SYS, data.len() * 4).unwrap();
    rig.dev.write(inp, &bytes(&data)).unwrap();
    let mut cb = rig.setup();
    cb.push(Cmd::SetInpFmt {
        input: 0,
        base: inp,
        fmt,
        height: 2,
    })
    .push(Cmd::StartProgram);
    let r = rig.submit(&cb).unwrap();
    // c0..c3 = (x+1, y), (x, y+1), (x+1, y+1), (x, y); row 2 is out of range.
    assert_eq!(rig.pixel(0, 0), [1.0, 10.0, 11.0, 0.0]);
    assert_eq!(
        rig.pixel(2, 0),
        [3.0, 12.0, 13.0, 2.0],
        "x = 3 lies in the pitch"
    );
    assert_eq!(rig.pixel(1, 1), [12.0, 0.0, 0.0, 11.0], "y = 2 reads zero");
    // (Helper lanes of the quads read too.)
    assert!(r.runs[0].diagnostics.out_of_bounds_reads >= 6);

    // Without the gather: out of range reads a zero element (0, 0, 0, 1).
    let plain = SurfaceFormat::linear(Format::Float32_1, 3);
    let mut cb = CommandBuffer::new();
    cb.push(Cmd::SetInpFmt {
        input: 0,
        base: inp,
        fmt: plain,
        height: 1,
    })
    .push(Cmd::StartProgram);
    let r = rig.submit(&cb).unwrap();
    assert_eq!(rig.pixel(1, 0), [1.0, 0.0, 0.0, 1.0]);
    assert_eq!(rig.pixel(1, 1), [0.0, 0.0, 0.0, 1.0]);
    assert!(r.runs[0].diagnostics.out_of_bounds_reads >= 3);

    // A multi-channel gather is reported and reads plainly.
    let four = SurfaceFormat {
        gather: true,
        ..SurfaceFormat::linear(Format::Float32_4, 1)
    };
    let mut cb = CommandBuffer::new();
    cb.push(Cmd::SetInpFmt {
        input: 0,
        base: inp,
        fmt: four,
        height: 1,
    })
    .push(Cmd::SetDomain(Domain::new(1, 1)))
    .push(Cmd::StartProgram);
    let r = rig.submit(&cb).unwrap();
    assert_eq!(rig.pixel(0, 0), [0.0, 1.0, 2.0, 3.0]);
    assert!(r.runs[0].diagnostics.gather_multichannel > 0);

    // Writes outside the output surface are dropped and counted.
    let small = SurfaceFormat::linear(Format::Float32_4, 1);
    let mut cb = CommandBuffer::new();
    cb.push(Cmd::SetOutFmt {
        output: 0,
        base: rig.out,
        fmt: small,
        height: 1,
    })
    .push(Cmd::SetDomain(Domain::new(6, 2)))
    .push(Cmd::StartProgram);
    let r = rig.submit(&cb).unwrap();
    assert_eq!(r.runs[0].diagnostics.out_of_bounds_writes, 12 - 4);
}

#[test]
fn strict_caches_expose_missing_flush_and_invalidate() {
    for mode in [CacheMode::Coherent, CacheMode::Strict] {
        let mut rig = Rig::new(COPY, 2, 1, mode);
        let fmt = SurfaceFormat::linear(Format::Float32_4, 2);
        let inp = rig.dev.alloc(SYS, 32).unwrap();
        rig.dev.write(inp, &bytes(&[1.0; 8])).unwrap();
        let mut cb = rig.setup();
        cb.push(Cmd::SetInpFmt {
            input: 0,
            base: inp,
            fmt,
            height: 1,
        })
        .push(Cmd::StartProgram);
        rig.submit(&cb).unwrap();
        let unflushed = rig.pixel(0, 0);
        let mut cb = CommandBuffer::new();
        cb.push(Cmd::FlushOutCache);
        rig.submit(&cb).unwrap();
        assert_eq!(rig.pixel(0, 0), [1.0; 4], "{mode:?}: after the flush");
        // The host changes the input; a run without inv_inp_cache.
        rig.dev.write(inp, &bytes(&[2.0; 8])).unwrap();
        let mut cb = CommandBuffer::new();
        cb.push(Cmd::StartProgram).push(Cmd::FlushOutCache);
        rig.submit(&cb).unwrap();
        let stale = rig.pixel(0, 0);
        let mut cb = CommandBuffer::new();
        cb.push(Cmd::InvInpCache)
            .push(Cmd::StartProgram)
            .push(Cmd::FlushOutCache);
        rig.submit(&cb).unwrap();
        assert_eq!(rig.pixel(0, 0), [2.0; 4], "{mode:?}: after the invalidate");
        match mode {
            CacheMode::Coherent => {
                assert_eq!(unflushed, [1.0; 4]);
                assert_eq!(stale, [2.0; 4]);
            }
            CacheMode::Strict => {
                assert_eq!(unflushed, [0.0; 4], "the write waits in the cache");
                assert_eq!(stale, [1.0; 4], "the read cache still holds the old input");
            }
        }
    }
}

#[test]
fn runs_that_cannot_start_say_why() {
    let mut rig = Rig::new(IDENTITY, 2, 2, CacheMode::Coherent);
    let fails = |rig: &mut Rig, cb: &CommandBuffer| match rig.submit(cb) {
        Err(DeviceError::Buffer { source, .. }) => source.to_string(),
        other => panic!("{other:?}"),
    };
    let mut cb = CommandBuffer::new();
    cb.push(Cmd::StartProgram);
    assert!(fails(&mut rig, &cb).contains("no instruction memory set"));
    let mut cb = CommandBuffer::new();
    cb.push(Cmd::SetInstFmt {
        base: rig.prog + 2048,
        fmt: rig.fmt,
    })
    .push(Cmd::StartProgram);
    assert!(fails(&mut rig, &cb).contains("neither an executable image"));
    let mut cb = rig.setup();
    cb.push(Cmd::SetOutFmt {
        output: 0,
        base: 0x0800_0000,
        fmt: rig.fmt,
        height: 2,
    })
    .push(Cmd::StartProgram);
    assert!(fails(&mut rig, &cb).contains("not inside one mapped arena"));
    let mut cb = rig.setup();
    cb.push(Cmd::SetCondTest(CondTest::Less))
        .push(Cmd::StartProgram);
    assert!(fails(&mut rig, &cb).contains("needs the conditional buffer"));
    let mut cb = rig.setup();
    cb.push(Cmd::SetCondTest(CondTest::Always))
        .push(Cmd::InitPerfCounters)
        .push(Cmd::ReadPerfCounters { base: 0x0800_0000 });
    assert!(fails(&mut rig, &cb).contains("read_perf_counters"));
    // A program reading an input that has no format: a run error naming pc.
    let mut rig = Rig::new(COPY, 2, 2, CacheMode::Coherent);
    let cb = rig.setup();
    let mut cb2 = cb.clone();
    cb2.push(Cmd::StartProgram);
    match rig.submit(&cb2) {
        Err(DeviceError::Buffer {
            source:
                PeError::Run {
                    source: RunError::Texture { pc: 0, .. },
                    ..
                },
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
    // A program that never ends stops at the budget.
    let mut rig = Rig::new(
        "JUMP -> top func=0xFF\ntop:\nJUMP -> top func=0xFF\nout _ = max.off(s0, s0) | _ = max.off(s0, s0) src0=r0 wait last",
        2,
        2,
        CacheMode::Coherent,
    );
    rig.dev.settings_mut().options.budget = 1000;
    let mut cb = rig.setup();
    cb.push(Cmd::StartProgram);
    assert!(fails(&mut rig, &cb).contains("never ends"));
}

#[test]
fn strict_caches_for_constants_and_the_conditional_buffer() {
    // out0 = c0; the host changes c0 between runs.
    let src = "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=c0 wait last";
    let mut rig = Rig::new(src, 2, 1, CacheMode::Strict);
    let cf = rig.dev.alloc(SYS, 4096).unwrap();
    rig.dev.write(cf, &bytes(&[1.0; 4])).unwrap();
    let f1 = SurfaceFormat::linear(Format::Float32_1, 2);
    let depth = rig.dev.alloc(SYS, 8).unwrap();
    rig.dev.write(depth, &bytes(&[5.0, 5.0])).unwrap();
    let mut cb = rig.setup();
    cb.push(Cmd::SetConstfFmt { base: cf, fmt: f1 })
        .push(Cmd::SetCondOutFmt {
            base: depth,
            fmt: f1,
            height: 1,
        })
        .push(Cmd::SetCondTest(CondTest::Always))
        .push(Cmd::SetCondOutMask(true))
        .push(Cmd::StartProgram)
        .push(Cmd::FlushOutCache);
    rig.submit(&cb).unwrap();
    assert_eq!(rig.pixel(0, 0), [1.0; 4]);
    let mut b = [0u8; 8];
    rig.dev.read(depth, &mut b).unwrap();
    assert_eq!(
        f32s(&b),
        [5.0, 5.0],
        "conditional writes wait for their flush"
    );
    let mut cb = CommandBuffer::new();
    cb.push(Cmd::FlushCondOutCache);
    rig.submit(&cb).unwrap();
    rig.dev.read(depth, &mut b).unwrap();
    assert_eq!(f32s(&b), [0.0, 0.0], "v = 0 written back after the flush");

    rig.dev.write(cf, &bytes(&[2.0; 4])).unwrap();
    let mut cb = CommandBuffer::new();
    cb.push(Cmd::StartProgram).push(Cmd::FlushOutCache);
    rig.submit(&cb).unwrap();
    assert_eq!(
        rig.pixel(0, 0),
        [1.0; 4],
        "stale constant without inv_constf_cache"
    );
    let mut cb = CommandBuffer::new();
    cb.push(Cmd::InvConstfCache)
        .push(Cmd::StartProgram)
        .push(Cmd::FlushOutCache);
    rig.submit(&cb).unwrap();
    assert_eq!(rig.pixel(0, 0), [2.0; 4]);

    // A program rewritten in place runs the old code until inv_inst_cache.
    let e = exe("out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=0.5 wait last");
    rig.dev.load_program(&e, rig.prog).unwrap();
    let mut cb = CommandBuffer::new();
    cb.push(Cmd::StartProgram).push(Cmd::FlushOutCache);
    rig.submit(&cb).unwrap();
    assert_eq!(rig.pixel(0, 0), [2.0; 4], "stale instructions");
    let mut cb = CommandBuffer::new();
    cb.push(Cmd::InvInstCache)
        .push(Cmd::StartProgram)
        .push(Cmd::FlushOutCache);
    rig.submit(&cb).unwrap();
    assert_eq!(rig.pixel(0, 0), [0.5; 4]);
}
