//! Texture lookups on both engines through the memory controller: the JIT
//! reads linear inputs of every format from memory itself (compiled
//! address arithmetic, page tables, the unorm conversions) and sends the
//! others (the 2×2 gather, strict caches) to the runtime; both must give the
//! interpreter's channels and out-of-bounds counts bit for bit, for every
//! kind of coordinate (NaN payloads, infinities, denormals, ±0, edges,
//! huge values), scaled and unscaled, in full groups and under divergent
//! flow control, on partial groups at the domain's edges.

use crate::common;

use common::both;
use ctm::co::{CondLoc, CondTest};
use ctm::kernel::{CondSetup, HostSurface, Job, Kernel};
use ctm::mc::{CacheMode, Format};

/// Looks input 0 up at the coordinates input 1 holds for the pixel: once
/// for every lane (rtA), once only where the coordinates' alpha is
/// negative (rtB, divergent), and once more with the lookup's destination
/// swizzle reordered (rtC).
fn program(unscaled: bool) -> Kernel {
    let u = if unscaled { "unscaled" } else { "" };
    Kernel::assemble(&format!(
        "    tex ld r1.rgba, in1.rgba, r0.rgba unscaled acquire wait
    tex ld r2.rgba, in0.rgba, r1.rgba {u}
    tex ld r4.rgba, in0.abgr, r1.rgba {u} acquire wait
    alu _ = max.off(s0, s0) | _ = max.off(s0, s0) src0=r1 res=a<0 wait
    IF alu_result == 0 -> skip jump=incr
    tex ld r3.rgba, in0.rgba, r1.rgba {u} acquire wait
    ENDIF
skip:
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r2
    out rtB.rgb = max.off(s0, s0) | rtB.a = max.off(s0, s0) src0=r3
    out rtC.rgb = max.off(s0, s0) | rtC.a = max.off(s0, s0) src0=r4 wait last"
    ))
    .unwrap()
}

/// A deterministic pseudo-random word.
fn hash(k: u32) -> u32 {
    let mut x = k.wrapping_mul(0x9E37_79B9) ^ 0x5bd1_e995;
    x ^= x >> 15;
    x = x.wrapping_mul(0x2c1b_3c6d);
    x ^= x >> 12;
    x
}

/// Coordinates for surface size `size`: special patterns, the edges, and
/// ordinary values around the surface.
fn coordinate(k: u32, size: u32, unscaled: bool) -> u32 {
    let specials: [u32; 14] = [
        0x7FC0_0000, // NaN
        0xFFC0_1234, // NaN with payload and sign
        0x7F80_0001, // signalling NaN
        0x7F80_0000, // +inf
        0xFF80_0000, // -inf
        0x0000_0001, // denormals
        0x8000_0001,
        0x807F_FFFF,
        0x0080_0000, // smallest normals
        0x8080_0000,
        0x8000_0000, // -0
        0x4F00_0000, // 2^31
        0xCF00_0000, // -2^31
        0x7149_F2CA, // 1e30
    ];
    let h = hash(k);
    let s = size as f32;
    let v = match h % 8 {
        0 => return specials[(h >> 8) as usize % specials.len()],
        1 => [0.0, -0.5, s - 0.5, s, s + 0.25, 0.999_999_94, -1.0][(h >> 8) as usize % 7],
        _ => (h >> 8) as f32 / (1 << 24) as f32 * (s + 4.0) - 2.0,
    };
    if unscaled { v } else { v / s }.to_bits()
}

fn check(format: Format, unscaled: bool, threads: usize) {
    let (tw, th) = (13, 7);
    let (w, h) = (19, 13);
    let texels: Vec<u8> = (0..tw * th * format.bytes() as u32)
        .map(|k| hash(k + 7777) as u8)
        .collect();
    let texture = HostSurface {
        format,
        width: tw,
        height: th,
        data: texels,
    };
    // Pitch rounds the width up to a multiple of 4: the bound for x.
    let pitch = tw.next_multiple_of(4);
    let coords: Vec<f32> = (0..w * h)
        .flat_map(|p| {
            let s = coordinate(4 * p, pitch, unscaled);
            let t = coordinate(4 * p + 1, th, unscaled);
            let a = if hash(p) & 1 == 0 { -1.0f32 } else { 1.0 };
            [f32::from_bits(s), f32::from_bits(t), 0.0, a]
        })
        .collect();
    let mut job = Job::new(w, h)
        .input(0, texture)
        .input(
            1,
            HostSurface::from_f32(Format::Float32_4, w, h, &coords).unwrap(),
        )
        .output(0, Format::Float32_4)
        .output(1, Format::Float32_4)
        .output(2, Format::Float32_4);
    job.settings_mut().threads = threads;
    let got = both(&program(unscaled), &job);
    let d = got.report.diagnostics;
    assert!(
        d.out_of_bounds_reads > 0,
        "the coordinates must leave the surface somewhere: {d:?}"
    );
}

#[test]
fn float_inputs_are_read_alike_by_both_engines() {
    for format in [Format::Float32_1, Format::Float32_2, Format::Float32_4] {
        for unscaled in [true, false] {
            check(format, unscaled, 1);
        }
    }
}

#[test]
fn unorm_inputs_and_threads_are_read_alike() {
    for format in [Format::Uint8_4, Format::Uint16_1] {
        check(format, true, 1);
        check(format, false, 2);
    }
    check(Format::Float32_4, true, 3);
}

#[test]
fn helper_lanes_reads_are_not_counted_outside_the_surface() {
    // Each pixel reads its own element (and, in rtB, its right neighbour's).
    // On an odd 5 × 3 domain the helper lanes of the edge quads read at
    // i = 5 or j = 3, outside the 5 × 3 input: not counted. The real
    // pixels' neighbour reads at i + 1 = 5 stay inside (the pitch is 8).
    let k = Kernel::assemble(
        "    alu r2.rgb = mad(s0, s1.111, s1.100) | r2.a = max.off(s0, s0) src0=r0 src1=1.0
    tex ld r1.rgba, in0.rgba, r0.rgba unscaled
    tex ld r3.rgba, in0.rgba, r2.rgba unscaled acquire wait
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1
    out rtB.rgb = max.off(s0, s0) | rtB.a = max.off(s0, s0) src0=r3 wait last",
    )
    .unwrap();
    for format in [Format::Float32_4, Format::Uint8_4] {
        let input = HostSurface::filled(format, 5, 3, 0.5);
        let job = Job::new(5, 3)
            .input(0, input)
            .output(0, Format::Float32_4)
            .output(1, Format::Float32_4);
        let got = both(&k, &job);
        assert_eq!(got.report.diagnostics.out_of_bounds_reads, 0, "{format}");
        // A row below the input: the neighbour reads at j = 3 by real pixels.
        let job = Job::new(5, 3)
            .input(0, HostSurface::filled(format, 5, 2, 0.5))
            .output(0, Format::Float32_4)
            .output(1, Format::Float32_4);
        let got = both(&k, &job);
        // Row j = 2 (5 pixels) reads outside twice each (own and neighbour).
        assert_eq!(got.report.diagnostics.out_of_bounds_reads, 10, "{format}");
    }
}

#[test]
fn lanes_skipped_by_the_conditional_unit_are_not_counted_either() {
    // Conditional execution at the PE: pairs that fail are not run and act
    // as helper lanes; their lookups (here all outside the input) are not
    // counted, on either engine or path. Only the top pair of each quad
    // (even rows, buffer 1.0 > 0.5) runs: 16 pixels, one read outside each.
    let k = Kernel::assemble(
        "    alu r2.rgb = mad(s0, s1.aaa, s1.rgb) | r2.a = max.off(s0, s0) src0=r0 src1=c0
    tex ld r1.rgba, in0.rgba, r2.rgba unscaled acquire wait
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 last",
    )
    .unwrap();
    let (w, h) = (8u32, 4u32);
    let buf: Vec<f32> = (0..w * h)
        .map(|k| if k / w % 2 == 0 { 1.0 } else { 0.0 })
        .collect();
    for format in [Format::Float32_4, Format::Uint8_4] {
        let job = Job::new(w, h)
            .input(0, HostSurface::filled(format, w, h, 0.5))
            .output(0, Format::Float32_4)
            .constant(0, [100.0, 0.0, 0.0, 1.0])
            .cond_val(0.5)
            .cond(CondSetup {
                test: CondTest::Less,
                loc: CondLoc::Pe,
                write: false,
                buffer: HostSurface::from_f32(Format::Float32_1, w, h, &buf).unwrap(),
            });
        let got = both(&k, &job);
        assert_eq!(got.report.diagnostics.out_of_bounds_reads, 16, "{format}");
    }
}

#[test]
fn one_program_switches_between_direct_reads_and_the_runtime_per_run() {
    // The clause's code reads its input itself, in narrow batches; a run
    // whose input compiled code cannot read (strict caches) takes the body
    // that asks the runtime (compiled the first time it is needed), and the
    // next coherent run goes back to direct reads, for a unorm input as
    // for a float one. Every run agrees with the interpreter.
    let k = Kernel::assemble(
        "    alu r2.rgb = mad(s0, s1.111, s1.100) | r2.a = max.off(s0, s0) src0=r0 src1=0.5
    tex ld r1.rgba, in0.rgba, r2.rgba unscaled
    tex ld r3.rgba, in0.abgr, r0.rgba unscaled acquire wait
    alu r1.rgb = mad(s0, s1.111, s2) | r1.a = mad(s0, s1.1, s2) src0=r1 src1=1.0 src2=r3 wait
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last",
    )
    .unwrap();
    // Its own code cache: what it compiles is counted below.
    let cache = ctm::CodeCache::new(4);
    let run = |format: Format, mode: CacheMode| {
        let texels: Vec<u8> = (0..17 * 9 * format.bytes() as u32)
            .map(|k| hash(k) as u8)
            .collect();
        let input = HostSurface {
            format,
            width: 17,
            height: 9,
            data: texels,
        };
        let job = Job::new(16, 8)
            .input(0, input)
            .output(0, Format::Float32_4)
            .cache_mode(mode)
            .code_cache(&cache);
        both(&k, &job).report.engine
    };
    let first = run(Format::Float32_4, CacheMode::Coherent);
    let other = run(Format::Float32_4, CacheMode::Strict);
    let again = run(Format::Float32_4, CacheMode::Coherent);
    let unorm = run(Format::Uint8_4, CacheMode::Coherent);
    if common::jit_available() {
        assert_eq!(first.general_compiled, 0, "{first:?}");
        assert_eq!(other.general_compiled, 1, "the runtime's body: {other:?}");
        assert_eq!(again.general_compiled, 0, "{again:?}");
        assert_eq!(unorm.general_compiled, 0, "{unorm:?}");
        // Code is compiled for the input's format: the unorm input's
        // program is compiled anew, and reads it in that one way.
        assert_eq!(again.compiled, 0, "{again:?}");
        assert_eq!(unorm.compiled, 1, "{unorm:?}");
        let back = run(Format::Float32_4, CacheMode::Coherent);
        assert_eq!((back.compiled, back.general_compiled), (0, 0), "{back:?}");
    }
}
