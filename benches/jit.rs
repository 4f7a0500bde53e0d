//! JIT against interpreter against plain Rust, on the bundled benchmark
//! kernels (`ctm_tools::bench::suite`: MAD chains of several shapes, dot products,
//! transcendentals, Mandelbrot, the one-instruction kernel, texture, saxpy,
//! matmul, conv3x3, scatter), plus compile time, 1 → N thread scaling and
//! the share of the exact MAD ceiling.
//!
//! `cargo bench --bench jit` prints a Markdown table (the README's). Rates
//! are pixel-instructions per second; "native" is a plain Rust version of
//! the same kernel built with the bench profile (rustc -O), "exact native"
//! one with the DPP's rules instruction for instruction (`jit/native.rs`:
//! both for `chains8`, `dotmix`, `transcend` and Mandelbrot, the plain one
//! for `texture`, `saxpy` and `scatter`),
//! timed over the same domain and expressed in the same unit (the DPP
//! program's pixel-instruction count divided by the native time), so
//! `jit / native` is a ratio of wall times: the JIT's whole runs, with
//! their copies in and out, against the plain code's loop alone. Every JIT
//! result is checked against the interpreter before it is timed.

#[path = "jit/native.rs"]
mod native;

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

/// An exact native ALU kernel computes the DPP's bits: the sum it returns
/// is the sum of the outputs of a run of the case.
fn check_exact(case: &suite::Case, exact: f32) {
    let run = case.kernel.run(&case.job).expect("the case runs");
    let out = run.outputs[0].1.to_f32();
    let want = native::output_sum(&out);
    assert_eq!(
        exact.to_bits(),
        want.to_bits(),
        "{}: exact native differs",
        case.name
    );
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
        let c: [[f32; 4]; 19] =
            std::array::from_fn(|n| case.job.bound_constant(n as u8).unwrap_or_default());
        let input = |n: u8| case.job.bound_input(n).map(|s| s.to_f32());
        let time = |f: &mut dyn FnMut()| Some(best(3, f));
        let (native_s, exact_s) = match case.name {
            "chains8" => {
                check_exact(&case, native::chains8(w, h, &c, native::mad));
                (
                    time(&mut || {
                        black_box(native::chains8(w, h, &c, |a, b, c| a * b + c));
                    }),
                    time(&mut || {
                        black_box(native::chains8(w, h, &c, native::mad));
                    }),
                )
            }
            "dotmix" => {
                check_exact(
                    &case,
                    native::dotmix(w, h, &c, native::mad, native::exact_dp4),
                );
                (
                    time(&mut || {
                        let dp4 = |a: &[f32; 4], b: &[f32; 4]| {
                            a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]
                        };
                        black_box(native::dotmix(w, h, &c, |a, b, c| a * b + c, dp4));
                    }),
                    time(&mut || {
                        black_box(native::dotmix(w, h, &c, native::mad, native::exact_dp4));
                    }),
                )
            }
            "transcend" => {
                check_exact(
                    &case,
                    native::transcend(w, h, &c, native::mad, native::exact_alpha),
                );
                (
                    time(&mut || {
                        let mad = |a: f32, b: f32, c: f32| a * b + c;
                        black_box(native::transcend(w, h, &c, mad, native::plain_alpha));
                    }),
                    time(&mut || {
                        let op = native::exact_alpha;
                        black_box(native::transcend(w, h, &c, native::mad, op));
                    }),
                )
            }
            "mandelbrot" => (
                time(&mut || {
                    black_box(native::mandelbrot(w, h, 255));
                }),
                time(&mut || {
                    black_box(native::exact_mandelbrot(w, h, 255));
                }),
            ),
            "texture" => {
                let s = case.job.bound_input(0).expect("the texture");
                let t = s.to_f32();
                let mut out = vec![0f32; (w * h * 4) as usize];
                assert_eq!(
                    (s.width, s.height),
                    (w, h),
                    "a surface of the domain's size"
                );
                let (w, h) = (w as usize, h as usize);
                let native = time(&mut || {
                    native::texture(&t, w, h, &mut out);
                    black_box(&out);
                });
                (native, None)
            }
            "saxpy" => {
                let (x, y) = (input(0).expect("x"), input(1).expect("y"));
                let native = time(&mut || {
                    black_box(native::saxpy(&x, &y, 1.75));
                });
                (native, None)
            }
            "scatter" => {
                let src = input(0).expect("the source");
                let mut out = vec![0f32; (w * h) as usize];
                assert_eq!(w, h, "a square");
                let native = time(&mut || {
                    native::transpose(&src, w as usize, &mut out);
                    black_box(&out);
                });
                (native, None)
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
