//! Loops whose bodies look inputs up, run by compiled loop regions (lock
//! step and lane-wise): each pixel walks its input from (i, j) by a step,
//! summing texels until the sum passes a threshold (a break at a different
//! iteration per lane) or the count runs out. Lookups leave the surface,
//! helper lanes and lanes that broke must not be counted outside it, and
//! every format's conversion must be the memory controller's: results and
//! counters are the interpreter's. Where an input has no descriptor
//! (strict caches), the shim runs the loop.

use crate::common;

use ctm::kernel::{HostSurface, Job, Kernel};
use ctm::mc::{CacheMode, Format};

const PROGRAM: &str = "
    alu r1.rgb = max.off(s0, s0) | r1.a = max.off(s0, s0) src0=0.0
    alu r2.rgb = max.off(s0, s0) | r2.a = max.off(s0, s0) src0=r0
    LOOP i0 -> done
body:
    tex ld r3.rgba, in0.rgba, r2.rgba unscaled acquire wait
    alu r1.rgb = mad(s0, s1.111, s2) | r1.a = mad(s0, s1.1, s2) src0=r3 src1=1.0 src2=r1 wait
    alu r2.rgb = mad(s0, s1.111, s2) | r2.a = mad(s0, s1.1, s2) src0=r2 src1=1.0 src2=c0
    alu _ = mad(s0, s1.111, -s2) | _ = mad(s0, s1.1, -s2) src0=r1 src1=1.0 src2=c1 res=r>=0
    BREAKLOOP alu_result != 0 -> done
    ENDLOOP i0 -> body
done:
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1
    out rtB.rgb = max.off(s0, s0) | rtB.a = max.off(s0, s0) src0=r2 wait last
";

/// A deterministic pseudo-random byte.
fn byte(k: u32) -> u8 {
    let x = k.wrapping_mul(0x9E37_79B9) ^ 0x5bd1_e995;
    (x ^ (x >> 15)).wrapping_mul(0x2c1b_3c6d).to_le_bytes()[3]
}

/// Input 0: 21 × 11 elements of `format`; float texels in [0, 1) with a
/// NaN and an infinity among them, unorm ones any bytes.
fn input(format: Format) -> HostSurface {
    let (w, h) = (21, 11);
    match format {
        Format::Uint8_4 | Format::Uint16_1 => HostSurface {
            format,
            width: w,
            height: h,
            data: (0..w * h * format.bytes() as u32).map(byte).collect(),
        },
        _ => {
            let n = (w * h) as usize * format.channels();
            let values: Vec<f32> = (0..n)
                .map(|k| match k % 97 {
                    13 => f32::NAN,
                    40 => f32::INFINITY,
                    _ => f32::from(byte(k as u32)) / 256.0,
                })
                .collect();
            HostSurface::from_f32(format, w, h, &values).unwrap()
        }
    }
}

fn job(format: Format, step: [f32; 4], threshold: f32, mode: CacheMode) -> Job {
    Job::new(37, 23)
        .input(0, input(format))
        .int(0, 12, 0, 1)
        .constant(0, step)
        .constant(1, [threshold; 4])
        .output(0, Format::Float32_4)
        .output(1, Format::Float32_4)
        .cache_mode(mode)
}

#[test]
fn loops_that_look_up_agree_with_the_interpreter() {
    let k = Kernel::assemble(PROGRAM).unwrap();
    let steps = [
        [1.0, 0.0, 0.0, 0.0],
        [-1.0, 0.5, 0.0, 0.0],
        [0.0, 0.0, 0.0, 0.0],
    ];
    for format in Format::ALL {
        for (n, step) in steps.into_iter().enumerate() {
            for threshold in [2.5, 1e9] {
                let job = job(format, step, threshold, CacheMode::Coherent).threads(1 + n % 2);
                let got = common::both(&k, &job);
                let (e, d) = (&got.report.engine, &got.report.diagnostics);
                if common::jit_available() {
                    assert!(e.lanewise_runs > 0, "{format} {step:?}: {e:?}");
                }
                if step[0] != 0.0 {
                    assert!(d.out_of_bounds_reads > 0, "{format} {step:?}: {d:?}");
                }
            }
        }
    }
}

#[test]
fn loops_that_are_not_lane_wise_look_up_in_lock_step() {
    // A CONTINUE before the sum: lanes wait for the ENDLOOP, so the region
    // runs in lock step, its clauses' lookups under the lanes' masks.
    let src = PROGRAM.replace(
        "    alu r1.rgb = mad(s0, s1.111, s2) | r1.a = mad(s0, s1.1, s2) src0=r3 src1=1.0 src2=r1 wait",
        "    alu _ = max.off(s0, s0) | _ = max.off(s0, s0) src0=r3 res=r<0 wait
    CONTINUE alu_result != 0 -> next
    alu r1.rgb = mad(s0, s1.111, s2) | r1.a = mad(s0, s1.1, s2) src0=r3 src1=1.0 src2=r1
next:",
    );
    let k = Kernel::assemble(&src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    for format in [Format::Float32_1, Format::Uint8_4] {
        let job = job(format, [1.0, -0.5, 0.0, 0.0], 2.5, CacheMode::Coherent);
        let got = common::both(&k, &job);
        let e = &got.report.engine;
        if common::jit_available() {
            assert!(e.loop_runs > 0 && e.lanewise_runs == 0, "{format}: {e:?}");
        }
    }
}

#[test]
fn without_descriptors_the_shim_runs_the_loop() {
    let k = Kernel::assemble(PROGRAM).unwrap();
    let job = job(
        Format::Float32_4,
        [1.0, 0.0, 0.0, 0.0],
        2.5,
        CacheMode::Strict,
    );
    let got = common::both(&k, &job);
    if common::jit_available() {
        assert_eq!(
            got.report.engine.lanewise_runs, 0,
            "{:?}",
            got.report.engine
        );
    }
}
