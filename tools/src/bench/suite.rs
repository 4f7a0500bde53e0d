//! The benchmark kernels, bundled: the ALU-bound shapes (independent MAD
//! chains of several widths, one long dependent chain, dot products and
//! transcendentals beside MADs), Mandelbrot, the one-instruction kernel,
//! divergent branches, and the texture, saxpy, matmul, conv3x3 and scatter
//! kernels. `ctm bench suite` and `cargo bench` both measure these, with
//! these jobs.
//!
//! Every kernel does the work its name says: chains start from their own
//! constant registers (the host's values, so no compiler can prove two
//! chains equal and fold them) and every chain reaches the output.

use ctm::kernel::{HostSurface, Job, Kernel};
use ctm::mc::Format;

/// One benchmark: a kernel and the job it runs.
#[derive(Clone, Debug)]
pub struct Case {
    /// Short name (`ctm bench --suite NAME`).
    pub name: &'static str,
    /// What it measures.
    pub what: &'static str,
    /// Whether it is one of the ALU-bound shapes (compared with each other
    /// and with the exact MAD ceiling).
    pub alu_bound: bool,
    /// The kernel.
    pub kernel: Kernel,
    /// The job.
    pub job: Job,
}

/// Names of the cases, in the order [`suite`] gives them.
pub const NAMES: [&str; 14] = [
    "chains8",
    "chains4",
    "chains2",
    "chains1",
    "dotmix",
    "transcend",
    "mandelbrot",
    "tiny",
    "divergent",
    "texture",
    "saxpy",
    "matmul",
    "conv3x3",
    "scatter",
];

/// A bundled kernel's text, read as `ctm run` reads a `.s` file.
fn assembled(text: &str) -> Kernel {
    let loaded = ctm::program::load_bytes(text.as_bytes(), std::path::Path::new("bench.s"), false)
        .expect("a bundled benchmark kernel assembles");
    Kernel::new(loaded.exe)
}

/// A deterministic pseudo-random float in [0, 1).
pub fn noise(k: u32) -> f32 {
    let mut x = k.wrapping_mul(0x9E37_79B9) ^ 0x5bd1_e995;
    x ^= x >> 15;
    x = x.wrapping_mul(0x2c1b_3c6d);
    x ^= x >> 12;
    (x >> 8) as f32 / (1 << 24) as f32
}

/// The MAD chains' constants, as the comparison with Mesa sets them: c0, c1
/// for the rounds, c3..c10 and c11..c18 where the chains start.
pub fn chain_job(w: u32, h: u32) -> Job {
    let mut job = Job::new(w, h)
        .constant(0, [0.999, 0.998, 0.997, 0.996])
        .constant(1, [0.001, 0.002, 0.003, 0.004])
        .output(0, Format::Float32_4);
    for k in 3..=10 {
        job = job
            .constant(k, [0.001; 4])
            .constant(k + 8, [0.001, 0.002, 0.003, 0.004]);
    }
    job
}

/// The Mandelbrot job of README's first command: 768×512, 255 iterations.
pub fn mandelbrot_job() -> Job {
    Job::new(768, 512)
        .constant(0, [0.003_906_25, 0.004_882_812_5, 0.0, 0.0])
        .constant(1, [-2.25, -1.25, 0.0, 0.0])
        .constant(2, [0.031, 0.047, 0.071, 0.0])
        .int(0, 255, 0, 0)
        .output(0, Format::Float32_4)
}

fn surface(format: Format, w: u32, h: u32, seed: u32, scale: f32, offset: f32) -> HostSurface {
    let n = w * h * format.channels() as u32;
    let v: Vec<f32> = (0..n).map(|k| noise(k + seed) * scale + offset).collect();
    HostSurface::from_f32(format, w, h, &v).expect("sizes agree")
}

/// The case called `name`.
pub fn case(name: &str) -> Option<Case> {
    let (what, alu_bound, kernel, job) = match alu_case(name) {
        Some((what, kernel, job)) => (what, true, kernel, job),
        None => {
            let (what, kernel, job) = other_case(name)?;
            (what, false, kernel, job)
        }
    };
    Some(Case {
        name: NAMES.iter().find(|n| **n == name)?,
        what,
        alu_bound,
        kernel,
        job,
    })
}

/// An ALU-bound case: what it does, its kernel and job.
fn alu_case(name: &str) -> Option<(&'static str, Kernel, Job)> {
    let k = |text| assembled(text);
    Some(match name {
        "chains8" => (
            "eight independent MAD chains (the MAD chain Mesa runs too)",
            k(include_str!("../../../benches/kernels/chains8.s")),
            chain_job(512, 512),
        ),
        "chains4" => (
            "four independent MAD chains, 16 MADs each",
            k(include_str!("../../../benches/kernels/chains4.s")),
            chain_job(512, 512),
        ),
        "chains2" => (
            "two independent MAD chains, 32 MADs each",
            k(include_str!("../../../benches/kernels/chains2.s")),
            chain_job(512, 512),
        ),
        "chains1" => (
            "one dependent chain of 64 MADs",
            k(include_str!("../../../benches/kernels/chains1.s")),
            chain_job(512, 512),
        ),
        "dotmix" => (
            "four chains alternating DP4 and MAD",
            k(include_str!("../../../benches/kernels/dotmix.s")),
            chain_job(512, 512)
                .constant(3, [0.25; 4])
                .constant(4, [0.25, 0.5, 0.125, 0.125])
                .constant(5, [0.125, 0.25, 0.5, 0.125])
                .constant(6, [0.5, 0.125, 0.125, 0.25]),
        ),
        "transcend" => (
            "four MAD chains with RSQ EX2 LN2 RCP SIN COS beside them",
            k(include_str!("../../../benches/kernels/transcend.s")),
            chain_job(512, 512),
        ),
        _ => return None,
    })
}

/// A case bound by loops, lookups, memory or per-run work.
fn other_case(name: &str) -> Option<(&'static str, Kernel, Job)> {
    let k = |text| assembled(text);
    Some(match name {
        "mandelbrot" => (
            "examples/mandelbrot.s, 768×512, 255 iterations (a loop with a divergent break)",
            k(include_str!("../../../examples/mandelbrot.s")),
            mandelbrot_job(),
        ),
        "tiny" => (
            "one instruction per pixel: all per-run work",
            k(include_str!("../../../benches/kernels/tiny.s")),
            Job::new(512, 512).output(0, Format::Float32_4),
        ),
        "divergent" => (
            "IF/ELSE arms by the parity of i + j inside a loop (every quad diverges)",
            k(include_str!("../../../benches/kernels/divergent.s")),
            Job::new(256, 256)
                .constant(0, [0.9; 4])
                .constant(1, [0.1; 4])
                .int(0, 16, 0, 0)
                .output(0, Format::Float32_4),
        ),
        "texture" => (
            "five float32_4 lookups per pixel (a five-point stencil over a 256² surface), summed",
            k(include_str!("../../../benches/kernels/texture.s")),
            Job::new(256, 256)
                .input(0, surface(Format::Float32_4, 256, 256, 0, 1.0, 0.0))
                .constant(0, [1.0, 0.0, 0.0, 0.0])
                .constant(1, [0.0, 1.0, 0.0, 0.0])
                .constant(2, [-1.0, 0.0, 0.0, 0.0])
                .constant(3, [0.0, -1.0, 0.0, 0.0])
                .output(0, Format::Float32_4),
        ),
        "saxpy" => (
            "examples/saxpy.s: a·x + y over 512² float32_4",
            k(include_str!("../../../examples/saxpy.s")),
            Job::new(512, 512)
                .input(0, surface(Format::Float32_4, 512, 512, 0, 1.0, 0.0))
                .input(1, surface(Format::Float32_4, 512, 512, 99_999, 1.0, 0.0))
                .constant(0, [1.75; 4])
                .output(0, Format::Float32_4),
        ),
        "matmul" => (
            "examples/matmul.s: 128×64 by 64×128, a loop of lookups",
            k(include_str!("../../../examples/matmul.s")),
            matmul_job(),
        ),
        "conv3x3" => (
            "examples/conv3x3.s: a 3×3 box filter over 256²",
            k(include_str!("../../../examples/conv3x3.s")),
            conv3x3_job(),
        ),
        "scatter" => (
            "examples/scatter.s: uncached writes to computed addresses",
            k(include_str!("../../../examples/scatter.s")),
            Job::new(256, 256)
                .input(0, surface(Format::Float32_1, 256, 256, 0, 1.0, 0.0))
                .output(0, Format::Float32_1),
        ),
        _ => return None,
    })
}

/// examples/matmul.s: a 128×64 by 64×128 product.
fn matmul_job() -> Job {
    let (m, kk, n) = (128u32, 64u32, 128u32);
    let mut job = Job::new(n, m)
        .input(0, surface(Format::Float32_1, kk, m, 0, 1.0, -0.5))
        .input(1, surface(Format::Float32_1, n, kk, 7777, 2.0, 0.0))
        .int(0, kk as u8, 0, 1)
        .output(0, Format::Float32_1);
    for c in 0..kk as u8 {
        job = job.constant(c, [f32::from(c); 4]);
    }
    job
}

/// examples/conv3x3.s: a box filter over 256², its nine taps' offsets
/// and weights in constants.
fn conv3x3_job() -> Job {
    let mut job = Job::new(256, 256)
        .input(0, surface(Format::Float32_1, 256, 256, 0, 1.0, 0.0))
        .int(0, 9, 0, 1)
        .output(0, Format::Float32_1);
    for t in 0..9u8 {
        let (dx, dy) = (f32::from(t % 3) - 1.0, f32::from(t / 3) - 1.0);
        job = job
            .constant(t, [dx, dy, 0.0, 0.0])
            .constant(9 + t, [1.0 / 9.0; 4]);
    }
    job
}

/// Every case, in [`NAMES`] order.
pub fn suite() -> Vec<Case> {
    NAMES.iter().filter_map(|n| case(n)).collect()
}
