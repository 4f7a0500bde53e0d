//! Uncached (UMRT) programs through the PE (`docs/isa.md` §5.4): compiled
//! code appends the writes to output 0 itself (unorm values quantised
//! there), the runtime makes those of clauses that also read uncached
//! memory. Memory, counters (writes outside the surface
//! included) and errors must be the interpreter's for every index mode,
//! format, domain and thread count.

use crate::common;

use ctm::engine::EngineKind;
use ctm::kernel::{HostSurface, Job, Kernel};
use ctm::mc::Format;

/// Pixel (i, j) writes i·3 + j at (i + c0.r, j + c0.g) through `rt` (the
/// index mode), then, with `read`, reads back the element at (i + c1.r,
/// j + c1.g) — a write of its own row where the offsets allow — and writes
/// that value plus 1 at (i + c2.g, j + c2.b); without, it writes i·3 + j +
/// 1 there.
fn program(rt: &str, read: bool) -> String {
    let second = if read {
        "tex ld_uncached r3.rgba, in0.rgba, r4.rgba unscaled acquire wait
    alu r5.rgb = mad(s0.r00, s1.111, s2.100) | r5.a = max.off(s0.0, s0.0) src0=r3 src1=r0 src2=r0 wait"
    } else {
        "alu r5.rgb = mad(s0.r00, s1.111, s2.100) | r5.a = max.off(s0.0, s0.0) src0=r2 src1=r0 src2=r0"
    };
    format!(
        "
.uncached
    alu r1.rgb = mad(s0.rrg, s1.b11, s1.0rg) | r1.a = max.off(s0.0, s0.0) src0=r0 src1=c0
    alu r2.rgb = mad(s0, s1.111, s1.g00) | r2.a = max.off(s0.0, s0.0) src0=r1 src1=r0
    alu r4.rgb = mad(s0, s1.111, s2) | r4.a = max.off(s0.0, s0.0) src0=r0 src1=r0 src2=c1 wait
    out {rt}.rgb = max.off(s0, s0) | {rt}.a = max.off(s0, s0) src0=r2
    {second}
    alu r5.gb = mad(s0.0rg, s1.111, s2.0gb) | _ = max.off(s0.0, s0.0) src0=r0 src1=r0 src2=c2 wait
    out {rt}.rgb = max.off(s0, s0) | {rt}.a = max.off(s0, s0) src0=r5 wait last
"
    )
}

/// Output 0 of `w × h` elements of `format`, its bytes a pattern, so that
/// unwritten elements and channels show.
pub(crate) fn memory(format: Format, w: u32, h: u32) -> HostSurface {
    let n = (w * h) as usize * format.bytes();
    let bytes: Vec<u8> = (0..n).map(|k| (k * 7 + 3) as u8).collect();
    HostSurface::new(format, w, h, bytes).unwrap()
}

/// Runs `src` on both engines (the comparator checks memory, counters and
/// errors), then on the JIT alone; returns the writes compiled code made.
fn logged(src: &str, job: &Job) -> u64 {
    let k = Kernel::assemble(src).unwrap_or_else(|e| panic!("{src}: {e}"));
    if let Err(report) = ctm_tools::check::run_both(&k, job) {
        panic!("{src}\n{report}");
    }
    if !common::jit_available() {
        return 0;
    }
    match k.run(&job.clone().engine(EngineKind::Jit)) {
        Ok(r) => r.report.engine.uncached_logged,
        Err(e) => panic!("{src}: {e}"),
    }
}

#[test]
fn every_index_mode_and_format_agrees_with_the_interpreter() {
    let offsets = [
        ([0.0, 0.0, 3.0, 0.0], [1.0, 0.0, 0.0, 0.0]),
        ([-1.0, 1.0, 3.0, 0.0], [0.0, 1.0, 5.0, 0.0]),
        ([0.5, -0.75, 3.0, 0.0], [-1.0, 0.0, 2.0, 0.0]),
        ([f32::NAN, 2.0, 3.0, 0.0], [0.0, f32::INFINITY, 1.0, 0.0]),
        ([1e-40, -1e-40, 3.0, 0.0], [3.0, -1.0, 9.0, 0.0]),
    ];
    for ((rt, read), mode) in ["rtA", "rtB", "rtC", "rtD"]
        .into_iter()
        .flat_map(|rt| [(rt, false), (rt, true)])
        .zip(0..)
    {
        let src = program(rt, read);
        for (n, format) in Format::ALL.into_iter().enumerate() {
            let (c0, c1) = offsets[(mode / 2 + n) % offsets.len()];
            for (w, h) in [(1, 1), (3, 5), (8, 4), (37, 6)] {
                let threads = 1 + (w as usize + mode / 2) % 3;
                let job = Job::new(w, h)
                    .output_init(0, memory(format, w, h))
                    .constant(0, c0)
                    .constant(1, c1)
                    .constant(2, [0.0, c1[2], c1[3] + 1.0, 0.0])
                    .threads(threads);
                let made = logged(&src, &job);
                // Compiled code makes the writes, unless the clause also
                // reads uncached memory.
                let compiled = !read;
                if common::jit_available() && compiled {
                    assert!(made > 0, "{rt} {format} {w}×{h}: no write was compiled");
                } else {
                    assert_eq!(made, 0, "{rt} {format} {w}×{h}");
                }
            }
        }
    }
}

#[test]
fn unorm_quantisation_agrees_with_the_interpreter() {
    // Pixel (i, j) writes input 0's texel (i, j) to (i, j): values around
    // every rounding edge of both unorm formats, and the special ones.
    let src = "
.uncached
    tex ld r1.rgba, in0.rgba, r0.rgba unscaled acquire wait
    alu r2.rgb = mad(s0.r00, s1.111, s1.0rg) | r2.a = max.off(s0.0, s0.0) src0=r1 src1=r0 wait
    out rtC.rgb = max.off(s0, s0) | rtC.a = max.off(s0, s0) src0=r2 wait last
";
    let (w, h) = (64, 48);
    let mut values = Vec::new();
    for k in 0..=255u32 {
        for max in [255.0f32, 65535.0] {
            let edge = (k as f32 + 0.5) / max;
            let below = f32::from_bits(edge.to_bits() - 1);
            let above = f32::from_bits(edge.to_bits() + 1);
            values.extend([k as f32 / max, edge, below, above]);
        }
    }
    values.extend([
        f32::NAN,
        -f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        1e-40,
        -1e-40,
        -0.0,
        0.0,
        1.0,
        1.000_000_1,
        0.999_999_94,
        -0.5,
        2.0,
    ]);
    let texels: Vec<f32> = (0..(w * h) as usize)
        .map(|p| values[p % values.len()])
        .collect();
    let input = HostSurface::from_f32(Format::Float32_1, w, h, &texels).unwrap();
    for format in Format::ALL {
        let job = Job::new(w, h)
            .input(0, input.clone())
            .output_init(0, memory(format, w, h));
        let made = logged(src, &job);
        if common::jit_available() {
            assert_eq!(made, u64::from(w * h), "{format}");
        }
    }
}

/// One uncached write per pixel: (i·c0.b + j) at (i·c0.a + c0.r, j +
/// c0.g); c0.a below 1 sends several pixels of a row to one element, where
/// the last in row order must win.
const ONE_WRITE: &str = "
.uncached
    alu r1.rgb = mad(s0.rrg, s1.ba1, s1.0rg) | r1.a = max.off(s0.0, s0.0) src0=r0 src1=c0
    alu r2.rgb = mad(s0, s1.111, s1.g00) | r2.a = max.off(s0.0, s0.0) src0=r1 src1=r0
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r2 wait last
";

#[test]
fn programs_of_one_write_run_in_strips_and_agree_with_the_interpreter() {
    // Whole quads of a row run in one compiled strip that appends its
    // writes to the row's, between the row's ends' writes (the shim's):
    // memory, counters and writes outside the surface as the interpreter's.
    let k = Kernel::assemble(ONE_WRITE).unwrap();
    let c0s = [
        [0.0, 0.0, 3.0, 1.0],
        [-1.0, 1.0, 3.0, 0.5],
        [0.5, -0.75, 3.0, 0.5],
        [f32::NAN, 2.0, 3.0, 1.0],
        [1e-40, -1e-40, 3.0, 0.25],
    ];
    for (n, format) in Format::ALL.into_iter().enumerate() {
        for (m, (w, h)) in [(2, 2), (3, 5), (8, 4), (37, 6), (64, 10)]
            .into_iter()
            .enumerate()
        {
            let c0 = c0s[(n + m) % c0s.len()];
            let threads = 1 + (n + m) % 3;
            let job = Job::new(w, h)
                .output_init(0, memory(format, w, h))
                .constant(0, c0)
                .threads(threads);
            let what = format!("{format} {w}×{h}, c0 {c0:?}, {threads} threads");
            if let Err(report) = ctm_tools::check::run_both(&k, &job) {
                panic!("{what}\n{report}");
            }
            if !common::jit_available() {
                continue;
            }
            let r = k.run(&job.clone().engine(EngineKind::Jit)).unwrap();
            let e = &r.report.engine;
            // A row of fewer quads than a strip's batch takes the shim.
            assert!(w < 8 || e.strip_runs > 0, "{what}: no strip ran");
            assert_eq!(e.uncached_logged, u64::from(w * h), "{what}: {e:?}");
        }
    }
}

/// One uncached write per pixel: (i·c0.b + j) at (i·c0.a + c0.r, j·c0.g).
/// With c0.g = 1/48, bands of 48 pixel rows write the same elements —
/// bands that straddle chunks of rows (64 pixel rows) included — and the
/// last row of each band in row order must win.
const BANDS: &str = "
.uncached
    alu r1.rgb = mad(s0.rrg, s1.bag, s1.0r0) | r1.a = max.off(s0.0, s0.0) src0=r0 src1=c0
    alu r2.rgb = mad(s0, s1.111, s1.g00) | r2.a = max.off(s0.0, s0.0) src0=r1 src1=r0
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r2 wait last
";

#[test]
fn writes_made_while_later_rows_run_land_in_row_order() {
    // With several threads, the writes of finished rows are made while
    // later rows run, where no row can see them, by the workers that ran
    // them. Later rows overwrite what earlier rows wrote: memory and
    // counters must be one thread's. A program that reads what rows three above wrote must not
    // overlap its writes with its rows, and agrees too.
    let (w, h) = (40, 200);
    let cases = [
        (BANDS.to_string(), [0.0, 1.0 / 48.0, 3.0, 0.5], true),
        (program("rtA", true), [0.0, 0.0, 3.0, 0.0], false),
    ];
    for (src, c0, overlaps) in cases {
        let k = Kernel::assemble(&src).unwrap();
        for format in [Format::Float32_1, Format::Uint8_4] {
            let job = |threads| {
                Job::new(w, h)
                    .output_init(0, memory(format, w, h))
                    .constant(0, c0)
                    .constant(1, [0.0, -3.0, 0.0, 0.0])
                    .constant(2, [0.0, 0.0, 1.0, 0.0])
                    .threads(threads)
                    // Every run on all its threads, however little work.
                    .work_per_worker(std::time::Duration::ZERO)
            };
            let counters = |r: &ctm::kernel::JobResult| {
                let report = ctm::pe::RunReport {
                    engine: Default::default(),
                    overlapped_rows: 0,
                    workers: 0,
                    ..r.report.clone()
                };
                format!("{report:?}")
            };
            let one = k.run(&job(1).engine(EngineKind::Interp)).unwrap();
            assert_eq!(one.report.overlapped_rows, 0);
            let mut engines = vec![EngineKind::Interp];
            if common::jit_available() {
                engines.push(EngineKind::Jit);
            }
            for (threads, engine) in [2, 3, 7]
                .into_iter()
                .flat_map(|t| engines.iter().map(move |&e| (t, e)))
            {
                let what = format!("{format}, {threads} threads, {engine:?}:\n{src}");
                let r = k.run(&job(threads).engine(engine)).unwrap();
                assert_eq!(r.outputs, one.outputs, "{what}");
                assert_eq!(counters(&r), counters(&one), "{what}");
                assert_eq!(
                    r.report.overlapped_rows > 0,
                    overlaps,
                    "{what}: {:?}",
                    r.report
                );
            }
        }
    }
}

#[test]
fn writes_outside_the_surface_are_counted_once_each() {
    // ONE_WRITE with each processor's own index and c0 = (−2, 5, 3, 1)
    // writes at (i − 2, j + 5): the pixels of the first two columns and of
    // the last five rows write outside output 0, counted whether the writes
    // are made after the rows (one thread) or while later rows run
    // (several).
    let (w, h) = (40u32, 200u32);
    let outside = u64::from(w * h - (w - 2) * (h - 5));
    let k = Kernel::assemble(&ONE_WRITE.replace("rtA", "rtC")).unwrap();
    let mut engines = vec![EngineKind::Interp];
    if common::jit_available() {
        engines.push(EngineKind::Jit);
    }
    for engine in engines {
        for threads in [1, 2, 3] {
            let job = Job::new(w, h)
                .output_init(0, memory(Format::Float32_1, w, h))
                .constant(0, [-2.0, 5.0, 3.0, 1.0])
                .threads(threads)
                .work_per_worker(std::time::Duration::ZERO)
                .engine(engine);
            let r = k.run(&job).unwrap();
            let what = format!("{engine:?}, {threads} threads: {:?}", r.report);
            assert_eq!(r.report.diagnostics.out_of_bounds_writes, outside, "{what}");
            assert_eq!(r.report.overlapped_rows > 0, threads > 1, "{what}");
        }
    }
}

#[test]
fn a_write_changes_channel_0_of_its_element_alone() {
    // Pixel (i, j) writes 0.5 at (i, j): channel 0 of every element holds
    // 0.5 in the surface's format, and every other byte keeps the
    // pattern it started with — checked against the bytes, not against
    // the other engine, on one thread and on several.
    let src = "
.uncached
    alu r1.rgb = mad(s0.r00, s1.111, s1.0rg) | r1.a = max.off(s0.0, s0.0) src0=c0 src1=r0
    out rtC.rgb = max.off(s0, s0) | rtC.a = max.off(s0, s0) src0=r1 wait last
";
    let k = Kernel::assemble(src).unwrap();
    let (w, h) = (20u32, 12u32);
    let mut engines = vec![EngineKind::Interp];
    if common::jit_available() {
        engines.push(EngineKind::Jit);
    }
    for format in Format::ALL {
        // Channel 0's place in the element and 0.5's bytes there.
        let (at, half): (usize, &[u8]) = match format {
            Format::Uint8_4 => (2, &[128]),
            Format::Uint16_1 => (0, &[0x00, 0x80]),
            _ => (0, &[0x00, 0x00, 0x00, 0x3F]),
        };
        let before = memory(format, w, h);
        let mut want = before.data.clone();
        for element in want.chunks_mut(format.bytes()) {
            element[at..at + half.len()].copy_from_slice(half);
        }
        for (&engine, threads) in engines.iter().flat_map(|e| [(e, 1), (e, 3)]) {
            let job = Job::new(w, h)
                .output_init(0, before.clone())
                .constant(0, [0.5, 0.0, 0.0, 0.0])
                .threads(threads)
                .engine(engine);
            let r = k.run(&job).unwrap();
            let got = &r.outputs[0];
            assert_eq!(got.0, 0);
            assert!(
                got.1.data == want,
                "{format}, {engine:?}, {threads} threads"
            );
        }
    }
}
