//! Every bundled example kernel, run on the emulated device, checked against
//! a plain Rust computation of the same thing (bit for bit where the kernel's
//! arithmetic order is fixed).

use crate::common;

use common::both;
use ctm_tools::bench::suite::noise;
use std::path::Path;

use ctm::co::{CondLoc, CondTest};
use ctm::device::{Device, DeviceConfig};
use ctm::engine::EngineKind;
use ctm::kernel::{HostSurface, Job, Kernel};
use ctm::mc::{ArenaKind, Format, SurfaceFormat};
use ctm::pe::{Command as Cmd, CommandBuffer};
use ctm::runtime::Domain;

fn example(name: &str) -> Kernel {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(name);
    Kernel::new(ctm::program::load(&path, false).unwrap().exe)
}

fn with_threads(job: Job, threads: usize) -> Job {
    let mut job = job;
    job.settings_mut().threads = threads;
    job
}

#[test]
fn saxpy() {
    let (w, h) = (37, 11);
    let x: Vec<f32> = (0..w * h * 4).map(|k| noise(k) * 8.0 - 4.0).collect();
    let y: Vec<f32> = (0..w * h * 4).map(|k| noise(k + 99_999)).collect();
    let a = 1.75f32;
    let job = Job::new(w, h)
        .input(
            0,
            HostSurface::from_f32(Format::Float32_4, w, h, &x).unwrap(),
        )
        .input(
            1,
            HostSurface::from_f32(Format::Float32_4, w, h, &y).unwrap(),
        )
        .constant(0, [a; 4])
        .output(0, Format::Float32_4);
    let out = both(&example("saxpy.s"), &job);
    let want: Vec<f32> = x.iter().zip(&y).map(|(x, y)| a * x + y).collect();
    assert_eq!(out.output(0).unwrap().to_f32(), want);
}

fn conv_reference(img: &[f32], w: u32, h: u32, taps: &[(i32, i32, f32)]) -> Vec<f32> {
    let at = |x: i32, y: i32| {
        if x < 0 || y < 0 || x >= w as i32 || y >= h as i32 {
            0.0
        } else {
            img[(y as u32 * w + x as u32) as usize]
        }
    };
    let mut out = Vec::new();
    for j in 0..h as i32 {
        for i in 0..w as i32 {
            let mut acc = 0.0f32;
            for &(dx, dy, wt) in taps {
                acc += at(i + dx, j + dy) * wt;
            }
            out.push(acc);
        }
    }
    out
}

#[test]
fn convolution_3x3() {
    let (w, h) = (29, 17);
    let img: Vec<f32> = (0..w * h).map(noise).collect();
    let weights = [1.0, 2.0, 1.0, 2.0, 4.0, 2.0, 1.0, 2.0, 1.0].map(|x: f32| x / 16.0);
    let mut taps = Vec::new();
    let mut job = Job::new(w, h)
        .input(
            0,
            HostSurface::from_f32(Format::Float32_1, w, h, &img).unwrap(),
        )
        .int(0, 9, 0, 1)
        .output(0, Format::Float32_1);
    for (k, &wt) in weights.iter().enumerate() {
        let (dx, dy) = (k as i32 % 3 - 1, k as i32 / 3 - 1);
        taps.push((dx, dy, wt));
        job = job
            .constant(k as u8, [dx as f32, dy as f32, 0.0, 0.0])
            .constant(9 + k as u8, [wt; 4]);
    }
    let out = both(&example("conv3x3.s"), &with_threads(job, 2));
    assert_eq!(
        out.output(0).unwrap().to_f32(),
        conv_reference(&img, w, h, &taps)
    );
}

#[test]
fn matrix_multiply() {
    let (m, k, n) = (13u32, 21u32, 9u32);
    let a: Vec<f32> = (0..m * k).map(|x| noise(x) - 0.5).collect(); // k columns, m rows
    let b: Vec<f32> = (0..k * n).map(|x| noise(x + 7777) * 2.0).collect(); // n columns, k rows
    let mut job = Job::new(n, m)
        .input(
            0,
            HostSurface::from_f32(Format::Float32_1, k, m, &a).unwrap(),
        )
        .input(
            1,
            HostSurface::from_f32(Format::Float32_1, n, k, &b).unwrap(),
        )
        .int(0, k as u8, 0, 1)
        .output(0, Format::Float32_1);
    for kk in 0..k as usize {
        job = job.constant(kk as u8, [kk as f32; 4]);
    }
    let out = both(&example("matmul.s"), &job);
    let mut want = Vec::new();
    for row in 0..m {
        for col in 0..n {
            let mut acc = 0.0f32;
            for kk in 0..k {
                acc += a[(row * k + kk) as usize] * b[(kk * n + col) as usize];
            }
            want.push(acc);
        }
    }
    assert_eq!(out.output(0).unwrap().to_f32(), want);
}

struct View {
    w: u32,
    h: u32,
    step: (f32, f32),
    corner: (f32, f32),
    palette: [f32; 3],
    iterations: u8,
}

fn mandelbrot_reference(v: &View) -> Vec<f32> {
    let mut out = Vec::new();
    for j in 0..v.h {
        for i in 0..v.w {
            let cx = i as f32 * v.step.0 + v.corner.0;
            let cy = j as f32 * v.step.1 + v.corner.1;
            let (mut zx, mut zy, mut n) = (0.0f32, 0.0f32, 0.0f32);
            for _ in 0..v.iterations {
                let (xx, yy, xy) = (zx * zx, zy * zy, zx * zy);
                if (xx + yy) - 4.0 >= 0.0 {
                    break;
                }
                zx = (xx + cx) - yy;
                zy = xy * 2.0 + cy;
                n += 1.0;
            }
            for p in v.palette {
                let t = n * p;
                out.push(t - t.floor());
            }
            out.push(1.0);
        }
    }
    out
}

fn mandelbrot_job(v: &View) -> Job {
    Job::new(v.w, v.h)
        .constant(0, [v.step.0, v.step.1, 0.0, 0.0])
        .constant(1, [v.corner.0, v.corner.1, 0.0, 0.0])
        .constant(2, [v.palette[0], v.palette[1], v.palette[2], 0.0])
        .int(0, v.iterations, 0, 0)
        .output(0, Format::Float32_4)
}

const VIEW: View = View {
    w: 48,
    h: 32,
    step: (0.0625, 0.078125),
    corner: (-2.25, -1.25),
    palette: [0.031, 0.047, 0.071],
    iterations: 40,
};

#[test]
fn mandelbrot_same_on_one_and_two_threads() {
    let want = mandelbrot_reference(&VIEW);
    for threads in [1, 2] {
        let out = both(
            &example("mandelbrot.s"),
            &with_threads(mandelbrot_job(&VIEW), threads),
        );
        assert_eq!(out.output(0).unwrap().to_f32(), want, "{threads} threads");
        assert_eq!(out.report.pixels, 48 * 32);
    }
}

/// Draws planes with the z-buffer kernel in one command stream: the colour of
/// the nearest plane wins at each pixel and the buffer keeps the minimum.
#[test]
fn zbuffer_min_with_the_conditional_unit() {
    zbuffer_draws(EngineKind::Interp);
    if common::jit_available() {
        zbuffer_draws(EngineKind::Jit);
    }
}

fn zbuffer_draws(engine: EngineKind) {
    let (w, h) = (24u32, 16u32);
    let planes: [([f32; 2], f32, [f32; 4]); 3] = [
        ([0.01, 0.0], 0.3, [1.0, 0.0, 0.0, 1.0]),
        ([-0.01, 0.02], 0.4, [0.0, 1.0, 0.0, 1.0]),
        ([0.0, -0.015], 0.45, [0.0, 0.0, 1.0, 1.0]),
    ];
    let exe = example("zbuffer.s").exe;
    let mut dev = Device::open(DeviceConfig::default()).unwrap();
    dev.set_engine(engine).unwrap();
    // Its own code cache: what it compiles is counted below.
    dev.settings_mut().code_cache = Some(ctm::CodeCache::new(4));
    let arena = ArenaKind::SystemCached;
    let prog = dev.alloc(arena, exe.code.len() * 4).unwrap();
    dev.load_program(&exe, prog).unwrap();
    let fmt1 = SurfaceFormat::linear(Format::Float32_1, w);
    let fmt4 = SurfaceFormat::linear(Format::Float32_4, w);
    let depth = dev.alloc(arena, (fmt1.pitch * h * 4) as usize).unwrap();
    let color = dev.alloc(arena, (fmt4.pitch * h * 16) as usize).unwrap();
    let ones: Vec<u8> = (0..fmt1.pitch * h)
        .flat_map(|_| 1.0f32.to_le_bytes())
        .collect();
    dev.write(depth, &ones).unwrap();
    let mut cb = CommandBuffer::new();
    cb.push(Cmd::SetInstFmt {
        base: prog,
        fmt: fmt1,
    })
    .push(Cmd::SetOutFmt {
        output: 0,
        base: color,
        fmt: fmt4,
        height: h,
    })
    .push(Cmd::SetCondOutFmt {
        base: depth,
        fmt: fmt1,
        height: h,
    })
    .push(Cmd::SetCondTest(CondTest::Less))
    .push(Cmd::SetCondLoc(CondLoc::Dpp))
    .push(Cmd::SetCondOutMask(true))
    .push(Cmd::SetDomain(Domain::new(w, h)));
    for (ab, d, rgba) in &planes {
        let consts = dev.alloc(arena, 48).unwrap();
        let words: Vec<f32> = [ab[0], ab[1], 0.0, 0.0, *d, *d, *d, *d]
            .into_iter()
            .chain(rgba.iter().copied())
            .collect();
        let bytes: Vec<u8> = words.iter().flat_map(|f| f.to_le_bytes()).collect();
        dev.write(consts, &bytes).unwrap();
        cb.push(Cmd::SetConstfFmt {
            base: consts,
            fmt: fmt1,
        })
        .push(Cmd::InvConstfCache)
        .push(Cmd::StartProgram);
    }
    cb.push(Cmd::FlushOutCache).push(Cmd::FlushCondOutCache);
    let id = dev.submit_commands(&cb).unwrap();
    let report = dev.wait(id).unwrap();
    assert_eq!(report.runs.len(), 3);
    if engine == EngineKind::Jit {
        for r in &report.runs {
            assert!(r.engine.native_runs > 0, "{:?}", r.engine);
            assert_eq!(r.engine.fallback_clauses + r.engine.fallback_runs, 0);
        }
        // One compilation for three draws of the same program.
        let compiled: u64 = report.runs.iter().map(|r| r.engine.compiled).sum();
        assert!(compiled <= 1, "compiled {compiled} times");
    }
    let discarded: u64 = report.runs.iter().map(|r| r.discarded).sum();
    assert!(discarded > 0, "some draws lose the depth test");
    for j in 0..h {
        for i in 0..w {
            let mut best = (1.0f32, [0.0f32; 4]);
            for (ab, d, rgba) in &planes {
                let z = j as f32 * ab[1] + (i as f32 * ab[0] + d);
                if z < best.0 {
                    best = (z, *rgba);
                }
            }
            let mut b = [0u8; 4];
            dev.read(depth + (j * fmt1.pitch + i) * 4, &mut b).unwrap();
            assert_eq!(f32::from_le_bytes(b), best.0, "depth at ({i}, {j})");
            let mut c = [0u8; 16];
            dev.read(color + (j * fmt4.pitch + i) * 16, &mut c).unwrap();
            let c: Vec<f32> = c
                .chunks(4)
                .map(|x| f32::from_le_bytes(x.try_into().unwrap()))
                .collect();
            assert_eq!(c, best.1, "colour at ({i}, {j})");
        }
    }
}

#[test]
fn zbuffer_one_layer_through_kernel_run() {
    let (w, h) = (8u32, 8u32);
    let out = both(&example("zbuffer.s"), &common::zbuffer_job(w, h));
    let depth = out.cond.as_ref().unwrap().to_f32();
    let color = out.output(0).unwrap().to_f32();
    for j in 0..h {
        for i in 0..w {
            let z = i as f32 * 0.1;
            let k = (j * w + i) as usize;
            assert_eq!(depth[k], z.min(0.5), "({i}, {j})");
            assert_eq!(color[4 * k], if z < 0.5 { 1.0 } else { 0.0 }, "({i}, {j})");
        }
    }
    assert_eq!(out.report.discarded, 3 * 8);
}

#[test]
fn scatter_transposes_with_uncached_writes() {
    let n = 20u32;
    let img: Vec<f32> = (0..n * n).map(|k| noise(k) * 100.0).collect();
    let job = Job::new(n, n)
        .input(
            0,
            HostSurface::from_f32(Format::Float32_1, n, n, &img).unwrap(),
        )
        .output(0, Format::Float32_1);
    for threads in [1, 2] {
        let out = both(&example("scatter.s"), &with_threads(job.clone(), threads));
        let got = out.output(0).unwrap().to_f32();
        for y in 0..n {
            for x in 0..n {
                assert_eq!(
                    got[(y * n + x) as usize],
                    img[(x * n + y) as usize],
                    "({x}, {y})"
                );
            }
        }
    }
}

#[test]
fn binding_by_name_refuses_unknown_names_and_wrong_kinds() {
    let k = Kernel::from_bytes(
        b"ps_3_0\ndcl_texcoord0 v0\ndcl_2d s0\ntexld r0, v0, s0\nmul oC0, r0, c3\n",
    )
    .unwrap();
    let s = HostSurface::from_f32(Format::Float32_4, 1, 1, &[1.0; 4]).unwrap();
    let e = k
        .bind(Job::new(1, 1), "v7", s.clone())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("`v7` names nothing") && e.contains("v0") && e.contains("s0"),
        "{e}"
    );
    let e = k
        .bind(Job::new(1, 1), "oC0", s.clone())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("takes an output format") && e.contains("not a surface"),
        "{e}"
    );
    let e = k.bind(Job::new(1, 1), "c3", true).unwrap_err().to_string();
    assert!(e.contains("takes four floats"), "{e}");
    // Machine names work too, and a sampler takes a surface.
    let job = k.bind(Job::new(1, 1), "s0", s.clone()).unwrap();
    let job = k.bind(job, "in0", s).unwrap();
    let job = k.bind(job, "c3", [2.0; 4]).unwrap();
    let job = k.bind(job, "out0", Format::Float32_4).unwrap();
    assert!(k.check(&job).is_ok());
    // Garbage bytes are a load error, not a panic.
    assert!(Kernel::from_bytes(b"\x7fELF garbage").is_err());
}

/// Horner's loop reads c[aL+0] with aL = 3, 2, 1, 0 from the host's i0:
/// every constant it reaches is checked, not only its base c0.
#[test]
fn relative_reads_are_checked_over_the_loop_the_host_sets() {
    use ctm::kernel::JobWarning;
    let k = example("horner.s");
    let job = |ints: (u8, u8, i8)| {
        Job::new(4, 4)
            .input(0, HostSurface::zeroed(Format::Float32_4, 4, 4))
            .output(0, Format::Float32_4)
            .int(0, ints.0, ints.1, ints.2)
            .constant(0, [1.0; 4])
            .constant(1, [1.0; 4])
            .constant(2, [1.0; 4])
    };
    assert_eq!(
        k.check(&job((4, 3, -1))).unwrap(),
        [JobWarning::UnsetConst(3)]
    );
    // Two iterations from aL = 1: c1, c0, all set.
    assert_eq!(k.check(&job((2, 1, -1))).unwrap(), []);
    // aL = 5, 7: c5 and c7; c0 itself is never read.
    assert_eq!(
        k.check(&job((2, 5, 2))).unwrap(),
        [JobWarning::UnsetConst(5), JobWarning::UnsetConst(7)]
    );
    // A loop that wraps: aL = 254, 255, 0 + 2 reads c254, c255, c0.
    let w = k.check(&job((3, 254, 1))).unwrap();
    assert_eq!(
        w,
        [JobWarning::UnsetConst(254), JobWarning::UnsetConst(255)]
    );
}
