//! JIT against interpreter against plain Rust, on the bundled benchmark
//! kernels (`ctm_tools::bench::suite`: MAD chains of several shapes, dot products,
//! transcendentals, Mandelbrot, the one-instruction kernel, texture, saxpy,
//! matmul, conv3x3, scatter), plus compile time, 1 → N thread scaling and
//! the share of the exact MAD ceiling.
//!
//! `cargo bench --bench jit` prints a Markdown table (the README's). Rates
//! are pixel-instructions per second; "native" is a plain Rust version of
//! the same kernel built with the bench profile (rustc -O), timed over the
//! same domain and expressed in the same unit (the DPP program's
//! pixel-instruction count divided by the native time), so `jit / native` is
//! a ratio of wall times. Every JIT result is checked against the
//! interpreter before it is timed.

use ctm_tools::bench::{BenchOptions, measure, suite};
use std::hint::black_box;
use std::time::Instant;

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

/// The eight-chain MAD kernel in Rust (`benches/kernels/chains8.s`, in
/// its order): chain k starts as r0.xxxx·c(3+k) + c(11+k), then runs
/// seven rounds of r·c0 + c1; the chains are summed pairwise.
#[inline(always)]
#[allow(clippy::needless_range_loop)] // channels index several arrays alike
fn chains8(w: u32, h: u32, c: &[[f32; 4]; 19], mad: impl Fn(f32, f32, f32) -> f32) -> f32 {
    let mut acc = 0.0;
    for _ in 0..h {
        for i in 0..w {
            // r0.x, the pixel's column.
            let col = i as f32;
            let mut r = [[0f32; 4]; 8];
            for (k, reg) in r.iter_mut().enumerate() {
                for ch in 0..4 {
                    reg[ch] = mad(col, c[3 + k][ch], c[11 + k][ch]);
                }
            }
            for _ in 0..7 {
                for reg in r.iter_mut() {
                    for ch in 0..4 {
                        reg[ch] = mad(reg[ch], c[0][ch], c[1][ch]);
                    }
                }
            }
            for ch in 0..4 {
                let s = |a: usize, b: usize| mad(r[a][ch], 1.0, r[b][ch]);
                let (s01, s23, s45, s67) = (s(0, 1), s(2, 3), s(4, 5), s(6, 7));
                let (x, y) = (mad(s01, 1.0, s23), mad(s45, 1.0, s67));
                acc += mad(x, 1.0, y);
            }
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
    let fma = ctm_tools::peak::fma_peak_gflops(200_000_000).expect("peak");
    let ceiling = ctm_tools::peak::mad_peak_gflops(200_000_000).expect("ceiling");
    let mut rows = Vec::new();
    for case in suite::suite() {
        let (w, h) = case.job.size();
        // Plain Rust, and plain Rust with the DPP's rules, where written.
        let (native_s, exact_s) = match case.name {
            "chains8" => {
                let mut c = [[0f32; 4]; 19];
                for (n, v) in c.iter_mut().enumerate() {
                    *v = case.job.bound_constant(n as u8).unwrap_or_default();
                }
                (
                    Some(best(3, || {
                        black_box(chains8(w, h, &c, |a, b, c| a * b + c));
                    })),
                    Some(best(3, || {
                        black_box(chains8(w, h, &c, mad));
                    })),
                )
            }
            "mandelbrot" => (
                Some(best(3, || {
                    black_box(native_mandelbrot(w, h, 255));
                })),
                Some(best(3, || {
                    black_box(exact_mandelbrot(w, h, 255));
                })),
            ),
            "saxpy" => {
                let x = case.job.bound_input(0).expect("x").to_f32();
                let y = case.job.bound_input(1).expect("y").to_f32();
                (
                    Some(best(3, || {
                        black_box(native_saxpy(&x, &y, 1.75));
                    })),
                    None,
                )
            }
            _ => (None, None),
        };
        let mut report =
            measure(&case.kernel, &case.job, opts).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        report.fma_peak_gflops = fma;
        report.mad_ceiling_gflops = ceiling;
        eprintln!(
            "{}: {:.1}× the interpreter",
            case.name,
            report.jit_over_interp()
        );
        rows.push((case, report, native_s, exact_s));
    }
    println!(
        "| kernel | interp M/s | JIT M/s | JIT / interp | JIT / native | JIT / exact native | share of exact ceiling | ns / pixel | re-run ns / pixel | re-runs, {threads} threads / 1 | compile µs/inst | optimised compile µs/inst |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (case, b, native_s, exact_s) in &rows {
        let ratio = |s: &Option<f64>| {
            s.map_or("–".to_string(), |s| {
                let rate = b.pixel_instructions as f64 / s;
                format!("{:.2}", b.jit_pixinst_per_s / rate)
            })
        };
        println!(
            "| {} | {:.1} | {:.1} | {:.1}× | {} | {} | {:.0}% | {:.2} | {:.2} | {:.2}× | {:.1} | {:.1} |",
            case.name,
            b.interp_pixinst_per_s / 1e6,
            b.jit_pixinst_per_s / 1e6,
            b.jit_over_interp(),
            ratio(native_s),
            ratio(exact_s),
            100.0 * b.fraction_of_ceiling(),
            b.ns_per_pixel(),
            b.prepared_rerun_ns_per_pixel,
            b.rerun_thread_speedup(),
            b.compile_us_per_inst,
            b.optimised_compile_us_per_inst,
        );
    }
    println!(
        "\nOne core, Cranelift code: exact MAD ceiling {ceiling:.1} GFLOP/s, F32X4 FMA peak {fma:.1} GFLOP/s"
    );
}
