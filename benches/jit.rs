//! JIT against interpreter against plain Rust, on the bundled examples and on
//! four synthetic kernels (ALU-bound MAD chain, texture-bound, divergent
//! branches, a one-instruction program), plus compile time, 1 → N thread
//! scaling and the share of the measured F32X4 FMA peak.
//!
//! `cargo bench --bench jit` prints a Markdown table (the README's). Rates
//! are pixel-instructions per second; "native" is a plain Rust version of
//! the same kernel built with the bench profile (rustc -O), timed over the
//! same domain and expressed in the same unit (the DPP program's
//! pixel-instruction count divided by the native time), so `jit / native` is
//! a ratio of wall times. Every JIT result is checked against the
//! interpreter before it is timed.

use ctm::bench::{BenchOptions, BenchReport, measure};
use ctm::kernel::{HostSurface, Job, Kernel};
use ctm::mc::Format;
use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

fn kernel(path: &str) -> Kernel {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    Kernel::new(ctm::program::load(&p, false).expect("bench program").exe)
}

fn noise(k: u32) -> f32 {
    let mut x = k.wrapping_mul(0x9E37_79B9) ^ 0x5bd1_e995;
    x ^= x >> 15;
    x = x.wrapping_mul(0x2c1b_3c6d);
    x ^= x >> 12;
    (x >> 8) as f32 / (1 << 24) as f32
}

/// Best wall time of `f` over `n` runs.
fn best(n: usize, mut f: impl FnMut()) -> f64 {
    (0..n)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// MAD chain in Rust: eight registers, 8 + 56 MADs (`mad(a, b, c)`), four
/// channels, per pixel — the operations of `benches/kernels/madchain.s`, in
/// its order.
#[inline(always)]
fn madchain(
    w: u32,
    h: u32,
    [c0, c1, c2]: [[f32; 4]; 3],
    mad: impl Fn(f32, f32, f32) -> f32,
) -> f32 {
    let mut acc = 0.0;
    for j in 0..h {
        for i in 0..w {
            let r0 = [i as f32, j as f32, 0.0, 1.0];
            let mut r = [[0f32; 4]; 8];
            for reg in r.iter_mut() {
                for c in 0..4 {
                    reg[c] = mad(r0[c], c2[c], c1[c]);
                }
            }
            for _ in 0..7 {
                for reg in r.iter_mut() {
                    for c in 0..4 {
                        reg[c] = mad(reg[c], c0[c], c1[c]);
                    }
                }
            }
            // Every register and channel is observed (as outputs would be).
            acc += r.iter().flatten().sum::<f32>();
        }
    }
    acc
}

/// Mandelbrot escape counts in scalar Rust, as `examples/mandelbrot.s`.
fn native_mandelbrot(w: u32, h: u32, n: u32) -> f32 {
    let mut acc = 0.0;
    for j in 0..h {
        for i in 0..w {
            let (cx, cy) = (
                i as f32 * 0.003_906_25 - 2.25,
                j as f32 * 0.004_882_812_5 - 1.25,
            );
            let (mut zx, mut zy, mut k) = (0f32, 0f32, 0f32);
            for _ in 0..n {
                let (x2, y2) = (zx * zx, zy * zy);
                if x2 + y2 >= 4.0 {
                    break;
                }
                let xy = zx * zy;
                zx = x2 + cx - y2;
                zy = 2.0 * xy + cy;
                k += 1.0;
            }
            acc += (k * 0.031).fract();
        }
    }
    acc
}

/// The DPP's result rule in plain Rust: NaN standardised, denormals
/// flushed to signed zero.
#[inline(always)]
fn canon(x: f32) -> f32 {
    if x.is_nan() {
        f32::from_bits(ctm_jit::fp::STD_NAN)
    } else if x.is_subnormal() {
        0.0f32.copysign(x)
    } else {
        x
    }
}

/// The DPP's MAD in plain Rust: separately rounded multiply and add, then
/// the result rule (operands here are always canonical already).
#[inline(always)]
fn mad(a: f32, b: f32, c: f32) -> f32 {
    canon(a * b + c)
}

/// Mandelbrot with the DPP's rules, instruction for instruction as
/// `examples/mandelbrot.s`.
fn exact_mandelbrot(w: u32, h: u32, n: u32) -> f32 {
    let (c0, c1, c2) = (
        [0.003_906_25f32, 0.004_882_812_5],
        [-2.25f32, -1.25],
        0.031f32,
    );
    let mut acc = 0.0;
    for j in 0..h {
        for i in 0..w {
            let (cx, cy) = (mad(i as f32, c0[0], c1[0]), mad(j as f32, c0[1], c1[1]));
            let (mut zx, mut zy, mut k) = (0f32, 0f32, 0f32);
            for _ in 0..n {
                let (x2, y2, xy) = (mad(zx, zx, 0.0), mad(zy, zy, 0.0), mad(zx, zy, 0.0));
                let m = mad(x2, 1.0, y2);
                if mad(m, 1.0, -4.0) >= 0.0 {
                    break;
                }
                let (ax, ay) = (mad(x2, 1.0, cx), mad(xy, 2.0, cy));
                zx = mad(-y2, 1.0, ax);
                zy = mad(-0.0, 1.0, ay);
                k = mad(1.0, 1.0, k);
            }
            let s = mad(k, c2, 0.0);
            acc += canon(s - s.floor());
        }
    }
    acc
}

/// SAXPY in Rust.
fn native_saxpy(x: &[f32], y: &[f32], a: f32) -> Vec<f32> {
    x.iter().zip(y).map(|(x, y)| a * x + y).collect()
}

struct Row {
    name: &'static str,
    report: BenchReport,
    /// Wall time of the plain Rust version and of the exact one (DPP rules).
    native_s: Option<f64>,
    exact_s: Option<f64>,
    /// Pixels of the domain.
    pixels: u64,
}

fn main() {
    // `cargo test` runs benches with --bench absent: keep that instant.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    if let Err(e) = ctm_jit::host::check_features() {
        eprintln!("{e}");
        return;
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let opts = BenchOptions {
        repeat: 3,
        threads,
        peak_iterations: 0,
        ..BenchOptions::default()
    };
    let mut rows = Vec::new();
    let mut add = |name, k: &Kernel, job: &Job, native_s: Option<f64>, exact_s: Option<f64>| {
        let report = measure(k, job, opts).unwrap_or_else(|e| panic!("{name}: {e}"));
        eprintln!("{name}: {:.1}× the interpreter", report.jit_over_interp());
        rows.push(Row {
            name,
            report,
            native_s,
            exact_s,
            pixels: u64::from(job.width) * u64::from(job.height),
        });
    };

    let (c0, c1, c2) = (
        [0.999, 0.998, 0.997, 0.996],
        [0.001, 0.002, 0.003, 0.004],
        [0.001; 4],
    );
    let job = Job::new(512, 512)
        .constant(0, c0)
        .constant(1, c1)
        .constant(2, c2)
        .output(0, Format::Float32_4);
    let native = best(3, || {
        black_box(madchain(512, 512, [c0, c1, c2], |a, b, c| a * b + c));
    });
    let exact = best(3, || {
        black_box(madchain(512, 512, [c0, c1, c2], mad));
    });
    add(
        "MAD chain (ALU-bound)",
        &kernel("benches/kernels/madchain.s"),
        &job,
        Some(native),
        Some(exact),
    );

    let tex: Vec<f32> = (0..64 * 64 * 4).map(noise).collect();
    let job = Job::new(256, 256)
        .input(
            0,
            HostSurface::from_f32(Format::Float32_4, 64, 64, &tex).unwrap(),
        )
        .constant(0, [1.0, 0.0, 0.0, 0.0])
        .constant(1, [0.0, 1.0, 0.0, 0.0])
        .constant(2, [-1.0, 0.0, 0.0, 0.0])
        .constant(3, [0.0, -1.0, 0.0, 0.0])
        .output(0, Format::Float32_4);
    add(
        "texture-bound",
        &kernel("benches/kernels/texture.s"),
        &job,
        None,
        None,
    );

    let job = Job::new(256, 256)
        .constant(0, [0.9; 4])
        .constant(1, [0.1; 4])
        .int(0, 16, 0, 0)
        .output(0, Format::Float32_4);
    add(
        "divergent branches",
        &kernel("benches/kernels/divergent.s"),
        &job,
        None,
        None,
    );

    let job = Job::new(512, 512).output(0, Format::Float32_4);
    add(
        "tiny (1 instruction)",
        &kernel("benches/kernels/tiny.s"),
        &job,
        None,
        None,
    );

    let (w, h) = (768, 512);
    let job = Job::new(w, h)
        .constant(0, [0.003_906_25, 0.004_882_812_5, 0.0, 0.0])
        .constant(1, [-2.25, -1.25, 0.0, 0.0])
        .constant(2, [0.031, 0.047, 0.071, 0.0])
        .int(0, 255, 0, 0)
        .output(0, Format::Float32_4);
    let native = best(3, || {
        black_box(native_mandelbrot(w, h, 255));
    });
    let exact = best(3, || {
        black_box(exact_mandelbrot(w, h, 255));
    });
    add(
        "examples/mandelbrot.s",
        &kernel("examples/mandelbrot.s"),
        &job,
        Some(native),
        Some(exact),
    );

    let (w, h) = (512, 512);
    let x: Vec<f32> = (0..w * h * 4).map(noise).collect();
    let y: Vec<f32> = (0..w * h * 4).map(|k| noise(k + 99_999)).collect();
    let job = Job::new(w, h)
        .input(
            0,
            HostSurface::from_f32(Format::Float32_4, w, h, &x).unwrap(),
        )
        .input(
            1,
            HostSurface::from_f32(Format::Float32_4, w, h, &y).unwrap(),
        )
        .constant(0, [1.75; 4])
        .output(0, Format::Float32_4);
    let native = best(3, || {
        black_box(native_saxpy(&x, &y, 1.75));
    });
    add(
        "examples/saxpy.s",
        &kernel("examples/saxpy.s"),
        &job,
        Some(native),
        None,
    );

    let (m, k, n) = (128u32, 64u32, 128u32);
    let a: Vec<f32> = (0..m * k).map(|x| noise(x) - 0.5).collect();
    let b: Vec<f32> = (0..k * n).map(|x| noise(x + 7777) * 2.0).collect();
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
    add(
        "examples/matmul.s",
        &kernel("examples/matmul.s"),
        &job,
        None,
        None,
    );

    let img: Vec<f32> = (0..256 * 256).map(noise).collect();
    let mut job = Job::new(256, 256)
        .input(
            0,
            HostSurface::from_f32(Format::Float32_1, 256, 256, &img).unwrap(),
        )
        .int(0, 9, 0, 1)
        .output(0, Format::Float32_1);
    for t in 0..9 {
        let (dx, dy) = ((t % 3) as f32 - 1.0, (t / 3) as f32 - 1.0);
        job = job
            .constant(t, [dx, dy, 0.0, 0.0])
            .constant(9 + t, [1.0 / 9.0; 4]);
    }
    add(
        "examples/conv3x3.s",
        &kernel("examples/conv3x3.s"),
        &job,
        None,
        None,
    );

    let img: Vec<f32> = (0..256 * 256).map(noise).collect();
    let job = Job::new(256, 256)
        .input(
            0,
            HostSurface::from_f32(Format::Float32_1, 256, 256, &img).unwrap(),
        )
        .output(0, Format::Float32_1);
    add(
        "examples/scatter.s",
        &kernel("examples/scatter.s"),
        &job,
        None,
        None,
    );

    let peak = ctm_jit::peak::fma_peak_gflops(200_000_000).expect("peak");
    println!(
        "| kernel | interp M/s | JIT M/s | JIT / interp | JIT / native | JIT / exact native | JIT ns / pixel | JIT {threads} threads / 1 | compile µs/inst | share of FMA peak |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for r in &mut rows {
        r.report.fma_peak_gflops = peak;
        let b = &r.report;
        let ratio = |s: Option<f64>| {
            s.map_or("–".to_string(), |s| {
                let rate = b.pixel_instructions as f64 / s;
                format!("{:.2}", b.jit_pixinst_per_s / rate)
            })
        };
        let ns_per_pixel =
            1e9 * b.pixel_instructions as f64 / b.jit_pixinst_per_s / r.pixels as f64;
        println!(
            "| {} | {:.1} | {:.1} | {:.1}× | {} | {} | {:.1} | {:.2}× | {:.0} | {:.1}% |",
            r.name,
            b.interp_pixinst_per_s / 1e6,
            b.jit_pixinst_per_s / 1e6,
            b.jit_over_interp(),
            ratio(r.native_s),
            ratio(r.exact_s),
            ns_per_pixel,
            b.thread_speedup(),
            b.compile_us_per_inst,
            100.0 * b.fraction_of_fma_peak()
        );
    }
    println!("\nF32X4 FMA peak, one core, Cranelift code: {peak:.1} GFLOP/s");
}
