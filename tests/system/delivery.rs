//! How a run's results reach memory: written directly by the workers where
//! no two can touch the same byte, or delivered in row order otherwise
//! (strict caches, overlapping surfaces). Both ways, any thread count and
//! both engines must leave the same bytes.

use crate::common;

use ctm::abi::Executable;
use ctm::device::{Device, DeviceConfig};
use ctm::engine::EngineKind;
use ctm::isa::asm::assemble_source;
use ctm::kernel::{Job, JobResult, Kernel};
use ctm::mc::{ArenaKind, CacheMode, Format, SurfaceFormat};
use ctm::pe::{Command as Cmd, CommandBuffer, RunSettings};
use ctm::runtime::Domain;
use ctm_tools::check::{Observed, assert_agree};

/// Writes four outputs: A (all channels, scaled position), B (red and
/// alpha only), C (green only, into a one-channel surface: dropped
/// channels), D never; pixels with i = j + 3 kill themselves first.
const PROGRAM: &str = "
    alu r1.rgb = mad(s0, s1, s2) | r1.a = mad(s0, s1, s2) src0=r0 src1=c0 src2=c1
    alu r2.rgb = mad(s0.rrr, s1.111, -s0.ggg) | r2.a = mad(s0.r, s1.1, -s0.g) src0=r0 src1=1.0
    alu r3.rgb = mad(s0, s1.111, -s1) | r3.a = mad(s0, s1.1, -s1) src0=r2 src1=3.0
    alu r4.rgb = mad(s0, s0, -s1.111) | r4.a = mad(s0, s0, -s1.1) src0=r3 src1=0.5
    tex kill r4.r, in0.rgba, r4.rgba
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1
    out rtB.r = max.off(s0, s0) | rtB.a = max.off(s0, s0) src0=r1
    out rtC.g = max.off(s0, s0) | _ = max.off(s0, s0) src0=r1 wait last
";

fn run(job: &Job, engine: EngineKind, threads: usize, cache: CacheMode) -> JobResult {
    let kernel = Kernel::assemble(PROGRAM).unwrap();
    let mut job = job.clone();
    job.settings_mut().engine = engine;
    job.settings_mut().threads = threads;
    job = job.cache_mode(cache);
    let r = kernel.run(&job).unwrap();
    let what = format!("{threads} threads, {cache:?}");
    crate::assert_native(engine, &r.report, &what);
    r
}

#[test]
fn direct_and_ordered_delivery_leave_the_same_bytes() {
    // 13 × 7: odd sizes leave helper lanes on the right and bottom edges.
    let job = Job::new(13, 7)
        .output(0, Format::Float32_4)
        .output(1, Format::Uint8_4)
        .output(2, Format::Float32_1)
        .output(3, Format::Float32_2)
        .constant(0, [0.05, 0.125, 0.25, 0.5])
        .constant(1, [0.1, 0.2, 0.3, 0.4]);
    let want = run(&job, EngineKind::Interp, 1, CacheMode::Strict);
    let a = want.output(0).unwrap().to_f32();
    // Pixel (5, 2) killed itself: its elements keep their initial zeros.
    assert_eq!(&a[(2 * 13 + 5) * 4..][..4], &[0.0; 4]);
    // Pixel (1, 2) wrote A = r0 · c0 + c1.
    let r1 = [
        1.0f32 * 0.05 + 0.1,
        2.0 * 0.125 + 0.2,
        0.0 * 0.25 + 0.3,
        0.5 + 0.4,
    ];
    assert_eq!(&a[(2 * 13 + 1) * 4..][..4], &r1);
    // B keeps red and alpha; green and blue stay zero.
    let b = &want.output(1).unwrap().data[(2 * 13 + 1) * 4..][..4];
    let unorm = |x: f32| (f64::from(x) * 255.0).round() as u8;
    assert_eq!(b, &[0, 0, unorm(r1[0]), unorm(r1[3])], "stored B, G, R, A");
    assert_eq!(want.report.killed, 7, "i = j + 3 for j in 0..7");
    assert_eq!(want.report.pixels, 13 * 7 - 7);
    let d = want.output(3).unwrap();
    assert!(d.data.iter().all(|&x| x == 0), "output D is never written");
    for engine in [EngineKind::Interp, EngineKind::Jit] {
        if engine == EngineKind::Jit && !common::jit_available() {
            continue;
        }
        for (threads, cache) in [
            (1, CacheMode::Coherent),
            (2, CacheMode::Coherent),
            (3, CacheMode::Coherent),
            (2, CacheMode::Strict),
        ] {
            let got = run(&job, engine, threads, cache);
            let name = format!("{engine:?}, {threads} threads, {cache:?}");
            let (a, b) = (Observed::results(&want), Observed::results(&got));
            assert_agree(&a, &b, "interp, 1 thread, strict", &name);
            assert_eq!(got.report.pixels, want.report.pixels);
            assert_eq!(got.report.killed, want.report.killed);
            assert_eq!(got.report.diagnostics, want.report.diagnostics);
        }
    }
}

/// Runs `exe` once on a fresh device of `engine` and `threads` over a
/// `domain_w × h` domain, output 0 over input 0: one buffer of `bytes`
/// laid out as `fmt` with `h` rows (float constants `consts`, if any).
/// Returns the run's report and the buffer afterwards.
fn run_in_place(
    exe: &Executable,
    (engine, threads): (EngineKind, usize),
    (fmt, domain_w, h): (SurfaceFormat, u32, u32),
    bytes: &[u8],
    consts: Option<&[u8]>,
) -> (ctm::pe::RunReport, Vec<u8>) {
    let mut dev = Device::open(DeviceConfig {
        settings: RunSettings {
            engine,
            threads,
            ..RunSettings::default()
        },
        ..DeviceConfig::default()
    })
    .unwrap();
    let prog = dev.alloc(ArenaKind::System, exe.code.len() * 4).unwrap();
    dev.load_program(exe, prog).unwrap();
    let buf = dev.alloc(ArenaKind::System, bytes.len()).unwrap();
    dev.write(buf, bytes).unwrap();
    let mut cb = CommandBuffer::new();
    cb.push(Cmd::SetInstFmt { base: prog, fmt });
    if let Some(consts) = consts {
        let c = dev.alloc(ArenaKind::System, consts.len()).unwrap();
        dev.write(c, consts).unwrap();
        cb.push(Cmd::SetConstfFmt { base: c, fmt });
    }
    cb.push(Cmd::SetInpFmt {
        input: 0,
        base: buf,
        fmt,
        height: h,
    })
    .push(Cmd::SetOutFmt {
        output: 0,
        base: buf,
        fmt,
        height: h,
    })
    .push(Cmd::SetDomain(Domain::new(domain_w, h)))
    .push(Cmd::StartProgram);
    let id = dev.submit_commands(&cb).unwrap();
    let mut report = dev.wait(id).unwrap();
    let mut out = vec![0u8; bytes.len()];
    dev.read(buf, &mut out).unwrap();
    let report = report.runs.remove(0);
    crate::assert_native(engine, &report, &format!("in place, {threads} threads"));
    (report, out)
}

#[test]
fn an_output_over_its_own_input_is_updated_in_place() {
    // Output 0 is input 0: workers may not write while others read, so the
    // results go through row-ordered delivery; every pixel reads its own
    // element before any row's results land. 70 rows are 35 quad rows: more
    // than one delivery chunk. The domain is one column narrower than the
    // surface (pitch 12): that column keeps its values.
    let (pitch, h) = (12u32, 70u32);
    let fmt = SurfaceFormat::linear(Format::Float32_4, pitch);
    assert_eq!(fmt.pitch, pitch);
    let program = assemble_source(
        "
    tex ld r1.rgba, in0.rgba, r0.rgba unscaled acquire
    alu r1.rgb = mad(s0, s1.111, s1) | r1.a = mad(s0, s1.1, s1) src0=r1 src1=1.0 wait
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 last
",
    )
    .unwrap();
    let exe = Executable::from_code(program.words);
    let data: Vec<f32> = (0..pitch * h * 4).map(|k| k as f32).collect();
    let bytes: Vec<u8> = data.iter().flat_map(|x| x.to_le_bytes()).collect();
    let want: Vec<u8> = data
        .iter()
        .enumerate()
        .map(|(k, x)| {
            if (k / 4) as u32 % pitch == pitch - 1 {
                *x
            } else {
                x + 1.0
            }
        })
        .flat_map(|x| x.to_le_bytes())
        .collect();
    for (engine, threads) in [
        (EngineKind::Interp, 1),
        (EngineKind::Interp, 2),
        (EngineKind::Jit, 1),
        (EngineKind::Jit, 2),
    ] {
        if engine == EngineKind::Jit && !common::jit_available() {
            continue;
        }
        let (_, out) = run_in_place(&exe, (engine, threads), (fmt, pitch - 1, h), &bytes, None);
        assert!(out == want, "{engine:?}, {threads} threads");
    }
}

#[test]
fn large_outputs_read_back_in_bands_are_whole() {
    // 320 × 241 float32_4 = 1.2 MiB: read back by several threads in bands
    // of rows (241 rows do not split evenly).
    let job = Job::new(320, 241)
        .output(0, Format::Float32_4)
        .output(1, Format::Uint8_4)
        .output(2, Format::Float32_1)
        .constant(0, [0.5, 0.25, 1.0, 2.0])
        .constant(1, [1.0, 2.0, 3.0, 4.0]);
    let one = run(&job, EngineKind::Interp, 1, CacheMode::Coherent);
    let three = run(&job, EngineKind::Interp, 3, CacheMode::Coherent);
    assert_eq!(one.outputs, three.outputs);
    let a = one.output(0).unwrap().to_f32();
    // Last pixel (319, 240) that is not killed: r1 = r0 · c0 + c1.
    let at = (240 * 320 + 319) * 4;
    assert_eq!(
        &a[at..at + 4],
        &[319.0 * 0.5 + 1.0, 240.0 * 0.25 + 2.0, 3.0, 2.0 + 4.0]
    );
}

#[test]
fn a_4096_square_float32_4_output_fits_and_jobs_default_to_speed() {
    // 256 MiB of output: the cached arena is sized for the job.
    let k = Kernel::assemble(
        "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r0 wait last",
    )
    .unwrap();
    let job = Job::new(4096, 4096).output(0, Format::Float32_4);
    assert_eq!(job.settings().engine, EngineKind::best());
    assert_eq!(job.settings().threads, ctm::pe::all_cores());
    let r = k.run(&job).unwrap();
    let out = &r.output(0).unwrap().data;
    assert_eq!(out.len(), 4096 * 4096 * 16);
    let at = (4095 * 4096 + 4095) * 16;
    assert_eq!(
        f32::from_le_bytes(out[at..at + 4].try_into().unwrap()),
        4095.0
    );
    // Beyond one arena: a clear error before anything runs.
    // Beyond one arena: a clear error before anything runs, saying what
    // fits with the same bindings.
    let big = Job::new(8188, 8188).output(0, Format::Float32_4);
    let e = k.run(&big).unwrap_err().to_string();
    assert!(
        e.contains("at most 512 MiB") && e.contains("largest square domain that fits is 5792×5792"),
        "{e}"
    );
    // 5792² float32_4 fits; 5793² does not.
    assert!(
        k.check(&Job::new(5792, 5792).output(0, Format::Float32_4))
            .is_ok()
    );
    assert!(
        k.check(&Job::new(5793, 5793).output(0, Format::Float32_4))
            .is_err()
    );
    // Two-channel and narrower outputs fit at the largest domain.
    assert!(
        k.check(&Job::new(8188, 8188).output(0, Format::Float32_2))
            .is_ok()
    );
}

#[test]
fn uncached_writes_over_an_input_wait_for_the_rows_that_read_it() {
    // Output 0 (uncached) is input 0: each pixel reads an element and
    // writes what it read three rows down. Rows must see the writes of the
    // chunks of rows before theirs as one thread does, so a run of several
    // threads makes no write while later rows run. 140 rows are 70 quad
    // rows: three chunks.
    let (pitch, h) = (16u32, 140u32);
    let fmt = SurfaceFormat::linear(Format::Float32_1, pitch);
    assert_eq!(fmt.pitch, pitch);
    let source = assemble_source(
        "
.uncached
    tex ld r1.rgba, in0.rgba, r0.rgba unscaled acquire wait
    alu r4.rgb = mad(s0.rrg, s1.ba1, s1.0rg) | r4.a = max.off(s0.0, s0.0) src0=r0 src1=c0
    alu r2.rgb = mad(s0, s1.111, s2.r00) | r2.a = max.off(s0.0, s0.0) src0=r4 src1=r0 src2=r1 wait
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r2 wait last
",
    )
    .unwrap();
    assert!(source.uncached);
    let mut exe = Executable::from_code(source.words);
    exe.info.set_uncached(true);
    let data: Vec<f32> = (0..pitch * h).map(|k| k as f32).collect();
    let bytes: Vec<u8> = data.iter().flat_map(|x| x.to_le_bytes()).collect();
    let consts: Vec<u8> = [0.0f32, 3.0, 0.0, 1.0]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let mut runs = Vec::new();
    for (engine, threads) in [
        (EngineKind::Interp, 1),
        (EngineKind::Interp, 2),
        (EngineKind::Jit, 2),
        (EngineKind::Jit, 3),
    ] {
        if engine == EngineKind::Jit && !common::jit_available() {
            continue;
        }
        let (report, out) = run_in_place(
            &exe,
            (engine, threads),
            (fmt, pitch, h),
            &bytes,
            Some(&consts),
        );
        assert_eq!(report.overlapped_rows, 0, "{engine:?}, {threads} threads");
        runs.push((format!("{engine:?}, {threads} threads"), out));
    }
    let (first, want) = &runs[0];
    assert!(*want != bytes, "{first}: nothing written");
    for (name, got) in &runs[1..] {
        assert!(got == want, "{name} differs from {first}");
    }
}
