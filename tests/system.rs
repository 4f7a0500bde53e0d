//! The machine around the DPP (`docs/machine.md`): every command, every CO
//! test at both locations, the format conversions, the 2×2 gather, bounds,
//! the strict caches and malformed command streams (the host API: host.rs).

use ctm::abi::Executable;
use ctm::co::{CondLoc, CondTest};
use ctm::device::{Device, DeviceConfig, DeviceError};
use ctm::isa::asm::assemble_source;
use ctm::mc::{ArenaKind, CacheMode, Format, SurfaceFormat};
use ctm::pe::{Command as Cmd, CommandBuffer, OPCODES, Op, PeError, StreamFault, decode_stream};
use ctm::runtime::{Domain, RunError};

const SYS: ArenaKind = ArenaKind::SystemCached;

/// out0 = r0 = (i, j, v, 1).
const IDENTITY: &str = "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r0 wait last";
/// out0 = input 0 at (i, j).
const COPY: &str = "tex ld r1.rgba, in0.rgba, r0.rgba unscaled acquire wait
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last";

fn exe(src: &str) -> Executable {
    let a = assemble_source(src).unwrap();
    let mut e = Executable::from_code(a.words);
    e.info.set_uncached(a.uncached);
    e
}

fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|f| f.to_le_bytes()).collect()
}

/// A device with a program loaded and a float32_4 output 0 of `w × h`.
struct Rig {
    dev: Device,
    prog: u32,
    out: u32,
    fmt: SurfaceFormat,
    w: u32,
    h: u32,
}

impl Rig {
    fn new(src: &str, w: u32, h: u32, mode: CacheMode) -> Rig {
        let mut dev = Device::open(DeviceConfig {
            cache_mode: mode,
            ..DeviceConfig::default()
        })
        .unwrap();
        let e = exe(src);
        let prog = dev.alloc(SYS, e.code.len() * 4).unwrap();
        dev.load_program(&e, prog).unwrap();
        let fmt = SurfaceFormat::linear(Format::Float32_4, w);
        let out = dev.alloc(SYS, (fmt.pitch * h * 16) as usize).unwrap();
        Rig {
            dev,
            prog,
            out,
            fmt,
            w,
            h,
        }
    }

    /// The usual prologue: program, output 0, domain.
    fn setup(&self) -> CommandBuffer {
        let mut cb = CommandBuffer::new();
        cb.push(Cmd::SetInstFmt {
            base: self.prog,
            fmt: self.fmt,
        })
        .push(Cmd::SetOutFmt {
            output: 0,
            base: self.out,
            fmt: self.fmt,
            height: self.h,
        })
        .push(Cmd::SetDomain(Domain::new(self.w, self.h)));
        cb
    }

    fn submit(&mut self, cb: &CommandBuffer) -> Result<ctm::pe::BufferReport, DeviceError> {
        let id = self.dev.submit_commands(cb)?;
        assert!(self.dev.consumed(id));
        self.dev.wait(id)
    }

    fn pixel(&self, i: u32, j: u32) -> [f32; 4] {
        let mut b = [0u8; 16];
        self.dev
            .read(self.out + (j * self.fmt.pitch + i) * 16, &mut b)
            .unwrap();
        f32s(&b).try_into().unwrap()
    }
}

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
    // Reserved bits are ignored on read: low base bits, high index bits.
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
    assert_eq!(rig.dev.pe().domain, Domain::new(2, 1));
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

#[test]
fn constants_of_every_kind_come_from_memory() {
    // r1 = c7; loop i3 times adding 1 to r1.a; if b5: r1.r = 9.
    let src = "alu r1.rgb = max.off(s0, s0) | r1.a = max.off(s0, s0) src0=c7
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
    let src = src.replace("s0.rrr?", "s0");
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
    assert_eq!(rig.dev.pe().counters.active, r.runs[0].clocks);
}

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
