//! Numeric sweeps through both engines' code paths, compared bit for bit
//! with each other and, for the special values, with the rules themselves
//! (`ctm::fp`, one function per operation of `docs/isa.md` §7).
//!
//! * In CI: every pair (and, for MAD, CND and CMP, every triple) of the
//!   special values — ±0, ±denormals, ±Inf, NaNs with payloads, ±1, ±max,
//!   the smallest normal — through every binary operation, presubtract,
//!   dot product, selection and MAD, with output modifiers and clamps.
//! * Behind a flag (minutes on all cores): every one of the 2^32 inputs of
//!   each unary operation — RCP, RSQ, EX2, LN2, FRC, SIN, COS — and of the
//!   output modifiers and the clamp on raw patterns:
//!   `cargo test --release --test engines sweeps -- --ignored --nocapture`.

use crate::common;

use common::both;
use ctm::Tier;
use ctm::fp;
use ctm::interp::Interpreter;
use ctm::jit::JitEngine;
use ctm::kernel::{HostSurface, Job, Kernel};
use ctm::mc::Format;
use ctm::runtime::{Ctx, Engine, NoTextures};
use ctm::state::{Lanes, Uniforms};

/// The special values.
const SPECIAL: [u32; 15] = [
    0x0000_0000, // +0
    0x8000_0000, // −0
    0x0000_0001, // smallest denormal
    0x8000_0001, // −smallest denormal
    0x007F_FFFF, // largest denormal
    0x0080_0000, // smallest normal
    0x7F80_0000, // +Inf
    0xFF80_0000, // −Inf
    0x7FC0_0000, // quiet NaN
    0x7F80_0001, // NaN, smallest payload
    0xFFC0_0123, // −NaN with a payload
    0x3F80_0000, // +1
    0xBF80_0000, // −1
    0x7F7F_FFFF, // +max
    0xFF7F_FFFF, // −max
];

/// Every triple (a, b, c) of special values as float32_4 texels (a, b, c, a).
fn triples() -> (u32, u32, HostSurface) {
    let n = SPECIAL.len();
    let count = n * n * n;
    let w = 64u32;
    let h = count.div_ceil(64) as u32;
    let mut data = Vec::with_capacity((w * h) as usize * 16);
    for k in 0..(w * h) as usize {
        let k = k % count;
        let (a, b, c) = (SPECIAL[k / (n * n)], SPECIAL[k / n % n], SPECIAL[k % n]);
        for v in [a, b, c, a] {
            data.extend_from_slice(&v.to_le_bytes());
        }
    }
    let s = HostSurface::new(Format::Float32_4, w, h, data).unwrap();
    (w, h, s)
}

/// Runs `body` (after r1 = (a, b, c, a) is fetched; the results in r2–r5
/// go to render targets A–D) over every triple on both engines.
fn sweep(body: &str) -> Vec<Vec<u32>> {
    let src = format!(
        "tex ld r1.rgba, in0.rgba, r0.rgba unscaled acquire wait
{body}
out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r2
out rtB.rgb = max.off(s0, s0) | rtB.a = max.off(s0, s0) src0=r3
out rtC.rgb = max.off(s0, s0) | rtC.a = max.off(s0, s0) src0=r4
out rtD.rgb = max.off(s0, s0) | rtD.a = max.off(s0, s0) src0=r5 wait last"
    );
    let k = Kernel::assemble(&src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let (w, h, input) = triples();
    let mut job = Job::new(w, h).input(0, input);
    for t in 0..4 {
        job = job.output(t, Format::Float32_4);
    }
    let r = both(&k, &job);
    (0..4)
        .map(|t| {
            r.output(t)
                .unwrap()
                .data
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
                .collect()
        })
        .collect()
}

#[test]
fn mad_and_its_modifiers_on_every_triple() {
    let out = sweep(
        "alu r2.rgb = mad(s0.rrr, s0.ggg, s0.bbb) | r2.a = mad(s0.r, s0.g, s0.b) src0=r1
alu r3.rgb = mad.x2(s0.rrr, s0.ggg, s0.bbb) | r3.a = mad.d8(s0.r, s0.g, s0.b) src0=r1
alu r4.rgb = mad.sat(s0.rrr, s0.ggg, s0.bbb) | r4.a = mad.x4.sat(s0.r, s0.g, s0.b) src0=r1
alu r5.rgb = mad(-s0.rrr, abs(s0.ggg), -abs(s0.bbb)) | r5.a = mad.off(s0.r, s0.g, s0.b) src0=r1",
    );
    // The rule itself, for the plain MAD: a separately rounded multiply
    // and add, NaN standardised, denormals flushed.
    let n = SPECIAL.len();
    for (k, px) in out[0].chunks_exact(4).take(n * n * n).enumerate() {
        let (a, b, c) = (SPECIAL[k / (n * n)], SPECIAL[k / n % n], SPECIAL[k % n]);
        let want = ctm::fp::omod(ctm::fp::mad(a, b, c), 0);
        assert_eq!(px[3], want, "mad({a:#x}, {b:#x}, {c:#x})");
    }
}

#[test]
fn a_negated_operand_times_one_is_a_subtraction_on_every_pair() {
    // The JIT computes −a · 1 + c as c − a (no sign flip): the same bits
    // on every special pair, with and without the output modifier, the
    // one on either side and a negated addend.
    let out = sweep(
        "alu r2.rgb = mad(-s0.rrr, s0.111, s0.bbb) | r2.a = mad(-s0.r, s0.1, s0.b) src0=r1
alu r3.rgb = mad.off(-s0.rrr, s0.111, s0.bbb) | r3.a = mad.off(s0.1, -s0.r, s0.b) src0=r1
alu r4.rgb = mad(s0.111, -s0.rrr, -s0.bbb) | r4.a = mad.sat(-s0.r, s0.1, s0.b) src0=r1
alu r5.rgb = mad.x2(-abs(s0.rrr), s0.111, s0.bbb) | r5.a = mad.off(-s0.r, s0.1, -s0.r) src0=r1",
    );
    let neg = |x: u32| x ^ 0x8000_0000;
    expect(&out, 0, "−a · 1 + c", |a, _, c| {
        [std(ctm::fp::mad(neg(a), 0x3F80_0000, c)); 4]
    });
}

/// Checks every pixel of a sweep's render target `t` against `want`, which
/// gives the pixel's four channels from its triple (a, b, c).
fn expect(out: &[Vec<u32>], t: usize, what: &str, want: impl Fn(u32, u32, u32) -> [u32; 4]) {
    let n = SPECIAL.len();
    for (k, px) in out[t].chunks_exact(4).take(n * n * n).enumerate() {
        let (a, b, c) = (SPECIAL[k / (n * n)], SPECIAL[k / n % n], SPECIAL[k % n]);
        assert_eq!(px, want(a, b, c), "{what} of ({a:#x}, {b:#x}, {c:#x})");
    }
}

/// The result rule of an enabled output modifier ×1.
fn std(x: u32) -> u32 {
    fp::omod(x, 0)
}

#[test]
fn selections_on_every_triple() {
    let out = sweep(
        "alu r2.rgb = min(s0.rrr, s0.ggg) | r2.a = max(s0.r, s0.g) src0=r1
alu r3.rgb = min.off(s0.rrr, s0.ggg) | r3.a = max.off(s0.r, s0.g) src0=r1
alu r4.rgb = cnd(s0.rrr, s0.ggg, s0.bbb) | r4.a = cmp(s0.r, s0.g, s0.b) src0=r1
alu r5.rgb = cmp.off(s0.rrr, s0.ggg, s0.bbb) | r5.a = cnd.off(s0.r, s0.g, s0.b) src0=r1",
    );
    // A ? B : C on the inputs A, B, C; `.off` moves the chosen bits.
    let rgba = |x: u32, w: u32| [x, x, x, w];
    expect(&out, 0, "min/max", |a, b, _| {
        rgba(std(fp::min(a, b)), std(fp::max(a, b)))
    });
    expect(&out, 1, "min.off/max.off", |a, b, _| {
        rgba(fp::min(a, b), fp::max(a, b))
    });
    expect(&out, 2, "cnd/cmp", |a, b, c| {
        rgba(std(fp::cnd(c, a, b)), std(fp::cmp(c, a, b)))
    });
    expect(&out, 3, "cmp.off/cnd.off", |a, b, c| {
        rgba(fp::cmp(c, a, b), fp::cnd(c, a, b))
    });
}

#[test]
fn dot_products_and_presubtracts_on_every_triple() {
    let out = sweep(
        "alu r6.rgb = max.off(s0.gbr, s0.gbr) | r6.a = max.off(s0.g, s0.g) src0=r1
alu r2.rgb = dp3(s0, s1) | r2.a = dp() src0=r1 src1=r6
alu r3.rgb = d2a(s0, s1, s0) | r3.a = dp() src0=r1 src1=r6
alu r4.rgb = max.off(sp, sp) | r4.a = max.off(sp, sp) src0=r1 src1=r6 srcp=add/sub
alu r5.rgb = max.off(sp, sp) | r5.a = max.off(sp, sp) src0=r1 src1=r6 srcp=bias/inv",
    );
    // src0 = (a, b, c, a), src1 = (b, c, a, b); dot products rounded once;
    // presubtracted values standardised like results.
    const ONE: u32 = 0x3F80_0000;
    const TWO: u32 = 0x4000_0000;
    expect(&out, 0, "dp3", |a, b, c| {
        [std(fp::dot(&[(a, b), (b, c), (c, a)], None)); 4]
    });
    expect(&out, 1, "d2a", |a, b, c| {
        [std(fp::dot(&[(a, b), (b, c)], Some(c))); 4]
    });
    expect(&out, 2, "presubtract add/sub", |a, b, c| {
        [
            std(fp::add(b, a)),
            std(fp::add(c, b)),
            std(fp::add(a, c)),
            std(fp::sub(b, a)),
        ]
    });
    let bias = |x: u32| std(fp::sub(ONE, fp::mul(TWO, x)));
    expect(&out, 3, "presubtract bias/inv", |a, b, c| {
        [bias(a), bias(b), bias(c), std(fp::sub(ONE, a))]
    });
}

#[test]
fn transcendentals_and_fractions_of_every_special_value() {
    let out = sweep(
        "alu r2.rgb = frc(s0) | r2.a = rcp(s0) src0=r1
alu r3.rgb = sop() | r3.a = rsq(s0) src0=r1
alu r4.rgb = sop() | r4.a = ex2(s0) src0=r1
alu r5.rgb = sop() | r5.a = ln2.sat(s0) src0=r1
alu r2.rgb = sop() | r2.a = sin(s0) src0=r1
alu r3.rgb = frc.x8(s0) | r3.a = cos.d2(s0) src0=r1",
    );
    // The alpha unit reads a (the texel's alpha); `sop` copies its result
    // before the alpha unit's modifier.
    expect(&out, 0, "sop/sin", |a, _, _| [std(fp::sin(a)); 4]);
    expect(&out, 1, "frc.x8/cos.d2", |a, b, c| {
        let f = |x: u32| fp::omod(fp::frc(x), 3);
        [f(a), f(b), f(c), fp::omod(fp::cos(a), -1)]
    });
    expect(&out, 2, "sop/ex2", |a, _, _| [std(fp::ex2(a)); 4]);
    expect(&out, 3, "sop/ln2.sat", |a, _, _| {
        let l = fp::ln2(a);
        [std(l), std(l), std(l), fp::clamp(std(l))]
    });
}

/// Every 32-bit pattern through `alpha` (alpha unit) and `rgb` (RGB unit)
/// on the interpreter and the JIT's quick and optimised code (quick code
/// calls the transcendentals out of line), their lanes filled directly;
/// fails on any pattern whose results differ.
fn exhaustive(name: &str, alpha: &str, rgb: &str) {
    if !common::jit_available() {
        return;
    }
    // 32 instructions: r(32 + k) = op(r k), alpha and RGB.
    let mut src = String::new();
    for k in 0..32 {
        src += &format!(
            "alu r{}.rgb = {rgb} | r{}.a = {alpha} src0=r{k}\n",
            32 + k,
            32 + k
        );
    }
    src += "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r32 wait last\n";
    let k = Kernel::assemble(&src).unwrap();
    let program = ctm_tools::bench::program_of(&k);
    // Each call: 32 registers × a group's lanes, every channel of a lane
    // the same input (the alpha op reads .a, the RGB op .rgb).
    const LANES: usize = ctm_jit::state::GROUP_LANES;
    let per_call: u64 = 32 * LANES as u64;
    let threads = ctm::pe::all_cores() as u64;
    let calls = (1u64 << 32).div_ceil(per_call);
    let bad: u64 = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let program = &program;
                s.spawn(move || {
                    let uniforms = Uniforms::default();
                    let pixels = [(0, 0); LANES];
                    let mut interp = Interpreter::new();
                    interp.prepare(program).unwrap();
                    let mut jits = [Tier::Quick, Tier::Optimised].map(|tier| {
                        let mut jit = JitEngine::new(ctm::JitOptions {
                            tier,
                            ..Default::default()
                        });
                        jit.prepare(program).unwrap();
                        (jit, Lanes::new_boxed())
                    });
                    let mut want = Lanes::new_boxed();
                    let mut bad = 0u64;
                    for call in (t..calls).step_by(threads as usize) {
                        let lanes =
                            std::iter::once(&mut want).chain(jits.iter_mut().map(|j| &mut j.1));
                        for lanes in lanes {
                            lanes.reset(ctm_jit::state::GROUP_QUADS as u32, 64);
                            let all = ctm_jit::state::ALL_LANES;
                            (lanes.running, lanes.active) = (all, all);
                            for r in 0..32 {
                                for l in 0..LANES {
                                    let v = (call * per_call + (r * LANES + l) as u64) as u32;
                                    for c in lanes.temps[r].iter_mut() {
                                        c[l] = v;
                                    }
                                }
                            }
                        }
                        let mut tex = NoTextures;
                        let mut ctx = Ctx {
                            uniforms: &uniforms,
                            tex: &mut tex,
                            hazards: None,
                            pixels: &pixels,
                        };
                        interp.run_clause(program, 0, &mut want, &mut ctx).unwrap();
                        for (jit, got) in &mut jits {
                            {
                                let _daz = ctm_jit::host::DazGuard::new(true);
                                jit.run_clause(program, 0, got, &mut ctx).unwrap();
                            }
                            bad += differences(name, &want, got, bad);
                        }
                    }
                    bad
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    eprintln!("{name}: 2^32 inputs, quick and optimised code, {bad} results differ");
    assert_eq!(bad, 0, "{name}");
}

/// The results (r32–r63) of `got` that differ from `want`'s, the first
/// ten of a thread (`so_far` counts them) printed.
fn differences(name: &str, want: &Lanes, got: &Lanes, so_far: u64) -> u64 {
    if want.temps[32..64] == got.temps[32..64] {
        return 0;
    }
    let mut bad = 0;
    for r in 32..64 {
        for c in 0..4 {
            for l in 0..ctm_jit::state::GROUP_LANES {
                let (a, b) = (want.temps[r][c][l], got.temps[r][c][l]);
                if a != b && so_far + bad < 10 {
                    eprintln!(
                        "{name}: input {:#010x}: interp {a:#010x}, jit {b:#010x}",
                        want.temps[r - 32][c][l],
                    );
                }
                bad += u64::from(a != b);
            }
        }
    }
    bad
}

#[test]
#[ignore = "minutes on all cores: cargo test --release --test engines sweeps -- --ignored"]
fn every_input_of_every_unary_operation() {
    for (name, alpha, rgb) in [
        ("rcp / frc", "rcp(s0)", "frc(s0)"),
        ("rsq / frc.x2", "rsq(s0)", "frc.x2(s0)"),
        ("ex2 / max.x4", "ex2(s0)", "max.x4(s0, s0)"),
        ("ln2 / max.x8", "ln2(s0)", "max.x8(s0, s0)"),
        ("sin / max.d2", "sin(s0)", "max.d2(s0, s0)"),
        ("cos / max.d4", "cos(s0)", "max.d4(s0, s0)"),
        ("max.sat / max.d8", "max.sat(s0, s0)", "max.d8(s0, s0)"),
        ("max.x2.sat / max (x1)", "max.x2.sat(s0, s0)", "max(s0, s0)"),
    ] {
        exhaustive(name, alpha, rgb);
    }
}

/// The ISA's inline constants (`docs/isa.md`): for the 7-bit code (e, m),
/// (1 + m/8) · 2^(e−7), and m/8 · 2^-6 where e = 0: 0, 2^-9 … 480.
fn inline_constants() -> Vec<f32> {
    (0u32..128)
        .map(|code| {
            let (e, m) = ((code >> 3) as i32, (code & 7) as f32 / 8.0);
            match e {
                0 => m * 2f32.powi(-6),
                _ => (1.0 + m) * 2f32.powi(e - 7),
            }
        })
        .collect()
}

#[test]
fn a_zero_test_of_x_plus_an_inline_constant_compares_x_with_it() {
    // The JIT tests `x · 1 ± K` against zero as `x` against `∓K`: the same
    // answer for every code (== < >= !=), every special x, and x at and
    // next to ±K, where the difference is smallest.
    let ks = inline_constants();
    assert!(
        ks.iter()
            .all(|&k| k == 0.0 || (2f32.powi(-9)..=480.0).contains(&k))
    );
    let mut xs: Vec<u32> = SPECIAL.to_vec();
    for &k in &ks {
        for b in [k.to_bits(), (-k).to_bits()] {
            xs.extend([b, b.wrapping_add(1), b.wrapping_sub(1), b ^ 0x8000_0000]);
        }
    }
    let w = 64u32;
    let h = xs.len().div_ceil(64) as u32;
    let mut data = Vec::new();
    for i in 0..(w * h) as usize {
        let x = xs[i % xs.len()];
        for _ in 0..4 {
            data.extend_from_slice(&x.to_le_bytes());
        }
    }
    let input = HostSurface::new(Format::Float32_4, w, h, data).unwrap();
    // The tests of the rgb and alpha predicates, in the order r2–r5 set them.
    let tests: [fn(f32) -> bool; 4] = [|s| s >= 0.0, |s| s < 0.0, |s| s == 0.0, |s| s != 0.0];
    // 352 and 416 are left to the fault-injection tests (`jit.rs`), which
    // make the lowering fail on them in any program.
    let armed = [352.0, 416.0];
    for (n, &k) in ks.iter().enumerate().filter(|(_, k)| !armed.contains(*k)) {
        let mut src = String::from("tex ld r1.rgba, in0.rgba, r0.rgba unscaled acquire wait\n");
        // r2: (x + K ≥ 0, x + K ≥ 0, x + K ≥ 0, x + K < 0); r3: == / !=;
        // r4, r5: the same for x − K. 1 where the test holds, else 0.
        for (reg, sign, (rgb, a)) in [
            (2, "", (">=", "<")),
            (3, "", ("==", "!=")),
            (4, "-", (">=", "<")),
            (5, "-", ("==", "!=")),
        ] {
            src += &format!(
                "alu p.rgb{rgb}0 = mad(s0.rrr, s0.111, {sign}s1.rrr) | p.a{a}0 = mad(s0.r, s0.1, {sign}s1.r) src0=r1 src1={k:?}
alu r{reg}.rgb = max.off(s0, s0) | r{reg}.a = max.off(s0, s0) src0=0.0
alu r{reg}.rgb = max.off(s0.111, s0.111) | r{reg}.a = max.off(s0.1, s0.1) src0=r1 pred=rgba apred=aaaa\n"
            );
        }
        src += "out rtA.rgb = max.off(s0, s0) | rtA.a = max.off(s0, s0) src0=r2
out rtB.rgb = max.off(s0, s0) | rtB.a = max.off(s0, s0) src0=r3
out rtC.rgb = max.off(s0, s0) | rtC.a = max.off(s0, s0) src0=r4
out rtD.rgb = max.off(s0, s0) | rtD.a = max.off(s0, s0) src0=r5 wait last";
        let kernel = Kernel::assemble(&src).unwrap_or_else(|e| panic!("{e}\n{src}"));
        let mut job = Job::new(w, h).input(0, input.clone());
        for t in 0..4 {
            job = job.output(t, Format::Float32_4);
        }
        // The engines agree bit for bit …
        let r = both(&kernel, &job);
        // … and with the rule: the test of the rounded, flushed sum.
        for t in 0..4usize {
            let out = &r.output(t as u8).unwrap().data;
            let kk = if t < 2 { k } else { -k };
            let (rgb, a) = (tests[2 * (t % 2)], tests[2 * (t % 2) + 1]);
            for (i, px) in out.chunks_exact(16).take(xs.len()).enumerate() {
                let x = xs[i];
                let s = f32::from_bits(fp::omod(fp::mad(x, 0x3F80_0000, kk.to_bits()), 0));
                let s = if s.is_subnormal() { 0.0 } else { s };
                let got: Vec<bool> = px
                    .chunks_exact(4)
                    .map(|c| f32::from_le_bytes(c.try_into().unwrap()) == 1.0)
                    .collect();
                let want = [rgb(s), rgb(s), rgb(s), a(s)];
                assert_eq!(got, want, "x = {x:#x}, K = {kk} (constant {n}), target {t}");
            }
        }
    }
}

#[test]
fn moving_a_constant_across_a_zero_test_is_exact_from_two_to_the_minus_102() {
    // Why the JIT moves K across a zero test (x + K against 0 as x against
    // −K) only where K reads as zero or |K| ≥ 2^-102: there, a sum next to
    // zero is at least the smallest normal and keeps its sign through the
    // flush; at 2^-103 a sum of 2^-127 is flushed to +0, so `== 0` holds
    // while x ≠ −K.
    let agrees = |k: f32| {
        let kb = k.to_bits();
        (-64i32..=64).all(|d| {
            let x = (-k).to_bits().wrapping_add_signed(d);
            let s = f32::from_bits(fp::add(x, kb));
            let (x, nk) = (fp::daz(x), fp::daz((-k).to_bits()));
            (s >= 0.0) == (x >= nk) && (s == 0.0) == (x == nk) && (s < 0.0) == (x < nk)
        })
    };
    for k in [
        2f32.powi(-102),
        2f32.powi(-101) * 1.5,
        2f32.powi(-9),
        1.0,
        4.0,
        480.0,
        0.0,
    ] {
        assert!(agrees(k) && agrees(-k), "{k:e}");
    }
    assert!(!agrees(2f32.powi(-103)));
}
