//! The command processor: packets, streams and their faults, the settings
//! each command makes, the performance counters.

use super::*;

#[test]
fn command_packets_round_trip_and_confirmed_headers() {
    assert_eq!(
        Cmd::SetConstiFmt {
            base: 0x800,
            fmt: SurfaceFormat::linear(Format::Float32_1, 0)
        }
        .encode()[0],
        0xC001_0F00
    );
    assert_eq!(Cmd::SetCondTest(CondTest::Less).encode()[0], 0xC000_1B00);
    let fmt = SurfaceFormat {
        pitch: 8188,
        tiled: true,
        gather: true,
        format: Format::Uint16_1,
    };
    let all = [
        Cmd::SetCondVal(0x3f80_0000),
        Cmd::SetDomain(Domain {
            i0: 3,
            j0: 4,
            i1: 8191,
            j1: 5,
        }),
        Cmd::StartProgram,
        Cmd::InitPerfCounters,
        Cmd::StartPerfCounters,
        Cmd::StopPerfCounters,
        Cmd::ReadPerfCounters { base: 0x7000_0800 },
        Cmd::SetInstFmt { base: 0x800, fmt },
        Cmd::SetConstfFmt { base: 0x1000, fmt },
        Cmd::SetConstiFmt { base: 0x1800, fmt },
        Cmd::SetConstbFmt { base: 0x2000, fmt },
        Cmd::SetInpFmt {
            input: 15,
            base: 0x2800,
            fmt,
            height: 8191,
        },
        Cmd::SetOutFmt {
            output: 3,
            base: 0x3000,
            fmt,
            height: 7,
        },
        Cmd::SetCondOutFmt {
            base: 0x3800,
            fmt,
            height: 9,
        },
        Cmd::InvInstCache,
        Cmd::InvConstfCache,
        Cmd::InvConstiCache,
        Cmd::InvConstbCache,
        Cmd::InvInpCache,
        Cmd::FlushOutCache,
        Cmd::InvCondOutCache,
        Cmd::FlushCondOutCache,
        Cmd::SetOutMask(0b1010),
        Cmd::SetCondOutMask(true),
        Cmd::SetCondTest(CondTest::NotEqual),
        Cmd::SetCondLoc(CondLoc::Pe),
        Cmd::SetParams { base: 0x7000_1000 },
    ];
    assert_eq!(all.len(), OPCODES.len(), "one case per command");
    let words: Vec<u32> = all.iter().flat_map(|c| c.encode()).collect();
    let back: Vec<Cmd> = decode_stream(&words).map(|r| r.unwrap().1).collect();
    assert_eq!(back, all);
    // The type-2 filler is a one-dword no-op.
    let with_filler = [vec![0x8000_0000], Cmd::StartProgram.encode()].concat();
    assert_eq!(decode_stream(&with_filler).count(), 1);
    // Opcodes are unique.
    for (k, a) in OPCODES.iter().enumerate() {
        assert!(
            OPCODES[k + 1..].iter().all(|b| b.opcode != a.opcode),
            "{}",
            a.name
        );
    }
    assert_eq!(Op::SetCondTest.info().opcode, 0x1B);
}

#[test]
fn reserved_parameter_bits_are_ignored_on_read() {
    let fmt = SurfaceFormat {
        pitch: 8188,
        tiled: true,
        gather: true,
        format: Format::Uint16_1,
    };
    // Low base bits, high index bits.
    let mut w = Cmd::SetInpFmt {
        input: 2,
        base: 0x2800,
        fmt,
        height: 5,
    }
    .encode();
    w[1] |= 0xFFF0;
    w[2] |= 0x7FF;
    let (_, c) = decode_stream(&w).next().unwrap().unwrap();
    assert_eq!(
        c,
        Cmd::SetInpFmt {
            input: 2,
            base: 0x2800,
            fmt,
            height: 5
        }
    );
}

#[test]
fn malformed_streams_fault_at_their_offset() {
    let good = Cmd::StartProgram.encode();
    let cases: Vec<(Vec<u32>, &str)> = vec![
        ([good.clone(), vec![0x4000_0000, 0]].concat(), "BadHeader"),
        (
            [good.clone(), vec![0xC000_7700, 0]].concat(),
            "UnknownOpcode",
        ),
        (
            [good.clone(), vec![0xC001_8200, 0, 0]].concat(),
            "WrongCount",
        ),
        ([good.clone(), vec![0xC003_9300, 0, 0]].concat(), "PastEnd"),
        (
            [good.clone(), vec![0xC001_9000, 0, 7 << 24]].concat(),
            "BadParameter",
        ),
    ];
    for (words, kind) in cases {
        let results: Vec<_> = decode_stream(&words).collect();
        assert_eq!(results.len(), 2, "{kind}");
        let err = results[1].clone().unwrap_err();
        let offset = match &err {
            StreamFault::BadHeader { offset, .. }
            | StreamFault::UnknownOpcode { offset, .. }
            | StreamFault::WrongCount { offset, .. }
            | StreamFault::PastEnd { offset, .. }
            | StreamFault::BadParameter { offset, .. } => *offset,
        };
        assert_eq!(offset, 8, "{kind}: {err}");
        assert!(format!("{err:?}").starts_with(kind), "{err:?}");
        assert!(err.to_string().starts_with("byte 0x8:"), "{err}");
    }
}

#[test]
fn a_fault_stops_the_stream_and_later_commands_touch_nothing() {
    let mut rig = Rig::new(IDENTITY, 4, 2, CacheMode::Coherent);
    let mut cb = rig.setup();
    cb.push(Cmd::SetDomain(Domain::new(2, 1)))
        .push(Cmd::StartProgram)
        .push(Cmd::FlushOutCache);
    let mut words = cb.words().to_vec();
    let fault_at = words.len() * 4;
    words.push(0xC000_7700); // unknown opcode
    words.push(0);
    let more = [
        Cmd::SetDomain(Domain::new(4, 2)).encode(),
        Cmd::StartProgram.encode(),
    ]
    .concat();
    words.extend(more);
    let b: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let at = rig.dev.alloc(SYS, b.len()).unwrap();
    rig.dev.write(at, &b).unwrap();
    let id = rig.dev.submit(at, b.len() as u32).unwrap();
    assert!(rig.dev.consumed(id), "a faulted buffer counts as consumed");
    match rig.dev.wait(id) {
        Err(DeviceError::Buffer {
            source: PeError::Stream(StreamFault::UnknownOpcode { offset, .. }),
            ..
        }) => assert_eq!(offset, fault_at),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        rig.pixel(1, 0),
        [1.0, 0.0, 0.0, 1.0],
        "before the fault: ran"
    );
    assert_eq!(rig.pixel(3, 1), [0.0; 4], "after the fault: untouched");
    assert_eq!(rig.dev.pe().domain(), Domain::new(2, 1));
}

#[test]
fn cond_val_domain_and_output_mask() {
    let mut rig = Rig::new(IDENTITY, 8, 6, CacheMode::Coherent);
    let mut cb = rig.setup();
    cb.push(Cmd::SetCondVal(0.25f32.to_bits()))
        .push(Cmd::SetDomain(Domain {
            i0: 3,
            j0: 1,
            i1: 6,
            j1: 4,
        }))
        .push(Cmd::SetOutMask(0b0101))
        .push(Cmd::StartProgram)
        .push(Cmd::FlushOutCache);
    let r = rig.submit(&cb).unwrap();
    assert_eq!(r.runs[0].pixels, 16);
    for j in 0..6 {
        for i in 0..8 {
            let inside = (3..=6).contains(&i) && (1..=4).contains(&j);
            let want = if inside {
                [i as f32, 0.0, 0.25, 0.0]
            } else {
                [0.0; 4]
            };
            assert_eq!(rig.pixel(i, j), want, "({i}, {j})");
        }
    }
    // An empty domain runs nothing.
    let mut cb = CommandBuffer::new();
    cb.push(Cmd::SetDomain(Domain {
        i0: 5,
        j0: 0,
        i1: 4,
        j1: 3,
    }))
    .push(Cmd::StartProgram);
    assert_eq!(rig.submit(&cb).unwrap().runs[0].pixels, 0);
}

/// r1 = c7; loop i3 times adding 1 to r1.a; if b5: r1.r = 9.
const EVERY_KIND: &str = "alu r1.rgb = max.off(s0, s0) | r1.a = max.off(s0, s0) src0=c7
    LOOP i3 -> done
body:
    alu _ = max.off(s0, s0) | r1.a = mad(s0.1, s0.1, s0) src0=r1
    ENDLOOP i3 -> body
done:
    IF b5 == 0 -> skip
    alu r1.r = max.off(s0.rrr?, s0) | _ = max.off(s0, s0) src0=9.0
    ENDIF
skip:
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last";

#[test]
fn constants_of_every_kind_come_from_memory() {
    let src = EVERY_KIND.replace("s0.rrr?", "s0");
    let mut rig = Rig::new(&src, 2, 2, CacheMode::Coherent);
    let d = &mut rig.dev;
    let cf = d.alloc(SYS, 4096).unwrap();
    d.write(cf + 7 * 16, &bytes(&[1.0, 2.0, 3.0, 0.5])).unwrap();
    let ci = d.alloc(SYS, 128).unwrap();
    d.write(ci + 3 * 4, &[5, 0, 0, 0]).unwrap();
    let cbool = d.alloc(SYS, 128).unwrap();
    d.write(cbool + 5 * 4, &1u32.to_le_bytes()).unwrap();
    let f = SurfaceFormat::linear(Format::Float32_1, 0);
    let mut cb = rig.setup();
    cb.push(Cmd::SetConstfFmt { base: cf, fmt: f })
        .push(Cmd::SetConstiFmt { base: ci, fmt: f })
        .push(Cmd::SetConstbFmt {
            base: cbool,
            fmt: f,
        })
        .push(Cmd::StartProgram);
    rig.submit(&cb).unwrap();
    assert_eq!(rig.pixel(1, 1), [9.0, 2.0, 3.0, 5.5]);
}

#[test]
fn a_constant_used_where_no_memory_holds_it_is_an_error_naming_it() {
    let src = EVERY_KIND.replace("s0.rrr?", "s0");
    for mode in [CacheMode::Coherent, CacheMode::Strict] {
        let mut rig = Rig::new(&src, 2, 2, mode);
        let fail = |rig: &mut Rig, cb: &CommandBuffer| match rig.submit(cb) {
            Ok(_) => panic!("{mode:?}: the run should fail"),
            Err(e) => e.to_string(),
        };
        // No constant memory at all: the float constant it uses.
        let mut cb = rig.setup();
        let why = fail(&mut rig, cb.push(Cmd::StartProgram));
        assert!(
            why.contains("float constant 7 is used but no float constant memory is set"),
            "{mode:?}: {why}"
        );
        // Float constants set: the integer constant.
        let f = SurfaceFormat::linear(Format::Float32_1, 0);
        let cf = rig.dev.alloc(SYS, 4096).unwrap();
        let mut cb = rig.setup();
        cb.push(Cmd::SetConstfFmt { base: cf, fmt: f });
        let why = fail(&mut rig, cb.clone().push(Cmd::StartProgram));
        assert!(
            why.contains("integer constant 3 is used but no integer constant memory is set"),
            "{mode:?}: {why}"
        );
        // A float constant file that runs past its arena's end (bases are
        // 2 KiB aligned): c200 lies beyond it.
        let reads_c200 =
            "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=c200 wait last";
        let mut rig = Rig::new(reads_c200, 2, 2, mode);
        let info = rig.dev.info();
        let cf = info.base_address_sys_c + info.arena_size_sys_c - 2048;
        let mut cb = rig.setup();
        let why = fail(
            &mut rig,
            cb.push(Cmd::SetConstfFmt { base: cf, fmt: f })
                .push(Cmd::StartProgram),
        );
        let at = format!(
            "float constant 200 at {:#010x} is not in mapped memory",
            cf + 3200
        );
        assert!(why.contains(&at), "{mode:?}: {why}");
    }
}

/// Reads c[aL+0] with aL = 200 (i0 = {count 1, init 200, step 0}): the
/// notes the PE derives list c0 alone.
const READS_C200_RELATIVE: &str = "LOOP i0 -> done
body:
    alu r1.rgb = max.off(s0, s0) | r1.a = max.off(s0, s0) src0=c[aL+0]
    ENDLOOP i0 -> body
done:
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last";

#[test]
fn a_constant_no_memory_holds_reads_zero_after_a_run_that_read_it() {
    // Kept uniforms must not carry one run's constants into the next: a
    // float constant file read in place (coherent) or element by element
    // (strict), then one whose c200 lies past its arena's end.
    for mode in [CacheMode::Coherent, CacheMode::Strict] {
        let mut rig = Rig::new(READS_C200_RELATIVE, 2, 2, mode);
        let f = SurfaceFormat::linear(Format::Float32_1, 0);
        let ci = rig.dev.alloc(SYS, 128).unwrap();
        rig.dev.write(ci, &[1, 200, 0, 0]).unwrap();
        let cf = rig.dev.alloc(SYS, 4096).unwrap();
        rig.dev
            .write(cf + 200 * 16, &bytes(&[7.0, 6.0, 5.0, 4.0]))
            .unwrap();
        let info = rig.dev.info();
        let short = info.base_address_sys_c + info.arena_size_sys_c - 2048;
        for (base, want) in [
            (cf, [7.0, 6.0, 5.0, 4.0]),
            (short, [0.0; 4]),
            (cf, [7.0, 6.0, 5.0, 4.0]),
        ] {
            let mut cb = rig.setup();
            cb.push(Cmd::SetConstiFmt { base: ci, fmt: f })
                .push(Cmd::SetConstfFmt { base, fmt: f })
                .push(Cmd::StartProgram)
                .push(Cmd::FlushOutCache);
            rig.submit(&cb).unwrap();
            assert_eq!(rig.pixel(1, 1), want, "{mode:?}, constants at {base:#x}");
        }
    }
}

#[test]
fn perf_counters_count_only_when_enabled() {
    let mut rig = Rig::new(IDENTITY, 4, 4, CacheMode::Coherent);
    let dest = rig.dev.alloc(SYS, 8).unwrap();
    rig.dev.write(dest, &[0xAA; 8]).unwrap();
    let mut cb = rig.setup();
    cb.push(Cmd::StartPerfCounters)
        .push(Cmd::StartProgram)
        .push(Cmd::ReadPerfCounters { base: dest });
    rig.submit(&cb).unwrap();
    let mut b = [0u8; 8];
    rig.dev.read(dest, &mut b).unwrap();
    assert_eq!(b, [0xAA; 8], "disabled counters write nothing");

    let mut cb = rig.setup();
    cb.push(Cmd::InitPerfCounters)
        .push(Cmd::StartPerfCounters)
        .push(Cmd::StartProgram)
        .push(Cmd::StopPerfCounters)
        .push(Cmd::StartProgram)
        .push(Cmd::ReadPerfCounters { base: dest });
    let r = rig.submit(&cb).unwrap();
    rig.dev.read(dest, &mut b).unwrap();
    let total = u32::from_le_bytes(b[..4].try_into().unwrap());
    let active = u32::from_le_bytes(b[4..].try_into().unwrap());
    assert_eq!(u64::from(active), r.runs[0].clocks, "one run counted");
    assert!(
        active > 0 && total > active,
        "total {total} active {active}"
    );
    // Counting stopped: the second run did not add.
    assert_eq!(rig.dev.pe().counters().active, r.runs[0].clocks);
}
