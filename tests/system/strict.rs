//! Strict caches and lookups read by compiled code: where the input cache
//! holds every line of an input when a run starts, the JIT reads a copy of
//! those lines itself (a lookup through the cache would return the same
//! bytes and fill nothing); otherwise the runtime reads through the cache.
//! Either way a stream that forgets `inv_inp_cache` reads stale data, on
//! both engines alike.

use super::{SYS, device_with, f32s};
use ctm::device::Device;
use ctm::engine::EngineKind;
use ctm::mc::{CacheMode, Format, SurfaceFormat};
use ctm::pe::{Command as Cmd, CommandBuffer};
use ctm::runtime::Domain;

/// Each pixel sums input 0 at (i, j) and at (i + 1, j): lanes at the last
/// column read outside the surface.
const SUM: &str = "
    alu r2.rgb = mad(s0, s1.111, s1.100) | r2.a = max.off(s0, s0) src0=r0 src1=1.0
    tex ld r1.rgba, in0.rgba, r0.rgba unscaled
    tex ld r3.rgba, in0.rgba, r2.rgba unscaled acquire wait
    alu r1.rgb = mad(s0, s1.111, s2) | r1.a = mad(s0, s1.1, s2) src0=r1 src1=1.0 src2=r3 wait
    out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r1 wait last";

/// Three runs on a strict device with `engine`: the first reads input 0
/// through the cache, the host then rewrites the input without
/// invalidating (the second run reads the stale lines), then invalidates
/// (the third reads the new data). The output after each, and the reads
/// outside the surface in all.
fn runs(engine: EngineKind, format: Format) -> (Vec<Vec<f32>>, u64) {
    let (w, h) = (40, 9);
    let (mut dev, prog) = device_with(SUM, engine, CacheMode::Strict, 2);
    let fmt = SurfaceFormat::linear(format, w);
    let n = (fmt.pitch * h) as usize * format.bytes();
    let inp = dev.alloc(SYS, n).unwrap();
    dev.write(inp, &(0..n).map(|k| (k * 7) as u8).collect::<Vec<_>>())
        .unwrap();
    let f4 = SurfaceFormat::linear(Format::Float32_4, w);
    let out = dev.alloc(SYS, (f4.pitch * h * 16) as usize).unwrap();
    let mut cb = CommandBuffer::new();
    cb.push(Cmd::SetInstFmt {
        base: prog,
        fmt: f4,
    })
    .push(Cmd::SetInpFmt {
        input: 0,
        base: inp,
        fmt,
        height: h,
    })
    .push(Cmd::SetOutFmt {
        output: 0,
        base: out,
        fmt: f4,
        height: h,
    })
    .push(Cmd::SetDomain(Domain::new(w, h)))
    .push(Cmd::StartProgram)
    .push(Cmd::FlushOutCache);
    let mut results = Vec::new();
    let mut outside = 0;
    let mut run = |dev: &mut Device, cb: &CommandBuffer| {
        let id = dev.submit_commands(cb).unwrap();
        let r = dev.wait(id).unwrap();
        crate::assert_native(engine, &r.runs[0], &format!("strict caches, {format}"));
        outside += r.runs[0].diagnostics.out_of_bounds_reads;
        let mut b = vec![0u8; (f4.pitch * h * 16) as usize];
        dev.read(out, &mut b).unwrap();
        results.push(f32s(&b));
    };
    run(&mut dev, &cb);
    dev.write(inp, &(0..n).map(|k| (k * 13 + 5) as u8).collect::<Vec<_>>())
        .unwrap();
    let mut again = CommandBuffer::new();
    again.push(Cmd::StartProgram).push(Cmd::FlushOutCache);
    run(&mut dev, &again);
    let mut fresh = CommandBuffer::new();
    fresh
        .push(Cmd::InvInpCache)
        .push(Cmd::StartProgram)
        .push(Cmd::FlushOutCache);
    run(&mut dev, &fresh);
    (results, outside)
}

#[test]
fn stale_lines_read_alike_whoever_reads_them() {
    for format in [Format::Float32_4, Format::Float32_1, Format::Uint8_4] {
        let want = runs(EngineKind::Interp, format);
        let same = |a: &[f32], b: &[f32]| {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
        };
        assert!(
            same(&want.0[0], &want.0[1]),
            "{format}: the second run reads stale lines"
        );
        assert!(
            !same(&want.0[1], &want.0[2]),
            "{format}: the third reads new data"
        );
        assert!(want.1 > 0);
        if !crate::common::jit_available() {
            continue;
        }
        let got = runs(EngineKind::Jit, format);
        assert_eq!(got.1, want.1, "{format}: reads outside the surface");
        for (k, (a, b)) in want.0.iter().zip(&got.0).enumerate() {
            assert!(same(a, b), "{format}: run {k} differs");
        }
    }
}
