//! The 2×2 gather (`docs/isa.md` §5.4) on both engines: a one-channel input
//! with the gather bit set returns channel 0 of (x+1, y), (x, y+1),
//! (x+1, y+1) and (x, y), each inside the surface or zero and counted. The
//! JIT reads it from memory in a body compiled for it the first time a run
//! binds one; the channels and out-of-bounds counts must be the
//! interpreter's for every kind of coordinate, scaled and unscaled, in
//! full groups and under divergent flow control, on linear and tiled
//! surfaces.

use super::{SYS, device_with, f32s};
use ctm::engine::EngineKind;
use ctm::mc::{CacheMode, Format, SurfaceFormat};
use ctm::pe::{Command as Cmd, CommandBuffer};
use ctm::runtime::Domain;

/// Looks input 0 up at the coordinates input 1 holds for the pixel, for
/// every lane (rtA) and where the coordinates' alpha is negative (rtB).
fn program(unscaled: bool) -> String {
    let u = if unscaled { "unscaled" } else { "" };
    format!(
        "    tex ld r1.rgba, in1.rgba, r0.rgba unscaled acquire wait
    tex ld r2.rgba, in0.rgba, r1.rgba {u} acquire wait
    alu _ = max.off(s0, s0) | _ = max.off(s0, s0) src0=r1 res=a<0 wait
    IF alu_result == 0 -> skip jump=incr
    tex ld r3.rgba, in0.rgba, r1.rgba {u} acquire wait
    ENDIF
skip:
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r2
    out rtB.rgb = max.off(s0, s0) | rtB.a = max.off(s0, s0) src0=r3 wait last"
    )
}

/// A deterministic pseudo-random word.
fn hash(k: u32) -> u32 {
    let mut x = k.wrapping_mul(0x9E37_79B9) ^ 0x5bd1_e995;
    x ^= x >> 15;
    x = x.wrapping_mul(0x2c1b_3c6d);
    x ^ (x >> 12)
}

/// A coordinate for a surface of `size` texels: special patterns (NaN,
/// infinities, denormals, huge values, the edges), else a value around the
/// surface.
fn coordinate(k: u32, size: u32, unscaled: bool) -> f32 {
    let specials = [
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        1e-40,
        -1e-40,
        -0.0,
        -1.0,
        -0.5,
        -1.5,
        3e9,
        -3e9,
        -2147483520.0,
        size as f32 - 1.0,
        size as f32 - 0.5,
        size as f32,
    ];
    let h = hash(k);
    if h.is_multiple_of(5) {
        return specials[(h / 5) as usize % specials.len()];
    }
    let t = (h >> 8) as f32 / (1 << 24) as f32 * 1.4 - 0.2;
    if unscaled { t * size as f32 } else { t }
}

/// Runs `program` over 19 × 13 on `engine`: the outputs' bytes and the
/// out-of-bounds reads; panics where a clause fell back to the
/// interpreter (compiled code failing to compile, say).
fn run(
    engine: EngineKind,
    format: Format,
    (unscaled, tiled): (bool, bool),
    threads: usize,
) -> (Vec<u8>, u64) {
    let (tw, th, w, h) = (13, 7, 19, 13);
    let (mut dev, prog) = device_with(&program(unscaled), engine, CacheMode::Coherent, threads);
    let fmt = SurfaceFormat {
        gather: true,
        tiled,
        ..SurfaceFormat::linear(format, tw)
    };
    let texels: Vec<u8> = (0..fmt.pitch * th * format.bytes() as u32)
        .map(|k| hash(k + 99) as u8)
        .collect();
    let tex = dev.alloc(SYS, texels.len()).unwrap();
    dev.write(tex, &texels).unwrap();
    let (pitch, height) = (fmt.pitch, th);
    let coords: Vec<u8> = (0..w * h)
        .flat_map(|p| {
            let a = if hash(p) & 1 == 0 { -1.0f32 } else { 1.0 };
            [
                coordinate(4 * p, pitch, unscaled),
                coordinate(4 * p + 1, height, unscaled),
                0.0,
                a,
            ]
        })
        .flat_map(f32::to_le_bytes)
        .collect();
    let f4 = SurfaceFormat::linear(Format::Float32_4, w);
    let cin = dev.alloc(SYS, coords.len()).unwrap();
    dev.write(cin, &coords).unwrap();
    let outs = [0, 1].map(|_| dev.alloc(SYS, (f4.pitch * h * 16) as usize).unwrap());
    let mut cb = CommandBuffer::new();
    cb.push(Cmd::SetInstFmt {
        base: prog,
        fmt: f4,
    })
    .push(Cmd::SetInpFmt {
        input: 0,
        base: tex,
        fmt,
        height: th,
    })
    .push(Cmd::SetInpFmt {
        input: 1,
        base: cin,
        fmt: f4,
        height: h,
    });
    for (k, &base) in outs.iter().enumerate() {
        cb.push(Cmd::SetOutFmt {
            output: k as u8,
            base,
            fmt: f4,
            height: h,
        });
    }
    cb.push(Cmd::SetDomain(Domain::new(w, h)))
        .push(Cmd::StartProgram);
    let id = dev.submit_commands(&cb).unwrap();
    let report = dev.wait(id).unwrap();
    let mut bytes = vec![0u8; 2 * (f4.pitch * h * 16) as usize];
    let half = bytes.len() / 2;
    dev.read(outs[0], &mut bytes[..half]).unwrap();
    dev.read(outs[1], &mut bytes[half..]).unwrap();
    let what = format!("{format}, unscaled {unscaled}, tiled {tiled}");
    crate::assert_native(engine, &report.runs[0], &what);
    (bytes, report.runs[0].diagnostics.out_of_bounds_reads)
}

#[test]
fn one_channel_gathers_read_alike_on_both_engines() {
    for format in [Format::Float32_1, Format::Uint16_1] {
        for (unscaled, tiled, threads) in [(true, false, 1), (false, true, 2), (true, true, 3)] {
            let want = run(EngineKind::Interp, format, (unscaled, tiled), threads);
            assert!(
                want.1 > 0,
                "the coordinates must leave the surface somewhere"
            );
            if !crate::common::jit_available() {
                continue;
            }
            let got = run(EngineKind::Jit, format, (unscaled, tiled), threads);
            if got != want {
                let (a, b) = (f32s(&want.0), f32s(&got.0));
                let at = a
                    .iter()
                    .zip(&b)
                    .position(|(x, y)| x.to_bits() != y.to_bits());
                panic!(
                    "{format}, unscaled {unscaled}: out of bounds {} vs {}; first difference at word {at:?}: {:?} vs {:?}",
                    want.1,
                    got.1,
                    at.map(|k| a[k]),
                    at.map(|k| b[k])
                );
            }
        }
    }
}
