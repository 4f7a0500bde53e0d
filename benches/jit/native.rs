//! The benchmark kernels in plain Rust, for `cargo bench --bench jit`'s
//! "native" and "exact native" columns: "native" as one would write the
//! kernel (f32 arithmetic, the standard library's functions), "exact
//! native" with the DPP's rules instruction for instruction (separately
//! rounded MAD, NaN standardised, denormals flushed, dot products and
//! transcendentals as `ctm_jit::fp` defines them). Each returns a value
//! that depends on every result, or writes every result to memory; the
//! ALU kernels return the sum of their outputs, pixel by pixel and channel
//! by channel (`output_sum`), which the exact ones must match bit for bit.

/// The sum the ALU kernels return, of a four-channel output.
pub fn output_sum(out: &[f32]) -> f32 {
    out.iter().fold(0.0, |acc, v| acc + v)
}

use ctm_jit::fp;

/// The eight-chain MAD kernel (`benches/kernels/chains8.s`, in its
/// order): chain k starts as r0.xxxx·c(3+k) + c(11+k), then runs seven
/// rounds of r·c0 + c1; the chains are summed pairwise.
#[inline(always)]
#[allow(clippy::needless_range_loop)] // channels index several arrays alike
pub fn chains8(w: u32, h: u32, c: &[[f32; 4]; 19], mad: impl Fn(f32, f32, f32) -> f32) -> f32 {
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

/// `dotmix` and `transcend` per pixel: four chains start as
/// r_k = r0.xxxx·c(3+k) + c(11+k), `rounds` runs on them, and their final
/// sum, (r1 + r2) + (r3 + r4) per channel, is added up channel by channel.
#[inline(always)]
fn four_chains(
    (w, h): (u32, u32),
    c: &[[f32; 4]; 19],
    mad: &impl Fn(f32, f32, f32) -> f32,
    rounds: impl Fn(&mut [[f32; 4]; 4]),
) -> f32 {
    let mut acc = 0.0;
    for _ in 0..h {
        for i in 0..w {
            let col = i as f32;
            let mut r: [[f32; 4]; 4] = std::array::from_fn(|k| {
                std::array::from_fn(|ch| mad(col, c[3 + k][ch], c[11 + k][ch]))
            });
            rounds(&mut r);
            for (((r1, r2), r3), r4) in r[0].iter().zip(&r[1]).zip(&r[2]).zip(&r[3]) {
                let (a, b) = (mad(*r1, 1.0, *r2), mad(*r3, 1.0, *r4));
                acc += mad(a, 1.0, b);
            }
        }
    }
    acc
}

/// `benches/kernels/dotmix.s`: four chains, sixteen rounds of
/// r = dp4(r, c(3+k)) in every channel, then r = r·c0 + c1.
#[inline(always)]
pub fn dotmix(
    w: u32,
    h: u32,
    c: &[[f32; 4]; 19],
    mad: impl Fn(f32, f32, f32) -> f32,
    dp4: impl Fn(&[f32; 4], &[f32; 4]) -> f32,
) -> f32 {
    four_chains((w, h), c, &mad, |r| {
        for _ in 0..16 {
            for (k, reg) in r.iter_mut().enumerate() {
                let d = dp4(reg, &c[3 + k]);
                *reg = std::array::from_fn(|ch| mad(d, c[0][ch], c[1][ch]));
            }
        }
    })
}

/// The DPP's DP4: exact products summed in f64, rounded once.
#[inline(always)]
pub fn exact_dp4(a: &[f32; 4], b: &[f32; 4]) -> f32 {
    let pairs: [(u32, u32); 4] = std::array::from_fn(|k| (a[k].to_bits(), b[k].to_bits()));
    f32::from_bits(fp::dot(&pairs, None))
}

/// `transcend`'s alpha operations, in the order chain k runs them from
/// its k-th (RSQ, LN2 and RCP of the absolute value).
#[derive(Clone, Copy)]
pub enum Alpha {
    Rsq,
    Ex2,
    Ln2,
    Rcp,
    Sin,
    Cos,
}

const ALPHA: [Alpha; 6] = [
    Alpha::Rsq,
    Alpha::Ex2,
    Alpha::Ln2,
    Alpha::Rcp,
    Alpha::Sin,
    Alpha::Cos,
];

/// `benches/kernels/transcend.s`: four chains, twelve rounds in which
/// r.rgb = r·c0 + c1 and r.a = op(r.a), chain k's t-th op being
/// `ALPHA[(k + t) % 6]`.
#[inline(always)]
pub fn transcend(
    w: u32,
    h: u32,
    c: &[[f32; 4]; 19],
    mad: impl Fn(f32, f32, f32) -> f32,
    op: impl Fn(Alpha, f32) -> f32,
) -> f32 {
    four_chains((w, h), c, &mad, |r| {
        for t in 0..12 {
            for (k, reg) in r.iter_mut().enumerate() {
                let a = op(ALPHA[(k + t) % 6], reg[3]);
                for ch in 0..3 {
                    reg[ch] = mad(reg[ch], c[0][ch], c[1][ch]);
                }
                reg[3] = a;
            }
        }
    })
}

/// The operations as one would write them with the standard library
/// (SIN and COS take turns, as the DPP's do).
#[inline(always)]
pub fn plain_alpha(op: Alpha, x: f32) -> f32 {
    use std::f32::consts::TAU;
    match op {
        Alpha::Rsq => 1.0 / x.abs().sqrt(),
        Alpha::Ex2 => x.exp2(),
        Alpha::Ln2 => x.abs().log2(),
        Alpha::Rcp => 1.0 / x.abs(),
        Alpha::Sin => (x * TAU).sin(),
        Alpha::Cos => (x * TAU).cos(),
    }
}

/// The operations as the DPP computes them.
#[inline(always)]
pub fn exact_alpha(op: Alpha, x: f32) -> f32 {
    let (x, ax) = (x.to_bits(), fp::abs(x.to_bits()));
    f32::from_bits(match op {
        Alpha::Rsq => fp::rsq(ax),
        Alpha::Ex2 => fp::ex2(x),
        Alpha::Ln2 => fp::ln2(ax),
        Alpha::Rcp => fp::rcp(ax),
        Alpha::Sin => fp::sin(x),
        Alpha::Cos => fp::cos(x),
    })
}

/// Mandelbrot escape counts in scalar Rust, as `examples/mandelbrot.s`.
pub fn mandelbrot(w: u32, h: u32, n: u32) -> f32 {
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

/// The DPP's result rule: NaN standardised, denormals flushed to signed
/// zero.
#[inline(always)]
pub fn canon(x: f32) -> f32 {
    if x.is_nan() {
        f32::from_bits(fp::STD_NAN)
    } else if x.is_subnormal() {
        0.0f32.copysign(x)
    } else {
        x
    }
}

/// The DPP's MAD: separately rounded multiply and add, then the result
/// rule (operands here are always canonical already). Written in f32
/// rather than through `fp::mad` and `fp::canon`, whose bit-level form
/// serves the interpreter and made this baseline 3–4× slower (Mandelbrot's
/// exact native); `check_exact` holds the ALU kernels built on it to the
/// JIT's bits.
#[inline(always)]
pub fn mad(a: f32, b: f32, c: f32) -> f32 {
    canon(a * b + c)
}

/// Mandelbrot with the DPP's rules, instruction for instruction as
/// `examples/mandelbrot.s`.
pub fn exact_mandelbrot(w: u32, h: u32, n: u32) -> f32 {
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

/// SAXPY.
pub fn saxpy(x: &[f32], y: &[f32], a: f32) -> Vec<f32> {
    x.iter().zip(y).map(|(x, y)| a * x + y).collect()
}

/// `benches/kernels/texture.s`: the sum of the four-channel texels at
/// (i, j), (i + 1, j), (i, j + 1), (i − 1, j) and (i, j − 1) of a `w × h`
/// surface, zero outside it, into a `w × h` output.
pub fn texture(tex: &[f32], w: usize, h: usize, out: &mut [f32]) {
    let at = |i: isize, j: isize| -> [f32; 4] {
        if i < 0 || j < 0 || i >= w as isize || j >= h as isize {
            return [0.0; 4];
        }
        let k = (j as usize * w + i as usize) * 4;
        [tex[k], tex[k + 1], tex[k + 2], tex[k + 3]]
    };
    for j in 0..h as isize {
        for i in 0..w as isize {
            let taps = [
                at(i, j),
                at(i + 1, j),
                at(i, j + 1),
                at(i - 1, j),
                at(i, j - 1),
            ];
            let k = (j as usize * w + i as usize) * 4;
            for ch in 0..4 {
                out[k + ch] = taps.iter().map(|t| t[ch]).fold(0.0, |s, v| s + v);
            }
        }
    }
}

/// `examples/scatter.s`: the transpose of an `n × n` surface.
pub fn transpose(src: &[f32], n: usize, out: &mut [f32]) {
    for j in 0..n {
        for i in 0..n {
            out[i * n + j] = src[j * n + i];
        }
    }
}
